"""The apps form layers, and every kind of arrow between them points down: imports (inside
functions too), foreign keys (read from the app registry) and migration dependencies. No domain
module imports itself back through others. Faces (admin, views, serializers, urls, the door and
desk pages, commands) may call any app's services and are left out of the import check."""

import ast
from pathlib import Path

from django.apps import apps
from django.conf import settings
from django.db.migrations.loader import MigrationLoader

# Bottom first: the shared plumbing, the audit log (every app records its changes), the opening
# days and slots, the programme of events, the sale (orders, their tickets, payments, refunds
# and kept documents), gift cards and vouchers' administration (money standing alone on the
# sale), groups and schools (requests, group orders by invoice, guides), a drop's waiting room,
# admission (signed tokens, drawing the ticket, the door), wallet passes around those tokens,
# the webhooks made from the audit log, OCTO, resellers' bookings on top of the sale, and the
# front desk, staff's face over all of them.
LAYERS = [
    "museum",
    "audit",
    "hours",
    "events",
    "orders",
    "giftcards",
    "vouchers",
    "groups",
    "drops",
    "tickets",
    "wallet",
    "webhooks",
    "octo",
    "desk",
]
FACES = {
    "admin",
    "admin_pages",
    "views",
    "serializers",
    "urls",
    "door",
    "desk",
    "pages",
    "apps",
    "migrations",
    "management",
    "settings",
    "schema",
}


def layer(label: str) -> int | None:
    """The layer of an app or module ('orders', 'orders.models'); None for Django's own apps and
    libraries, which lie below everything."""
    app = label.split(".")[0]
    return LAYERS.index(app) if app in LAYERS else None


def domain_modules() -> dict[str, Path]:
    modules = {}
    for app in LAYERS:
        for path in sorted((Path(settings.BASE_DIR) / app).rglob("*.py")):
            parts = path.relative_to(settings.BASE_DIR).with_suffix("").parts
            if FACES & set(parts):
                continue
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            modules[name] = path
    return modules


def imports_of(path: Path, modules: dict[str, Path]) -> set[str]:
    """The domain modules `path` imports, at any depth of its code."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            # A relative import stays in its own app (orders/models/'s `from .vouchers import`
            # is not the app vouchers).
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found |= {name for name in names if name in modules}
    return found


def graph() -> dict[str, set[str]]:
    modules = domain_modules()
    return {name: imports_of(path, modules) for name, path in modules.items()}


def upward(arrows: list[tuple[str, str]]) -> list[str]:
    """The arrows (from, to) whose target lies in a higher layer than their source."""
    return [
        f"{source} -> {target}"
        for source, target in arrows
        if layer(source) is not None and layer(target) is not None and layer(target) > layer(source)  # type: ignore[operator]
    ]


def test_each_app_imports_only_the_apps_below_it():
    arrows = [(module, imported) for module, found in graph().items() for imported in found]
    assert upward(arrows) == []


def test_every_foreign_key_points_down():
    arrows = [
        (model._meta.app_label, field.related_model._meta.app_label)
        for model in apps.get_models()
        for field in model._meta.get_fields()
        if field.is_relation and field.concrete and field.related_model is not None
    ]
    assert upward(arrows) == []


def test_every_migration_depends_only_on_its_own_app_or_below():
    loader = MigrationLoader(None, ignore_no_migrations=True, replace_migrations=False)
    arrows = [
        (app, parent)
        for (app, _), migration in loader.disk_migrations.items()
        for parent, _ in migration.dependencies
        if parent != "__setting__"
    ]
    assert upward(arrows) == []


def test_no_domain_module_imports_itself_back():
    edges = graph()
    # A package imports its own modules to name them; that is not a way back to itself.
    edges = {
        module: {i for i in imported if not i.startswith(f"{module}.")}
        for module, imported in edges.items()
    }
    state: dict[str, str] = {}
    loops = []

    def visit(module: str, path: list[str]) -> None:
        state[module] = "open"
        for imported in sorted(edges[module]):
            if state.get(imported) == "open":
                loops.append(" -> ".join([*path[path.index(imported) :], imported]))
            elif imported not in state:
                visit(imported, [*path, imported])
        state[module] = "done"

    for module in sorted(edges):
        if module not in state:
            visit(module, [module])
    assert loops == []


def test_the_checks_see_what_they_are_meant_to(tmp_path):
    # An import inside a function is found like one at the top, and an arrow up is named.
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from orders.models import Order\n")
    assert imports_of(source, {"orders.models": source}) == {"orders.models"}
    assert upward([("orders", "tickets"), ("tickets", "orders"), ("orders", "auth")]) == [
        "orders -> tickets"
    ]

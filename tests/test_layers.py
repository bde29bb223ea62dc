"""The apps' domain code forms layers: each app imports only the apps below it, and no domain
module imports itself back through others. Imports inside functions count; faces (admin, views,
serializers, the door page, commands, migrations) may call any app's services and are left out."""

import ast
from pathlib import Path

from django.conf import settings

# Bottom first: the audit log (every app records its changes), the opening days and slots, the
# programme of events, the ticket (its token, image and admission at the door), the sale
# (orders, prices, holds, cancellation, refunds), and the webhooks made from the audit log.
LAYERS = ["audit", "hours", "events", "tickets", "orders", "webhooks"]
FACES = {
    "admin",
    "views",
    "serializers",
    "urls",
    "door",
    "desk",
    "apps",
    "migrations",
    "management",
}


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
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        found |= {name for name in names if name in modules}
    return found


def graph() -> dict[str, set[str]]:
    modules = domain_modules()
    return {name: imports_of(path, modules) for name, path in modules.items()}


def test_each_app_imports_only_the_apps_below_it():
    upward = [
        f"{module} imports {imported}"
        for module, imported_modules in graph().items()
        for imported in imported_modules
        if LAYERS.index(imported.split(".")[0]) > LAYERS.index(module.split(".")[0])
    ]
    assert upward == []


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


def test_the_graph_sees_imports_inside_functions(tmp_path):
    # The checker itself: an import inside a function is found like one at the top.
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from orders.models import Order\n")
    assert imports_of(source, {"orders.models": source}) == {"orders.models"}

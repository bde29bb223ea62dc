"""What every request pays before its view: each middleware and each per-request hook, in CPU per
request (`python -m bench.profile --middleware`; docs/performance.md, "What every request pays").

The middleware are priced around a stub view that only resolves the URL and answers, so that no
database, cache or DRF work blurs their few microseconds: they are added one at a time in
MIDDLEWARE's order (so each finds those it needs before it, as authentication the session), and
each is priced as the CPU its step adds, for the floor's request and for an API request with a
JSON body. The whole floor is then measured as served: the bare project's (bench/bare/, in a
process of its own), the service's without middleware, and with all of it. The hooks that run
inside the request log's middleware and Django's request signals are timed alone.
"""

import io
import logging
import os
import time
from collections.abc import Callable

from django.conf import settings
from django.core import signals
from django.core.handlers.wsgi import WSGIHandler, WSGIRequest
from django.http import HttpResponse
from django.test.utils import override_settings
from django.urls import resolve

from bench import FLOOR_PATH, data, driver
from bench.profile import _environ, bare_floor_in_own_process, measure


class StubViewHandler(WSGIHandler):
    """Django's WSGI handler and middleware around a view that only resolves the URL and
    answers: what the middleware cost, without the view's work."""

    def _get_response(self, request):
        request.resolver_match = resolve(request.path_info)
        return HttpResponse(b'{"status":"ok"}', content_type="application/json")


def _handlers(stack: list[str], handler_class: type[WSGIHandler]) -> list[WSGIHandler]:
    """A handler for each first n middleware of `stack`, n from 0 to all."""
    built = []
    for n in range(len(stack) + 1):
        with override_settings(MIDDLEWARE=stack[:n]):
            built.append(handler_class())
    return built


def _least_per_request(handler, line: str, count: int, rounds: int) -> float:
    measure(handler, [line], count)  # warm up
    return min(measure(handler, [line], count)[0] for _ in range(rounds))


def price_middleware(args) -> None:
    stack = list(settings.MIDDLEWARE)
    count = args.requests * 20
    lines = {
        "floor": driver.request_line("GET", FLOOR_PATH),
        "API": driver.request_line(
            "POST", "/v1.1/tickets", data.VISITORS[0], body={"ticketType": "general"}
        ),
        "page": driver.request_line("GET", "/admin/login/"),
    }
    stubbed = _handlers(stack, StubViewHandler)
    cpu: dict[tuple[int, str], float] = {}
    for round_ in range(args.rounds + 1):  # the first round warms up; interleaved, least kept
        for n, handler in enumerate(stubbed):
            for key, line in lines.items():
                per_request = measure(handler, [line], count)[0]
                if round_:
                    cpu[n, key] = min(cpu.get((n, key), per_request), per_request)
    print(
        f"| middleware, in MIDDLEWARE's order | GET {FLOOR_PATH}, µs "
        "| POST /v1.1/tickets with a body, µs | GET /admin/login/ (a page), µs |"
    )
    print("|---|---:|---:|---:|")
    print(
        "| none: Django's handler and signals, a stub view | "
        + " | ".join(f"{cpu[0, key]:.0f}" for key in lines)
        + " |"
    )
    for n, name in enumerate(stack, start=1):
        print(
            f"| + `{name}` | "
            + " | ".join(f"{cpu[n, k] - cpu[n - 1, k]:+.0f}" for k in lines)
            + " |"
        )
    full = len(stack)
    print(
        "| all the middleware | "
        + " | ".join(f"{cpu[full, k] - cpu[0, k]:+.0f}" for k in lines)
        + " |\n"
    )

    served = _handlers([], WSGIHandler)[0], WSGIHandler()
    floor = lines["floor"]
    bare = bare_floor_in_own_process(count, args.rounds)
    bare_own = [_least_per_request(handler, floor, count, args.rounds) for handler in served]
    print(f"| the floor as served (GET {FLOOR_PATH}) | CPU µs per request |")
    print("|---|---:|")
    print(f"| the bare project (bench/bare/) | {bare:.0f} |")
    print(f"| the service's settings, no middleware | {bare_own[0]:.0f} |")
    print(f"| the service's own floor, all its middleware | {bare_own[1]:.0f} |")
    print(f"\nbare / own floor (CPU): {bare / bare_own[1]:.2f}\n")
    price_hooks(args.rounds)


def _least(function: Callable[[], object], rounds: int, count: int = 20_000) -> float:
    """CPU µs per call of `function`, the least of `rounds` (after one to warm up)."""
    best = float("inf")
    for round_ in range(rounds + 1):
        started = time.process_time()
        for _ in range(count):
            function()
        if round_:
            best = min(best, (time.process_time() - started) / count * 1e6)
    return best


def price_hooks(rounds: int) -> None:
    """Each per-request hook timed alone, with a floor request and its answer."""
    from museum import context, metrics, middleware, request_context

    environ = _environ(driver.request_line("GET", FLOOR_PATH))
    environ["wsgi.input"] = io.BytesIO(environ.pop("_body"))
    request = WSGIRequest(environ)
    request.resolver_match = resolve(request.path_info)
    response = HttpResponse(status=200)

    def signals_sent() -> None:
        signals.request_started.send(sender=WSGIHandler, environ=environ)
        signals.request_finished.send(sender=WSGIHandler)

    def context_bound() -> None:
        with context.bound("0" * 32, channel=context.channel_of(request.path)):
            token = request_context._request.set(request)
            request_context._request.reset(token)

    def counted() -> None:
        metrics.HTTP_REQUESTS.labels(FLOOR_PATH, "GET", "200").inc()
        metrics.HTTP_REQUEST_DURATION.labels(FLOOR_PATH, "GET").observe(0.004)

    hooks: dict[str, Callable[[], object]] = {
        "request_started and request_finished (Django's signals, with their receivers)": (
            signals_sent
        ),
        "a request id (museum/context.py `new_request_id`)": context.new_request_id,
        "the request's id, channel and request bound (context variables)": context_bound,
        "the request's two metrics (a counter, a histogram)": counted,
        f"the request log line at LOG_LEVEL={settings.LOG_LEVEL}, metrics included": lambda: (
            middleware._record(request, response, 0.004)
        ),
    }
    print("| per-request hook | CPU µs per request |")
    print("|---|---:|")
    for label, hook in hooks.items():
        print(f"| {label} | {_least(hook, rounds):.1f} |")
    root = logging.getLogger()
    with open(os.devnull, "w") as devnull:
        kept = [(h, h.level, h.setStream(devnull)) for h in root.handlers]  # type: ignore[attr-defined]
        level = root.level
        root.setLevel(logging.INFO)  # setLevel, not the attribute: loggers cache their levels
        for handler, _, _ in kept:
            handler.setLevel(logging.INFO)
        try:
            written = _least(lambda: middleware._record(request, response, 0.004), rounds, 5000)
        finally:
            root.setLevel(level)
            for handler, old_level, old_stream in kept:
                handler.setLevel(old_level)
                handler.setStream(old_stream)  # type: ignore[attr-defined]
    print(
        f"| the request log line written at INFO ({settings.LOG_FORMAT}), metrics included "
        f"| {written:.1f} |"
    )

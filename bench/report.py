"""The figures as Markdown, with the machine they were measured on."""

import datetime as dt
import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

from django.conf import settings
from django.db import connection

from bench.driver import FLOOR_BESIDE_SECONDS, WARM_UP_SECONDS

BEGIN = "<!-- bench results: begin (written by `make bench`) -->"
END = "<!-- bench results: end -->"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def _cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def _memory_gib() -> float:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal"):
            return round(int(line.split()[1]) / 1024**2, 1)
    return 0.0


def _postgres() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SHOW server_version")
        [(version,)] = cursor.fetchall()
    return version.split()[0]


def _redis() -> str:
    import redis

    location = str(settings.CACHES["default"]["LOCATION"])  # a str; its OPTIONS widen the type
    return redis.Redis.from_url(location).info()["redis_version"]


def _wrk() -> str:
    done = subprocess.run(["wrk", "-v"], capture_output=True, text=True)
    return (done.stdout or done.stderr).split()[1]


def describe_machine() -> dict:
    machine = {
        "when": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "nproc": os.cpu_count(),
        "cpu": _cpu_model(),
        "memory_gib": _memory_gib(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "django": _version("django"),
        "drf": _version("djangorestframework"),
        "postgres": _postgres(),
        "redis": _redis(),
        "gunicorn": _version("gunicorn"),
        "granian": _version("granian"),
        "wrk": _wrk(),
        "load_before": " / ".join(f"{n:.2f}" for n in os.getloadavg()),
    }
    connection.close()
    return machine


def _endpoint_row(f: dict) -> str:
    target = f"≥ {f['target']}" if f["target"] is not None else ""
    verdict = "✗ " + ", ".join(f["misses"]) if f["misses"] else ("✓" if f["target"] else "")
    statuses = ", ".join(f"{status}: {count:,}" for status, count in sorted(f["statuses"].items()))
    if f["once"] and f["wrapped"]:
        statuses += f" (sent again after {f['wrapped']} threads ran out of fresh ones)"
    return (
        f"| {f['label']} | {f['rps']:,.0f} | {_two(f['bare_ratio'])} | {_two(f['ratio'])} "
        f"| {target} | {verdict} | {f['p50_ms']:.1f} | {f['p99_ms']:.1f} | {f['errors']} "
        f"| {f['rss_growth_mib']:+.1f} | {statuses} |"
    )


def _two(ratio: float | None) -> str:
    return f"{ratio:.2f}" if ratio is not None else ""


def _memory_lines(memory: dict) -> list[str]:
    lines = []
    for pid in sorted(memory["end"]):
        boot, start, end = (memory[when].get(pid, 0.0) for when in ("boot", "start", "end"))
        lines.append(
            f"- pid {pid}: {boot:.1f} at boot, {start:.1f} after the warm-up, {end:.1f} at the "
            f"end ({end - start:+.1f})"
        )
    return lines


def _server_section(result: dict, seconds: int) -> list[str]:
    lines = [
        f"#### {result['server']}",
        "",
        f"`{result['command'].split('/')[-1]}`; the bare floor: "
        f"`{result['bare_command'].split('/')[-1]}`",
        "",
        "| endpoint | req/s | × bare | × own floor | target (× bare) | met | p50 ms | p99 ms "
        "| errors | RSS Δ MiB (workers summed) | answers |",
        "|---|---:|---:|---:|---|---|---:|---:|---:|---:|---|",
        *(_endpoint_row(f) for f in result["endpoints"]),
        "",
        "Resident memory per worker (MiB):",
        "",
        *_memory_lines(result["memory"]),
        "",
    ]
    return lines


def _comparison(results: list[dict]) -> list[str]:
    names = [r["server"] for r in results]
    lines = [
        "| endpoint | " + " | ".join(f"{n} req/s (× bare, × own)" for n in names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    for index, first in enumerate(results[0]["endpoints"]):
        cells = []
        for result in results:
            f = result["endpoints"][index]
            ratios = ", ".join(_two(r) for r in (f["bare_ratio"], f["ratio"]) if r is not None)
            cells.append(f"{f['rps']:,.0f} ({ratios})" if ratios else f"{f['rps']:,.0f}")
        lines.append(f"| {first['label']} | " + " | ".join(cells) + " |")
    return lines


def markdown(results: list[dict], *, machine: dict, args, elapsed: float, plan_summary: str) -> str:
    m = machine
    lines = [
        f"### Last run: {m['when']}",
        "",
        f"- Machine: {m['nproc']} × {m['cpu']}, {m['memory_gib']} GiB, Linux {m['kernel']}; "
        f"load average {m['load_before']} before the run and {m['load_after']} after it "
        "(1, 5 and 15 minutes; the machine may be shared).",
        f"- Software: Python {m['python']}, Django {m['django']}, DRF {m['drf']}, "
        f"PostgreSQL {m['postgres']}, Redis {m['redis']}, gunicorn {m['gunicorn']}, "
        f"granian {m['granian']}, wrk {m['wrk']}.",
        f"- Load: wrk, {args.threads} threads, {args.connections} connections on loopback, "
        f"{args.seconds} s per endpoint and server, in {args.slices} turns (the servers run side "
        f"by side and take turns, so load from elsewhere falls on all alike), after a "
        f"{WARM_UP_SECONDS} s warm-up of every endpoint. Before each turn of an endpoint the "
        "same server command serves the bare project's floor, and then (for an API endpoint) "
        f"the service's own, for {FLOOR_BESIDE_SECONDS} s each: the endpoint's ratios are to "
        "those floors, measured beside it, so a machine that slows down during the run slows "
        "them alike (the bare floor's own rows, first and last, are to the mean of the two). "
        "Targets are to the bare floor. p50 is the mean of the turns', p99 the worst turn's. "
        f"`make bench` took {elapsed / 60:.1f} min.",
        "",
    ]
    if len(results) > 1:
        lines += ["#### All servers", "", *_comparison(results), ""]
    for result in results:
        lines += _server_section(result, args.seconds)
    lines += ["#### Query plans of the reads", "", plan_summary, ""]
    return "\n".join(lines)


def write_docs(path: Path, text: str, *, begin: str = BEGIN, end: str = END) -> None:
    """Replace what is between the markers in docs/performance.md (or add them at its end)."""
    current = path.read_text() if path.exists() else ""
    block = f"{begin}\n{text}\n{end}"
    if begin in current and end in current:
        before, rest = current.split(begin, 1)
        after = rest.split(end, 1)[1]
        path.write_text(before + block + after)
    else:
        path.write_text(current.rstrip() + ("\n\n" if current else "") + block + "\n")

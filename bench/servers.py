"""The server configurations `make bench` compares, each with one worker process per core."""

import os
import signal
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from bench import FLOOR_PATH

BIN = Path(sys.executable).parent
HOST, PORT = "127.0.0.1", 8765  # the first server's; the next ones take the ports after it
BARE_PORT = PORT + 10  # the bare floor's, beside each
WORKERS = "2"
THREADS = "4"

SERVERS = {
    # Gunicorn's default: one request at a time per worker, a connection per request.
    "gunicorn sync": ["gunicorn", "--workers", WORKERS],
    # Threads overlap one request's database and Redis round trips with another's work, and
    # keep connections alive.
    "gunicorn gthread": ["gunicorn", "--workers", WORKERS, "--worker-class", "gthread"]
    + ["--threads", THREADS],
    # Not run by default: more processes than cores, to fill the waits for PostgreSQL and Redis.
    "gunicorn sync x4": ["gunicorn", "--workers", "4"],
    # HTTP in Rust; Python only runs the application, on a pool of threads per worker.
    "granian": ["granian", "--interface", "wsgi", "--workers", WORKERS]
    + ["--blocking-threads", THREADS],
}


# The service, and the bare floor's project of its own (bench/bare/), served alike.
SERVICE, BARE = "museum.wsgi", "bench.bare.wsgi"


def command(name: str, port: int, module: str = SERVICE) -> list[str]:
    program, *options = SERVERS[name]
    if program == "gunicorn":
        return [str(BIN / program), module, "--bind", f"{HOST}:{port}", *options]
    address = ["--host", HOST, "--port", str(port)]
    return [str(BIN / program), *address, *options, f"{module}:application"]


DEFAULT = ["gunicorn sync", "gunicorn gthread", "granian"]


def available(name: str) -> bool:
    return (BIN / SERVERS[name][0]).exists()


def _wait_until_up(
    process: subprocess.Popen, port: int, log: Path, *, path: str, timeout: float = 60
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}; see {log}")
        try:
            with urllib.request.urlopen(f"http://{HOST}:{port}{path}", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"the server did not answer {path} within {timeout} s; see {log}")


@contextmanager
def running(name: str, *, port: int, env: dict, log: Path, module: str = SERVICE):
    """The server, started in its own process group and stopped with it."""
    with open(log, "w") as output:
        process = subprocess.Popen(
            command(name, port, module),
            env=env,
            cwd=Path(__file__).resolve().parent.parent,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            # The bare project has no /healthz: its one URL says it is up.
            up = "/healthz" if module == SERVICE else FLOOR_PATH
            _wait_until_up(process, port, log, path=up)
            yield process
        finally:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def _descendants(pid: int) -> list[int]:
    """Every process under `pid`, by pid, read from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, pending = [], list(children.get(pid, []))
    while pending:
        child = pending.pop()
        found.append(child)
        pending += children.get(child, [])
    return found


def worker_memory(pid: int) -> dict[int, float]:
    """Resident memory (MiB) of each process under the server's, by pid."""
    found = {}
    for child in _descendants(pid):
        try:
            status = Path(f"/proc/{child}/status").read_text()
        except OSError:
            continue
        rss_kib = next(int(line.split()[1]) for line in status.splitlines() if "VmRSS" in line)
        found[child] = round(rss_kib / 1024, 1)
    return found


def cpu_seconds(pid: int) -> float:
    """CPU time (user and system) the server has used so far: its own process, every process
    under it, and those of its children that have exited."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for process in [pid, *_descendants(pid)]:
        try:
            fields = Path(f"/proc/{process}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # exited meanwhile: its parent's cutime and cstime count it
        # utime, stime, cutime, cstime: fields 14 to 17 of proc(5), the 12th to 15th after ")".
        total += sum(int(value) for value in fields[11:15])
    return total / tick

"""What one server of the test suite costs (docs/testing.md, "Servers shared by group"): a `muttlab serve` on
the bundled sample, as tests/conftest.py's ``sample_server`` starts it, then with the data dir, as the
audiences' ``research_server`` does. For each: seconds and CPU seconds (the server and its children: the
METEOR JVM) until ``/_stcore/health`` says ok and until the log says the warm-up is done, and its resident
memory then; the data dir's server is also given as a ratio to the sample's, measured in the same run. Run::

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_test_server.py
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.dashboard.test_browser import sample_env, serving  # noqa: E402


def tree_usage(pid: int) -> tuple[float, float]:
    """CPU seconds and resident GiB of process ``pid`` and its children."""
    root = psutil.Process(pid)
    cpu = rss = 0.0
    for process in [root, *root.children(recursive=True)]:
        try:
            times = process.cpu_times()
            cpu += times.user + times.system + times.children_user + times.children_system
            rss += process.memory_info().rss / 2 ** 30
        except psutil.Error:
            pass
    return cpu, rss


def server_pid(port: int) -> int:
    """The process listening on ``port`` (the `muttlab serve` that `serving` started)."""
    for connection in psutil.net_connections("tcp"):
        if connection.laddr and connection.laddr.port == port and connection.status == psutil.CONN_LISTEN:
            return connection.pid
    raise RuntimeError(f"nothing listens on port {port}")


def measure(name: str, **extra: str) -> dict[str, float]:
    root = Path(tempfile.mkdtemp(prefix="bench-test-server-"))
    log = root / "serve.log"
    start = time.monotonic()
    with serving(sample_env(root / "cache", **extra), log) as url:
        opened = time.monotonic() - start
        pid = server_pid(int(url.rsplit(":", 1)[1]))
        open_cpu, _ = tree_usage(pid)
        while "warm-up done" not in log.read_text(errors="replace"):
            if time.monotonic() - start > 900:
                raise RuntimeError(f"{name}: the warm-up did not end in 15 minutes")
            time.sleep(0.5)
        warm = time.monotonic() - start
        warm_cpu, rss = tree_usage(pid)
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=10):
            pass
    return {"open s": opened, "open CPU s": open_cpu, "warm s": warm, "warm CPU s": warm_cpu, "GiB": rss}


def main() -> None:
    data_dir = os.environ.get("MUTTLAB_DATA_DIR")
    load = os.getloadavg()[0]
    rows = {"sample": measure("sample")}
    if data_dir:
        rows["data dir"] = measure("data dir", MUTTLAB_DATA_DIR=data_dir)
    columns = list(rows["sample"])
    print(f"load average: {load:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(f"{'server':10}" + "".join(f"{c:>12}" for c in columns))
    for name, row in rows.items():
        print(f"{name:10}" + "".join(f"{row[c]:12.1f}" for c in columns))
    if "data dir" in rows:
        print(f"{'ratio':10}" + "".join(f"{rows['data dir'][c] / rows['sample'][c]:12.2f}" for c in columns))


if __name__ == "__main__":
    main()

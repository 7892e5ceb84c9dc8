"""Start-up cost of the command line: ``muttlab --help`` and ``--version`` against ``sacrebleu --help``.

Each command runs in a fresh process ``--repeat`` times; the median wall time is reported with its ratio to
sacrebleu's, measured in the same run (the goal: within 3x). Run::

    .venv/bin/python benchmarks/bench_startup.py
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def median_seconds(argv: list[str], repeat: int) -> tuple[float, float]:
    """Median wall seconds and median CPU seconds (user + system) of a command."""
    times, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    commands = {
        # A virtual environment that borrows its packages may have no sacrebleu script: run the module then.
        "sacrebleu --help": ([str(BIN / "sacrebleu")] if (BIN / "sacrebleu").exists()
                             else [sys.executable, "-m", "sacrebleu"]) + ["--help"],
        "muttlab --help": [str(BIN / "muttlab"), "--help"],
        "muttlab --version": [str(BIN / "muttlab"), "--version"],
        "python -m muttlab --help": [sys.executable, "-m", "muttlab", "--help"],
        "muttlab run --help": [str(BIN / "muttlab"), "run", "--help"],
    }
    baseline = None
    # On a shared machine wall time depends on the neighbours; CPU time much less so.
    print(f"{'command':28s} {'median s':>9s} {'vs sacrebleu':>13s} {'CPU s':>7s} {'vs sacrebleu':>13s}")
    for name, argv in commands.items():
        seconds, cpu = median_seconds(argv, args.repeat)
        baseline = baseline or (seconds, cpu)
        print(f"{name:28s} {seconds:9.3f} {seconds / baseline[0]:12.2f}x {cpu:7.3f} {cpu / baseline[1]:12.2f}x")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()

"""Start-up cost of the command line: ``muttlab --help`` and ``--version`` against ``sacrebleu --help``.

Each command runs in a fresh process ``--repeat`` times; the median wall time is reported with its ratio to
sacrebleu's, measured in the same run (the goal: within 3x). Run::

    .venv/bin/python benchmarks/bench_startup.py
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

BIN = Path(sys.executable).parent


def median_seconds(argv: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    commands = {
        "sacrebleu --help": [str(BIN / "sacrebleu"), "--help"],
        "muttlab --help": [str(BIN / "muttlab"), "--help"],
        "muttlab --version": [str(BIN / "muttlab"), "--version"],
        "python -m muttlab --help": [sys.executable, "-m", "muttlab", "--help"],
        "muttlab run --help": [str(BIN / "muttlab"), "run", "--help"],
    }
    baseline = None
    print(f"{'command':28s} {'median s':>9s} {'vs sacrebleu':>13s}")
    for name, argv in commands.items():
        seconds = median_seconds(argv, args.repeat)
        baseline = baseline or seconds
        print(f"{name:28s} {seconds:9.3f} {seconds / baseline:12.2f}x")


if __name__ == "__main__":
    main()

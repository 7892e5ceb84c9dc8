"""Start-up cost of the command line: ``muttlab --help`` and ``--version`` against ``sacrebleu --help``.

Each command runs in a fresh process ``--repeat`` times; the median wall time is reported with its ratio to
sacrebleu's, measured in the same run (the goal: within 3x), and whether the command imported ``scipy.stats``
(1-2 s that neither ``--help`` nor an n-gram run printed as a table may pay). With a data dir, an n-gram
``muttlab run`` (its scores cached after the first run) is timed too, as a table and as CSV (which has the
Wilson intervals, so scipy.stats). Run::

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_startup.py
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


def imports_scipy_stats(argv: list[str]) -> bool:
    """Whether the command imports scipy.stats (Python's import-time report, on standard error)."""
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=True,
                          env={**os.environ, "PYTHONPROFILEIMPORTTIME": "1"})
    return any(line.rstrip().endswith("| scipy.stats") for line in done.stderr.splitlines())


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
    if os.environ.get("MUTTLAB_DATA_DIR"):
        run = [str(BIN / "muttlab"), "run", "--metrics", "BLEU-4", "--corruptions", "neg_subj", "--refs", "5"]
        commands["muttlab run BLEU-4 neg_subj@5"] = run
        commands["  the same, --format csv"] = [*run, "--format", "csv"]  # with intervals: scipy.stats
    else:
        print("(MUTTLAB_DATA_DIR is not set: the n-gram run is not timed)")
    baseline = None
    # On a shared machine wall time depends on the neighbours; CPU time much less so.
    print(f"{'command':32s} {'median s':>9s} {'vs sacrebleu':>13s} {'CPU s':>7s} {'vs sacrebleu':>13s} "
          f"{'scipy.stats':>12s}")
    for name, argv in commands.items():
        scipy_stats = imports_scipy_stats(argv)  # also fills the score cache before the run is timed
        seconds, cpu = median_seconds(argv, args.repeat)
        baseline = baseline or (seconds, cpu)
        print(f"{name:32s} {seconds:9.3f} {seconds / baseline[0]:12.2f}x {cpu:7.3f} {cpu / baseline[1]:12.2f}x "
              f"{'imported' if scipy_stats else 'no':>12s}")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()

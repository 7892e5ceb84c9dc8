"""Compile the metrics' numba kernels once, at setup, as pip compiles bytecode at install.

TER, TERp, BADGER-like and ReVal score through numba kernels (``cache=True``): the first process that uses one
compiles it (about 25 CPU seconds for all of them on this project's machine: TERp 16, ReVal 5, TER 4) and writes
the result beside its source, where every later process reads it in well under a second. Without this step, a
fresh checkout's first run, or the first servers and test processes, each compile them at once
(docs/testing.md, "numba's kernels compiled at setup").

Each metric scores one pair through the API, which compiles what a real score needs. A metric that cannot run
here (no WordNet, no numba) is named and skipped: setup never fails for it, the metric compiles on first use.

    .venv/bin/python scripts/compile_kernels.py
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from muttlab import api
from muttlab.settings import Settings

KERNEL_METRICS = ("TER", "TERp", "BADGER-like", "ReVal-LSTM", "ReVal-TreeLSTM")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="muttlab-kernels-") as cache:
        settings = Settings(cache_dir=Path(cache), workers=1)
        for metric in KERNEL_METRICS:
            start = time.process_time()
            frame = api.score(settings, [metric], ["A man rides a horse on the beach ."],
                              [["A man is riding a horse along the beach ."]])
            problems = frame.loc[frame["problem"] != "", "problem"]
            if len(problems):
                print(f"compile_kernels: {metric} skipped: {problems.iloc[0]}", file=sys.stderr)
            else:
                print(f"compile_kernels: {metric} ready ({time.process_time() - start:.1f} CPU-s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

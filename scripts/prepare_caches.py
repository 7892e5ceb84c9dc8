"""Build once, at setup, what the metrics otherwise build on first use in every process that gets there first, as
pip compiles bytecode at install:

* the numba kernels of TER, TERp, BADGER-like and ReVal (``cache=True``, kept beside their sources): about 25 CPU
  seconds for all of them on this project's machine (TERp 16, ReVal 5, TER 4);
* TERp's index of METEOR's paraphrase table (``muttlab.metrics.terp_phrases``, kept in the system's temp folder
  and keyed by the table file, which a new install of pycocoevalcap renews): about 20 CPU seconds.

Later processes read both in well under a second. Without this step a fresh checkout's first run, or its first
servers and test processes, each build them at once (docs/testing.md, "A fresh clone compiled numba's kernels in
its first processes").

Each metric scores one pair through the API, which compiles what a real score needs. A metric that cannot run
here (no WordNet, no numba) is named and skipped: setup never fails for it, it builds on first use.

    .venv/bin/python scripts/prepare_caches.py
"""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from muttlab import api
from muttlab.metrics.meteor import paraphrase_table
from muttlab.metrics.terp_phrases import load_phrase_table
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
                print(f"prepare_caches: {metric} skipped: {problems.iloc[0]}", file=sys.stderr)
            else:
                print(f"prepare_caches: {metric} ready ({time.process_time() - start:.1f} CPU-s)")
    start = time.process_time()
    table = paraphrase_table()
    if table is None:
        print("prepare_caches: TERp's paraphrase index skipped: no paraphrase table (pip install pycocoevalcap)",
              file=sys.stderr)
    else:
        load_phrase_table(table)
        print(f"prepare_caches: TERp's paraphrase index ready ({time.process_time() - start:.1f} CPU-s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""TER's compiled edit kernel against sacrebleu's own ``translation_edit_rate``: equality over the full sweep, and
the speed of each.

The sweep is every 7th distinct (candidate, reference) pair of the MUTT grid at 20 references and 200 long shuffled
concatenations of its sentences (over 7,000 pairs; ``tests/metrics/test_sacre.py::edit_pairs``). The test suite
checks a sample of it (every 49th pair, 25 long ones, chosen so that sacrebleu's search reaches its candidate
limit and widens its beam); this is the whole check, run on demand. Prints the pairs that differ (none expected),
and the CPU seconds of each side on the short (real) and long pairs with the ratio sacrebleu / ours, both timed in
this process. The kernel's compilation is paid (or read from numba's cache) before the timing.

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_ter_kernel.py [--step 7] [--long 200]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sacrebleu.metrics.lib_ter import translation_edit_rate  # noqa: E402

from muttlab.settings import load_settings  # noqa: E402
from muttlab.sources import load_mutt_experiments  # noqa: E402
from tests.metrics.test_sacre import compiled_edits, edit_pairs  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--step", type=int, default=7, help="every STEP-th distinct pair of the grid (7)")
    ap.add_argument("--long", type=int, default=200, help="how many long shuffled pairs (200)")
    args = ap.parse_args()
    pairs = edit_pairs(load_mutt_experiments(load_settings()), args.step, args.long)
    compiled_edits(pairs[:1])
    differ = 0
    print(f"{'pairs':<8}{'n':>7}{'sacrebleu s':>13}{'ours s':>9}{'ratio':>8}")
    for name, part in (("short", pairs[:-args.long - 2]), ("long", pairs[-args.long - 2:])):
        start = time.process_time()
        expected = [translation_edit_rate(h, r)[0] for h, r in part]
        oracle = time.process_time() - start
        start = time.process_time()
        ours = compiled_edits(part)
        kernel = time.process_time() - start
        differ += sum(a != b for a, b in zip(ours, expected))
        print(f"{name:<8}{len(part):>7}{oracle:>13.2f}{kernel:>9.2f}{oracle / max(kernel, 1e-9):>8.1f}")
    print(f"{differ} of {len(pairs)} pairs differ from sacrebleu")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

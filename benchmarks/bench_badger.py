"""Benchmark: our BADGER-like MUTT grid beside the original BADGER tool's (``mutt/badger/accuracy.tsv``).

    .venv/bin/python benchmarks/bench_badger.py [--data-dir ../shared/data] [--metric BADGER-like] [--all]

Scores every trial of each corruption with 5, 10 and 20 references (no score cache, one worker), prints our
accuracy beside the original's, the gap per cell, how many cells are within tolerance (2 points, or one trial
where one trial is worth more), and the seconds each corruption took. ``--all`` also scores the corruptions
whose original accuracies are held back (printed without a reference). Run on demand; nothing here is a test.
"""
from __future__ import annotations

import argparse
import os
import time
from dataclasses import replace
from pathlib import Path

from muttlab.engine.runner import run
from muttlab.sources import MUTT_SETS, load_mutt_experiments
from muttlab.settings import Settings

REPO = Path(__file__).resolve().parents[1]
REFS = (5, 10, 20)
TOLERANCE_POINTS = 2.0


def read_reference(path: Path) -> dict[str, list[float]]:
    """accuracy.tsv: corruption -> accuracies (%) at 5/10/20 references."""
    rows = path.read_text(encoding="utf-8").splitlines()[1:]
    return {c: [float(v) for v in rest] for c, *rest in (r.split("\t") for r in rows if r.strip())}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("MUTTLAB_DATA_DIR")
                                                              or REPO.parent / "shared" / "data"))
    parser.add_argument("--metric", default="BADGER-like")
    parser.add_argument("--all", action="store_true", help="also the corruptions without a given reference")
    args = parser.parse_args()

    settings = replace(Settings(data_dir=args.data_dir), use_cache=False, workers=1)
    reference = read_reference(args.data_dir / "mutt" / "badger" / "accuracy.tsv")
    names = [c for c in MUTT_SETS if args.all or c in reference]
    print(f"{args.metric} vs the original BADGER (accuracy %, ours / original / gap), load average "
          f"{os.getloadavg()[0]:.1f}")
    within = cells = 0
    for name in names:
        suite = load_mutt_experiments(settings, (name,))
        start = time.perf_counter()
        results = run(suite, [args.metric], REFS, settings)
        seconds = time.perf_counter() - start
        table = results.accuracy().set_index("refs")
        n = int(table["n"].iloc[0])
        tolerance = max(TOLERANCE_POINTS, 100.0 / n)
        parts = []
        for i, k in enumerate(REFS):
            ours = float(table.loc[k, "accuracy"])
            if name in reference:
                original = reference[name][i]
                gap = ours - original
                ok = abs(gap) <= tolerance + 1e-9
                within += ok
                cells += 1
                parts.append(f"{ours:5.1f} / {original:5.1f} / {gap:+5.1f}{' ok' if ok else '   '}")
            else:
                parts.append(f"{ours:5.1f} / (held back)      ")
        print(f"{name:12s} n={n:3d} tol={tolerance:.1f}  " + " | ".join(parts) + f"  {seconds:6.1f} s")
    if cells:
        print(f"within tolerance: {within}/{cells} cells; signature {results.signatures[args.metric]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

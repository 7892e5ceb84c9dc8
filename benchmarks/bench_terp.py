"""TERp against the original TERp-A tool's per-segment scores (``mutt/terp``), and its speed.

For each shared corruption file (``<c>_{a,b}.seg.scr``, 20-reference pools) prints the Pearson r with the
original scores on all segments and on the segments where the original made no phrase substitution
(``Num Phrase Substitutions: 0`` in the ``.pra`` file), the fraction within 0.01, and the seconds; then the
same over all files, and the time to score one whole experiment set (every MUTT set, both sides, 5/10/20
references) from a cold memo.

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_terp.py [--paraphrases] [--no-speed]
"""
from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import numpy as np

from muttlab.sources import MUTT_SETS, load_mutt_experiments
from muttlab.metrics.terp import TerPlus
from muttlab.settings import Settings, load_settings

CORRUPTIONS = ("det_sub", "neg_subj", "remove_prep", "sem_opps", "swap_chunks")


def read_original(terp_dir: Path, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(scores, no-phrase mask) of ``<name>.seg.scr`` / ``<name>.pra``, in segment order."""
    scores = {}
    for line in (terp_dir / f"{name}.seg.scr").read_text().splitlines():
        fields = line.split()
        scores[int(fields[-3])] = float(fields[-2])
    phrases = [int(m) for m in re.findall(r"Num Phrase Substitutions: (\d+)", (terp_dir / f"{name}.pra").read_text(
        encoding="utf-8", errors="replace"))]
    segs = sorted(scores)
    assert segs == list(range(1, len(segs) + 1)) and len(phrases) == len(segs)
    return np.array([scores[s] for s in segs]), np.array(phrases) == 0


def shared_batches(data_dir: Path):
    """(file name, candidates, 20-reference pools) of each shared ``.seg.scr`` file, segment N = image N-1."""
    suite = load_mutt_experiments(Settings(data_dir=data_dir), names=CORRUPTIONS)
    for c in CORRUPTIONS:
        trials = sorted(suite.of(c), key=lambda t: int(t.id.split("/")[1]))
        refs = [list(t.refs(20)) for t in trials]
        yield f"{c}_a", [t.original for t in trials], refs
        yield f"{c}_b", [t.corrupted for t in trials], refs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data-dir", type=Path, default=load_settings().data_dir)
    ap.add_argument("--paraphrases", action="store_true", help="use METEOR's paraphrase table as the stand-in")
    ap.add_argument("--no-speed", action="store_true", help="skip the whole-experiment-set timing")
    args = ap.parse_args()
    terp_dir = args.data_dir / "mutt" / "terp"
    metric = TerPlus(paraphrases=args.paraphrases)
    print(metric.signature())
    ours_all, orig_all, nophr_all = [], [], []
    print(f"{'file':<16}{'segs':>6}{'r all':>9}{'r no-phr':>10}{'within .01':>12}{'seconds':>9}")
    for name, cands, refs in shared_batches(args.data_dir):
        orig, nophr = read_original(terp_dir, name)
        start = time.perf_counter()
        ours = metric.score(cands, refs)
        secs = time.perf_counter() - start
        r_all = np.corrcoef(ours, orig)[0, 1]
        r_np = np.corrcoef(ours[nophr], orig[nophr])[0, 1]
        close = np.mean(np.abs(ours - orig) <= 0.01)
        print(f"{name:<16}{len(orig):>6}{r_all:>9.4f}{r_np:>10.4f}{close:>12.3f}{secs:>9.2f}")
        ours_all.append(ours), orig_all.append(orig), nophr_all.append(nophr)
    ours, orig, nophr = map(np.concatenate, (ours_all, orig_all, nophr_all))
    print(f"{'ALL':<16}{len(orig):>6}{np.corrcoef(ours, orig)[0, 1]:>9.4f}"
          f"{np.corrcoef(ours[nophr], orig[nophr])[0, 1]:>10.4f}{np.mean(np.abs(ours - orig) <= 0.01):>12.3f}")
    print(f"no-phrase segments within 1e-6: {np.mean(np.abs(ours[nophr] - orig[nophr]) <= 1e-6):.3f} "
          f"({int(nophr.sum())} segments)")
    if args.no_speed:
        return
    suite = load_mutt_experiments(Settings(data_dir=args.data_dir), names=MUTT_SETS)
    cold = TerPlus(paraphrases=args.paraphrases)
    start = time.perf_counter()
    n = 0
    for k in (5, 10, 20):
        refs = [list(t.refs(k)) for t in suite.trials]
        for side in ("original", "corrupted"):
            cands = [getattr(t, side) for t in suite.trials]
            cold.score(cands, refs)
            n += len(cands)
    print(f"whole experiment set: {n} candidate scores (5/10/20 refs) in {time.perf_counter() - start:.1f} s "
          f"(cold memo, kernel compiled)")


if __name__ == "__main__":
    main()

"""Benchmark: the ΔBLEU observation-unit study (Galley et al. 2015 §5) — 1,000 random assignments of the
Flickr8K-Expert weighted set into units of 100, for BLEU, sentence-BLEU averaged and ΔBLEU.

Prints the time of the vectorised study (n-gram matching once, then array sums over all assignments) next
to two baselines measured in the same run on a few assignments and scaled to 1,000:
  * loop: the precomputed per-segment statistics, but a Python loop over assignments and units calling
    muttlab.metrics.delta_bleu.corpus_bleu / sentence_bleu and scipy's spearmanr / kendalltau;
  * recompute: re-running muttlab.metrics.delta_bleu.segment_stats on each unit's text (no precomputation).

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_dbleu_units.py [--assignments 1000]
"""
from __future__ import annotations

import argparse
import time

import numpy as np
from scipy import stats as sp

from muttlab.settings import load_settings
from muttlab.human import dbleu
from muttlab.metrics.delta_bleu import corpus_bleu, segment_statistics, segment_stats, sentence_bleu


def loop_baseline(data, table, assignments: int, seed: int) -> float:
    start = time.perf_counter()
    base = segment_statistics(table, None, False)
    delta = segment_statistics(table, -1.0, True)
    sentence = np.array([sentence_bleu(row) for row in base])
    index = dbleu.unit_assignments(len(data), dbleu.DEFAULT_UNIT, assignments, seed)
    for units in index:
        human = [data.mean_human[u].mean() for u in units]
        for values in ([corpus_bleu(base[u].sum(axis=0)) for u in units],
                       [sentence[u].mean() for u in units],
                       [corpus_bleu(delta[u].sum(axis=0)) for u in units]):
            sp.spearmanr(human, values)
            sp.kendalltau(human, values)
    return time.perf_counter() - start


def recompute_baseline(data, assignments: int, seed: int) -> float:
    start = time.perf_counter()
    index = dbleu.unit_assignments(len(data), dbleu.DEFAULT_UNIT, assignments, seed)
    for units in index:
        for u in units:
            hyps = [data.candidates[i] for i in u]
            corpus_bleu(segment_stats(hyps, [data.weighted_references(i) for i in u]).sum(axis=0))
            corpus_bleu(segment_stats(hyps, [[(r, 1.0) for (r, _), b in zip(data.weighted_references(i),
                                                                             data.plain_mask(i)) if b]
                                             for i in u]).sum(axis=0))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignments", type=int, default=dbleu.DEFAULT_ASSIGNMENTS)
    parser.add_argument("--loop-assignments", type=int, default=20)
    parser.add_argument("--recompute-assignments", type=int, default=1)
    parser.add_argument("--seed", type=int, default=13)
    args = parser.parse_args()
    settings = load_settings()

    c0 = time.process_time()
    t0 = time.perf_counter()
    data = dbleu.flickr_expert_set(settings)
    t1 = time.perf_counter()
    table = dbleu.match_table(data)
    t2 = time.perf_counter()
    study = dbleu.unit_study(data, assignments=args.assignments, seed=args.seed, sweeps=False, table=table)
    t3 = time.perf_counter()
    cpu = time.process_time() - c0
    total = t3 - t0
    print(f"data: {len(data)} segments; build {t1 - t0:.1f} s, n-gram matching {t2 - t1:.1f} s, "
          f"{args.assignments} assignments x 3 metrics {t3 - t2:.1f} s; total {total:.1f} s "
          f"({'under' if total < 60 else 'OVER'} the 60 s goal); CPU time {cpu:.1f} s "
          "(wall time on a shared machine includes waiting for a core)")
    print(study.main[["metric", "rho", "rho_low", "rho_high", "tau", "tau_low", "tau_high"]].round(3).to_string(index=False))

    scale = args.assignments / args.loop_assignments
    loop = loop_baseline(data, table, args.loop_assignments, args.seed) * scale
    print(f"loop baseline (precomputed statistics, Python loop over units): {loop:.1f} s for {args.assignments} "
          f"(measured on {args.loop_assignments}); vectorised is {loop / (t3 - t2):.1f}x faster")
    scale = args.assignments / args.recompute_assignments
    recompute = recompute_baseline(data, args.recompute_assignments, args.seed) * scale
    print(f"recompute baseline (segment_stats per unit, BLEU and ΔBLEU only): {recompute:.0f} s for "
          f"{args.assignments} (measured on {args.recompute_assignments}); the whole vectorised study is "
          f"{recompute / total:.0f}x faster")


if __name__ == "__main__":
    main()

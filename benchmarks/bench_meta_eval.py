"""Benchmark: the ungrouped tie calibration (acc*_eq over all pairs of outputs, Deutsch et al. 2023) —
time and peak memory of muttlab.meta.statistics against a straightforward implementation that holds every
pair, side by side in one run, at 1k and 7k outputs of the TED en-de MQM data (the first 77 items of 13 systems,
1,001 outputs; all 6,877), then ours alone on a synthetic 100k-output input with sampled thresholds.

* ours: :func:`muttlab.meta.statistics.tie_calibrated_accuracy` (``grouped=False``): exact up to 50 million
  pairs, block by block, keeping 8 bytes per human-tied or concordant pair;
* all-pairs: the definition written out in numpy, every pair held at once (its two indices, Δh, |Δm|, outcome
  masks, an argsort of |Δm|, a cumulative sum) — the shape of a first implementation;
* mt-metrics-eval (``--mtme PATH``, a checkout of google-research/mt-metrics-eval): its
  ``stats.KendallWithTiesOpt(variant="acc23", sample_rate=1.0)``, one Python object per pair; at 1k outputs
  only unless ``--mtme-7k`` (it held 10 GB for over 13 minutes without finishing on 6,877 outputs).

Each measurement runs in a fresh child process: time is the computation's wall clock, memory the child's peak
resident set (``ru_maxrss``) above what it held once its input was loaded. Metric: chrF (sacrebleu), scored
through the score cache. The synthetic input: 100 systems x 1,000 items; human scores MQM-like, −(5·Poisson(0.3q)
+ Poisson(q) + 0.1·Poisson(0.3)) with a system quality q ~ U(0.2, 1.5); the metric the human score plus N(0, 3²)
noise, rounded to 0.1 (ties on both sides), seeded.

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_meta_eval.py [--mtme PATH] [--mtme-7k]
"""
from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SLICE_ITEMS = 77  # x 13 systems = 1,001 outputs


def all_pairs(gold: np.ndarray, metric: np.ndarray) -> tuple[float, float]:
    """acc*_eq with every pair held at once (the straightforward implementation)."""
    rated = ~np.isnan(gold)
    h, m = gold[rated], metric[rated]
    i, j = np.triu_indices(len(h), k=1)
    dh, dm = h[i] - h[j], m[i] - m[j]
    d = np.abs(dm)
    human_tie = dh == 0
    concordant = np.sign(dh) * np.sign(dm) > 0
    order = np.argsort(d, kind="stable")
    d_sorted = d[order]
    cumulative = np.cumsum(human_tie[order].astype(np.int64) - concordant[order])
    last = np.flatnonzero(np.r_[d_sorted[1:] != d_sorted[:-1], True])
    correct = concordant.sum() + np.r_[0, cumulative[last]]
    thresholds = np.r_[0.0, d_sorted[last]]
    best = int(np.argmax(correct))
    return float(correct[best] / len(d)), float(thresholds[best])


def synthetic(outputs: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    systems = 100
    items = outputs // systems
    quality = rng.uniform(0.2, 1.5, systems)[:, None]
    gold = -(5 * rng.poisson(quality * 0.3, (systems, items)) + rng.poisson(quality, (systems, items))
             + 0.1 * rng.poisson(0.3, (systems, items)))
    return gold, np.round(gold + rng.normal(0, 3, (systems, items)), 1)


def child(kind: str, data: Path, mtme: str | None) -> None:
    """One measurement, printed as JSON."""
    if kind == "synthetic":
        gold, metric = synthetic(100_000)
    else:
        loaded = np.load(data)
        gold, metric = loaded["gold"], loaded["metric"]
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    extra = {}
    if kind in ("ours", "synthetic"):
        from muttlab.meta import statistics as st
        found = st.tie_calibrated_accuracy(gold, metric, grouped=False, seed=1)
        accuracy, epsilon = found.accuracy, found.epsilon
        extra = {"sample_rate": found.sample_rate, "estimate": found.estimate, "pairs": found.n_pairs,
                 "candidates": found.candidates}
    elif kind == "all-pairs":
        accuracy, epsilon = all_pairs(gold, metric)
    else:
        sys.path.insert(0, mtme)
        from mt_metrics_eval import stats
        accuracy, epsilon, _ = stats.KendallWithTiesOpt(list(gold.ravel()), list(metric.ravel()), "acc23",
                                                        num_sys=gold.shape[0], average_by="none", sample_rate=1.0)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "mb": (peak - base) / 1024, "accuracy": float(accuracy),
                      "epsilon": float(epsilon), **extra}))


def measure(kind: str, data: Path, mtme: str | None, timeout: float) -> dict:
    argv = [sys.executable, __file__, "--child", kind, "--data", str(data)] + (["--mtme", mtme] if mtme else [])
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"seconds": float("inf"), "mb": float("nan"), "note": f"stopped after {timeout:.0f} s"}
    if done.returncode:
        return {"seconds": float("nan"), "mb": float("nan"), "note": done.stderr.strip().splitlines()[-1][:80]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def ted_inputs(folder: Path) -> dict[str, Path]:
    from muttlab import api
    from muttlab.engine.runner import registry_for
    from muttlab.meta import evaluate, mqm

    settings = api.load_settings()
    judgments = mqm.load_ted(settings, "en-de")
    registry = registry_for(settings)
    try:
        _, scores, _ = evaluate.score_metrics(settings, judgments, ["chrF"], registry, lambda *a: None)
    finally:
        registry.close()
    paths = {}
    for label, items in (("1k", SLICE_ITEMS), ("7k", len(judgments.items))):
        paths[label] = folder / f"{label}.npz"
        np.savez(paths[label], gold=judgments.gold[:, :items], metric=scores["chrF"][:, :items])
    return paths


def row(label: str, kind: str, result: dict) -> str:
    accuracy = f"{result['accuracy']:.6f}" if "accuracy" in result else "-"
    epsilon = f"{result['epsilon']:.6g}" if "epsilon" in result else "-"
    return (f"{label:>4} {kind:<16} {result['seconds']:>9.2f} {result['mb']:>9.0f} {accuracy:>10} {epsilon:>10}"
            f"  {result.get('note', '')}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mtme", default=None, help="a checkout of google-research/mt-metrics-eval to compare with")
    parser.add_argument("--mtme-7k", action="store_true", help="also run mt-metrics-eval on the 6,877 outputs")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds a baseline may run (default 900)")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--data", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, Path(args.data), args.mtme)
        return
    with tempfile.TemporaryDirectory() as folder:
        inputs = ted_inputs(Path(folder))
        print(f"{'size':>4} {'implementation':<16} {'seconds':>9} {'peak MB':>9} {'acc*_eq':>10} {'epsilon':>10}")
        for label, data in inputs.items():
            kinds = ["ours", "all-pairs"] + (["mt-metrics-eval"] if args.mtme and (label == "1k" or args.mtme_7k)
                                            else [])
            results = {kind: measure(kind, data, args.mtme, args.timeout) for kind in kinds}
            for kind, result in results.items():
                print(row(label, kind, result))
            ours = results["ours"]
            for kind in kinds[1:]:
                other = results[kind]
                print(f"{'':>4} {kind} / ours: time x{other['seconds'] / ours['seconds']:.1f}, "
                      f"memory x{other['mb'] / max(ours['mb'], 1.0):.1f}")
        result = measure("synthetic", Path(folder), None, args.timeout)
        print(row("100k", "ours (sampled)", result))
        if "sample_rate" in result:
            print(f"     synthetic 100k: {result['pairs']:,} pairs; thresholds sampled from {result['sample_rate']:.4%} "
                  f"of them ({result['candidates']:,} candidates); acc_eq at epsilon counted exactly over every "
                  f"pair; sample estimate {result['estimate']:.6f}")


if __name__ == "__main__":
    main()

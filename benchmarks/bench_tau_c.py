"""Stuart's τ-c in the multi-level grid search: :class:`muttlab.stats.RatingsCorrelator`'s counting path against
``scipy.stats.kendalltau(..., variant="c")``, both in this process, on the Flickr8K-Expert development half.

The search (:func:`muttlab.learned.multilevel.search`) correlates every (λ, θ1, θ2, per-level choice) it tries
with the expert ratings. Its pair scores here are METEOR-sized (10 parameter sets per level, as
``meteor_grid``) but made up: the mean rating of the candidate plus noise of growing width, so that the search
has something to find without the METEOR jar. The ratings, the candidates and the θ grid are the real ones.
Run::

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_tau_c.py
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

from muttlab import stats
from muttlab.learned import multilevel
from muttlab.settings import load_settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="single correlations timed (default 200)")
    args = parser.parse_args()
    dev = multilevel.load_eval_set("flickr8k", load_settings()).subset("dev")
    n, refs = len(dev), 5
    rng = np.random.default_rng(0)
    word_f = rng.random(n * refs)
    dep_f = np.clip(word_f + 0.2 * rng.normal(size=n * refs), 0, 1)
    pairs = multilevel.PairArrays(np.repeat(np.arange(n), refs), np.arange(0, n * refs, refs), word_f, dep_f,
                                  [""] * (n * refs), [""] * (n * refs))
    quality = np.repeat(dev.human.mean(axis=1), refs)
    scores = np.vstack([np.round(quality + width * rng.normal(size=n * refs), 3) for width in np.linspace(0.5, 3, 10)])
    vectors = [np.round(rng.random(n), 3) for _ in range(args.calls)]

    rows = []
    few_classes = stats.RatingsCorrelator.FEW_CLASSES
    for label, few in (("counting (RatingsCorrelator)", few_classes), ("scipy kendalltau", 0)):
        stats.RatingsCorrelator.FEW_CLASSES = few  # no class count is "few" under 0: every call goes to scipy
        try:
            correlator = stats.RatingsCorrelator("kendall_c", dev.human)
            correlator(vectors[0])  # scipy.stats imported before the clock starts
            start = time.perf_counter()
            values = [correlator(v) for v in vectors]
            per_call = (time.perf_counter() - start) / len(vectors)
            start = time.perf_counter()
            found = multilevel.search(scores, pairs, dev.human, "kendall_c")
            search_s = time.perf_counter() - start
        finally:
            stats.RatingsCorrelator.FEW_CLASSES = few_classes
        rows.append((label, per_call, search_s, found, values))
    base = rows[0]
    print(f"Flickr8K-Expert dev half: {n} candidates, {dev.human.size} samples; search tried {base[3].evaluated} "
          "settings")
    print(f"{'tau-c':30s} {'ms / call':>10s} {'search s':>9s} {'vs counting':>12s}")
    for label, per_call, search_s, found, values in rows:
        same = found == base[3] and np.allclose(values, base[4], rtol=0, atol=1e-12)
        print(f"{label:30s} {1000 * per_call:10.2f} {search_s:9.2f} {search_s / base[2]:11.2f}x"
              + ("" if same else "  (results differ!)"))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()

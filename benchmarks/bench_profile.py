"""Benchmark: a robustness profile read from the shipped snapshot against the same profile computed on this
server from a warm score cache, and a comparison of two metrics both ways — in one process, as ratios.

* shipped: :func:`muttlab.api.profile` of a default metric whose shipped profile is current (the snapshot read
  once, as a server reads it for its first visitor; then memoised per version of the file);
* computed: :func:`muttlab.profile.build.build_profile` of the same metric with every trial's outcome: MUTT,
  DEMETR's 35 files and MSLC24-B judged through the score cache (warm: a first run here fills it), the MQM
  rows from the shipped meta-evaluation — what a server does for a metric whose profile does not ship;
* comparison: :func:`muttlab.api.compare_profiles` of two shipped metrics, against the two computed profiles
  compared by :func:`muttlab.profile.compare.compare_profiles`.

Why the default profiles ship: a page visit must not wait seconds for a computation (docs/meta_eval.md).

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_profile.py [--metric TER --other chrF]
"""
from __future__ import annotations

import argparse
import sys
import time

from muttlab import api
from muttlab.profile.build import build_profile
from muttlab.profile.compare import compare_profiles


def timed(function, repeat: int = 3) -> tuple[float, object]:
    best, value = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        value = function()
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metric", default="TER")
    parser.add_argument("--other", default="chrF")
    args = parser.parse_args()
    settings = api.load_settings()
    if settings.data_dir is None:
        print("bench_profile: set MUTTLAB_DATA_DIR to the datasets folder", file=sys.stderr)
        return 2
    registry = api.registry_for(settings)
    try:
        meta = {pair: api.shipped_meta_evaluation(pair) for pair in ("en-de", "zh-en")}
        start = time.perf_counter()
        first = api.profile(settings, args.metric, registry=registry)
        first_visit = time.perf_counter() - start
        shipped, _ = timed(lambda: api.profile(settings, args.metric, registry=registry))
        for metric in (args.metric, args.other):  # fill the score cache: the measurement below is a warm one
            build_profile(settings, metric, registry, meta=meta)
        computed, built = timed(lambda: build_profile(settings, args.metric, registry, meta=meta), repeat=1)
        other = build_profile(settings, args.other, registry, meta=meta)
        compare_shipped, _ = timed(lambda: api.compare_profiles(settings, args.metric, args.other, registry=registry))
        compare_computed, _ = timed(lambda: compare_profiles(built, other), repeat=1)
    finally:
        registry.close()
    assert built.sections["demetr"].equals(first.sections["demetr"]), "the computed profile is not the shipped one"
    print(f"{args.metric}'s profile: shipped {shipped * 1000:.1f} ms (first visit, file read: "
          f"{first_visit * 1000:.0f} ms); computed from a warm cache {computed:.2f} s: "
          f"{computed / shipped:,.0f}x the shipped one")
    print(f"{args.metric} vs {args.other}: compare_profiles on shipped profiles {compare_shipped * 1000:.0f} ms "
          f"(meta-evaluation's tests included); on the two computed profiles, the comparison alone "
          f"{compare_computed * 1000:.0f} ms, after {computed:.1f} s per profile")
    return 0


if __name__ == "__main__":
    sys.exit(main())

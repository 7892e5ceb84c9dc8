"""What the dashboard's process cache (``muttlab.dashboard.shared``) costs on a page's hot path, against
``functools.lru_cache`` (the standard library's process memo, with no per-key lock and no weighing) in the same
process, as ratios.

* a pinned hit (``services.registry(settings)`` and the suite, asked many times a rerun) and a byte-capped
  region hit (a finished run asked again), each keyed by the settings as the dashboard keys them;
* weighing a value once when a region keeps it (``shared.footprint``), for the largest value a region holds
  regularly, the trials of a pair store as big as the MUTT experiment sets, against reading that suite.

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_process_cache.py
"""
from __future__ import annotations

import functools
import time
import timeit

HITS = 200_000


def _per_hit(call) -> float:
    """Microseconds per call, the best of five runs of HITS calls."""
    return min(timeit.repeat(call, number=HITS, repeat=5)) / HITS * 1e6


def main() -> None:
    from muttlab import api
    from muttlab.dashboard import shared
    from muttlab.settings import load_settings

    settings = load_settings()

    @functools.lru_cache(maxsize=None)
    def baseline(settings, name):
        return object()

    @shared.singleton
    def pinned(settings, name):
        return object()

    region = shared.Region(2 ** 30)
    key = ("run", settings, ("BLEU-4",), ("neg_subj",), (5,))
    baseline(settings, "registry"), pinned(settings, "registry"), region.computed(key, object)
    lru = _per_hit(lambda: baseline(settings, "registry"))
    for label, call in (("pinned hit", lambda: pinned(settings, "registry")),
                        ("region hit", lambda: region.computed(key, object))):
        ours = _per_hit(call)
        print(f"{label}: {ours:.2f} µs; lru_cache {lru:.2f} µs; x{ours / lru:.2f}")

    started = time.perf_counter()
    suite = api.load_suite(settings)
    read = time.perf_counter() - started
    started = time.perf_counter()
    weight = shared.footprint({t.id: t for t in suite.trials})
    weighed = time.perf_counter() - started
    print(f"weighing {len(suite.trials):,} trials ({weight / 2 ** 20:.1f} MiB): {weighed:.3f} s; reading them "
          f"{read:.3f} s; x{weighed / read:.2f}")


if __name__ == "__main__":
    main()

"""Time and peak memory of the largest bootstrap the studies run: Kendall's τ-b of Flickr8K-CrowdFlower (47,830
samples) with 1,000 resamples, as ``muttlab correlate flickr8k --datasets crowdflower`` computes it.

Each case runs in a fresh process (peak resident memory is per process). The baseline, in the same run, is the
floor any vectorised bootstrap of this size pays: drawing the ``(1000, 47830)`` matrix of resampled indices. The
metric is the ratings plus seeded noise (no metric is scored here). Run::

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_bootstrap.py
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CASE = """
import json, resource, sys, time
import numpy as np
import scipy.stats  # imported before the clock starts, as in a running server
from muttlab import stats
from muttlab.judged import flickr_crowdflower
from muttlab.settings import load_settings

y = flickr_crowdflower(load_settings()).human.ravel()
x = np.round(y + np.random.default_rng(1).normal(size=y.size), 2)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
start = time.perf_counter()
if sys.argv[1] == "indices":
    np.random.default_rng(13).integers(0, y.size, (int(sys.argv[2]), y.size))
    interval = [float("nan")] * 2
else:
    found = stats.correlate(x, y, "kendall_b", n_boot=int(sys.argv[2]), seed=13)
    interval = [found.ci_low, found.ci_high]
print(json.dumps({"n": int(y.size), "seconds": time.perf_counter() - start, "interval": interval,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "before_mb": before / 1024}))
"""


def run(case: str, n_boot: int) -> dict:
    done = subprocess.run([sys.executable, "-c", CASE, case, str(n_boot)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-boot", type=int, default=1000)
    args = parser.parse_args()
    floor = run("indices", args.n_boot)
    found = run("correlate", args.n_boot)
    print(f"Flickr8K-CrowdFlower: {found['n']} samples, {args.n_boot} resamples, tau-b "
          f"[{found['interval'][0]:.6f}, {found['interval'][1]:.6f}]")
    print(f"{'case':34s} {'seconds':>8s} {'peak MB':>8s} {'vs floor':>9s}")
    for name, row in (("draw the index matrix (floor)", floor), ("stats.correlate(..., n_boot)", found)):
        print(f"{name:34s} {row['seconds']:8.2f} {row['peak_mb']:8.0f} {row['peak_mb'] / floor['peak_mb']:8.2f}x")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()

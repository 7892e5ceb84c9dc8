"""Throughput of MUTT Lab's n-gram metrics against pycocoevalcap on the whole MUTT experiment set.

Work: 10 corruption sets x 5/10/20 references x (originals, corruptions), scored with BLEU-1..4,
ROUGE-L and CIDEr-D. MUTT Lab runs cold (empty cache, its own tokenizer), then again on the warm cache;
pycocoevalcap tokenises with its Java PTB tokenizer and runs its Bleu, Rouge and Cider scorers.

Usage: MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_ngram.py [--workers N]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path


from muttlab.engine.runner import run  # noqa: E402
from muttlab.settings import load_settings  # noqa: E402
from muttlab.engine.sources import load_mutt_experiments  # noqa: E402
from tests.coco_reference import coco_scores, java_ptb  # noqa: E402

METRICS = ["BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "ROUGE-L", "CIDEr-D"]
REFS = (5, 10, 20)


def pycocoevalcap_run(suite) -> None:
    tok = java_ptb([s for t in suite.trials for s in (t.original, t.corrupted, *t.references)])
    for name in suite.corruptions():
        trials = suite.of(name)
        for k in REFS:
            refs = [[tok[r] for r in t.refs(k)] for t in trials]
            for side in ("original", "corrupted"):
                coco_scores([tok[getattr(t, side)] for t in trials], refs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        settings = load_settings(cache_dir=Path(cache), workers=args.workers)
        if settings.data_dir is None:
            sys.exit("set MUTTLAB_DATA_DIR to the datasets folder")
        suite = load_mutt_experiments(settings)
        n_items = len(suite.trials) * 2 * len(REFS)
        t0 = time.perf_counter()
        run(suite, METRICS, list(REFS), settings)
        cold = time.perf_counter() - t0
        t0 = time.perf_counter()
        run(suite, METRICS, list(REFS), settings)
        warm = time.perf_counter() - t0
    t0 = time.perf_counter()
    pycocoevalcap_run(suite)
    coco = time.perf_counter() - t0
    print(f"work: {len(suite.trials)} trials x {len(REFS)} reference counts x 2 sides = {n_items} candidates, "
          f"metrics {', '.join(METRICS)} (workers={settings.workers})")
    print(f"{'run':<28}{'seconds':>10}{'candidates/s':>16}{'speed-up':>10}")
    for label, secs in (("pycocoevalcap (+ Java PTB)", coco), ("MUTT Lab, cold cache", cold),
                        ("MUTT Lab, warm cache", warm)):
        print(f"{label:<28}{secs:>10.2f}{n_items / secs:>16.0f}{coco / secs:>9.1f}x")


if __name__ == "__main__":
    main()

"""Benchmark: METEOR 1.5 against pycocoevalcap's wrapper, and W2V-AVG / BADGER / TERp / ΔBLEU / ReVal / DREEM over the
whole MUTT experiment set (10 sets x 5/10/20 references x original and corruption).

    .venv/bin/python benchmarks/bench_metrics.py [--data-dir ../shared/data] [--skip-meteor] [--only NAME]

Each metric runs in its own child process, so the time includes loading (JVM, vectors, WordNet, the hashed
paraphrase table, spaCy and the ReVal model bundled in data/models) and the peak memory (ru_maxrss) is that
metric's alone. Nothing here is a test; the numbers depend on the machine and on what else runs on it (the
load average is printed).
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path


from muttlab.settings import Settings  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
from muttlab.engine.sources import MUTT_REF_COUNTS, load_mutt_experiments  # noqa: E402

OTHERS = ("W2V-AVG", "BADGER-like", "TERp", "TERp-no-para", "DeltaBLEU", "ReVal-LSTM", "ReVal-TreeLSTM", "DREEM",
          "ML-DREEM")


def _batches(data_dir: Path):
    suite = load_mutt_experiments(Settings(data_dir=data_dir))
    for name in suite.corruptions():
        trials = suite.of(name)
        for k in MUTT_REF_COUNTS:
            refs = [list(t.refs(k)) for t in trials]
            for side in ("orig", "corr"):
                yield [t.original if side == "orig" else t.corrupted for t in trials], refs


def _metric(name: str):
    from muttlab.metrics.registry import Registry

    if name == "TERp-no-para":
        from muttlab.metrics.terp import TerPlus
        return TerPlus(paraphrases=False)
    return Registry(use_entry_points=False).get(name)


def run_one(name: str, data_dir: Path) -> dict:
    """Score every batch with one metric in this process; time and peak memory."""
    batches = list(_batches(data_dir))
    start = time.perf_counter()
    metric = _metric(name)
    segments = 0
    for cands, refs in batches:
        metric.score(cands, refs)
        segments += len(cands)
    seconds = time.perf_counter() - start
    metric.close()
    return {"metric": name, "segments": segments, "seconds": round(seconds, 1), "cpu_s": round(_cpu(), 1),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)}


def _cpu(who=resource.RUSAGE_SELF) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def run_meteor(data_dir: Path) -> dict:
    """The same 60 batches through our shared process and through pycocoevalcap's wrapper."""
    import numpy as np
    from pycocoevalcap.meteor.meteor import Meteor as CocoMeteor

    from muttlab.metrics.meteor import Meteor
    from muttlab.metrics.tokenize import ptb_tokenize

    batches = list(_batches(data_dir))
    warm = (["a man is playing a guitar"], [["a man plays a guitar"]])

    # Ours: start the shared process with one segment, then all batches.
    t0 = time.perf_counter()
    ours_metric = Meteor()
    ours_metric.score(*warm)
    t1 = time.perf_counter()
    ours = [ours_metric.score(c, r) for c, r in batches]
    t2 = time.perf_counter()
    ours_metric.close()
    ours_cpu = _cpu(resource.RUSAGE_CHILDREN)

    # pycocoevalcap: one wrapper for all batches, its best case (COCOEvalCap builds one per evaluate()).
    t3 = time.perf_counter()
    coco = CocoMeteor()
    coco.compute_score({0: warm[1][0]}, {0: warm[0]})
    t4 = time.perf_counter()
    theirs = []
    for cands, refs in batches:
        gts = {i: [ptb_tokenize(x) for x in rs] for i, rs in enumerate(refs)}
        res = {i: [ptb_tokenize(c)] for i, c in enumerate(cands)}
        theirs.append(np.asarray(coco.compute_score(gts, res)[1]))
    t5 = time.perf_counter()
    coco.meteor_p.kill()
    coco.meteor_p.wait()
    coco_cpu = _cpu(resource.RUSAGE_CHILDREN) - ours_cpu
    diff = max(float(np.abs(a - b).max()) for a, b in zip(ours, theirs))
    return {"segments": sum(len(c) for c, _ in batches), "ours_s": round(t2 - t0, 1),
            "ours_start_s": round(t1 - t0, 1), "ours_scoring_s": round(t2 - t1, 1), "ours_jvm_cpu_s": round(ours_cpu, 1),
            "pycocoevalcap_s": round(t5 - t3, 1), "coco_start_s": round(t4 - t3, 1),
            "coco_scoring_s": round(t5 - t4, 1), "coco_jvm_cpu_s": round(coco_cpu, 1),
            "ratio": round((t5 - t3) / (t2 - t0), 2), "scoring_ratio": round((t5 - t4) / (t2 - t1), 2),
            "max_abs_diff": diff}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("MUTTLAB_DATA_DIR")
                                                              or REPO.parent / "shared" / "data"))
    parser.add_argument("--skip-meteor", action="store_true")
    parser.add_argument("--only", choices=OTHERS + ("METEOR",))
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_meteor(args.data_dir) if args.child == "METEOR" else run_one(args.child, args.data_dir)))
        return 0

    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    names = [args.only] if args.only else ([] if args.skip_meteor else ["METEOR"]) + list(OTHERS)
    rows = []
    for name in names:
        out = subprocess.run([sys.executable, __file__, "--data-dir", str(args.data_dir), "--child", name],
                             capture_output=True, text=True, check=True)
        result = json.loads(out.stdout.strip().splitlines()[-1])
        if name == "METEOR":
            print(f"METEOR-1.5, {result['segments']} segments (10 sets x 5/10/20 refs x 2 sides), max |diff| = "
                  f"{result['max_abs_diff']}\n"
                  f"  ours          {result['ours_s']:>7} s = start {result['ours_start_s']} s + scoring "
                  f"{result['ours_scoring_s']} s (JVM CPU {result['ours_jvm_cpu_s']} s)\n"
                  f"  pycocoevalcap {result['pycocoevalcap_s']:>7} s = start {result['coco_start_s']} s + scoring "
                  f"{result['coco_scoring_s']} s (JVM CPU {result['coco_jvm_cpu_s']} s)\n"
                  f"  pycocoevalcap / ours: {result['ratio']}x overall, {result['scoring_ratio']}x scoring only",
                  flush=True)
        else:
            rows.append(result)
            print(f"{result['metric']:<14} {result['segments']:>7} segments {result['seconds']:>8} s wall "
                  f"{result.get('cpu_s', '?'):>8} s CPU {result['peak_rss_mb']:>7} MB peak", flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: DEMETR (Karpinska et al., EMNLP 2022), all 35 perturbation files, scored as ``muttlab run --suite``.

    .venv/bin/python benchmarks/bench_demetr.py [--data-dir ../shared/data] [--metrics sentBLEU,chrF,...]
                                                [--format markdown|table]

Each file is read by the DEMETR reader (records with ``pert_check`` false are counted as not applied, never
scored; the reference baseline expects the reference to win; ties fail) and scored by every metric through
:func:`muttlab.api.run_challenge` with a fresh, throw-away score cache. Prints the accuracy (%) per file and
per severity with the test items and not-applied records, then the wall time per metric and for all 35 files.
Run on demand; nothing here is a test.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from muttlab import api
from muttlab.engine import runner
from muttlab.settings import Settings
from muttlab.suites import read_suite
from muttlab.suites.contrastive import phenomenon_summary, severity_summary

REPO = Path(__file__).resolve().parents[1]
DEFAULT_METRICS = "sentBLEU,chrF,BLEU-4,METEOR-1.5,TER"
SEVERITIES = ("base", "minor", "major", "critical")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("MUTTLAB_DATA_DIR")
                                                              or REPO.parent / "shared" / "data"))
    parser.add_argument("--metrics", default=DEFAULT_METRICS)
    parser.add_argument("--format", choices=("markdown", "table"), default="markdown")
    args = parser.parse_args()
    files = sorted((args.data_dir / "demetr" / "dataset").glob("*.json"))
    if len(files) != 35:
        parser.error(f"expected DEMETR's 35 files in {args.data_dir / 'demetr' / 'dataset'}, found {len(files)}")
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]

    suites = [read_suite(path) for path in files]
    tables, not_applied, seconds = [], {}, {}
    with tempfile.TemporaryDirectory() as cache:
        settings = Settings(data_dir=args.data_dir, cache_dir=Path(cache), use_cache=False)
        # One registry for all files: a metric behind a process (METEOR's JVM) starts once, as in one CLI run.
        registry = runner.registry_for(settings)
        try:
            start_all = time.perf_counter()
            for metric in metrics:
                start = time.perf_counter()
                for suite_file in suites:
                    results = api.run_challenge(settings, suite_file, [metric], registry=registry)
                    tables.append(results.table)
                    not_applied.update(results.not_applied)
                seconds[metric] = time.perf_counter() - start
                print(f"{metric}: {seconds[metric]:.1f} s for 35 files", file=sys.stderr)
            total = time.perf_counter() - start_all
        finally:
            registry.close()
    table = pd.concat(tables, ignore_index=True)

    per_file = phenomenon_summary(table, not_applied)
    severity_of = dict(zip(table["phenomenon"], table["severity"]))
    wide = per_file.pivot(index="phenomenon", columns="metric", values="accuracy")[metrics]
    counts = per_file.drop_duplicates("phenomenon").set_index("phenomenon")[["n", "not_applied"]]
    wide = counts.join(wide)
    wide.insert(0, "severity", [severity_of[p] for p in wide.index])
    wide = wide.sort_values(["severity", "phenomenon"], key=lambda c: c.map(
        {s: i for i, s in enumerate(SEVERITIES)}) if c.name == "severity" else c)
    by_severity = severity_summary(table, not_applied)
    sev = by_severity.pivot(index="severity", columns="metric", values="accuracy")[metrics]
    sev = by_severity.drop_duplicates("severity").set_index("severity")[["n", "not_applied"]].join(sev)
    sev = sev.reindex([s for s in SEVERITIES if s in sev.index])

    def show(frame: pd.DataFrame) -> str:
        if args.format == "markdown":
            return frame.reset_index().to_markdown(index=False, floatfmt=".1f")
        return frame.reset_index().to_string(index=False, float_format=lambda v: f"{v:.1f}")

    print("Accuracy (%) per file (ties fail; n = test items, not_applied = pert_check false):\n")
    print(show(wide))
    print("\nAccuracy (%) per severity:\n")
    print(show(sev))
    print("\nWall time, all 35 files (35,000 records):")
    for metric, secs in seconds.items():
        print(f"  {metric}: {secs:.1f} s")
    print(f"  all metrics: {total:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

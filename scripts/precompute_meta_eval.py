"""Write ``data/results/meta_eval.json`` (the ``meta_eval`` snapshot) and ``data/results/calibrations.json``: every
lab metric that can score the target language meta-evaluated on both TED pairs' expert MQM judgments, and each
metric's tie calibration.

Usage (from the repository root, with the real data)::

    MUTTLAB_DATA_DIR=/path/to/data .venv/bin/python scripts/precompute_meta_eval.py
    .venv/bin/python scripts/precompute_meta_eval.py --tables     # docs/meta_eval.md's tables from the file

It runs :func:`muttlab.api.meta_evaluate` on ``mqm-ted:en-de`` and ``mqm-ted:zh-en`` with every registered
metric (an English-only one is listed on en-de with its reason, an unavailable one with what it lacks), every
statistic, 1,000 resamples and the settings' seed, with the models the package ships (as a read-only server
has them). METEOR, TERp, BERTScore and the learned metrics over 14,000 outputs take a while on a cold score
cache. The snapshot (:mod:`muttlab.snapshots.meta_eval`) holds each pair's :meth:`MetaEvaluation.to_dict` and
the per-output scores of the metrics in ``muttlab.snapshots.meta_eval.SCORED``, stamped with the data files,
the code and every metric's signature; ``calibrations.json`` is the calibrated tie rule's file
(:mod:`muttlab.meta.calibration`).
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import replace
from pathlib import Path

from muttlab import __version__, api
from muttlab.meta.calibration import write_calibrations
from muttlab.meta.result import MetaEvaluation
from muttlab.resources.bundled import data_dir
from muttlab.snapshots import KINDS, current_stamp, load, write
from muttlab.snapshots.meta_eval import MetaTables, from_results

PAIRS = ("mqm-ted:en-de", "mqm-ted:zh-en")


COLUMNS = [("acc_eq_item", "acc\\*_eq item (ε)"), ("acc_eq_item interval", "95% interval (items)"),
           ("acc_eq", "acc\\*_eq all pairs (ε)"),
           ("pairwise_acc_item", "pairwise acc item"), ("kendall_item", "τ_b item"), ("pearson_item", "r item"),
           ("pairwise_acc_sys", "system pairwise acc"), ("pearson_sys", "system r")]


def _cell(result: MetaEvaluation, metric: str, statistic: str) -> str:
    if statistic.endswith(" interval"):
        low, high = result.intervals.get(metric, {}).get(statistic.split()[0], (math.nan, math.nan))
        return "–" if math.isnan(low) else f"{low:.3f}–{high:.3f}"
    value = result.values[metric][statistic]
    if math.isnan(value):
        return "–"
    text = f"{value:.3f}"
    if statistic in result.epsilons.get(metric, {}):
        text += f" ({result.epsilons[metric][statistic]:.3g})"
    cluster = result.cluster(metric, statistic)
    return text + (f" [{cluster}]" if cluster is not None else "")


def markdown_tables(tables: MetaTables) -> str:
    """Each pair's table as docs/meta_eval.md shows it: metrics ranked by item-grouped acc*_eq, ε in
    parentheses, the significance cluster in brackets, baselines in italics, then the metrics not evaluated."""
    out = []
    for pair, result in tables.results.items():
        out.append(f"#### {pair} ({len(result.systems)} systems, {result.items} items, {result.outputs} outputs)\n")
        out.append("| metric | " + " | ".join(title for _, title in COLUMNS) + " |")
        out.append("|---" * (len(COLUMNS) + 1) + "|")
        for metric in result.ranking("acc_eq_item"):
            name = f"*{metric}*" if metric in result.baselines else metric
            level = " (corpus)" if result.system_level.get(metric) == "corpus" else ""
            out.append(f"| {name}{level} | " + " | ".join(_cell(result, metric, s) for s, _ in COLUMNS) + " |")
        if result.skipped:
            out.append("\nNot evaluated: " + "; ".join(f"{m} ({why})" for m, why in result.skipped.items()) + ".")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", default=None, help="where to write (default: the package's data/results)")
    parser.add_argument("--metrics", default="all", help="comma-separated metrics (default: all)")
    parser.add_argument("--tables", action="store_true",
                        help="only print docs/meta_eval.md's tables (Markdown) from the written meta_eval.json")
    args = parser.parse_args(argv)
    folder = Path(args.output_dir) if args.output_dir else data_dir() / "results"
    kind = KINDS["meta_eval"]
    if args.tables:
        print(markdown_tables(load(kind, folder / kind.file).content))
        return 0

    settings = replace(api.load_settings(), read_only=True)
    if settings.data_dir is None:
        print("precompute_meta_eval: set MUTTLAB_DATA_DIR to the folder holding mqm/ted/", file=sys.stderr)
        return 2
    registry = api.registry_for(settings)
    results, calibrations = {}, []
    start = time.perf_counter()
    try:
        for name in PAIRS:
            began = time.perf_counter()
            result = api.meta_evaluate(settings, name, metrics=args.metrics, registry=registry, keep_scores=True,
                                       progress=lambda done, total, message: print(f"  {name}: {message}",
                                                                                   file=sys.stderr))
            results[result.pair] = result
            calibrations += api.meta_calibrations(result)["calibrations"]
            print(f"{name}: {len(result.metrics) - len(result.baselines)} metrics, {len(result.skipped)} not "
                  f"evaluated ({time.perf_counter() - began:.0f} s)", file=sys.stderr)
    finally:
        registry.close()
    tables = from_results(results)
    signatures = {m: s for r in results.values() for m, s in r.metrics.items() if m not in r.baselines}
    folder.mkdir(parents=True, exist_ok=True)
    written = write(kind, tables, current_stamp(kind, settings, signatures), __version__, folder / kind.file)
    write_calibrations(folder / "calibrations.json", calibrations)
    print(f"wrote {written} and {folder / 'calibrations.json'} ({time.perf_counter() - start:.0f} s)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

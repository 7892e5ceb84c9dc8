"""``muttlab run``: score a suite and print the accuracy grid (:func:`muttlab.api.run_grid`)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from typing import TYPE_CHECKING

from muttlab.cli import summary
from muttlab.cli.common import (add_output_options, add_tie_rule_option, emit, parse_int_list, progress_bar, render,
                                settings_from_args, split_names)
from muttlab.escaping import csv_frame, csv_text
from muttlab.settings import DEFAULT_METRICS as DEFAULT_METRIC_LIST

if TYPE_CHECKING:  # the engine is imported when the command runs, not to build its parser
    import pandas as pd

    from muttlab.api import Results

DEFAULT_METRICS = ",".join(DEFAULT_METRIC_LIST)
SUITES = ("default", "mutt", "sample", "store")


def grid_frame(results: "Results") -> "pd.DataFrame":
    """The paper's layout: one row per metric, a column per corruption@refs, cells 'acc (passed/n) tie t'
    (accuracy and tie rate in percent; no interval, so printing it never imports scipy.stats)."""
    table = results.accuracy(intervals=False)
    table["cell"] = [f"{a:.1f} ({p}/{n}) tie {t:.1f}"
                     for a, p, n, t in zip(table["accuracy"], table["passed"], table["n"], table["tie_rate"])]
    table["column"] = table["corruption"] + "@" + table["refs"].astype(str)
    grid = table.pivot(index="metric", columns="column", values="cell")
    grid = grid.reindex(index=list(dict.fromkeys(table["metric"])), columns=list(dict.fromkeys(table["column"])))
    return grid.reset_index()


def accuracy_records(results: "Results") -> list[dict]:
    cells = results.accuracy_cells()
    return [{"metric": m, "corruption": c, "refs": r, "n": n, "passed": p, "accuracy": round(a, 4),
             "ci_low": round(lo, 4), "ci_high": round(hi, 4), "tie_rate": round(t, 4), "signature": sig}
            for m, c, r, n, p, a, lo, hi, t, sig in zip(*(_as_list(cells[k]) for k in ACCURACY_FIELDS))]


# The columns of `muttlab run --format csv/json`, as Results.accuracy() has them.
ACCURACY_FIELDS = ("metric", "corruption", "refs", "n", "passed", "accuracy", "ci_low", "ci_high", "tie_rate",
                   "signature")


def _as_list(column) -> list:
    return column.tolist() if hasattr(column, "tolist") else list(column)


def write_trials(results: "Results", path) -> None:
    """The tidy per-trial table (both scores, margin, pass/fail, tie), CSV or JSON Lines by file extension.

    Scores keep full precision (shortest repr that reads back to the same float): two scores that differ
    in the last bits must stay different in the file.
    """
    signatures = {m: results.signature(m) for m in results.signatures}
    if path.suffix == ".parquet":  # with the schema datasets loads (muttlab.suites.export)
        from muttlab.api import write_trials_table
        return write_trials_table(results.table, signatures, path)
    table = results.table.assign(signature=results.table["metric"].map(signatures))
    if path.suffix == ".jsonl":
        # pandas' to_json rounds to 10 significant digits; json.dumps writes Python's repr of a float.
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in table.to_dict(orient="records"))
    else:
        text = csv_frame(table)
    emit(text, path)


def handle(args: argparse.Namespace) -> int:
    from muttlab import api

    settings = settings_from_args(args)
    if args.scheduler is not None:
        settings = settings.with_overrides(scheduler=args.scheduler.strip() or None)
    suite = api.select_corruptions(api.load_suite(settings, args.suite), split_names(args.corruptions))
    if args.split is not None:
        full, suite = suite, api.select_split(suite, args.split)
        print(f"note: --split {args.split}: {len(suite.trials)} of {len(full.trials)} trials "
              f"({', '.join(f'{c} {len(suite.of(c))}' for c in suite.corruptions())})", file=sys.stderr)
    if suite.is_sample:
        print("note: no data dir is set; running on the bundled sample corpus (set MUTTLAB_DATA_DIR for the "
              "MUTT experiment sets)", file=sys.stderr)
    ref_counts = parse_int_list(args.refs, "--refs", "5,10,20") if args.refs is not None else None
    bar, progress = progress_bar()
    try:
        results = api.run_grid(settings, args.metrics, suite=suite, ref_counts=ref_counts, progress=progress)
    finally:
        bar.close()
    for warning in results.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.trials_out is not None:
        write_trials(results, args.trials_out)
    if args.format == "csv":  # written from the cells: the CSV and JSON forms never need pandas
        cells = results.accuracy_cells()
        emit(csv_text({k: _as_list(cells[k]) for k in ACCURACY_FIELDS}), args.output)
    elif args.format == "json":
        emit(render(None, "json", records=accuracy_records(results)), args.output)
    else:
        print(f"cells: accuracy % (passed/n) and tie rate %; rules {results.rules.signature()}", file=sys.stderr)
        emit(render(grid_frame(results), args.format), args.output)
    return 0


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "run", parents=[common], help=summary("run"),
        description="Score every trial (original and corruption against the first k references) with each "
                    "metric and report how often the metric does the right thing.")
    parser.add_argument("--metrics", default=DEFAULT_METRICS,
                        help=f"comma-separated metric names or 'all' (default: {DEFAULT_METRICS})")
    parser.add_argument("--corruptions", default="all", help="comma-separated corruption types or 'all'")
    parser.add_argument("--refs", default=None,
                        help="comma-separated reference counts (default: 5,10,20, as many as the suite has)")
    parser.add_argument("--suite", default="default", metavar="SUITE|PATH",
                        help="which trials: mutt (the MUTT experiment sets, needs a data dir), sample (the bundled "
                             "sample), store (the pair store, built with `muttlab corrupt`, edited with `muttlab "
                             "pairs`), default (MUTT when a data dir is set, else the sample), or the path of a suite "
                             "file: a trial suite from `muttlab corrupt --input`, or a contrastive challenge set "
                             "(WMT challenge-set TSV, ACES TSV, DEMETR JSON, contrastive JSONL, or MSLC24-B's folder "
                             "MSLC-B or one of its pair folders)")
    parser.add_argument("--format-in", default=None,
                        choices=("trials-jsonl", "contrastive-jsonl", "wmt-tsv", "aces-tsv", "demetr-json", "mslc24-b"),
                        help="format of a --suite file (default: told by the extension, then the header)")
    parser.add_argument("--split", choices=("test", "train", "trial"), default=None,
                        help="only trials taken from SICK pairs of this SemEval split (e.g. test: pairs no "
                             "SICK-trained metric has seen); generated types have no SICK pair and drop out")
    parser.add_argument("--trials-out", type=Path, metavar="FILE",
                        help="also write every trial's scores, margin and pass/fail (.csv, .jsonl or .parquet)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="score on a Dask cluster: the scheduler's address, e.g. tcp://10.0.0.5:8786 "
                             "(default: $MUTTLAB_SCHEDULER; unset: on this machine). Needs muttlab[scale]; "
                             "see docs/scale.md")
    add_tie_rule_option(parser)
    add_output_options(parser)
    parser.set_defaults(handler=dispatch)


def dispatch(args: argparse.Namespace) -> int:
    """A contrastive challenge set named by --suite is scored and reported per phenomenon
    (muttlab.cli.suite_file); everything else, a trial-suite file included, is the grid above."""
    if args.suite not in SUITES:
        from muttlab.cli.suite_file import run_if_contrastive
        if run_if_contrastive(args):
            return 0
    return handle(args)

"""``muttlab run``: score a suite and print the accuracy grid (:func:`muttlab.api.run_grid`)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from muttlab import api
from muttlab.cli import summary
from muttlab.cli.common import (add_output_options, emit, parse_int_list, render, settings_from_args,
                               split_names)
from muttlab.engine.runner import Results

DEFAULT_METRICS = ",".join(api.DEFAULT_METRICS)
SUITES = ("default", "mutt", "sample", "store")


def grid_frame(results: Results) -> pd.DataFrame:
    """The paper's layout: one row per metric, a column per corruption@refs, cells 'acc (passed/n)'."""
    table = results.accuracy()
    table["cell"] = [f"{a:.1f} ({p}/{n})" for a, p, n in zip(table["accuracy"], table["passed"], table["n"])]
    table["column"] = table["corruption"] + "@" + table["refs"].astype(str)
    grid = table.pivot(index="metric", columns="column", values="cell")
    grid = grid.reindex(index=list(dict.fromkeys(table["metric"])), columns=list(dict.fromkeys(table["column"])))
    return grid.reset_index()


def accuracy_records(results: Results) -> list[dict]:
    table = results.accuracy()
    return [{"metric": r.metric, "corruption": r.corruption, "refs": int(r.refs), "n": int(r.n),
             "passed": int(r.passed), "accuracy": round(float(r.accuracy), 4), "ci_low": round(float(r.ci_low), 4),
             "ci_high": round(float(r.ci_high), 4), "signature": r.signature} for r in table.itertuples()]


def write_trials(results: Results, path) -> None:
    """The tidy per-trial table (both scores, margin, pass/fail), CSV or JSON Lines by file extension."""
    table = results.table.assign(signature=results.table["metric"].map(results.signatures))
    text = table.to_json(orient="records", lines=True) if path.suffix == ".jsonl" else table.to_csv(index=False)
    emit(text, path)


def handle(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    if args.scheduler is not None:
        settings = settings.with_overrides(scheduler=args.scheduler.strip() or None)
    suite = api.select_corruptions(api.load_suite(settings, args.suite), split_names(args.corruptions))
    if suite.is_sample:
        print("note: no data dir is set; running on the bundled sample corpus (set MUTTLAB_DATA_DIR for the "
              "MUTT experiment sets)", file=sys.stderr)
    ref_counts = parse_int_list(args.refs, "--refs", "5,10,20") if args.refs is not None else None
    bar = tqdm(total=0, unit="metric", disable=None, file=sys.stderr)

    def progress(done: int, total: int, message: str) -> None:
        bar.total = total
        bar.n = done
        bar.set_description(message)
        bar.refresh()

    try:
        results = api.run_grid(settings, args.metrics, suite=suite, ref_counts=ref_counts, progress=progress)
    finally:
        bar.close()
    if args.trials_out is not None:
        write_trials(results, args.trials_out)
    if args.format in ("csv", "json"):
        frame = results.accuracy()
        emit(render(frame, args.format, records=accuracy_records(results)), args.output)
    else:
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
    parser.add_argument("--suite", choices=SUITES, default="default",
                        help="which trials: the MUTT experiment sets (needs a data dir), the bundled sample, the "
                             "pair store (built with `muttlab corrupt`, edited with `muttlab pairs`), or default "
                             "(MUTT when a data dir is set, else the sample)")
    parser.add_argument("--trials-out", type=Path, metavar="FILE",
                        help="also write every trial's scores, margin and pass/fail (.csv, or .jsonl)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="score on a Dask cluster: the scheduler's address, e.g. tcp://10.0.0.5:8786 "
                             "(default: $MUTTLAB_SCHEDULER; unset: on this machine). Needs muttlab[scale]; "
                             "see docs/scale.md")
    add_output_options(parser)
    parser.set_defaults(handler=handle)

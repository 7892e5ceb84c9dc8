"""``muttlab run``: score a suite and print the accuracy grid (muttlab.engine.runner.run)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from muttlab.corruptions import catalog
from muttlab.cli.common import (add_output_options, emit, parse_int_list, progress_bar, render,
                                settings_from_args, split_names)
from muttlab.errors import MuttlabError
from muttlab.engine.runner import Results, registry_for, run
from muttlab.engine.sources import load_default_suite, load_mutt_experiments, load_sample
from muttlab.engine.suites import suite_from_store

DEFAULT_METRICS = "BLEU-1,BLEU-2,BLEU-3,BLEU-4,ROUGE-L,CIDEr-D"
SUITES = {"default": load_default_suite, "mutt": load_mutt_experiments, "sample": lambda settings: load_sample(),
          "store": suite_from_store}


def select_corruptions(suite, spec: str):
    names = split_names(spec)
    if names == ["all"] or not names:
        return suite
    for name in names:
        try:
            catalog.get(name)
        except KeyError as exc:
            raise MuttlabError(str(exc)) from None
    missing = [n for n in names if n not in suite.corruptions()]
    if missing:
        raise MuttlabError(f"suite {suite.name!r} has no trials of {', '.join(missing)}; it has: "
                           f"{', '.join(suite.corruptions())}")
    return suite.select(names)


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
    suite = select_corruptions(SUITES[args.suite](settings), args.corruptions)
    if args.split is not None:
        full = suite
        suite = suite.in_split(args.split)
        if not suite.trials:
            raise MuttlabError(f"--split {args.split}: none of the {len(full.trials)} trials is taken from a SICK "
                               f"pair of that split (generated types have none, and the join needs "
                               f"sick/SICK.txt in the data dir)")
        print(f"note: --split {args.split}: {len(suite.trials)} of {len(full.trials)} trials "
              f"({', '.join(f'{c} {len(suite.of(c))}' for c in suite.corruptions())})", file=sys.stderr)
    if suite.is_sample:
        print("note: no data dir is set; running on the bundled sample corpus (set MUTTLAB_DATA_DIR for the "
              "MUTT experiment sets)", file=sys.stderr)
    ref_counts = parse_int_list(args.refs, "--refs", "5,10,20") if args.refs is not None else None
    registry = registry_for(settings)
    bar, progress = progress_bar()
    try:
        results = run(suite, args.metrics, ref_counts, settings, registry, progress)
    finally:
        bar.close()
        registry.close()
    for warning in results.warnings:
        print(f"warning: {warning}", file=sys.stderr)
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
        "run", parents=[common], help="score trials with metrics and print the accuracy grid",
        description="Score every trial (original and corruption against the first k references) with each "
                    "metric and report how often the metric does the right thing.")
    parser.add_argument("--metrics", default=DEFAULT_METRICS,
                        help=f"comma-separated metric names or 'all' (default: {DEFAULT_METRICS})")
    parser.add_argument("--corruptions", default="all", help="comma-separated corruption types or 'all'")
    parser.add_argument("--refs", default=None,
                        help="comma-separated reference counts (default: 5,10,20, as many as the suite has)")
    parser.add_argument("--suite", choices=sorted(SUITES), default="default",
                        help="which trials: the MUTT experiment sets (needs a data dir), the bundled sample, the "
                             "pair store (built with `muttlab corrupt`, edited with `muttlab pairs`), or default "
                             "(MUTT when a data dir is set, else the sample)")
    parser.add_argument("--split", choices=("test", "train", "trial"), default=None,
                        help="only trials taken from SICK pairs of this SemEval split (e.g. test: pairs no "
                             "SICK-trained metric has seen); generated types have no SICK pair and drop out")
    parser.add_argument("--trials-out", type=Path, metavar="FILE",
                        help="also write every trial's scores, margin and pass/fail (.csv, or .jsonl)")
    add_output_options(parser)
    parser.set_defaults(handler=handle)

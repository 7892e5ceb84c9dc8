"""``muttlab run``: score a suite and print the accuracy grid (muttlab.engine.runner.run)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd
from tqdm import tqdm

from muttlab.corruptions import catalog
from muttlab.cli.common import (add_output_options, emit, parse_int_list, render, settings_from_args,
                               split_names)
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
    """The paper's layout: one row per metric, a column per corruption@refs, cells 'acc (passed/n) tie t'
    (accuracy and tie rate in percent)."""
    table = results.accuracy()
    table["cell"] = [f"{a:.1f} ({p}/{n}) tie {t:.1f}"
                     for a, p, n, t in zip(table["accuracy"], table["passed"], table["n"], table["tie_rate"])]
    table["column"] = table["corruption"] + "@" + table["refs"].astype(str)
    grid = table.pivot(index="metric", columns="column", values="cell")
    grid = grid.reindex(index=list(dict.fromkeys(table["metric"])), columns=list(dict.fromkeys(table["column"])))
    return grid.reset_index()


def accuracy_records(results: Results) -> list[dict]:
    table = results.accuracy()
    return [{"metric": r.metric, "corruption": r.corruption, "refs": int(r.refs), "n": int(r.n),
             "passed": int(r.passed), "accuracy": round(float(r.accuracy), 4), "ci_low": round(float(r.ci_low), 4),
             "ci_high": round(float(r.ci_high), 4), "tie_rate": round(float(r.tie_rate), 4),
             "signature": r.signature} for r in table.itertuples()]


def write_trials(results: Results, path) -> None:
    """The tidy per-trial table (both scores, margin, pass/fail, tie), CSV or JSON Lines by file extension.

    Scores keep full precision (shortest repr that reads back to the same float): two scores that differ
    in the last bits must stay different in the file.
    """
    table = results.table.assign(signature=results.table["metric"].map(results.signatures) + "|" + results.rules)
    if path.suffix == ".jsonl":
        # pandas' to_json rounds to 10 significant digits; json.dumps writes Python's repr of a float.
        text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in table.to_dict(orient="records"))
    else:
        text = table.to_csv(index=False)
    emit(text, path)


def handle(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    suite = select_corruptions(SUITES[args.suite](settings), args.corruptions)
    if suite.is_sample:
        print("note: no data dir is set; running on the bundled sample corpus (set MUTTLAB_DATA_DIR for the "
              "MUTT experiment sets)", file=sys.stderr)
    ref_counts = parse_int_list(args.refs, "--refs", "5,10,20") if args.refs is not None else None
    registry = registry_for(settings)
    bar = tqdm(total=0, unit="metric", disable=None, file=sys.stderr)

    def progress(done: int, total: int, message: str) -> None:
        bar.total = total
        bar.n = done
        bar.set_description(message)
        bar.refresh()

    try:
        results = run(suite, args.metrics, ref_counts, settings, registry, progress)
    finally:
        bar.close()
        registry.close()
    if args.trials_out is not None:
        write_trials(results, args.trials_out)
    if args.format in ("csv", "json"):
        frame = results.accuracy()
        emit(render(frame, args.format, records=accuracy_records(results)), args.output)
    else:
        print(f"cells: accuracy % (passed/n) and tie rate %; rules {results.rules}", file=sys.stderr)
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
    parser.add_argument("--trials-out", type=Path, metavar="FILE",
                        help="also write every trial's scores, margin and pass/fail (.csv, or .jsonl)")
    add_output_options(parser)
    parser.set_defaults(handler=handle)

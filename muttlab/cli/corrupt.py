"""``muttlab corrupt``: build a suite of corruption pairs (muttlab.engine.suites.build_suite) into the store
and/or a JSONL file; ``--sample`` regenerates the bundled sample trials."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from muttlab.cli import summary
from muttlab.cli.common import emit, render, settings_from_args, split_names
from muttlab.errors import MuttlabError
from muttlab.api import SAMPLE_TRIALS
from muttlab.api import (SUITE_SOURCES as SOURCES, STUDY_LIST_COUNTS, STUDY_MIN_REFS, build_suite, count_types, store_suite,
                           write_sample_trials, write_trials)


def counts_frame(suite) -> pd.DataFrame:
    rows = [{"corruption": c.corruption, "trials": c.trials,
             "study_list": STUDY_LIST_COUNTS.get(c.corruption, pd.NA),
             "study_trials": c.study if c.study is not None else pd.NA} for c in count_types(suite)]
    return pd.DataFrame(rows, columns=["corruption", "trials", "study_list", "study_trials"])


def handle(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    if args.seed is not None:
        settings = settings.with_overrides(seed=args.seed)
    types = split_names(args.types) or None
    if args.input is not None:
        from muttlab.cli.suite_file import report_user_suite
        suite = report_user_suite(args, settings, types)
        if args.output is not None:
            return 0
    elif args.sample:
        suite = write_sample_trials(seed=settings.seed)
        print(f"wrote {SAMPLE_TRIALS} ({len(suite.trials)} trials)", file=sys.stderr)
        if not args.store:
            emit(render(counts_frame(suite), "table"), None)
            return 0
    else:
        source = args.source or ("sample" if settings.using_sample else "sick")
        if source == "sick" and settings.using_sample:
            raise MuttlabError("--source sick needs the datasets: set MUTTLAB_DATA_DIR or pass --data-dir")
        suite = build_suite(settings, source=source, types=types, min_refs=args.min_refs)
        if args.output:
            write_trials(suite.trials, args.output)
            print(f"wrote {args.output} ({len(suite.trials)} trials)", file=sys.stderr)
    if args.store or (not args.sample and not args.no_store):
        report = store_suite(settings, suite, author=args.author)
        print(f"pair store {settings.store_url}: {report.added} pairs added, {report.existing} already there",
              file=sys.stderr)
    emit(render(counts_frame(suite), "table"), None)
    return 0


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "corrupt", parents=[common], help=summary("corrupt"),
        description="Extract the study's corruption types from SICK by templates, generate the others from "
                    "spaCy parses, attach reference pools, and store the pairs (status 'proposed') for review. "
                    "Prints the number of trials per type next to the study's counts.")
    parser.add_argument("--source", choices=SOURCES, default=None,
                        help="sick (needs the data dir) or sample (default: sick when a data dir is set)")
    parser.add_argument("--sample", action="store_true",
                        help="regenerate the bundled sample trials (data/sample/trials.jsonl) from "
                             "data/sample/scenes.jsonl")
    parser.add_argument("--types", default=None, help="comma-separated corruption types (default: all that apply)")
    parser.add_argument("--min-refs", type=int, default=STUDY_MIN_REFS,
                        help=f"SICK: leave out pairs with fewer references (default {STUDY_MIN_REFS}, as the study; "
                             "5 keeps Flickr8k pairs)")
    parser.add_argument("--seed", type=int, default=None, help="generators' seed (default: the settings' seed)")
    parser.add_argument("--input", "-i", type=Path, default=None,
                        help="your own sentences with references (.jsonl: text, references, id; .csv/.tsv: text, id, "
                             "reference columns); with --output they become a suite file, else they go to the store")
    parser.add_argument("--output", "-o", type=Path, default=None,
                        help="also write the trials to this file (.jsonl, or .parquet for --input)")
    parser.add_argument("--no-store", action="store_true", help="do not write the pairs into the pair store")
    parser.add_argument("--store", action="store_true", help="with --sample: also add the sample pairs to the store")
    parser.add_argument("--author", default="muttlab corrupt", help="author recorded on the pairs' first revision")
    parser.set_defaults(handler=handle)

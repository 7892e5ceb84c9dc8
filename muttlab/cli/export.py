"""``muttlab export``: a suite (built-in or a file) as JSON Lines or Parquet, with the schema of
:mod:`muttlab.suites.export` that ``datasets`` loads. Trial-level results export with ``muttlab run --trials-out``."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from muttlab.cli import summary
from muttlab.cli.common import settings_from_args

BUILTIN_SUITES = ("default", "mutt", "sample", "store")


def handle(args: argparse.Namespace) -> int:
    from muttlab import api
    from muttlab.api import read_suite, write_suite

    settings = settings_from_args(args)
    note = ""
    if args.suite in BUILTIN_SUITES:
        suite = api.load_suite(settings, args.suite)
    else:
        from muttlab.cli.suite_file import report_problems
        suite = read_suite(args.suite, format=args.format_in)
        report_problems(suite)
        if suite.not_applied:
            note = f"; {sum(suite.not_applied.values())} record(s) the data set marks as not applied left out"
    count = write_suite(suite, args.output)
    print(f"wrote {args.output} ({count} trials{note})", file=sys.stderr)
    return 0


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "export", parents=[common], help=summary("export"),
        description="Write a suite's trials (id, corruption, family, rule, original, corrupted, references, source, "
                    "src, lang, human_score, expectation, severity) to .jsonl or .parquet; `datasets.load_dataset('parquet', ...)` reads it.")
    parser.add_argument("--suite", default="default", metavar="SUITE|PATH",
                        help="default, mutt, sample, store, or the path of a suite file (see `muttlab run --suite`)")
    parser.add_argument("--format-in", default=None, help="format of a --suite file (default: told from the file)")
    parser.add_argument("--output", "-o", type=Path, required=True, help="the .jsonl or .parquet file to write")
    parser.set_defaults(handler=handle)

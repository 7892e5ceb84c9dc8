"""``muttlab``: every engine function from the command line.

Each subcommand lives in its own module of this package and exposes ``register(subparsers, common)``;
its handler parses, calls one engine function and formats. Errors the user can fix (a
:class:`~muttlab.errors.MuttlabError`, an unknown metric, a missing requirement) print one line and exit 2.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from muttlab.cli.common import common_parser
from muttlab.errors import MuttlabError
from muttlab.metrics.base import MetricError, MetricUnavailable

# Subcommand modules, in the order ``muttlab --help`` lists them.
COMMANDS = ("run", "metrics_cmd", "dbleu", "vectors", "reval", "serve", "multilevel", "corrupt", "pairs", "correlate",
            "reproduce")

EXIT_USER_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    common = common_parser()
    parser = argparse.ArgumentParser(
        prog="muttlab", parents=[common],
        description="Metric unit tests for text-generation metrics: corrupt sentences in controlled ways and "
                    "count how often each metric does the right thing.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"muttlab.cli.{name}").register(subparsers, common)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return EXIT_USER_ERROR
    try:
        return int(args.handler(args) or 0)
    except (MuttlabError, MetricError, MetricUnavailable) as exc:
        print(f"muttlab: error: {exc}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("muttlab: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

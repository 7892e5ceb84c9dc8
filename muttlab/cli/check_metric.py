"""``muttlab check-metric``: a metric through the properties every metric should have
(:mod:`muttlab.conformance`); exit status 0 when nothing fails, 1 otherwise, for CI."""
from __future__ import annotations

import argparse
import sys

from muttlab.cli import summary
from muttlab.cli.common import add_output_options, emit, render, settings_from_args, split_names

EXIT_FAILED = 1


def handle(args: argparse.Namespace) -> int:
    from muttlab import api

    settings = settings_from_args(args)
    registry = api.registry_for(settings)
    results = {}
    try:
        specs = split_names(args.metric)
        # `all` lists every registered metric, the unavailable ones with their reason: none is skipped silently.
        named = specs != ["all"]
        names = [registry.add_path(s) if ":" in s else s for s in specs] if named else registry.names
        for name in registry.resolve(names):
            info = registry.info(name)
            if not info.available:
                results[name] = [api.conformance_unavailable(info.reason, named)]
                continue
            print(f"checking {name} ...", file=sys.stderr)
            results[name] = api.check_metric(registry.get(name), items=args.items, refs=args.refs)
    finally:
        registry.close()
    emit(render(api.conformance_frame(results), args.format), args.output)
    return 0 if api.conformance_passed(results) else EXIT_FAILED


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "check-metric", parents=[common], help=summary("check-metric"),
        description="Score real sentences (the bundled sample) and check: deterministic, batch-order and batch-size "
                    "independent (or, for a corpus-level metric, a function of its batch alone), a reference copy "
                    "never beaten, empty strings and any Unicode handled, scores within the declared range, the "
                    "signature changing with the settings; prints speed per 1,000 pairs. Exit status 1 when a "
                    "property fails (a failure declared as the metric's definition is reported as an expected "
                    "failure and does not count) or a metric named on the command line is unavailable; `all` "
                    "lists the unavailable metrics with their reason.")
    parser.add_argument("metric", help="registered name(s), comma-separated, 'all', or MODULE:CALLABLE")
    parser.add_argument("--items", type=int, default=40, help="sentences to score (default 40)")
    parser.add_argument("--refs", type=int, default=5, help="references per sentence (default 5)")
    add_output_options(parser)
    parser.set_defaults(handler=handle)

"""``muttlab metrics``: which metrics exist, which are available here, and why not."""
from __future__ import annotations

import argparse

import pandas as pd

from muttlab.cli import summary
from muttlab.cli.common import add_output_options, emit, render, settings_from_args
from muttlab.api import registry_for


def handle(args: argparse.Namespace) -> int:
    registry = registry_for(settings_from_args(args))
    infos = [registry.info(name) for name in registry.names]
    names = "\n".join(i.name for i in infos if i.available or args.all) + "\n"
    frame = pd.DataFrame([{
        "metric": i.name, "available": "yes" if i.available else "no",
        "better": "" if not i.available else ("higher" if i.higher_is_better else "lower"),
        "source": i.source, "signature or reason": i.signature if i.available else i.reason,
    } for i in infos])
    if args.format == "table":
        emit(names + "\n" + render(frame, "table"), args.output)
    else:
        emit(render(frame, args.format), args.output)
    registry.close()
    return 0


def register(subparsers, common) -> None:
    parser = subparsers.add_parser("metrics", parents=[common], help=summary("metrics"),
                                   description="Print the available metric names, one per line, then details "
                                               "for every known metric (signature, or why it is unavailable).")
    parser.add_argument("--all", action="store_true", help="list unavailable metrics in the name list too")
    add_output_options(parser)
    parser.set_defaults(handler=handle)

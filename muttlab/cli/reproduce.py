"""``muttlab reproduce``: every published number the lab can compute, beside ours (muttlab.human.reproduce).

    muttlab reproduce [--studies mutt_accuracy,flickr8k_expert,...] [--format ...] [--output FILE]
"""
from __future__ import annotations

import argparse
import json
import sys

import pandas as pd

from muttlab import api
from muttlab.cli.common import (add_output_options, add_tie_rule_option, emit, escaped, progress_bar, render,
                                settings_from_args, split_names)
from muttlab.api import REPRODUCE_TOLERANCES as TOLERANCES


def _json_value(value):
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):  # JSON has no NaN
        return None
    return value.item() if hasattr(value, "item") else value


def handle(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    bar, progress = progress_bar()
    try:
        report = api.reproduce(settings, studies=args.studies, progress=progress,
                               metrics=split_names(args.metrics) or None)
    finally:
        bar.close()
    summary = report.summary()
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    if args.format == "json":
        payload = {"summary": summary, "tolerances": TOLERANCES, "lab_rules": settings.rules.signature(),
                   "by_study": report.by_study().to_dict(orient="records"),
                   "numbers": [{k: _json_value(v) for k, v in rec.items()}
                               for rec in report.frame.to_dict(orient="records")]}
        emit(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", args.output)
    elif args.format == "csv":
        emit(render(report.frame.assign(lab_rules=settings.rules.signature()), "csv"), args.output)
        print(summary, file=sys.stderr)
    else:
        shown = report.display()
        # The numbers are text already, with the digits of their statistic; tabulate must not re-parse them.
        text = (escaped(shown, "markdown").to_markdown(index=False, disable_numparse=True) + "\n"
                if args.format == "markdown"
                else render(shown, args.format))
        if args.format == "table":
            text += "\n" + render(report.by_study(), "table")
        emit(text + ("\n" if args.format != "latex" else "% ") + summary + "\n", args.output)
    return 0


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "reproduce", parents=[common], help="set every published number beside the one measured here",
        description="Compute every number of the data dir's published/published.csv that the lab can compute "
                    "(MUTT accuracy, SICK Table 3, Flickr8K tau, SICK relatedness r) and print it beside the "
                    "published one with the difference, the tolerance of its statistic (accuracy ±2 points, "
                    "tau×100 ±1.0, r ±0.02) and the known reason for a difference. Needs the data dir; scores "
                    "come from the score cache when they can, so a second run is fast.")
    parser.add_argument("--studies", default="all",
                        help="comma-separated studies or 'all' (default): "
                             + ", ".join(p.name for study in api.studies() for p in study.published))
    parser.add_argument("--metrics", default=None,
                        help="only the numbers of these metrics (comma-separated, ours or the papers' names; "
                             "default: all)")
    add_tie_rule_option(parser)  # the lab's rules, for measured_lab: the paper's numbers judge ties exactly
    add_output_options(parser)
    parser.set_defaults(handler=handle)

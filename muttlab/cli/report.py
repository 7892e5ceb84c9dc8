"""``muttlab report``: a one-file HTML report of a dashboard view (figures drawn by plotly.js, inlined; opens
offline; each figure's toolbar saves a PNG)."""
from __future__ import annotations

import argparse
from pathlib import Path

from muttlab.cli import summary
from muttlab.cli.common import add_tie_rule_option, emit, settings_from_args


def handle(args: argparse.Namespace) -> int:
    from muttlab.dashboard.report import build_report

    document = build_report(settings_from_args(args), args.view)
    emit(document, Path(args.output))
    return 0


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "report", parents=[common], help=summary("report"),
        description="Write the view of a dashboard link (Run, Drill-down, Severity curves, Published vs measured, "
                    "Human judgments, Correlation studies) as one HTML file with its figures (plotly.js inlined, no "
                    "internet needed; each figure's toolbar saves a PNG) and tables.")
    parser.add_argument("--view", required=True, metavar="LINK",
                        help="the dashboard link or its query string, e.g. "
                             "'/drilldown?metric=BLEU-4&corruption=neg_subj&refs=5' or '/severity'")
    parser.add_argument("--output", required=True, type=Path, help="the HTML file to write")
    add_tie_rule_option(parser)  # the precomputed grid is reported only under the rules it was judged by
    parser.set_defaults(handler=handle)

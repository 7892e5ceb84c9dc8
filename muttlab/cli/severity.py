"""``muttlab severity``: pass rate (with its 95% interval) and mean score drop against a corruption's strength,
per metric (:func:`muttlab.severity.severity_curve`); curves that fall are flagged."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from muttlab.cli import summary
from muttlab.cli.common import (add_output_options, add_tie_rule_option, emit, parse_int_list, progress_bar, render,
                                settings_from_args)


def handle(args: argparse.Namespace) -> int:
    from muttlab import api

    settings = settings_from_args(args)
    sentences = None
    if args.input is not None:
        from muttlab.cli.suite_file import report_problems_of
        read = api.read_user_sentences(args.input)
        report_problems_of(read.problems, str(args.input))
        sentences = read.items
    strengths = parse_int_list(args.strengths, "--strengths", "1,2,3")
    bar, progress = progress_bar()
    try:
        frame = api.severity(settings, args.corruption, args.metrics, strengths, sentences=sentences, refs=args.refs,
                             progress=progress)
    finally:
        bar.close()
    print(f"{frame.attrs['kept']} of {frame.attrs['sentences']} sentences take {args.corruption} at every strength",
          file=sys.stderr)
    emit(render(frame, args.format, decimals=3), args.output)
    flagged = sorted(set(frame.loc[frame["monotone"] != "yes", "metric"]))
    if flagged:
        print(f"not monotone: {', '.join(flagged)} (a stronger corruption should never be penalised less)",
              file=sys.stderr)
    return 0


def register(subparsers, common) -> None:
    from muttlab.api import STRENGTHS
    parser = subparsers.add_parser(
        "severity", parents=[common], help=summary("severity"),
        description="Apply a corruption at several strengths to the same sentences (every distinct original of the "
                    "MUTT experiment sets with a data dir, else the bundled sample's scenes, or --input) and report "
                    "each metric's pass rate with its 95% Wilson interval and mean score drop per strength. A pass "
                    "rate is flagged as falling only beyond the tie rule and beyond sampling noise (the two "
                    "strengths' intervals do not overlap). Types and what their strength counts: "
                    + "; ".join(f"{k}: {v}" for k, v in STRENGTHS.items()))
    parser.add_argument("--corruption", required=True, choices=list(STRENGTHS), help="the corruption type")
    parser.add_argument("--metrics", default="BLEU-4,METEOR-1.5,CIDEr-D", help="comma-separated metric names")
    parser.add_argument("--strengths", default="1,2,3", help="comma-separated strengths (default 1,2,3)")
    parser.add_argument("--refs", type=int, default=5, help="references per sentence (default 5)")
    parser.add_argument("--input", "-i", type=Path, default=None,
                        help="your own sentences with references (as for `muttlab corrupt --input`)")
    add_tie_rule_option(parser)
    add_output_options(parser)
    parser.set_defaults(handler=handle)

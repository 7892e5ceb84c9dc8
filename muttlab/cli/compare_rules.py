"""``muttlab compare-rules RULE``: how each metric's unit-test accuracies move from the default tie rule to
another, above all to the ε it earned on expert judgments (:func:`muttlab.api.compare_rules`).

    muttlab compare-rules calibrated:mqm-ted:zh-en
    muttlab compare-rules calibrated:mqm-ted:zh-en --metrics BLEU-4,chrF,TER --suites mutt,demetr --format markdown
    muttlab compare-rules exact --suites my_suite.jsonl --format json
"""
from __future__ import annotations

import argparse
import json

from muttlab import api
from muttlab.cli import summary
from muttlab.cli.common import add_output_options, emit, render, settings_from_args, split_names
from muttlab.cli.profile import heading, notes_text, progress_printer

DEFAULT_SUITES = "mutt,demetr,mslc"


def handle(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    metrics = split_names(args.metrics) if args.metrics is not None else None
    bar, progress = progress_printer()
    try:
        result = api.compare_rules(settings, args.rule, metrics, split_names(args.suites), progress=progress)
    finally:
        bar.close()
    if args.format == "json":
        text = json.dumps(result.rows(), indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    elif args.format == "csv":
        text = render(result.table, "csv")
    else:
        out = [heading(f"All trials of each suite: accuracy (%) and ties (%) under {result.default} and under "
                       f"{result.rule}", args.format) + render(result.summary, args.format, decimals=3)]
        for (metric, suite), part in result.table.groupby(["metric", "suite"], sort=False):
            part = part.drop(columns=["metric", "suite"])
            part = part.drop(columns=[c for c in ("refs", "severity") if part[c].isna().all() or
                                      (c == "refs" and (part[c] == 0).all())])
            out.append(heading(f"{metric} on {suite}", args.format) + render(part, args.format, decimals=1))
        notes = [f"refused: {r.metric} on {r.suite}: {r.reason}" for r in result.refused.itertuples(index=False)]
        notes.append("a strict trial whose scores lie within the metric's ε is a tie, and a tie fails; the "
                     "Difference rule of meaning-preserving corruptions does not use the tie rule")
        out.append(notes_text(notes, args.format))
        text = "\n".join(out)
    emit(text, args.output)
    return 0


def register(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "compare-rules", parents=[common], help=summary("compare-rules"),
        description="Judge the unit-test suites under the default tie rule and under RULE, and report per metric "
                    "and corruption type or phenomenon the accuracy under each, the change and the ties under "
                    "each. With calibrated:STUDY:PAIR each metric's ties are the score differences experts did "
                    "not tell apart; a calibration that cannot judge a suite (not informative, another target "
                    "language) is listed with its reason. Scores are read from the score cache. "
                    "docs/meta_eval.md, 'Tie-calibrated verdicts'.")
    parser.add_argument("rule", metavar="RULE",
                        help="the tie rule to compare with the default: calibrated:STUDY:PAIR (e.g. "
                             "calibrated:mqm-ted:zh-en), exact, or a relative tolerance")
    parser.add_argument("--metrics", default=None,
                        help="comma-separated metric names (default: BLEU-4,METEOR-1.5,CIDEr-D,ROUGE-L,TER,"
                             "BADGER-like,TERp)")
    parser.add_argument("--suites", default=DEFAULT_SUITES,
                        help="comma-separated: mutt, demetr, mslc (MSLC24-B's edge cases), or suite files' paths "
                             f"(default: {DEFAULT_SUITES})")
    parser.add_argument("--tie-rule", default=None, metavar="exact|TOLERANCE",
                        help="the rule to compare RULE with (default: $MUTTLAB_TIE_RULE, else 1e-9)")
    add_output_options(parser)
    parser.set_defaults(handler=handle)

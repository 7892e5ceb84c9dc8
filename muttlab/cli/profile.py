"""``muttlab profile METRIC [--vs OTHER]``: one metric's robustness profile — MUTT grid, DEMETR per severity and
perturbation, MSLC24-B edge cases, MQM meta-evaluation, each with its interval — and its comparison with another
metric (:func:`muttlab.api.profile`, :func:`muttlab.api.compare_profiles`).

    muttlab profile chrF
    muttlab profile chrF --vs BLEU-4 --format markdown
    muttlab profile TER --format json | python -m json.tool
"""
from __future__ import annotations

import argparse
import json
import sys

from muttlab import api
from muttlab.cli import summary
from muttlab.cli.common import (add_output_options, add_tie_rule_option, emit, progress_bar, real, render,
                                settings_from_args, split_names)
from muttlab.escaping import latex, markdown

TITLES = {"mutt": "MUTT: accuracy (%) per corruption type and reference count, 95% Wilson interval",
          "demetr_severity": "DEMETR: accuracy (%) per severity", "demetr": "DEMETR: accuracy (%) per perturbation",
          "mslc": "MSLC24-B edge cases: a correct translation must score above the edge case (%)",
          "mqm": "MQM (WMT21 TED): meta-evaluation, rank and cluster among the metrics evaluated",
          "cells": "Unit tests, trial by trial (McNemar)", "mqm comparison": "MQM: the meta-evaluation's own test"}


def progress_printer():
    """(bar, progress): a bar on a terminal; elsewhere each new phase on its own line of stderr (a phase is a
    message up to its first colon), so a script's log shows what is computed and for how long."""
    bar, drawn = progress_bar()
    if drawn is not None:
        return bar, drawn
    seen: set[str] = set()

    def progress(done: int, total: int, message: str) -> None:
        phase = message.split(":")[0]
        if phase not in seen:
            seen.add(phase)
            print(f"muttlab: {message}", file=sys.stderr)

    return bar, progress


def heading(text: str, fmt: str) -> str:
    if fmt == "markdown":
        return f"### {markdown(text)}\n\n"
    if fmt == "latex":
        return f"\\paragraph{{{latex(text)}}}\n"
    return f"{text}\n"


def notes_text(notes: list[str], fmt: str) -> str:
    if fmt == "latex":
        items = "".join(f"\\item {latex(n)}\n" for n in notes)
        return heading("Notes", fmt) + f"\\begin{{itemize}}\n{items}\\end{{itemize}}\n"
    escape = markdown if fmt == "markdown" else str
    return heading("Notes", fmt) + "".join(f"- {escape(n)}\n" for n in notes)


def tables_text(tables: dict, fmt: str, notes: list[str]) -> str:
    """Each non-empty table under its title, then the notes: the table, markdown and latex forms."""
    out = [heading(title, fmt) + render(frame, fmt, decimals=3) for title, frame in tables.items()
           if frame is not None and not frame.empty]
    if notes:
        out.append(notes_text(notes, fmt))
    return "\n".join(out)


def profile_notes(profile) -> list[str]:
    return ([f"{profile.metric} ({profile.signature}), unit tests judged under {profile.rules}"]
            + [f"{k}: {v}" for k, v in profile.origin.items()]
            + [f"{k} not available: {v}" for k, v in profile.unavailable.items()]
            + [f"MQM {k} not evaluated: {v}" for k, v in profile.mqm_skipped.items()] + list(profile.notes))


def handle(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    bar, progress = progress_printer()
    try:
        suites = split_names(args.suites)
        if args.vs is None:
            result = api.profile(settings, args.metric, progress=progress, suites=suites)
        else:
            result = api.compare_profiles(settings, args.metric, args.vs, alpha=args.alpha, progress=progress,
                                          suites=suites)
    finally:
        bar.close()
    if args.format == "json":
        text = json.dumps(result.to_dict(), indent=1, ensure_ascii=False, allow_nan=False) + "\n"
    elif args.format == "csv":
        text = render(result.long(), "csv")
    elif args.vs is None:
        text = tables_text({TITLES[k]: v for k, v in result.tables().items()}, args.format, profile_notes(result))
    else:
        caught = result.caught_by_one()
        tables = {f"Caught by one metric and missed by the other ({len(caught)} cells)": caught,
                  TITLES["cells"]: result.cells, TITLES["mqm comparison"]: result.mqm}
        notes = [f"{args.metric} (first) against {args.vs} (second), unit tests judged under {result.rules}, "
                 f"significant below p = {result.alpha:g}"] + result.notes
        text = tables_text(tables, args.format, notes)
    emit(text, args.output)
    return 0


def register(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "profile", parents=[common], help=summary("profile"),
        description="One metric's robustness profile: its MUTT grid (accuracy per corruption type and reference "
                    "count), DEMETR accuracy per severity and perturbation, MSLC24-B edge cases and its MQM "
                    "meta-evaluation on WMT21 TED, side by side with their 95% intervals; with --vs, which "
                    "phenomena one metric catches and the other misses and where the difference is significant "
                    "(McNemar on the trials both scored; the meta-evaluation's own tests for MQM). Shipped results "
                    "are used where they are current; what is missing is computed through the score cache, with "
                    "progress on stderr. docs/meta_eval.md, 'Robustness profiles'.")
    parser.add_argument("metric", metavar="METRIC", help="a registered metric's name (`muttlab metrics` lists them)")
    parser.add_argument("--vs", default=None, metavar="OTHER", help="compare with this metric")
    parser.add_argument("--suites", default="mutt,demetr,mslc",
                        help="the unit-test suites to include: mutt, demetr, mslc (default: all three)")
    parser.add_argument("--alpha", type=real(0.0, 1.0), default=0.05,
                        help="p-value under which a difference is significant (default: 0.05)")
    add_tie_rule_option(parser)
    add_output_options(parser)
    parser.set_defaults(handler=handle)

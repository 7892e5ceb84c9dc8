"""``muttlab meta-eval``: how metrics agree with human judgments of real system outputs (muttlab.meta).

    muttlab meta-eval mqm-ted:en-de                      # the data dir's expert MQM judgments of WMT21 TED
    muttlab meta-eval path/to/mqm/ted/zhen --metrics chrF,TER --format markdown
    muttlab meta-eval my_study.jsonl --statistics acc_eq_item,pairwise_acc_sys --format json
"""
from __future__ import annotations

import argparse
import json
import sys

from muttlab import api
from muttlab.checks import MAX_SEED
from muttlab.cli import summary
from muttlab.cli.common import (add_output_options, emit, output_file, progress_bar, real, render,
                                settings_from_args, whole)
from muttlab.errors import MuttlabError

STATISTIC_NAMES = ("acc_eq_item, acc_eq, pairwise_acc_item, pairwise_acc, kendall_item, kendall, pearson_item, "
                   "pearson, pairwise_acc_sys, pearson_sys")


def _options(args: argparse.Namespace) -> dict:
    options = {"n_resamples": args.resamples, "alpha": args.alpha, "max_exact_pairs": args.max_exact_pairs}
    if args.seed is not None:
        options["seed"] = args.seed
    if args.significance is not None:
        options["significance"] = [] if args.significance.strip() == "none" else args.significance
    for key in ("reference", "pair", "target_language"):
        if getattr(args, key) is not None:
            options[key] = getattr(args, key)
    return options


def _title(result) -> str:
    return (f"{result.name}: {len(result.systems)} systems, {result.items} items, {result.outputs} outputs judged "
            f"({result.human}); target language {result.target_language}")


def handle(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    bar, progress = progress_bar()
    try:
        result = api.meta_evaluate(settings, args.path, metrics=args.metrics, statistics=args.statistics,
                                   progress=progress, **_options(args))
    finally:
        bar.close()
    for metric, reason in result.skipped.items():
        print(f"note: {metric} not evaluated: {reason}", file=sys.stderr)
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    if args.calibrations_out is not None:
        document = api.meta_calibrations(result)
        try:
            args.calibrations_out.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n",
                                             encoding="utf-8")
        except OSError as exc:
            raise MuttlabError(f"cannot write {args.calibrations_out}: {exc.strerror}") from None
        print(f"wrote {args.calibrations_out}", file=sys.stderr)
    if args.format == "json":
        emit(render(result.table(), "json", records=result.rows()), args.output)
    elif args.format == "csv":
        import pandas as pd

        emit(render(pd.DataFrame(result.rows()), "csv"), args.output)
    else:
        text = render(result.table(), args.format, decimals=3)
        if args.format == "table":
            clusters = (f"; clusters: {', '.join(result.significance)} ({result.n_resamples} resamples, seed "
                        f"{result.seed}, p < {result.alpha:g})" if result.significance else "")
            text = f"{_title(result)}{clusters}\n{text}"
        emit(text, args.output)
    return 0


def register(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "meta-eval", parents=[common], help=summary("meta-eval"),
        description="Meta-evaluate metrics against human judgments of real system outputs, as WMT's metrics task "
                    "does: pairwise accuracy with tie calibration (acc*_eq, item-grouped and ungrouped, with its "
                    "tie threshold epsilon), plain pairwise accuracy, Kendall tau-b, Pearson r, system-level "
                    "pairwise accuracy and r, with a constant and a random baseline row and significance "
                    "clusters. A metric that cannot score the target language is listed on stderr with why. "
                    "docs/meta_eval.md says how each number is computed.")
    parser.add_argument("path", metavar="PATH",
                        help="a study's language pair (mqm-ted:en-de, mqm-ted:zh-en: the data dir's expert MQM "
                             "judgments), a language pair's folder of MQM files, or a judgments file (TSV or "
                             "JSONL: item, system, hypothesis, reference, score; docs/meta_eval.md)")
    parser.add_argument("--metrics", default="all",
                        help="comma-separated metric names or 'all' (default: every metric that can score the "
                             "target language)")
    parser.add_argument("--statistics", default=None, help=f"comma-separated, default all: {STATISTIC_NAMES}")
    parser.add_argument("--significance", default=None,
                        help="statistics to rank into significance clusters, or 'none' (default: acc_eq_item, "
                             "acc_eq, pairwise_acc_sys, pearson_sys)")
    parser.add_argument("--resamples", type=whole(1, 100_000), default=1000,
                        help="resamples of each significance test (default: 1000)")
    parser.add_argument("--seed", type=whole(0, MAX_SEED), default=None,
                        help="seed of the tests and the random baseline (default: the settings' seed)")
    parser.add_argument("--alpha", type=real(0.0, 1.0), default=0.05,
                        help="p-value under which a metric is significantly better (default: 0.05)")
    parser.add_argument("--max-exact-pairs", type=whole(1, 10 ** 9), default=50_000_000,
                        help="ungrouped acc*_eq is searched over every pair up to this many pairs, over sampled "
                             "thresholds above (default: 50,000,000)")
    parser.add_argument("--reference", default=None,
                        help="an MQM folder's human translation used as the reference (a TED pair knows its own)")
    parser.add_argument("--pair", default=None, help="an MQM folder's language pair, e.g. en-de (TED pairs: known)")
    parser.add_argument("--target-language", default=None,
                        help="the outputs' language for a judgments file without a lang field (default: en)")
    parser.add_argument("--calibrations-out", type=output_file, default=None, metavar="FILE",
                        help="also write each metric's tie calibration (item-grouped acc*_eq epsilon) as JSON")
    add_output_options(parser)
    parser.set_defaults(handler=handle)

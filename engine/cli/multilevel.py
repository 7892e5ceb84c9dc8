"""``muttlab multilevel tune|eval`` and ``muttlab ranking convert``."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from engine import multilevel, ranking
from engine.cli.common import add_output_options, emit, render, settings_from_args
from engine.errors import MuttlabError


def _progress(message: str) -> None:
    print(f"  {message}", file=sys.stderr, flush=True)


def _choices(value: str, allowed: tuple[str, ...], what: str) -> list[str]:
    names = list(allowed) if value == "all" else [v.strip() for v in value.split(",") if v.strip()]
    bad = [n for n in names if n not in allowed]
    if bad or not names:
        raise MuttlabError(f"unknown {what} {', '.join(bad) or value!r}; choose from {', '.join(allowed)} or all")
    return names


def _tune(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    rows = []
    for metric in _choices(args.metric, multilevel.METRICS, "metric"):
        for dataset in _choices(args.dataset, multilevel.DATASETS, "dataset"):
            print(f"tuning {metric} on {dataset}", file=sys.stderr)
            report = multilevel.tune(metric, dataset, settings, out_dir=args.out_dir, progress=_progress)
            model = report.multi_model
            rows.append({
                "metric": metric, "dataset": dataset, "correlation": report.correlation,
                "dev_n": report.dev_candidates, "single_dev": report.single_dev, "multi_dev": report.multi_dev,
                "lambda": model["lambda"], "theta": "/".join(f"{t:g}" for t in model["theta"]),
                "levels (low/med/high pairs)": "/".join(str(c) for c in report.level_counts),
                "files": ", ".join(Path(f).name for f in report.files),
            })
            for path in report.files:
                print(f"wrote {path}", file=sys.stderr)
    frame = pd.DataFrame(rows)
    emit(_render(frame, args.format), args.output)
    return 0


def _eval(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    rows = []
    for metric in _choices(args.metric, multilevel.METRICS, "metric"):
        for dataset in _choices(args.dataset, multilevel.DATASETS, "dataset"):
            rows += multilevel.evaluate(metric, dataset, settings, n_resamples=args.resamples, progress=_progress)
    emit(_render(multilevel.rows_frame(rows), args.format), args.output)
    return 0


def _render(frame: pd.DataFrame, fmt: str) -> str:
    # Correlations need more than the one decimal the shared renderer gives accuracies.
    if fmt == "markdown":
        return frame.to_markdown(index=False, floatfmt=".4f") + "\n"
    if fmt in ("table", "latex"):
        frame = frame.copy()
        for column in frame.columns:
            if frame[column].dtype.kind == "f":
                frame[column] = frame[column].map(lambda v: "" if pd.isna(v) else f"{v:.4f}")
    return render(frame, fmt)


def _convert(args: argparse.Namespace) -> int:
    frame = ranking.read_rankings(args.file)
    result = ranking.convert(frame, min_judgments=args.min_judgments, tau=args.tau)
    print(f"{result.ranked} translations ranked >= {args.min_judgments} times; variance threshold "
          f"{result.threshold:g} keeps {len(result.pairs)} at Kendall tau {result.tau:.3f}", file=sys.stderr)
    if args.pairs:
        ranking.write_pairs(result, args.pairs)
        print(f"wrote {args.pairs}", file=sys.stderr)
    emit(_render(result.curve, args.format), args.output)
    return 0


def register(subparsers, common: argparse.ArgumentParser) -> None:
    ml = subparsers.add_parser("multilevel", parents=[common], help="tune and evaluate ML-METEOR, DREEM, ML-DREEM",
                               description="Multi-level metrics (Chen et al. 2015): grid-search λ, θ and per-level "
                                           "weights on a development split; report held-out correlations.")
    actions = ml.add_subparsers(dest="action", metavar="ACTION", required=True)
    for name, handler, text in (("tune", _tune, "grid search on the development split; writes tuned JSON"),
                                ("eval", _eval, "held-out correlation with bootstrap 95%% CIs")):
        sub = actions.add_parser(name, parents=[common], help=text)
        sub.add_argument("--metric", default="all", help="meteor, dreem or all (default: all)")
        sub.add_argument("--dataset", default="all", help="flickr8k, sick or all (default: all)")
        if name == "tune":
            sub.add_argument("--out-dir", type=Path,
                             help="where tuned JSON goes (default: the model folder, <cache-dir>/models)")
        else:
            sub.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default: 1000)")
        add_output_options(sub)
        sub.set_defaults(handler=handler)

    rk = subparsers.add_parser("ranking", parents=[common], help="ranking judgments -> similarity training data",
                               description="Convert WMT-style relative-ranking judgments into reference-candidate "
                                           "similarity scores (ReVal §5, Algorithm 1).")
    rk_actions = rk.add_subparsers(dest="action", metavar="ACTION", required=True)
    conv = rk_actions.add_parser("convert", parents=[common], help="convert a ranking CSV/TSV",
                                 description="Input columns: " + ", ".join(ranking.COLUMNS) + " (CSV; TSV for "
                                             ".tsv/.txt). Prints the variance-threshold search.")
    conv.add_argument("file", type=Path, help="ranking judgments, one row per system per screen")
    conv.add_argument("--min-judgments", type=int, default=ranking.DEFAULT_MIN_JUDGMENTS,
                      help=f"keep translations ranked at least this often (default: {ranking.DEFAULT_MIN_JUDGMENTS})")
    conv.add_argument("--tau", type=float, default=ranking.DEFAULT_TAU,
                      help=f"Kendall tau the kept scores must keep (default: {ranking.DEFAULT_TAU})")
    conv.add_argument("--pairs", type=Path, help="write the kept (reference, candidate, score) pairs here as TSV")
    add_output_options(conv)
    conv.set_defaults(handler=_convert)

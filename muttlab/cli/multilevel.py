"""``muttlab multilevel tune|eval`` and ``muttlab ranking convert``."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from muttlab.learned import multilevel
from muttlab.human import ranking
from muttlab.cli.common import add_output_options, emit, render, settings_from_args, split_names
from muttlab.errors import MuttlabError


def _progress(message: str) -> None:
    print(f"  {message}", file=sys.stderr, flush=True)


def _choices(value: str, allowed: tuple[str, ...], what: str) -> list[str]:
    names = list(allowed) if value == "all" else split_names(value)
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
            report = multilevel.tune(metric, dataset, settings, out_dir=args.out_dir, progress=_progress,
                                     representations=split_names(args.representations))
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


def _read_judgments(args: argparse.Namespace) -> pd.DataFrame:
    """The judgments table from a long-format file, or from a WMT CSV with its texts (saying what was dropped)."""
    if not ranking.is_wmt_format(args.file):
        if args.references or args.systems or args.pair:
            raise MuttlabError(f"{args.file} is not a WMT ranking CSV (no system1Id/system1rank columns); "
                               "--references, --systems and --pair are for WMT files only")
        return ranking.read_rankings(args.file)
    if not args.references or not args.systems:
        raise MuttlabError(f"{args.file} is a WMT ranking CSV: give the texts too, with --references REF_FILE "
                           "and --systems OUTPUTS_FOLDER")
    wmt = ranking.read_wmt_rankings(args.file, args.references, args.systems, pair=args.pair)
    dropped = []
    if wmt.blank:
        dropped.append(f"{wmt.blank} blank ranks")
    if wmt.missing_outputs:
        names = sorted(wmt.missing_outputs, key=wmt.missing_outputs.get, reverse=True)
        dropped.append(f"{sum(wmt.missing_outputs.values())} ranks of {len(names)} systems without an output "
                       f"file in {args.systems} ({', '.join(names[:5])}{', ...' if len(names) > 5 else ''})")
    if wmt.empty_texts:
        dropped.append(f"{wmt.empty_texts} ranks with an empty reference or output line")
    print(f"WMT {wmt.pair}: {len(wmt.frame)} ranks on {wmt.frame['judgment'].nunique()} screens"
          + (f"; dropped {'; '.join(dropped)}" if dropped else ""), file=sys.stderr)
    return wmt.frame


def _convert(args: argparse.Namespace) -> int:
    frame = _read_judgments(args)
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
            sub.add_argument("--representations", default=",".join(multilevel.COMPONENTS),
                             help="DREEM representations the search may weight (default: "
                                  f"{','.join(multilevel.COMPONENTS)}; reval needs a trained ReVal Tree-LSTM)")
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
                                             ".tsv/.txt), or a WMT 2012-2014 ranking CSV (srcIndex, system1Id, "
                                             "..., system5rank) with --references and --systems. Prints the "
                                             "variance-threshold search.")
    conv.add_argument("file", type=Path, help="ranking judgments: one row per system per screen, or a WMT CSV")
    conv.add_argument("--references", type=Path,
                      help="WMT only: plain-text references, one line per source segment (srcIndex is 1-based)")
    conv.add_argument("--systems", type=Path,
                      help="WMT only: folder of system outputs, one file per system named as its systemNId")
    conv.add_argument("--pair", help="WMT only: the language pair to read when the CSV holds several "
                                     "(cs-en or Czech-English)")
    conv.add_argument("--min-judgments", type=int, default=ranking.DEFAULT_MIN_JUDGMENTS,
                      help=f"keep translations ranked at least this often (default: {ranking.DEFAULT_MIN_JUDGMENTS})")
    conv.add_argument("--tau", type=float, default=ranking.DEFAULT_TAU,
                      help=f"Kendall tau the kept scores must keep (default: {ranking.DEFAULT_TAU})")
    conv.add_argument("--pairs", type=Path, help="write the kept (reference, candidate, score) pairs here as TSV")
    add_output_options(conv)
    conv.set_defaults(handler=_convert)

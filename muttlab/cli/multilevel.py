"""``muttlab multilevel tune|eval``: ML-METEOR, DREEM and ML-DREEM (Chen et al. 2015)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from muttlab import api
from muttlab.cli import summary
from muttlab.cli.common import add_output_options, emit, render, settings_from_args, split_names, whole
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
    for metric in _choices(args.metric, api.MULTILEVEL_METRICS, "metric"):
        for dataset in _choices(args.dataset, api.MULTILEVEL_DATASETS, "dataset"):
            print(f"tuning {metric} on {dataset}", file=sys.stderr)
            report = api.tune_multilevel(metric, dataset, settings, out_dir=args.out_dir, progress=_progress,
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
                ident = api.file_id(Path(path))
                print(f"wrote {path}, model id {ident}; the metric uses it once installed: "
                      f"`muttlab models install {ident}`", file=sys.stderr)
    frame = pd.DataFrame(rows)
    emit(render(frame, args.format, decimals=4), args.output)
    return 0


def _eval(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    rows = []
    for metric in _choices(args.metric, api.MULTILEVEL_METRICS, "metric"):
        for dataset in _choices(args.dataset, api.MULTILEVEL_DATASETS, "dataset"):
            rows += api.evaluate_multilevel(metric, dataset, settings, n_resamples=args.resamples, progress=_progress)
    emit(render(api.multilevel_frame(rows), args.format, decimals=4), args.output)
    return 0


def register(subparsers, common: argparse.ArgumentParser) -> None:
    ml = subparsers.add_parser("multilevel", parents=[common], help=summary("multilevel"),
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
            sub.add_argument("--representations", default=",".join(api.MULTILEVEL_COMPONENTS),
                             help="DREEM representations the search may weight (default: "
                                  f"{','.join(api.MULTILEVEL_COMPONENTS)}; reval needs a trained ReVal Tree-LSTM)")
        else:
            sub.add_argument("--resamples", type=whole(1, 100_000), default=1000,
                             help="bootstrap resamples (default: 1000)")
        add_output_options(sub)
        sub.set_defaults(handler=handler)

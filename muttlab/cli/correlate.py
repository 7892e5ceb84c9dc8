"""``muttlab correlate``: how metric scores relate to human judgments (muttlab.human).

    muttlab correlate flickr8k [--metrics ...] [--datasets expert,crowdflower]   # Kendall τ with CIs
    muttlab correlate sick --corruption neg_subj [--histograms-out DIR]        # MUTT §5 pairwise table
    muttlab correlate dbleu [--input FILE --ratings FILE]                      # Galley et al. §5-6 units
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from muttlab import api
from muttlab.cli import summary
from muttlab.cli.common import add_output_options, emit, progress_bar, render, settings_from_args, split_names
from muttlab.errors import MuttlabError
from muttlab.cli.common import escaped, real, whole
from muttlab.checks import MAX_SEED
from muttlab.escaping import csv_frame, latex_table

# What each registered study offers on the command line (muttlab.api.study_choices).
dbleu, flickr, sick = (api.study_choices(name) for name in ("dbleu", "flickr8k", "sick"))


def _note(lines) -> None:
    for line in lines:
        print(f"note: {line}", file=sys.stderr)


def _text(frame: pd.DataFrame, fmt: str, digits: int = 3) -> str:
    """table / markdown / latex with ``digits`` decimals (the shared render() shows one, right for τ × 100
    but not for correlations in [-1, 1])."""
    if fmt == "latex":
        return latex_table(frame, float_format=f"%.{digits}f", na_rep="")
    frame = escaped(frame, fmt)
    if fmt == "markdown":
        blanks = frame.astype(object).where(frame.notna(), None)  # tabulate prints None, not NaN, as missing
        return blanks.to_markdown(index=False, floatfmt=f".{digits}f", missingval="") + "\n"
    return frame.to_string(index=False, na_rep="", float_format=lambda v: f"{v:.{digits}f}") + "\n"


def _clean(value):
    if isinstance(value, float) and np.isnan(value):
        return None
    if isinstance(value, np.generic):
        return _clean(value.item())
    return value


def _records(frame: pd.DataFrame) -> list[dict]:
    return [{k: _clean(v) for k, v in rec.items()} for rec in frame.to_dict(orient="records")]


# --------------------------------------------------------------------------- flickr8k

def _flickr_options(args: argparse.Namespace, settings) -> dict:
    datasets = split_names(args.datasets)
    bad = [d for d in datasets if d not in flickr.DATASETS]
    if bad or not datasets:
        raise MuttlabError(f"--datasets {args.datasets!r}: choose from {', '.join(flickr.DATASETS)}")
    return {"metrics": args.metrics, "datasets": datasets, "n_boot": args.n_boot, "seed": args.seed}


def _show_flickr(study, args: argparse.Namespace) -> None:
    if args.format == "json":
        emit(render(study.table, "json", records=study.records()), args.output)
    else:
        frame = study.table if args.format == "csv" else study.table.drop(columns=["signature"])
        emit(render(frame, args.format), args.output)


# --------------------------------------------------------------------------- sick

def _sick_options(args: argparse.Namespace, settings) -> dict:
    return {"corruption": args.corruption, "metrics": args.metrics, "refs": args.refs, "method": args.method,
            "reference": args.reference, "reading": args.reading}


def _show_sick(study, args: argparse.Namespace) -> None:
    if args.histograms_out is not None:
        out = Path(args.histograms_out)
        try:
            out.mkdir(parents=True, exist_ok=True)
            (out / f"{study.corruption}_histograms.csv").write_text(csv_frame(study.histograms(args.bins)),
                                                                    encoding="utf-8")
            (out / f"{study.corruption}_pairs.csv").write_text(csv_frame(study.pairs), encoding="utf-8")
        except OSError as exc:
            raise MuttlabError(f"cannot write to {out}: {exc.strerror}") from None
        print(f"wrote {out / f'{study.corruption}_histograms.csv'} and {out / f'{study.corruption}_pairs.csv'}",
              file=sys.stderr)
    matrix = study.correlation_table()
    if args.format == "json":
        payload = {"corruption": study.corruption, "reading": study.reading, "method": study.method,
                   "reference": study.reference,
                   "refs": study.refs, "pairs": len(study.pairs), "unmatched": study.unmatched,
                   "skipped": study.skipped, "signatures": study.signatures,
                   "correlations": _records(matrix.rename(columns={"": "variable"})),
                   "summary": _records(study.summary)}
        emit(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", args.output)
    elif args.format == "csv":
        emit(render(matrix.rename(columns={"": "variable"}), "csv"), args.output)
    else:
        text = (f"{study.corruption} ({study.description}): {study.method} correlation, {len(study.pairs)} pairs, "
                f"{study.reading} reading\n"
                + _text(matrix, args.format) + "\n"
                + _text(study.summary, args.format))
        emit(text, args.output)


# --------------------------------------------------------------------------- dbleu

def _dbleu_options(args: argparse.Namespace, settings) -> dict:
    if args.input is None and args.ratings is not None:
        raise MuttlabError("--ratings needs --input: it gives the human ratings of a user's ΔBLEU file")
    return {"data": None if args.input is None else api.dbleu_user_set(args.input, args.ratings),
            "unit_size": args.unit_size, "order": args.order, "threshold": args.threshold,
            "assignments": args.assignments, "seed": settings.seed if args.seed is None else args.seed,
            "sweeps": not args.no_sweeps, "sweep_assignments": args.sweep_assignments}


def _show_dbleu(study, args: argparse.Namespace) -> None:
    if args.format == "json":
        payload = {"dataset": study.dataset, "segments": study.segments, "seed": study.seed,
                   "main": _records(study.main), "comparison": _records(study.comparison),
                   "sweeps": _records(study.sweeps)}
        emit(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", args.output)
    elif args.format == "csv":
        both = pd.concat([study.main.assign(sweep="main"), study.sweeps], ignore_index=True)
        emit(render(both[["sweep"] + dbleu.RESULT_COLUMNS], "csv"), args.output)
    else:
        parts = [f"{study.dataset}: {study.segments} segments; units of {args.unit_size}, "
                 f"{args.assignments} random assignments (mean and 2.5-97.5 percentiles)\n",
                 _text(study.main, args.format),
                 "\nΔBLEU minus each baseline on the same assignments (share_better: fraction of assignments "
                 "where ΔBLEU correlates better)\n",
                 _text(study.comparison, args.format)]
        for name, group in study.sweeps.groupby("sweep", sort=False):
            parts.append(f"\nsweep over {name} ({args.sweep_assignments} assignments each)\n")
            parts.append(_text(group.drop(columns=["sweep"]), args.format))
        emit("".join(parts), args.output)


# --------------------------------------------------------------------------- any other study

def _show_frames(study, args: argparse.Namespace) -> None:
    """A study without options or a view of its own here: the DataFrames of its result, in field order."""
    frames = {f.name: getattr(study, f.name) for f in dataclasses.fields(study)
              if isinstance(getattr(study, f.name), pd.DataFrame)}
    if args.format == "json":
        emit(json.dumps({name: _records(frame) for name, frame in frames.items()}, indent=2, ensure_ascii=False)
             + "\n", args.output)
    elif args.format == "csv":  # one document: the frames' rows one after another, each named in `table`
        rows = pd.concat([frame.reset_index(drop=True).astype(object).assign(table=name)
                          for name, frame in frames.items()], ignore_index=True)
        emit(render(rows[["table", *[c for c in rows.columns if c != "table"]]], "csv"), args.output)
    else:
        emit("\n".join(f"{name}\n{_text(frame, args.format)}" for name, frame in frames.items()), args.output)


def _notes_of(study) -> list[str]:
    notes = getattr(study, "notes", [])
    return list(notes() if callable(notes) else notes)


def handle(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    _, options, show = VIEWS.get(args.study, (None, lambda *_: {}, _show_frames))
    chosen = options(args, settings)
    bar, progress = progress_bar()
    try:
        study = api.correlate(settings, args.study, progress=progress, **chosen)
    finally:
        bar.close()
    _note(_notes_of(study))
    show(study, args)
    return 0


# --------------------------------------------------------------------------- parser

def register(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "correlate", parents=[common], help=summary("correlate"),
        description="How metric scores relate to human judgments: the registered studies below, each with "
                    "its own options (muttlab correlate STUDY --help). Needs the data dir.")
    studies = parser.add_subparsers(dest="study", metavar="STUDY", required=True)
    for study in api.studies():
        if study.run is None:
            continue
        p = studies.add_parser(study.name, parents=[common], help=study.title, description=study.title)
        add_arguments = VIEWS.get(study.name, (None,))[0]
        if add_arguments is not None:
            add_arguments(p)
        add_output_options(p)
        p.set_defaults(handler=handle)


def _flickr_arguments(p: argparse.ArgumentParser) -> None:
    p.description = ("Kendall τ-c (Expert) and τ-b (CrowdFlower) × 100 of each metric with the human ratings, "
                     "with a bootstrap percentile CI; error rates are negated so larger τ always means better "
                     "agreement.")
    p.add_argument("--metrics", default="all", help="comma-separated metric names or 'all' (default: all available)")
    p.add_argument("--datasets", default=",".join(flickr.DATASETS),
                   help="expert, crowdflower or both (default: expert,crowdflower)")
    p.add_argument("--n-boot", type=whole(0, 100_000), default=api.DEFAULT_N_BOOT,
                   help=f"bootstrap resamples for the CI; 0 for none (default: {api.DEFAULT_N_BOOT})")
    p.add_argument("--seed", type=whole(0, MAX_SEED), default=None, help="bootstrap seed (default: the settings' seed)")


def _sick_arguments(p: argparse.ArgumentParser) -> None:
    p.description = ("Gold SICK relatedness against each metric's score of the corrupted sentence (references: "
                     "the original's experiment pool) for one corruption type: the pairwise correlation table, "
                     "summary statistics and histogram data.")
    p.add_argument("--corruption", default="neg_subj", choices=sick.SICK_CORRUPTIONS,
                   help="SICK-derived corruption type (default: neg_subj)")
    p.add_argument("--metrics", default=",".join(sick.STUDY_METRICS),
                   help=f"comma-separated metric names or 'all' (default: the study's {', '.join(sick.STUDY_METRICS)})")
    p.add_argument("--refs", type=whole(1, 1000), default=None,
                   help="use the first k references of the pool (default: all 20)")
    p.add_argument("--method", choices=api.CORRELATION_METHODS, default="pearson", help="correlation (default: pearson)")
    p.add_argument("--reference", choices=sick.REFERENCE_SOURCES, default="pool",
                   help="score against the original's reference pool (default) or against SICK sentence A alone")
    p.add_argument("--reading", choices=sick.READINGS, default="trials",
                   help="trials: the MUTT trials, scores as reported (default); paper: every SICK pair of the type, "
                        "sentence B against sentence A, error rates negated (the paper's Table 3; --reference and "
                        "--refs do not apply)")
    p.add_argument("--histograms-out", type=Path, metavar="DIR",
                   help="write <corruption>_histograms.csv and <corruption>_pairs.csv to DIR")
    p.add_argument("--bins", type=whole(1, 1000), default=20, help="histogram bins (default: 20)")


def _dbleu_arguments(p: argparse.ArgumentParser) -> None:
    p.description = ("Spearman ρ and Kendall τ between unit human means and unit corpus scores (BLEU, "
                     "sentence-BLEU averaged, ΔBLEU), averaged over random assignments of sentences to units, "
                     "with sweeps over unit size, n-gram order and reference weight threshold. Default data: the "
                     "weighted multi-reference set built from Flickr8K-Expert (docs/studies.md).")
    p.add_argument("--input", type=Path, metavar="FILE",
                   help="a ΔBLEU file (JSONL with a 'human' rating per record, or TSV/JSONL with --ratings)")
    p.add_argument("--ratings", type=Path, metavar="FILE", help="one human rating per segment of --input")
    p.add_argument("--unit-size", type=whole(0, 1_000_000), default=dbleu.DEFAULT_UNIT,
                   help="sentences per unit M (default: 100)")
    p.add_argument("--order", type=whole(1, 10), default=4, help="n-gram order (default: 4)")
    p.add_argument("--threshold", type=real(-1.0, 1.0), default=-1.0,
                   help="ΔBLEU uses extra references with weight >= this (default: -1, all)")
    p.add_argument("--assignments", type=whole(1, 100_000), default=dbleu.DEFAULT_ASSIGNMENTS,
                   help="random assignments for the main comparison (default: 1000)")
    p.add_argument("--sweep-assignments", type=whole(1, 100_000), default=dbleu.DEFAULT_SWEEP_ASSIGNMENTS,
                   help="random assignments per sweep point (default: 200)")
    p.add_argument("--no-sweeps", action="store_true", help="only the main comparison")
    p.add_argument("--seed", type=whole(0, MAX_SEED), default=None,
                   help="assignment seed (default: the settings' seed)")


# The command line's view of a study: its options (parser arguments -> the study function's keyword arguments)
# and how its result is printed. A registered study without one runs with its defaults (_show_frames).
VIEWS = {
    "flickr8k": (_flickr_arguments, _flickr_options, _show_flickr),
    "sick": (_sick_arguments, _sick_options, _show_sick),
    "dbleu": (_dbleu_arguments, _dbleu_options, _show_dbleu),
}

"""``muttlab dbleu FILE``: corpus ΔBLEU (Galley et al. 2015) of hypotheses against weighted references."""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from muttlab.cli import summary
from muttlab.cli.common import add_output_options, emit, render
from muttlab.errors import MuttlabError
from muttlab.api import read_weighted_segments
from muttlab.errors import MetricError
from muttlab.api import (MAX_N, SMOOTH_DEFAULTS, SMOOTHING, corpus_bleu, segment_stats,
                                        sentence_bleu, smoothing_setting)

# sacreBLEU's defaults: exp smoothing for a corpus score; sentence scores keep BLEU+1 (add-k, k = 1).
CORPUS_SMOOTHING = "exp"
SEGMENT_SMOOTHING = "add-k"


def register(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "dbleu", parents=[common], help=summary("dbleu"),
        description="Corpus ΔBLEU (Galley et al. 2015) and plain BLEU of hypotheses against references with "
                    "weights in [-1, 1]. FILE is JSONL ({\"hypothesis\": ..., \"references\": [[text, weight], "
                    "...]}) or TSV (hypothesis, then reference/weight columns); text is split on whitespace.")
    parser.add_argument("file", type=Path, metavar="FILE", help="a .jsonl file, or a TSV file")
    parser.add_argument("--max-n", type=int, default=MAX_N, help=f"highest n-gram order (default: {MAX_N})")
    parser.add_argument("--segments", action="store_true",
                        help="print the sentence-level ΔBLEU of every segment instead")
    parser.add_argument("--smooth", choices=SMOOTHING, default=None, metavar="METHOD",
                        help=f"smoothing, as sacreBLEU: {', '.join(SMOOTHING)} (default: {CORPUS_SMOOTHING} for the "
                             f"corpus score, {SEGMENT_SMOOTHING} with k=1, i.e. BLEU+1, with --segments)")
    parser.add_argument("--smooth-value", type=float, default=None, metavar="V",
                        help="the value of floor or add-k (default: "
                             + ", ".join(f"{m} {v:g}" for m, v in SMOOTH_DEFAULTS.items() if v is not None) + ")")
    parser.add_argument("--effective-order", action="store_true",
                        help="average only over the n-gram orders the hypothesis has (sacreBLEU's effective order)")
    add_output_options(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    method = args.smooth or (SEGMENT_SMOOTHING if args.segments else CORPUS_SMOOTHING)
    try:
        method, value = smoothing_setting(method, args.smooth_value)
    except MetricError as exc:
        raise MuttlabError(f"{exc} (--smooth / --smooth-value)") from None
    setting = dict(smooth_value=value, effective_order=args.effective_order)
    data = read_weighted_segments(args.file)
    stats = segment_stats(data.hypotheses, data.references, args.max_n)
    signature = (f"n:{args.max_n}|tok:none|smooth:{method}" + (f"|k:{value:g}" if value is not None else "")
                 + f"|eff:{'yes' if args.effective_order else 'no'}")
    if args.segments:
        frame = pd.DataFrame({
            "line": data.lines,
            "delta_bleu": [100 * sentence_bleu(row, args.max_n, method, **setting) for row in stats],
            "hypothesis": data.hypotheses,
        })
    else:
        # Plain BLEU on the same file: the positively weighted references only, each with weight 1.
        plain = segment_stats(data.hypotheses, [[(r, 1.0) for r, w in refs if w > 0] for refs in data.references],
                              args.max_n)
        frame = pd.DataFrame([{
            "segments": len(data.hypotheses),
            "references": int(sum(len(r) for r in data.references)),
            "negative_refs": int(sum(w < 0 for refs in data.references for _, w in refs)),
            "delta_bleu": 100 * corpus_bleu(stats.sum(axis=0), args.max_n, method, **setting),
            "bleu_positive_refs": 100 * corpus_bleu(plain.sum(axis=0), args.max_n, method, **setting),
            "hyp_len": int(stats[:, 2 * args.max_n].sum()),
            "ref_len": int(np.round(stats[:, 2 * args.max_n + 1].sum())),
        }])
    frame["signature"] = signature
    emit(render(frame, args.format), args.output)
    return 0

"""``muttlab dbleu FILE``: corpus ΔBLEU (Galley et al. 2015) of hypotheses against weighted references."""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from muttlab.cli import summary
from muttlab.cli.common import add_output_options, emit, render
from muttlab.human.dbleu_io import read_weighted_segments
from muttlab.metrics.delta_bleu import MAX_N, corpus_bleu, segment_stats, sentence_bleu


def register(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "dbleu", parents=[common], help=summary("dbleu"),
        description="Corpus ΔBLEU (Galley et al. 2015) and plain BLEU of hypotheses against references with "
                    "weights in [-1, 1]. FILE is JSONL ({\"hypothesis\": ..., \"references\": [[text, weight], "
                    "...]}) or TSV (hypothesis, then reference/weight columns); text is split on whitespace.")
    parser.add_argument("file", type=Path, metavar="FILE", help="a .jsonl file, or a TSV file")
    parser.add_argument("--max-n", type=int, default=MAX_N, help=f"highest n-gram order (default: {MAX_N})")
    parser.add_argument("--segments", action="store_true",
                        help="print the sentence-level ΔBLEU (BLEU+1 smoothing) of every segment instead")
    add_output_options(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    data = read_weighted_segments(args.file)
    stats = segment_stats(data.hypotheses, data.references, args.max_n)
    if args.segments:
        frame = pd.DataFrame({
            "line": data.lines,
            "delta_bleu": [100 * sentence_bleu(row, args.max_n) for row in stats],
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
            "delta_bleu": 100 * corpus_bleu(stats.sum(axis=0), args.max_n),
            "bleu_positive_refs": 100 * corpus_bleu(plain.sum(axis=0), args.max_n),
            "hyp_len": int(stats[:, 2 * args.max_n].sum()),
            "ref_len": int(np.round(stats[:, 2 * args.max_n + 1].sum())),
        }])
    emit(render(frame, args.format), args.output)
    return 0

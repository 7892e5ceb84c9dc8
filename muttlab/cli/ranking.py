"""``muttlab ranking convert``: relative-ranking judgments -> similarity training data (ReVal §5)."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

from muttlab.cli import summary
from muttlab.cli.common import add_output_options, emit, real, render, whole
from muttlab.errors import MuttlabError
from muttlab import api


def _read_judgments(args: argparse.Namespace) -> pd.DataFrame:
    """The judgments table from a long-format file, or from a WMT CSV with its texts (saying what was dropped)."""
    if not api.is_wmt_rankings(args.file):
        if args.references or args.systems or args.pair:
            raise MuttlabError(f"{args.file} is not a WMT ranking CSV (no system1Id/system1rank columns); "
                               "--references, --systems and --pair are for WMT files only")
        return api.read_rankings(args.file)
    if not args.references or not args.systems:
        raise MuttlabError(f"{args.file} is a WMT ranking CSV: give the texts too, with --references REF_FILE "
                           "and --systems OUTPUTS_FOLDER")
    wmt = api.read_wmt_rankings(args.file, args.references, args.systems, pair=args.pair)
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
    result = api.rankings_to_pairs(frame, min_judgments=args.min_judgments, tau=args.tau)
    print(f"{result.ranked} translations ranked >= {args.min_judgments} times; variance threshold "
          f"{result.threshold:g} keeps {len(result.pairs)} at Kendall tau {result.tau:.3f}", file=sys.stderr)
    if args.pairs:
        api.write_ranking_pairs(result, args.pairs)
        print(f"wrote {args.pairs}", file=sys.stderr)
    emit(render(result.curve, args.format, decimals=4), args.output)
    return 0


def register(subparsers, common: argparse.ArgumentParser) -> None:
    rk = subparsers.add_parser("ranking", parents=[common], help=summary("ranking"),
                               description="Convert WMT-style relative-ranking judgments into reference-candidate "
                                           "similarity scores (ReVal §5, Algorithm 1).")
    rk_actions = rk.add_subparsers(dest="action", metavar="ACTION", required=True)
    conv = rk_actions.add_parser("convert", parents=[common], help="convert a ranking CSV/TSV",
                                 description="Input columns: " + ", ".join(api.RANKING_COLUMNS) + " (CSV; TSV for "
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
    conv.add_argument("--min-judgments", type=whole(1, 100_000), default=api.RANKING_MIN_JUDGMENTS,
                      help=f"keep translations ranked at least this often (default: {api.RANKING_MIN_JUDGMENTS})")
    conv.add_argument("--tau", type=real(-1.0, 1.0), default=api.RANKING_TAU,
                      help=f"Kendall tau the kept scores must keep (default: {api.RANKING_TAU})")
    conv.add_argument("--pairs", type=Path, help="write the kept (reference, candidate, score) pairs here as TSV")
    add_output_options(conv)
    conv.set_defaults(handler=_convert)

"""``muttlab vectors train``: word2vec on the loaded corpus, for W2V-AVG."""
from __future__ import annotations

import argparse
import sys

import pandas as pd

from muttlab.cli import summary
from muttlab.cli.common import add_output_options, emit, render, settings_from_args
from muttlab.cli.common import bound, whole
from muttlab.api import (DEFAULT_DIM, DEFAULT_EPOCHS, DEFAULT_MIN_COUNT, DEFAULT_WINDOW,
                            train_corpus_vectors)


def register(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser("vectors", parents=[common], help=summary("vectors"),
                                   description="Word vectors for W2V-AVG.")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    train = actions.add_parser(
        "train", parents=[common], help="train word2vec on SICK + Flickr8k and cache it",
        description="Train word2vec (gensim, skip-gram, fixed seed) on the sentences of SICK and Flickr8k "
                    "and save it in the cache's model folder; W2V-AVG-corpus uses it once a maintainer "
                    "installs its id (`muttlab models install ID`).")
    train.add_argument("--dim", type=int, default=DEFAULT_DIM, help=f"vector size (default: {DEFAULT_DIM})")
    train.add_argument("--window", type=int, default=DEFAULT_WINDOW, help=f"context window (default: {DEFAULT_WINDOW})")
    train.add_argument("--min-count", type=int, default=DEFAULT_MIN_COUNT,
                       help=f"ignore rarer words (default: {DEFAULT_MIN_COUNT})")
    train.add_argument("--epochs", type=int, default=DEFAULT_EPOCHS, help=f"passes (default: {DEFAULT_EPOCHS})")
    add_output_options(train)
    train.set_defaults(handler=handle_train)
    bound(train, dim=whole(1, 10_000), window=whole(1, 1000), min_count=whole(1, 10 ** 9), epochs=whole(1, 10_000))
    parser.set_defaults(handler=lambda args: parser.print_help() or 2)


def handle_train(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    result = train_corpus_vectors(settings, dim=args.dim, window=args.window, min_count=args.min_count,
                                  epochs=args.epochs)
    frame = pd.DataFrame([{"path": str(result.path), "id": result.id, "sentences": result.sentences, "tokens": result.tokens,
                           "vocabulary": result.vocabulary, "dim": result.dim, "seconds": result.seconds}])
    emit(render(frame, args.format), args.output)
    print(f"W2V-AVG-corpus uses these vectors once installed: `muttlab models install {result.id}`",
          file=sys.stderr)
    return 0

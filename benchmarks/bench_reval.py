"""Tree-LSTM speed: level-by-level batching against one node at a time, forward + backward.

Runs the same mini-batches of SICK TRAIN pairs (25 pairs = 50 trees each) through the child-sum
Tree-LSTM both ways and prints seconds per batch and the ratio, for each torch thread count asked for.

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_reval.py [--batches 20] [--threads 1,2]
"""
from __future__ import annotations

import argparse
import time

import torch

from muttlab.learned.reval import load_sick_data
from muttlab.settings import load_settings
from muttlab.metrics.reval.model import ModelConfig, ReValModel, WordVectors
from muttlab.learned.reval_training import Inputs
from muttlab.resources.glove import DIM, load_glove


def node_at_a_time(cell, tree, x):
    """Tai et al. (2015) eqs. 2-8, recursively, one cell call per node."""
    kids = tree.children()

    def node(j):
        states = [node(k) for k in kids[j]]
        h_sum = sum((h for h, _ in states), torch.zeros(1, cell.memory))
        iou = cell.w_iou(x[j:j + 1]) + cell.u_iou(h_sum)
        i, o, u = iou.chunk(3, dim=1)
        c = torch.sigmoid(i) * torch.tanh(u)
        for h_k, c_k in states:
            c = c + torch.sigmoid(cell.w_f(x[j:j + 1]) + cell.u_f(h_k)) * c_k
        return torch.sigmoid(o) * torch.tanh(c), c

    return node(tree.root)[0]


def timed(fn, batches) -> float:
    start = time.perf_counter()
    for batch in batches:
        fn(*batch).sum().backward()
    return (time.perf_counter() - start) / len(batches)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--threads", default="1,2", help="comma-separated torch thread counts to try")
    args = parser.parse_args()
    data = load_sick_data(load_settings())
    inputs = Inputs(data.trees, WordVectors(load_glove(), DIM))
    pairs = data.splits["train"][:25 * args.batches]
    batches = [inputs([p.sentence_a for p in pairs[k:k + 25]] + [p.sentence_b for p in pairs[k:k + 25]])
               for k in range(0, len(pairs), 25)]
    torch.manual_seed(0)
    model = ReValModel(ModelConfig(model="treelstm"))
    for threads in [int(t) for t in args.threads.split(",")]:
        torch.set_num_threads(threads)
        level = timed(model.encode, batches)
        node = timed(lambda trees, xs: torch.cat([node_at_a_time(model.encoder, t, x)
                                                 for t, x in zip(trees, xs)]), batches)
        print(f"threads={threads}: level-by-level {level * 1000:.1f} ms/batch, node-at-a-time "
              f"{node * 1000:.1f} ms/batch, speed-up x{node / level:.1f}", flush=True)


if __name__ == "__main__":
    main()

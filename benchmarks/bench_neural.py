"""Benchmark: BERTScore-F1 and EmbeddingCosine against the libraries they reproduce, side by side in one process.

Sizes: the first 300 and the first 1,000 MUTT trials (suite order) at 5 references, and the full MUTT grid (every
trial at 5, 10 and 20 references). Each side of a trial is scored as the runner scores it: one call for the
originals and one for the corruptions of each corruption set and reference count, the same calls for ours and
for the library. Each timing is cold: a new metric (model loaded, nothing memoised) or a new library model
(``bert_score.BERTScorer``, ``sentence_transformers.SentenceTransformer``), timed from its construction to the
last score; the imports are done before, and so is one untimed library load per metric, because transformers
imports its model classes and builds its checkpoint-name mappings once per process (about 1 s), which whichever
side ran first would otherwise pay for both. The 300- and 1,000-trial timings run ``--rounds`` times (3), the
library first every other round, and the ratio judged is the median of the rounds' ratios: on a shared machine one
round's ratio moves by a tenth or more. The library does what its user would do: ``BERTScorer.score(cands,
refs)`` (multi-reference, best F1), and ``SentenceTransformer.encode`` of the candidates and of every reference
occurrence, cosine of the normalised embeddings, best over the references. Both run on one torch thread (ours
encodes on one thread by design, see ``ENCODING_THREADS``), so that the ratio compares the work done, not how
two OpenMP threads fare on a busy machine; CPU seconds are printed beside the wall time.

Agreement over every pair of the grid: BERTScore-F1 against bert-score computed without padding (sentences
embedded by ``bert_score.utils`` in batches of one token count, each candidate-reference pair matched alone),
EmbeddingCosine against sentence-transformers; and the number of pairs where bert-score's batched call differs from its unpadded self
(its padding artefact: it multiplies the similarities by the padding mask, so a padded slot scores 0 and beats
a token whose best cosine is negative).

    .venv/bin/python benchmarks/bench_neural.py [--data-dir ../shared/data] [--only BERTScore-F1|EmbeddingCosine]
        [--sizes 300,1000,grid] [--no-agreement]

Without ``grid`` in ``--sizes`` the agreement is still checked over the whole grid (unless ``--no-agreement``), with
our grid run timed, against the library's scores computed once (one bert-score call over all pairs; one
sentence-transformers encoding of each distinct sentence).

Exits 1 unless ours is at least 2x faster than the library at every size and our full grid takes under 60 s, or
when a difference exceeds 1e-6. Nothing here is a test: the times depend on the machine and on its load (printed).
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np  # noqa: E402

from muttlab.sources import MUTT_REF_COUNTS, load_mutt_experiments  # noqa: E402
from muttlab.metrics.neural import BertScore, EmbeddingCosine, encodes_empty_text  # noqa: E402
from muttlab.settings import Settings  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TOLERANCE = 1e-6
MIN_RATIO = 2.0
GRID_LIMIT_S = 60.0


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def batches(trials, counts):
    """The runner's calls: per corruption set and reference count, the originals, then the corruptions."""
    by_set = defaultdict(list)
    for trial in trials:
        by_set[trial.corruption].append(trial)
    for group in by_set.values():
        for k in counts:
            refs = [list(t.refs(k)) for t in group]
            yield [t.original for t in group], refs
            yield [t.corrupted for t in group], refs


class Library:
    """The library a metric reproduces, used as its documentation shows."""

    def __init__(self, metric):
        self.metric = metric
        folder = str(metric.folder())
        if isinstance(metric, BertScore):
            from bert_score import BERTScorer
            self.model = BERTScorer(model_type=folder, num_layers=metric.layers(), idf=False,
                                    rescale_with_baseline=False, device="cpu")
            encodes_empty_text(self.model._tokenizer)  # as a user of bert-score with transformers 5 must
        else:
            from sentence_transformers import SentenceTransformer
            self.model = SentenceTransformer(folder, device="cpu")

    def score(self, candidates, references) -> np.ndarray:
        if isinstance(self.metric, BertScore):
            return self.model.score(candidates, references, verbose=False)[2].double().numpy()
        flat = [r for refs in references for r in refs]
        cands = self.model.encode(candidates, normalize_embeddings=True, convert_to_numpy=True)
        refs = self.model.encode(flat, normalize_embeddings=True, convert_to_numpy=True)
        out, start = [], 0
        for cand, group in zip(cands, references):
            out.append(float((refs[start:start + len(group)] @ cand).max()))
            start += len(group)
        return np.array(out)


def timed(make, calls):
    wall, cpu = time.perf_counter(), time.process_time()
    scorer = make()
    scores = [scorer.score(c, r) for c, r in calls]
    return time.perf_counter() - wall, time.process_time() - cpu, np.concatenate(scores), scorer


def bert_score_unpadded(scorer, candidates, references) -> np.ndarray:
    """bert-score's embedding and greedy matching with nothing padded: sentences embedded in batches of one
    token count, each (candidate, reference) matched alone; best F1 over the references."""
    import torch
    from bert_score.utils import get_bert_embedding, greedy_cos_idf, sent_encode

    tokenizer = scorer._tokenizer
    idf = defaultdict(lambda: 1.0, {tokenizer.sep_token_id: 0.0, tokenizer.cls_token_id: 0.0})
    by_length = defaultdict(list)
    for sentence in dict.fromkeys(candidates + [r for refs in references for r in refs]):
        by_length[len(sent_encode(tokenizer, sentence))].append(sentence)
    embedded, f1 = {}, {}
    with torch.no_grad():
        for group in by_length.values():
            for start in range(0, len(group), 64):
                chunk = group[start:start + 64]
                emb, mask, weights = get_bert_embedding(chunk, scorer._model, tokenizer, idf, device="cpu")
                embedded.update((s, (emb[i:i + 1], mask[i:i + 1], weights[i:i + 1])) for i, s in enumerate(chunk))
        for candidate, refs in zip(candidates, references):
            for ref in refs:
                if (candidate, ref) not in f1:
                    # greedy_cos_idf normalises its arguments in place
                    args = [x.clone() for x in embedded[ref] + embedded[candidate]]
                    f1[candidate, ref] = greedy_cos_idf(*args)[2].item()
    return np.array([max(f1[c, r] for r in refs) for c, refs in zip(candidates, references)])


def agreement(kind, trials, ours=None, theirs=None) -> tuple[float, float | None]:
    """Max |ours - library| over every pair of the MUTT grid, and our grid's seconds when timed here; prints it and, for BERTScore-F1, how many pairs
    bert-score's batched call gets wrong through its padding. Without the timed runs' scores (``ours``,
    ``theirs``: the grid's calls in order), computes them: ours with a new metric, the library's in one call
    over all pairs (bert-score) or one encoding of each distinct sentence (sentence-transformers)."""
    calls = list(batches(trials, MUTT_REF_COUNTS))
    candidates = [c for cands, _ in calls for c in cands]
    references = [r for _, refs in calls for r in refs]
    ours_s = None
    if ours is None:
        ours_s, ours_cpu, ours, metric = timed(kind, calls)
        print(f"  {kind.name}: ours on the full grid, cold: {ours_s:.1f} s ({ours_cpu:.1f} s CPU); "
              f"load {os.getloadavg()[0]:.1f}")
    else:
        metric = kind()
    if kind is BertScore:
        scorer = metric.loaded()  # a bert_score.BERTScorer
        if theirs is None:
            theirs = scorer.score(candidates, references, verbose=False)[2].double().numpy()
        want = bert_score_unpadded(scorer, candidates, references)
        artefact = np.abs(theirs - want) > TOLERANCE
        print(f"  bert-score's batched call differs from its unpadded self by > {TOLERANCE:g} on {int(artefact.sum())} "
              f"of {len(candidates)} pairs ({len({c for c, a in zip(candidates, artefact) if a})} distinct candidates; "
              f"largest {np.abs(theirs - want).max():.2e})")
    else:
        if theirs is None:
            model = metric.loaded()  # a sentence_transformers.SentenceTransformer
            distinct = list(dict.fromkeys(candidates + [r for refs in references for r in refs]))
            vectors = dict(zip(distinct, model.encode(distinct, normalize_embeddings=True, convert_to_numpy=True)))
            theirs = np.array([max(float(vectors[c] @ vectors[r]) for r in refs) for c, refs in zip(candidates, references)])
        want = theirs
    metric.close()
    diff = float(np.abs(ours - want).max())
    print(f"  {kind.name}: max |ours - library| over all {len(candidates)} MUTT pairs (5/10/20 refs): {diff:.2e}")
    return diff, ours_s


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("MUTTLAB_DATA_DIR")
                                                              or REPO.parent / "shared" / "data"))
    parser.add_argument("--only", choices=[BertScore.name, EmbeddingCosine.name])
    parser.add_argument("--sizes", default="300,1000,grid", help="comma-separated: 300, 1000, grid (default: all; "
                                                                 "empty: the agreement alone)")
    parser.add_argument("--no-agreement", action="store_true", help="time only; skip the agreement over the grid")
    parser.add_argument("--rounds", type=int, default=3,
                        help="rounds of the 300- and 1,000-trial timings, the two sides' order alternating; the "
                             "ratio judged is their median (default: 3; the full grid runs once)")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")

    import bert_score  # noqa: F401  (imports before any timing: both sides use them)
    import sentence_transformers  # noqa: F401
    import torch

    torch.set_num_threads(1)
    trials = load_mutt_experiments(Settings(data_dir=args.data_dir)).trials
    sizes = {"300": ("300 trials, 5 refs", trials[:300], (5,)), "1000": ("1,000 trials, 5 refs", trials[:1000], (5,)),
             "grid": (f"full grid, {len(trials)} trials, 5/10/20 refs", trials, MUTT_REF_COUNTS)}
    sizes = [sizes[size] for size in args.sizes.split(",") if size]
    print(f"CPU: {cpu_name()}; {os.cpu_count()} cores; torch {torch.__version__}, 1 thread; "
          f"load average {os.getloadavg()[0]:.1f}")
    failures, grid = [], {}
    kinds = [k for k in (BertScore, EmbeddingCosine) if args.only in (None, k.name)]
    for kind in kinds:
        # Once per process, untimed: transformers imports its model classes and builds its checkpoint-name
        # mappings on the first load (about 1 s), then keeps them; whichever side ran first would pay for both.
        Library(kind())
        for label, chosen, counts in sizes:
            calls = list(batches(chosen, counts))
            pairs = sum(len(c) for c, _ in calls)
            ratios = []
            for round_ in range(1 if counts == MUTT_REF_COUNTS else args.rounds):
                # Every other round the library goes first, so that a drift of the machine's speed during a
                # round does not always favour the same side.
                sides = [("ours", kind), ("library", lambda: Library(kind()))]
                timings = {name: timed(make, calls) for name, make in sides[::-1 if round_ % 2 else 1]}
                ours_s, ours_cpu, ours, metric = timings["ours"]
                lib_s, lib_cpu, theirs, _ = timings["library"]
                metric.close()
                ratios.append(lib_s / ours_s)
                print(f"{kind.name:15} {label:38} {pairs:6} pairs: ours {ours_s:6.1f} s ({ours_cpu:6.1f} s CPU), "
                      f"library {lib_s:6.1f} s ({lib_cpu:6.1f} s CPU), {ratios[-1]:4.1f}x; "
                      f"load {os.getloadavg()[0]:.1f}")
                sys.stdout.flush()
            ratio = statistics.median(ratios)
            if len(ratios) > 1:
                print(f"{kind.name:15} {label:38} median of {len(ratios)} rounds: {ratio:4.2f}x")
            if ratio < MIN_RATIO:
                failures.append(f"{kind.name} on {label}: {ratio:.2f}x, not {MIN_RATIO}x")
            if counts == MUTT_REF_COUNTS:
                grid[kind] = ours, theirs
                if ours_s >= GRID_LIMIT_S:
                    failures.append(f"{kind.name} on the full grid: {ours_s:.1f} s, not under {GRID_LIMIT_S:.0f} s")
        if args.no_agreement:
            continue
        diff, grid_s = agreement(kind, trials, *grid.get(kind, (None, None)))
        if grid_s is not None and grid_s >= GRID_LIMIT_S:
            failures.append(f"{kind.name} on the full grid: {grid_s:.1f} s, not under {GRID_LIMIT_S:.0f} s")
        if diff > TOLERANCE:
            failures.append(f"{kind.name}: max difference {diff:.2e} > {TOLERANCE:g}")
    for failure in failures:
        print("FAIL:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

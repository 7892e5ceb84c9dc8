"""``muttlab reval train|eval|score``: the ReVal learned metrics (Gupta et al. 2015) on SICK."""
from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from muttlab.cli import summary
from muttlab.cli.common import add_output_options, emit, parse_int_list, render, settings_from_args
from muttlab.cli.common import bound, real, whole
from muttlab.errors import MuttlabError
from muttlab.checks import MAX_SEED

MODEL_CHOICES = ("lstm", "treelstm", "both")
# One thread: the cells work on small matrices, and on a shared machine a second OpenMP thread spin-waits
# for a core (measured 7x slower per epoch under load, 2 cores); see docs/reval.md.
THREADS = 1


def _models(choice: str) -> list[str]:
    return ["lstm", "treelstm"] if choice == "both" else [choice]


def _torch_threads(threads: int) -> None:
    import torch

    torch.set_num_threads(max(1, threads))


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "reval", parents=[common], help=summary("reval"),
        description="ReVal (Gupta et al. 2015): an LSTM or dependency Tree-LSTM over frozen GloVe 6B-50d "
                    "vectors, trained on SICK relatedness (TRAIN), selected on TRIAL, reported on TEST.")
    actions = parser.add_subparsers(dest="reval_action", metavar="ACTION")

    from muttlab.api import TrainConfig
    defaults = TrainConfig()
    train = actions.add_parser("train", parents=[common], help="train a model on SICK (cached on disk)")
    train.add_argument("--model", choices=MODEL_CHOICES, default="treelstm")
    train.add_argument("--epochs", type=int, default=defaults.epochs,
                       help=f"maximum epochs; the best dev epoch is kept (default {defaults.epochs})")
    train.add_argument("--lr", type=float, default=defaults.learning_rate,
                       help=f"AdaGrad learning rate (default {defaults.learning_rate})")
    train.add_argument("--batch-size", type=int, default=defaults.batch_size)
    train.add_argument("--weight-decay", type=float, default=defaults.weight_decay)
    train.add_argument("--seed", type=int, help="training seed (default: the settings' seed)")
    train.add_argument("--seeds", help="comma-separated seeds: train one model per seed (each cached) and "
                                       "keep the one with the best dev Pearson")
    train.add_argument("--ensemble", action="store_true",
                       help="with --seeds: combine all the seeds' models into one ensemble (mean prediction)")
    train.add_argument("--install", action="store_true",
                       help="install the result, so that the metrics use it (recorded in the model folder's "
                            "install log; same as `muttlab models install ID` afterwards)")
    train.add_argument("--limit", type=int, help="use only the first N pairs of each split (quick runs)")
    train.add_argument("--train-pairs", type=Path,
                       help="train on this TSV of pairs instead of SICK (header: score and sentence_a/sentence_b "
                            "or reference/candidate, as `muttlab ranking convert --pairs` writes; scores 1-5)")
    train.add_argument("--dev-pairs", type=Path,
                       help="with --train-pairs: the pairs that select the epoch (default: a seeded 10%% of "
                            "the training pairs)")
    train.add_argument("--force", action="store_true", help="train again even if a checkpoint is cached")
    train.add_argument("--threads", type=int, default=THREADS, help=f"torch threads (default {THREADS})")
    train.add_argument("--no-progress", action="store_true", help="no progress bar")
    train.set_defaults(handler=_train)
    bound(train, epochs=whole(1, 10_000), lr=real(1e-9, 10.0), batch_size=whole(1, 100_000),
          weight_decay=real(0.0, 10.0), seed=whole(0, MAX_SEED), limit=whole(1, 10 ** 9), threads=whole(1, 256))

    evaluate = actions.add_parser("eval", parents=[common],
                                  help="Pearson / Spearman / MSE on a SICK split, with bootstrap CIs")
    evaluate.add_argument("--model", choices=MODEL_CHOICES, default="both")
    evaluate.add_argument("--split", choices=("train", "dev", "test"), default="test")
    evaluate.add_argument("--checkpoint", type=Path, help="evaluate this checkpoint file instead")
    evaluate.add_argument("--pairs", type=Path,
                          help="evaluate on this TSV of scored pairs instead of a SICK split (the format of "
                               "`train --train-pairs`)")
    evaluate.add_argument("--bootstrap", type=whole(0, 100_000), default=1000,
                          help="bootstrap samples for the CIs (0: none)")
    evaluate.add_argument("--limit", type=whole(1, 10 ** 9),
                          help="use only the first N pairs of the split (quick runs)")
    evaluate.add_argument("--publish", action="store_true",
                          help="also copy the evaluated model with its dev and test scores to data/models")
    evaluate.add_argument("--threads", type=whole(1, 256), default=THREADS)
    add_output_options(evaluate)
    evaluate.set_defaults(handler=_eval)

    score = actions.add_parser("score", parents=[common],
                               help="score candidates against references with a trained model")
    score.add_argument("--model", choices=("lstm", "treelstm"), default="treelstm")
    score.add_argument("--candidate", "-c", action="append", help="a candidate sentence (repeatable)")
    score.add_argument("--reference", "-r", action="append",
                       help="a reference sentence (repeatable; every candidate is scored against all of them)")
    score.add_argument("--pairs", type=Path,
                       help="a UTF-8 file of 'candidate<TAB>reference' lines, each scored on its own")
    score.add_argument("--threads", type=whole(1, 256), default=THREADS)
    add_output_options(score)
    score.set_defaults(handler=_score)
    parser.set_defaults(handler=lambda args: (parser.print_help(), 2)[1])


class _Bar:
    """A tqdm bar over all mini-batches of all epochs, showing the loss and the last dev Pearson."""

    def __init__(self, model: str, enabled: bool):
        self.model = model
        self.enabled = enabled
        self.bar = None
        self.dev = None

    def __call__(self, p) -> None:
        if not self.enabled:
            if p.dev_pearson is not None:
                print(f"{self.model}: epoch {p.epoch}/{p.epochs} loss {p.loss:.4f} dev r {p.dev_pearson:.4f}",
                      file=sys.stderr, flush=True)
            return
        if self.bar is None:
            from tqdm import tqdm
            self.bar = tqdm(total=p.epochs * p.steps, desc=f"ReVal {self.model}", unit="batch", file=sys.stderr)
        if p.dev_pearson is not None:
            self.dev = p.dev_pearson
        else:
            self.bar.update(1)
        self.bar.set_postfix(epoch=p.epoch, loss=f"{p.loss:.4f}",
                             dev_r="-" if self.dev is None else f"{self.dev:.4f}", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _train(args) -> int:
    from muttlab import api

    settings = settings_from_args(args)
    _torch_threads(args.threads)
    if args.epochs < 1 or args.batch_size < 1 or args.lr <= 0:
        raise MuttlabError("--epochs and --batch-size must be at least 1 and --lr positive")
    config = api.TrainConfig(epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.lr,
                         weight_decay=args.weight_decay, seed=settings.seed if args.seed is None else args.seed)
    seeds = None
    if args.seeds is not None:
        seeds = list(dict.fromkeys(parse_int_list(args.seeds, "--seeds", "13,1,2")))
    if args.ensemble and (seeds is None or len(seeds) < 2):
        raise MuttlabError("--ensemble combines several runs: give at least two seeds, e.g. --seeds 13,1,2")
    data = None
    if args.train_pairs is not None:
        if args.limit is not None:
            raise MuttlabError("--limit cuts SICK's splits; with --train-pairs, give a shorter file instead")
        data = api.load_reval_pairs(settings, args.train_pairs, args.dev_pairs)
    elif args.dev_pairs is not None:
        raise MuttlabError("--dev-pairs goes with --train-pairs (SICK's dev split is TRIAL)")
    rows = []
    operator = api.local_operator()
    for model in _models(args.model):
        if seeds is None:
            bar = _Bar(model, enabled=not args.no_progress)
            try:
                runs = [api.train_reval(settings, model, config, progress=bar, force=args.force, limit=args.limit,
                                          data=data, actor=operator)]
            finally:
                bar.close()
            best = runs[0]
        else:
            bars = {s: _Bar(f"{model} seed {s}", enabled=not args.no_progress) for s in seeds}
            try:
                best, runs = api.train_reval_seeds(settings, model, seeds, config,
                                                   progress=lambda s, p: bars[s](p), force=args.force,
                                                   limit=args.limit, ensemble=args.ensemble, data=data,
                                                   actor=operator)
            finally:
                for bar in bars.values():
                    bar.close()
        installed = None
        if args.install:
            installed = api.install_model(settings, operator, api.model_id(best.path.read_bytes())).id
        for trained in runs + ([best] if args.ensemble else []):
            info = trained.info
            rows.append({"model": model, "seed": "all" if info.get("ensemble") else info["train"]["seed"],
                         "cached": trained.cached, "best_epoch": info.get("best_epoch", ""),
                         "dev_pearson": round(info["dev_pearson"], 4), "train_seconds": info["train_seconds"],
                         "id": api.model_id(trained.path.read_bytes()),
                         "installed": trained is best and installed is not None, "checkpoint": str(trained.path)})
    print(pd.DataFrame(rows).to_string(index=False))
    return 0


def _eval(args) -> int:
    from muttlab import api

    settings = settings_from_args(args)
    _torch_threads(args.threads)
    if args.checkpoint is not None and args.model == "both":
        raise MuttlabError("--checkpoint evaluates one file; name its --model (lstm or treelstm)")
    if args.publish and (args.limit is not None or args.checkpoint is not None or args.pairs is not None):
        raise MuttlabError("--publish takes the installed model evaluated on whole SICK splits; "
                           "drop --limit, --checkpoint and --pairs")
    rows, records, evaluations = [], [], []
    for model in _models(args.model):
        evaluation = api.evaluate_reval(settings, model, args.split, checkpoint=args.checkpoint,
                                        bootstrap=args.bootstrap, limit=args.limit, pairs_file=args.pairs)
        if args.publish:
            dev = api.evaluate_reval(settings, model, "dev", bootstrap=args.bootstrap)
            dest = api.publish_reval(settings, model, [dev, evaluation] if args.split != "dev" else [dev])
            print(f"published {dest}", file=sys.stderr)
        evaluations.append(evaluation)
        row = evaluation.as_row()
        records.append(row)
        rows.append(row)
    frame = pd.DataFrame(rows)
    if args.format in ("table", "markdown", "latex"):
        frame = frame.drop(columns=["checkpoint"])
    # Four decimals: correlations differ in the third.
    emit(render(frame, args.format, records=records, decimals=4), args.output)
    by_model = {e.model: e for e in evaluations}
    if len(by_model) == 2:
        # Dependent correlations on the same pairs: the paired tests, not overlapping CIs, answer this.
        c = api.compare_reval(by_model["treelstm"], by_model["lstm"], bootstrap=args.bootstrap, seed=settings.seed)
        b, w = c.bootstrap, c.williams
        print(f"Tree-LSTM − LSTM on {by_model['lstm'].split}: Δr = {b.diff:+.4f} "
              f"[{b.ci_low:+.4f}, {b.ci_high:+.4f}], paired bootstrap p = {b.p_value:.4f} ({b.n_boot} resamples); Williams t = {w.t:.2f}, "
              f"p = {w.p_value:.2g} (one-sided)", file=sys.stderr)
    return 0



def _read_pairs(path: Path) -> tuple[list[str], list[list[str]]]:
    from muttlab.api import read_lines

    cands, refs = [], []
    for number, line in enumerate(read_lines(path), start=1):
        if not line.strip():
            continue
        cand, tab, ref = line.partition("\t")
        if not tab or not cand.strip() or not ref.strip():
            raise MuttlabError(f"{path}, line {number}: expected 'candidate<TAB>reference'")
        cands.append(cand.strip())
        refs.append([ref.strip()])
    if not cands:
        raise MuttlabError(f"{path} has no 'candidate<TAB>reference' lines")
    return cands, refs


def _score(args) -> int:
    from muttlab import api

    settings = settings_from_args(args)
    _torch_threads(args.threads)
    if args.pairs is not None:
        if args.candidate or args.reference:
            raise MuttlabError("give either --pairs FILE or --candidate/--reference sentences, not both")
        cands, refs = _read_pairs(args.pairs)
    else:
        if not args.candidate or not args.reference:
            raise MuttlabError("give at least one --candidate and one --reference (or --pairs FILE)")
        cands, refs = list(args.candidate), [list(args.reference)] * len(args.candidate)
    metric = api.registry_for(settings).get(api.REVAL_NAMES[args.model])
    scores = metric.score(cands, refs)
    frame = pd.DataFrame({"candidate": cands, "references": [" | ".join(r) for r in refs], "score": scores})
    emit(render(frame, args.format, decimals=4), args.output)
    return 0

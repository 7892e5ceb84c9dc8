"""Learned metrics: train or load ReVal (Gupta et al. 2015) on SICK, with a progress bar and loss curve,
and evaluate it against SICK gold scores. Training is ``muttlab.learned.reval.train_model``; this page only
draws what it reports.

Training, installing models and clearing the server's caches are a maintainer's: the page shows those
controls to maintainers only, and the functions behind them refuse anyone else (PermissionDenied)."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from muttlab import api
from muttlab.api import Action, allowed, short_id
from muttlab.dashboard import auth, charts, services, shared, ui
from muttlab.errors import MuttlabError

LABELS = {"lstm": "ReVal-LSTM", "treelstm": "ReVal-TreeLSTM"}


def _checkpoint_info(path: Path | None) -> dict | None:
    """The checkpoint's JSON; empty when it is missing or unreadable (the page still shows the model)."""
    if path is None:
        return None
    try:
        return api.checkpoint_info(path)
    except (OSError, json.JSONDecodeError):
        return {}


def _duration(seconds) -> str:
    if not isinstance(seconds, (int, float)) or seconds <= 0:
        return "–"
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def _history(info: dict) -> pd.DataFrame:
    rows = info.get("history") or []
    frame = pd.DataFrame(rows)
    keep = [c for c in ("epoch", "train_loss", "dev_pearson", "dev_mse") if c in frame]
    return frame[keep] if "epoch" in keep else pd.DataFrame(columns=["epoch"])


def ensemble_seeds(settings, runs: int) -> list[int]:
    """The seeds of ``runs`` training runs: the settings' seed, then 1, 2, … (the shipped models' 13, 1, …, 6)."""
    return [settings.seed] + [k for k in range(1, runs + 5) if k != settings.seed][:runs - 1]


def _train(settings, actor, model: str, epochs: int, learning_rate: float, limit: int | None, force: bool,
           runs: int = 1) -> None:
    config = api.TrainConfig(epochs=int(epochs), learning_rate=float(learning_rate), seed=settings.seed)
    seeds = ensemble_seeds(settings, runs)
    bar = st.progress(0.0, text="Preparing SICK and its dependency trees…")
    curve = st.empty()
    seen: list[dict] = []

    def progress(seed, p) -> None:
        run = seeds.index(seed)
        done = (run * p.epochs * p.steps + (p.epoch - 1) * p.steps + p.step) / max(1, len(seeds) * p.epochs * p.steps)
        label = f"run {run + 1}/{len(seeds)} (seed {seed}) · " if len(seeds) > 1 else ""
        bar.progress(min(1.0, done), text=f"{label}epoch {p.epoch}/{p.epochs} · batch {p.step}/{p.steps} · "
                                          f"loss {p.loss:.4f}")
        if p.dev_pearson is not None:
            seen.append({"epoch": p.epoch, "train_loss": p.loss, "dev_pearson": p.dev_pearson, "seed": seed})
            if len(seeds) == 1:
                with curve.container():
                    ui.chart(charts.loss_curve(pd.DataFrame(seen), "Training so far"), "training-so-far",
                             key=f"live-{len(seen)}", live=True)
            else:
                curve.dataframe(pd.DataFrame(seen).groupby("seed", sort=False).last().reset_index(),
                                hide_index=True)

    try:
        if len(seeds) == 1:
            trained = api.train_reval(settings, model=model, train_config=config,
                                        progress=lambda p: progress(seeds[0], p), force=force, limit=limit,
                                        actor=actor)
        else:
            trained, _ = api.train_reval_seeds(settings, model, seeds, config, progress=progress, force=force,
                                                   limit=limit, ensemble=True, actor=actor)
    except MuttlabError as exc:
        bar.empty()
        st.error(f"Training failed: {ui.md_text(exc)}")
        return
    bar.progress(1.0, text="done")
    where = "reused a cached checkpoint" if trained.cached else "trained"
    what = f"an ensemble of {len(seeds)} runs (seeds {', '.join(map(str, seeds))})" if len(seeds) > 1 else "one run"
    ident = short_id(api.model_id(trained.path.read_bytes()))
    st.success(f"{LABELS.get(model, model)}: {where}, {what}: model {ident}. The metrics still use the installed "
               f"model; install this one below to change that.")


def _models_panel(settings, actor) -> None:
    """Every model, which one each metric uses, the install log; install controls for maintainers."""
    st.subheader("Models")
    try:
        records = api.list_models(settings)
    except MuttlabError as exc:
        st.error(f"The model registry cannot be read: {ui.md_text(exc)}")
        return
    ui.table(pd.DataFrame([r.as_row() for r in records]), "learned-models", key="learned-models")
    may_install, why = allowed(actor, Action.INSTALL_MODEL, settings)
    if may_install:
        trained = [r for r in records if not r.shipped]
        pick, act = st.columns([3, 1], vertical_alignment="bottom")
        choice = pick.selectbox("Trained model", [r.id for r in trained], key="learned-install-id",
                                format_func=lambda i: next(f"{short_id(r.id)} · {r.slot} · dev r "
                                                           f"{r.info.get('dev_pearson', float('nan')):.4f}"
                                                           for r in trained if r.id == i),
                                placeholder="none trained yet")
        if act.button("Install", key="learned-install", icon=":material/upload:"):
            if choice is None:
                st.info("Train a model first: only trained models can be installed.")
                return
            try:
                record = api.install_model(settings, actor, choice)
            except MuttlabError as exc:
                st.error(f"Not installed: {ui.md_text(exc)}")
            else:
                st.success(f"Installed {short_id(record.id)} for {', '.join(api.MODEL_SLOTS[record.slot][1])}.")
        slot_col, undo = st.columns([3, 1], vertical_alignment="bottom")
        slot = slot_col.selectbox("Slot", list(api.MODEL_SLOTS), key="learned-uninstall-slot")
        if undo.button("Use the shipped model", key="learned-uninstall", icon=":material/undo:"):
            try:
                api.uninstall_model(settings, actor, slot)
            except MuttlabError as exc:
                st.error(f"Not changed: {ui.md_text(exc)}")
            else:
                st.success(f"{slot} uses the shipped model again.")
        log = api.model_install_log(settings)
        if log:
            with st.expander(f"Install log ({len(log)} entries)"):
                ui.table(pd.DataFrame(log), "model-install-log", key="learned-install-log")
        if st.button("Clear the server's caches", key="learned-clear-caches", icon=":material/delete_sweep:",
                     help="Drops every shared object (metric registry, suite, pair store, memo); they are "
                          "rebuilt on the next request."):
            shared.clear_all(actor, settings)
            st.success("Caches cleared.")
    elif not settings.read_only:
        st.caption("Installing a model, training and clearing caches are for maintainers.")


def page() -> None:
    settings = ui.header("Learned metrics", "ReVal: an LSTM or a dependency Tree-LSTM over GloVe vectors that "
                                            "predicts SICK relatedness (Gupta et al., EMNLP 2015).")
    if settings.using_sample:
        st.info("Training and evaluation use SICK, which needs the data dir (`MUTTLAB_DATA_DIR`); without it "
                "only the installed models can be inspected.", icon=":material/science:")

    model = st.segmented_control("Model", list(LABELS), default="treelstm", format_func=LABELS.get,
                                 key="learned-model") or "treelstm"
    path = api.find_checkpoint(model, api.model_dir(settings))
    info = _checkpoint_info(path)
    if path is None:
        st.warning(f"No trained {LABELS[model]} model yet: the metric is unavailable until one is trained.",
                   icon=":material/psychology:")
    else:
        members = info.get("members_info") or []
        a, b, c = st.columns(3)
        if members:
            a.metric("ensemble", f"{len(members)} seeds", help="The installed model averages the predictions "
                                                             "of one model per training seed.")
        else:
            a.metric("best epoch", info.get("best_epoch", "–"))
        dev = info.get("dev_pearson")
        b.metric("dev Pearson (SICK trial)", f"{dev:.4f}" if isinstance(dev, (int, float)) else "–")
        c.metric("training time", _duration(info.get("train_seconds")),
                 help="All runs together for an ensemble." if members else None)
        ui.caption_text(f"checkpoint: {Path(path).name}")  # its name only: where it lies is the server's
        history = _history(info)
        if members:
            st.markdown("**Runs in the ensemble**: one per seed, each at its best dev epoch; the ensemble "
                        "predicts their mean.")
            runs = pd.DataFrame(members)
            ui.table(runs[[c for c in ("seed", "best_epoch", "dev_pearson", "train_seconds") if c in runs]],
                     f"reval-{model}-runs", key="learned-members")
        if len(history):
            ui.chart(charts.loss_curve(history, f"{LABELS[model]}: loss and dev correlation by epoch"),
                     f"reval-{model}-training", key="learned-curve")
            ui.table(history, f"reval-{model}-history", key="learned-history")

    actor = auth.identity(settings)
    if not actor.anonymous:
        who, out = st.columns([6, 1], vertical_alignment="center")
        who.caption(f"Signed in as {ui.md_text(actor.name)} ({actor.role.value}).")
        if out.button("Sign out", key="learned-signout"):
            auth.sign_out(settings)
            st.rerun()
    st.subheader("Train")
    may_train, why = allowed(actor, Action.TRAIN, settings)
    if settings.read_only:
        st.info("This server is read-only: training (which writes a model) is switched off.", icon=":material/lock:")
    elif not may_train:
        st.info(ui.md_text(f"Training is for maintainers ({why})."), icon=":material/lock:")
        if auth.can_sign_in(settings) and actor.anonymous:
            auth.sign_in_form(settings, "learned", "Sign in as a maintainer")
    else:
        with st.form("learned-train", border=True):
            x, y, z, w = st.columns(4)
            epochs = x.number_input("Epochs", 1, 50, 10, key="learned-epochs",
                                    help="At most this many; the epoch with the best dev correlation is kept.")
            learning_rate = y.number_input("Learning rate (Adagrad)", 0.001, 1.0, 0.05, step=0.01, format="%.3f",
                                           key="learned-lr")
            limit = z.number_input("SICK pairs per split (0 = all)", 0, 10000, 0, step=100, key="learned-limit",
                                   help="A small number trains a quick, weak model for a try-out.")
            runs = w.number_input("Runs", 1, 10, 1, key="learned-runs",
                                  help="1 trains one model; more train one per seed (13, 1, 2, …) and install "
                                       "them as an ensemble that predicts their mean, like the shipped models "
                                       "(7 runs).")
            force = st.checkbox("Train again even if a checkpoint with these settings exists", key="learned-force")
            submitted = st.form_submit_button("Train", type="primary", icon=":material/model_training:",
                                              disabled=settings.using_sample)
        if submitted:
            _train(settings, actor, model, epochs, learning_rate, int(limit) or None, force, int(runs))

    _models_panel(settings, actor)

    st.subheader("Evaluate on SICK")
    if path is None or settings.using_sample:
        st.caption("Needs a trained model and the data dir.")
        return
    if services.governs(settings):
        st.caption("Evaluating the model on SICK keeps a server busy for about a minute, so this public demo does "
                   "not offer it; the published numbers beside ours are on the Published vs measured page, and "
                   "`muttlab reval eval` runs it on your own machine.")
        return
    split = st.segmented_control("Split", ["test", "dev"], default="test", key="learned-split") or "test"
    if st.button("Evaluate", key="learned-evaluate", icon=":material/leaderboard:"):
        evaluation = ui.with_progress(f"Evaluating ReVal on SICK {split}…", lambda progress: services.reval_evaluation(
            settings, model, split, path, progress), failure="Evaluation failed")
        if evaluation is None:
            return
        ui.table(pd.DataFrame([evaluation.as_row()]), f"reval-{model}-{split}-evaluation", key="learned-eval")
        if split == "test":
            st.caption("Published: Tai et al. (2015), Table 3 (300-d GloVe); ours uses 50-d GloVe.")


page()

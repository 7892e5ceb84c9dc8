"""The model registry: which learned model each metric uses, and who changed that when.

* Shipped models are package data (``muttlab.resources.bundled.models_dir()``), read-only.
* Trained models are written into the model folder (``Settings.model_dir``): ReVal checkpoints under names
  of their own, tuned multi-level parameters (``muttlab multilevel tune``) and corpus word vectors
  (``muttlab vectors train``) under fixed names that the next run replaces. A model's id is the
  SHA-256 of its file (:func:`muttlab.metrics.reval.installed.file_id`), and that id is in the
  signature of every metric that uses it (``ckpt:`` of ReVal, ``reval:`` of DREEM and ML-DREEM, ``tuned:``
  of ML-METEOR, DREEM and ML-DREEM, ``vectors:word2vec-corpus@`` of W2V-AVG-corpus), so no score is ever
  cached under another model's key.
* A metric uses the shipped model (none for W2V-AVG-corpus) unless a maintainer has *installed* another
  one in its slot (``installed.json`` in the model folder); training never does. Installing a tuned file
  or vectors copies them under their id into ``installed/``, so a later run that replaces the training
  output does not change what is installed. Installing and uninstalling are recorded in an append-only
  log (``install-log.jsonl``): who, when, which model, which metrics it changes.
* Ids are whole SHA-256 digests wherever they key something (signatures, ``installed.json``, the log, the
  installed copies' file names); listings show the first 12 digits, and any unambiguous start of 6 or more
  digits names a model.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from muttlab.access.roles import Action, Identity, require
from muttlab.engine.runner import model_dir, writable_model_dir
from muttlab.errors import MuttlabError
from muttlab.metrics.dreem import BUNDLED_MODELS
from muttlab.metrics.reval import metric as reval_metric
from muttlab.metrics.reval.installed import (file_id, installed_entry, model_id, read_installed, short_id,
                                             sidecars)
from muttlab.metrics.reval.installed import installed_state as _installed_state
from muttlab.metrics.w2v import CORPUS_FILE
from muttlab.settings import Settings

LOG_FILE = "install-log.jsonl"
INSTALLED_COPIES = "installed"  # in the model folder: installed tuned files and vectors, named by their id

# slot -> what it holds (a ReVal model kind, or the file a trained model of the slot is written as) and the
# metrics whose numbers change when another model is installed in it. A file slot is named after its file.
SLOTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "reval-treelstm": ("treelstm", ("ReVal-TreeLSTM", "DREEM (when its reval weight is above 0)",
                                    "ML-DREEM (when a level weights reval)")),
    "reval-lstm": ("lstm", ("ReVal-LSTM",)),
    "multilevel-meteor": ("multilevel-meteor.json", ("ML-METEOR",)),
    "dreem": ("dreem.json", ("DREEM",)),
    "ml-dreem": ("ml-dreem.json", ("ML-DREEM",)),
    "word2vec-corpus": (CORPUS_FILE, ("W2V-AVG-corpus",)),
}
REVAL_SLOTS = ("reval-treelstm", "reval-lstm")
FILE_SLOTS = tuple(s for s in SLOTS if s not in REVAL_SLOTS)


@dataclass(frozen=True)
class ModelRecord:
    """One model the registry knows: shipped or trained, and whether its slot uses it now."""

    id: str
    slot: str
    path: Path
    shipped: bool
    in_use: bool
    info: dict = field(default_factory=dict, repr=False, compare=False)

    def as_row(self) -> dict:
        return {"id": short_id(self.id), "slot": self.slot, "origin": "shipped" if self.shipped else "trained",
                "in use": self.in_use, "dev_pearson": self.info.get("dev_pearson"),
                "ensemble": bool(self.info.get("ensemble")), "data": (self.info.get("data") or {}).get("source"),
                "file": self.path.name}


def _info(path: Path) -> dict:
    try:
        return json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}


def _tuned_info(path: Path) -> dict | None:
    """What a tuned-parameter file says about itself (dev correlation, data); None for a file that is no
    tuned parameters at all."""
    info = _info(path)
    if not info or not ("weights" in info or "levels" in info):
        return None
    return {"dev_pearson": info.get("dev_correlation") if info.get("correlation") == "pearson" else None,
            "data": {"source": info.get("tuned_on")}, "complete": True}


def _slot_of(info: dict, path: Path) -> str | None:
    kind = info.get("model") or path.stem.split("-")[0]
    return f"reval-{kind}" if f"reval-{kind}" in SLOTS else None


def _trained_dir(settings: Settings) -> Path | None:
    folder = model_dir(settings)
    return folder / "reval" if folder is not None else None


def _shipped(slot_name: str) -> Path | None:
    what = SLOTS[slot_name][0]
    path = reval_metric.PUBLISHED_DIR / reval_metric.checkpoint_name(what) if slot_name in REVAL_SLOTS \
        else BUNDLED_MODELS / what
    return path if path.is_file() else None


def _in_use(settings: Settings) -> dict[str, Path | None]:
    using = {s: reval_metric.find_checkpoint(SLOTS[s][0], model_dir(settings)) for s in REVAL_SLOTS}
    for slot_name in FILE_SLOTS:
        found = installed_entry(slot_name, model_dir(settings))
        using[slot_name] = found[0] if found is not None else _shipped(slot_name)
    return using


def _trained_files(settings: Settings) -> list[tuple[str, Path, dict]]:
    """(slot, file, info) of every trained model in the model folder: complete ReVal checkpoints, tuned
    parameters (``<stem>.json`` and ``<stem>.<dataset>.json``) and corpus vectors, installed copies included."""
    folder = model_dir(settings)
    if folder is None or not folder.is_dir():
        return []
    found = []
    reval_dir = _trained_dir(settings)
    for path in sorted(reval_dir.glob("*.pt")) if reval_dir.is_dir() else []:
        info = _info(path)
        slot_name = _slot_of(info, path)
        if slot_name is not None and info.get("complete"):  # else an interrupted training run
            found.append((slot_name, path, info))
    for slot_name in FILE_SLOTS:
        stem, suffix = Path(SLOTS[slot_name][0]).stem, Path(SLOTS[slot_name][0]).suffix
        patterns = (f"{stem}{suffix}", f"{stem}.*{suffix}", f"{INSTALLED_COPIES}/{stem}-*{suffix}")
        for path in sorted({p for pattern in patterns for p in folder.glob(pattern) if p.is_file()}):
            info = _tuned_info(path) if suffix == ".json" else {"complete": True}
            if info is not None:
                found.append((slot_name, path, info))
    return found


def list_models(settings: Settings) -> list[ModelRecord]:
    """Every shipped model and every complete trained model, shipped first, each slot's model marked in use.

    A model whose file is in the folder twice (an installed copy and the training output it came from) is
    listed once, by the file in use when it is."""
    using = {s: (p.resolve() if p is not None else None) for s, p in _in_use(settings).items()}
    records = []
    for slot_name in SLOTS:
        path = _shipped(slot_name)
        if path is not None:
            info = _info(path) if slot_name in REVAL_SLOTS else (_tuned_info(path) or {})
            records.append(ModelRecord(file_id(path), slot_name, path, True, using[slot_name] == path.resolve(),
                                       info))
    seen = {(r.slot, r.id) for r in records}
    trained = [ModelRecord(file_id(path), slot_name, path, False, using[slot_name] == path.resolve(), info)
               for slot_name, path, info in _trained_files(settings)]
    for record in sorted(trained, key=lambda r: not r.in_use):
        if (record.slot, record.id) not in seen:
            seen.add((record.slot, record.id))
            records.append(record)
    return records


def find(settings: Settings, ident: str) -> ModelRecord:
    """The model whose id starts with ``ident`` (at least 6 characters), or a MuttlabError listing the ids."""
    ident = (ident or "").strip().lower()
    records = list_models(settings)
    matches = {r.id: r for r in records if len(ident) >= 6 and r.id.startswith(ident)}
    if len(matches) != 1:
        known = ", ".join(f"{short_id(r.id)} ({r.slot}, {'shipped' if r.shipped else 'trained'})"
                          for r in records) or "none"
        problem = "is ambiguous" if matches else "matches no model"
        raise MuttlabError(f"model id {ident!r} {problem}; known: {known} (`muttlab models list`)")
    return next(iter(matches.values()))


def installed_state(settings: Settings) -> str:
    """A token that changes whenever a model is installed or uninstalled (for caches of metric objects)."""
    return _installed_state(model_dir(settings))


@contextmanager
def _locked(folder: Path):
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".registry.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _write_installed(folder: Path, entries: dict) -> None:
    fd, tmp = tempfile.mkstemp(prefix=".installed-", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(entries, out, indent=2, sort_keys=True)
            out.write("\n")
        os.replace(tmp, folder / reval_metric.INSTALLED_FILE)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _log(folder: Path, actor: Identity, action: str, slot_name: str, new: str | None, previous: str | None) -> dict:
    entry = {"at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "who": actor.name,
             "role": actor.role.value, "action": action, "slot": slot_name, "model": new,
             "previous": previous, "metrics": list(SLOTS[slot_name][1])}
    # O_APPEND: each record is one write at the end, never a rewrite of earlier ones.
    fd = os.open(folder / LOG_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (json.dumps(entry, sort_keys=True) + "\n").encode("utf-8"))
    finally:
        os.close(fd)
    return entry


def _current_id(settings: Settings, slot_name: str) -> str | None:
    path = _in_use(settings)[slot_name]
    return file_id(path) if path is not None and path.is_file() else None


def _copy_in(record: ModelRecord, folder: Path) -> Path:
    """The record's file (with its sidecars) copied to ``installed/<stem>-<id><suffix>``; the id is checked
    on the copy, so what is installed is what was asked for."""
    stem, suffix = Path(SLOTS[record.slot][0]).stem, Path(SLOTS[record.slot][0]).suffix
    target = folder / INSTALLED_COPIES / f"{stem}-{record.id}{suffix}"
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_file() and file_id(target) == record.id:
        return target
    parts = [(record.path, target)] + [(side, target.with_name(target.name + side.name[len(record.path.name):]))
                                       for side in sidecars(record.path)]
    for source, destination in parts:
        tmp = destination.with_name(f".{destination.name}.tmp")
        shutil.copyfile(source, tmp)
        os.replace(tmp, destination)
    if file_id(target) != record.id:
        raise MuttlabError(f"{record.path} changed while it was being installed; try again")
    return target


def install(settings: Settings, actor: Identity, ident: str) -> ModelRecord:
    """Make the model ``ident`` the one its slot's metrics use (a maintainer's action, logged).

    Installing a shipped model's id is the same as uninstalling the slot: the metrics go back to it.

    Raises:
      PermissionDenied: ``actor`` is not a maintainer, or the server is read-only.
      MuttlabError: no (or more than one) model has that id.
    """
    actor = require(actor, Action.INSTALL_MODEL, settings)
    folder = writable_model_dir(settings)
    record = find(settings, ident)
    with _locked(folder):
        previous = _current_id(settings, record.slot)
        entries = read_installed(folder)
        if record.shipped:
            entries.pop(record.slot, None)
        else:
            if record.slot in REVAL_SLOTS:
                # ReVal training never rewrites a checkpoint: the file is installed where it is. The id is
                # computed from the file again under the lock: what is installed is what was asked for.
                if model_id(record.path.read_bytes()) != record.id:
                    raise MuttlabError(f"{record.path} changed while it was being installed; try again")
                path = record.path
            else:
                path = _copy_in(record, folder)
            entries[record.slot] = {"id": record.id, "file": str(path.resolve().relative_to(folder.resolve())),
                                    "installed_by": actor.name,
                                    "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        _write_installed(folder, entries)
        _log(folder, actor, "install", record.slot, record.id, previous)
    return find(settings, record.id)


def uninstall(settings: Settings, actor: Identity, slot_name: str) -> None:
    """Put a slot back on its shipped model (a maintainer's action, logged)."""
    actor = require(actor, Action.INSTALL_MODEL, settings)
    if slot_name not in SLOTS:
        raise MuttlabError(f"unknown model slot {slot_name!r}; choose one of {', '.join(SLOTS)}")
    folder = writable_model_dir(settings)
    with _locked(folder):
        entries = read_installed(folder)
        previous = (entries.pop(slot_name, None) or {}).get("id")
        _write_installed(folder, entries)
        shipped = _current_id(settings, slot_name)
        _log(folder, actor, "uninstall", slot_name, shipped, previous)


def install_log(settings: Settings) -> list[dict]:
    """The install log, oldest first (empty without a model folder or any install)."""
    folder = model_dir(settings)
    path = folder / LOG_FILE if folder is not None else None
    if path is None or not path.is_file():
        return []
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entries.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a torn last line (a crash mid-write) is skipped, not fatal
    return entries

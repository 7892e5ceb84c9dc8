"""The model registry: which learned model each metric uses, and who changed that when.

* Shipped models are package data (``muttlab.resources.bundled.models_dir()``), read-only.
* Trained models are written into the model folder (``Settings.model_dir``) under names of their own;
  a model's id is the start of the SHA-256 of its checkpoint (:func:`muttlab.metrics.reval.metric.model_id`),
  and that id is in the signature of every metric that uses it (ReVal, DREEM's and ML-DREEM's reval
  representation), so no score is ever cached under another model's key.
* A metric uses the shipped model unless a maintainer has *installed* another one in its slot
  (``installed.json`` in the model folder). Installing and uninstalling are recorded in an append-only log
  (``install-log.jsonl``): who, when, which model, which metrics it changes.
"""
from __future__ import annotations

import fcntl
import json
import os
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from muttlab.access.roles import Action, Identity, require
from muttlab.engine.runner import model_dir, writable_model_dir
from muttlab.errors import MuttlabError
from muttlab.metrics.reval import metric as reval_metric
from muttlab.metrics.reval.installed import installed_state as _installed_state
from muttlab.metrics.reval.installed import model_id, read_installed
from muttlab.settings import Settings

LOG_FILE = "install-log.jsonl"

# slot -> the ReVal model kind and the metrics whose numbers change when another model is installed in it.
SLOTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "reval-treelstm": ("treelstm", ("ReVal-TreeLSTM", "DREEM (when its reval weight is above 0)",
                                    "ML-DREEM (when a level weights reval)")),
    "reval-lstm": ("lstm", ("ReVal-LSTM",)),
}


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
        return {"id": self.id, "slot": self.slot, "origin": "shipped" if self.shipped else "trained",
                "in use": self.in_use, "dev_pearson": self.info.get("dev_pearson"),
                "ensemble": bool(self.info.get("ensemble")), "data": (self.info.get("data") or {}).get("source"),
                "file": self.path.name}


def _info(path: Path) -> dict:
    try:
        return json.loads(path.with_suffix(".json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return {}


def _slot_of(info: dict, path: Path) -> str | None:
    kind = info.get("model") or path.stem.split("-")[0]
    return f"reval-{kind}" if f"reval-{kind}" in SLOTS else None


def _trained_dir(settings: Settings) -> Path | None:
    folder = model_dir(settings)
    return folder / "reval" if folder is not None else None


def _in_use(settings: Settings) -> dict[str, Path | None]:
    return {s: reval_metric.find_checkpoint(kind, model_dir(settings)) for s, (kind, _) in SLOTS.items()}


def list_models(settings: Settings) -> list[ModelRecord]:
    """Every shipped model and every complete trained model, shipped first, each slot's model marked in use."""
    using = {s: (p.resolve() if p is not None else None) for s, p in _in_use(settings).items()}
    records = []
    for slot_name, (kind, _) in SLOTS.items():
        path = reval_metric.PUBLISHED_DIR / reval_metric.checkpoint_name(kind)
        if path.is_file():
            records.append(ModelRecord(model_id(path.read_bytes()), slot_name, path, True,
                                       using[slot_name] == path.resolve(), _info(path)))
    folder = _trained_dir(settings)
    for path in sorted(folder.glob("*.pt")) if folder is not None and folder.is_dir() else []:
        info = _info(path)
        slot_name = _slot_of(info, path)
        if slot_name is None or not info.get("complete"):
            continue  # an interrupted training run: not a model anyone can install
        records.append(ModelRecord(model_id(path.read_bytes()), slot_name, path, False,
                                   using[slot_name] == path.resolve(), info))
    return records


def find(settings: Settings, ident: str) -> ModelRecord:
    """The model whose id starts with ``ident`` (at least 6 characters), or a MuttlabError listing the ids."""
    ident = (ident or "").strip().lower()
    records = list_models(settings)
    matches = {r.id: r for r in records if len(ident) >= 6 and r.id.startswith(ident)}
    if len(matches) != 1:
        known = ", ".join(f"{r.id} ({r.slot}, {'shipped' if r.shipped else 'trained'})" for r in records) or "none"
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
    return model_id(path.read_bytes()) if path is not None and path.is_file() else None


def install(settings: Settings, actor: Identity, ident: str) -> ModelRecord:
    """Make the model ``ident`` the one its slot's metrics use (a maintainer's action, logged).

    Installing a shipped model's id is the same as uninstalling the slot: the metrics go back to it.

    Raises:
      PermissionDenied: ``actor`` is not a maintainer, or the server is read-only.
      MuttlabError: no (or more than one) model has that id.
    """
    require(actor, Action.INSTALL_MODEL, settings)
    folder = writable_model_dir(settings)
    record = find(settings, ident)
    with _locked(folder):
        previous = _current_id(settings, record.slot)
        entries = read_installed(folder)
        if record.shipped:
            entries.pop(record.slot, None)
        else:
            # The id is computed from the file again under the lock: what is installed is what was asked for.
            if model_id(record.path.read_bytes()) != record.id:
                raise MuttlabError(f"{record.path} changed while it was being installed; try again")
            entries[record.slot] = {"id": record.id, "file": str(record.path.relative_to(folder)),
                                    "installed_by": actor.name,
                                    "installed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        _write_installed(folder, entries)
        _log(folder, actor, "install", record.slot, record.id, previous)
    return find(settings, record.id)


def uninstall(settings: Settings, actor: Identity, slot_name: str) -> None:
    """Put a slot back on its shipped model (a maintainer's action, logged)."""
    require(actor, Action.INSTALL_MODEL, settings)
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

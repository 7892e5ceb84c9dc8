"""Which trained models a model folder has installed, and model ids; no torch needed.

``installed.json`` in the model folder maps a slot (``reval-treelstm``, ``dreem``, ``word2vec-corpus``...)
to a file in that folder and its id. Only :func:`muttlab.learned.models.install` (a maintainer's action)
writes it; a file merely lying in the model folder is never used.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from muttlab.metrics.base import MetricUnavailable

# In the model folder: which trained model each slot uses (written only by ``muttlab models install``).
INSTALLED_FILE = "installed.json"


def slot(model: str) -> str:
    """The name under which a ReVal model is installed (``reval-treelstm``)."""
    return f"reval-{model}"


def read_installed(model_dir: Path | None) -> dict[str, dict]:
    """slot -> {"id", "file" (relative to the model folder), ...}; empty without a folder or a file.

    Raises:
      MetricUnavailable: the file exists but cannot be read (it is never guessed around: a damaged
        registry must not silently switch a metric to another model).
    """
    if model_dir is None:
        return {}
    path = Path(model_dir) / INSTALLED_FILE
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or not all(isinstance(v, dict) and "file" in v for v in data.values()):
            raise ValueError("expected an object of {slot: {id, file}}")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise MetricUnavailable(f"{path}: cannot read the installed models ({exc}); fix it or remove it to "
                                "use the shipped models") from None
    return data


def installed_entry(slot_name: str, model_dir: Path | None) -> tuple[Path, str] | None:
    """The file a maintainer installed in ``slot_name`` (it may be missing) and its recorded id, else None."""
    entry = read_installed(model_dir).get(slot_name)
    if entry is None:
        return None
    folder = Path(model_dir).resolve()
    path = (folder / entry["file"]).resolve()
    if folder not in path.parents:
        raise MetricUnavailable(f"{Path(model_dir) / INSTALLED_FILE}: {slot_name} points outside the model "
                                f"folder ({entry['file']!r}); reinstall it with `muttlab models install`")
    return path, str(entry.get("id", ""))


def installed_checkpoint(model: str, model_dir: Path | None) -> Path | None:
    """The checkpoint a maintainer installed for ``model`` in ``model_dir`` (it may be missing), else None."""
    found = installed_entry(slot(model), model_dir)
    return found[0] if found is not None else None


def checked_installed(slot_name: str, model_dir: Path | None, data: bytes | None = None) -> tuple[Path, str] | None:
    """:func:`installed_entry`, refusing a file that is gone or whose content is no longer the installed id
    (``data``: its bytes, when the caller has read them; else the file and its sidecars are hashed)."""
    found = installed_entry(slot_name, model_dir)
    if found is None:
        return None
    path, recorded = found
    if not path.is_file():
        raise MetricUnavailable(f"the model installed in {slot_name}, {path}, is missing; uninstall it with "
                                f"`muttlab models uninstall {slot_name}` or install another")
    actual = model_id(data) if data is not None else file_id(path)
    if actual != recorded:
        raise MetricUnavailable(f"{path} changed since it was installed in {slot_name} (id {actual}, installed "
                                f"{recorded}); install it again with `muttlab models install {actual}`")
    return path, actual


# How many hex digits of an id are shown in listings; signatures, cache keys and installed.json hold it whole.
SHORT_ID_CHARS = 12


def model_id(data: bytes) -> str:
    """A model's id: the SHA-256 of its checkpoint file (64 hex digits), so different weights never share one.
    A shortened id would not do: two files that agree on the first 12 digits are found in a minute."""
    return hashlib.sha256(data).hexdigest()


def short_id(ident: str) -> str:
    """An id as listings show it (its first :data:`SHORT_ID_CHARS` digits); never a key."""
    return ident[:SHORT_ID_CHARS]


def sidecars(path: Path) -> list[Path]:
    """Files that belong to ``path``: the arrays gensim writes beside a KeyedVectors file (``<name>.*.npy``)."""
    return sorted(path.parent.glob(path.name + ".*.npy"))


def file_id(path: Path) -> str:
    """:func:`model_id` of a file read in blocks, its :func:`sidecars` included (equal to ``model_id`` of
    its bytes when it has none)."""
    h = hashlib.sha256()
    for part in [path, *sidecars(path)]:
        with part.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def installed_state(model_dir: Path | None) -> str:
    """A token that changes whenever a model is installed or uninstalled in ``model_dir`` ("" for none)."""
    path = Path(model_dir) / INSTALLED_FILE if model_dir is not None else None
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path is not None else ""
    except OSError:
        return ""

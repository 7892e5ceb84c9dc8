"""Which trained ReVal model a model folder has installed, and model ids; no torch needed.

``installed.json`` in the model folder maps a slot (``reval-treelstm``) to a checkpoint file in that folder
and its id. Only :func:`muttlab.learned.models.install` (a maintainer's action) writes it.
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


def installed_checkpoint(model: str, model_dir: Path | None) -> Path | None:
    """The checkpoint a maintainer installed for ``model`` in ``model_dir`` (it may be missing), else None."""
    entry = read_installed(model_dir).get(slot(model))
    if entry is None:
        return None
    folder = Path(model_dir).resolve()
    path = (folder / entry["file"]).resolve()
    if folder not in path.parents:
        raise MetricUnavailable(f"{Path(model_dir) / INSTALLED_FILE}: {slot(model)} points outside the model "
                                f"folder ({entry['file']!r}); reinstall it with `muttlab models install`")
    return path


def model_id(data: bytes) -> str:
    """A model's id: the start of the SHA-256 of its checkpoint file, so different weights never share one."""
    return hashlib.sha256(data).hexdigest()[:12]


def installed_state(model_dir: Path | None) -> str:
    """A token that changes whenever a model is installed or uninstalled in ``model_dir`` ("" for none)."""
    path = Path(model_dir) / INSTALLED_FILE if model_dir is not None else None
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path is not None else ""
    except OSError:
        return ""

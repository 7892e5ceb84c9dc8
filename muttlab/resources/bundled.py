"""Where the files that ship inside the package are: the one place that knows.

Everything is read through :mod:`importlib.resources`, so a wheel install, an editable install and a
source checkout find the same files, and nothing depends on the repository's location or on the
current directory.
"""
from __future__ import annotations

from importlib.resources import files
from pathlib import Path


def _package_dir(package: str) -> Path:
    # Package data is installed as plain files (the wheel is not zip-safe), so the traversable is a path.
    return Path(str(files(package)))


def data_dir() -> Path:
    """The bundled data folder (``muttlab.data``): the sample corpus and the shipped models."""
    return _package_dir("muttlab.data")


def sample_dir() -> Path:
    """The bundled sample corpus the app runs on when no datasets folder is configured."""
    return data_dir() / "sample"


def results_dir() -> Path:
    """Results computed ahead and shipped (``data/results``): the snapshots, the tie calibrations; read-only."""
    return data_dir() / "results"


def models_dir() -> Path:
    """Trained (ReVal) and tuned (multi-level) models that ship with the package; read-only."""
    return data_dir() / "models"


def dashboard_dir() -> Path:
    """The Streamlit app's folder (``app.py`` and ``config.toml``, its theme and server settings)."""
    return _package_dir("muttlab.dashboard")


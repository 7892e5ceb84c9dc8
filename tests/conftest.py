"""Shared fixtures. Real-data tests read ``MUTTLAB_DATA_DIR`` (``.ci/run`` points it at ../shared/data)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from muttlab.settings import Settings
from muttlab.sources import load_mutt_experiments

# The tests live in the repository (the package does not); its shared data sits beside the checkout.
REPO = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("MUTTLAB_DATA_DIR") or REPO.parent / "shared" / "data")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not (DATA_DIR / "mutt" / "experiments").is_dir():
        pytest.fail(f"real datasets not found at {DATA_DIR}; set MUTTLAB_DATA_DIR to the shared data folder")
    return DATA_DIR


@pytest.fixture
def cache_dir(tmp_path) -> Path:
    return tmp_path / "cache"


@pytest.fixture
def data_settings(data_dir, cache_dir) -> Settings:
    """Settings on the real data with a fresh, private cache."""
    return Settings(data_dir=data_dir, cache_dir=cache_dir, workers=1)


@pytest.fixture
def sample_settings(cache_dir) -> Settings:
    """Settings with no data dir: the bundled sample."""
    return Settings(data_dir=None, cache_dir=cache_dir, workers=1)


@pytest.fixture(scope="session")
def mutt_suite(data_dir):
    """All ten MUTT experiment sets."""
    return load_mutt_experiments(Settings(data_dir=data_dir))

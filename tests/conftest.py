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

# The files that take longest, longest first (worker seconds with `-n 2` on two cores, docs/testing.md). They
# are collected first, and pyproject's `--no-loadscope-reorder` keeps that order, so each xdist worker starts on
# a long file and the short ones fill in at the end: the two workers finish together. xdist's default order (most
# tests first) left the long files of few tests (a Dask cluster, three servers) for last, on one worker.
LONGEST_FIRST = (
    "tests/engine/test_distributed.py",
    "tests/dashboard/test_browser_audiences.py",
    "tests/metrics/test_sacre.py",
    "tests/dashboard/test_browser_views.py",
    "tests/test_conformance.py",
)


def pytest_collection_modifyitems(items):
    """Run the files of :data:`LONGEST_FIRST` first, in its order; every file's tests stay together and in order."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::")[0], len(rank)))


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
def sample_server(tmp_path_factory):
    """One `muttlab serve` on the bundled sample per test process, shared by the tests that need no other
    setting: anonymous visitors, a private cache. A test may add pairs to its pair store; none may count on the
    store holding only its own. Its environment asks Streamlit for the agent API
    (``STREAMLIT_SERVER_ENABLE_AGENT_API``), which `muttlab serve` must refuse (tests/access/test_agent_api.py).
    Starting a server costs half a minute (its warm-up loads the METEOR JVM and spaCy before it opens)."""
    from tests.dashboard.test_browser import SampleServer, sample_env, serving

    root = tmp_path_factory.mktemp("sample-server")
    env = sample_env(root / "cache", STREAMLIT_SERVER_ENABLE_AGENT_API="true")
    with serving(env, root / "serve.log") as url:
        yield SampleServer(url, root / "serve.log", Settings(cache_dir=root / "cache"))


@pytest.fixture(scope="session")
def mutt_suite(data_dir):
    """All ten MUTT experiment sets."""
    return load_mutt_experiments(Settings(data_dir=data_dir))


@pytest.fixture(autouse=True)
def _each_test_starts_with_no_outside_code():
    """A test that registers an outside metric in this process marks the process as having loaded outside code,
    which stops it storing built-in metrics' scores (muttlab.metrics.registry.shares_scores); the next test
    starts unmarked, so that no test depends on which ran before it."""
    yield
    from muttlab.metrics import registry
    registry._OUTSIDE_CODE.clear()

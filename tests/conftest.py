"""Shared fixtures. Real-data tests read ``MUTTLAB_DATA_DIR`` (``.ci/run`` points it at ../shared/data)."""
from __future__ import annotations

import os
import subprocess
import sys
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Callable, ContextManager, Mapping

import pytest

from muttlab.settings import Settings
from muttlab.sources import load_mutt_experiments

# The tests live in the repository (the package does not); its shared data sits beside the checkout.
REPO = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("MUTTLAB_DATA_DIR") or REPO.parent / "shared" / "data")


def muttlab_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a ``muttlab`` command a test starts: the tests' own without any ``MUTTLAB_`` variable (a
    developer's settings never leak into a test), with the checkout importable, then ``env``."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("MUTTLAB_")}
    environ["PYTHONPATH"] = str(REPO)
    environ.update(env or {})
    return environ


def run_muttlab(*args: str, env: Mapping[str, str] | None = None, **run) -> subprocess.CompletedProcess:
    """``muttlab ARGS`` in a process of its own with :func:`muttlab_env`'s environment, its output captured as
    text; ``run`` goes to :func:`subprocess.run` (``timeout``, 600 s unless given, ``cwd``, ``input``)."""
    return subprocess.run([sys.executable, "-m", "muttlab", *args], env=muttlab_env(env), capture_output=True,
                          text=True, **{"timeout": 600, **run})


# Files that share something expensive to start: each group runs whole on one xdist worker, its files one after
# another. Most use one kind of server (tests/dashboard/test_browser.py `serving`): the worker starts each of the
# group's servers once (:data:`SERVERS`) and stops them when it leaves the group. A server's start costs 15-25 CPU
# seconds before it opens and as many again for the rest of its warm-up (docs/testing.md). A file that uses one
# of these servers and is in no group still works: it starts its own and stops it at its end.
SHARED_GROUPS = {
    # sample_server: the bundled sample, anonymous visitors
    "sample server": ("tests/dashboard/test_browser_layout.py", "tests/dashboard/test_browser_views.py",
                      "tests/dashboard/test_browser.py", "tests/dashboard/test_browser_links_and_keys.py",
                      "tests/dashboard/test_browser_access.py", "tests/dashboard/test_numbers_equal_exports.py",
                      "tests/access/test_agent_api.py", "tests/attacks/test_plotly_hint.py"),
    # tests/attacks/test_served.py `served` (the real data, an unreachable store, the agent API), which is also
    # tests/dashboard/test_browser_audiences.py's `research_server`; and that file's `annotation_server`
    "served": ("tests/attacks/test_served.py", "tests/attacks/test_suite_links.py",
               "tests/attacks/test_user_suites.py", "tests/dashboard/test_browser_audiences.py",
               "tests/dashboard/test_meta_eval_page.py", "tests/dashboard/test_browser_signin_tab.py",
               "tests/dashboard/test_browser_reports.py"),
    # The neural metrics' models, loaded once per process (metrics/neural.py): the two files that score them most
    # loaded them twice, once on each worker (8 s of a worker's time).
    "neural models": ("tests/metrics/test_neural.py", "tests/engine/test_run_independence.py"),
}
_GROUP_OF = {path: group for group, paths in SHARED_GROUPS.items() for path in paths}

# The longest work units (a group of SHARED_GROUPS or a file), longest first (worker seconds, docs/testing.md).
# They are collected first, and pyproject's `--no-loadscope-reorder` keeps that order, so each xdist worker
# starts on a long unit and the short ones fill in at the end: the two workers finish together. xdist's default
# order (most tests first) left the long files of few tests (a Dask cluster, three servers) for last, on one worker.
LONGEST_FIRST = (
    "served",
    "sample server",
    "tests/attacks/test_served_demo.py",
    "neural models",
    "tests/dashboard/test_browser_progress.py",
    "tests/metrics/test_meteor.py",
    "tests/suites/test_demetr.py",
    "tests/attacks/test_profile_surfaces.py",
    "tests/engine/test_distributed.py",
    "tests/metrics/test_sacre.py",
    "tests/test_conformance.py",
)


def work_unit(nodeid: str) -> str:
    """What runs whole on one xdist worker: the test's group in :data:`SHARED_GROUPS`, else its file."""
    path = nodeid.split("::")[0]
    return _GROUP_OF.get(path, path)


def pytest_collection_modifyitems(items):
    """Run the units of :data:`LONGEST_FIRST` first, in its order, then every other file in pytest's order; the
    files of a group are collected one after another, and every file's tests stay together and in order."""
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    unit_at, file_at = {}, {}  # where each unit's and each file's first test was collected
    for i, item in enumerate(items):
        unit_at.setdefault(work_unit(item.nodeid), i)
        file_at.setdefault(item.nodeid.split("::")[0], i)

    def order(item):
        unit = work_unit(item.nodeid)
        return rank.get(unit, len(rank)), unit_at[unit], file_at[item.nodeid.split("::")[0]]

    items.sort(key=order)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist, not known without it
def pytest_xdist_make_scheduler(config, log):
    """pyproject's `--dist loadfile`, with the files of a group of :data:`SHARED_GROUPS` as one unit."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class GroupedFiles(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return GroupedFiles(config, log)


class SharedServers:
    """The servers of the group of :data:`SHARED_GROUPS` this process is in, by name: one is started when a test
    first asks for it and stopped when the process leaves the group (or the session ends)."""

    def __init__(self):
        self._running: dict[str, object] = {}
        self._stack = ExitStack()

    def get(self, name: str, start: Callable[[], ContextManager]):
        """The value of the running server ``name``, entering ``start()`` (a context manager) if none runs."""
        if name not in self._running:
            self._running[name] = self._stack.enter_context(start())
        return self._running[name]

    def close(self) -> None:
        self._running.clear()
        stack, self._stack = self._stack, ExitStack()
        stack.close()


SERVERS = SharedServers()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After the last test of a work unit in this process (its module fixtures torn down), stop its servers."""
    try:
        return (yield)
    finally:
        if nextitem is None or work_unit(nextitem.nodeid) != work_unit(item.nodeid):
            SERVERS.close()


def pytest_configure():
    """One METEOR JVM per test process for the whole session. A start costs 5-8 s and 7-10 CPU seconds (the
    paraphrase table), and the tests that score METEOR are spread over many files, minutes apart: with the
    server's 30 s linger, most of them started their own. The tests of the JVM's own life set their linger
    (tests/metrics/test_meteor.py)."""
    from muttlab.metrics import meteor

    meteor.LINGER_S = 24 * 3600.0


def pytest_sessionfinish():
    SERVERS.close()


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


@pytest.fixture(scope="module")
def sample_server(tmp_path_factory):
    """One `muttlab serve` on the bundled sample, shared by the tests that need no other setting (the files of
    the "sample server" group in :data:`SHARED_GROUPS`): anonymous visitors, a private cache. A test may add
    pairs to its pair store; none may count on the store holding only its own. Its environment asks Streamlit for
    the agent API (``STREAMLIT_SERVER_ENABLE_AGENT_API``), which `muttlab serve` must refuse
    (tests/access/test_agent_api.py). Its warm-up is the full one, as `muttlab serve` ships it
    (tests/dashboard/test_browser_views.py watches it). Starting a server costs half a minute (its warm-up loads
    the METEOR JVM and spaCy before it opens)."""
    from tests.dashboard.test_browser import SampleServer, sample_env, serving

    @contextmanager
    def start():
        root = tmp_path_factory.mktemp("sample-server")
        env = sample_env(root / "cache", STREAMLIT_SERVER_ENABLE_AGENT_API="true", MUTTLAB_WARM_UP="full")
        with serving(env, root / "serve.log") as url:
            yield SampleServer(url, root / "serve.log", Settings(cache_dir=root / "cache"))

    return SERVERS.get("sample", start)


# The metrics every meta-evaluation equality test uses: sacrebleu's, fast enough for the suite (METEOR and
# BERTScore over 14,000 outputs belong to scripts/precompute_meta_eval.py).
SACRE = ["sentBLEU", "chrF", "TER"]


@pytest.fixture(scope="session")
def meta_settings(data_dir, tmp_path_factory) -> Settings:
    return Settings(data_dir=data_dir, cache_dir=tmp_path_factory.mktemp("meta-cache"), workers=1)


@pytest.fixture(scope="session")
def ted(meta_settings):
    """pair -> the TED MQM judgments, read once per test process (tests/meta and tests/snapshots use them)."""
    from muttlab.meta import mqm

    return {pair: mqm.load_ted(meta_settings, pair) for pair in mqm.TED_PAIRS}


@pytest.fixture(scope="session")
def ted_results(meta_settings, ted):
    """pair -> sentBLEU, chrF and TER meta-evaluated (item-grouped acc*_eq and the system level), scores kept."""
    from muttlab import api

    return {pair: api.meta_evaluate(meta_settings, judgments, metrics=SACRE,
                                    statistics=["acc_eq_item", "pairwise_acc_sys", "pearson_sys"], significance=[],
                                    keep_scores=True)
            for pair, judgments in ted.items()}


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

"""Forged scores: an outside metric never passes for a built-in one, never breaks a run or a listing, and a
read-only demo never writes the score cache it shares with a writer.

Each test plays the role that must fail: the author of an outside metric, registering it the way a
researcher does (``--metric-path``, ``MUTTLAB_METRICS``, an entry point of group ``muttlab.metrics``,
``Registry.add``), or the visitor of a read-only demo. The CLI runs in a subprocess on the real MUTT data.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from muttlab.engine.cache import ScoreCache, item_key
from muttlab.errors import MetricError, ReservedName
from muttlab.metrics.base import Metric
from muttlab.metrics.bleu import Bleu
from muttlab.metrics.cider import CiderD
from muttlab.metrics.registry import Registry
from muttlab.metrics.reval.installed import file_id, model_id
from muttlab.metrics.w2v import W2VAvg
from tests.conftest import REPO, run_muttlab

RUN_BLEU = ["run", "--metrics", "BLEU-4", "--corruptions", "neg_subj", "--refs", "5", "--format", "json"]
# Two contents whose SHA-256 agree on the first 12 hex digits (48 bits), found by a birthday search over
# 2^25 counters: what a 12-digit id cannot tell apart.
COLLIDING = (b"vectors 3336148\n", b"vectors 23006724\n")


def _shipped_cell(metric: str, corruption: str, refs: int) -> dict:
    """The published cell, from the grid the package ships (data/results/grid.json, a snapshot)."""
    grid = json.loads((REPO / "data" / "results" / "grid.json").read_text(encoding="utf-8"))
    return next(c for c in grid["content"]["cells"] if (c["metric"], c["corruption"], c["refs"]) == (metric, corruption, refs))


def _outside_module(folder: Path, module: str, name: str, params: str = "{}", body: str = "",
                    extra: str = "") -> None:
    """Write an outside metric's module: class ``Outside`` named ``name``, and ``make()`` that builds it.
    Without ``body`` it scores every candidate 0 (each trial a tie: a failure)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{module}.py").write_text(textwrap.dedent(f"""\
        import numpy as np
        from muttlab.metrics.base import Metric


        class Outside(Metric):
            name = {name!r}
            {extra}

            def params(self):
                return {params}

            def _score(self, candidates, references):
                {body or "return np.zeros(len(candidates))"}


        def make():
            return Outside()
        """), encoding="utf-8")


def _entry_point(folder: Path, name: str, target: str) -> None:
    """An installed distribution (its dist-info on the path) whose entry point ``name`` is ``target``."""
    info = folder / "outside_metrics-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: outside-metrics\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[muttlab.metrics]\n{name} = {target}\n")


def _muttlab(args: list[str], tmp_path: Path, env: dict | None = None, code: Path | None = None,
             data_dir: Path | None = None) -> subprocess.CompletedProcess:
    """``muttlab args`` in a fresh process, on the shared data, with the test's score cache."""
    environ = {"MUTTLAB_CACHE_DIR": str(tmp_path / "cache"), "MUTTLAB_WORKERS": "1",
               "PYTHONPATH": os.pathsep.join([*([str(code)] if code else []), str(REPO)])}
    if data_dir is not None:
        environ["MUTTLAB_DATA_DIR"] = str(data_dir)
    return run_muttlab(*args, env={**environ, **(env or {})}, cwd=tmp_path)


def _cell(result: subprocess.CompletedProcess, metric: str = "BLEU-4") -> dict:
    assert result.returncode == 0, result.stderr
    return next(c for c in json.loads(result.stdout) if c["metric"] == metric)


def _one_error_line(result: subprocess.CompletedProcess) -> str:
    """The run's only error line; the run exited 2 and printed no traceback."""
    assert result.returncode == 2, (result.returncode, result.stdout[-2000:], result.stderr[-2000:])
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("muttlab: error:")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def _registration(way: str, code: Path, path: str, name: str) -> tuple[list[str], dict]:
    """The CLI options and environment that register the outside metric at ``path`` in ``way``."""
    if way == "--metric-path":
        return ["--metric-path", path], {}
    if way == "MUTTLAB_METRICS":
        return [], {"MUTTLAB_METRICS": path}
    _entry_point(code, name, path)
    return [], {}


def _stored_scores(cache_file: Path) -> int:
    with sqlite3.connect(f"{cache_file.as_uri()}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT COUNT(*) FROM scores").fetchone()[0]


@pytest.mark.parametrize("way", ["--metric-path", "MUTTLAB_METRICS", "entry point"])
def test_an_outside_metric_cannot_take_a_built_in_name(way, data_dir, tmp_path):
    """Attack: an outside metric calls itself ``BLEU-4`` (with BLEU-4's parameters) and scores everything 0.
    Registered by ``--metric-path``, ``MUTTLAB_METRICS`` or an entry point, it silently replaced the built-in,
    its scores were cached under the built-in's signature, and every later plain ``muttlab run`` of BLEU-4
    on that cache reported 0/336 on neg_subj@5 instead of 327/336. The registration must be refused, and
    the plain run keep the published numbers."""
    code = tmp_path / "code"
    _outside_module(code, "forged_bleu", "BLEU-4", params="{'n': 4, 'tok': 'ptb', 'bp': 'closest'}")
    options, env = _registration(way, code, "forged_bleu:make", "BLEU-4")
    forged = _muttlab([RUN_BLEU[0], *options, *RUN_BLEU[1:]], tmp_path, env, code, data_dir)
    line = _one_error_line(forged)
    assert "'BLEU-4' is the name of a built-in metric" in line
    plain = _cell(_muttlab(RUN_BLEU, tmp_path, data_dir=data_dir))
    published = _shipped_cell("BLEU-4", "neg_subj", 5)
    assert (plain["passed"], plain["n"]) == (published["passed"], published["n"]) == (327, 336)


def test_registering_in_code_refuses_built_in_names():
    """Attack: ``Registry.add`` replaced the built-in metric of the same name (in any letter case) without a
    word, and a built-in class built with other arguments (``CiderD(sigma=3.0)``) took the built-in's name.
    Both are refused; such a variant is registered under a name of its own, and keeps its built-in origin."""
    class Forged(Metric):
        def _score(self, candidates, references):
            return np.zeros(len(candidates))

    registry = Registry(use_entry_points=False)
    for name in ("BLEU-4", "bleu-4", "ＢＬＥＵ-4", "all"):
        forged = Forged()
        forged.name = name
        with pytest.raises(ReservedName, match="name of a built-in metric"):
            registry.add(forged)
    with pytest.raises(ReservedName):
        registry.add(CiderD(sigma=3.0))
    assert registry.add(CiderD(sigma=3.0), name="CIDEr-D@sigma3") == "CIDEr-D@sigma3"
    assert registry.get("CIDEr-D@sigma3").signature() == "CIDEr-D@sigma3|n:4|sigma:3.0|tok:ptb|v:2"
    assert registry.get("CIDEr-D").signature() == "CIDEr-D|n:4|sigma:6.0|tok:ptb|v:2"
    assert registry.get("BLEU-4").signature() == "BLEU-4|n:4|tok:ptb|bp:closest|v:1"


def test_a_name_with_separators_cannot_spell_a_built_in_signature(data_dir, tmp_path):
    """Attack: an outside metric *named* ``BLEU-4|n:4|tok:ptb|bp:closest`` (no parameters, version 1) had
    the signature text of the real BLEU-4, ``|`` not being escaped: its zeros were cached under BLEU-4's key
    and served to the next plain run. Now every field is escaped and an outside metric's signature carries
    its origin, so it is a metric of its own whose scores never reach BLEU-4's."""
    name = "BLEU-4|n:4|tok:ptb|bp:closest"
    code = tmp_path / "code"
    _outside_module(code, "pipe_named", name)
    sys.path.insert(0, str(code))
    try:
        from pipe_named import make
        signature = make().signature()
    finally:
        sys.path.remove(str(code))
    assert signature.startswith("BLEU-4\\|n:4\\|tok:ptb\\|bp:closest|v:1|origin:pipe_named:Outside@sha256:")
    assert signature.endswith(hashlib.sha256((code / "pipe_named.py").read_bytes()).hexdigest())
    forged = _cell(_muttlab(["run", "--metric-path", "pipe_named:make", "--metrics", name, *RUN_BLEU[3:]], tmp_path,
                            code=code, data_dir=data_dir), name)
    # Registered by path, its origin is the one the registry found: the path and the file it names.
    digest = hashlib.sha256((code / "pipe_named.py").read_bytes()).hexdigest()
    assert forged["passed"] == 0 and forged["signature"].startswith(
        f"BLEU-4\\|n:4\\|tok:ptb\\|bp:closest|v:1|origin:import path pipe_named:make@sha256:{digest}|")
    plain = _cell(_muttlab(RUN_BLEU, tmp_path, data_dir=data_dir))
    assert plain["passed"] == _shipped_cell("BLEU-4", "neg_subj", 5)["passed"] == 327


def test_an_outside_metric_cannot_write_its_own_signature(data_dir, tmp_path):
    """Attack: an outside metric named ``Mine`` that defines ``signature()`` to return BLEU-4's had its zeros
    cached under BLEU-4's key. A metric's signature is built by ``Metric`` alone: such a class is refused
    when its module is imported, and BLEU-4's cached scores stay the real ones."""
    code = tmp_path / "code"
    _outside_module(code, "own_signature", "Mine",
                    extra="def signature(self):\n                return 'BLEU-4|n:4|tok:ptb|bp:closest|v:1'")
    forged = _muttlab(["run", "--metric-path", "own_signature:make", "--metrics", "Mine", *RUN_BLEU[3:]], tmp_path,
                      code=code, data_dir=data_dir)
    assert "defines signature()" in _one_error_line(forged)
    assert _cell(_muttlab(RUN_BLEU, tmp_path, data_dir=data_dir))["passed"] == 327


def test_two_vector_files_never_share_an_id(tmp_path):
    """Attack: model ids were the first 12 hex digits of a file's SHA-256 (48 bits). A second vector file
    with the id of the first was found in about a minute on one core (the two contents of ``COLLIDING``),
    installed over the first, and scored under its signature, so the scores of either were served from the
    cache for the other, even after the real file was put back. Ids in signatures are whole digests now."""
    first, second = COLLIDING
    assert hashlib.sha256(first).hexdigest()[:12] == hashlib.sha256(second).hexdigest()[:12]
    assert model_id(first) == hashlib.sha256(first).hexdigest() != model_id(second)
    vectors = tmp_path / "vectors.kv"
    vectors.write_bytes(first)
    real = W2VAvg(vectors=str(vectors)).signature()
    vectors.write_bytes(second)
    assert file_id(vectors) == hashlib.sha256(second).hexdigest()
    swapped = W2VAvg(vectors=str(vectors)).signature()
    assert real != swapped
    assert real == f"W2V-AVG|vectors:vectors.kv@{hashlib.sha256(first).hexdigest()}|combine:mean|tok:ptb|v:1"


def test_a_read_only_demo_never_writes_the_shared_cache(data_dir, tmp_path):
    """Attack: a read-only demo (``MUTTLAB_READ_ONLY``) sharing its score cache with a writer wrote every
    score its visitors' runs produced into that cache, so whatever a visitor could make the demo score
    reached the writer's runs. The demo now opens the cache read-only: it serves the writer's scores and
    stores none."""
    written = _cell(_muttlab(RUN_BLEU, tmp_path, data_dir=data_dir))
    cache_file = tmp_path / "cache" / "scores.sqlite"
    before = _stored_scores(cache_file)
    code = tmp_path / "code"
    _outside_module(code, "visitor_metric", "VisitorMetric", body="return np.ones(len(candidates))")
    demo = _muttlab(["run", "--metric-path", "visitor_metric:make", "--metrics", "BLEU-4,VisitorMetric,ROUGE-L",
                     *RUN_BLEU[3:]], tmp_path, {"MUTTLAB_READ_ONLY": "1"}, code, data_dir)
    assert _cell(demo)["passed"] == written["passed"] == 327
    assert _cell(demo, "ROUGE-L")["n"] == 336
    assert _stored_scores(cache_file) == before

    cache = ScoreCache(cache_file, read_only=True)
    cache.put_many({item_key("BLEU-4|n:4|tok:ptb|bp:closest|v:1", "", "a forged candidate", "refs"): 0.0})
    assert cache.mode == "read-only" and _stored_scores(cache_file) == before


BROKEN = {
    "raises": "raise RuntimeError('not today')",
    "returns strings": "return ['high'] * len(candidates)",
    "returns None": "return [None] * len(candidates)",
    "returns NaN": "return np.full(len(candidates), np.nan)",
    "returns too few": "return np.zeros(len(candidates) - 1)",
    "recurses without end": "return self._score(candidates, references)",
    "calls SystemExit": "raise SystemExit(7)",
    "raises a bare BaseException": "raise type('Escape', (BaseException,), {})('out')",
}


@pytest.mark.parametrize("behaviour", list(BROKEN))
def test_a_broken_outside_metric_ends_a_run_with_one_line(behaviour, data_dir, tmp_path):
    """Attack: an outside metric that raises, returns strings, None or NaN, recurses without end or calls
    ``SystemExit`` ended ``muttlab run`` in a traceback, a foreign exit status (7), or, for NaN and None,
    in numbers that were no scores. Now the run exits 2 with one line naming the metric."""
    code = tmp_path / "code"
    _outside_module(code, "broken_metric", "Broken", body=BROKEN[behaviour])
    result = _muttlab(["run", "--metric-path", "broken_metric:make", "--metrics", "Broken", *RUN_BLEU[3:]], tmp_path,
                      code=code, data_dir=data_dir)
    assert "Broken" in _one_error_line(result)


def test_a_metric_whose_params_raise_hides_no_other_metric(tmp_path):
    """Attack: an outside metric whose ``params()`` raises crashed ``muttlab metrics`` for every metric,
    and ``muttlab run`` of it in a traceback. Now the listing shows every other metric and this one as
    unavailable with the reason; the run exits 2 with one line."""
    code = tmp_path / "code"
    _outside_module(code, "bad_params", "BadParams", params="1 / 0")
    listing = _muttlab(["metrics", "--metric-path", "bad_params:make", "--format", "json"], tmp_path, code=code)
    assert listing.returncode == 0, listing.stderr
    rows = {row["metric"]: row for row in json.loads(listing.stdout)}
    assert rows["BLEU-4"]["available"] == "yes" and rows["ROUGE-L"]["available"] == "yes"
    assert rows["BadParams"]["available"] == "no"
    assert "ZeroDivisionError" in rows["BadParams"]["signature or reason"]
    run = _muttlab(["run", "--metric-path", "bad_params:make", "--metrics", "BadParams", "--suite", "sample"],
                   tmp_path, code=code)
    assert "BadParams" in _one_error_line(run)


def test_params_and_names_that_are_no_text_are_contained():
    """The in-process side of containment: ``params()`` that returns no dict, a parameter whose ``str()``
    raises, and a metric name that is no string give one MetricError naming the metric."""
    class Unprintable:
        def __str__(self):
            raise RecursionError("deep")

    class Odd(Metric):
        name = "Odd"

        def __init__(self, params):
            self._params = params

        def params(self):
            return self._params

        def _score(self, candidates, references):
            return np.zeros(len(candidates))

    with pytest.raises(MetricError, match="Odd .*params\\(\\) returned list"):
        Odd([1, 2]).signature()
    with pytest.raises(MetricError, match="Odd .*failed while giving its k as text: RecursionError: deep"):
        Odd({"k": Unprintable()}).signature()
    with pytest.raises(MetricError, match="failed while giving its name as text"):
        nameless = Odd({})
        nameless.name = Unprintable()
        nameless.signature()
    assert Odd({}).signature() != Bleu().signature()


def _probe_as_another_user(folder: Path) -> dict:
    """Open the cache in ``folder`` as a user who may not write there (nobody, when the tests run as root),
    try to store a score, then read the writer's: what happened, as a dict."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns into pytest
        status = 0
        try:
            os.close(read_end)
            if os.geteuid() == 0:
                os.setgid(65534)
                os.setuid(65534)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                cache = ScoreCache(folder / "scores.sqlite")
                cache.put_many({item_key("sig", "", "new candidate", "refs"): 2.0})
                served = cache.get_many([item_key("sig", "", "candidate", "refs")])
            report = {"mode": cache.mode, "served": list(served.values()),
                      "warnings": [str(w.message) for w in caught]}
            os.write(write_end, json.dumps(report).encode())
        except BaseException:
            status = 1
        finally:
            os._exit(status)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(data)


def test_a_read_only_cache_folder_is_reported_as_not_writable_and_still_read():
    """Defect: a score cache in a folder this process may not write (a hosted demo's copy of a writer's cache,
    the writer still running) was described by SQLite's error text alone, which could read as "damaged", and
    after the first failed write its scores were no longer served. Now the message says the file is not
    writable by this process, never damaged, and the writer's scores keep being served."""
    folder = Path(tempfile.mkdtemp(prefix="muttlab-ro-"))
    try:
        os.chmod(folder, 0o755)  # the other user must reach it
        writer = ScoreCache(folder / "scores.sqlite")
        writer.put_many({item_key("sig", "", "candidate", "refs"): 1.0})  # left open: -wal and -shm stay
        for path in folder.iterdir():
            os.chmod(path, 0o444)
        os.chmod(folder, 0o555)
        report = _probe_as_another_user(folder)
        assert report["served"] == [1.0]
        assert report["mode"] == "read-only"
        assert len(report["warnings"]) == 1 and "not writable by this process" in report["warnings"][0]
        assert "damaged" not in report["warnings"][0]
    finally:
        os.chmod(folder, 0o755)
        shutil.rmtree(folder)

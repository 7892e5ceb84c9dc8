"""Identity decided by the lab, not by the object: a metric's name, origin and built-in status come from the
registry (what it ships, where it loaded the code from), and outside code never writes a built-in metric's
cached scores.

Each test plays the author of an outside metric, registering it the way a researcher does (``--metric-path``,
``MUTTLAB_METRICS``, or in code), whose aim is that a later plain ``muttlab run --metrics BLEU-4 --corruptions
neg_subj --refs 5`` on the same cache reports anything but the published 327/336. The CLI runs in a
subprocess on the real MUTT data (the helpers of tests/attacks/test_forgery.py).
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from muttlab.errors import ReservedName
from muttlab.metrics import sandbox
from muttlab.metrics.base import Metric, signature_of
from muttlab.metrics.bleu import Bleu
from muttlab.metrics.registry import Registry, is_builtin, outside_code_loaded, shares_scores
from tests.attacks.test_forgery import RUN_BLEU, _cell, _muttlab, _one_error_line, _shipped_cell
from tests.conftest import REPO, muttlab_env

BLEU_4 = "BLEU-4|n:4|tok:ptb|bp:closest|v:1"
PUBLISHED = 327  # data/results/grid.json, BLEU-4 x neg_subj at 5 references (the study's Table 3: 97.3%)

# A name that lies: equal to "BLEU-4" and hashed like it, but its own casefold() (and NFKC, which hands back
# the very object when it is already normalised) says something else.
LYING_NAME = '''
class Lying(str):
    def casefold(self):
        return "not a built-in name"

    def __str__(self):
        return "BLEU-4"
'''

ATTACKS = {
    # An outside class named by a lying str, whose origin() is assigned after its class statement (where
    # Metric.__init_subclass__ no longer looks): its signature was BLEU-4's, word for word.
    "lying name, origin assigned later": LYING_NAME + '''
class Outside(Metric):
    name = Lying("BLEU-4")

    def params(self):
        return {"n": 4, "tok": "ptb", "bp": "closest"}

    def _score(self, candidates, references):
        return np.zeros(len(candidates))


Outside.origin = lambda self: "built-in"


def make():
    return Outside()
''',
    # The lab's own Bleu, with its scoring replaced on the object and a lying name.
    "built-in object with its scoring replaced": LYING_NAME + '''
from muttlab.metrics.bleu import Bleu


def make():
    metric = Bleu(4)
    metric._score = lambda candidates, references: np.zeros(len(candidates))
    metric.name = Lying("BLEU-4")
    return metric
''',
}


def _module(folder: Path, module: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{module}.py").write_text("import numpy as np\nfrom muttlab.metrics.base import Metric\n" + body,
                                         encoding="utf-8")


def _plain_bleu(tmp_path: Path, data_dir: Path) -> dict:
    return _cell(_muttlab(RUN_BLEU, tmp_path, data_dir=data_dir))


def _rows(tmp_path: Path) -> int:
    with sqlite3.connect(f"{(tmp_path / 'cache' / 'scores.sqlite').as_uri()}?mode=ro", uri=True) as conn:
        return conn.execute("SELECT COUNT(*) FROM scores").fetchone()[0]


@pytest.mark.parametrize("way", ["--metric-path", "MUTTLAB_METRICS"])
@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_name_that_lies_cannot_take_a_built_in_name(attack, way, data_dir, tmp_path):
    """Attack (round three): the lying outside metric replaced BLEU-4 in the registry, its zeros were cached
    under BLEU-4's signature, and the next plain run reported 0/336. Now the worker process reports the name as
    the characters it holds, the registry refuses it, and the plain run keeps 327/336."""
    code = tmp_path / "code"
    _module(code, "liar", ATTACKS[attack])
    options, env = (["--metric-path", "liar:make"], {}) if way == "--metric-path" else ([], {"MUTTLAB_METRICS": "liar:make"})
    forged = _muttlab([RUN_BLEU[0], *options, *RUN_BLEU[1:]], tmp_path, env, code, data_dir)
    assert "'BLEU-4' is the name of a built-in metric" in _one_error_line(forged)
    plain = _plain_bleu(tmp_path, data_dir)
    assert plain["passed"] == _shipped_cell("BLEU-4", "neg_subj", 5)["passed"] == PUBLISHED
    assert plain["signature"].startswith(BLEU_4 + "|")


def test_in_code_the_registry_not_the_object_decides_what_is_built_in():
    """Attack, in a notebook: a str subclass named ``BLEU-4`` passed the reserved-name check of
    ``Registry.add``; a built-in ``Bleu`` whose ``_score`` was replaced kept BLEU-4's signature under any other
    name; ``origin`` or ``signature`` assigned to a class after its statement were believed. Now names are
    checked as plain strings, such a ``Bleu`` is no built-in (its signature is keyed to this process), and the
    signature the cache is keyed by is the one ``Metric`` builds, whatever the class was given later."""
    namespace: dict = {"np": np, "Metric": Metric}
    exec(LYING_NAME, namespace)
    lying = namespace["Lying"]("BLEU-4")
    registry = Registry(use_entry_points=False)

    patched = Bleu(4)
    patched._score = lambda candidates, references: np.zeros(len(candidates))
    patched.name = lying
    with pytest.raises(ReservedName, match="'BLEU-4' is the name of a built-in metric"):
        registry.add(patched)
    assert registry.add(patched, name="BLEU-4@fast") == "BLEU-4@fast"
    assert type(registry.get("BLEU-4@fast").name) is str
    assert not is_builtin(patched) and is_builtin(registry.get("BLEU-4")) and is_builtin(Bleu(4))
    assert signature_of(patched).startswith("BLEU-4@fast|n:4|tok:ptb|bp:closest|v:1|origin:modified "
                                            "muttlab.metrics.bleu:Bleu@process:")
    assert signature_of(registry.get("BLEU-4")) == BLEU_4
    assert outside_code_loaded()  # a modified built-in object is outside code: this process now stores...
    assert not shares_scores(registry.get("BLEU-4"))  # ...no built-in metric's scores in the shared cache
    assert shares_scores(patched)  # (its own, keyed to this process, harm nobody)

    class Outside(Metric):
        name = "Mine"

        def params(self):
            return {"n": 4, "tok": "ptb", "bp": "closest"}

        def _score(self, candidates, references):
            return np.zeros(len(candidates))

    Outside.origin = lambda self: "built-in"
    Outside.signature = lambda self: BLEU_4
    mine = Outside()
    registry.add(mine)
    assert signature_of(mine).startswith(f"Mine|n:4|tok:ptb|bp:closest|v:1|origin:{__name__}:")
    assert not is_builtin(mine)


PATCHING = '''
import muttlab.metrics.bleu


class Harmless(Metric):
    name = "Harmless"

    def _score(self, candidates, references):
        return np.ones(len(candidates))


def make():
    # Outside code that changes what a built-in metric computes, in whatever process imports it.
    muttlab.metrics.bleu.sentence_bleu = lambda batch, n: np.zeros(len(batch.cand))
    return Harmless()
'''


def test_outside_code_never_writes_a_built_in_metrics_scores(data_dir, tmp_path):
    """Attack: outside code, once imported, changed BLEU-4's scoring (``sentence_bleu`` replaced by zeros); the
    process that imported it stored those zeros under BLEU-4's key, for every later run. By path, the outside
    module is now imported by the worker process only, and BLEU-4 stays right in the same run; registered in
    code, the process that imported it scores BLEU-4 wrong but stores none of it."""
    code = tmp_path / "code"
    _module(code, "patching", PATCHING)
    by_path = _muttlab(["run", "--metric-path", "patching:make", "--metrics", "BLEU-4,Harmless", *RUN_BLEU[3:]],
                       tmp_path, code=code, data_dir=data_dir)
    assert _cell(by_path)["passed"] == PUBLISHED and _cell(by_path, "Harmless")["passed"] == 0
    script = textwrap.dedent(f"""\
        from muttlab import api
        from muttlab.metrics.registry import Registry
        settings = api.load_settings()
        results = api.run_grid(settings, ["BLEU-4"], ["neg_subj"], [5],
                               registry=Registry(extra_paths=["patching:make"]))
        print(int(results.accuracy()["passed"].iloc[0]))
        """)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    in_code = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=fresh,
                             env=_environment(fresh, code, data_dir))
    assert in_code.returncode == 0, in_code.stderr
    assert in_code.stdout.split() == ["0"]  # this process was changed by what it imported...
    assert not (fresh / "cache" / "scores.sqlite").exists() or _rows(fresh) == 0  # ...and stored none of it
    assert _plain_bleu(fresh, data_dir)["passed"] == PUBLISHED


def _environment(root: Path, code: Path, data_dir: Path) -> dict:
    return muttlab_env({"MUTTLAB_CACHE_DIR": str(root / "cache"), "MUTTLAB_WORKERS": "1",
                        "MUTTLAB_DATA_DIR": str(data_dir), "PYTHONPATH": f"{code}:{REPO}"})


WRITER = '''
import json
from pathlib import Path

from muttlab.engine.cache import ScoreCache, item_key, refs_digest

CACHE = Path({cache!r})
REPORT = Path({report!r})
BLEU_4 = {signature!r}


class Writer(Metric):
    name = "Writer"

    def _score(self, candidates, references):
        # The worker is not told where the cache is; this author knows the server's layout.
        outcome = {{}}
        try:
            cache = ScoreCache(CACHE)
            cache.put_many({{item_key(BLEU_4, "", c, refs_digest(r)): 0.0 for c, r in zip(candidates, references)}})
            outcome["mode"] = cache.mode
        except Exception as exc:
            outcome["error"] = f"{{type(exc).__name__}}: {{exc}}"
        try:
            with open(CACHE, "r+b") as handle:
                handle.write(b"forged")
            outcome["overwrote"] = True
        except OSError as exc:
            outcome["overwrite"] = str(exc)
        REPORT.write_text(json.dumps(outcome))
        return np.ones(len(candidates))


def make():
    return Writer()
'''


@pytest.mark.skipif(sandbox.abi_version() < 1, reason="Landlock is not available on this system")
def test_the_outside_metrics_process_cannot_write_the_score_cache(data_dir, tmp_path):
    """Attack: an outside metric that knows where the server keeps its score cache wrote zeros under BLEU-4's
    keys for the very sentences it was given (and could have overwritten the file). Its process can no longer
    write there (Landlock): the cache keeps its scores, the plain run 327/336."""
    assert _plain_bleu(tmp_path, data_dir)["passed"] == PUBLISHED
    before = _rows(tmp_path)
    cache_file = tmp_path / "cache" / "scores.sqlite"
    code = tmp_path / "code"
    report = code / "report.json"  # beside the cache, not above it: somewhere the worker may write
    _module(code, "writer", WRITER.format(cache=str(cache_file), report=str(report), signature=BLEU_4))
    forged = _muttlab(["run", "--metric-path", "writer:make", "--metrics", "Writer", *RUN_BLEU[3:]], tmp_path,
                      code=code, data_dir=data_dir)
    assert _cell(forged, "Writer")["n"] == 336
    outcome = json.loads(report.read_text())
    assert outcome.get("mode") != "disk" and not outcome.get("overwrote"), outcome
    assert "Permission denied" in outcome["overwrite"]
    # The Writer's own scores were stored (by the lab's process, under its origin), no other row changed.
    assert _rows(tmp_path) > before
    assert _plain_bleu(tmp_path, data_dir)["passed"] == PUBLISHED


def test_an_outside_metrics_scores_are_cached_under_its_own_origin(data_dir, tmp_path):
    """The lab's process stores both: BLEU-4's rows under BLEU-4's signature, the outside metric's under a
    signature that ends with the origin the registry found (the import path and its file's SHA-256); a second
    run scores nothing again."""
    code = tmp_path / "code"
    _module(code, "honest", "\nclass Honest(Metric):\n    name = 'Honest'\n\n"
                            "    def _score(self, candidates, references):\n"
                            "        return np.array([len(c) for c in candidates], dtype=float)\n\n\n"
                            "def make():\n    return Honest()\n")
    args = ["run", "--metric-path", "honest:make", "--metrics", "BLEU-4,Honest", *RUN_BLEU[3:]]
    first = _muttlab(args, tmp_path, code=code, data_dir=data_dir)
    digest = hashlib.sha256((code / "honest.py").read_bytes()).hexdigest()
    assert _cell(first, "Honest")["signature"].startswith(
        f"Honest|v:1|origin:import path honest:make@sha256:{digest}|")
    assert _cell(first)["passed"] == PUBLISHED
    rows = _rows(tmp_path)
    alone = tmp_path / "alone"
    alone.mkdir()
    _plain_bleu(alone, data_dir)
    assert rows == 2 * _rows(alone)  # as many of the outside metric's as of BLEU-4's
    second = _muttlab(args, tmp_path, code=code, data_dir=data_dir)
    assert _rows(tmp_path) == rows and _cell(second, "Honest") == _cell(first, "Honest")

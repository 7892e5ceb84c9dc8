"""Sizes bounded before work, on the dashboard: an upload over the pair limit is refused before it is parsed, the
memos of finished results are capped in bytes, and the read-only demo keeps what it computes in a score cache of
its own, capped in bytes too, never in the shared one (AppTest as an anonymous visitor of the read-only demo;
the caches themselves).

On 6c8e244 an 18 MB WMT TSV of 734,499 tiny rows was parsed and scored at once, the memo kept 64 results
whatever they weighed (each such upload left ~1.4 GB resident), and the demo kept its scores in memory for the
one request that computed them."""
from __future__ import annotations

import hashlib
import sqlite3

import numpy as np
import pandas as pd
import pytest

import muttlab.suites
from muttlab.dashboard import services, shared
from muttlab.engine import runner
from muttlab.engine.cache import item_key
from muttlab.engine.private_cache import FILE_NAME, PrivateCache
from muttlab.settings import Limits, load_settings, set_limits
from tests.dashboard.conftest import app_env, open_page  # noqa: F401 (fixture)

WMT_HEADER = "lp\tsource\tgood\tincorrect\treference\tphenomena\n"


@pytest.fixture
def demo(app_env, monkeypatch):
    monkeypatch.setenv("MUTTLAB_READ_ONLY", "1")
    yield app_env
    set_limits(None)


def _upload(at, name: str, data: bytes):
    at.radio(key="ch-source").set_value("upload")
    at.file_uploader(key="ch-upload").set_value((name, data, "text/plain"))
    return at.run()


def _shown(at) -> str:
    return " ".join(e.value.replace("\\", "") for e in [*at.error, *at.warning])


def test_an_upload_over_the_pair_limit_is_refused_before_it_is_parsed(demo, monkeypatch):
    """Tiny rows: 100,001 pairs in 1.7 MB, far below the upload size limits (the CLI's limit, MUTTLAB_MAX_PAIRS,
    default 100,000, is the dashboard's too)."""
    data = (WMT_HEADER + "en-de\ts\tg\ti\tr\tp\n" * (Limits().max_pairs + 1)).encode()
    parsed = []
    monkeypatch.setattr(muttlab.suites, "read_suite", lambda *a, **k: parsed.append(1))
    at = _upload(open_page("challenge"), "tiny-rows.tsv", data)
    assert not at.exception and parsed == []
    assert ("the file has 100,001 pairs, over the limit of 100,000 (shorten the input, or raise MUTTLAB_MAX_PAIRS"
            in _shown(at))


def test_a_json_set_over_the_pair_limit_is_refused_once_read_and_never_scored(demo, data_dir, monkeypatch):
    """A DEMETR JSON document is one JSON value: its records are counted once it is read, before any is scored
    or kept."""
    set_limits(Limits(max_pairs=500))
    scored = []
    monkeypatch.setattr(muttlab.api, "run_challenge", lambda *a, **k: scored.append(1))
    data = (data_dir / "demetr" / "dataset" / "critical_id8_negation.json").read_bytes()
    at = _upload(open_page("challenge"), "negation.json", data)
    assert not at.exception and scored == []
    assert "the file has 1,000 pairs, over the limit of 500" in _shown(at)
    digest = hashlib.sha256(data).hexdigest()
    assert ("challenge-file", digest, "negation", None) not in shared.region("results")  # nothing kept
    assert not [b for b in at.button if b.key == "ch-score"]


def test_the_memo_of_finished_results_is_capped_in_bytes(demo, monkeypatch):
    """Results of several large uploads: the memo keeps what fits in MUTTLAB_MEMO_MB, newest first, and forgets
    a value over its whole cap."""
    monkeypatch.setenv("MUTTLAB_MEMO_MB", "64")
    shared.region.clear()  # the regions are made afresh, their caps read from MUTTLAB_MEMO_MB
    memo = shared.region("results")
    assert memo.max_bytes == 64 * 2 ** 20

    def upload_results(k: int, rows: int) -> pd.DataFrame:
        return pd.DataFrame({"trial": [f"upload{k}/{i}" for i in range(rows)], "metric": "BLEU-4",
                             "s_orig": np.random.default_rng(k).random(rows), "passed": True})

    weights = []
    for k in range(8):
        frame = upload_results(k, 300_000)  # 12.8 MB: five fit in 64 MiB
        weights.append(int(frame.memory_usage(deep=True).sum()))
        assert memo.put(("challenge", k), frame)
        assert memo.bytes <= memo.max_bytes
    assert shared.footprint(upload_results(0, 300_000)) == weights[0]
    kept = [key[1] for key in memo.items]
    assert kept == list(range(8))[-len(kept):] and 1 < len(kept) < 8
    assert not memo.put(("challenge", "huge"), upload_results(99, 1_600_000))  # alone over the cap: not kept
    assert memo.bytes <= memo.max_bytes and ("challenge", "huge") not in memo
    shared.region.clear()


@pytest.fixture
def small_memos(monkeypatch):
    """The process cache's regions made afresh under MUTTLAB_MEMO_MB=16, and forgotten again afterwards."""
    monkeypatch.setenv("MUTTLAB_MEMO_MB", "16")
    shared.region.clear()
    yield
    shared.region.clear()


def test_the_uploads_a_link_can_name_are_capped_in_bytes(demo, small_memos):
    held = shared.region("uploads")  # a quarter of MUTTLAB_MEMO_MB: 4 MiB
    assert held.max_bytes == 4 * 2 ** 20
    names = [services.remember_upload(bytes([k]) * 2 ** 20, f"upload-{k}") for k in range(8)]
    assert held.bytes <= 4 * 2 ** 20
    assert ("upload", names[-1].partition(":")[2]) in held and ("upload", names[0].partition(":")[2]) not in held


def _scores(path) -> int:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return db.execute("SELECT COUNT(*) FROM scores").fetchone()[0]


def test_the_demo_keeps_its_own_capped_score_cache_and_never_the_shared_one(tmp_path):
    shared = tmp_path / "shared-cache"
    writer = load_settings(cache_dir=shared)
    known = {item_key("BLEU-4|v:1", "", f"pre-warmed {i}", "refs"): 0.5 for i in range(100)}
    written = runner.cache_for(writer)
    written.put_many(known)
    written._drop_connection()  # the last connection's close writes the WAL into the file: it stays as it is now
    demo = load_settings(cache_dir=shared, read_only=True, demo_cache_override=tmp_path / "own",
                         limits=Limits(demo_cache_mb=1))
    before = (shared / "scores.sqlite").read_bytes()
    cache = runner.cache_for(demo)
    assert cache.get_many(list(known)) == known  # the writer's scores are served
    new = {item_key("BLEU-4|v:1", "", f"visitor {i}", "refs"): float(i) for i in range(60_000)}
    for start in range(0, len(new), 5_000):
        part = dict(list(new.items())[start:start + 5_000])
        cache.put_many(part)
    assert (shared / "scores.sqlite").read_bytes() == before  # nothing reached the shared file
    own = PrivateCache(tmp_path / "own", 2 ** 20)
    assert own.used_bytes() <= 2 ** 20 and 0 < _scores(tmp_path / "own" / FILE_NAME) < len(new)
    # A later request (another scorer, or the server after a restart) is warm with the newest scores.
    again = runner.cache_for(demo).get_many(list(new)[-1_000:])
    assert again == dict(list(new.items())[-1_000:])
    assert not runner.cache_for(demo).get_many(list(new)[:100])  # the oldest made room


def test_a_repeated_request_on_the_demo_is_answered_from_its_own_cache(demo, monkeypatch):
    """The same grid asked twice (the memo of finished runs forgotten in between, as after a restart): the
    second time nothing is scored."""
    scored = []
    real = runner._Scorer._parallel

    def counted(self, metric, jobs):
        scored.append(sum(len(c) for c, _ in jobs))
        return real(self, metric, jobs)

    monkeypatch.setattr(runner._Scorer, "_parallel", counted)
    settings = services.settings()
    selection = services.Selection(("BLEU-4",), ("neg_subj",), (5,))
    first = services.run_grid(settings, selection)
    assert scored
    shared.region("results").drop()
    scored.clear()
    second = services.run_grid(settings, selection)
    assert scored == [] and second.table["s_orig"].tolist() == first.table["s_orig"].tolist()

"""The score cache never fails a run: unusable files fall back to memory, damaged entries are recomputed."""
from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest

from muttlab.engine import cache as cache_module
from muttlab.engine.cache import CacheUnavailable, ScoreCache, item_key
from muttlab.engine.runner import run
from muttlab.trials import Suite
from muttlab.metrics.registry import Registry
from muttlab.settings import Settings
from tests.engine.counting_metric import WordOverlap

COUNTING = "tests.engine.counting_metric:make"
NOBODY = 65534


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch):
    monkeypatch.setattr(cache_module, "_warned", set())


@contextlib.contextmanager
def unprivileged():
    """File permissions as an ordinary user sees them: root (CI) ignores chmod, so drop to nobody."""
    if os.geteuid() != 0:
        yield
        return
    os.setegid(NOBODY)
    os.seteuid(NOBODY)
    try:
        yield
    finally:
        os.seteuid(0)
        os.setegid(0)


@pytest.fixture
def shared_dir():
    """A folder an unprivileged user can reach (pytest's tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="muttlab-cache-"))
    path.chmod(0o755)
    yield path
    for child in path.iterdir():
        child.chmod(0o644)
    for child in path.iterdir():
        child.unlink()
    path.chmod(0o755)
    path.rmdir()


def keys(n: int, signature: str = "sig|v:1") -> list[bytes]:
    return [item_key(signature, "", f"candidate {i}", "refs") for i in range(n)]


def filled(path: Path, n: int = 50) -> dict[bytes, float]:
    items = {k: i / 7 for i, k in enumerate(keys(n))}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a healthy file gives no warning
        cache = ScoreCache(path)
        cache.put_many(items)
    assert cache.mode == "disk"
    cache._drop_connection()
    return items


def open_warned(path: Path) -> tuple[ScoreCache, list[warnings.WarningMessage]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache = ScoreCache(path)
    return cache, [w for w in caught if issubclass(w.category, CacheUnavailable)]


def works_in_memory(cache: ScoreCache) -> None:
    items = {k: float(i) for i, k in enumerate(keys(5, "other|v:1"))}
    cache.put_many(items)
    assert cache.get_many(list(items)) == items


def test_healthy_cache_round_trips_and_persists(tmp_path):
    items = filled(tmp_path / "scores.sqlite")
    again = ScoreCache(tmp_path / "scores.sqlite")
    assert again.get_many(list(items)) == items and len(again) == len(items)


def test_read_only_folder_falls_back_to_memory_with_one_warning(shared_dir):
    shared_dir.chmod(0o555)
    with unprivileged():
        cache, warned = open_warned(shared_dir / "scores.sqlite")
        assert cache.mode == "memory" and len(warned) == 1
        assert "not writable" in str(warned[0].message) or "cannot create" in str(warned[0].message)
        works_in_memory(cache)
        _, second = open_warned(shared_dir / "scores.sqlite")
    assert second == []  # once per process and path
    assert not (shared_dir / "scores.sqlite").exists()


def test_read_only_file_keeps_serving_its_scores(shared_dir):
    path = shared_dir / "scores.sqlite"
    items = filled(path)
    for child in shared_dir.iterdir():
        child.chmod(0o444)
    shared_dir.chmod(0o555)
    with unprivileged():
        cache, warned = open_warned(path)
        assert len(warned) == 1 and "not writable" in str(warned[0].message)
        assert cache.mode == "read-only" and "its scores are used" in str(warned[0].message)
        assert cache.get_many(list(items)) == items
        works_in_memory(cache)
        assert cache.get_many(list(items)) == items


def test_random_bytes_are_not_a_cache(tmp_path):
    path = tmp_path / "scores.sqlite"
    path.write_bytes(np.random.default_rng(3).integers(0, 256, 8192, dtype=np.uint8).tobytes())
    cache, warned = open_warned(path)
    assert cache.mode == "memory" and len(warned) == 1 and "not a SQLite database" in str(warned[0].message)
    works_in_memory(cache)


def test_truncated_database_never_returns_wrong_scores(tmp_path):
    path = tmp_path / "scores.sqlite"
    items = filled(path, n=3000)
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.truncate(size // 3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cache = ScoreCache(path)
        got = cache.get_many(list(items))
    assert all(got[k] == items[k] for k in got)  # whatever is read back is right
    assert cache.mode == "memory" and len(got) < len(items)
    assert sum(issubclass(w.category, CacheUnavailable) for w in caught) == 1
    works_in_memory(cache)


def test_a_file_locked_by_another_process_is_not_waited_on(tmp_path):
    path = tmp_path / "scores.sqlite"
    items = filled(path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT OR REPLACE INTO scores VALUES (?, ?)", (keys(1)[0], 9.0))
    try:
        cache, warned = open_warned(path)
        assert cache.mode == "memory" and len(warned) == 1 and "locked" in str(warned[0].message)
        assert cache.get_many(list(items)) == {}
        works_in_memory(cache)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_damaged_rows_are_recomputed_not_returned(small_suite_with_cache):
    suite, settings, path = small_suite_with_cache
    registry = Registry(extra_paths=[COUNTING])
    first = run(suite, ["word-overlap"], [5], settings, registry).table
    with sqlite3.connect(path) as conn:
        stored = [k for (k,) in conn.execute("SELECT key FROM scores")]
        damaged = stored[:3]
        # What a damaged or hand-edited file can hold: text, a blob, an infinity where a score should be.
        for key, value in zip(damaged, ["garbage", b"\x00\x01", "1e999"]):
            conn.execute("UPDATE scores SET value = ? WHERE key = ?", (value, key))
    cache = ScoreCache(path)
    assert set(cache.get_many(stored)) == set(stored) - set(damaged)
    before = WordOverlap.scored
    second = run(suite, ["word-overlap"], [5], settings, registry).table
    assert WordOverlap.scored == before + len(damaged)
    assert np.array_equal(first[["s_orig", "s_corr"]].to_numpy(), second[["s_orig", "s_corr"]].to_numpy())
    assert set(ScoreCache(path).get_many(stored)) == set(stored)  # and written back healthy


def test_non_finite_scores_are_not_stored(tmp_path):
    cache = ScoreCache(tmp_path / "scores.sqlite")
    k = keys(3)
    cache.put_many({k[0]: float("nan"), k[1]: float("inf"), k[2]: 0.5})
    assert cache.get_many(k) == {k[2]: 0.5}


@pytest.fixture
def small_suite_with_cache(mutt_suite, data_dir, tmp_path):
    suite = Suite("mutt", mutt_suite.of("neg_verb")[:20])
    return suite, Settings(data_dir=data_dir, cache_dir=tmp_path, workers=1), tmp_path / "scores.sqlite"


def test_batch_keys_equal_one_by_one_keys(mutt_suite):
    """item_keys hashes a batch's common prefix once; its keys must be item_key's, or every cached score
    would be lost. Real candidates and reference digests, a corpus context, and a lone surrogate."""
    from muttlab.engine.cache import context_key, item_keys, refs_digest
    trials = mutt_suite.trials[:300]
    candidates = [t.corrupted for t in trials] + ["a lone \ud800 surrogate", ""]
    refs = [refs_digest(t.refs(5)) for t in trials] + ["x", ""]
    for context in ("", context_key([t.refs(5) for t in trials])):
        signature = "CIDEr-D|n:4|sigma:6.0|tok:ptb|v:2"
        assert item_keys(signature, context, candidates, refs) == [
            item_key(signature, context, c, r) for c, r in zip(candidates, refs)]

"""The pair store: revisions, optimistic concurrency, read-only mode, JSONL import/export."""
from __future__ import annotations

import json
import sqlite3
import threading

import pytest

from muttlab.errors import MuttlabError
from muttlab.settings import Settings
from muttlab.sources import load_sample
from muttlab.pairs.store import (ACCEPTED, EDITED, PROPOSED, REJECTED, ConflictError, PairNotFound, PairStore,
                          ReadOnlyError, open_store)


@pytest.fixture(scope="module")
def sample_trials():
    return load_sample().trials[:12]


@pytest.fixture
def store(settings, sample_trials):
    with open_store(settings) as s:
        s.add(sample_trials, author="builder", status=PROPOSED)
        yield s


def test_sqlite_store_is_in_wal_mode(sqlite_settings, sample_trials):
    with open_store(sqlite_settings) as store:
        store.add(sample_trials[:1], author="builder")
    path = sqlite_settings.cache_dir / "pairs.sqlite"
    assert path.is_file()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_add_keeps_trials_and_skips_known_keys(store, sample_trials):
    first = store.get_by_key(sample_trials[0].id)
    assert first.original == sample_trials[0].original and first.references == sample_trials[0].references
    assert first.status == PROPOSED and first.version == 1
    again = store.add(sample_trials, author="builder")
    assert (again.added, again.existing) == (0, len(sample_trials))


def test_two_writers_conflict_and_nothing_is_lost(settings, store):
    pair = store.list(limit=1).items[0]
    alice, bob = open_store(settings), open_store(settings)  # two independent connections
    seen_by_alice, seen_by_bob = alice.get(pair.id), bob.get(pair.id)
    saved = alice.edit(pair.id, seen_by_alice.version, {"corrupted": "Alice's version."}, author="alice")
    assert saved.version == seen_by_alice.version + 1 and saved.status == EDITED
    with pytest.raises(ConflictError) as err:
        bob.edit(pair.id, seen_by_bob.version, {"corrupted": "Bob's version."}, author="bob")
    message = str(err.value)
    assert "alice" in message and f"version {saved.version}" in message
    # Bob's text comes back with the refusal; Alice's edit is what is stored, and in the history.
    assert err.value.attempted == {"corrupted": "Bob's version."}
    assert err.value.current.corrupted == "Alice's version."
    assert store.get(pair.id).corrupted == "Alice's version."
    assert [r.author for r in store.history(pair.id)] == ["builder", "alice"]
    # Bob reloads and re-applies: now it is saved on top of Alice's.
    retried = bob.edit(pair.id, err.value.current.version, {"corrupted": "Bob's version."}, author="bob")
    assert retried.version == saved.version + 1
    assert store.version_at(pair.id, saved.version)["corrupted"] == "Alice's version."
    alice.close(), bob.close()


def test_concurrent_threads_one_wins_per_version(settings, store):
    pair = store.list(limit=1).items[0]
    outcomes: list[str] = []
    barrier = threading.Barrier(4)

    def writer(n: int) -> None:
        local = open_store(settings)
        barrier.wait()
        try:
            local.edit(pair.id, pair.version, {"corrupted": f"writer {n}"}, author=f"w{n}")
            outcomes.append("saved")
        except ConflictError:
            outcomes.append("conflict")
        finally:
            local.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["conflict"] * 3 + ["saved"]
    history = store.history(pair.id)
    assert len(history) == 2 and store.get(pair.id).corrupted == f"writer {history[-1].author[1:]}"


def test_versions_reported_under_contention_are_the_ones_written(settings, store):
    """Writers retry on conflict; each save must report the version it wrote, with its own text."""
    pair = store.list(limit=1).items[0]
    writers, edits = 6, 10
    reported: list[tuple[int, str, str]] = []
    errors: list[BaseException] = []
    lock = threading.Lock()
    barrier = threading.Barrier(writers)

    def writer(n: int) -> None:
        local = open_store(settings)
        try:
            barrier.wait()
            for k in range(edits):
                text = f"writer {n} edit {k}"
                while True:
                    base = local.get(pair.id).version
                    try:
                        saved = local.edit(pair.id, base, {"corrupted": text}, author=f"w{n}")
                        break
                    except ConflictError:
                        continue
                with lock:
                    reported.append((saved.version, saved.corrupted, text))
        except BaseException as exc:  # surfaced below, not lost in the thread
            errors.append(exc)
        finally:
            local.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert sorted(v for v, _, _ in reported) == list(range(2, writers * edits + 2))  # none lost, none repeated
    assert all(saved == typed for _, saved, typed in reported)
    history = {r.version: r.after["corrupted"] for r in store.history(pair.id)}
    assert all(history[v] == typed for v, _, typed in reported)


def test_history_rebuilds_every_version(store):
    pair = store.list(limit=1).items[0]
    seen = {1: pair.snapshot()}
    current = pair
    steps = [("edit", {"corrupted": "A man a red jacket is riding."}),
             ("accept", None),
             ("edit", {"original": "A man in red rides a bike.", "references": ["One.", "Two."]}),
             ("reject", None),
             ("edit", {"corruption": "typo", "corrupted": "A man in red rdies a bike."})]
    for action, changes in steps:
        if action == "edit":
            current = store.edit(current.id, current.version, changes, author="ann")
        elif action == "accept":
            current = store.accept(current.id, author="ann", base_version=current.version)
        else:
            current = store.reject(current.id, author="ann")
        seen[current.version] = current.snapshot()
    assert sorted(seen) == list(range(1, len(steps) + 2))
    for version, snapshot in seen.items():
        assert store.version_at(pair.id, version) == snapshot
    history = store.history(pair.id)
    assert [r.action for r in history] == ["create", "edit", "accept", "edit", "reject", "edit"]
    for older, newer in zip(history, history[1:]):
        assert newer.before == older.after
    assert store.get(pair.id).status == EDITED


def test_accept_and_reject_and_suite_statuses(store):
    items = store.list(limit=3).items
    store.accept(items[0].id, author="ann")
    store.reject(items[1].id, author="ann")
    assert store.get(items[0].id).status == ACCEPTED and store.get(items[1].id).status == REJECTED
    keys = {t.id for t in store.trials()}
    assert items[0].key in keys and items[1].key not in keys and items[2].key in keys
    with pytest.raises(ConflictError):
        store.accept(items[2].id, author="ann", base_version=items[2].version + 5)


def test_edit_validates_fields(store):
    pair = store.list(limit=1).items[0]
    for changes, words in [({"corrupted": "   "}, "empty"), ({"corruption": "nonsense"}, "unknown corruption"),
                           ({"status": "accepted"}, "cannot edit"), ({"references": []}, "references"),
                           ({}, "nothing to change")]:
        with pytest.raises(MuttlabError, match=words):
            store.edit(pair.id, pair.version, changes, author="ann")
    with pytest.raises(MuttlabError, match="author"):
        store.edit(pair.id, pair.version, {"corrupted": "x y"}, author=" ")
    with pytest.raises(PairNotFound):
        store.edit(99999, 1, {"corrupted": "x y"}, author="ann")
    assert store.get(pair.id).version == pair.version  # nothing was written


def test_user_text_is_stored_as_given(store):
    pair = store.list(limit=1).items[0]
    text = '<script>alert("x")</script> & café — 100% _done_ '
    store.edit(pair.id, pair.version, {"corrupted": text}, author="<b>ann</b>")
    assert store.get(pair.id).corrupted == text
    assert store.history(pair.id)[-1].author == "<b>ann</b>"
    assert [p.id for p in store.list(text="100% _done").items] == [pair.id]
    assert store.list(text="100%_").total == 0  # % and _ are matched literally


def test_list_filters_and_paging(store, sample_trials):
    total = store.list().total
    assert total == len(sample_trials)
    pages = [store.list(offset=o, limit=5) for o in range(0, total, 5)]
    assert [p.id for page in pages for p in page.items] == [p.id for p in store.list(limit=None).items]
    kind = sample_trials[0].corruption
    assert {p.corruption for p in store.list(corruption=kind).items} == {kind}
    assert store.list(corruption=kind).total == sum(t.corruption == kind for t in sample_trials)
    word = sample_trials[0].original.split()[2]
    assert all(word.lower() in (p.original + p.corrupted).lower() for p in store.list(text=word.upper()).items)
    assert store.list(status=ACCEPTED).total == 0


def test_read_only_store_refuses_every_write(settings, store, tmp_path):
    pair = store.list(limit=1).items[0]
    reader = PairStore(settings.store_url, read_only=True)
    assert reader.get(pair.id) == pair and reader.list().total == store.list().total
    good = tmp_path / "one.jsonl"
    good.write_text(json.dumps({"corruption": "typo", "original": "A b c", "corrupted": "A c b",
                                "references": ["A b c"]}) + "\n")
    writes = [lambda: reader.edit(pair.id, pair.version, {"corrupted": "x y"}, author="ann"),
              lambda: reader.accept(pair.id, author="ann"), lambda: reader.reject(pair.id, author="ann"),
              lambda: reader.add(load_sample().trials[20:21], author="ann"),
              lambda: reader.import_jsonl(good, author="ann")]
    for write in writes:
        with pytest.raises(ReadOnlyError):
            write()
    assert store.get(pair.id) == pair
    reader.close()


INSERT_REVISION = ("INSERT INTO revisions (pair_id, version, action, author, at, after) "
                   "VALUES (1, 9, 'x', 'x', 'x', '{}')")
SQLITE_WRITES = ["WITH doomed AS (SELECT id FROM pairs) DELETE FROM pairs WHERE id IN (SELECT id FROM doomed)",
                 INSERT_REVISION,
                 "UPDATE pairs SET corrupted = 'x'",
                 "PRAGMA user_version = 7",
                 "DROP TABLE revisions",
                 "CREATE TEMP TABLE scratch (a)"]
POSTGRES_WRITES = ["WITH doomed AS (DELETE FROM pairs RETURNING id) SELECT count(*) FROM doomed",
                   INSERT_REVISION,
                   "UPDATE pairs SET corrupted = 'x'",
                   "DROP TABLE revisions",
                   "CREATE TABLE scratch (a int)"]


def test_read_only_database_refuses_writes_itself(settings, store, tmp_path):
    """Below the API the database refuses writes: no statement text is inspected by us."""
    from sqlalchemy import text
    from sqlalchemy.exc import DBAPIError

    pair = store.list(limit=1).items[0]
    reader = PairStore(settings.store_url, read_only=True)
    sqlite = reader.engine.dialect.name == "sqlite"
    statements = SQLITE_WRITES if sqlite else POSTGRES_WRITES
    for statement in statements:
        with pytest.raises(DBAPIError, match="readonly|read-only|too many attached"):
            with reader.engine.begin() as conn:
                conn.execute(text(statement))
    if sqlite:
        # writable_schema is a connection flag; the write it would allow is still refused.
        with pytest.raises(DBAPIError, match="readonly"):
            with reader.engine.begin() as conn:
                conn.execute(text("PRAGMA writable_schema = ON"))
                conn.execute(text("UPDATE sqlite_master SET sql = 'x' WHERE name = 'pairs'"))
        # ATTACH would open a second, writable file through the read-only connection.
        other = tmp_path / "other.sqlite"
        with pytest.raises(DBAPIError, match="too many attached"):
            with reader.engine.begin() as conn:
                conn.execute(text(f"ATTACH DATABASE '{other}' AS other"))
        assert not other.exists()
        # Turning query_only off again does not make the file writable: it was opened with mode=ro.
        with pytest.raises(DBAPIError, match="readonly"):
            with reader.engine.begin() as conn:
                conn.execute(text("PRAGMA query_only = OFF"))
                conn.execute(text("DELETE FROM pairs"))
    assert store.get(pair.id) == pair and store.list().total == reader.list().total
    assert [r.version for r in store.history(pair.id)] == [1]
    reader.close()


def test_read_only_settings_give_a_read_only_store(tmp_path):
    with open_store(Settings(cache_dir=tmp_path / "nowhere", read_only=True)) as reader:
        assert reader.read_only and reader.list().total == 0 and reader.counts() == {}
        assert not (tmp_path / "nowhere").exists()  # nothing was created
        with pytest.raises(ReadOnlyError):
            reader.accept(1, author="ann")


def test_import_rejects_bad_lines_and_keeps_good_ones(settings, tmp_path):
    good = {"corruption": "typo", "original": "A dog runs.", "corrupted": "A dog rnus.",
            "references": ["A dog is running.", "A dog runs on grass."], "human_score": None}
    lines = [json.dumps({**good, "id": "typo/one"}),
             '{"corruption": "typo", "original": "A dog runs."',                       # 2: bad JSON
             json.dumps({**good, "corruption": "not_a_type"}),                          # 3: unknown type
             json.dumps({**good, "corrupted": ""}),                                     # 4: empty sentence
             "",
             json.dumps({**good, "id": "typo/two", "source": "mine"}),
             json.dumps([1, 2]),                                                         # 7: not an object
             json.dumps({k: v for k, v in good.items() if k != "references"})]          # 8: missing field
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with open_store(settings) as store:
        report = store.import_jsonl(path, author="ann")
        assert report.added == 2 and not report.ok
        assert [e.line for e in report.errors] == [2, 3, 4, 7, 8]
        by_line = {e.line: e.problem for e in report.errors}
        assert "malformed JSON" in by_line[2] and "unknown corruption" in by_line[3]
        assert "empty" in by_line[4] and "object" in by_line[7] and "references" in by_line[8]
        assert store.get_by_key("typo/two").source == "mine"
        assert store.get_by_key("typo/one").status == PROPOSED
        assert "line 2" in report.summary()
        # Importing again adds nothing and overwrites nothing.
        assert store.import_jsonl(path, author="ann").existing == 2


def test_export_then_import_round_trips(store, tmp_path, sample_trials):
    pair = store.list(limit=1).items[0]
    store.edit(pair.id, pair.version, {"corrupted": "Ünïcode — kept"}, author="ann")
    out = tmp_path / "out.jsonl"
    text = store.export_jsonl(out)
    assert out.read_text(encoding="utf-8") == text and len(text.splitlines()) == len(sample_trials)
    with PairStore(f"sqlite:///{tmp_path / 'copy.sqlite'}") as copy:
        report = copy.import_jsonl(out, author="ann")
        assert report.ok and report.added == len(sample_trials)
        for a, b in zip(store.list(limit=None).items, copy.list(limit=None).items):
            assert (a.key, a.corruption, a.original, a.corrupted, a.references, a.status, a.source) == \
                   (b.key, b.corruption, b.original, b.corrupted, b.references, b.status, b.source)


UNICODE = ["line\u2028separator and paragraph\u2029separator", "next\x85line", "emoji 🙂🐕‍🦺 and flags 🇩🇪",
           "עברית מימין לשמאל", "العربية \u202eRTL override\u202c", "tab\tand \x0b vertical", "combining é",
           "bidi \u2066isolate\u2069", "zero\u200bwidth"]


def test_export_import_round_trips_any_unicode(store, tmp_path):
    items = store.list(limit=len(UNICODE)).items
    for pair, text in zip(items, UNICODE):
        store.edit(pair.id, pair.version, {"corrupted": text, "references": [text, "A plain one."]}, author="ann")
    out = tmp_path / "out.jsonl"
    text = store.export_jsonl(out)
    # One record per line for every reader, including those that split on U+2028 and friends.
    assert len(text.splitlines()) == store.list().total
    with PairStore(f"sqlite:///{tmp_path / 'copy.sqlite'}") as copy:
        report = copy.import_jsonl(out, author="ann")
        assert report.ok, report.summary()
        for pair, typed in zip(items, UNICODE):
            got = copy.get_by_key(pair.key)
            assert got.corrupted == typed and got.references == (typed, "A plain one.")


def test_bad_store_url_is_a_clear_error():
    with pytest.raises(MuttlabError, match="pair store"):
        PairStore("nosuchdialect://x/y")


def test_cli_pairs_review_cycle(tmp_path, capsys, sample_trials):
    from muttlab.cli import main
    with open_store(Settings(cache_dir=tmp_path)) as store:
        store.add(sample_trials[:3], author="builder", status=PROPOSED)
        key = sample_trials[0].id
    base = ["--cache-dir", str(tmp_path)]
    assert main(["pairs", "list", *base, "--format", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["id"] for r in listed] == [t.id for t in sample_trials[:3]]
    assert main(["pairs", "edit", key, *base, "--base-version", "1", "--corrupted", "Edited.", "--author", "ann"]) == 0
    assert main(["pairs", "edit", key, *base, "--base-version", "1", "--corrupted", "Late.", "--author", "bob"]) == 2
    assert "changed by ann" in capsys.readouterr().err
    assert main(["pairs", "accept", "2", *base, "--author", "ann"]) == 0
    assert main(["pairs", "reject", "3", *base, "--author", "ann", "--base-version", "7"]) == 2
    assert main(["pairs", "show", key, *base, "--history", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["corrupted"] == "Edited." and [h["author"] for h in shown["history"]] == ["builder", "ann"]
    out = tmp_path / "export.jsonl"
    assert main(["pairs", "export", *base, "--status", "edited,accepted", "-o", str(out)]) == 0
    assert [json.loads(line)["status"] for line in out.read_text().splitlines()] == ["edited", "accepted"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n" + out.read_text().splitlines()[0] + "\n")
    assert main(["pairs", "import", str(bad), *base, "--author", "ann"]) == 2
    assert "line 1: malformed JSON" in capsys.readouterr().err
    assert main(["pairs", "show", "999", *base]) == 2


def test_revert_restores_an_earlier_version_as_a_new_revision(tmp_path):
    from muttlab.pairs.store import PairStore
    from muttlab.trials import Trial

    store = PairStore(f"sqlite:///{tmp_path / 'pairs.sqlite'}")
    store.add([Trial("t/1", "neg_subj", "A man rides.", "No man rides.", ("A man is riding.",))], author="ann")
    pair = store.get_by_key("t/1")
    assert store.latest_revision() == 1
    store.edit(pair.id, 1, {"corrupted": "There is no man riding."}, author="bob")
    store.accept(pair.id, author="bob", base_version=2)
    reverted = store.revert(pair.id, 1, author="ann", base_version=3)
    assert (reverted.version, reverted.corrupted, reverted.status) == (4, "No man rides.", pair.status)
    assert [r.action for r in store.history(pair.id)][-1] == "revert"
    assert store.latest_revision() == 4
    with pytest.raises(MuttlabError, match="revert to an earlier one"):
        store.revert(pair.id, 4, author="ann")


def test_trials_copied_from_a_suite_start_unreviewed_with_their_provenance(settings, sample_trials):
    """The sample's trials are published as accepted (Trial.status); copied into the store they await review,
    keep their source (``sample:<scene>``), and their first revision is the copier's import."""
    assert {t.status for t in sample_trials} == {ACCEPTED}
    with open_store(settings) as store:
        report = store.add(sample_trials, author="Ada", imported_from="suite:sample")
        assert report.added == len(sample_trials)
        for trial in sample_trials:
            pair = store.get_by_key(trial.id)
            assert pair.status == PROPOSED and pair.source == trial.source and trial.source.startswith("sample:")
            (first,) = store.history(pair.id)
            assert (first.action, first.author, first.after["status"]) == ("import", "Ada", PROPOSED)


def test_an_import_gives_its_suite_as_the_source_of_a_trial_without_one(settings):
    from muttlab.trials import Trial

    with open_store(settings) as store:
        store.add([Trial("t/1", "neg_subj", "A man rides.", "No man rides.", ("A man is riding.",))], author="Ada",
                  imported_from="suite:mine")
        assert store.get_by_key("t/1").source == "suite:mine"
        with pytest.raises(MuttlabError, match="imported_from holds a NUL"):
            store.add([], author="Ada", imported_from="suite:\x00")

"""Fuzz the pair import: poison lines among good ones, on SQLite and PostgreSQL.

A bad line (invalid UTF-8, a lone surrogate, a 400-digit number, nesting 100,000 deep, a NUL, a sentence
over the limits, a field of the wrong type...) is reported with its number; every good line is kept, its
text exactly as written; nothing escapes as an exception. ``muttlab pairs import`` says the same on stderr.
"""
from __future__ import annotations

import json
import random

import pytest

from muttlab.cli import main
from muttlab.errors import MuttlabError
from muttlab.pairs.store import open_store
from muttlab.settings import Limits, set_limits

SEED = 20261123
GOOD_TEXTS = ["A dog runs on the grass.", "Ein Hund läuft über die Wiese.", "كلب يجري على العشب",
              "A dog\u2028runs.", "🐕 runs 🌿", "A \u202edog\u202c runs.", "tab\tinside", "quote \" and \\ slash",
              "line\u2029break", "NEL\x85here"]

# (raw line, what the reported problem must mention)
POISON = [
    (b'{"corruption": "typo", "original": "\\ud800", "corrupted": "x", "references": ["y"]}', "lone surrogate"),
    (b'{"corruption": "typo", "original": "a", "corrupted": "b", "references": ["c"], "human_score": '
     + b"9" * 400 + b"}", "human_score must be a finite number"),
    (b'{"corruption": "typo", "original": "a", "corrupted": "b", "references": ["c"], "human_score": '
     + b"9" * 5000 + b"}", "malformed JSON"),
    (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
    (b'{"corruption": "typo", "original": "a\xff\xfe", "corrupted": "b", "references": ["c"]}', "not valid UTF-8"),
    (b'{"corruption": "typo", "original": "a\\u0000b", "corrupted": "b", "references": ["c"]}', "NUL"),
    (b'{"corruption": "typo", "original": "a", "corrupted": "b", "references": "c"}', "references must be"),
    (b'{"corruption": "typo", "original": 5, "corrupted": "b", "references": ["c"]}', "empty"),
    (b'{"corruption": "typo", "original": "a", "corrupted": "b", "references": [null]}', "references must be"),
    (b'{"corruption": ["typo"], "original": "a", "corrupted": "b", "references": ["c"]}', "type name"),
    (b'{"corruption": "typo", "original": "a", "corrupted": "b", "references": ["c"], "human_score": NaN}',
     "finite number"),
    (b'{"corruption": "typo", "original": "a", "corrupted": "b", "references": ["c"], "id": 12}',
     "id must be a string"),
    (b'{"corruption": "typo", "original": "a", "corrupted": "b", "references": ["c"], "id": "' + b"k" * 300 + b'"}',
     "at most 200"),
    (b'{"corruption": "typo", "original": "a", "corrupted": "b", "references": ["c"], "source": {"x": 1}}',
     "source must be a string"),
    (b'{"corruption": "typo", "original": "a", "corrupted": "b", "references": ["c"], "status": "gone"}',
     "status must be one of"),
    (b'{"corruption": "typo", "original": "' + b"w " * 300 + b'", "corrupted": "b", "references": ["c"]}',
     "MUTTLAB_MAX_WORDS"),
    (json.dumps({"corruption": "typo", "original": "a", "corrupted": "b", "references": ["c"] * 60}).encode(),
     "MUTTLAB_MAX_REFS"),
    (b'"just a string"', "JSON object"),
    (b"{broken", "malformed JSON"),
    (b"\x00\x01\x02", "malformed JSON"),
]


@pytest.fixture(autouse=True)
def default_limits():
    set_limits(Limits())
    yield
    set_limits(None)


def fuzz_file(path, rng: random.Random, n_lines: int):
    """Write a JSONL file of good and poison lines; returns {line: good record} and {line: expected words}."""
    good, bad, lines = {}, {}, []
    for number in range(1, n_lines + 1):
        if rng.random() < 0.4:
            raw, words = rng.choice(POISON)
            bad[number] = words
            lines.append(raw)
        else:
            text = rng.choice(GOOD_TEXTS)
            record = {"id": f"typo/fuzz-{number}", "corruption": "typo", "original": text,
                      "corrupted": text[::-1] or "x", "references": [rng.choice(GOOD_TEXTS), text],
                      "human_score": rng.choice([None, 3.5, 1])}
            good[number] = record
            lines.append(json.dumps(record, ensure_ascii=rng.random() < 0.5).encode("utf-8"))
    path.write_bytes(b"\n".join(lines) + b"\n")
    return good, bad


def test_import_keeps_every_good_line_and_names_every_bad_one(settings, tmp_path):
    rng = random.Random(SEED)
    path = tmp_path / "fuzz.jsonl"
    good, bad = fuzz_file(path, rng, 120)
    with open_store(settings) as store:
        report = store.import_jsonl(path, author="fuzz")
        assert report.added == len(good)
        assert {e.line: e.problem for e in report.errors}.keys() == bad.keys()
        for error in report.errors:
            assert bad[error.line] in error.problem, (error.line, error.problem)
        for number, record in good.items():
            stored = store.get_by_key(record["id"])
            assert (stored.original, stored.corrupted, stored.references) == \
                   (record["original"], record["corrupted"], tuple(record["references"]))
        # Exported and imported again elsewhere: the same pairs, nothing rejected.
        out = tmp_path / "out.jsonl"
        store.export_jsonl(out)
    with open_store(settings.with_overrides(cache_dir=tmp_path / "copy", database_url="")) as copy:
        again = copy.import_jsonl(out, author="fuzz")
        assert again.ok and again.added == len(good)


@pytest.mark.parametrize("seed", range(3))
def test_random_poison_files_never_raise(sqlite_settings, tmp_path, seed):
    rng = random.Random(seed)
    path = tmp_path / "fuzz.jsonl"
    data, intact = bytearray(), []
    no_newline = [b for b in range(256) if b != 0x0A]
    for number in range(1, 61):
        choice = rng.random()
        record = {"id": f"typo/r{number}", "corruption": "typo", "original": rng.choice(GOOD_TEXTS),
                  "corrupted": "b c", "references": ["d e"]}
        if choice < 0.25:
            data += rng.choice(POISON)[0]
        elif choice < 0.5:  # a good line with random bytes changed
            line = bytearray(json.dumps(record, ensure_ascii=False).encode())
            for _ in range(rng.randint(1, 4)):
                line[rng.randrange(len(line))] = rng.choice(no_newline)
            data += line
        elif choice < 0.75:
            data += bytes(rng.choice(no_newline) for _ in range(rng.randint(0, 80)))
        else:
            intact.append(record["id"])
            data += json.dumps(record, ensure_ascii=False).encode()
        data += b"\n"
    path.write_bytes(bytes(data))
    with open_store(sqlite_settings) as store:
        report = store.import_jsonl(path, author="fuzz")
        assert report.added + len(report.errors) <= 60 and report.added >= len(intact) > 0
        assert all(1 <= e.line <= 60 and e.problem for e in report.errors)
        assert store.list(limit=None).total == report.added
        assert all(store.get_by_key(key).corrupted == "b c" for key in intact)


def test_over_the_caps_the_whole_file_is_refused(sqlite_settings, tmp_path):
    path = tmp_path / "many.jsonl"
    line = json.dumps({"corruption": "typo", "original": "a b", "corrupted": "b a", "references": ["a b"]})
    path.write_text("\n".join([line] * 30) + "\n", encoding="utf-8")
    set_limits(Limits(max_pairs=20))
    with open_store(sqlite_settings) as store:
        with pytest.raises(MuttlabError, match=r"30 pairs, over the limit of 20 .*MUTTLAB_MAX_PAIRS"):
            store.import_jsonl(path, author="fuzz")
        assert store.list().total == 0
        set_limits(Limits(max_upload_mb=1))
        path.write_bytes((line.encode() + b"\n") * 20_000)
        with pytest.raises(MuttlabError, match=r"MiB, over the limit of 1 .*MUTTLAB_MAX_UPLOAD_MB"):
            store.import_jsonl(path, author="fuzz")
        assert store.list().total == 0


def test_cli_import_reports_lines_and_exits_2(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("MUTTLAB_DATABASE_URL", raising=False)
    path = tmp_path / "mixed.jsonl"
    good = json.dumps({"corruption": "typo", "original": "A cat sits.", "corrupted": "A cat sist.",
                       "references": ["A cat is sitting."]})
    path.write_bytes(POISON[0][0] + b"\n" + good.encode() + b"\n" + POISON[3][0] + b"\n")
    assert main(["pairs", "import", str(path), "--author", "fuzz", "--cache-dir", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err
    assert "1 added" in err and "line 1:" in err and "lone surrogate" in err and "line 3:" in err
    assert "Traceback" not in err
    for bad in (tmp_path / "missing.jsonl", tmp_path):
        assert main(["pairs", "import", str(bad), "--author", "fuzz", "--cache-dir", str(tmp_path / "c")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(bad) in err and "Traceback" not in err

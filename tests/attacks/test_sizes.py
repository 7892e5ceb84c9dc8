"""Sizes bounded before work: pairs per file, JSON nesting and number length, corrupted sentences over the
sentence limits.

Each test plays an anonymous visitor (the dashboard's Challenge and Your-sentences uploads go through
``api.read_suite`` and ``muttlab.suites.user``) or a user of ``muttlab run --suite``, sending what a reader
must refuse with one line naming the file and the line, before any scoring.
"""
from __future__ import annotations

import json

import pytest

from muttlab import api
from muttlab.errors import DataError, MuttlabError
from muttlab.settings import Limits, Settings, set_limits
from muttlab.suites.readers import WMT_COLUMNS
from tests.conftest import run_muttlab

NESTED = "[" * 200_000 + "]" * 200_000  # the attack's depth
HUGE = "9" * 5000  # the attack's number

# One poisoned record per JSON suite format, on line 2 (line 1 is a good record where the format has lines).
GOOD = {
    "trials-jsonl": {"id": "t1", "corruption": "typo", "original": "A dog runs.", "corrupted": "A dgo runs.",
                     "references": ["A dog is running."]},
    "contrastive-jsonl": {"phenomenon": "negation", "good": "A dog runs.", "incorrect": "No dog runs.",
                          "references": ["A dog is running."]},
}


def _jsonl(fmt: str, poison: str) -> bytes:
    return (json.dumps(GOOD[fmt]) + "\n" + poison + "\n").encode()


@pytest.mark.parametrize("poison", ["nested", "number"])
@pytest.mark.parametrize("fmt", ["trials-jsonl", "contrastive-jsonl", "demetr-json", "told by its first line"])
def test_json_nested_deep_or_a_huge_number_is_refused_with_its_line(fmt, poison, tmp_path):
    """Attack (round three): JSON nested 200,000 deep or a 5,000-digit number crashed every suite reader:
    ``api.read_suite`` raised a raw RecursionError / ValueError (the anonymous Challenge page showed the stack).
    Each is now a DataError (a MuttlabError) naming the file and the line; in JSON lines the bad row is left
    out with its line and the good rows kept."""
    bad = NESTED if poison == "nested" else '{"human_score": ' + HUGE + "}"
    if fmt == "demetr-json":
        data = ("[\n" + json.dumps({"src_sent": "s", "eng_sent": "r", "mt_sent": "g", "pert_sent": "b",
                                    "pert_name": "x"}) + ",\n" + bad + "\n]").encode()
        path = tmp_path / "demetr.json"
    elif fmt == "told by its first line":
        data = (bad + "\n").encode()
        path = tmp_path / "suite.jsonl"
    else:
        data = _jsonl(fmt, bad)
        path = tmp_path / "suite.jsonl"
    path.write_bytes(data)
    for given in (path, data):  # a file, and the bytes of an upload
        try:
            suite = api.read_suite(given, format=None if fmt in ("demetr-json", "told by its first line") else fmt)
        except DataError as exc:
            assert exc.line == (3 if fmt == "demetr-json" else 1), exc  # DEMETR: "[", a good record, the bad one
            assert ("nested too deeply" if poison == "nested" else "a number of 5,000 characters") in str(exc)
            assert str(path) in str(exc) or "upload" in str(exc)
            continue
        assert fmt.endswith("jsonl") and len(suite.suite.trials) == 1
        assert [(p.line, p.problem.split(" (")[0]) for p in suite.problems] == [
            (2, "malformed JSON: nested too deeply" if poison == "nested"
             else "malformed JSON: a number of 5,000 characters")]


def test_the_command_line_refuses_a_nested_suite_in_one_line(tmp_path):
    """The same file through ``muttlab run --suite``: one line naming the file and its line, exit 2."""
    path = tmp_path / "nested.json"
    path.write_text(NESTED)
    result = run_muttlab("run", "--suite", str(path), "--metrics", "BLEU-4",
                         env={"MUTTLAB_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert result.stderr.strip().splitlines() == [
        f"muttlab: error: {path}, line 1: malformed JSON: nested too deeply (past 100 levels here)"]


def _wmt_rows(n: int) -> bytes:
    """A WMT challenge-set TSV of ``n`` tiny rows (the attack's 18 MB file held 734,499)."""
    return ("\t".join(WMT_COLUMNS) + "\n" + "de-en\ts\tg\ti\tr\tp\n" * n).encode()


@pytest.fixture
def small_pair_cap():
    set_limits(Limits(max_pairs=50))
    yield
    set_limits(None)


def test_an_upload_of_many_tiny_rows_is_refused_before_any_row_is_read():
    """Attack: an anonymous 18 MB WMT TSV of 734,499 tiny rows was parsed and scored at once (uploads had no
    pair cap; each left ~1.4 GB resident). Every reader now counts the rows first, against the same
    MUTTLAB_MAX_PAIRS as the command line, and refuses the file naming the first line over the cap."""
    with pytest.raises(DataError) as refused:
        api.read_suite(_wmt_rows(734_499))
    assert refused.value.line == 100_002  # the header, then 100,000 rows within the cap
    assert "the file has 734,499 pairs, over the limit of 100,000" in str(refused.value)


@pytest.mark.usefixtures("small_pair_cap")
@pytest.mark.parametrize("fmt", ["wmt-tsv", "aces-tsv", "contrastive-jsonl", "trials-jsonl", "demetr-json",
                                 "user sentences (jsonl)", "user sentences (csv)", "pair import", "dbleu"])
def test_every_reader_counts_pairs_against_the_cap(fmt, tmp_path):
    """The cap holds for every suite format, the visitor's own sentences, the pair store's import and ΔBLEU
    input: 51 rows where 50 are allowed is refused naming the file and the line of the 51st."""
    n = 51
    rows = {
        "wmt-tsv": "\t".join(WMT_COLUMNS) + "\n" + "de-en\ts\tg\ti\tr\tp\n" * n,
        "aces-tsv": "source\tgood-translation\tincorrect-translation\treference\tphenomena\tlangpair\n"
                    + "s\tg\ti\tr\tp\tde-en\n" * n,
        "contrastive-jsonl": "".join(json.dumps({**GOOD["contrastive-jsonl"], "id": str(i)}) + "\n" for i in range(n)),
        "trials-jsonl": "".join(json.dumps({**GOOD["trials-jsonl"], "id": str(i)}) + "\n" for i in range(n)),
        "demetr-json": json.dumps([{"src_sent": "s", "eng_sent": "r", "mt_sent": "g", "pert_sent": "b",
                                    "pert_name": "x", "id": i} for i in range(n)]),
        "user sentences (jsonl)": "".join(json.dumps({"text": "A dog runs.", "references": ["A dog is running."]})
                                          + "\n" for _ in range(n)),
        "user sentences (csv)": "text,reference\n" + "A dog runs.,A dog is running.\n" * n,
        "pair import": "".join(json.dumps({**GOOD["trials-jsonl"], "id": f"typo/{i}"}) + "\n" for i in range(n)),
        "dbleu": "".join(json.dumps({"hypothesis": "a dog runs", "references": [["a dog runs", 1.0]]}) + "\n"
                         for _ in range(n)),
    }[fmt]
    suffix = {"wmt-tsv": ".tsv", "aces-tsv": ".tsv", "demetr-json": ".json", "user sentences (csv)": ".csv"}
    path = tmp_path / f"input{suffix.get(fmt, '.jsonl')}"
    path.write_text(rows, encoding="utf-8")
    with pytest.raises(MuttlabError) as refused:
        if fmt.startswith("user sentences"):
            from muttlab.suites.user import read_user_sentences
            read_user_sentences(path)
        elif fmt == "pair import":
            from muttlab.pairs.store import parse_jsonl
            parse_jsonl(path)
        elif fmt == "dbleu":
            from muttlab.human.dbleu_io import read_weighted_segments
            read_weighted_segments(path)
        else:
            api.read_suite(path)
    assert isinstance(refused.value, DataError) and str(path) in str(refused.value)
    assert "over the limit of 50" in str(refused.value)
    assert refused.value.line == (1 if fmt == "demetr-json" else 52 if fmt in ("wmt-tsv", "aces-tsv",
                                                                                  "user sentences (csv)") else 51)


def _long_sentence() -> str:
    """182 words whose one prepositional phrase Duplicated PP repeats (seed 13): 208 words, over the 200 limit."""
    words = "the tall man and the young woman and the small child and the old dog".split()
    lead = " ".join(words[i % len(words)] for i in range(153))
    return (f"{lead} are walking together along the wide and quiet road near the lake and the tall trees of the "
            "green park in the city on a sunny morning in spring.")


def test_a_corruption_over_the_sentence_limits_is_not_applied_not_a_failed_suite(tmp_path):
    """Attack: one 182-word sentence (within the caps) that Duplicated PP grows past 200 words failed the whole
    visitor's suite when it was scored. That corruption is now no trial: it is counted as not applied for
    that sentence, with the reason, and the rest of the suite is scored."""
    from muttlab.suites.user import parse_user_sentences, user_suite

    sentence = _long_sentence()
    assert len(sentence.split()) == 182
    data = "\n".join(json.dumps({"id": ident, "text": text, "references": [text]}) for ident, text in
                     (("long", sentence), ("short", "A man is riding a bike on the road."))).encode()
    skipped: list = []
    suite = user_suite(parse_user_sentences(data, "jsonl", "mine.jsonl"), ["double_PP", "typo"], seed=13,
                       name="mine", not_applied=skipped)
    assert [(ident, kind) for ident, kind, _ in skipped] == [("long", "double_PP")]
    assert "the corrupted sentence has 208 words, over the limit of 200" in skipped[0][2]
    assert {t.id for t in suite.trials} == {"double_PP/short", "typo/long", "typo/short"}
    settings = Settings(cache_dir=tmp_path / "cache", workers=1)
    results = api.run_grid(settings, ["BLEU-4"], suite=suite, ref_counts=[1])
    assert results.accuracy()["n"].sum() == 3


def test_the_dashboards_own_sentences_report_names_the_reason(tmp_path):
    """The Your-sentences page (services.user_suites.build, as an anonymous visitor) builds the suite and lists
    the over-long corruption among those not applied, with the limit as the reason."""
    from muttlab.dashboard.services import user_suites

    settings = Settings(cache_dir=tmp_path / "cache", workers=1)
    data = json.dumps({"id": "long", "text": _long_sentence(), "references": ["A walk in the park."]}).encode()
    name, _ = user_suites.build(settings, user_suites.Visitor("session-1", "ip:203.0.113.5"), data, "mine.jsonl",
                                "jsonl", ["double_PP", "typo"])
    report = user_suites.report(name)
    why = report.skipped.set_index("corruption")["why not"].to_dict()
    assert any("208 words, over the limit of 200" in text for text in why.values()), why
    assert [t.corruption for t in user_suites.lookup(name).trials] == ["typo"]

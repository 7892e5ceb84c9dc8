"""One's own judgments in the generic TSV / JSONL format: TED en-de written in it reads back as the MQM reader
reads it, and every malformed row is named by file, line and field."""
from __future__ import annotations

import json

import numpy as np
import pytest

from muttlab.errors import DataError
from muttlab.meta import generic
from muttlab.settings import Limits, set_limits

ITEMS = 20


def records(judgments, items: int = ITEMS) -> list[dict]:
    out = []
    for i in range(items):
        for s, system in enumerate(judgments.systems):
            out.append({"item": judgments.items[i], "system": system, "hypothesis": judgments.hypotheses[s][i],
                        "reference": judgments.references[i][0], "source": judgments.sources[i],
                        "score": float(judgments.gold[s, i]), "lang": "en-de"})
    return out


def as_tsv(rows: list[dict], columns=("item", "system", "hypothesis", "reference", "source", "score", "lang")) -> str:
    return "\n".join(["\t".join(columns)] + ["\t".join(str(r[c]) for c in columns) for r in rows]) + "\n"


def as_jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


@pytest.mark.parametrize("fmt", ["tsv", "jsonl"])
def test_ted_in_the_generic_format_reads_as_the_mqm_reader_reads_it(ted, tmp_path, fmt):
    ende = ted["en-de"]
    path = tmp_path / f"ende.{fmt}"
    path.write_text((as_tsv if fmt == "tsv" else as_jsonl)(records(ende)), encoding="utf-8")
    judgments = generic.read_judgments(path)
    part = ende.first_items(ITEMS)
    assert judgments.systems == part.systems and judgments.items == part.items
    assert np.array_equal(judgments.gold, part.gold)
    assert judgments.hypotheses == part.hypotheses and judgments.references == part.references
    assert judgments.sources == part.sources and judgments.target_language == "de" and not judgments.notes
    assert judgments.name == path.name and len(judgments.data_digest) == 64


def test_several_references_missing_outputs_and_the_assumed_language(tmp_path):
    rows = [{"item": 1, "system": "A", "hypothesis": "a b", "references": ["a b", "a c"], "score": 1},
            {"item": 1, "system": "B", "hypothesis": "", "references": ["a b", "a c"], "score": 0.5},
            {"item": 2, "system": "B", "hypothesis": "x", "references": ["y", "z"], "score": -3}]
    judgments = generic.parse_judgments(as_jsonl(rows).encode(), "mine.jsonl", ".jsonl")
    assert judgments.items == ("1", "2") and judgments.references[0] == ("a b", "a c")
    assert np.isnan(judgments.gold[0, 1]) and judgments.n_outputs == 3 and judgments.hypotheses[1][0] == ""
    assert judgments.target_language == "en" and "English assumed" in judgments.notes[0]
    tsv = "item\tsystem\thypothesis\treference\treference2\tscore\n1\tA\ta\tb\tc\t2\n1\tB\tb\tb\tc\t1\n"
    assert generic.parse_judgments(tsv.encode(), "mine.tsv", ".tsv").references == (("b", "c"),)
    assert generic.parse_judgments(tsv.encode(), target_language="fr").target_language == "fr"


BASE = [{"item": "1", "system": "A", "hypothesis": "a", "reference": "r", "score": 1.0},
        {"item": "1", "system": "B", "hypothesis": "b", "reference": "r", "score": 0.0}]


@pytest.mark.parametrize("change,message", [
    ({"score": "high"}, r"line 2: field score: 'high' is not a finite number"),
    ({"score": True}, r"line 2: field score: 'True' is not a finite number"),
    ({"system": "A"}, r"line 2: fields item, system: A's output for item '1' is given twice \(first on line 1\)"),
    ({"reference": "other"}, r"line 2: field reference: item '1' has other references on line 1"),
    ({"source": "s"}, r"line 2: field source: item '1' has another source on line 1"),
    ({"hypothesis": None}, r"line 2: field hypothesis: must be a string, got NoneType"),
    ({"system": ""}, r"line 2: field system: empty"),
    ({"lang": "english"}, r"line 2: field lang: 'english' is not a language code"),
    ({"scores": 1}, r"line 2: unknown field 'scores'"),
    ({"reference": ["r"], "references": ["r"]}, r"line 2: fields reference, references: give one of them"),
])
def test_a_bad_jsonl_row_is_named(change, message):
    rows = [BASE[0], {**BASE[1], **change}]
    with pytest.raises(DataError, match=rf"^mine.jsonl, {message}"):
        generic.parse_judgments(as_jsonl(rows).encode(), "mine.jsonl", ".jsonl")


@pytest.mark.parametrize("text,message", [
    ("item\tsystem\thypothesis\tscore\n", r"line 1: missing column\(s\) reference"),
    ("item\tsystem\thypothesis\treference\tscore\tnote\n", r"line 1: unknown column 'note'"),
    ("item\tsystem\thypothesis\treference\tscore\n1\tA\ta\tr\t1\n1\tB\tb\tr\n", r"line 3: expected 5 tab-separated "
                                                                             "fields, found 4"),
    ("item\tsystem\thypothesis\treference\tscore\n1\tA\ta\tr\tnan\n", r"line 2: field score: 'nan' is not a finite"),
    ("item\tsystem\thypothesis\treference\tscore\n1\tA\ta\tr\t1e999\n", r"line 2: field score: 'inf' is not a finite"),
    ("item\tsystem\thypothesis\treference\tscore\tlang\n1\tA\ta\tr\t1\tde\n1\tB\tb\tr\t1\ten\n",
     r"line 3: field lang: 'en' differs from line 2 \('de'\)"),
    ("item\tsystem\thypothesis\treference\tscore\n1\tA\ta\tr\t1\n2\tA\tb\tr\t1\n", r"judges 1 system"),
    ("item\tsystem\thypothesis\treference\tscore\n", r"no judged output"),
])
def test_a_bad_tsv_is_named(text, message):
    with pytest.raises(DataError, match=rf"^mine.tsv(, line \d+)?: .*{message}|^mine.tsv, {message}"):
        generic.parse_judgments(text.encode(), "mine.tsv", ".tsv")


def test_a_language_other_than_the_one_asked_for_is_refused():
    rows = [{**r, "lang": "de"} for r in BASE]
    with pytest.raises(DataError, match=r"line 1: field lang: 'de' differs from the target language asked for"):
        generic.parse_judgments(as_jsonl(rows).encode(), "mine.jsonl", ".jsonl", target_language="en")


def test_the_limits_of_uploads_apply():
    data = as_jsonl(BASE).encode()
    try:
        set_limits(Limits(max_pairs=1))
        with pytest.raises(DataError, match=r"line 2: the file has 2 pairs, over the limit of 1 .*MUTTLAB_MAX_PAIRS"):
            generic.parse_judgments(data, "mine.jsonl")
        set_limits(Limits(max_chars=1))
        with pytest.raises(DataError, match=r"line 1: field hypothesis has 2 characters, over the limit of 1 .*MUTTLAB_MAX_CHARS"):
            generic.parse_judgments(as_jsonl([{**BASE[0], "hypothesis": "ab"}, BASE[1]]).encode(), "mine.jsonl")
        set_limits(Limits(max_upload_mb=1))
        with pytest.raises(DataError, match=r"the file has 2.0 MiB, over the limit of 1 .*MUTTLAB_MAX_UPLOAD_MB"):
            generic.parse_judgments(b" " * (2 * 2 ** 20), "big.jsonl")
    finally:
        set_limits(None)

"""Suite-file readers on small files written for the project in each format, malformed rows included."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from muttlab.trials import Expectation
from muttlab.errors import DataError
from muttlab.suites import read_suite
from muttlab.suites.model import ACES_TSV, CONTRASTIVE_JSONL, DEMETR_JSON, TRIALS_JSONL, WMT_TSV

FILES = Path(__file__).parent / "files"


@pytest.mark.parametrize("name, fmt, n_trials, bad_lines", [
    ("wmt_challenge.tsv", WMT_TSV, 5, [4]),
    ("aces.tsv", ACES_TSV, 6, [6]),
    ("demetr.json", DEMETR_JSON, 4, [3, 4]),
    ("contrastive.jsonl", CONTRASTIVE_JSONL, 3, [3, 4]),
])
def test_format_told_good_rows_kept_bad_rows_named_by_line(name, fmt, n_trials, bad_lines):
    result = read_suite(FILES / name)
    assert result.format == fmt
    assert result.contrastive
    assert len(result.suite.trials) == n_trials
    assert [p.line for p in result.problems] == bad_lines


def test_wmt_fields_and_target_language():
    result = read_suite(FILES / "wmt_challenge.tsv")
    first = result.suite.trials[0]
    assert first.corruption == "negation"
    assert first.original == "The dog is sleeping in the garden."
    assert first.corrupted == "The dog is not sleeping in the garden."
    assert first.references == ("The dog is sleeping in the garden.",)
    assert result.sources[first.id] == "Der Hund schläft im Garten."
    assert [result.language(t.id) for t in result.suite.trials] == ["en", "en", "de", "en", "en"]
    assert "expected 6 tab-separated columns, found 4" in str(result.problems[0])
    # an empty field is a text to score (an empty output), not a malformed row
    empty = result.suite.trials[3]
    assert (empty.original, empty.corrupted) == ("", "The woman is not singing.")


def test_aces_leading_id_column_and_langpair():
    result = read_suite(FILES / "aces.tsv")
    phenomena = [t.corruption for t in result.suite.trials]
    assert phenomena == ["addition", "omission", "hallucination-number-level-1", "punctuation:deletion_all",
                         "antonym-replacement", "hypernym-replacement"]
    assert result.language(result.suite.trials[4].id) == "de"


def test_demetr_fields_follow_the_datasheet():
    result = read_suite(FILES / "demetr.json")
    first = result.suite.trials[0]
    assert (first.original, first.corrupted, first.references) == (
        "The boy eats an apple.", "The boy does not eat an apple.", ("The boy is eating an apple.",))
    assert first.id == "critical_id8_negation/1"
    assert result.sources[first.id] == "Der Junge isst einen Apfel."
    assert "pert_sent" in result.problems[0].problem
    by_id = {t.id: t for t in result.suite.trials}
    assert [t.severity for t in result.suite.trials] == ["critical", "minor", "base", "base"]
    # pert_check false: the perturbation was not applied, so the record is no test item, only counted
    assert "critical_id8_negation/5" not in by_id and result.not_applied == {"critical_id8_negation": 1}
    # the reference baseline: the "perturbed" side is the reference, which must win
    assert by_id["base_id35_reference/6"].expectation is Expectation.SECOND_BETTER
    assert by_id["critical_id8_negation/1"].expectation is None
    # DEMETR's empty output is a test item
    assert by_id["base_id33_empty/7"].corrupted == ""


def test_demetr_rejects_values_the_datasheet_does_not_define():
    record = {"eng_sent": "A.", "mt_sent": "A.", "pert_sent": "B.", "pert_name": "x", "pert_check": True}
    bad = [dict(record, pert_check="yes"), dict(record, severity="fatal"), dict(record, mt_sent=None)]
    result = read_suite(json.dumps([record, *bad]).encode(), format=DEMETR_JSON)
    assert len(result.suite.trials) == 1
    problems = [p.problem for p in result.problems]
    assert "'pert_check' must be true or false" in problems[0] and "'severity' must be one of" in problems[1]
    assert "'mt_sent' is missing" in problems[2]


def test_contrastive_jsonl_reference_lists_and_lp():
    result = read_suite(FILES / "contrastive.jsonl")
    by_id = {t.id: t for t in result.suite.trials}
    assert by_id["c1"].references == ("A woman is cutting an onion.", "Someone slices an onion.")
    assert result.language("c5") == "de"
    assert result.sources["c2"] == "Zwei Männer spielen Gitarre."
    assert "malformed JSON" in result.problems[0].problem


def test_bytes_upload_and_format_override():
    data = (FILES / "contrastive.jsonl").read_bytes()
    result = read_suite(data)
    assert result.format == CONTRASTIVE_JSONL and result.suite.name == "upload"
    tsv = (FILES / "aces.tsv").read_bytes()
    assert read_suite(tsv, format=ACES_TSV).format == ACES_TSV


def test_unusable_files_raise_data_errors(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        read_suite(tmp_path / "missing.tsv")
    bad_header = tmp_path / "x.tsv"
    bad_header.write_text("a\tb\n1\t2\n", encoding="utf-8")
    with pytest.raises(DataError, match="line 1.*cannot tell the format"):
        read_suite(bad_header)
    all_bad = tmp_path / "bad.jsonl"
    all_bad.write_text('{"good": "a", "incorrect": "b"}\n', encoding="utf-8")
    with pytest.raises(DataError, match="no readable contrastive-jsonl row; first problem: line 1"):
        read_suite(all_bad)
    latin = tmp_path / "latin.tsv"
    latin.write_bytes("lp\tsource\tgood\tincorrect\treference\tphenomena\nde-en\tS\u00fc\tA\tB\tC\tx\n".encode("latin-1"))
    with pytest.raises(DataError, match="not valid UTF-8"):
        read_suite(latin)
    with pytest.raises(DataError, match="unknown suite format"):
        read_suite(FILES / "aces.tsv", format="csv")


def test_trial_suite_round_trip_through_export(tmp_path):
    from muttlab.suites.export import write_suite
    source = read_suite(FILES / "contrastive.jsonl")
    path = tmp_path / "suite.jsonl"
    assert write_suite(source.suite, path) == 3
    again = read_suite(path)
    assert again.format == TRIALS_JSONL
    assert [(t.id, t.original, t.corrupted, t.references) for t in again.suite.trials] == \
        [(t.id, t.original, t.corrupted, t.references) for t in source.suite.trials]

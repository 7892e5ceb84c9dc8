"""A user's own sentences -> a suite file -> `muttlab run --suite`, and exports that pyarrow and datasets load."""
from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from muttlab.cli import main
from muttlab.trials import Expectation
from muttlab.suites import read_suite
from muttlab.suites.export import SUITE_FIELDS
from muttlab.suites.user import read_user_sentences

FILES = Path(__file__).parent / "files"


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MUTTLAB_DATA_DIR", raising=False)


def test_user_sentences_jsonl_and_csv_keep_good_rows():
    jsonl = read_user_sentences(FILES / "user_sentences.jsonl")
    assert [i for i, _, _ in jsonl.items] == ["u1", "u2", "line3"]
    assert [p.line for p in jsonl.problems] == [4, 5]
    csv = read_user_sentences(FILES / "user_sentences.csv")
    # two 'reference' columns, both kept in order
    assert csv.items[0][2] == ("A man rides a bike on a city street.", "A cyclist in a red coat rides down the road.")
    assert [p.line for p in csv.problems] == [4]


def test_corrupt_input_writes_a_suite_that_run_reads(tmp_path, capsys):
    out = tmp_path / "mine.jsonl"
    assert main(["corrupt", "--input", str(FILES / "user_sentences.jsonl"), "--output", str(out)]) == 0
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert records and all(set(r) == set(SUITE_FIELDS) for r in records)
    by_id = {r["id"]: r for r in records}
    # The progressive "Two dogs are playing" takes the SICK negated-subject template.
    assert by_id["neg_subj/u2"]["corrupted"] == "There are no dogs playing with a ball in the park."
    assert by_id["neg_subj/u2"]["family"] == "meaning-altering"
    assert all(r["original"] != r["corrupted"] for r in records)
    suite = read_suite(out).suite
    assert len(suite.trials) == len(records)
    capsys.readouterr()
    trials_out = tmp_path / "trials.parquet"
    assert main(["run", "--suite", str(out), "--metrics", "BLEU-4", "--refs", "3", "--corruptions", "neg_subj",
                 "--trials-out", str(trials_out), "--format", "csv"]) == 0
    table = pq.read_table(trials_out).to_pandas()
    assert set(table["trial"]) == {"neg_subj/u2", "neg_subj/line3"}
    assert table["signature"].str.startswith("BLEU-4|").all()


def test_run_reports_a_challenge_set_and_its_malformed_rows(capsys):
    assert main(["run", "--suite", str(FILES / "aces.tsv"), "--metrics", "sentBLEU", "--format", "json"]) == 0
    captured = capsys.readouterr()
    assert "line 6: expected 7 tab-separated columns, found 3" in captured.err
    tables = json.loads(captured.out)
    assert set(tables) == {"phenomena", "aces"} and "aces_score" in tables["aces"][0]
    assert "hypernym-replacement" in {row["phenomenon"] for row in tables["phenomena"]}


def test_export_parquet_loads_with_pyarrow_and_datasets(tmp_path):
    out = tmp_path / "sample.parquet"
    assert main(["export", "--suite", "sample", "--output", str(out)]) == 0
    table = pq.read_table(out)
    assert table.column_names == list(SUITE_FIELDS)
    import pyarrow as pa
    assert pa.types.is_list(table.schema.field("references").type)
    assert table.schema.field("references").type.value_type == pa.string()
    datasets = pytest.importorskip("datasets")
    loaded = datasets.load_dataset("parquet", data_files=str(out), split="train", cache_dir=str(tmp_path / "hf"))
    assert loaded.num_rows == table.num_rows
    assert loaded[0]["references"] == table.column("references")[0].as_py()


def test_export_keeps_expectation_and_severity_and_counts_not_applied(tmp_path, capsys):
    out = tmp_path / "demetr.jsonl"
    assert main(["export", "--suite", str(FILES / "demetr.json"), "--output", str(out)]) == 0
    assert "(4 trials; 1 record(s) the data set marks as not applied left out)" in capsys.readouterr().err
    back = {t.id: t for t in read_suite(out).suite.trials}
    assert back["base_id35_reference/6"].expectation is Expectation.SECOND_BETTER
    assert back["critical_id8_negation/1"].expectation is None
    assert [t.severity for t in back.values()] == ["critical", "minor", "base", "base"]
    assert back["base_id33_empty/7"].corrupted == ""


def test_trials_out_counts_unsupported_pairs_with_severity(tmp_path, capsys):
    out = tmp_path / "pairs.jsonl"
    assert main(["run", "--suite", str(FILES / "demetr.json"), "--metrics", "ReVal-LSTM", "--trials-out", str(out),
                 "--format", "csv"]) == 0
    rows = {r["trial"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    # ReVal cannot encode an empty sentence: that pair is unsupported, shown, never scored
    assert rows["base_id33_empty/7"]["outcome"] == "unsupported" and rows["base_id33_empty/7"]["severity"] == "base"
    assert rows["base_id35_reference/6"]["expected"] == "second better"
    assert "unsupported" in capsys.readouterr().err

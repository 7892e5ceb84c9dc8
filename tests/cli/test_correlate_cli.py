"""``muttlab correlate`` end to end on the real data (small settings so it stays quick)."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from muttlab.cli import main


@pytest.fixture
def base_args(data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("MUTTLAB_WORKERS", "1")  # no worker pool: these batches are small
    return ["--data-dir", str(data_dir), "--cache-dir", str(tmp_path / "cache")]


def test_flickr8k_json_records(base_args, capsys):
    assert main(["correlate", "flickr8k", *base_args, "--metrics", "BLEU-1", "--datasets", "expert",
                 "--n-boot", "50", "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert len(records) == 1
    rec = records[0]
    assert {"metric", "dataset", "variant", "tau", "ci_low", "ci_high", "n"} <= set(rec)
    assert (rec["metric"], rec["dataset"], rec["variant"], rec["n"]) == ("BLEU-1", "expert", "tau_c", 16992)
    assert rec["ci_low"] < rec["tau"] < rec["ci_high"]


def test_sick_table_and_histograms(base_args, tmp_path, capsys):
    out = tmp_path / "hist"
    assert main(["correlate", "sick", *base_args, "--corruption", "det_sub", "--metrics", "BLEU-1,ROUGE-L",
                 "--refs", "5", "--histograms-out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "det_sub" in text and "ROUGE-L" in text and "gold" in text
    hist = pd.read_csv(out / "det_sub_histograms.csv")
    assert set(hist.variable) == {"gold", "BLEU-1", "ROUGE-L"}
    assert (hist.groupby("variable")["count"].sum() == 65).all()
    assert len(pd.read_csv(out / "det_sub_pairs.csv")) == 65
    assert main(["correlate", "sick", *base_args, "--corruption", "det_sub", "--metrics", "BLEU-1",
                 "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [r["variable"] for r in payload["correlations"]] == ["gold", "BLEU-1"]


def test_sick_paper_reading(base_args, capsys):
    assert main(["correlate", "sick", *base_args, "--corruption", "det_sub", "--metrics", "BLEU-1",
                 "--reading", "paper", "--format", "json"]) == 0
    captured = capsys.readouterr()
    payload = json.loads(captured.out)
    # det_sub: the study's list has 150 pairs, all of them SICK pairs the extractor finds.
    assert (payload["reading"], payload["pairs"], payload["reference"]) == ("paper", 150, "sentence")
    assert "every SICK pair of the type (150" in captured.err


def test_dbleu_on_a_user_file(base_args, tmp_path, capsys):
    path = tmp_path / "set.jsonl"
    lines = [{"hypothesis": f"a man number {i} rides a horse", "references": [["a man rides a horse", 1.0],
                                                                              [f"number {i} runs", -0.5]],
              "human": float(i % 5)} for i in range(40)]
    path.write_text("\n".join(json.dumps(x) for x in lines), encoding="utf-8")
    assert main(["correlate", "dbleu", *base_args, "--input", str(path), "--unit-size", "4", "--assignments", "10",
                 "--sweep-assignments", "2", "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [r["metric"] for r in payload["main"]] == ["BLEU", "sentence-BLEU", "DeltaBLEU"]
    assert payload["main"][0]["units"] == 10 and {r["sweep"] for r in payload["sweeps"]} == {
        "unit_size", "order", "threshold"}


@pytest.mark.parametrize("argv, message", [
    (["correlate", "sick", "--corruption", "neg_subj", "--metrics", "NOPE"], "unknown metric"),
    (["correlate", "flickr8k", "--datasets", "coco"], "--datasets"),
    (["correlate", "dbleu", "--unit-size", "0", "--no-sweeps"], "unit size 0"),
    (["correlate", "dbleu", "--ratings", "x.txt"], "--ratings needs --input"),
])
def test_user_errors_exit_2(base_args, capsys, argv, message):
    assert main(argv[:2] + base_args + argv[2:]) == 2
    assert message in capsys.readouterr().err

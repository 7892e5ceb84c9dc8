"""``muttlab reproduce`` end to end on the real data: a fast subset (Flickr8K-Expert, n-gram metrics) in
every format; one shared cache, so only the first call scores."""
from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from muttlab.cli import main


@pytest.fixture(scope="module")
def base_args(data_dir, tmp_path_factory):
    return ["reproduce", "--data-dir", str(data_dir), "--cache-dir", str(tmp_path_factory.mktemp("cache")),
            "--studies", "flickr8k_expert", "--metrics", "BLEU-4,CIDEr-D,SPICE"]


def test_table(base_args, capsys):
    assert main(base_args) == 0
    out = capsys.readouterr().out
    assert "CIDEr-D" in out and "43.9" in out and "not computed" in out and "scene-graph" in out
    assert out.rstrip().endswith("2 within tolerance of 2 computed; 1 not computed")


def test_csv(base_args, capsys):
    assert main([*base_args, "--format", "csv"]) == 0
    captured = capsys.readouterr()
    frame = pd.read_csv(io.StringIO(captured.out))
    assert list(frame["metric"]) == ["BLEU-4", "CIDEr", "SPICE"]
    assert list(frame["metric_ours"].fillna("")) == ["BLEU-4", "CIDEr-D", ""]
    assert frame.loc[1, "published"] == 43.9 and abs(frame.loc[1, "measured"] - 43.9) <= 1.0
    assert "2 within tolerance of 2 computed" in captured.err


def test_json(base_args, capsys):
    assert main([*base_args, "--format", "json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["summary"] == "2 within tolerance of 2 computed; 1 not computed"
    assert payload["tolerances"]["kendall_tau_c_x100"] == 1.0
    spice = payload["numbers"][2]
    assert spice["measured"] is None and spice["within"] is None and spice["refs"] is None
    assert payload["numbers"][0]["within"] is True


@pytest.mark.parametrize("fmt, marker", [("markdown", "|"), ("latex", "\\begin{tabular}")])
def test_markdown_and_latex(base_args, capsys, tmp_path, fmt, marker):
    out = tmp_path / f"report.{fmt}"
    assert main([*base_args, "--format", fmt, "--output", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert marker in text and "CIDEr-D" in text and "2 within tolerance of 2 computed" in text
    # The published numbers as the paper prints them, the tolerance with its statistic's digits.
    assert "43.9" in text and "30.8" in text and "1.0" in text and "not computed" in text


def test_markdown_keeps_three_digits_for_r(data_dir, tmp_path, capsys):
    args = ["reproduce", "--data-dir", str(data_dir), "--cache-dir", str(tmp_path),
            "--studies", "sick_neg_subj_correlation", "--metrics", "METEOR,TERp", "--format", "markdown"]
    assert main(args) == 0
    text = capsys.readouterr().out
    # Boag et al. 2016, Table 3: gold~METEOR 0.09, METEOR~TERp 0.80; tolerance 0.02.
    assert "| 0.090 " in text and "| 0.800 " in text and "| 0.020 " in text


def test_unknown_study_is_one_line(data_dir, capsys):
    assert main(["reproduce", "--data-dir", str(data_dir), "--studies", "table9"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("muttlab: error: unknown study 'table9'; choose from mutt_accuracy")


def test_no_data_dir(monkeypatch, capsys):
    monkeypatch.delenv("MUTTLAB_DATA_DIR", raising=False)
    assert main(["reproduce"]) == 2
    assert "needs the published numbers and the datasets" in capsys.readouterr().err

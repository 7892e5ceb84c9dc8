"""``muttlab run`` and ``muttlab metrics`` through the real entry point, on the real data."""
from __future__ import annotations

import json

import pytest

from muttlab.cli import main


@pytest.fixture
def cli(data_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MUTTLAB_DATA_DIR", raising=False)

    def invoke(*args: str):
        code = main([*args])
        out, err = capsys.readouterr()
        return code, out, err

    return invoke


def test_run_json_records(cli, data_dir):
    code, out, _ = cli("run", "--data-dir", str(data_dir), "--metrics", "BLEU-4,CIDEr-D",
                       "--corruptions", "neg_subj,det_sub", "--refs", "5,20", "--format", "json")
    assert code == 0
    records = json.loads(out)
    assert len(records) == 2 * 2 * 2
    rec = next(r for r in records if r["metric"] == "BLEU-4" and r["corruption"] == "neg_subj" and r["refs"] == 5)
    assert rec["n"] == 336  # the study's Negated Subject set
    assert rec["accuracy"] == pytest.approx(100 * rec["passed"] / rec["n"], abs=1e-3)
    assert rec["ci_low"] <= rec["accuracy"] <= rec["ci_high"]


def test_run_table_is_the_paper_grid(cli, data_dir, tmp_path):
    out_file = tmp_path / "grid.md"
    code, _, err = cli("run", "--data-dir", str(data_dir), "--metrics", "BLEU-1,ROUGE-L", "--corruptions",
                       "passive", "--refs", "5,10", "--format", "markdown", "--output", str(out_file))
    assert code == 0 and "wrote" in err
    text = out_file.read_text()
    assert "passive@5" in text and "passive@10" in text
    assert "/214)" in text  # counts are shown with the accuracy
    assert text.index("BLEU-1") < text.index("ROUGE-L")


def test_trials_out_writes_every_trial(cli, data_dir, tmp_path):
    out = tmp_path / "trials.jsonl"
    code, _, _ = cli("run", "--data-dir", str(data_dir), "--metrics", "BLEU-4", "--corruptions", "det_sub",
                     "--refs", "5", "--trials-out", str(out))
    assert code == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 65  # the study's det_sub set
    assert {"trial", "s_orig", "s_corr", "margin", "passed", "tied", "signature"} <= set(rows[0])


@pytest.mark.parametrize("suffix", [".jsonl", ".csv"])
def test_trials_out_keeps_full_precision(cli, data_dir, tmp_path, suffix):
    """The written scores read back as the very floats the runner computed (BLEU-1 on remove_prep has
    scores that differ only in the tenth decimal)."""
    import pandas as pd

    from muttlab.engine.runner import run
    from muttlab.sources import load_mutt_experiments
    from muttlab.settings import Settings

    out = tmp_path / f"trials{suffix}"
    code, _, _ = cli("run", "--data-dir", str(data_dir), "--metrics", "BLEU-1", "--corruptions", "remove_prep",
                     "--refs", "20", "--trials-out", str(out))
    assert code == 0
    settings = Settings(data_dir=data_dir, use_cache=False, workers=1)
    suite = load_mutt_experiments(settings).select(["remove_prep"])
    expected = run(suite, ["BLEU-1"], [20], settings).table
    if suffix == ".jsonl":
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        got = [(r["s_orig"], r["s_corr"]) for r in rows]
    else:
        frame = pd.read_csv(out)
        got = list(zip(frame["s_orig"], frame["s_corr"]))
    assert got == list(zip(expected["s_orig"], expected["s_corr"]))
    assert any(0 < abs(a - b) < 1e-9 for a, b in got)  # differences in the last digits survive


@pytest.mark.parametrize("fmt", ["table", "markdown", "latex", "csv", "json"])
def test_every_format_shows_the_tie_rate(cli, data_dir, fmt):
    code, out, err = cli("run", "--data-dir", str(data_dir), "--metrics", "BLEU-1", "--corruptions", "swap_chunks",
                         "--refs", "5", "--format", fmt)
    assert code == 0
    # BLEU-1 cannot tell re-ordered chunks from the original: every trial is a tie (and fails).
    if fmt == "json":
        record = json.loads(out)[0]
        assert record["tie_rate"] == 100.0 and record["accuracy"] == 0.0
        assert record["signature"].endswith("|tol:0.15|tie:1e-9")
    elif fmt == "csv":
        assert "tie_rate" in out.splitlines()[0] and "tie:1e-9" in out
    else:
        assert "0.0 (0/500) tie 100.0" in out and "tie:1e-9" in err


def test_latex_and_csv_formats(cli, data_dir):
    code, out, _ = cli("run", "--data-dir", str(data_dir), "--metrics", "BLEU-2", "--corruptions", "shuffled",
                       "--refs", "5", "--format", "latex")
    assert code == 0 and "\\begin{tabular}" in out
    code, out, _ = cli("run", "--data-dir", str(data_dir), "--metrics", "BLEU-2", "--corruptions", "shuffled",
                       "--refs", "5", "--format", "csv")
    assert code == 0 and out.splitlines()[0].startswith('"metric","corruption","refs","n","passed","accuracy"')


@pytest.mark.parametrize("args, message", [
    (["--metrics", "BLEU-9"], "unknown metric 'BLEU-9'"),
    (["--corruptions", "neg_sbj"], "unknown corruption type 'neg_sbj'"),
    (["--refs", "5,x"], "--refs '5,x': give whole numbers"),
    (["--refs", "50"], "not possible"),
])
def test_bad_arguments_exit_2_with_a_message(cli, data_dir, args, message):
    code, out, err = cli("run", "--data-dir", str(data_dir), *args)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_data_dir_problems_exit_2(cli, tmp_path):
    code, _, err = cli("run", "--data-dir", str(tmp_path / "missing"))
    assert code == 2 and "no such folder" in err
    code, _, err = cli("run", "--data-dir", str(tmp_path), "--suite", "mutt")
    assert code == 2 and "mutt/experiments/neg_subj_a.json" in err and "expected file is missing" in err


def test_metrics_lists_names_first(cli):
    code, out, _ = cli("metrics")
    assert code == 0
    lines = out.splitlines()
    assert lines[:6] == ["BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "ROUGE-L", "CIDEr-D"]
    assert "signature or reason" in out


def test_outside_metric_by_import_path(cli, data_dir):
    code, out, _ = cli("run", "--data-dir", str(data_dir), "--metric-path", "tests.engine.counting_metric:make",
                       "--metrics", "word-overlap", "--corruptions", "neg_verb", "--refs", "5", "--format", "json")
    assert code == 0
    assert json.loads(out)[0]["metric"] == "word-overlap"


def test_sample_run_when_no_data_dir(cli):
    code, out, err = cli("run", "--metrics", "BLEU-4,ROUGE-L", "--format", "json")
    assert code == 0
    assert "bundled sample corpus" in err
    records = json.loads(out)
    assert {r["refs"] for r in records} == {5, 10, 20}
    assert {"double_PP", "neg_verb", "det_sub"} <= {r["corruption"] for r in records}

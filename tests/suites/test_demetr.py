"""DEMETR (Karpinska et al., EMNLP 2022) through ``muttlab run --suite FILE``, file by file, against a count made
here with sacreBLEU itself, following the data set's datasheet: records whose ``pert_check`` is false are no test
items; in the reference baseline (``pert_id`` 35) the perturbed side is the reference and must win; a tie fails."""
from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from sacrebleu.metrics import BLEU, CHRF

from muttlab.cli import main
from tests.conftest import DATA_DIR

FILES = sorted((DATA_DIR / "demetr" / "dataset").glob("*.json"))
REFERENCE_BASELINE = 35  # the datasheet's "reference as translation" perturbation


def _direct(path, metric) -> tuple[int, int, int]:
    """(test items, passed, not applied) of one file, scored with sacreBLEU's own sentence scorer (the object
    ``sacrebleu.sentence_bleu`` / ``sentence_chrf`` build on every call, made once here)."""
    records = json.loads(path.read_text(encoding="utf-8"))
    applied = [r for r in records if r["pert_check"]]
    passed = 0
    for r in applied:
        good = metric.sentence_score(r["mt_sent"], [r["eng_sent"]]).score
        perturbed = metric.sentence_score(r["pert_sent"], [r["eng_sent"]]).score
        passed += perturbed > good if r["pert_id"] == REFERENCE_BASELINE else good > perturbed
    return len(applied), passed, len(records) - len(applied)


def test_all_35_files_are_here(data_dir):
    assert len(FILES) == 35


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_accuracy_of_each_file_equals_a_direct_sacrebleu_count(path, data_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(tmp_path))
    assert main(["run", "--suite", str(path), "--metrics", "sentBLEU,chrF", "--format", "csv"]) == 0
    text = capsys.readouterr().out
    by_phenomenon, by_severity = text.split("\nPer severity:\n")
    summary = pd.read_csv(io.StringIO(by_phenomenon)).set_index("metric")
    severity = pd.read_csv(io.StringIO(by_severity)).set_index("metric")
    records = json.loads(path.read_text(encoding="utf-8"))
    for name, metric in (("sentBLEU", BLEU(effective_order=True)), ("chrF", CHRF())):
        n, passed, not_applied = _direct(path, metric)
        row = summary.loc[name]
        assert row["phenomenon"] == records[0]["pert_name"]
        assert (row["n"], row["concordant"], row["not_applied"], row["unsupported"]) == (n, passed, not_applied, 0)
        assert row["accuracy"] == pytest.approx(100.0 * passed / n)
        assert severity.loc[name, "severity"] == records[0]["severity"]
        assert (severity.loc[name, "n"], severity.loc[name, "concordant"]) == (n, passed)

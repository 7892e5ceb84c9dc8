"""DEMETR (Karpinska et al., EMNLP 2022) through ``muttlab run --suite FILE``, file by file, against a count made
here with sacreBLEU itself, following the data set's datasheet: records whose ``pert_check`` is false are no test
items; in the reference baseline (``pert_id`` 35) the perturbed side is the reference and must win; a tie fails."""
from __future__ import annotations

import json

import pandas as pd
import pytest
from sacrebleu.metrics import BLEU, CHRF

from muttlab.cli import main
from tests.conftest import DATA_DIR

FILES = sorted((DATA_DIR / "demetr" / "dataset").glob("*.json"))
REFERENCE_BASELINE = 35  # the datasheet's "reference as translation" perturbation


# sacreBLEU's own sentence scorers (the objects ``sacrebleu.sentence_bleu`` / ``sentence_chrf`` build on every call,
# made once here), and what each has scored: every file holds the same 1,000 machine translations and references.
SCORERS = {"sentBLEU": BLEU(effective_order=True), "chrF": CHRF()}
_SCORED: dict[tuple[str, str, str], float] = {}


def _sacrebleu(name: str, hypothesis: str, reference: str) -> float:
    key = (name, hypothesis, reference)
    if key not in _SCORED:
        _SCORED[key] = SCORERS[name].sentence_score(hypothesis, [reference]).score
    return _SCORED[key]


def _direct(path, name: str) -> tuple[int, int, int]:
    """(test items, passed, not applied) of one file under sacreBLEU's metric ``name``."""
    records = json.loads(path.read_text(encoding="utf-8"))
    applied = [r for r in records if r["pert_check"]]
    passed = 0
    for r in applied:
        good = _sacrebleu(name, r["mt_sent"], r["eng_sent"])
        perturbed = _sacrebleu(name, r["pert_sent"], r["eng_sent"])
        passed += perturbed > good if r["pert_id"] == REFERENCE_BASELINE else good > perturbed
    return len(applied), passed, len(records) - len(applied)


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    """One score cache for the module's runs, as a user's runs share one: the files' common translations are
    scored once (a cell's result never depends on the cache, tests/engine/test_run_independence.py)."""
    return tmp_path_factory.mktemp("demetr-cache")


def test_all_35_files_are_here(data_dir):
    assert len(FILES) == 35


@pytest.mark.slow
@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_accuracy_of_each_file_equals_a_direct_sacrebleu_count(path, data_dir, cache_dir, monkeypatch, capsys):
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(cache_dir))
    assert main(["run", "--suite", str(path), "--metrics", "sentBLEU,chrF", "--format", "json"]) == 0
    tables = json.loads(capsys.readouterr().out)  # one document: a field per table
    summary = pd.DataFrame(tables["phenomena"]).set_index("metric")
    severity = pd.DataFrame(tables["severity"]).set_index("metric")
    records = json.loads(path.read_text(encoding="utf-8"))
    for name in SCORERS:
        n, passed, not_applied = _direct(path, name)
        row = summary.loc[name]
        assert row["phenomenon"] == records[0]["pert_name"]
        assert (row["n"], row["concordant"], row["not_applied"], row["unsupported"]) == (n, passed, not_applied, 0)
        assert row["accuracy"] == pytest.approx(100.0 * passed / n)
        assert severity.loc[name, "severity"] == records[0]["severity"]
        assert (severity.loc[name, "n"], severity.loc[name, "concordant"]) == (n, passed)

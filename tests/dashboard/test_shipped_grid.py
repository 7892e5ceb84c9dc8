"""The grid that ships with the package: every shipped metric, current signatures, the same numbers as a live
run, clear errors."""
from __future__ import annotations

import importlib.util

import pytest

from muttlab.dashboard import shipped
from muttlab.engine import runner
from muttlab.sources import load_mutt_experiments
from muttlab.errors import DataError
from muttlab.metrics.registry import MetricInfo, Registry
from muttlab.settings import Settings
from tests.conftest import REPO

RERUN = "re-run scripts/precompute_grid.py: " + shipped.REGENERATE


@pytest.fixture(scope="module")
def grid():
    loaded = shipped.load()
    assert loaded is not None, f"data/results/grid.json is missing; {RERUN}"
    return loaded


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("precompute_grid", REPO / "scripts" / "precompute_grid.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_shipped_signature_is_current(grid, script):
    # The shipped models' signatures, as the script computes them: a model installed on this machine is not
    # what the package ships.
    registry = runner.registry_for(script.shipped_settings(Settings()))
    try:
        current = {name: registry.info(name).signature for name in grid.signatures if name in registry.names}
    finally:
        registry.close()
    assert set(current) == set(grid.signatures), f"metrics no longer registered: {set(grid.signatures) - set(current)}"
    stale = grid.stale(current)
    assert not stale, f"signatures changed for {sorted(stale)}; {RERUN}"


def test_grid_covers_every_shipped_metric(grid):
    # Learned and neural metrics included; a metric that cannot run without a user's model is listed with why.
    built_in = set(Registry(use_entry_points=False).names)
    missing = built_in - set(grid.metrics) - set(grid.skipped)
    assert not missing, f"the grid lacks {sorted(missing)}; {RERUN}"
    assert {"ReVal-LSTM", "ReVal-TreeLSTM", "DREEM", "ML-DREEM", "ML-METEOR", "BERTScore-F1",
            "EmbeddingCosine"} <= set(grid.metrics)
    assert "COMET" in grid.skipped and "unbabel-comet" in grid.skipped["COMET"]


def test_script_default_is_every_shipped_metric_with_the_shipped_models(script):
    catalogue = [MetricInfo("BLEU-4", "built-in", True), MetricInfo("ReVal-TreeLSTM", "built-in", True),
                 MetricInfo("COMET", "built-in", False, reason="unbabel-comet is not installed"),
                 MetricInfo("Mine", "entry point mypkg:mine", True)]
    assert script.default_metrics(catalogue) == (["BLEU-4", "ReVal-TreeLSTM"],
                                                 {"COMET": "unbabel-comet is not installed"})
    assert Settings().model_dir is not None and script.shipped_settings(Settings()).model_dir is None


def test_grid_covers_the_study(grid):
    # MUTT's ten experiment sets at 5/10/20 references (data/README.md), the study's default metrics.
    assert set(grid.corruptions) == {"neg_subj", "neg_verb", "sem_opps", "shuffled", "passive", "near_syms",
                                     "det_sub", "double_PP", "remove_prep", "swap_chunks"}
    assert grid.ref_counts == [5, 10, 20]
    assert {"BLEU-4", "METEOR-1.5", "CIDEr-D", "ROUGE-L", "TER"} <= set(grid.metrics)
    assert len(grid.data_files) == 30 and all(len(sha) == 64 for sha in grid.data_files.values())


def test_shipped_cells_equal_a_live_run(grid, data_dir, cache_dir):
    settings = Settings(data_dir=data_dir, cache_dir=cache_dir)
    suite = load_mutt_experiments(settings).select(["neg_subj", "det_sub"])
    live = runner.run(suite, ["BLEU-4"], [5], settings).accuracy()
    cells = shipped.select(grid, ["BLEU-4"], ["neg_subj", "det_sub"], [5])
    merged = cells.merge(live, on=["metric", "corruption", "refs"], suffixes=("", "_live"))
    assert len(merged) == 2
    assert merged["n"].tolist() == [336, 65]  # data/README.md: set sizes
    assert merged["passed"].tolist() == merged["passed_live"].tolist()
    assert merged["accuracy"].tolist() == pytest.approx(merged["accuracy_live"].tolist(), abs=1e-4)


def test_data_checksums_match_the_data_dir(grid, data_dir):
    for relative, sha in list(grid.data_files.items())[:3]:
        assert shipped.sha256_file(data_dir / relative) == sha, f"{relative} differs from the grid's data; {RERUN}"


def test_malformed_grid_is_a_data_error(tmp_path):
    bad = tmp_path / "grid.json"
    bad.write_text('{"format": 1, "cells": [{"metric": "BLEU-4"}]}')
    with pytest.raises(DataError, match="cells lack"):
        shipped.load(bad)
    bad.write_text("{not json")
    with pytest.raises(DataError, match="malformed JSON"):
        shipped.load(bad)
    assert shipped.load(tmp_path / "absent.json") is None


def test_precompute_script_writes_a_stamped_grid(tmp_path, monkeypatch, data_dir, grid, script):
    monkeypatch.setenv("MUTTLAB_DATA_DIR", str(data_dir))
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "grid.json"
    assert script.main(["--metrics", "BLEU-4,NO-SUCH-METRIC", "--output", str(out)]) == 0
    written = shipped.load(out)
    assert written.metrics == ["BLEU-4"] and "NO-SUCH-METRIC" in written.skipped
    assert len(written.cells) == 30  # 10 experiment sets x 5/10/20 references
    assert written.data_files == grid.data_files  # the same data as the shipped file
    merged = written.cells.merge(grid.cells, on=["metric", "corruption", "refs"], suffixes=("", "_shipped"))
    assert merged["passed"].tolist() == merged["passed_shipped"].tolist()

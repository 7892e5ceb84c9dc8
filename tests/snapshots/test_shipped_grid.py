"""The grid that ships with the package: a current stamp (data, code, signatures, rules), every shipped metric,
the same numbers and signatures as a live run, and a script that writes it."""
from __future__ import annotations

import pytest

from muttlab.engine import runner
from muttlab.metrics.registry import MetricInfo, Registry
from muttlab.settings import Settings
from muttlab.snapshots import KINDS, load
from muttlab.sources import load_mutt_experiments
from tests.snapshots.conftest import assert_current, shipped


@pytest.fixture(scope="module")
def snapshot():
    return shipped("grid")


@pytest.fixture(scope="module")
def grid(snapshot):
    return snapshot.content


def test_the_shipped_grid_is_current(data_dir):
    assert_current("grid", data_dir)


def test_it_was_judged_under_the_default_rules(snapshot, grid):
    assert snapshot.stamp.rules == Settings().rules.signature() == "tol:0.15|tie:1e-9"
    # Each metric's results signature names the rules, its noise floor where that decides ties.
    assert all(sig.startswith(snapshot.stamp.signatures[m] + "|tol:0.15|tie:1e-9")
               for m, sig in grid.signatures.items())
    assert grid.signatures["BERTScore-F1"].endswith("|tie:1e-9|floor:1e-6")


def test_grid_covers_every_shipped_metric(grid):
    # Learned and neural metrics included; a metric that cannot run without a user's model is listed with why.
    built_in = set(Registry(use_entry_points=False).names)
    missing = built_in - set(grid.metrics) - set(grid.skipped)
    assert not missing, f"the grid lacks {sorted(missing)}; re-run {KINDS['grid'].regenerate}"
    assert {"ReVal-LSTM", "ReVal-TreeLSTM", "DREEM", "ML-DREEM", "ML-METEOR", "BERTScore-F1",
            "EmbeddingCosine"} <= set(grid.metrics)
    assert "COMET" in grid.skipped and "unbabel-comet" in grid.skipped["COMET"]


def test_script_default_is_every_shipped_metric_with_the_shipped_models(script):
    module = script("grid")
    catalogue = [MetricInfo("BLEU-4", "built-in", True), MetricInfo("ReVal-TreeLSTM", "built-in", True),
                 MetricInfo("COMET", "built-in", False, reason="unbabel-comet is not installed"),
                 MetricInfo("Mine", "entry point mypkg:mine", True)]
    assert module.default_metrics(catalogue) == (["BLEU-4", "ReVal-TreeLSTM"],
                                                 {"COMET": "unbabel-comet is not installed"})
    assert Settings().model_dir is not None and module.shipped_settings(Settings()).model_dir is None


def test_grid_covers_the_study(snapshot, grid):
    # MUTT's ten experiment sets at 5/10/20 references (data/README.md), the study's default metrics.
    assert set(grid.corruptions) == {"neg_subj", "neg_verb", "sem_opps", "shuffled", "passive", "near_syms",
                                     "det_sub", "double_PP", "remove_prep", "swap_chunks"}
    assert grid.ref_counts == [5, 10, 20]
    assert {"BLEU-4", "METEOR-1.5", "CIDEr-D", "ROUGE-L", "TER"} <= set(grid.metrics)
    assert len(snapshot.stamp.data) == 30 and all(len(sha) == 64 for sha in snapshot.stamp.data.values())


def test_shipped_cells_equal_a_live_run(grid, data_dir, cache_dir):
    settings = Settings(data_dir=data_dir, cache_dir=cache_dir)
    suite = load_mutt_experiments(settings).select(["neg_subj", "det_sub"])
    live = runner.run(suite, ["BLEU-4"], [5], settings).accuracy()
    cells = grid.select(["BLEU-4"], ["neg_subj", "det_sub"], [5])
    merged = cells.merge(live, on=["metric", "corruption", "refs"], suffixes=("", "_live"))
    assert len(merged) == 2
    assert merged["n"].tolist() == [336, 65]  # data/README.md: set sizes
    assert merged["passed"].tolist() == merged["passed_live"].tolist()
    assert merged["accuracy"].tolist() == pytest.approx(merged["accuracy_live"].tolist(), abs=1e-4)
    assert merged["signature"].tolist() == merged["signature_live"].tolist()


def test_precompute_script_writes_a_stamped_grid(tmp_path, monkeypatch, data_dir, snapshot, script):
    monkeypatch.setenv("MUTTLAB_DATA_DIR", str(data_dir))
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MUTTLAB_TIE_RULE", raising=False)
    out = tmp_path / "grid.json"
    module = script("grid")
    assert module.main(["--metrics", "BLEU-4,NO-SUCH-METRIC", "--output", str(out)]) == 0
    written = load(KINDS["grid"], out)
    assert written.content.metrics == ["BLEU-4"] and "NO-SUCH-METRIC" in written.content.skipped
    assert len(written.content.cells) == 30  # 10 experiment sets x 5/10/20 references
    assert (written.stamp.data, written.stamp.code, written.stamp.rules) == (
        snapshot.stamp.data, snapshot.stamp.code, snapshot.stamp.rules)  # the same data, code and rules
    merged = written.content.cells.merge(snapshot.content.cells, on=["metric", "corruption", "refs"],
                                         suffixes=("", "_shipped"))
    assert merged["passed"].tolist() == merged["passed_shipped"].tolist()
    # The shipped grid is judged by the default rules: a script run under others writes nothing.
    monkeypatch.setenv("MUTTLAB_TIE_RULE", "exact")
    assert module.main(["--metrics", "BLEU-4", "--output", str(tmp_path / "exact.json")]) == 2
    assert not (tmp_path / "exact.json").exists()

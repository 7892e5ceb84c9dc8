"""The metric interface's input checks and the registry's ways of finding metrics."""
from __future__ import annotations

from importlib import metadata

import pytest

from muttlab.metrics.base import MetricError, MetricUnavailable
from muttlab.metrics.registry import Registry, UnknownMetric


@pytest.fixture(scope="module")
def registry():
    return Registry()


@pytest.mark.parametrize("cands, refs, message", [
    (["a cat"], [[]], "candidate 0 has an empty reference list"),
    (["a cat", "a dog"], [["a cat"]], "got 2 candidates but 1 reference lists"),
])
def test_bad_batches_are_refused(registry, cands, refs, message):
    with pytest.raises(MetricError, match=message):
        registry.get("BLEU-4").score(cands, refs)


def test_unknown_metric_lists_the_known_ones(registry):
    with pytest.raises(UnknownMetric, match="unknown metric 'BLUE'.*BLEU-4"):
        registry.resolve("BLUE")
    assert registry.resolve("bleu-4, cider-d") == ["BLEU-4", "CIDEr-D"]


def test_import_path_registration():
    reg = Registry(extra_paths=["tests.engine.counting_metric:make"])
    assert "word-overlap" in reg.names
    assert reg.get("word-overlap").score(["a red cat"], [["the cat is red"]])[0] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="not a muttlab.metrics.base.Metric"):
        Registry(extra_paths=["tests.engine.counting_metric:not_a_metric"])
    with pytest.raises(ValueError, match="must look like package.module:callable"):
        Registry(extra_paths=["tests.engine.counting_metric"])
    with pytest.raises(ValueError, match="cannot import 'no.such.module'"):
        Registry(extra_paths=["no.such.module:make"])


def test_entry_point_registration(monkeypatch):
    ep = metadata.EntryPoint(name="word-overlap", value="tests.engine.counting_metric:make",
                             group="muttlab.metrics")
    monkeypatch.setattr(metadata, "entry_points",
                        lambda group=None: [ep] if group == "muttlab.metrics" else [])
    reg = Registry()
    assert reg.info("word-overlap").available
    assert reg.info("word-overlap").source.startswith("entry point")


def test_unloadable_builtin_is_reported_not_raised(monkeypatch):
    from muttlab.metrics import registry as registry_module
    monkeypatch.setitem(registry_module.BUILTIN, "Broken", ("metrics.no_such_module:Metric", {}))
    reg = Registry(use_entry_points=False)
    info = reg.info("Broken")
    assert not info.available and "No module named 'metrics.no_such_module'" in info.reason
    with pytest.raises(MetricUnavailable):
        reg.get("Broken")
    assert "Broken" not in reg.resolve("all")


def test_a_metric_whose_optional_extra_is_missing_names_the_extra(monkeypatch, tmp_path):
    # A core install (no [learned] extra) has no torch: ReVal-based metrics say which extra brings it.
    from muttlab.metrics import registry as registry_module
    (tmp_path / "needs_torch_probe.py").write_text("import torch_not_installed_probe\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(registry_module.OPTIONAL_EXTRAS, "torch_not_installed_probe", "learned")
    monkeypatch.setitem(registry_module.BUILTIN, "NeedsTorch", ("needs_torch_probe:Metric", {}))
    info = Registry(use_entry_points=False).info("NeedsTorch")
    assert not info.available
    assert "pip install 'muttlab[learned]'" in info.reason

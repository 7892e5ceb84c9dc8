"""`muttlab check-metric`: the shipped cheap metrics pass every property; metrics broken on purpose fail the
property they break, and the command's exit status says so (for CI)."""
from __future__ import annotations

import numpy as np
import pytest

from muttlab.cli import main
from muttlab.conformance import all_passed, check_metric, checks_frame
from muttlab.metrics.base import Metric
from muttlab.metrics.registry import Registry

# Shipped metrics cheap enough for every CI run (no JVM, no model download, no training). The full list,
# METEOR-1.5, TERp, BADGER, W2V-AVG, the learned and neural metrics included, is run for the README
# with `muttlab check-metric all`.
CI_METRICS = ["BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "ROUGE-L", "CIDEr-D", "sentBLEU", "chrF", "TER", "DeltaBLEU"]


def _overlap(cand: str, refs) -> float:
    words = set(cand.lower().split())
    return max(len(words & set(r.lower().split())) / max(1, len(words | set(r.lower().split()))) for r in refs)


class Overlap(Metric):
    """A well-behaved word-overlap metric (Jaccard, best reference)."""

    name = "Overlap"
    score_range = (0.0, 1.0)

    def _score(self, candidates, references):
        return np.array([_overlap(c, r) for c, r in zip(candidates, references)])


class Noisy(Overlap):
    name = "Noisy"

    def _score(self, candidates, references):
        return super()._score(candidates, references) + np.random.default_rng().random(len(candidates)) * 1e-3


class PositionDependent(Overlap):
    name = "PositionDependent"
    score_range = None

    def _score(self, candidates, references):
        return super()._score(candidates, references) + np.arange(len(candidates)) * 0.01


class Inverted(Overlap):
    name = "Inverted"
    score_range = None

    def _score(self, candidates, references):
        return -super()._score(candidates, references)


class HiddenSetting(Overlap):
    """A setting that changes the numbers but is left out of the signature."""

    name = "HiddenSetting"
    score_range = None

    def __init__(self, scale: float = 1.0):
        self.scale = scale

    def _score(self, candidates, references):
        return super()._score(candidates, references) * self.scale


class CrashesOnUnicode(Overlap):
    name = "CrashesOnUnicode"

    def _score(self, candidates, references):
        for c in candidates:
            c.encode("ascii")
        return super()._score(candidates, references)


def make_noisy():
    return Noisy()


def verdicts(metric) -> dict[str, bool | None]:
    return {c.name: c.passed for c in check_metric(metric, items=16)}


@pytest.mark.parametrize("name", CI_METRICS)
def test_cheap_shipped_metrics_pass(name):
    registry = Registry(use_entry_points=False)
    try:
        results = {name: check_metric(registry.get(name), items=20)}
    finally:
        registry.close()
    frame = checks_frame(results)
    assert all_passed(results), frame[frame["result"] == "FAIL"].to_string()
    assert set(frame["property"]) >= {"deterministic", "batch order", "batch size", "identity", "empty / Unicode",
                                      "range", "signature", "speed"}


def test_a_good_metric_passes_and_each_broken_one_fails_its_property():
    assert all(v is not False for v in verdicts(Overlap()).values())
    assert verdicts(Noisy())["deterministic"] is False
    position = verdicts(PositionDependent())
    assert position["batch order"] is False and position["batch size"] is False
    assert verdicts(Inverted())["identity"] is False
    assert verdicts(HiddenSetting())["signature"] is False
    assert verdicts(CrashesOnUnicode())["empty / Unicode"] is False


def test_exit_status_for_ci(capsys):
    assert main(["check-metric", "tests.test_conformance:make_noisy", "--items", "10", "--format", "csv"]) == 1
    out = capsys.readouterr().out
    assert "Noisy,deterministic,FAIL" in out
    assert main(["check-metric", "BLEU-4", "--items", "10", "--format", "csv"]) == 0
    assert "BLEU-4,identity,PASS" in capsys.readouterr().out

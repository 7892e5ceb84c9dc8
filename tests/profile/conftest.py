"""What the profile tests share: settings on the real data with a cache kept for the test process, and sacreBLEU
itself, the reference implementation every expected verdict here is counted with."""
from __future__ import annotations

import pytest
from sacrebleu.metrics import CHRF, TER

from muttlab.engine.runner import registry_for
from muttlab.settings import Settings


@pytest.fixture(scope="session")
def profile_settings(data_dir, tmp_path_factory) -> Settings:
    return Settings(data_dir=data_dir, cache_dir=tmp_path_factory.mktemp("profile-cache"), workers=1)


@pytest.fixture(scope="session")
def registry(profile_settings):
    reg = registry_for(profile_settings)
    yield reg
    reg.close()


def sacre_chrf(hypothesis: str, references: list[str]) -> float:
    """sacreBLEU 2.6's chrF of one segment (what the registered chrF is: CHRF() defaults)."""
    return CHRF().sentence_score(hypothesis, references).score


def sacre_ter(hypothesis: str, references: list[str]) -> float:
    """sacreBLEU 2.6's TER of one segment (TER() defaults)."""
    return TER().sentence_score(hypothesis, references).score


def strictly_better(first: float, second: float, higher_is_better: bool, epsilon: float | None = None) -> bool:
    """A strict trial's verdict as docs/corruptions.md states it: the first text better beyond the tie rule —
    |Δ| <= 1e-9 · max(1, |first|) (the default relative rule) or |Δ| <= ε (a calibrated one) is a tie, and fails."""
    delta = first - second
    bound = 1e-9 * max(1.0, abs(first)) if epsilon is None else max(epsilon, 0.0)
    if abs(delta) <= bound:
        return False
    return delta > 0 if higher_is_better else delta < 0

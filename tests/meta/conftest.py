"""The TED MQM judgments and sacrebleu metrics' results on them, computed once per test process."""
from __future__ import annotations

import pytest

from muttlab import api
from muttlab.meta import mqm
from muttlab.settings import Settings

# The metrics every equality test uses: sacrebleu's, fast enough for the suite (METEOR and BERTScore over
# 14,000 outputs belong to scripts/precompute_meta_eval.py).
SACRE = ["sentBLEU", "chrF", "TER"]


@pytest.fixture(scope="session")
def meta_settings(data_dir, tmp_path_factory) -> Settings:
    return Settings(data_dir=data_dir, cache_dir=tmp_path_factory.mktemp("meta-cache"), workers=1)


@pytest.fixture(scope="session")
def ted(meta_settings):
    """pair -> the TED judgments."""
    return {pair: mqm.load_ted(meta_settings, pair) for pair in mqm.TED_PAIRS}


@pytest.fixture(scope="session")
def ted_results(meta_settings, ted):
    """pair -> sentBLEU, chrF and TER meta-evaluated (item-grouped acc*_eq and the system level), scores kept."""
    return {pair: api.meta_evaluate(meta_settings, judgments, metrics=SACRE,
                                    statistics=["acc_eq_item", "pairwise_acc_sys", "pearson_sys"], significance=[],
                                    keep_scores=True)
            for pair, judgments in ted.items()}

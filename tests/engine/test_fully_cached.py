"""Whether a run would score anything: ``runner.fully_cached`` answers from the score cache alone, for the cells
a run scored and for no other (another reference count, metric or corruption type), and a run it calls fully
cached calls no metric. On real MUTT trials."""
from __future__ import annotations

import pytest

from muttlab import api
from muttlab.engine import runner
from muttlab.trials import Suite


@pytest.fixture
def cell(mutt_suite):
    """Part of the Negated Verb cell: 40 MUTT trials."""
    return Suite("mutt", mutt_suite.of("neg_verb")[:40])


def test_a_scored_cell_is_fully_cached_and_no_other(cell, mutt_suite, data_settings):
    registry = runner.registry_for(data_settings)
    n = 2 * len(cell.trials)  # originals and corruptions
    assert not runner.fully_cached(cell, "BLEU-4", [5], data_settings, registry)  # an empty cache
    runner.run(cell, ["BLEU-4", "CIDEr-D"], [5], data_settings, registry)
    assert runner.fully_cached(cell, "BLEU-4", [5], data_settings, registry)
    # CIDEr-D's scores are keyed with the whole batch's references (its document frequencies): the run's
    # batches are the ones looked up.
    assert runner.fully_cached(cell, "CIDEr-D", [5], data_settings, registry)
    assert not runner.fully_cached(cell, "BLEU-4", [10], data_settings, registry)
    assert not runner.fully_cached(cell, "ROUGE-L", [5], data_settings, registry)
    wider = Suite("mutt", cell.trials + mutt_suite.of("det_sub")[:10])
    assert not runner.fully_cached(wider, "BLEU-4", [5], data_settings, registry)
    # What it calls fully cached, a run takes from the cache: its progress starts with every item done (the
    # runner's count of what the cache had, muttlab.engine.progress.RunProgress.planned).
    assert _first_count(cell, "BLEU-4", [5], data_settings, registry) == f"{n} of {n} items"
    assert _first_count(cell, "BLEU-4", [10], data_settings, registry) == f"0 of {n} items"


def _first_count(suite, metric, ref_counts, settings, registry) -> str:
    messages = []
    runner.run(suite, [metric], ref_counts, settings, registry, progress=lambda *r: messages.append(r[2]))
    return next(m for m in messages if m.startswith("scoring")).partition(": ")[2]


def test_what_cannot_be_run_is_not_fully_cached(cell, data_settings):
    """A run that would fail is left to say why: an impossible reference count, an unknown metric, no trials."""
    assert not runner.fully_cached(cell, "BLEU-4", [99], data_settings)
    assert not runner.fully_cached(cell, "no-such-metric", [5], data_settings)
    assert not runner.fully_cached(Suite("empty", []), "BLEU-4", [5], data_settings)


def test_the_api_answers_for_a_cell_of_a_suite(cell, data_settings):
    assert not api.fully_cached(data_settings, cell, "BLEU-4", [5])
    api.run_grid(data_settings, ["BLEU-4"], ref_counts=[5], suite=cell)
    assert api.fully_cached(data_settings, cell, "BLEU-4", [5])

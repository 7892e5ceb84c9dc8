"""What a server's warm-up loads before visitors ask: everything by default, only a first page's needs with
``MUTTLAB_WARM_UP=quick``, nothing with ``none``."""
from __future__ import annotations

import time

import pytest

from muttlab.errors import InvalidArgument
from muttlab.settings import Settings, load_settings


def test_the_warm_up_setting_comes_from_the_environment():
    assert load_settings({}).warm_up == "full"
    assert load_settings({"MUTTLAB_WARM_UP": "full"}).warm_up == "full"
    assert load_settings({"MUTTLAB_WARM_UP": " Quick "}).warm_up == "quick"
    assert load_settings({"MUTTLAB_WARM_UP": "NONE"}).warm_up == "none"
    for bad in ("fast", "0", "quick,full"):
        with pytest.raises(InvalidArgument, match=f"MUTTLAB_WARM_UP={bad!r}: give 'full'"):
            load_settings({"MUTTLAB_WARM_UP": bad})


@pytest.mark.java
def test_a_quick_warm_up_loads_a_first_pages_needs_and_stops(tmp_path, capfd):
    from muttlab.dashboard import services

    state = services.warm_start(Settings(cache_dir=tmp_path, workers=1, warm_up="quick"))
    deadline = time.monotonic() + 300
    while state.done is None:
        assert time.monotonic() < deadline, "the quick warm-up did not end in 5 minutes"
        time.sleep(0.1)
    assert state.quick.is_set() and not state.failed
    # The landing page's grid, the catalogue, spaCy and the quick metrics, METEOR's JVM among them.
    assert {"shipped grid", "metric catalogue", "spaCy", "BLEU-4", "chrF", "METEOR-1.5"} <= set(state.ready)
    # Not the slower metrics (a model each), the drill-down's trials or the severity curves' sentences.
    assert not {"BERTScore-F1", "EmbeddingCosine", "TERp", "trials", "severity sentences"} & set(state.ready)
    assert "(MUTTLAB_WARM_UP=quick: the rest loads when first asked)" in capfd.readouterr().err


def test_no_warm_up_loads_nothing(tmp_path, capfd, monkeypatch):
    from muttlab.dashboard import services
    from muttlab.metrics import meteor

    before = meteor.process().running
    monkeypatch.setattr(meteor.process(), "threads", meteor.process().threads)  # put back after the test
    state = services.warm_start(Settings(cache_dir=tmp_path, workers=1, warm_up="none"))
    deadline = time.monotonic() + 30
    while state.done is None:
        assert time.monotonic() < deadline, "an empty warm-up did not end in 30 s"
        time.sleep(0.01)
    assert state.quick.is_set() and state.ready == [] and not state.failed
    assert meteor.process().running == before  # no JVM started for it
    # The JVM a visitor's METEOR starts leaves the server's interpreter a core (docs/deploy.md).
    assert meteor.process().threads == meteor.serving_threads()
    assert "0 loaded (MUTTLAB_WARM_UP=none: everything loads when first asked)" in capfd.readouterr().err

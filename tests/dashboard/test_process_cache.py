"""The dashboard's one process cache (:mod:`muttlab.dashboard.shared`): values computed once per key with a lock
per key, byte-capped regions that drop the least recently used, keys that hold the settings, and nothing a
browser's message (Streamlit's cache clearing) can drop; the visitors' suites kept in it."""
from __future__ import annotations

import threading
import time

import numpy as np
import pandas as pd
import pytest
import streamlit as st

import muttlab.api
from muttlab.access.roles import ANONYMOUS, Identity, Role
from muttlab.dashboard import services, shared
from muttlab.dashboard.services import user_suites
from muttlab.errors import PermissionDenied
from muttlab.settings import load_settings
from muttlab.trials import Suite, Trial
from tests.dashboard.conftest import app_env  # noqa: F401 (fixture)

WAIT_S = 60  # a generous bound on a busy machine; no test measures time


@pytest.fixture
def fresh_regions():
    """The process cache's byte-capped regions made afresh for the test, and forgotten after it."""
    shared.region.clear()
    yield
    shared.region.clear()


@pytest.fixture
def sick_pair(data_dir) -> tuple[str, str]:
    """SICK pair 1 (``sick/SICK.txt``): sentence B as the candidate, sentence A as its reference."""
    sick = pd.read_csv(data_dir / "sick" / "SICK.txt", sep="\t", index_col="pair_ID")
    return sick.loc[1, "sentence_B"], sick.loc[1, "sentence_A"]


def _waiting(region: shared.Region, key) -> int:
    with region.lock:
        return region._computing.get(key, [None, 0])[1]


def test_one_slow_value_is_computed_once_and_holds_up_no_other():
    region = shared.Region()
    started, release, calls, answers = threading.Event(), threading.Event(), [], []

    def slow() -> str:
        calls.append("slow")
        started.set()
        release.wait(WAIT_S)
        return "slow value"

    askers = [threading.Thread(target=lambda: answers.append(region.computed("slow", slow))) for _ in range(3)]
    for asker in askers:
        asker.start()
    assert started.wait(WAIT_S)
    deadline = time.monotonic() + WAIT_S
    while _waiting(region, "slow") < 3 and time.monotonic() < deadline:  # all three at the slow key's door
        time.sleep(0.01)
    assert _waiting(region, "slow") == 3
    # Another key is answered while the slow one is still being computed.
    quick: list[str] = []
    other = threading.Thread(target=lambda: quick.append(region.computed("quick", lambda: "quick value")))
    other.start()
    other.join(WAIT_S)
    assert quick == ["quick value"] and "slow" not in region
    release.set()
    for asker in askers:
        asker.join(WAIT_S)
    assert answers == ["slow value"] * 3 and calls == ["slow"]
    assert not region._computing  # no lock left behind for a key no one waits on


def test_a_capped_region_drops_the_least_recently_used_first():
    frames = [pd.DataFrame({"score": np.random.default_rng(k).random(1_000)}) for k in range(4)]
    weight = int(frames[0].memory_usage(deep=True).sum())  # pandas' own count: 8,000 bytes of floats + the index
    assert shared.footprint(frames[0]) == weight
    region = shared.Region(3 * weight)
    for k in range(3):
        assert region.put(k, frames[k])
    assert region.get(0) is frames[0]  # used: now the newest
    assert region.put(3, frames[3])
    assert list(region.items) == [2, 0, 3] and region.bytes == 3 * weight
    assert region.get(1) is None


def test_a_value_over_the_whole_cap_is_answered_but_not_kept_and_nothing_is_a_value_too():
    region = shared.Region(2 ** 10)
    big = "x" * 2 ** 11
    assert region.computed("big", lambda: big) is big and "big" not in region and region.bytes == 0
    calls = []
    assert region.computed("none", lambda: calls.append(1)) is None
    assert region.computed("none", lambda: calls.append(1)) is None and calls == [1]


def test_a_functions_clear_forgets_only_its_own_pinned_values():
    @shared.singleton
    def first(n: int) -> object:
        return object()

    @shared.singleton
    def second(n: int) -> object:
        return object()

    a, b = first(1), second(1)
    assert first(1) is a and first(2) is not a and second(1) is b
    first.clear()
    assert first(1) is not a and second(1) is b
    first.clear()
    second.clear()


def test_the_regions_caps_are_their_shares_of_memo_mb(monkeypatch, fresh_regions):
    """docs/deploy.md (``MUTTLAB_MEMO_MB``): the cap for finished results, plus a sixteenth for the landing grid's
    HTML, a quarter for the uploads a link can name and a sixteenth for the Playground."""
    monkeypatch.setenv("MUTTLAB_MEMO_MB", "32")
    caps = {name: shared.region(name).max_bytes for name in ("results", "pages", "uploads", "playground")}
    assert caps == {"results": 32 * 2 ** 20, "pages": 2 * 2 ** 20, "uploads": 8 * 2 ** 20, "playground": 2 * 2 ** 20}


def test_playground_scores_are_kept_by_what_was_asked_the_settings_included(app_env, fresh_regions, monkeypatch,
                                                                           sick_pair):
    candidate, reference = sick_pair
    scored = []
    real = muttlab.api.score_together

    def counted(settings, *args, **kwargs):
        scored.append(settings)
        return real(settings, *args, **kwargs)

    monkeypatch.setattr(muttlab.api, "score_together", counted)
    first, stricter = load_settings(), load_settings(tolerance=0.05)
    asked = (("BLEU-4", "chrF"), (candidate,), (reference,))
    scores = services.playground_scores(first, *asked)
    direct = muttlab.api.score(first, list(asked[0]), [candidate], [[reference]], services.registry(first))
    pd.testing.assert_frame_equal(scores, direct)
    assert services.playground_scores(first, *asked) is scores and scored == [first]
    assert not services.playground_scored(stricter, *asked)  # other settings: another entry
    services.playground_scores(stricter, *asked)
    assert scored == [first, stricter]
    st.cache_data.clear()  # what a browser's clear-cache message would call
    st.cache_resource.clear()
    assert services.playground_scored(first, *asked) and services.playground_scored(stricter, *asked)


def test_corruptions_are_parsed_once_per_question_and_outlive_streamlits_caches(app_env, fresh_regions,
                                                                                monkeypatch, sick_pair):
    sentence, reference = sick_pair
    parsed = []
    real = muttlab.api.corrupt
    monkeypatch.setattr(muttlab.api, "corrupt", lambda *args: parsed.append(args) or real(*args))
    asked = (sentence, (reference,), ("double_PP", "neg_verb"), 0)
    corrupted = services.corrupt_sentence(*asked)
    pd.testing.assert_frame_equal(corrupted, real(*asked))
    st.cache_data.clear()
    st.cache_resource.clear()
    assert services.corrupt_sentence(*asked) is corrupted and len(parsed) == 1
    services.corrupt_sentence(sentence, (reference,), ("double_PP", "neg_verb"), 1)  # another seed: parsed again
    assert len(parsed) == 2


def _suite(sentence: str, reference: str) -> Suite:
    return Suite("mine", [Trial(id="neg_verb/1", corruption="neg_verb", original=sentence,
                                corrupted=sentence.replace(" is ", " is not ", 1), references=(reference,))])


@pytest.mark.parametrize("actor", [ANONYMOUS, Identity("ann", Role.ANNOTATOR)])
def test_the_visitors_suites_live_in_the_cache_and_only_a_maintainer_empties_it(app_env, actor, sick_pair):
    settings = load_settings()
    user_suites._held.clear()
    name = user_suites.add(user_suites.Visitor("tab", "ip:unknown"), _suite(*sick_pair), 4)
    with pytest.raises(PermissionDenied):
        shared.clear_all(actor, settings)
    st.cache_data.clear()
    st.cache_resource.clear()
    assert user_suites.lookup(name).name == name
    shared.clear_all(Identity("max", Role.MAINTAINER), settings)
    assert user_suites.lookup(name) is None

"""A trial suite (trials-jsonl) uploaded to the Challenge sets page by an anonymous visitor of the read-only demo
(AppTest, ``MUTTLAB_READ_ONLY=1``): fields that lie — a built-in corruption type's name, a MUTT trial's id,
markup in the texts — get the visitor's own grid and trials, never the shipped set's; a file over the size cap of
a visitor's suite is refused before it is kept."""
from __future__ import annotations

import json
import re

import pytest

from muttlab.dashboard.services import user_suites
from tests.attacks.test_links import markdown_values, page_text
from tests.dashboard.conftest import (app_env, grid_html, html_bodies, open_link, open_page, press,  # noqa: F401
                                      trial_cards)
from tests.dashboard.test_mine_page import grid_links

MARKUP = '<img src=x onerror=alert(1)> **bold**'
RECORDS = [{"id": "neg_subj/1", "corruption": "neg_subj", "original": "A man is riding a horse.",
            "corrupted": f"There is no man riding a horse. {MARKUP}",
            "references": ["A man rides a horse.", "Someone is on a horse."], "human_score": 5.0},
           {"id": "neg_subj/2", "corruption": "neg_subj", "original": "Two dogs play in the snow.",
            "corrupted": "There are no dogs playing in the snow.",
            "references": ["Two dogs are playing in snow.", "Dogs play outside."]}]


@pytest.fixture
def demo(app_env, monkeypatch):
    monkeypatch.setenv("MUTTLAB_READ_ONLY", "1")
    user_suites._held.clear()  # a server holding no visitor's suite
    yield app_env
    user_suites._held.clear()


def _upload(data: bytes):
    at = open_page("challenge")
    at.radio(key="ch-source").set_value("upload")
    at.file_uploader(key="ch-upload").set_value(("lying.jsonl", data, "application/jsonl"))
    at.multiselect(key="ch-metrics").set_value(["BLEU-4"])
    return at.run()


def test_a_suite_claiming_a_mutt_type_gets_its_own_grid_and_trials(demo):
    data = "".join(json.dumps(r) + "\n" for r in RECORDS).encode("utf-8")
    at = press(_upload(data), "ch-score")
    assert not at.exception and not at.error
    links = grid_links(at)
    assert links and all(link["suite"].startswith("mine:") for link in links)  # never the shipped MUTT set
    counts = re.findall(r"accuracy [\d.]+% \(\d+/(\d+)\)", grid_html(at))
    assert counts and set(counts) == {"2"}  # every cell of its own 2 trials, not MUTT's 336 Negated Subject ones
    opened = open_link("drilldown", {**links[0], "show": "all"})
    assert not opened.exception and not opened.error
    assert int({m.label: m.value for m in opened.metric}["trials"]) == 2
    assert {card["trial"] for card in trial_cards(opened)} == {"neg_subj/1", "neg_subj/2"}
    bodies = "".join(html_bodies(opened))
    assert "&lt;img" in bodies and "<img" not in bodies  # the markup is text
    assert not any("<img" in m for m in markdown_values(opened)) and "<img" not in page_text(opened).replace(
        "&lt;img", "")


def test_a_suite_over_the_visitors_size_cap_is_refused_before_it_is_kept(demo, monkeypatch):
    monkeypatch.setenv("MUTTLAB_MAX_SUITE_KB", "1")
    data = "".join(json.dumps({**RECORDS[1], "id": f"t{i}"}) + "\n" for i in range(20)).encode("utf-8")
    at = _upload(data)
    assert not at.exception
    told = " ".join(e.value.replace("\\", "") for e in at.error)
    assert "KiB, over the limit of 1" in told and " --" not in told
    assert not user_suites._held().suites and not [b for b in at.button if b.key == "ch-score"]

"""Uploads are scored under a bar that says what is being scored and counts its items ("n of N items"), not
under a bare spinner: an uploaded challenge set (Challenge sets: DEMETR's negation file, 1,000 pairs, by
METEOR-1.5, drawn at each poll of the queue while the JVM aligns them) and an uploaded judgments file
(Meta-evaluation: four systems' outputs of the 529 en-de TED segments, by TER), each a step with the items of its
metric (``services.queued_with_progress``). That the count advances at least every 5 s is the browser tests'
part (tests/dashboard/test_browser_progress.py). A visitor's own sentences
(Your sentences) are scored under the Run page's bar: tests/dashboard/test_mine_page.py.
"""
from __future__ import annotations

import re

import pytest

from tests.dashboard.conftest import open_page, shown_errors
from tests.dashboard.test_meta_eval_page import judgments_file

# A step with the items of its metric: "scoring METEOR-1.5 (1 of 1 metrics): the better texts of 1,000 pairs ·
# 1/2 · 400 of 1,000 items".
COUNTED = re.compile(r"^(scoring .+) · \d+/\d+ · ([\d,]+) of ([\d,]+) items")


@pytest.fixture
def drawn(monkeypatch) -> list[str]:
    """Every text a progress bar is drawn with."""
    from streamlit.delta_generator import DeltaGenerator

    texts: list[str] = []
    real = DeltaGenerator.progress
    monkeypatch.setattr(DeltaGenerator, "progress", lambda self, value, text=None, **k: texts.append(text)
                        or real(self, value, text=text, **k))
    return texts


def _counts(texts: list[str]) -> list[tuple[str, int, int]]:
    found = [COUNTED.match(t) for t in texts if t]
    return [(m.group(1), int(m.group(2).replace(",", "")), int(m.group(3).replace(",", ""))) for m in found if m]


def test_an_uploaded_challenge_set_is_scored_counting_its_items(app_env, data_dir, drawn):
    from muttlab.metrics import meteor

    meteor.clear_memo()  # the pairs are aligned by the JVM, whatever this process aligned before
    data = (data_dir / "demetr" / "dataset" / "critical_id8_negation.json").read_bytes()
    at = open_page("challenge")
    at.file_uploader(key="ch-upload").set_value(("negation.json", data, "application/json")).run()
    at.multiselect(key="ch-metrics").set_value(["METEOR-1.5"]).run()
    at = at.button(key="ch-score").click().run()
    assert not shown_errors(at)
    counts = _counts(drawn)
    steps = {step for step, _, _ in counts}
    assert any("the better texts" in s for s in steps) and any("the worse texts" in s for s in steps), drawn
    pairs = int(re.search(r"of ([\d,]+) pairs", next(iter(steps))).group(1))
    assert {total for _, _, total in counts} == {pairs}  # each side's items are the file's pairs


def test_an_uploaded_judgments_files_scoring_counts_its_items(app_settings):
    """The page scores an upload with ``api.meta_evaluate`` inside the queued job that draws the items reported
    to it (``services.queued_with_progress``); TER scores these outputs faster than the page polls, so the items
    are read here where the job reports them, every report kept."""
    from muttlab import api

    data = judgments_file(app_settings, items=529)
    outputs = sum(1 for line in data.decode().splitlines() if line.strip())
    steps, items = [], []
    with api.items_reported_to(lambda *report: items.append(report)):
        api.meta_evaluate(app_settings, api.parse_judgments(data, "mine.jsonl"), ["TER"],
                          progress=lambda *report: steps.append(report[2]))
    assert "scoring TER" in steps
    assert {total for _, total, _ in items} == {outputs}
    assert items[-1][0] == outputs and re.match(rf"{outputs:,} of {outputs:,} items", items[-1][2]), items

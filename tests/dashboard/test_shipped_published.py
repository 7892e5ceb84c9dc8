"""Published vs measured as it ships: a current stamp, the numbers of a live reproduction, the page showing
them at once (also without a data dir), clear errors."""
from __future__ import annotations

from dataclasses import replace

import pytest

from muttlab import api
from muttlab.dashboard import services, shipped_published
from muttlab.engine import runner
from muttlab.errors import DataError
from muttlab.human import reproduce
from muttlab.settings import Settings
from tests.dashboard.conftest import open_page, shown_errors
from tests.dashboard.test_published_page import published_tables

RERUN = "re-run " + shipped_published.REGENERATE


@pytest.fixture(scope="module")
def shipped():
    loaded = shipped_published.load()
    assert loaded is not None, f"data/results/published.json is missing; {RERUN}"
    return loaded


def test_stamp_is_current(shipped, data_dir):
    # As the script computes it: the shipped models, never a model installed on this machine.
    settings = replace(Settings(data_dir=data_dir), read_only=True)
    registry = runner.registry_for(settings)
    try:
        current = shipped_published.current_stamp(settings, registry, list(shipped.stamp.signatures))
    finally:
        registry.close()
    assert shipped.stamp.differences(current) == [], RERUN
    assert set(shipped.stamp.signatures) == set(shipped_published.measured_metrics(shipped.frame))


def test_a_changed_stamp_is_named():
    old = shipped_published.Stamp("a", "b", {"BLEU-4": "BLEU-4|v:1", "TERp": "TERp|v:2"})
    new = shipped_published.Stamp("a", "c", {"BLEU-4": "BLEU-4|v:2", "TERp": "TERp|v:2"})
    assert old.differences(new) == ["the reproduction code (muttlab/human/reproduce.py) changed",
                                    "metrics changed: BLEU-4"]


def test_shipped_numbers_cover_every_study(shipped, data_dir):
    published = reproduce.load_published(Settings(data_dir=data_dir))
    assert shipped.studies == list(dict.fromkeys(published["study"]))
    # Every published number is in (plus the held-back BADGER cells, measured with no published value).
    assert shipped.frame["published"].notna().sum() == len(published)


def test_shipped_numbers_equal_a_live_reproduction(shipped, data_dir, cache_dir):
    settings = Settings(data_dir=data_dir, cache_dir=cache_dir)
    live = api.reproduce(settings, studies="mutt_accuracy", metrics=["BLEU-4"]).frame
    keys = ["study", "source", "metric", "subset", "refs"]
    merged = live.merge(shipped.frame, on=keys, suffixes=("", "_shipped"))
    assert len(merged) == len(live) > 0
    assert merged["measured"].tolist() == pytest.approx(merged["measured_shipped"].tolist(), abs=1e-9)
    assert merged["within"].tolist() == merged["within_shipped"].tolist()


def test_malformed_file_is_a_data_error(tmp_path):
    bad = tmp_path / "published.json"
    bad.write_text('{"format": 1, "numbers": [{"study": "mutt_accuracy"}], "stamp": {}}')
    with pytest.raises(DataError, match="numbers lack"):
        shipped_published.load(bad)
    bad.write_text("{not json")
    with pytest.raises(DataError, match="malformed JSON"):
        shipped_published.load(bad)
    assert shipped_published.load(tmp_path / "absent.json") is None


def test_page_without_a_data_dir_shows_the_shipped_numbers(app_env, monkeypatch, shipped):
    monkeypatch.delenv("MUTTLAB_DATA_DIR")
    at = open_page("published")
    assert not shown_errors(at)
    shown = {m.label: m.value for m in at.metric}
    frame = shipped.frame
    assert shown["published numbers"] == str(len(frame))
    assert shown["within tolerance"] == str(int(frame["within"].astype(bool).sum()))
    # Headings are Markdown: a study's name arrives with its "_" escaped, and shows as written.
    assert [s.value.replace("\\", "") for s in at.subheader] == shipped.studies
    first = published_tables(at)[0]
    expected = frame[frame["study"] == shipped.studies[0]]
    assert [float(row["measured"]) for row in first] == pytest.approx(expected["measured"].tolist(), abs=5e-5)
    captions = " ".join(c.value for c in at.caption)
    assert "Shipped numbers" in captions and shipped_published.stamp_digest(shipped.stamp) in captions
    assert "no data dir" in captions
    assert not [b for b in at.button if b.key == "pub-recompute"]


def test_page_with_a_data_dir_shows_the_shipped_numbers_and_offers_to_recompute(app_env, monkeypatch, shipped):
    calls = []
    monkeypatch.setattr(api, "reproduce", lambda *a, **k: calls.append(1))
    at = open_page("published")
    assert not shown_errors(at)
    assert {m.label: m.value for m in at.metric}["published numbers"] == str(len(shipped.frame))
    assert at.button(key="pub-recompute").label == "Recompute on this server"
    assert calls == []  # nothing is computed until asked for


def test_page_says_when_the_shipped_numbers_are_outdated_here(app_env, monkeypatch, shipped):
    stale = replace(shipped, stamp=replace(shipped.stamp, code="0" * 64))
    monkeypatch.setattr(services, "shipped_reproduction", lambda: stale)
    at = open_page("published")
    assert not shown_errors(at)
    warnings = [w.value for w in at.warning if "outdated" in w.value]
    assert len(warnings) == 1 and "the reproduction code" in warnings[0] and "reproduce.py" in warnings[0]
    assert "published file" not in warnings[0]  # the data dir holds the published file the numbers came from

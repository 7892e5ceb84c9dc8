"""The Meta-evaluation and Metric profile pages, attacked as an anonymous visitor of the read-only public demo (the
role that must fail): each link parameter (pair, statistic, metric, segment; metric and vs) with unknown names,
paths, markup and numbers out of range gets the page's message and the defaults, never a traceback, a rendered
link or a computation; an uploaded judgments file that is malformed, huge, too long, nested too deeply or full of
markup is refused with a message naming the file, line and field before anything is scored, or shown as text;
a slow metric is refused on the demo (AppTest on the real data)."""
from __future__ import annotations

import json

import pytest

from muttlab import api
from muttlab.dashboard import view
from muttlab.settings import Limits, set_limits
from tests.attacks.test_links import markdown_values, page_text
from tests.dashboard.conftest import app_env, html_bodies, open_link, open_page  # noqa: F401 (fixture)

PAYLOAD = "x` ![pixel](https://attacker.example/p.png) [click](https://attacker.example) `"
MARKUP = "<img src=x onerror=alert(1)>"


@pytest.fixture
def demo(app_env, monkeypatch):
    """The read-only demo, where nothing a link names may be computed."""
    monkeypatch.setenv("MUTTLAB_READ_ONLY", "1")
    computed = []
    for name in ("meta_evaluate", "profile", "compare_profiles"):
        monkeypatch.setattr(api, name, lambda *a, _name=name, **k: computed.append(_name) or pytest.fail(
            f"a link started {_name}"))
    yield computed
    set_limits(None)


def _said(at) -> str:
    return " ".join(e.value.replace("\\", "") for e in [*at.warning, *at.error, *at.info])


def _no_rendered_link(at) -> None:
    assert not any("](https://attacker" in v for v in markdown_values(at))  # escaped: "\\]\\(https\\:"
    assert "<img src=x" not in "".join(html_bodies(at))


def test_the_links_statistics_are_the_engines():
    assert view.META_STATISTICS == tuple(api.meta_statistics())


@pytest.mark.parametrize("key, value, said", [
    ("pair", "../../etc/passwd", "pair=: '../../etc/passwd' is neither a pair id"),
    ("pair", MARKUP, "pair=: "),
    ("pair", PAYLOAD, "pair=: "),
    ("pair", "xx-yy", "This page does not offer the language pair xx-yy; showing en-de."),
    ("statistic", "evil", "statistic=: 'evil' is not one of acc_eq_item"),
    ("statistic", PAYLOAD, "statistic=: "),
    ("metric", "NoSuchMetric", "metric=: no metric is called 'NoSuchMetric'"),
    ("metric", "trap:Metric", "metric=: no metric is called 'trap:Metric'"),
    ("metric", "BADGER-like", "does not offer the metric (with shipped per-output scores) BADGER-like"),
    ("segment", "-1", "segment=: segment '-1' is not a whole number from 0 to 1000000"),
    ("segment", "99999999", "segment=: segment '99999999' is not a whole number"),
    ("segment", "1e3", "segment=: segment '1e3' is not a whole number"),
    ("segment", "3; DROP TABLE", "segment=: "),
])
def test_a_bad_meta_evaluation_link_gets_a_message_and_the_defaults(demo, key, value, said):
    at = open_link("meta_eval", {key: value})
    assert not at.exception and demo == []
    assert said in _said(at)
    _no_rendered_link(at)
    assert at.selectbox(key="me-statistic").value == "acc_eq_item" or key != "statistic"
    assert at.selectbox(key="me-metric").value == "chrF" or key != "metric"


def test_a_segment_past_the_last_opens_the_last(demo):
    at = open_link("meta_eval", {"pair": "zh-en", "segment": "100000"})
    assert not at.exception and demo == []
    last = api.shipped_meta_evaluation("zh-en").items - 1
    assert at.number_input(key="me-segment").value == last


@pytest.mark.parametrize("key, value", [("metric", "NoSuchMetric"), ("vs", "../../etc/passwd"), ("metric", PAYLOAD),
                                        ("vs", MARKUP), ("metric", "x" * 5000)])
def test_a_bad_profile_link_gets_a_message_and_the_defaults(demo, key, value):
    at = open_link("profile", {key: value})
    assert not at.exception and demo == []
    assert f"{key}=: " in _said(at)
    _no_rendered_link(at)
    assert "x" * 300 not in page_text(at)
    assert at.selectbox(key="pf-metric").value == "chrF"


def test_a_profile_link_to_metrics_that_do_not_ship_starts_nothing(demo):
    at = open_link("profile", {"metric": "BLEU-1", "vs": "BLEU-2"})
    assert not at.exception and demo == []
    assert [b.key for b in at.button] == ["pf-build", "pf-build-vs"]


# --------------------------------------------------------------------------- uploads of one's own judgments

def _upload(name: str, data: bytes):
    at = open_page("meta_eval")
    at.radio(key="me-source").set_value("upload").run()
    return at.file_uploader(key="me-upload").set_value((name, data, "text/plain")).run()


def _rows(systems=("A", "B"), items: int = 6, hypothesis: str = "Das ist ein Haus.") -> bytes:
    lines = [json.dumps({"item": str(i), "system": s, "hypothesis": f"{hypothesis} {i} {k}",
                         "reference": f"Das ist ein Haus {i}.", "score": -float((i + k) % 3), "lang": "en-de"})
             for i in range(items) for k, s in enumerate(systems)]
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def no_parse(monkeypatch):
    parsed = []
    monkeypatch.setattr(api, "parse_judgments", lambda *a, **k: parsed.append(a) or pytest.fail("parsed"))
    return parsed


def test_a_malformed_upload_names_the_line_and_field(demo):
    data = _rows() + b'{"item": "9", "system": "A", "hypothesis": "x", "reference": "y"}\n'
    at = _upload("mine.jsonl", data)
    assert not at.exception and demo == []
    assert "mine.jsonl, line 13: field score: missing" in _said(at)
    assert not [b for b in at.button if b.key == "me-score"]


def test_a_deeply_nested_upload_is_refused_in_words(demo):
    at = _upload("deep.jsonl", b'{"item": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n")
    assert not at.exception and demo == []
    assert "deep.jsonl, line 1: malformed JSON: nested too deeply" in _said(at)


def test_a_huge_upload_is_refused_before_it_is_parsed(demo, no_parse):
    set_limits(Limits(max_upload_mb=1))
    at = _upload("huge.jsonl", _rows() * 40_000)
    assert not at.exception and no_parse == []
    assert "over the limit of 1" in _said(at) and "MUTTLAB_MAX_UPLOAD_MB" in _said(at)


def test_an_upload_of_too_many_rows_is_refused_before_it_is_parsed(demo, no_parse):
    set_limits(Limits(max_pairs=100))
    at = _upload("long.jsonl", _rows(items=60))
    assert not at.exception and no_parse == []
    assert "over the limit of 100" in _said(at) and "MUTTLAB_MAX_PAIRS" in _said(at)


def test_markup_in_system_names_and_outputs_is_shown_as_text(app_env, monkeypatch):
    monkeypatch.setenv("MUTTLAB_READ_ONLY", "1")
    at = _upload("markup.jsonl", _rows(systems=(MARKUP, "<script>alert(2)</script>"), hypothesis=PAYLOAD))
    at.multiselect(key="me-metrics").set_value(["chrF"]).run()
    at.button(key="me-score").click().run()
    assert not at.exception and not at.error
    bodies = "".join(html_bodies(at))
    assert "&lt;img src=x onerror=alert(1)&gt;" in bodies and "&lt;script&gt;alert(2)" in bodies
    assert "<img src=x" not in bodies and "<script>alert" not in bodies
    _no_rendered_link(at)


def test_a_slow_metric_is_refused_on_the_demo(app_env, monkeypatch):
    monkeypatch.setenv("MUTTLAB_READ_ONLY", "1")
    scored = []
    monkeypatch.setattr(api, "meta_evaluate", lambda *a, **k: scored.append(a))
    data = _rows().replace(b'"en-de"', b'"de-en"').replace(b"Das ist ein Haus", b"This is a house")
    at = _upload("slow.jsonl", data)
    at.multiselect(key="me-metrics").set_value(["BERTScore-F1"]).run()
    at.button(key="me-score").click().run()
    assert not at.exception and scored == []
    assert "computes only the quick metrics live" in _said(at)

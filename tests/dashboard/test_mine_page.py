"""The Your sentences page: a visitor's sentences become the suite `muttlab corrupt --input` builds, its grid is
`muttlab.api.run_grid`'s on that suite, and its suite download gives the same numbers through `muttlab run`."""
from __future__ import annotations

import csv
import html
import io
import json
import re
from urllib.parse import parse_qs

import pytest
from streamlit.delta_generator import DeltaGenerator

from muttlab import api
from muttlab.cli import main
from muttlab.corruptions import catalog
from muttlab.engine import runner
from muttlab.dashboard.services import user_suites
from muttlab.sources import load_sample_scenes
from muttlab.suites import read_suite
from tests.dashboard.conftest import downloads, figures_in_html, grid_html, html_bodies, open_page, shown_errors  # noqa: F401

SCENES = 8
TYPES = ["double_PP", "remove_prep", "neg_verb", "det_sub"]
METRICS = ["BLEU-4", "CIDEr-D"]
REFS = [1, 5]


def sentences_csv(count: int = SCENES, refs: int = 5) -> str:
    """The first bundled sample scenes as the page's CSV: id, text and ``refs`` reference columns."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["id", "text"] + ["reference"] * refs)
    for scene in load_sample_scenes()[:count]:
        writer.writerow([scene["id"], scene["original"], *scene["references"][:refs]])
    return buffer.getvalue()


def build(at, text: str | None = None, types=TYPES, metrics=METRICS, refs=REFS, upload=None):
    """Fill the form (pasted ``text`` or an ``upload`` (name, bytes, mime)) and press Build and score."""
    if text is not None:
        at.text_area(key="mine-text").set_value(text)
    if upload is not None:
        at.file_uploader[0].set_value(upload)
    at.multiselect(key="mine-types").set_value(list(types))
    at.multiselect(key="mine-metrics").set_value(list(metrics))
    at.multiselect(key="mine-refs").set_value(list(refs))
    at.get("form_submit_button")[0].click().run()
    return at


def grid_links(at) -> list[dict[str, str]]:
    return [{k: v[0] for k, v in parse_qs(html.unescape(link)).items()}
            for link in re.findall(r'href="drilldown\?([^"]+)"', grid_html(at))]


def test_the_page_builds_the_clis_suite_and_shows_the_engines_grid(app_env, app_settings, downloads, tmp_path,
                                                                  capsys):
    sentences = tmp_path / "sentences.csv"
    sentences.write_text(sentences_csv(), encoding="utf-8")
    # The command line's suite of the same sentences: what the page must build.
    cli_suite = tmp_path / "cli-suite.jsonl"
    assert main(["corrupt", "--input", str(sentences), "--output", str(cli_suite), "--types", ",".join(TYPES)]) == 0
    expected_suite = read_suite(cli_suite).suite
    capsys.readouterr()

    at = build(open_page("mine"), sentences_csv())
    assert not shown_errors(at)
    shown = {m.label: m.value for m in at.metric}
    assert shown["sentences"] == str(SCENES)
    assert shown["trials"] == str(len(expected_suite.trials))
    coverage = next(d.value for d in at.dataframe if "applied to" in d.value.columns)
    by_type = {t: len(expected_suite.of(t)) for t in TYPES}
    assert dict(zip(coverage["corruption"], coverage["applied to"])) == {catalog.get(t).label: n
                                                                       for t, n in by_type.items()}
    assert (coverage["applied to"] + coverage["did not apply to"] == SCENES).all()

    # The grid is the engine's on the command line's suite, each cell a drill-down link to the kept suite.
    engine = api.run_grid(app_settings, METRICS, ref_counts=REFS, suite=expected_suite).accuracy()
    body = grid_html(at)
    links = grid_links(at)
    names = {link["suite"] for link in links}
    assert len(names) == 1
    name = names.pop()
    assert re.fullmatch(r"mine:[0-9a-f]{32}", name)
    assert sorted((link["metric"], link["corruption"], int(link["refs"])) for link in links) == sorted(
        (r.metric, r.corruption, int(r.refs)) for r in engine.itertuples(index=False))
    for row in engine.itertuples(index=False):
        assert f"accuracy {row.accuracy:.1f}% ({row.passed}/{row.n})" in body
    kept = user_suites.lookup(name)
    assert [(t.id, t.corruption, t.original, t.corrupted, t.references) for t in kept.trials] == [
        (t.id, t.corruption, t.original, t.corrupted, t.references) for t in expected_suite.trials]

    # The grid's CSV holds the same cells.
    rows = list(csv.DictReader(io.StringIO(downloads("mine-grid-csv").decode("utf-8"))))
    assert sorted((r["metric"], r["corruption"], int(r["refs"]), int(r["passed"]), int(r["n"])) for r in rows) == \
        sorted((r.metric, r.corruption, int(r.refs), int(r.passed), int(r.n)) for r in engine.itertuples(index=False))
    chart = downloads("mine-grid-html").decode("utf-8")
    (heatmap,) = figures_in_html(chart)  # the grid's figure, plotly.js inlined: it opens offline
    assert "<script src=" not in chart and {t for trace in heatmap.data for t in trace.y} == set(METRICS)

    # The suite download, scored by `muttlab run --suite`, gives the grid's numbers.
    download = tmp_path / "mine.jsonl"
    download.write_bytes(downloads("mine-suite-jsonl"))
    assert [(t.id, t.original, t.corrupted, t.references) for t in read_suite(download).suite.trials] == [
        (t.id, t.original, t.corrupted, t.references) for t in expected_suite.trials]
    assert main(["run", "--suite", str(download), "--metrics", ",".join(METRICS), "--refs", "1,5",
                 "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert sorted((r["metric"], r["corruption"], r["refs"], r["passed"], r["n"]) for r in records) == sorted(
        (r.metric, r.corruption, int(r.refs), int(r.passed), int(r.n)) for r in engine.itertuples(index=False))
    # The page names that command.
    assert any(f"--metrics {','.join(METRICS)}" in c.value and "--refs 1,5" in c.value for c in at.code)


def test_an_uploaded_jsonl_file_and_the_types_that_did_not_apply(app_env):
    scenes = load_sample_scenes()[:3]
    lines = [json.dumps({"id": s["id"], "text": s["original"], "references": s["references"][:3]}) for s in scenes]
    lines.insert(1, json.dumps({"id": "broken", "text": "No references here."}))
    data = ("\n".join(lines) + "\n").encode("utf-8")
    at = build(open_page("mine"), upload=("mine.jsonl", data, "application/jsonl"), types=["gender_swap", "det_sub"],
               metrics=["BLEU-4"], refs=[3, 5])
    assert not at.exception
    shown = {m.label: m.value for m in at.metric}
    assert shown["sentences"] == "3"  # the upload, not the pasted example, was read
    # The row without references is left out and named by its line.
    assert any("line 2" in w.value and "reference" in w.value for w in at.warning)
    # 5 references were asked for; the sentences have 3.
    assert any("5" in i.value and "only 3 reference" in i.value for i in at.info)
    skipped = next(d.value for d in at.dataframe if "why not" in d.value.columns)
    coverage = next(d.value for d in at.dataframe if "applied to" in d.value.columns)
    gender = catalog.get("gender_swap").label
    row = coverage.set_index("corruption").loc[gender]
    assert row["applied to"] + row["did not apply to"] == 3
    # "Two dogs are playing ..." has no gendered word: listed with what the generator looks for.
    not_gendered = skipped[skipped["corruption"] == gender]
    assert len(not_gendered) == row["did not apply to"] and "beach-1" in set(not_gendered["id"])
    assert set(not_gendered["why not"]) == {row["when it does not apply"]}


def test_progress_and_cancel_are_drawn_before_the_grid_and_cancel_stops_scoring(app_env, monkeypatch):
    drawn = []
    real_progress, real_button = DeltaGenerator.progress, DeltaGenerator.button
    monkeypatch.setattr(DeltaGenerator, "progress", lambda self, value, text=None, **k: drawn.append(text)
                        or real_progress(self, value, text=text, **k))
    monkeypatch.setattr(DeltaGenerator, "button", lambda self, label, *a, **k: drawn.append(label)
                        or real_button(self, label, *a, **k))
    at = open_page("mine")
    drawn.clear()
    at = build(at, sentences_csv(3), types=["neg_verb"], metrics=["BLEU-4"], refs=[1])
    assert not shown_errors(at)
    # The suite's building counts its sentences, then the run's bar takes over.
    assert drawn[:2] == ["parsing: 3 of 3 sentences", "corrupting: 3 of 3 sentences"]
    assert drawn[2].startswith("preparing the run") and "Cancel" in drawn
    assert "loading BLEU-4 (1 of 1 metrics)" in drawn
    assert any(str(t).startswith("scoring BLEU-4 (1 of 1 metrics)") for t in drawn)
    assert grid_links(at)
    # Once the grid is drawn, the bar and Cancel are gone.
    assert not at.get("progress") and not [b for b in at.button if b.label == "Cancel"]
    # What Cancel's click leaves for the rerun it starts: the suite stays, nothing is scored until asked.
    calls = []
    monkeypatch.setattr(runner, "run", lambda *a, **k: calls.append(1))
    at.session_state["mine_live"] = False
    at.run()
    assert not shown_errors(at) and calls == []
    assert any("Run cancelled" in i.value for i in at.info)
    assert not [b for b in html_bodies(at) if "mutt-grid" in b]
    assert any(b.label == "Score again" for b in at.button)


def test_the_box_starts_empty_and_never_builds_the_example_unasked(app_env, monkeypatch):
    """The box starts empty (the example is its grey placeholder): pressing Build and score on it says so and
    builds nothing, where a box that started with the example built the example's six sentences without a word
    (issue 35: after a frozen tab lost its session). The example is one click away."""
    built = []
    monkeypatch.setattr(user_suites, "build", lambda *a, **k: built.append(a) or pytest.fail("built"))
    at = open_page("mine")
    box = at.text_area(key="mine-text")
    assert box.value == "" and box.placeholder == user_suites.example("csv")
    at = build(at, metrics=["BLEU-4"], refs=[1])
    assert not at.exception and built == []
    assert any("The box is empty" in w.value for w in at.warning)
    at.button(key="mine-use-example").click().run()
    assert at.text_area(key="mine-text").value == user_suites.example("csv")

"""A trial suite (``muttlab corrupt --output``) on the Challenge sets page: scored into the accuracy grid that the
Your sentences page draws, with the engine's numbers on the same suite, each cell opening its trials on the
Drill-down page."""
from __future__ import annotations

from muttlab import api
from muttlab.cli import main
from muttlab.dashboard.services import user_suites
from tests.dashboard.conftest import grid_html, open_link, press, shown_errors
from tests.dashboard.test_mine_page import grid_links, sentences_csv

TYPES = "neg_verb,det_sub"


def test_a_trial_suite_is_scored_into_the_accuracy_grid(app_env, app_settings, monkeypatch, tmp_path, capsys):
    sentences = tmp_path / "sentences.csv"
    sentences.write_text(sentences_csv(), encoding="utf-8")
    folder = tmp_path / "data" / "challenge"
    folder.mkdir(parents=True)
    assert main(["corrupt", "--input", str(sentences), "--output", str(folder / "suite.jsonl"), "--types", TYPES]) == 0
    capsys.readouterr()
    monkeypatch.setenv("MUTTLAB_DATA_DIR", str(tmp_path / "data"))
    at = open_link("challenge", {"file": "challenge/suite.jsonl", "metrics": "BLEU-4,chrF"})
    assert not shown_errors(at) and not at.warning  # no longer refused
    assert any("Score the suite" == b.label for b in at.button)  # a link alone scores nothing
    at = press(at, "ch-score")
    assert not shown_errors(at)
    suite = api.read_suite(folder / "suite.jsonl").suite
    engine = api.run_grid(app_settings, ["BLEU-4", "chrF"], suite=suite).accuracy()
    body = grid_html(at)
    for row in engine.itertuples(index=False):
        assert f"accuracy {row.accuracy:.1f}% ({row.passed}/{row.n})" in body
    links = grid_links(at)
    assert sorted((link["metric"], link["corruption"], int(link["refs"])) for link in links) == sorted(
        (r.metric, r.corruption, int(r.refs)) for r in engine.itertuples(index=False))
    (name,) = {link["suite"] for link in links}
    kept = user_suites.lookup(name)
    assert [(t.id, t.original, t.corrupted) for t in kept.trials] == [(t.id, t.original, t.corrupted)
                                                                      for t in suite.trials]
    # A cell opens its trials on the Drill-down page.
    cell = next(link for link in links if link["metric"] == "BLEU-4" and link["corruption"] == "neg_verb")
    opened = open_link("drilldown", cell)
    assert not shown_errors(opened)
    row = engine[(engine["metric"] == "BLEU-4") & (engine["corruption"] == "neg_verb")].iloc[0]
    shown = {m.label: m.value for m in opened.metric}
    assert (int(shown["trials"]), int(shown["passed"])) == (int(row["n"]), int(row["passed"]))

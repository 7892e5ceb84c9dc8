"""The Drill-down page opens every suite: a challenge-set phenomenon from a data-dir file (DEMETR, real data) or
an upload the server holds, and a visitor's own suite; the Challenge page links each phenomenon to it."""
from __future__ import annotations

import html
import json
from urllib.parse import parse_qs, urlsplit

from muttlab import api
from muttlab.engine import runner
from tests.dashboard.conftest import open_link, press, shown_errors, trial_cards

# DEMETR (data/demetr/README.md): 1,000 records per file; in the negation file one is not applied.
NEGATION = "demetr/dataset/critical_id8_negation.json"
PHENOMENON = "critical_id8_negation"
REFERENCE_BASELINE = "demetr/dataset/base_id35_reference.json"


def _metrics(at) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _engine_phenomenon(settings, relative: str, metric: str, phenomenon: str):
    suite_file = api.read_suite(settings.data_dir / relative)
    results = api.run_challenge(settings, suite_file, [metric])
    summary = results.summary().set_index("phenomenon").loc[phenomenon]
    return suite_file, results, summary


def test_a_demetr_phenomenon_opens_with_the_challenge_pages_counts(app_env, app_settings):
    # A link fills the page; scoring the challenge set (the whole file, one side of every pair) is the button's.
    at = press(open_link("drilldown", {"suite": f"file:{NEGATION}", "metric": "chrF", "corruption": PHENOMENON}),
               "dd-score")
    assert not shown_errors(at) and not at.warning
    suite_file, results, summary = _engine_phenomenon(app_settings, NEGATION, "chrF", PHENOMENON)
    shown = _metrics(at)
    assert int(shown["passed"]) == int(summary["concordant"])
    assert int(shown["failed"]) == int(summary["discordant"])
    assert shown["accuracy"] == f"{summary['accuracy']:.1f}%"
    assert int(shown["trials"]) == 1000 - suite_file.not_applied[PHENOMENON] == len(suite_file.suite.trials)
    # The not-applied record is counted in the header, not listed.
    captions = "\n".join(e.proto.body for e in at.get("html"))
    assert f"{suite_file.not_applied[PHENOMENON]} record(s) of this phenomenon the data set marks as not applied" \
        in captions
    # The first card is the failing pair with the lowest margin; its source sentence is shown.
    table = results.table
    worst = table[~table["passed"]].sort_values("margin", kind="stable").iloc[0]
    first = trial_cards(at)[0]
    assert first["trial"] == worst["trial"] and first["verdict"] == "fails"
    assert html.escape(suite_file.sources[worst["trial"]]) in captions
    assert at.selectbox(key="dd-corruption").label == "Phenomenon"
    assert at.query_params["suite"] == f"file:{NEGATION}" and "refs" not in at.query_params


def test_demetrs_reference_baseline_is_judged_by_the_pairs_own_expectation(app_env, app_settings):
    phenomenon = "base_id35_reference"
    at = press(open_link("drilldown", {"suite": f"file:{REFERENCE_BASELINE}", "metric": "sentBLEU",
                                       "corruption": phenomenon, "show": "all"}), "dd-score")
    assert not shown_errors(at)
    _, _, summary = _engine_phenomenon(app_settings, REFERENCE_BASELINE, "sentBLEU", phenomenon)
    assert int(_metrics(at)["passed"]) == int(summary["concordant"]) > 0
    captions = "\n".join(e.proto.body for e in at.get("html"))
    assert "expects the second text to score better" in captions


def test_an_upload_the_server_holds_opens_by_its_content_hash(app_env, app_settings):
    from muttlab.dashboard import services

    records = [{"good": "The cat sat on the mat.", "incorrect": "The cat did not sit on the mat.",
                "references": ["The cat sat on the mat."], "phenomenon": "negation", "source": "Die Katze saß."},
               {"good": "He reads a book.", "incorrect": "He read a book.", "references": ["He is reading a book."],
                "phenomenon": "tense", "source": "Er liest ein Buch."},
               {"good": "She is here.", "incorrect": "She is not here.", "references": ["She is here now."],
                "phenomenon": "negation"}]
    data = "\n".join(json.dumps(r) for r in records).encode("utf-8")
    suite_name = services.remember_upload(data, "pairs")
    at = press(open_link("drilldown", {"suite": suite_name, "metric": "chrF", "corruption": "negation",
                                       "show": "all"}), "dd-score")
    assert not shown_errors(at)
    suite_file = api.read_suite(data, format="contrastive-jsonl")
    expected = api.run_challenge(app_settings, suite_file, ["chrF"]).summary().set_index("phenomenon")
    assert int(_metrics(at)["trials"]) == 2
    assert int(_metrics(at)["passed"]) == int(expected.loc["negation", "concordant"])
    bodies = "\n".join(e.proto.body for e in at.get("html"))
    assert "Die Katze saß." in bodies and "not" in bodies  # the source sentence; the diff of good vs incorrect
    assert at.selectbox(key="dd-suite").value == suite_name


def test_a_visitors_own_suite_opens_by_its_name(app_env, app_settings):
    from muttlab.dashboard.services import user_suites

    suite = api.load_suite(app_settings, "sample").select(["neg_subj"])
    name = user_suites.add(user_suites.Visitor("visitor", "ip:unknown"), suite)
    at = open_link("drilldown", {"suite": name, "metric": "BLEU-4", "corruption": "neg_subj", "refs": "5"})
    assert not shown_errors(at)
    table = runner.run(suite, ["BLEU-4"], [5], app_settings).table
    assert (int(_metrics(at)["trials"]), int(_metrics(at)["passed"])) == (len(table), int(table["passed"].sum()))
    assert at.query_params["suite"] == name


def test_each_phenomenon_on_the_challenge_page_links_to_its_drilldown(app_env, app_settings):
    at = press(open_link("challenge", {"file": NEGATION, "metrics": "chrF"}), "ch-score")
    assert not shown_errors(at)
    summary = next(d.value for d in at.dataframe if "tau" in d.value.columns)
    link = summary.set_index("phenomenon").loc[PHENOMENON, "pairs"]
    query = {k: v[0] for k, v in parse_qs(urlsplit(link).query).items()}
    assert urlsplit(link).path == "drilldown"
    assert query == {"suite": f"file:{NEGATION}", "metric": "chrF", "corruption": PHENOMENON}
    opened = open_link("drilldown", query)  # the server has scored the set with chrF: the link opens at once
    assert int(_metrics(opened)["passed"]) == int(summary.set_index("phenomenon").loc[PHENOMENON, "concordant"])

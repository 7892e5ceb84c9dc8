"""MSLC24-B on the Challenge sets page (real data, mslc/2024/data/MSLC-B): from the data dir by a link, and by
upload of one pair's four files with the pair typed on the page; each phenomenon's drill-down link opens it on the
Drill-down page and in the view's report, with the counts the engine gives."""
from __future__ import annotations

import re
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from muttlab import api
from muttlab.dashboard.report import build_report
from muttlab.suites.mslc import FILES
from tests.dashboard.conftest import open_link, open_page, press, shown_errors

FOLDER = "mslc/2024/data/MSLC-B"
PHENOMENON = "en-de/untranslated vs refB"


def _summary(at):
    return next(d.value for d in at.dataframe if "tau" in d.value.columns)


def _query(link: str) -> dict[str, str]:
    assert urlsplit(link).path == "drilldown"
    return {k: v[0] for k, v in parse_qs(urlsplit(link).query).items()}


def _words(report: str) -> str:
    """A report's text before its inlined plotly.js, tags dropped, spaces collapsed."""
    return " ".join(re.sub(r"<[^>]+>", " ", report[:report.index("window.PlotlyConfig")]).split())


def _same_counts(shown, expected) -> None:
    merged = shown.merge(expected, on=["metric", "phenomenon"], suffixes=("", "_engine"))
    assert len(merged) == len(expected) == len(shown)
    for column in ("n", "concordant", "discordant", "ties", "accuracy", "tau"):
        assert merged[column].tolist() == pytest.approx(merged[f"{column}_engine"].tolist(), nan_ok=True)


def test_the_mslc_folder_from_a_link_is_reported_per_phenomenon(app_env, app_settings, data_dir):
    at = press(open_link("challenge", {"file": FOLDER, "format": "mslc24-b", "metrics": "chrF"}), "ch-score")
    assert not shown_errors(at) and not at.warning
    expected = api.run_challenge(app_settings, api.read_suite(data_dir / FOLDER), ["chrF"]).summary()
    summary = _summary(at)
    _same_counts(summary, expected)
    assert at.query_params["file"] == FOLDER and at.query_params["format"] == "mslc24-b"
    link = summary.set_index("phenomenon").loc[PHENOMENON, "pairs"]
    query = _query(link)
    assert query == {"suite": f"file:{FOLDER}", "metric": "chrF", "corruption": PHENOMENON, "format": "mslc24-b"}
    # The server has scored the set with chrF: the drill-down opens at once, with the page's counts.
    opened = open_link("drilldown", query)
    assert not shown_errors(opened)
    shown = {m.label: m.value for m in opened.metric}
    row = expected.set_index("phenomenon").loc[PHENOMENON]
    assert (int(shown["trials"]), int(shown["passed"])) == (int(row["n"]), int(row["concordant"])) == (10, 10)
    # The view's report (muttlab report / the page's download) reads the folder the same way.
    report = build_report(app_settings, "page=drilldown&" + link.partition("?")[2])
    assert f"Drill-down: chrF on {PHENOMENON} trials 10 passed 10 failed 0 accuracy 100.0%" in _words(report)


def test_one_pairs_folder_reads_as_that_pair(app_env, data_dir):
    at = open_link("challenge", {"file": f"{FOLDER}/ja-zh", "metrics": "chrF"})  # told from the folder
    assert not shown_errors(at)
    bodies = " ".join(e.proto.body for e in at.get("html"))
    assert "ja-zh: 55 pairs read as MSLC24-B" in bodies and "5 phenomena" in bodies


def _upload(at, files, pair: str | None):
    at.radio(key="ch-source").set_value("upload")
    at.file_uploader(key="ch-upload").set_value(files)
    at.multiselect(key="ch-metrics").set_value(["chrF"])
    at = at.run()
    if pair is not None:
        at.text_input(key="ch-pair").input(pair)
        at = at.run()
    return at


def test_a_pairs_four_files_uploaded_together_are_scored_and_drilled_into(app_env, app_settings, data_dir):
    files = [(name, (data_dir / FOLDER / "en-de" / name).read_bytes(), "text/plain") for name in FILES]
    at = _upload(open_page("challenge"), files, None)
    assert not shown_errors(at)
    assert any("Name the language pair" in i.value for i in at.info)  # nothing read until the pair is named
    at = _upload(at, files, "en-de")
    at = press(at, "ch-score")
    assert not shown_errors(at)
    expected_file = api.read_suite({f"en-de/{name}": data for name, data, _ in files}, name="en-de")
    expected = api.run_challenge(app_settings, expected_file, ["chrF"]).summary()
    summary = _summary(at)
    _same_counts(summary, expected)
    query = _query(summary.set_index("phenomenon").loc[PHENOMENON, "pairs"])
    assert query["suite"].startswith("upload:") and "format" not in query
    opened = open_link("drilldown", {**query, "show": "all"})  # another visit: the server holds the upload
    assert not shown_errors(opened)
    assert int({m.label: m.value for m in opened.metric}["trials"]) == 10
    # The view's report reads the upload the server holds, as the page's report download does.
    from muttlab.dashboard import services
    report = build_report(app_settings, "page=drilldown&" + urlencode(query),
                          lambda name: services.held(app_settings, name))
    assert f"Drill-down: chrF on {PHENOMENON} trials 10 passed 10" in _words(report)

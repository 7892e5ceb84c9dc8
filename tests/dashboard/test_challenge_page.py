"""The Challenge sets page: a challenge-set file from the data dir, reported by muttlab.suites per phenomenon
(ties as failures, Kendall-τ-like), ACES' weighted summary, malformed rows listed by line, good rows kept."""
from __future__ import annotations

import shutil

import pytest

from muttlab import api
from tests.conftest import REPO
from tests.dashboard.conftest import html_bodies, open_link, press, shown_errors

ACES = REPO / "tests" / "suites" / "files" / "aces.tsv"
METRICS = ["BLEU-4", "chrF"]
# A phenomenon name that is Markdown and HTML: it must be shown as the same characters.
MARKUP = "omission-<b>bold</b>-**x**"


@pytest.fixture
def challenge_dir(app_env, monkeypatch, tmp_path):
    """A data dir holding the project's ACES test file plus a malformed row, one named with markup and one with an
    empty incorrect translation (a test item, not a malformed row)."""
    root = tmp_path / "data"
    (root / "challenge").mkdir(parents=True)
    text = ACES.read_text(encoding="utf-8").rstrip("\n").split("\n")
    good = text[2].split("\t")
    marked = "\t".join(good[:5] + [MARKUP] + good[6:])
    lines = text + ["99\tonly\tthree columns", marked, "100\t\tA good one.\t\tA reference.\tomission\tde-en"]
    (root / "challenge" / "aces.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    shutil.copy(ACES, tmp_path / "outside.tsv")
    monkeypatch.setenv("MUTTLAB_DATA_DIR", str(root))
    return root, len(text) + 1, len(text) + 3  # the line numbers of the malformed row and of the empty text


def test_a_data_dir_file_is_reported_per_phenomenon_with_the_aces_summary(challenge_dir, app_settings):
    root, bad_line, empty_line = challenge_dir
    at = open_link("challenge", {"file": "challenge/aces.tsv", "metrics": ",".join(METRICS)})
    assert not at.get("dataframe") or not [d for d in at.dataframe if "tau" in d.value.columns]  # nothing scored
    at = press(at, "ch-score")  # the link fills the form, the button scores
    assert not shown_errors(at)
    read = api.read_suite(root / "challenge" / "aces.tsv")
    expected = api.run_challenge(app_settings, read, METRICS)
    tables = [d.value for d in at.dataframe]
    problems = next(t for t in tables if "problem" in t.columns)
    assert list(problems["line"]) == [p.line for p in read.problems]
    assert bad_line in set(problems["line"]) and empty_line not in set(problems["line"])
    assert any(t.corrupted == "" and t.source.endswith(f"#{empty_line}") for t in read.suite.trials)
    summary = next(t for t in tables if "tau" in t.columns)
    merged = summary.merge(expected.summary(), on=["metric", "phenomenon"], suffixes=("", "_engine"))
    assert len(merged) == len(expected.summary()) == len(summary)
    for column in ("n", "concordant", "discordant", "ties", "accuracy", "tau"):
        assert merged[column].tolist() == pytest.approx(merged[f"{column}_engine"].tolist(), nan_ok=True)
    # Ties are failures: a tie is among the discordant pairs.
    assert (summary["discordant"] >= summary["ties"]).all()
    aces = next(t for t in tables if "aces_score" in t.columns)
    assert aces["aces_score"].tolist() == pytest.approx(expected.aces()["aces_score"].tolist())
    # User text stays text: the marked-up phenomenon is a table cell, never Markdown or HTML.
    assert MARKUP in set(summary["phenomenon"])
    assert not any("<b>" in m.value for m in at.markdown)
    # Each metric's results signature: the metric's own, then the tie rule and tolerance it was judged by.
    signatures = next(t for t in tables if list(t.columns) == ["metric", "signature"])
    assert signatures["signature"].tolist() == [expected.signature(m) for m in METRICS]
    # Every table's rows carry them, so a download names the rules its numbers were judged by.
    for table in (summary, aces):
        assert table["signature"].tolist() == [expected.signature(m) for m in table["metric"]]
    for metric, shown in zip(METRICS, signatures["signature"]):
        assert shown.startswith(expected.signatures[metric] + "|") and "|tie:" in shown


def test_the_view_is_a_link(challenge_dir):
    at = open_link("challenge", {"file": "challenge/aces.tsv", "metrics": "chrF"})
    assert at.query_params["file"] == "challenge/aces.tsv" and at.query_params["metrics"] == "chrF"
    assert at.text_input(key="ch-path").value == "challenge/aces.tsv"
    assert at.multiselect(key="ch-metrics").value == ["chrF"]


def test_a_path_outside_the_data_dir_is_refused(challenge_dir):
    at = open_link("challenge", {"file": "../outside.tsv"})  # a real file beside the data dir
    assert not at.exception
    assert any("file=: " in w.value.replace("\\", "") and "no leading /, no .." in w.value.replace("\\", "")
               for w in at.warning)
    assert not at.get("dataframe")  # nothing was read
    at.radio(key="ch-source").set_value("data dir").run()
    at.text_input(key="ch-path").input("../outside.tsv").run()  # typed into the page: refused the same way
    assert not at.exception and any("no leading /, no .." in e.value.replace("\\", "") for e in at.error)
    at = open_link("challenge", {"file": "challenge/missing.tsv"})
    assert not at.exception and any("no such file" in e.value for e in at.error)


def test_one_phenomenon_is_counted_in_the_singular(app_env, monkeypatch, tmp_path):
    """A file of one pair of one phenomenon reads "1 pair ... 1 phenomenon" (it read "1 phenomena")."""
    root = tmp_path / "one"
    (root / "challenge").mkdir(parents=True)
    text = ACES.read_text(encoding="utf-8").rstrip("\n").split("\n")
    (root / "challenge" / "one.tsv").write_text("\n".join(text[:2]) + "\n", encoding="utf-8")
    monkeypatch.setenv("MUTTLAB_DATA_DIR", str(root))
    at = open_link("challenge", {"file": "challenge/one.tsv", "metrics": "chrF"})
    assert not shown_errors(at)
    (line,) = [body for body in html_bodies(at) if "read as" in body]
    assert "one: 1 pair read as " in line and line.endswith(", 1 phenomenon</div>"), line
    assert any("score its 1 pair with chrF" in i.value for i in at.info)


def test_a_file_of_no_known_format_is_refused_in_the_pages_words(app_env, monkeypatch, tmp_path, data_dir):
    """MSLC24-B's types.tsv (data dir: mslc/2024/data/MSLC-B/en-de) is no challenge-set file: the page says why
    and points at its own Format choice, not at a command-line flag."""
    root = tmp_path / "data"
    (root / "challenge").mkdir(parents=True)
    shutil.copy(data_dir / "mslc/2024/data/MSLC-B/en-de/types.tsv", root / "challenge" / "types.tsv")
    monkeypatch.setenv("MUTTLAB_DATA_DIR", str(root))
    at = open_link("challenge", {"file": "challenge/types.tsv", "metrics": "chrF"})
    assert not at.exception
    (message,) = [e.value.replace("\\", "") for e in at.error]
    assert "cannot tell the format" in message and "Format above" in message
    assert "--" not in message

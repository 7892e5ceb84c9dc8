"""`muttlab profile` and `muttlab compare-rules` from the command line: one JSON document, tables in every
format, progress and notes on stderr."""
from __future__ import annotations

import csv
import io
import json
import subprocess

import pytest

from muttlab.profile.result import Profile, ProfileComparison
from tests.conftest import run_muttlab


@pytest.fixture
def muttlab(tmp_path, data_dir):
    """``muttlab ARGS`` on the tests' data dir (tests/conftest.py: ``MUTTLAB_DATA_DIR``, else ../shared/data)."""
    env = {"MUTTLAB_DATA_DIR": str(data_dir), "MUTTLAB_CACHE_DIR": str(tmp_path), "MUTTLAB_WORKERS": "1"}

    def run(*args: str) -> subprocess.CompletedProcess:
        return run_muttlab(*args, env=env)
    return run


def test_a_profile_as_one_json_document(muttlab):
    done = muttlab("profile", "chrF", "--format", "json")
    assert done.returncode == 0, done.stderr
    profile = Profile.from_dict(json.loads(done.stdout))  # exactly one document: json.loads reads all of it
    assert profile.metric == "chrF" and set(profile.sections) == {"mutt", "demetr", "demetr_severity", "mslc"}


def test_a_comparison_in_csv_and_markdown(muttlab):
    done = muttlab("profile", "chrF", "--vs", "TER", "--suites", "mslc", "--format", "csv")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    row = next(r for r in rows if r["group"] == "en-de/empty-source-and-reference")
    assert (row["section"], row["first_only"], row["second_only"]) == ("mslc", "0", "40")
    assert {r["section"] for r in rows} == {"mslc", "mqm"}
    markdown = muttlab("profile", "chrF", "--vs", "TER", "--suites", "mslc", "--format", "markdown")
    assert "### Caught by one metric and missed by the other" in markdown.stdout
    assert "only TER catches it" in markdown.stdout
    as_json = muttlab("profile", "chrF", "--vs", "TER", "--suites", "mslc", "--format", "json")
    comparison = ProfileComparison.from_dict(json.loads(as_json.stdout))
    assert (comparison.first, comparison.second) == ("chrF", "TER") and comparison.profiles is not None


def test_compare_rules_prints_one_document_and_says_what_it_refused(muttlab):
    done = muttlab("compare-rules", "calibrated:mqm-ted:zh-en", "--metrics", "TER,chrF", "--suites", "mslc",
                   "--format", "json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["rule"] == "calibrated:mqm-ted:zh-en" and document["default"] == "tol:0.15|tie:1e-9"
    assert [r["metric"] for r in document["refused"]] == ["TER", "chrF"] and document["cells"] == []
    table = muttlab("compare-rules", "calibrated:mqm-ted:zh-en", "--metrics", "TER", "--suites", "mslc")
    assert "refused: TER on mslc: tie rule calibrated:mqm-ted:zh-en: calibrated on translations into 'en'" \
        in table.stdout

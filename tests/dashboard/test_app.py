"""The entry point declares the navigation and nothing else."""
from __future__ import annotations

from pathlib import Path

from muttlab.dashboard import app
from tests.dashboard.conftest import APP, open_page


def test_every_declared_page_exists_and_run_is_the_default():
    declared = [entry for entries in app.PAGES.values() for entry in entries]
    assert [title for _, title, _ in declared] == ["Run", "Drill-down", "Published vs measured", "Playground",
                                                   "Severity curves", "Challenge sets", "Human judgments",
                                                   "Correlation studies", "Learned metrics", "Annotate"]
    for path, _, _ in declared:
        assert (Path(APP).parent / path).is_file()
    # A pages/ folder beside app.py would switch Streamlit to its legacy multipage routing.
    assert not (Path(APP).parent / "pages").exists()


def test_app_opens_on_the_run_page(app_env):
    at = open_page("run")
    assert at.title[0].value == "Run the metric unit tests"
    assert not at.exception

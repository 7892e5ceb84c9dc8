"""The entry point declares the navigation and nothing else."""
from __future__ import annotations

from pathlib import Path

from muttlab.dashboard import app
from tests.dashboard.conftest import APP, open_page


def test_every_declared_page_exists_and_run_is_the_default():
    declared = [entry for entries in app.PAGES.values() for entry in entries]
    assert [title for _, title, _ in declared] == ["Run", "Drill-down", "Published vs measured", "Playground",
                                                   "Severity curves", "Challenge sets", "Your sentences",
                                                   "Human judgments", "Correlation studies", "Meta-evaluation",
                                                   "Metric profile", "Learned metrics", "Annotate"]
    for path, _, _ in declared:
        assert (Path(APP).parent / path).is_file()
    # A pages/ folder beside app.py would switch Streamlit to its legacy multipage routing.
    assert not (Path(APP).parent / "pages").exists()


def test_app_opens_on_the_run_page(app_env):
    at = open_page("run")
    assert at.title[0].value == "Run the metric unit tests"
    assert not at.exception


def test_the_warm_up_starts_in_a_streamlit_server_and_not_under_apptest(monkeypatch):
    # `streamlit run` (by hand, or muttlab serve's bootstrap) sets sys.argv[0] to the app's script.
    assert not app.served()  # pytest's own argv
    monkeypatch.setattr("sys.argv", [str(APP), "--server.port", "8501"])
    assert app.served()
    monkeypatch.setattr("sys.argv", ["streamlit", "run", str(APP)])
    assert not app.served()

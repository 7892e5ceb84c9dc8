"""Errors never shown whole: with its pair store unreachable (a PostgreSQL URL with a password), its data dir
broken, its model folder broken or its scheduler wrong, every page of the read-only demo shows an anonymous
visitor a message with no secret, no server path and no stack; an error a page did not handle is shown as one
scrubbed line with a reference, and logged whole (AppTest; the shipped Streamlit settings).

On 6c8e244 the Annotate page showed `cannot read the pair store at 'postgresql://mutt:<password>@…'` with a stack
naming `dashboard/views/annotate.py` (``store.counts()`` outside the page's error handling), a wrong scheduler
ended the Run page in a traceback, and ``client.showErrorDetails`` was Streamlit's default (every stack shown)."""
from __future__ import annotations

import logging
import tomllib

import pytest

import muttlab
from muttlab.cli import serve
from muttlab.dashboard import app, services
from muttlab.resources.bundled import dashboard_dir
from tests.attacks.test_links import page_text
from tests.dashboard.conftest import app_env, open_link  # noqa: F401 (fixture)

PASSWORD = "Bound4ry-PW-7"
STORE_URL = f"postgresql+psycopg://mutt:{PASSWORD}@127.0.0.1:1/pairs"  # nothing listens there
STACK_WORDS = ("Traceback", 'File "', ".py\", line", "site-packages")


@pytest.fixture
def demo(app_env, monkeypatch):
    """The read-only demo (every visitor anonymous) with its pair store on an unreachable PostgreSQL server."""
    monkeypatch.setenv("MUTTLAB_READ_ONLY", "1")
    monkeypatch.setenv("MUTTLAB_DATABASE_URL", STORE_URL)
    return app_env


def _assert_scrubbed(at, folders) -> str:
    assert not at.exception, [e.value for e in at.exception][:1]
    shown = page_text(at)
    assert PASSWORD not in shown
    for word in STACK_WORDS:
        assert word not in shown, word
    for folder in folders:
        assert str(folder) not in shown, folder
    return shown.replace("\\", "").replace("\u2060", "")  # as read: Markdown's escapes and word joiners gone


def _folders(*extra) -> list[str]:
    return [str(muttlab.__path__[0]), *map(str, extra)]


def test_the_shipped_settings_hide_error_details():
    config = tomllib.loads((dashboard_dir() / "config.toml").read_text(encoding="utf-8"))
    assert config["client"]["showErrorDetails"] == "none"
    assert serve.flag_options(8501)["client.showErrorDetails"] == "none"  # muttlab serve passes it as a flag
    argv = serve.command(8501)
    assert argv[argv.index("--client.showErrorDetails") + 1] == "none"


def test_an_unreachable_store_is_a_scrubbed_message_on_every_page(demo):
    """The Annotate page reads the store first; every other page opens as it would without the store."""
    for stem in app.page_stems():
        at = open_link(stem, {})
        shown = _assert_scrubbed(at, _folders(demo))
        if stem == "annotate":
            assert "The pair store cannot be read" in shown and "mutt:***@" in shown


def test_a_broken_data_dir_is_a_scrubbed_message_on_every_page(demo, tmp_path, monkeypatch):
    broken = tmp_path / "secret-data-dir"
    (broken / "mutt" / "experiments").mkdir(parents=True)
    for name in ("neg_subj_a.json", "neg_subj_b.json", "neg_subj_r5.json"):
        (broken / "mutt" / "experiments" / name).write_text('{"images": [', encoding="utf-8")  # truncated JSON
    (broken / "sick").mkdir()
    (broken / "sick" / "SICK.txt").write_bytes(b"\xff\xfe not a table")
    (broken / "published").mkdir()
    (broken / "published" / "published.csv").write_text("study,metric\n\"unclosed", encoding="utf-8")
    monkeypatch.setenv("MUTTLAB_DATA_DIR", str(broken))
    for stem in app.page_stems():
        _assert_scrubbed(open_link(stem, {}), _folders(broken, demo))


def test_a_broken_model_folder_is_a_scrubbed_message(demo, tmp_path, monkeypatch):
    models = tmp_path / "secret-models"
    models.mkdir()
    (models / "installed.json").write_text("{not json", encoding="utf-8")
    (models / "reval-treelstm.pt").write_bytes(b"\x00" * 64)
    monkeypatch.setenv("MUTTLAB_MODEL_DIR", str(models))
    for stem in ("learned", "run", "playground"):
        _assert_scrubbed(open_link(stem, {}), _folders(models, demo))


@pytest.mark.parametrize("scheduler", ["tcp://127.0.0.1:1", "inproc://x", "file:///etc/passwd", "tcp://[::1:8786",
                                       f"tcp://mutt:{PASSWORD}@127.0.0.1:1"])
def test_a_broken_scheduler_ends_a_run_in_a_scrubbed_message(demo, monkeypatch, scheduler):
    monkeypatch.setenv("MUTTLAB_SCHEDULER", scheduler)
    at = open_link("run", {"metrics": "BLEU-4", "corruptions": "neg_subj", "refs": "5"})
    at = at.get("form_submit_button")[0].click().run()
    shown = _assert_scrubbed(at, _folders(demo))
    assert at.error or at.warning, shown[-500:]


def test_an_error_no_page_handled_is_one_line_with_a_reference_and_the_log_has_it(demo, monkeypatch, caplog):
    """Any other error (a bug, a library's own exception): the visitor reads that the page stopped and a
    reference; the message, the secret and the stack are the log's."""
    secret_path = f"{muttlab.__path__[0]}/engine/runner.py"

    def broken(*args, **kwargs):
        raise RuntimeError(f"connect to postgresql://mutt:{PASSWORD}@db/pairs failed in {secret_path}")

    monkeypatch.setattr(services, "shipped_grid", broken)
    with caplog.at_level(logging.ERROR, logger="muttlab.dashboard"):
        at = open_link("run", {})
    shown = _assert_scrubbed(at, _folders(demo))
    assert "Something went wrong on this page and it stopped" in shown
    reference = shown.split("under reference ")[1][:8]
    logged = [r for r in caplog.records if reference in r.getMessage()]
    assert logged and logged[0].exc_info and PASSWORD in str(logged[0].exc_info[1])


def test_a_muttlab_error_no_page_handled_keeps_its_message_scrubbed(demo, monkeypatch):
    from muttlab.errors import DataError

    def broken(*args, **kwargs):
        raise DataError(f"{muttlab.__path__[0]}/data/results/grid.json",
                        f"cannot open postgresql://mutt:{PASSWORD}@db/pairs or /srv/private/key.pem")

    monkeypatch.setattr(services, "catalogue_frame", broken)  # the Run page's form reads it, handling nothing
    shown = _assert_scrubbed(open_link("run", {}), _folders(demo, "/srv/private"))
    assert "This page cannot be shown" in shown and "cannot open postgresql://mutt:***@db/pairs" in shown
    assert "<server path>" in shown

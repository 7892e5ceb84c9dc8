"""A Drill-down link's ``suite=`` (``file:``, ``upload:``, ``mine:``) and ``vs=`` as an anonymous visitor writes
them: each attack gets a message on the page and a refusal from the report, never a traceback, never a server
path, and nothing outside the data dir is read."""
from __future__ import annotations

import pytest

from muttlab.dashboard.report import build_report
from muttlab.errors import MuttlabError
from muttlab.settings import Limits, load_settings, set_limits
from tests.attacks.test_links import page_text
from tests.attacks.test_served import PASSWORD, page, page_words, served, visit  # noqa: F401 (fixtures)
from tests.dashboard.conftest import app_env, browser, open_link  # noqa: F401 (fixtures)

SECRET = "TOP SECRET LINE"
CELL = {"metric": "chrF", "corruption": "negation"}


@pytest.fixture
def data_root(app_env, monkeypatch, tmp_path):
    """A data dir holding one good contrastive file, a symlink to a file outside it and a 2 MiB file; the
    outside file holds a readable challenge set, so reading it would show its text."""
    outside = tmp_path / "outside"
    outside.mkdir()
    line = ('{"good": "%s", "incorrect": "%s not", "references": ["%s"], "phenomenon": "negation"}\n'
            % (SECRET, SECRET, SECRET))
    (outside / "secret.jsonl").write_text(line, encoding="utf-8")
    root = tmp_path / "data"
    (root / "challenge").mkdir(parents=True)
    (root / "challenge" / "good.jsonl").write_text(line.replace(SECRET, "A dog runs"), encoding="utf-8")
    (root / "challenge" / "out.jsonl").symlink_to(outside / "secret.jsonl")
    (root / "challenge" / "big.jsonl").write_text(line.replace(SECRET, "A dog runs") * 30_000, encoding="utf-8")
    monkeypatch.setenv("MUTTLAB_DATA_DIR", str(root))
    return root


def _server_paths(root) -> list[str]:
    settings = load_settings()
    return [str(root), str(root.parent), str(settings.cache_dir)]


def _refused(link: dict, root, message: str) -> None:
    at = open_link("drilldown", {**CELL, **link})
    assert not at.exception
    shown = page_text(at)
    told = [m.value.replace("\\", "") for m in [*at.warning, *at.error]]
    assert any(message in m for m in told), told
    assert SECRET not in shown and "root:" not in shown
    assert not any(path in shown for path in _server_paths(root))
    assert not at.get("plotly_chart")  # nothing was scored


@pytest.mark.parametrize("suite, message", [
    ("file:../../etc/passwd", "not a path relative to the data dir"),
    ("file:/etc/passwd", "not a path relative to the data dir"),
    ("/etc/passwd", "is not one of default, store, file:"),
    ("file:challenge/out.jsonl", "leads outside the data dir"),
    ("file:challenge/good\x00.jsonl", "control character"),
    ("file:challenge/no-such.jsonl", "no such file"),
    ("upload:" + "0" * 64, "this server holds no such uploaded file"),
    ("upload:../../etc/passwd", "is not one of default, store, file:"),
    ("mine:" + "0" * 32, "this server holds no such suite of your own sentences"),
    ("mine:<script>", "is not one of default, store, file:"),
])
def test_a_suite_link_that_may_not_be_read_gets_a_message(data_root, suite, message):
    _refused({"suite": suite}, data_root, message)
    with pytest.raises(MuttlabError) as refused:
        build_report(load_settings(), f"page=drilldown&metric=chrF&corruption=negation&suite={suite}")
    assert SECRET not in str(refused.value)
    assert not any(path in str(refused.value) for path in _server_paths(data_root))


def test_an_over_size_file_is_refused_before_it_is_read(data_root):
    set_limits(Limits(max_upload_mb=1))
    try:
        _refused({"suite": "file:challenge/big.jsonl"}, data_root, "over the limit of 1")
    finally:
        set_limits(None)


def test_a_huge_vs_is_left_out_with_a_message(data_root):
    at = open_link("drilldown", {**CELL, "suite": "file:challenge/good.jsonl", "vs": "X" * 100_000})
    at = at.button(key="dd-score").click().run()  # scoring a challenge set is the button's work, not the link's
    assert not at.exception and not at.error
    assert any("vs=: the value is 100,000 characters long" in w.value.replace("\\", "") for w in at.warning)
    assert "X" * 1000 not in page_text(at)
    assert int({m.label: m.value for m in at.metric}["trials"]) == 1  # the rest of the view still opens


def test_the_good_file_opens(data_root):
    at = open_link("drilldown", {**CELL, "suite": "file:challenge/good.jsonl", "show": "all"})
    at = at.button(key="dd-score").click().run()
    assert not at.exception and not at.error
    assert "A dog runs" in page_text(at)


@pytest.mark.parametrize("suite", ["file:challenge/good.jsonl", "mine:" + "0" * 32, "upload:" + "0" * 64])
def test_a_run_report_never_reads_a_suite_name_as_a_path(data_root, monkeypatch, suite):
    import muttlab.suites

    opened = []
    monkeypatch.setattr(muttlab.suites, "read_suite", lambda *a, **k: opened.append(a) or None)
    with pytest.raises(MuttlabError, match="covers the suites default and store"):
        build_report(load_settings(), f"metrics=chrF&refs=5&run=1&suite={suite}")
    assert opened == []


# --------------------------------------------------------------------------- served: a real browser, a real server

@pytest.mark.browser
def test_served_suite_links_get_messages_and_a_real_cell_opens(served, page):  # noqa: F811
    """Against `muttlab serve` (its pair store behind a database URL that cannot be reached, holding a
    password): a path out of the data dir and an unknown upload get their messages; a real cell still opens,
    its cards simply without "Edit this pair"."""
    from playwright.sync_api import expect

    visit(page, served, "drilldown", {**CELL, "suite": "file:../../etc/passwd"}, "Left out of this link")
    visit(page, served, "drilldown", {**CELL, "suite": "upload:" + "0" * 64},
          "this server holds no such uploaded file")
    shown = page_words(page)
    assert "root:" not in shown and not [folder for folder in served.folders if folder in shown]
    visit(page, served, "drilldown", {"metric": "BLEU-4", "corruption": "det_sub", "refs": "5", "vs": "ROUGE-L"},
          "trials shown")
    # The comparison's numbers are metric elements, drawn once their script has arrived; the cards may be first.
    expect(page.get_by_text("McNemar p", exact=True)).to_be_visible()
    shown = page_words(page)
    assert "McNemar p" in shown and "Edit this pair" not in shown and PASSWORD not in shown


@pytest.mark.browser
def test_served_an_upload_opens_in_the_drilldown_of_another_visit(served, page, tmp_path):  # noqa: F811
    """An upload on the Challenge page is kept by the server: its phenomenon's drill-down link
    (``suite=upload:<sha256 of the content>``) opens in a new visit, with the upload's pairs."""
    import hashlib

    from playwright.sync_api import expect

    upload = tmp_path / "pairs.jsonl"
    upload.write_text('{"good": "A dog runs on the beach.", "incorrect": "A dog does not run on the beach.", '
                      '"references": ["A dog runs along the beach."], "phenomenon": "negation"}\n', encoding="utf-8")
    page.goto(f"{served.url}/challenge?metrics=chrF")
    page.locator('input[type="file"]').set_input_files(str(upload))
    page.get_by_role("button", name="Score the challenge set").click()
    expect(page.get_by_role("heading", name="Per phenomenon")).to_be_visible()
    digest = hashlib.sha256(upload.read_bytes()).hexdigest()
    visit(page, served, "drilldown", {**CELL, "suite": f"upload:{digest}", "show": "all"}, "trials shown")
    expect(page.get_by_text("1 of 1 trials shown")).to_be_visible()
    expect(page.locator(".mutt-card").first).to_contain_text("does not run")

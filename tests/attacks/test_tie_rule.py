"""The calibrated tie rule's argument, written by anyone who can set it (an operator's environment, a command
line, an API caller), and by a visitor who cannot: a path instead of a name, an unknown study or pair, a
calibration that is not informative or of another language, a hostile calibrations file. Each is refused with
its reason and no traceback, before anything is read or scored; a dashboard link never changes the server's
rules."""
from __future__ import annotations

import os

import pytest

from muttlab import api
from muttlab.errors import DataError, MuttlabError
from muttlab.rules import Calibrations
from muttlab.settings import load_settings
from tests.conftest import run_muttlab
from tests.dashboard.conftest import app_env, open_link  # noqa: F401 (fixture)
from tests.engine.calibrations import write_calibrations

PATHS = ["calibrated:../../../etc/passwd:en-de", "calibrated:/etc/shadow:zh-en", "calibrated:mqm-ted:../../x",
         "calibrated:mqm-ted:zh-en/../../../root", "calibrated:C:\\\\Windows:zh-en", "calibrated:~root:zh-en",
         "calibrated:mqm-ted:zh-en%00.json", "calibrated:mqm-ted:zh-en;rm"]
REFUSED = [("calibrated:wmt99:zh-en", "unknown study 'wmt99'; the calibrations have mqm-ted"),
           ("calibrated:mqm-ted:fr-en", "unknown language pair 'fr-en' of mqm-ted; it has en-de, zh-en")]


@pytest.fixture
def calibrations(tmp_path):
    return write_calibrations(tmp_path)


@pytest.mark.parametrize("rule", PATHS)
def test_a_path_instead_of_a_name_is_refused_before_any_file_is_read(rule, monkeypatch):
    monkeypatch.setattr(Calibrations, "read", lambda *a: pytest.fail("a calibrations file was read"))
    with pytest.raises(MuttlabError, match="plain name|calibrated:<study>:<pair>"):
        load_settings({"MUTTLAB_TIE_RULE": rule})
    with pytest.raises(MuttlabError, match="plain name|calibrated:<study>:<pair>"):
        load_settings({}, tie_rule=rule)


@pytest.mark.parametrize("rule, reason", REFUSED)
def test_an_unknown_study_or_pair_is_refused_by_the_api_before_scoring(rule, reason, calibrations, sample_settings,
                                                                       monkeypatch):
    from muttlab.engine import runner

    monkeypatch.setattr(runner._Scorer, "score_each", lambda *a, **k: pytest.fail("scored"))
    settings = load_settings({"MUTTLAB_TIE_RULE": rule, "MUTTLAB_CALIBRATIONS": str(calibrations)},
                             cache_dir=sample_settings.cache_dir)
    with pytest.raises(MuttlabError, match=reason):
        api.check_rules(settings)
    with pytest.raises(MuttlabError, match=reason):
        api.run_grid(settings, ["BLEU-4"], suite="sample")


def test_a_calibration_that_would_fail_every_strict_trial_is_refused(calibrations, sample_settings):
    settings = sample_settings.with_overrides(calibrations_file=calibrations).with_rules(
        tie=load_settings({}, tie_rule="calibrated:mqm-ted:zh-en").rules.tie)
    with pytest.raises(MuttlabError, match="TER's calibration is not informative"):
        api.run_grid(settings, ["TER"], suite="sample")


@pytest.mark.parametrize("rule", [PATHS[0], REFUSED[0][0], REFUSED[1][0]])
def test_the_command_line_refuses_in_one_line_and_serve_does_not_start(rule, calibrations, tmp_path):
    env = {"MUTTLAB_CACHE_DIR": str(tmp_path / "cache"), "MUTTLAB_CALIBRATIONS": str(calibrations)}
    for command in (["run", "--suite", "sample", "--metrics", "BLEU-4", "--tie-rule", rule],
                    ["severity", "--corruption", "typo", "--tie-rule", rule],
                    ["reproduce", "--tie-rule", rule]):
        done = run_muttlab(*command, env=env, timeout=120)
        assert done.returncode == 2 and done.stdout == "", command
        assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr and "error:" in done.stderr
    # A server is started by an operator: a bad rule in its environment stops it before it listens.
    served = run_muttlab("serve", "--port", "1", env={**env, "MUTTLAB_TIE_RULE": rule}, timeout=120)
    assert served.returncode == 2 and served.stderr.count("\n") == 1 and "Traceback" not in served.stderr


def test_a_hostile_calibrations_file_is_a_data_error(tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path in (folder, fifo):  # a pipe would block the reader for ever
        with pytest.raises(DataError, match="is not a regular file"):
            Calibrations.read(path)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(DataError, match="nested too deeply"):
        Calibrations.read(deep)


def test_a_link_cannot_change_the_servers_rules(app_env, monkeypatch):
    monkeypatch.setattr(Calibrations, "read", lambda *a: pytest.fail("a link read a calibrations file"))
    at = open_link("run", {"tie_rule": "exact", "tie": "calibrated:../../etc/passwd:zh-en",
                           "MUTTLAB_TIE_RULE": "calibrated:mqm-ted:zh-en"})
    assert not at.exception
    glossary = next(e for e in at.expander if e.label.startswith("Glossary"))
    text = "\n".join(m.value for m in glossary.markdown)
    assert "This server's rules: tol:0.15|tie:1e-9." in text and "exact" not in text.split("This server's")[1]
    assert any(s.value == "Accuracy (precomputed)" for s in at.subheader)

"""`muttlab serve`: settings reach the app through the environment load_settings() reads."""
from __future__ import annotations

from pathlib import Path

import pytest

from muttlab.cli import build_parser
from muttlab.cli.serve import command, environment
from muttlab.resources.bundled import dashboard_dir
from muttlab.settings import Settings, load_settings


def test_environment_round_trips_the_settings(tmp_path):
    settings = Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", use_cache=False,
                        database_url="sqlite:///x.sqlite", read_only=True, annotator_token="t0k",
                        workers=3, metric_paths=("pkg.mod:make", "other.mod:Metric"))
    outer = {"PATH": "/usr/bin", "MUTTLAB_DATA_DIR": "/somewhere/else", "MUTTLAB_READ_ONLY": "0"}
    env = environment(settings, outer)
    assert env["PATH"] == "/usr/bin"
    assert load_settings(env) == settings


def test_unset_settings_do_not_leak_from_the_outer_environment(tmp_path):
    settings = Settings(data_dir=None, cache_dir=tmp_path, workers=1)
    env = environment(settings, {"MUTTLAB_DATA_DIR": "/data", "MUTTLAB_READ_ONLY": "1",
                                 "MUTTLAB_ANNOTATOR_TOKEN": "x"})
    loaded = load_settings(env)
    assert loaded.using_sample and not loaded.read_only and loaded.annotator_token is None


def test_command_runs_the_installed_app_headless_without_usage_stats():
    argv = command(8765, "0.0.0.0")
    app = dashboard_dir() / "app.py"
    assert argv[1:5] == ["-m", "streamlit", "run", str(app)]
    assert Path(app).is_file()
    pairs = dict(zip(argv[5::2], argv[6::2]))
    assert {"--server.port": "8765", "--server.address": "0.0.0.0", "--server.headless": "true",
            "--browser.gatherUsageStats": "false"}.items() <= pairs.items()


def test_command_carries_the_shipped_theme_and_server_settings():
    # The settings hold from any working directory, not only where .streamlit/config.toml lies.
    pairs = dict(zip(command(8765)[5::2], command(8765)[6::2]))
    assert pairs["--theme.primaryColor"] == "#2563eb"
    assert pairs["--server.enableXsrfProtection"] == "true"
    assert pairs["--server.maxUploadSize"] == "20"
    assert pairs["--client.toolbarMode"] == "minimal"


def test_serve_options_parse():
    args = build_parser().parse_args(["serve", "--port", "9000", "--read-only"])
    assert (args.port, args.read_only, args.address) == (9000, True, "localhost")
    assert build_parser().parse_args(["serve"]).read_only is None


def test_help_mentions_serve(capsys):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["serve", "--help"])
    assert exit_info.value.code == 0
    assert "--read-only" in capsys.readouterr().out

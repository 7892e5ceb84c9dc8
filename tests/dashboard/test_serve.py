"""`muttlab serve`: settings reach the app through the environment load_settings() reads."""
from __future__ import annotations

import importlib
import os
import threading
from pathlib import Path

import pytest

from muttlab.dashboard import signin
from muttlab.cli import build_parser
from muttlab.cli import serve as serve_module
from muttlab.cli.serve import command, environment, flag_options
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
    # A full collection after every rerun held the GIL ~0.3 s per visitor (benchmarks/bench_load.py).
    assert pairs["--runner.postScriptGC"] == "false"


def test_the_agent_api_stays_off_whatever_a_config_file_says(tmp_path, monkeypatch):
    # Flag options outrank every config.toml Streamlit reads (here one in the working directory).
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "config.toml").write_text("[server]\nenableAgentApi = true\n")
    monkeypatch.chdir(tmp_path)
    from streamlit import config
    from streamlit.web import bootstrap

    options = flag_options(8765)
    assert options["server.enableAgentApi"] is False
    try:
        bootstrap.load_config_options(flag_options=options)
        assert config.get_option("server.enableAgentApi") is False
        assert config.get_option("server.maxUploadSize") == 20
    finally:
        bootstrap.load_config_options(flag_options={})


def test_serve_starts_the_warm_up_before_the_server(tmp_path, monkeypatch):
    """`muttlab serve` runs Streamlit in its own process; the warm-up has begun when the server starts."""
    from streamlit.web import bootstrap

    from muttlab.dashboard import services

    # serve sets the process environment for the app: here a copy, restored after the test.
    monkeypatch.setattr(os, "environ", {k: v for k, v in os.environ.items() if k not in serve_module.SETTINGS_VARIABLES})
    started = []
    state = services.WarmState(started=0.0, ready=[], failed={})

    def fake_warm_start(settings):
        started.append(settings)
        # The first page's needs finish loading a little later, in the warm-up's own thread.
        threading.Timer(0.3, state.quick.set).start()
        return state

    monkeypatch.setattr(services, "warm_start", fake_warm_start)
    seen = {}

    def fake_run(script, app, args, options):
        seen.update(script=script, app=app, options=options, warmed=list(started), settings=load_settings(),
                    quick_ready=state.quick.is_set())

    monkeypatch.setattr(bootstrap, "run_asgi_app", fake_run)
    monkeypatch.setattr(serve_module, "leave_soon", lambda: None)  # it would end the test run
    # serve() mounts the sign-in routes for its process; later tests in this process run pages without them.
    monkeypatch.setattr(signin, "_MOUNTED", signin._MOUNTED)
    args = build_parser().parse_args(["serve", "--port", "8766", "--cache-dir", str(tmp_path), "--read-only"])
    assert args.handler(args) == 0
    assert seen["script"] == str(dashboard_dir() / "app.py")
    # The served app is Streamlit's with the sign-in address beside its routes.
    module, name = seen["app"].split(":")
    app = getattr(importlib.import_module(module), name)
    assert {"/_muttlab/signin", "/_muttlab/signout"} <= {route.path for route in app._user_routes}
    assert seen["options"]["server.port"] == 8766 and seen["options"]["server.enableAgentApi"] is False
    # The warm-up was given exactly the settings every page builds from the environment.
    assert seen["warmed"] == [seen["settings"]]
    # The server opened only once the quick part of the warm-up was done.
    assert seen["quick_ready"]
    assert seen["settings"].read_only and seen["settings"].cache_dir == tmp_path.resolve()


def test_serve_options_parse():
    args = build_parser().parse_args(["serve", "--port", "9000", "--read-only"])
    assert (args.port, args.read_only, args.address) == (9000, True, "localhost")
    assert build_parser().parse_args(["serve"]).read_only is None


def test_help_mentions_serve(capsys):
    with pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(["serve", "--help"])
    assert exit_info.value.code == 0
    assert "--read-only" in capsys.readouterr().out

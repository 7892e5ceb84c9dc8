"""``muttlab serve``: start the dashboard (the installed ``muttlab/dashboard/app.py``) in this process.

The settings travel to the app through the ``MUTTLAB_*`` environment variables that
:func:`muttlab.settings.load_settings` reads, so the app and the CLI share one configuration. The theme
and server settings ship with the package (``dashboard/config.toml``) and are given to Streamlit as flag
options, so they hold from any working directory; Streamlit still reads ``.streamlit/secrets.toml`` from
the directory the server is started in.

Streamlit is started through its bootstrap API rather than ``streamlit run`` in a child process, so that the
background warm-up (metric objects, the METEOR JVM, spaCy, word vectors) begins before the server accepts its
first connection, in the process whose sessions use what it loads; the server opens once the quick part of it
(what a first page needs) is done.
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time
import tomllib
from pathlib import Path
from typing import Mapping

from muttlab.cli import summary
from muttlab.cli.common import settings_from_args, whole
from muttlab.errors import MuttlabError
from muttlab.api import dashboard_dir
from muttlab.settings import Settings

DEFAULT_PORT = 8501
EXIT_GRACE_S = 5.0
QUICK_WAIT_S = 300.0
APP = None  # the served app, for uvicorn, which takes it by import name

# Every variable load_settings() reads; the ones a setting leaves unset are removed from the child's
# environment so that an outer value cannot leak past an explicit option.
SETTINGS_VARIABLES = ("MUTTLAB_DATA_DIR", "MUTTLAB_CACHE_DIR", "MUTTLAB_NO_CACHE", "MUTTLAB_DATABASE_URL",
                      "MUTTLAB_READ_ONLY", "MUTTLAB_ANNOTATOR_TOKEN", "MUTTLAB_WORKERS", "MUTTLAB_METRICS",
                      "MUTTLAB_USERS_FILE", "MUTTLAB_SESSION_TTL", "MUTTLAB_MODEL_DIR", "MUTTLAB_TRUSTED_PROXIES",
                      "MUTTLAB_DASK_TLS_CA", "MUTTLAB_DASK_TLS_CERT", "MUTTLAB_DASK_TLS_KEY")


def register(subparsers, common: argparse.ArgumentParser) -> None:
    parser = subparsers.add_parser(
        "serve", parents=[common], help=summary("serve"),
        description="Start the MUTT Lab dashboard. Data dir, cache dir and metric paths are those of the other "
                    "commands; --read-only serves a demo in which nothing can be edited.")
    parser.add_argument("--port", type=whole(1, 65535), default=DEFAULT_PORT,
                        help=f"port to listen on (default: {DEFAULT_PORT})")
    parser.add_argument("--address", default="localhost",
                        help="address to listen on (default: localhost; 0.0.0.0 to serve other machines)")
    parser.add_argument("--read-only", action="store_true", default=None,
                        help="refuse every edit (the hosted demo); same as MUTTLAB_READ_ONLY=1")
    parser.set_defaults(handler=handle)


def environment(settings: Settings, base: Mapping[str, str]) -> dict[str, str]:
    """``base`` with the MUTTLAB_* variables replaced by ones that make load_settings() return ``settings``."""
    env = {k: v for k, v in base.items() if k not in SETTINGS_VARIABLES}
    if settings.data_dir is not None:
        env["MUTTLAB_DATA_DIR"] = str(Path(settings.data_dir).resolve())
    env["MUTTLAB_CACHE_DIR"] = str(Path(settings.cache_dir).resolve())
    if not settings.use_cache:
        env["MUTTLAB_NO_CACHE"] = "1"
    if settings.database_url:
        env["MUTTLAB_DATABASE_URL"] = settings.database_url
    if settings.read_only:
        env["MUTTLAB_READ_ONLY"] = "1"
    if settings.annotator_token:
        env["MUTTLAB_ANNOTATOR_TOKEN"] = settings.annotator_token
    env["MUTTLAB_WORKERS"] = str(settings.workers)
    if settings.users_file is not None:
        env["MUTTLAB_USERS_FILE"] = str(Path(settings.users_file).resolve())
    env["MUTTLAB_SESSION_TTL"] = str(settings.session_ttl)
    if settings.model_dir_override is not None:
        env["MUTTLAB_MODEL_DIR"] = str(Path(settings.model_dir_override).resolve())
    if settings.metric_paths:
        env["MUTTLAB_METRICS"] = ",".join(settings.metric_paths)
    for name in ("ca", "cert", "key"):
        path = getattr(settings, f"dask_tls_{name}")
        if path is not None:
            env[f"MUTTLAB_DASK_TLS_{name.upper()}"] = str(Path(path).resolve())
    if settings.trusted_proxies:
        env["MUTTLAB_TRUSTED_PROXIES"] = ",".join(settings.trusted_proxies)
    # uvicorn believes X-Forwarded-For and X-Forwarded-Proto from the addresses in FORWARDED_ALLOW_IPS, and from
    # 127.0.0.1 when it is unset: only the proxies the operator lists are believed, none by default.
    env["FORWARDED_ALLOW_IPS"] = ",".join(settings.trusted_proxies)
    return env


def config_options(path: Path) -> dict[str, object]:
    """``{"section.option": value}`` for every setting of a Streamlit ``config.toml``."""
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise MuttlabError(f"{path}: cannot read the dashboard's settings ({exc}); reinstall muttlab") from None
    return {f"{section}.{option}": value for section, options in config.items() for option, value in options.items()}


def flag_options(port: int, address: str = "localhost") -> dict[str, object]:
    """Streamlit's options for the dashboard: the shipped config, then what no config file may change.

    Flag options outrank every ``config.toml`` Streamlit finds (``~/.streamlit``, the working directory), also
    when it reloads one that changed, so the agent API stays off and usage statistics stay unsent.
    """
    return {**config_options(dashboard_dir() / "config.toml"),
            "server.port": port, "server.address": address, "server.headless": True,
            "browser.gatherUsageStats": False, "server.enableAgentApi": False}


def command(port: int, address: str = "localhost") -> list[str]:
    """The equivalent ``streamlit run`` command line (for running the app by hand; ``serve`` runs it in-process)."""
    flags = []
    for name, value in flag_options(port, address).items():
        flags += [f"--{name}", str(value).lower() if isinstance(value, bool) else str(value)]
    return [sys.executable, "-m", "streamlit", "run", str(dashboard_dir() / "app.py"), *flags]


def handle(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    if args.read_only:
        settings = settings.with_overrides(read_only=True)
    options = flag_options(args.port, args.address)
    env = environment(settings, os.environ)
    os.environ.clear()
    os.environ.update(env)
    print(f"muttlab: serving the dashboard on http://{args.address}:{args.port}"
          f"{' (read-only)' if settings.read_only else ''}; "
          f"data: {settings.data_dir or 'the bundled sample'}", file=sys.stderr, flush=True)
    serve(options)
    return 0


def serve(options: dict[str, object]) -> None:
    """Start the warm-up, then the Streamlit server (blocks until the server stops)."""
    from streamlit import config as streamlit_config
    from streamlit.starlette import App
    from streamlit.web import bootstrap

    from muttlab.dashboard import plotly_hint, services, signin
    from muttlab.dashboard.shared import refuse_client_cache_clearing

    # Before the first connection: a browser may send the clear-cache message before any page has run
    # (app.py refuses it too, for a server started with `streamlit run`).
    refuse_client_cache_clearing()

    app = str(dashboard_dir() / "app.py")
    # What `streamlit run` does before starting its server: the script path decides where config and
    # secrets are looked up, then the options are loaded with the flags on top.
    streamlit_config._main_script_path = os.path.abspath(app)
    bootstrap.load_config_options(flag_options=options)
    global APP
    # Streamlit's app with the sign-in address and the paint hint beside its own routes (see
    # muttlab.dashboard.signin and muttlab.dashboard.plotly_hint).
    APP = App(app, routes=[*signin.routes(), *plotly_hint.routes()])
    # The same settings object every page builds from the environment, so the pages find what it loaded.
    warm = services.warm_start(services.settings())
    print("muttlab: warm-up started (metrics, JVMs and models load in the background)", file=sys.stderr, flush=True)
    # The server opens (and /_stcore/health says ok) once the first page's needs are loaded: the grid, the
    # metric catalogue, the n-gram metrics, the METEOR JVM and spaCy. A server that cannot load them (no Java)
    # opens anyway after QUICK_WAIT_S; the slower metrics fill in while it serves.
    try:
        if warm.quick.wait(QUICK_WAIT_S):
            print(f"muttlab: quick metrics ready after {time.monotonic() - warm.started:.1f} s; opening the server",
                  file=sys.stderr, flush=True)
        bootstrap.run_asgi_app(app, f"{__name__}:APP", [], options)
    finally:  # stopped, or interrupted while the warm-up was loading
        leave_soon()


def leave_soon() -> None:
    """After the server has stopped: a scoring job under way (a METEOR JVM loading its paraphrase table for the
    warm-up) would hold the exit handlers for minutes; they get EXIT_GRACE_S seconds, then the process leaves."""
    leave = threading.Timer(EXIT_GRACE_S, os._exit, args=(0,))
    leave.daemon = True
    leave.start()

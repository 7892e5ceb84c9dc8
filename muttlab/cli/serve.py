"""``muttlab serve``: start the dashboard (``streamlit run`` on the installed ``muttlab/dashboard/app.py``).

The settings travel to the app through the ``MUTTLAB_*`` environment variables that
:func:`muttlab.settings.load_settings` reads, so the app and the CLI share one configuration. The theme
and server settings ship with the package (``dashboard/config.toml``) and are passed as Streamlit
command-line flags, so they hold from any working directory; Streamlit still reads
``.streamlit/secrets.toml`` from the directory the server is started in.
"""
from __future__ import annotations

import argparse
import os
import sys
import tomllib
from pathlib import Path
from typing import Mapping

from muttlab.cli import summary
from muttlab.cli.common import settings_from_args, whole
from muttlab.errors import MuttlabError
from muttlab.resources.bundled import dashboard_dir
from muttlab.settings import Settings

DEFAULT_PORT = 8501

# Every variable load_settings() reads; the ones a setting leaves unset are removed from the child's
# environment so that an outer value cannot leak past an explicit option.
SETTINGS_VARIABLES = ("MUTTLAB_DATA_DIR", "MUTTLAB_CACHE_DIR", "MUTTLAB_NO_CACHE", "MUTTLAB_DATABASE_URL",
                      "MUTTLAB_READ_ONLY", "MUTTLAB_ANNOTATOR_TOKEN", "MUTTLAB_WORKERS", "MUTTLAB_METRICS",
                      "MUTTLAB_USERS_FILE", "MUTTLAB_SESSION_TTL", "MUTTLAB_MODEL_DIR")


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
    return env


def config_flags(path: Path) -> list[str]:
    """``--section.option value`` for every setting of a Streamlit ``config.toml``."""
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise MuttlabError(f"{path}: cannot read the dashboard's settings ({exc}); reinstall muttlab") from None
    flags = []
    for section, options in config.items():
        for option, value in options.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            flags += [f"--{section}.{option}", text]
    return flags


def command(port: int, address: str = "localhost") -> list[str]:
    """The ``streamlit run`` command line for the dashboard."""
    app = dashboard_dir()
    return [sys.executable, "-m", "streamlit", "run", str(app / "app.py"), *config_flags(app / "config.toml"),
            "--server.port", str(port), "--server.address", address,
            "--server.headless", "true", "--browser.gatherUsageStats", "false"]


def handle(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    if args.read_only:
        settings = settings.with_overrides(read_only=True)
    env = environment(settings, os.environ)
    argv = command(args.port, args.address)
    print(f"muttlab: serving the dashboard on http://{args.address}:{args.port}"
          f"{' (read-only)' if settings.read_only else ''}; "
          f"data: {settings.data_dir or 'the bundled sample'}", file=sys.stderr, flush=True)
    # Replace this process, so that stopping `muttlab serve` stops the server itself.
    os.execve(sys.executable, argv, env)
    return 0  # not reached

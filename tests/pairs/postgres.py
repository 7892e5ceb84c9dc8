"""A throwaway PostgreSQL server for the pair-store tests: ``initdb`` and ``pg_ctl`` in a temporary folder.

The server listens only on a Unix socket in that folder (no TCP port to collide with), with trust
authentication and fsync off. ``initdb`` refuses to run as root, so under root (CI) the server runs as
the unprivileged ``nobody`` account. When PostgreSQL or its Python driver is missing, :func:`start` says
why, and the tests that need it are skipped with that reason; a server that is installed but does not
start fails them.
"""
from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

NOBODY = 65534


def _binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    # Debian keeps the server binaries out of PATH.
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=lambda p: int(Path(p).parts[4]))
    return candidates[-1] if candidates else None


@dataclass
class Server:
    root: Path
    socket_dir: Path
    port: int
    pg_ctl: str
    user: int | None
    _databases = itertools.count(1)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@/{database}?host={self.socket_dir}&port={self.port}"

    def new_database(self) -> str:
        """A fresh, empty database; returns its SQLAlchemy URL."""
        import psycopg

        name = f"muttlab_test_{os.getpid()}_{next(self._databases)}"
        with psycopg.connect(host=str(self.socket_dir), port=self.port, user="postgres", dbname="postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        _run([self.pg_ctl, "stop", "-D", str(self.root / "data"), "-m", "immediate", "-w"], self.user, check=False)
        shutil.rmtree(self.root, ignore_errors=True)


def _free_port() -> int:
    # Only the socket's file name uses the port (no TCP listener), but a free one avoids any clash.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(argv: list[str], user: int | None, check: bool = True) -> subprocess.CompletedProcess:
    kwargs = {"user": user, "group": user} if user is not None else {}
    return subprocess.run(argv, check=check, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                          cwd="/", **kwargs)


def start() -> Server | str:
    """A running server, or the reason why there is none (PostgreSQL or its driver is not installed).

    Raises:
      RuntimeError: PostgreSQL is installed but the server did not start (with its log's last lines).
    """
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "the PostgreSQL driver is not installed (pip install -e '.[postgres]' or '.[dev]')"
    initdb, pg_ctl = _binary("initdb"), _binary("pg_ctl")
    if not initdb or not pg_ctl:
        return "PostgreSQL is not installed (Debian package postgresql; scripts/setup.sh installs it)"
    user = NOBODY if os.geteuid() == 0 else None
    root = Path(tempfile.mkdtemp(prefix="muttlab-pg-"))
    root.chmod(0o755)
    if user is not None:
        os.chown(root, user, user)
    data, socket_dir = root / "data", root / "sock"
    try:
        _run(["mkdir", "-p", str(socket_dir)], user)
        _run([initdb, "-D", str(data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"
              if _has_c_utf8() else "--locale=C", "--no-sync"], user)
        port = _free_port()
        options = f"-k {socket_dir} -p {port} -c listen_addresses='' -c fsync=off -c max_connections=60"
        _run([pg_ctl, "start", "-D", str(data), "-w", "-t", "60", "-l", str(root / "server.log"), "-o", options], user)
    except (subprocess.SubprocessError, OSError) as exc:
        log = ""
        if (root / "server.log").is_file():
            log = (root / "server.log").read_text(errors="replace")[-500:]
        detail = getattr(exc, "stderr", "") or ""
        shutil.rmtree(root, ignore_errors=True)
        raise RuntimeError(f"could not start a PostgreSQL server: {exc} {detail.strip()[-300:]} {log}") from None
    return Server(root, socket_dir, port, pg_ctl, user)


def _has_c_utf8() -> bool:
    return any(Path(p).exists() for p in ("/usr/lib/locale/C.utf8", "/usr/lib/locale/C.UTF-8"))

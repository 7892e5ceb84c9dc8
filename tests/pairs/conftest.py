"""The pair-store backends: SQLite always, PostgreSQL on a throwaway server where one can be started."""
from __future__ import annotations

import pytest

from muttlab.settings import Settings
from tests.pairs import postgres

BACKENDS = ["sqlite", "postgresql"]


@pytest.fixture(scope="session")
def pg_server():
    """A PostgreSQL server for this test session, or the reason (a string) why there is none."""
    try:
        server = postgres.start()
    except RuntimeError as exc:
        pytest.fail(str(exc))
    yield server
    if not isinstance(server, str):
        server.stop()


@pytest.fixture(params=BACKENDS)
def settings(request, tmp_path):
    """Settings whose pair store is a fresh SQLite file or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return Settings(cache_dir=tmp_path / "cache")
    server = request.getfixturevalue("pg_server")
    if isinstance(server, str):
        pytest.skip(server)
    return Settings(cache_dir=tmp_path / "cache", database_url=server.new_database())


@pytest.fixture
def sqlite_settings(tmp_path):
    return Settings(cache_dir=tmp_path / "cache")

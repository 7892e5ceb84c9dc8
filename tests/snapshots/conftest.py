"""What the snapshot tests share: a shipped snapshot, and its stamp compared as the script that wrote it would
stamp it now (the models the package ships, never one installed on this machine; the default rules)."""
from __future__ import annotations

from dataclasses import replace

import pytest

from muttlab import api
from muttlab.engine import runner
from muttlab.settings import Settings
from muttlab.snapshots import KINDS


def shipped(kind: str):
    """The shipped snapshot of ``kind``; a failure saying how to write it when it is missing."""
    loaded = api.snapshot(kind)
    assert loaded is not None, f"data/results/{kind}.json is missing; re-run {KINDS[kind].regenerate}"
    return loaded


def assert_current(kind: str, data_dir) -> None:
    """The shipped snapshot's stamp is the one its script would write now: same data files, code, rules and the
    signatures of every metric in it (each of which must still be registered and loadable)."""
    snapshot = shipped(kind)
    settings = replace(Settings(data_dir=data_dir), read_only=True)
    registry = runner.registry_for(settings)
    try:
        infos = {m: registry.info(m) for m in snapshot.stamp.signatures if m in registry.names}
        assert set(infos) == set(snapshot.stamp.signatures), "metrics no longer registered"
        unavailable = {m: i.reason for m, i in infos.items() if not i.available}
        assert not unavailable, f"metrics the script could not load now: {unavailable}"
        differences = api.snapshot_differences(settings, snapshot, registry=registry)
    finally:
        registry.close()
    assert differences == [], f"{kind}: {'; '.join(differences)}; re-run {KINDS[kind].regenerate}"


@pytest.fixture(scope="module")
def script():
    """The precompute script of the module's kind (``KIND`` in the test module), loaded as a module."""
    import importlib.util

    from tests.conftest import REPO

    def load(kind: str):
        path = REPO / KINDS[kind].script
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load

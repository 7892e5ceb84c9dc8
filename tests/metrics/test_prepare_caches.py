"""scripts/prepare_caches.py, which setup runs: every metric with a numba kernel scores its pair there, so the
kernels a real score needs are compiled and cached before the first run (and a metric it names still exists),
and TERp's paraphrase index is built."""
from __future__ import annotations

import importlib.util

from tests.conftest import REPO


def test_setup_builds_every_kernel_and_terps_paraphrase_index(capsys):
    path = REPO / "scripts" / "prepare_caches.py"
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main() == 0
    out = capsys.readouterr()
    assert "skipped" not in out.err, out.err  # an unknown name or a metric that cannot run here is skipped
    lines = out.out.splitlines()
    assert [line.split()[1] for line in lines[:-1]] == list(module.KERNEL_METRICS)
    assert lines[-1].startswith("prepare_caches: TERp's paraphrase index ready")
    assert all(" ready (" in line for line in lines)

"""scripts/compile_kernels.py, which setup runs: every metric with a numba kernel scores its pair there, so the
kernels a real score needs are compiled and cached before the first run (and a metric it names still exists)."""
from __future__ import annotations

import importlib.util

from tests.conftest import REPO


def test_setup_compiles_every_metric_with_a_numba_kernel(capsys):
    path = REPO / "scripts" / "compile_kernels.py"
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main() == 0
    out = capsys.readouterr()
    assert "skipped" not in out.err, out.err  # an unknown name or a metric that cannot run here is skipped
    assert [line.split()[1] for line in out.out.splitlines()] == list(module.KERNEL_METRICS)
    assert all(" ready (" in line for line in out.out.splitlines())

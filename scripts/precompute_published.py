"""Write ``data/results/published.json``: Published vs measured, as the dashboard shows it before anyone asks
for a recomputation.

Usage (from the repository root, with the real data)::

    MUTTLAB_DATA_DIR=/path/to/data .venv/bin/python scripts/precompute_published.py

It runs :func:`muttlab.api.reproduce` on every study (minutes on a cold score cache) with the models the
package ships, as the grid of ``scripts/precompute_grid.py`` is, under the default rules (the lab's value beside
the paper's), and writes the numbers as a snapshot (:mod:`muttlab.snapshots`) stamped with the sha256 of
``published/published.csv`` and the data the studies read, of the reproduction code, every measured metric's
signature and the rules. ``tests/snapshots/test_shipped_published.py`` fails when that stamp is no longer
current, asking to re-run this.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from muttlab import __version__, api, snapshots
from muttlab.rules import DEFAULT_RULES
from muttlab.snapshots import published as shipped_published

KIND = snapshots.KINDS["published"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=None,
                        help="where to write (default: the package's data/results/published.json)")
    args = parser.parse_args(argv)

    # No model folder, as a read-only server has: the numbers of the models the package ships.
    settings = replace(api.load_settings(), read_only=True)
    if settings.data_dir is None:
        print("precompute_published: set MUTTLAB_DATA_DIR to the folder holding published/published.csv",
              file=sys.stderr)
        return 2
    if settings.rules != DEFAULT_RULES:
        print(f"precompute_published: the shipped numbers use the default rules, not {settings.rules.signature()}; "
              "unset MUTTLAB_TIE_RULE", file=sys.stderr)
        return 2
    output = snapshots.path_of(KIND) if args.output is None else Path(args.output)
    registry = api.registry_for(settings)
    start = time.perf_counter()
    try:
        report = api.reproduce(settings, registry=registry,
                               progress=lambda done, total, message: print(f"  {message}", file=sys.stderr))
        content = shipped_published.from_report(report)
        stamp = snapshots.current_stamp(KIND, settings, {m: registry.info(m).signature
                                                         for m in content.measured_metrics() if m in registry.names})
    finally:
        registry.close()
    snapshots.write(KIND, content, stamp, __version__, output)
    print(f"wrote {output}: {report.summary()} ({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

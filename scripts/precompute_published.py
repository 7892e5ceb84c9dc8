"""Write ``data/results/published.json``: Published vs measured, as the dashboard shows it before anyone asks
for a recomputation.

Usage (from the repository root, with the real data)::

    MUTTLAB_DATA_DIR=/path/to/data .venv/bin/python scripts/precompute_published.py

It runs :func:`muttlab.api.reproduce` on every study (minutes on a cold score cache) with the models the
package ships, as the grid of ``scripts/precompute_grid.py`` is, and writes the numbers stamped with the
sha256 of ``published/published.csv``, of the reproduction code and every measured metric's signature.
``tests/dashboard/test_shipped_published.py`` fails when that stamp is no longer current, asking to re-run this.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

from muttlab import __version__, api
from muttlab.dashboard import shipped_published


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
    output = shipped_published.published_path() if args.output is None else Path(args.output)
    registry = api.registry_for(settings)
    start = time.perf_counter()
    try:
        report = api.reproduce(settings, registry=registry,
                               progress=lambda done, total, message: print(f"  {message}", file=sys.stderr))
        stamp = shipped_published.current_stamp(settings, registry, shipped_published.measured_metrics(report.frame))
    finally:
        registry.close()
    document = shipped_published.build(report, stamp, __version__)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {output}: {report.summary()} ({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

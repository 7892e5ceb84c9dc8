"""Write ``data/results/severity.json``: the Severity page's default curve, as the page draws it on a first visit.

Usage (from the repository root, with the MUTT study's data)::

    MUTTLAB_DATA_DIR=/path/to/data .venv/bin/python scripts/precompute_severity.py

It draws :data:`muttlab.severity.DEFAULT_CURVE` (the corruption, strengths, metrics and references the page
opens on) with :func:`muttlab.api.severity` on every distinct original of the MUTT experiment sets, with the
models the package ships and the default rules, and writes it as a snapshot (:mod:`muttlab.snapshots`) stamped
with the sha256 of the experiment files, of the curve's code, the metrics' signatures and the rules.
``tests/snapshots/test_shipped_severity.py`` fails when that stamp is no longer current, asking to re-run this.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from muttlab import __version__, api, snapshots
from muttlab.rules import DEFAULT_RULES
from muttlab.snapshots import severity as shipped_severity

KIND = snapshots.KINDS["severity"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=None,
                        help="where to write (default: the package's data/results/severity.json)")
    args = parser.parse_args(argv)

    # No model folder, as a read-only server has: the numbers of the models the package ships.
    settings = replace(api.load_settings(), read_only=True)
    if settings.data_dir is None:
        print("precompute_severity: set MUTTLAB_DATA_DIR to the folder holding mutt/experiments", file=sys.stderr)
        return 2
    if settings.rules != DEFAULT_RULES:
        print(f"precompute_severity: the shipped curve is judged by the default rules, not "
              f"{settings.rules.signature()}; unset MUTTLAB_TIE_RULE", file=sys.stderr)
        return 2
    output = snapshots.path_of(KIND) if args.output is None else Path(args.output)
    request = api.severity_default()
    registry = api.registry_for(settings)
    start = time.perf_counter()
    try:
        curve = api.severity(settings, request.corruption, list(request.metrics), list(request.strengths),
                             refs=request.refs, registry=registry,
                             progress=lambda done, total, message: print(f"  {message}", file=sys.stderr))
        stamp = snapshots.current_stamp(KIND, settings, {m: registry.info(m).signature for m in request.metrics})
    finally:
        registry.close()
    snapshots.write(KIND, shipped_severity.from_curve(request, curve), stamp, __version__, output)
    print(f"wrote {output}: {len(curve)} points on {curve.attrs['kept']} sentences "
          f"({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Write ``data/results/grid.json``: the MUTT accuracy grid the dashboard shows before anyone presses Run.

Usage (from the repository root, with the MUTT study's data)::

    MUTTLAB_DATA_DIR=/path/to/data .venv/bin/python scripts/precompute_grid.py            # every shipped metric
    MUTTLAB_DATA_DIR=/path/to/data .venv/bin/python scripts/precompute_grid.py --metrics BLEU-4,TERp --merge

Only cell-level numbers are written (no sentences: the data licences keep them out of the package), as a
snapshot (:mod:`muttlab.snapshots`) stamped with the sha256 of every experiment file read, each metric's
signature, the rules the trials were judged by (the default ones: ``MUTTLAB_TIE_RULE`` must be unset) and the
judging code. ``tests/snapshots/test_shipped_grid.py`` fails when that stamp is no longer current, asking to
re-run this. A metric that cannot be loaded or fails is listed under ``skipped`` with its reason.

Every metric that ships is covered, the learned (ReVal, DREEM, the multi-level metrics) and neural ones
included: their models are read-only package data named by content hash in the signature. The grid is
computed as a read-only server computes it — with the shipped models only, never a model installed in this
machine's model folder — so its numbers are those of the package, and a server whose operator installed a
trained model sees those metrics' cells flagged as outdated (their signature differs).
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import pandas as pd

from muttlab import __version__, api, snapshots
from muttlab.errors import MuttlabError
from muttlab.rules import DEFAULT_RULES
from muttlab.snapshots import grid as shipped_grid

KIND = snapshots.KINDS["grid"]

BUILT_IN = "built-in"


def shipped_settings(settings):
    """``settings`` with no model folder (as a read-only server has): the learned metrics use the shipped
    models, and metrics that need a trained file (W2V-AVG-corpus) are unavailable."""
    return replace(settings, read_only=True)


def default_metrics(catalogue) -> tuple[list[str], dict[str, str]]:
    """Every shipped (built-in) metric: the available ones to compute, the others with why they are not."""
    shipped_only = [i for i in catalogue if i.source == BUILT_IN]
    return ([i.name for i in shipped_only if i.available],
            {i.name: i.reason for i in shipped_only if not i.available})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metrics", help="comma-separated metric names (default: every shipped metric)")
    parser.add_argument("--output", default=None, help="where to write (default: the package's data/results/grid.json)")
    parser.add_argument("--merge", action="store_true", help="keep the other metrics already in the output file")
    args = parser.parse_args(argv)

    settings = shipped_settings(api.load_settings())
    if settings.data_dir is None:
        print("precompute_grid: set MUTTLAB_DATA_DIR to the folder holding mutt/experiments", file=sys.stderr)
        return 2
    if settings.rules != DEFAULT_RULES:
        print(f"precompute_grid: the shipped grid is judged by the default rules, not {settings.rules.signature()}; "
              "unset MUTTLAB_TIE_RULE", file=sys.stderr)
        return 2
    output = snapshots.path_of(KIND) if args.output is None else Path(args.output)
    registry = api.registry_for(settings)
    if args.metrics:
        names = [m.strip() for m in args.metrics.split(",") if m.strip()]
        # Only the named metrics are loaded; an unknown name is reported by run_grid below.
        infos = [registry.info(n) for n in names if n in registry.names]
        skipped = {i.name: i.reason for i in infos if not i.available}
        names = [n for n in names if n not in skipped]
    else:
        names, skipped = default_metrics(api.metric_catalogue(settings, registry))
    suite = api.load_suite(settings, "mutt")

    frames, signatures, results_signatures = [], {}, {}
    try:
        for name in names:
            start = time.perf_counter()
            try:
                results = api.run_grid(settings, [name], suite=suite, registry=registry)
            except MuttlabError as exc:
                skipped[name] = str(exc)
                print(f"  {name}: skipped ({exc})", file=sys.stderr)
                continue
            frames.append(results.accuracy())
            signatures.update(results.signatures)
            results_signatures.update({m: results.signature(m) for m in results.signatures})
            print(f"  {name}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    finally:
        registry.close()

    if args.merge and output.is_file():
        old = snapshots.load(KIND, output)
        if old.stamp.differences(snapshots.current_stamp(KIND, settings, {})):
            print(f"precompute_grid: {output} was computed from other data, code or rules; write it whole",
                  file=sys.stderr)
            return 2
        keep = old.content.cells[~old.content.cells["metric"].isin(signatures)]
        frames.insert(0, keep)
        results_signatures = {**{m: s for m, s in old.content.signatures.items() if m not in signatures},
                              **results_signatures}
        signatures = {**{m: s for m, s in old.stamp.signatures.items() if m not in signatures}, **signatures}
        skipped = {**{m: r for m, r in old.content.skipped.items() if m not in signatures}, **skipped}
    if not frames:
        print("precompute_grid: no metric could be scored", file=sys.stderr)
        return 1
    content = shipped_grid.from_results(pd.concat(frames, ignore_index=True), results_signatures, suite.name,
                                        skipped)
    snapshots.write(KIND, content, snapshots.current_stamp(KIND, settings, signatures), __version__, output)
    print(f"wrote {output}: {len(signatures)} metrics, {len(content.cells)} cells", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

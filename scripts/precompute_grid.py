"""Write ``data/results/grid.json``: the MUTT accuracy grid the dashboard shows before anyone presses Run.

Usage (from the repository root, with the MUTT study's data)::

    MUTTLAB_DATA_DIR=/path/to/data .venv/bin/python scripts/precompute_grid.py            # every shipped metric
    MUTTLAB_DATA_DIR=/path/to/data .venv/bin/python scripts/precompute_grid.py --metrics BLEU-4,TERp --merge

Only cell-level numbers are written (no sentences: the data licences keep them out of the package),
stamped with the date, the sha256 of every experiment file read and each metric's signature.
``tests/dashboard/test_shipped_grid.py`` fails when a metric's signature changes, asking to re-run this.
A metric that cannot be loaded or fails is listed under ``skipped`` with its reason.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import pandas as pd

from muttlab import __version__, api
from muttlab.dashboard import shipped
from muttlab.engine import sources
from muttlab.errors import MuttlabError

# Learned metrics depend on checkpoints that change with training; the grid ships the study's metrics.
LEARNED = ("ReVal-LSTM", "ReVal-TreeLSTM", "ML-METEOR", "DREEM", "ML-DREEM")


def experiment_files(settings) -> dict[str, str]:
    """sha256 of every MUTT experiment file the suite reads, by path relative to the data dir."""
    out = {}
    for name in sources.MUTT_SETS:
        for suffix in ("a", "b", f"r{max(sources.MUTT_REF_COUNTS)}"):
            relative = f"mutt/experiments/{name}_{suffix}.json"
            out[relative] = shipped.sha256_file(sources.data_file(settings, relative))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metrics", help="comma-separated metric names (default: every available non-learned one)")
    parser.add_argument("--output", default=None, help="where to write (default: the package's data/results/grid.json)")
    parser.add_argument("--merge", action="store_true", help="keep the other metrics already in the output file")
    args = parser.parse_args(argv)

    settings = api.load_settings()
    if settings.data_dir is None:
        print("precompute_grid: set MUTTLAB_DATA_DIR to the folder holding mutt/experiments", file=sys.stderr)
        return 2
    output = shipped.grid_path() if args.output is None else __import__("pathlib").Path(args.output)
    registry = api.registry_for(settings)
    catalogue = api.metric_catalogue(settings, registry)
    if args.metrics:
        names = [m.strip() for m in args.metrics.split(",") if m.strip()]
    else:
        names = [i.name for i in catalogue if i.available and i.name not in LEARNED]
    skipped = {i.name: i.reason for i in catalogue if not i.available and (not args.metrics or i.name in names)}
    names = [n for n in names if n not in skipped]
    suite = api.load_suite(settings, "mutt")
    files = experiment_files(settings)

    frames, signatures = [], {}
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
            print(f"  {name}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    finally:
        registry.close()

    if args.merge and output.is_file():
        old = shipped.load(output)
        keep = old.cells[~old.cells["metric"].isin(signatures)]
        frames.insert(0, keep)
        signatures = {**{m: s for m, s in old.signatures.items() if m not in signatures}, **signatures}
        skipped = {**{m: r for m, r in old.skipped.items() if m not in signatures}, **skipped}
    if not frames:
        print("precompute_grid: no metric could be scored", file=sys.stderr)
        return 1
    accuracy = pd.concat(frames, ignore_index=True)
    document = shipped.build(accuracy, signatures, suite.name, files, __version__, settings.tolerance, skipped)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {output}: {len(signatures)} metrics, {len(document['cells'])} cells", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

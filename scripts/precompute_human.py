"""Write ``data/results/human.json``: the Human judgments and Correlation studies pages' results, as they
show them on a server without the datasets (and on a fresh one before anything is scored).

Usage (from the repository root, with the real data)::

    MUTTLAB_DATA_DIR=/path/to/data .venv/bin/python scripts/precompute_human.py

It runs, with the models the package ships: the SICK inconsistency study (MUTT §5) for every SICK-derived
corruption type in both readings with the study's metrics and every correlation method; the Flickr8K-Expert
and CrowdFlower Kendall τ of the page's default metrics; the ΔBLEU unit study with the page's default
settings and its sweeps. Only derived numbers are written (see :mod:`muttlab.snapshots.human`), as a snapshot
stamped with the sha256 of the data files and the studies' code and every metric's signature;
``tests/snapshots/test_shipped_human.py`` fails when that stamp is no longer current, asking to re-run this.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from muttlab import __version__, api, snapshots, stats
from muttlab.human import dbleu, flickr, sick
from muttlab.snapshots import human as shipped_human

KIND = snapshots.KINDS["human"]


def _log(done: int, total: int, message: str) -> None:
    print(f"  {message} ({done}/{total})", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", default=None, help="where to write (default: the package's data/results/human.json)")
    args = parser.parse_args(argv)

    # No model folder, as a read-only server has: the numbers of the models the package ships.
    settings = replace(api.load_settings(), read_only=True)
    if settings.data_dir is None:
        print("precompute_human: set MUTTLAB_DATA_DIR to the folder holding sick/, flickr8k/ and mutt/",
              file=sys.stderr)
        return 2
    output = snapshots.path_of(KIND) if args.output is None else Path(args.output)
    defaults = shipped_human.DEFAULTS
    registry = api.registry_for(settings)
    start = time.perf_counter()
    try:
        parts, scored = [], set()
        for corruption in sick.SICK_CORRUPTIONS:
            for reading in sick.READINGS:
                print(f"SICK {corruption}, {reading} reading", file=sys.stderr)
                # Each method re-reads the scores from the score cache the first call filled.
                studies = {method: sick.sick_study(settings, corruption, list(sick.STUDY_METRICS), method=method,
                                                   reading=reading, registry=registry, progress=_log)
                           for method in stats.METHODS}
                first = studies[stats.METHODS[0]]
                parts.append(shipped_human.sick_numbers(first, {m: s.correlations for m, s in studies.items()}))
                scored.update(first.metrics)
        print("Flickr8K", file=sys.stderr)
        flickr_study = flickr.flickr_correlations(settings, list(defaults.flickr_metrics),
                                                  datasets=flickr.DATASETS, n_boot=defaults.flickr_boot,
                                                  registry=registry, progress=_log)
        scored.update(flickr_study.table["metric"])
        print("ΔBLEU units", file=sys.stderr)
        unit = defaults.units
        units = dbleu.unit_study(dbleu.flickr_expert_set(settings), unit_size=unit["unit"], order=unit["order"],
                                 threshold=unit["threshold"], assignments=unit["assignments"], seed=settings.seed,
                                 sweeps=unit["sweeps"],
                                 sweep_assignments=min(unit["assignments"], dbleu.DEFAULT_SWEEP_ASSIGNMENTS))
        stamp = snapshots.current_stamp(KIND, settings, {m: registry.info(m).signature for m in sorted(scored)})
    finally:
        registry.close()
    content = shipped_human.from_studies(parts, flickr_study, units, dict(unit, seed=settings.seed))
    snapshots.write(KIND, content, stamp, __version__, output)
    print(f"wrote {output}: {len(parts)} SICK studies, {len(flickr_study.table)} Flickr8K correlations, "
          f"{len(units.main) + len(units.sweeps)} unit-study rows ({time.perf_counter() - start:.0f} s)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

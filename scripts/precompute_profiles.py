"""Write ``data/results/profiles.json`` (the ``profiles`` snapshot): the robustness profiles of the default metrics
(``muttlab.snapshots.profiles.SHIPPED``), each with every trial's outcome, under the default rules.

Usage (from the repository root, with the real data; after ``scripts/precompute_meta_eval.py``, whose shipped
meta-evaluation the profiles' MQM sections are taken from)::

    MUTTLAB_DATA_DIR=/path/to/data .venv/bin/python scripts/precompute_profiles.py [--metrics chrF,TER]

Each profile is :func:`muttlab.api.profile` with ``with_trials=True`` on a read-only server's settings (the models
the package ships). DEMETR's 35 files take a while per metric on a cold score cache (METEOR-1.5 about three
minutes on two shared cores); the stamp names the data files, the code, every metric's signature and the rules.
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

from muttlab import __version__, api
from muttlab.resources.bundled import data_dir
from muttlab.settings import Settings
from muttlab.snapshots import KINDS, current_stamp, write
from muttlab.snapshots.profiles import SHIPPED, Profiles


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-dir", default=None, help="where to write (default: the package's data/results)")
    parser.add_argument("--metrics", default=",".join(SHIPPED), help="comma-separated metrics (default: %(default)s)")
    args = parser.parse_args(argv)
    loaded = api.load_settings()
    if loaded.data_dir is None:
        print("precompute_profiles: set MUTTLAB_DATA_DIR to the datasets folder", file=sys.stderr)
        return 2
    # The default rules, whatever this shell's MUTTLAB_TIE_RULE says: what ships is judged as a fresh server judges.
    settings = replace(Settings(data_dir=loaded.data_dir, cache_dir=loaded.cache_dir), read_only=True)
    folder = Path(args.output_dir) if args.output_dir else data_dir() / "results"
    kind = KINDS["profiles"]
    profiles, start = {}, time.perf_counter()
    registry = api.registry_for(settings)
    try:
        for metric in [m.strip() for m in args.metrics.split(",") if m.strip()]:
            began = time.perf_counter()
            profiles[metric] = api.profile(settings, metric, registry=registry, with_trials=True,
                                           progress=lambda done, total, message: print(f"  {metric}: {message}",
                                                                                       file=sys.stderr))
            print(f"{metric}: {time.perf_counter() - began:.0f} s", file=sys.stderr)
    finally:
        registry.close()
    signatures = {m: p.signature for m, p in profiles.items()}
    folder.mkdir(parents=True, exist_ok=True)
    written = write(kind, Profiles(profiles), current_stamp(kind, settings, signatures), __version__,
                    folder / kind.file)
    print(f"wrote {written} ({time.perf_counter() - start:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

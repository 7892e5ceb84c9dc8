"""The Drill-down's first paint of a comparison of two metrics (McNemar), in a fresh process, as a visitor's
session gets it: the page opened on a cell, then the other metric chosen.

Under Streamlit's AppTest (the page script on the server, no browser) it prints, in seconds: the cell's page
(``open``), the rerun that draws the comparison (``compare``), and a second session opening the same view with
``vs=`` in its link (``link``). ``--profile`` instead profiles the work behind ``compare`` without Streamlit's
page (``services.paired_comparison`` after the cell's own ``services.cell_trials``) and prints the costliest
calls. Run it once with
an empty cache dir (cold score cache) and again with the same one (warm); with another installation's Python
(``../main/.venv/bin/python benchmarks/bench_compare.py``) it measures that installation's code.

    .venv/bin/python benchmarks/bench_compare.py --data-dir ../shared/data --cache-dir $(mktemp -d) --profile
"""
from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import time

CELL = {"metric": "BLEU-4", "corruption": "det_sub", "refs": "5"}
OTHER = "ROUGE-L"


def _open(app, query: dict):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(app), default_timeout=600)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    return at.switch_page("views/drilldown.py").run()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--cache-dir", required=True)
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    os.environ.update(MUTTLAB_DATA_DIR=args.data_dir, MUTTLAB_CACHE_DIR=args.cache_dir, MUTTLAB_WORKERS="1")
    from muttlab.resources.bundled import dashboard_dir

    if args.profile:
        _profile()
        return
    app = dashboard_dir() / "app.py"
    start = time.perf_counter()
    at = _open(app, CELL)
    opened = time.perf_counter()
    at.selectbox(key="dd-vs").set_value(OTHER).run()
    compared = time.perf_counter()
    shown = {m.label: m.value for m in at.metric}
    assert "McNemar p" in shown, [e.value for e in at.exception] + [e.value for e in at.error]
    linked = _open(app, {**CELL, "vs": OTHER})
    done = time.perf_counter()
    assert "McNemar p" in {m.label for m in linked.metric}
    print(f"open {opened - start:.2f}  compare {compared - opened:.2f}  link {done - compared:.2f}  "
          f"(McNemar p {shown['McNemar p']})")


def _profile() -> None:
    """The comparison's work after the cell's own (what the rerun adds), profiled in this process."""
    from muttlab.dashboard import services

    settings = services.settings()
    start = time.perf_counter()
    services.cell_trials(settings, CELL["metric"], CELL["corruption"], int(CELL["refs"]))
    cell = time.perf_counter()
    profile = cProfile.Profile()
    profile.enable()
    services.paired_comparison(settings, CELL["metric"], OTHER, CELL["corruption"], int(CELL["refs"]))
    profile.disable()
    print(f"cell {cell - start:.2f}  comparison {time.perf_counter() - cell:.2f}")
    pstats.Stats(profile).sort_stats("cumulative").print_stats(20)


if __name__ == "__main__":
    main()

"""Benchmark: what the Meta-evaluation page sends for its scatter of pairs, in one process, as ratios.

For each TED pair and metric: the item-grouped pairs (:func:`muttlab.api.meta_pairs`), then the page's figure
(:func:`muttlab.dashboard.charts.meta_scatter`: each point's hover names its segment only) built and written as
the JSON Streamlit sends, against a baseline figure of the same points whose hovers also write each pair's two
systems and both Δ with :func:`muttlab.dashboard.number_format.fmt_score` (the figure the page first had):
seconds to build and serialise, and megabytes of JSON.

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_meta_page.py [--metrics chrF,BLEU-4]
"""
from __future__ import annotations

import argparse
import sys
import time

import plotly.graph_objects as go
import plotly.io as pio

from muttlab import api
from muttlab.dashboard import charts
from muttlab.dashboard.number_format import fmt_score

from bench_profile import timed  # the best of three, as the profile's benchmark times (benchmarks/ is on the path)


def with_full_hovers(pairs, metric: str, human: str) -> go.Figure:
    """The baseline: the page's figure with every pair's systems and numbers in its hover."""
    figure = charts.meta_scatter(pairs, metric, human)
    for trace, right in zip(figure.data, (True, False)):
        part = pairs[pairs["right"].to_numpy(bool) == right]
        trace.hovertext = [charts.text(f"segment {i}: {a} vs {b}") + "<br>" + charts.text(f"Δ{human} {fmt_score(h)}")
                           + "<br>" + charts.text(f"Δ{metric} {fmt_score(m)}")
                           for i, a, b, h, m in zip(part["item"], part["system_a"], part["system_b"],
                                                    part["delta_human"], part["delta_metric"])]
    return figure


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--metrics", default="chrF,BLEU-4")
    args = parser.parse_args()
    print(f"{'pair':6} {'metric':8} {'pairs':>7} {'meta_pairs s':>12} {'page s':>7} {'page MB':>8} "
          f"{'full s':>7} {'full MB':>8} {'time ratio':>10} {'size ratio':>10}")
    for pair in ("en-de", "zh-en"):
        result = api.shipped_meta_evaluation(pair, with_scores=True)
        for metric in args.metrics.split(","):
            seconds, pairs = timed(lambda: api.meta_pairs(result, metric))
            page_s, page = timed(lambda: pio.to_json(charts.meta_scatter(pairs, metric, result.human), validate=False))
            full_s, full = timed(lambda: pio.to_json(with_full_hovers(pairs, metric, result.human), validate=False))
            print(f"{pair:6} {metric:8} {len(pairs):>7,} {seconds:>12.3f} {page_s:>7.2f} {len(page) / 1e6:>8.2f} "
                  f"{full_s:>7.2f} {len(full) / 1e6:>8.2f} {full_s / page_s:>9.1f}x {len(full) / len(page):>9.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

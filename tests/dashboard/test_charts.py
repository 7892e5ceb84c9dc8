"""Figures from result frames, without Streamlit."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from muttlab.dashboard import charts
from muttlab.engine.accuracy import accuracy_table

# A hand-made runner table: BLEU-4 passes 3 of 4 neg_subj trials at 5 refs and 4 of 4 at 10; ROUGE-L
# passes 1 of 4 and 2 of 4; nothing is scored for ROUGE-L on passive.
ROWS = [("BLEU-4", "neg_subj", 5, [1, 1, 1, 0]), ("BLEU-4", "neg_subj", 10, [1, 1, 1, 1]),
        ("ROUGE-L", "neg_subj", 5, [1, 0, 0, 0]), ("ROUGE-L", "neg_subj", 10, [1, 1, 0, 0]),
        ("BLEU-4", "passive", 5, [0, 0, 1, 1]), ("BLEU-4", "passive", 10, [0, 0, 0, 1])]


def _results() -> pd.DataFrame:
    frames = []
    for metric, corruption, refs, ok in ROWS:
        frames.append(pd.DataFrame({"trial": [f"{corruption}/{i}" for i in range(4)], "corruption": corruption,
                                    "metric": metric, "refs": refs, "passed": np.array(ok, dtype=bool)}))
    return pd.concat(frames, ignore_index=True)


def test_heatmap_has_one_panel_per_ref_count_with_the_accuracies():
    acc = accuracy_table(_results())
    fig = charts.accuracy_heatmap(acc, {"neg_subj": "Negated Subject", "passive": "Active-to-Passive"})
    heatmaps = [t for t in fig.data if isinstance(t, go.Heatmap)]
    assert len(heatmaps) == 2
    five, ten = heatmaps
    assert list(five.x) == ["Negated Subject", "Active-to-Passive"]
    assert list(five.y) == ["BLEU-4", "ROUGE-L"]
    assert np.asarray(five.z)[0].tolist() == [75.0, 50.0]
    assert np.asarray(ten.z)[0].tolist() == [100.0, 25.0]
    assert np.isnan(np.asarray(five.z)[1][1])  # ROUGE-L x passive was not run
    assert (five.zmin, five.zmax) == (0, 100)
    assert [a.text for a in fig.layout.annotations] == ["5 references", "10 references"]


def test_heatmap_points_name_their_cell_and_show_counts_and_interval():
    acc = accuracy_table(_results())
    fig = charts.accuracy_heatmap(acc)
    points = [t for t in fig.data if isinstance(t, go.Scatter)]
    assert len(points) == 2
    custom = [list(c) for c in points[0].customdata]
    assert ["BLEU-4", "neg_subj", 5] in custom and ["ROUGE-L", "passive", 5] not in custom
    hover = points[0].text[custom.index(["BLEU-4", "neg_subj", 5])]
    low, high = acc.loc[(acc["metric"] == "BLEU-4") & (acc["corruption"] == "neg_subj") & (acc["refs"] == 5),
                        ["ci_low", "ci_high"]].iloc[0]
    assert "(3/4)" in hover and f"{low:.1f}–{high:.1f}%" in hover


def test_margin_histogram_splits_passes_and_fails():
    margins = [-0.2, -0.1] + [0.01 * i for i in range(1, 49)]
    cell = pd.DataFrame({"margin": margins, "passed": [m > 0 for m in margins]})
    fig = charts.margin_histogram(cell)
    assert [t.name for t in fig.data] == ["fails (2)", "passes (48)"]
    assert len(fig.data[0].x) == 2 and len(fig.data[1].x) == 48
    assert "beyond the axis" not in fig.layout.xaxis.title.text


def test_margin_histogram_keeps_outliers_from_flattening_the_axis():
    # A difference-rule margin over a near-zero original score: tolerance - |delta| / 1e-9.
    margins = [0.15 - 0.5 / 1e-9] + [0.01 * i for i in range(1, 100)]
    cell = pd.DataFrame({"margin": margins, "passed": [m >= 0 for m in margins]})
    fig = charts.margin_histogram(cell)
    assert -10 < min(fig.data[0].x) < 0  # clipped into the edge bin, not at -5e8
    assert "1 beyond the axis" in fig.layout.xaxis.title.text


def test_correlation_heatmap_is_fixed_to_minus_one_one():
    matrix = pd.DataFrame([[1.0, 0.3], [0.3, 1.0]], index=["gold", "METEOR-1.5"], columns=["gold", "METEOR-1.5"])
    fig = charts.correlation_heatmap(matrix, "spearman")
    assert (fig.data[0].zmin, fig.data[0].zmax) == (-1, 1)
    assert np.asarray(fig.data[0].z).tolist() == [[1.0, 0.3], [0.3, 1.0]]


def test_download_config_names_the_png():
    config = charts.download_config("mutt accuracy")
    assert config["toImageButtonOptions"] == {"format": "png", "filename": "mutt accuracy", "scale": 2}


def test_figures_export_to_html():
    fig = charts.accuracy_heatmap(accuracy_table(_results()))
    html = fig.to_html(include_plotlyjs="cdn")
    assert "plotly" in html and "BLEU-4" in html


def test_a_large_grid_stacks_its_panels():
    rows = [(m, f"type{c}", k, [1, 0, 1, 1]) for m in ("BLEU-4", "ROUGE-L") for c in range(10) for k in (5, 10, 20)]
    frames = [pd.DataFrame({"trial": [f"{c}/{i}" for i in range(4)], "corruption": c, "metric": m, "refs": k,
                            "passed": np.array(ok, dtype=bool)}) for m, c, k, ok in rows]
    fig = charts.accuracy_heatmap(accuracy_table(pd.concat(frames, ignore_index=True)))
    # 10 corruptions x 3 counts: one full-width panel per count, one above the other.
    assert fig.layout.xaxis.domain == fig.layout.xaxis3.domain
    assert fig.layout.yaxis.domain[0] > fig.layout.yaxis3.domain[1]
    small = charts.accuracy_heatmap(accuracy_table(_results()))
    assert small.layout.yaxis.domain == small.layout.yaxis2.domain  # two small panels side by side


def test_loss_curve_draws_one_line_per_seed_and_never_the_seed_itself():
    import pandas as pd

    from muttlab.dashboard.charts import loss_curve
    history = pd.DataFrame({"seed": [1, 1, 2, 2], "epoch": [1, 2, 1, 2], "train_loss": [0.9, 0.7, 0.8, 0.6],
                            "dev_pearson": [0.5, 0.6, 0.55, 0.65]})
    names = [trace.name for trace in loss_curve(history).data]
    assert names == ["train_loss (seed 1)", "dev_pearson (seed 1)", "train_loss (seed 2)", "dev_pearson (seed 2)"]
    assert list(loss_curve(history).data[2].y) == [0.8, 0.6]

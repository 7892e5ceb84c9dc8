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


# Dichromat simulation (Viénot, Brettel & Mollon 1999) in linear sRGB: protanopia and deuteranopia, the two
# red-green colour blindnesses.
DICHROMATS = {"protanopia": np.array([[0.11238, 0.88762, 0.0], [0.11238, 0.88762, 0.0], [0.00401, -0.00401, 1.0]]),
              "deuteranopia": np.array([[0.29275, 0.70725, 0.0], [0.29275, 0.70725, 0.0],
                                        [-0.02234, 0.02234, 1.0]])}


def _lab(rgb: np.ndarray) -> np.ndarray:
    """CIELAB (D65) of a linear sRGB colour."""
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ rgb
    t = xyz / np.array([0.95047, 1.0, 1.08883])
    f = np.where(t > (6 / 29) ** 3, np.cbrt(t), t / (3 * (6 / 29) ** 2) + 4 / 29)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _linear(colour: str) -> np.ndarray:
    if colour.startswith("#"):
        values = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    else:  # "rgb(r, g, b)", as plotly samples a scale
        values = [float(v) for v in colour[colour.index("(") + 1:-1].split(",")]
    srgb = np.array(values) / 255.0
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def _seen_apart(a: str, b: str) -> float:
    """The smallest CIELAB distance between two colours as seen with normal vision and by each dichromat."""
    pairs = [(_linear(a), _linear(b))]
    pairs += [(m @ _linear(a), m @ _linear(b)) for m in DICHROMATS.values()]
    return min(float(np.linalg.norm(_lab(x) - _lab(y))) for x, y in pairs)


def _scale_ends(scale: str) -> tuple[str, str]:
    from plotly.colors import sample_colorscale
    low, high = sample_colorscale(scale, [0.0, 1.0])
    return low, high


def test_the_grid_scale_and_the_verdict_colours_are_told_apart_by_red_green_colour_blind_readers():
    assert _seen_apart(*_scale_ends(charts.ACCURACY_SCALE)) > 30
    assert _seen_apart(charts.PASS_COLOUR, charts.FAIL_COLOUR) > 30
    # The check can fail: a red-yellow-green grid's ends look alike to a deuteranope.
    assert _seen_apart(*_scale_ends("RdYlGn")) < 20


def test_every_chart_draws_passes_fails_and_lines_in_the_colour_blind_safe_palette():
    cell = pd.DataFrame({"margin": [-0.2, 0.1, 0.3, 0.5], "passed": [False, True, True, True]})
    histogram = charts.margin_histogram(cell)
    assert {t.name.split(" ")[0]: t.marker.color for t in histogram.data} == \
        {"fails": charts.FAIL_COLOUR, "passes": charts.PASS_COLOUR}
    curve = pd.DataFrame({"metric": ["BLEU-4"] * 2 + ["ROUGE-L"] * 2, "strength": [1, 2, 1, 2],
                          "pass_rate": [90.0, 80.0, 70.0, 75.0], "mean_drop": [0.1, 0.2, 0.1, 0.05],
                          "monotone": ["yes", "yes", "no", "no"]})
    lines = charts.severity_curves(curve, "Typo")
    assert {t.line.color for t in lines.data} <= set(charts.OKABE_ITO)
    bars = charts.correlation_bars(pd.DataFrame({"metric": ["BLEU-4", "METEOR"], "tau": [0.3, 0.4]}), "tau")
    assert list(bars.layout.colorway) == charts.OKABE_ITO

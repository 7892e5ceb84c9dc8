"""The plotly figures built from result frames, without Streamlit: each figure's data against the numbers it is
built from (an accuracy table the engine computes from a hand-made runner table, margins and curves written
here), its hovers against the formatters the tables use, and its colours."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from muttlab.dashboard import charts
from muttlab.dashboard.number_format import cell_lines
from muttlab.engine.accuracy import accuracy_table
from tests.dashboard.conftest import read_as_plotly_shows

# A hand-made runner table: BLEU-4 passes 3 of 4 neg_subj trials at 5 refs and 4 of 4 at 10; ROUGE-L
# passes 1 of 4 and 2 of 4; nothing is scored for ROUGE-L on passive.
ROWS = [("BLEU-4", "neg_subj", 5, [1, 1, 1, 0]), ("BLEU-4", "neg_subj", 10, [1, 1, 1, 1]),
        ("ROUGE-L", "neg_subj", 5, [1, 0, 0, 0]), ("ROUGE-L", "neg_subj", 10, [1, 1, 0, 0]),
        ("BLEU-4", "passive", 5, [0, 0, 1, 1]), ("BLEU-4", "passive", 10, [0, 0, 0, 1])]


def _results() -> pd.DataFrame:
    """The runner's tidy table of :data:`ROWS`; the first failing trial of each cell is a tie."""
    frames = []
    for metric, corruption, refs, ok in ROWS:
        tied = np.zeros(4, dtype=bool)
        if 0 in ok:
            tied[ok.index(0)] = True
        frames.append(pd.DataFrame({"trial": [f"{corruption}/{i}" for i in range(4)], "corruption": corruption,
                                    "metric": metric, "refs": refs, "passed": np.array(ok, dtype=bool),
                                    "tied": tied}))
    return pd.concat(frames, ignore_index=True)


def _cells(figure) -> dict[tuple[str, str, str], float]:
    """(metric, corruption label, panel title) -> the accuracy a heatmap cell is coloured by; None when empty."""
    titles = [a.text for a in figure.layout.annotations]
    out = {}
    for trace, title in zip(figure.data, titles):
        for y, row in zip(trace.y, trace.z):
            for x, z in zip(trace.x, row):
                out[(y, x, title)] = z
    return out


def test_the_heatmap_has_one_panel_per_ref_count_with_the_accuracies():
    acc = accuracy_table(_results())
    figure = charts.accuracy_heatmap(acc, {"neg_subj": "Negated Subject", "passive": "Active-to-Passive"})
    assert [a.text for a in figure.layout.annotations] == ["5 references", "10 references"]
    assert _cells(figure) == {("BLEU-4", "Negated Subject", "5 references"): 75.0,
                              ("BLEU-4", "Active-to-Passive", "5 references"): 50.0,
                              ("ROUGE-L", "Negated Subject", "5 references"): 25.0,
                              ("ROUGE-L", "Active-to-Passive", "5 references"): None,  # not run
                              ("BLEU-4", "Negated Subject", "10 references"): 100.0,
                              ("BLEU-4", "Active-to-Passive", "10 references"): 25.0,
                              ("ROUGE-L", "Negated Subject", "10 references"): 50.0,
                              ("ROUGE-L", "Active-to-Passive", "10 references"): None}
    for trace in figure.data:  # one fixed scale, 0-100 %, so colours compare across runs
        assert (trace.zmin, trace.zmax) == (0.0, 100.0)
        assert [c for _, c in trace.colorscale] == [c.lower() for c in charts.ACCURACY_SCALE]
        assert list(trace.x) == ["Negated Subject", "Active-to-Passive"]
    # The cell's label is the whole percentage the grid prints.
    assert [list(r) for r in figure.data[0].text] == [["75", "50"], ["25", ""]]


def test_a_heatmap_cell_hovers_what_the_grid_tooltip_says():
    acc = accuracy_table(_results())
    figure = charts.accuracy_heatmap(acc)
    row = acc[(acc["metric"] == "BLEU-4") & (acc["corruption"] == "passive") & (acc["refs"] == 5)].iloc[0]
    hover = read_as_plotly_shows(figure.data[0].hovertext[0][1])
    assert hover.split("\n") == cell_lines(row, "BLEU-4", "passive", 5)
    # 1 of 4 trials ties (tie_rate 25.0, already a percentage): the hover says 25.0%, as the CSV.
    assert row["tie_rate"] == 25.0 and "ties 25.0%" in hover
    assert hover.startswith("BLEU-4 · passive · 5 refs\naccuracy 50.0% (2/4)\n95% CI ")


def test_a_tie_rate_under_one_percent_is_not_multiplied_again():
    """METEOR-1.5 x Active-to-Passive x 5 refs on the MUTT sets: 2 ties in 214 trials, tie_rate 0.9346 (percent,
    engine.accuracy.accuracy_cells); the tooltips said "ties 93.5%"."""
    row = pd.Series({"accuracy": 43.925, "passed": 94, "n": 214, "ci_low": 37.4, "ci_high": 50.6,
                     "tie_rate": 100.0 * 2 / 214})
    assert cell_lines(row, "METEOR-1.5", "Active-to-Passive", 5)[-1] == "ties 0.9%"


def test_the_margin_histogram_splits_passes_and_fails():
    margins = [-0.2, -0.1] + [0.01 * i for i in range(1, 49)]
    cell = pd.DataFrame({"margin": margins, "passed": [m > 0 for m in margins]})
    figure = charts.margin_histogram(cell)
    fails, passes = figure.data
    assert (fails.name, passes.name) == ("fails (2)", "passes (48)")
    assert int(np.sum(fails.y)) == 2 and int(np.sum(passes.y)) == 48
    half = fails.width / 2
    assert all(x + half <= 1e-12 for x, n in zip(fails.x, fails.y) if n)  # every fail's bin lies left of 0
    assert "beyond the axis" not in figure.layout.xaxis.title.text
    assert (fails.marker.color, passes.marker.color) == (charts.FAIL_COLOUR, charts.PASS_COLOUR)
    assert figure.layout.barmode == "stack"


def test_the_margin_histogram_keeps_outliers_from_flattening_the_axis():
    # A difference-rule margin over a near-zero original score: tolerance - |delta| / 1e-9.
    margins = [0.15 - 0.5 / 1e-9] + [0.01 * i for i in range(1, 100)]
    cell = pd.DataFrame({"margin": margins, "passed": [m >= 0 for m in margins]})
    figure = charts.margin_histogram(cell)
    fails, passes = figure.data
    low, high = figure.layout.xaxis.range
    assert -10 < low < 0 and high < 2  # not at -5e8
    drawn = [x for x, n in zip(fails.x, fails.y) if n]
    assert len(drawn) == 1 and drawn[0] - fails.width / 2 == pytest.approx(low)  # clipped into the edge bin
    assert "1 beyond the axis" in figure.layout.xaxis.title.text
    assert (fails.name, passes.name) == ("fails (1)", "passes (99)")
    # Each bar hovers its bin and both counts in it, its edges written as the cards write margins.
    first = read_as_plotly_shows(fails.hovertext[0])
    assert first.startswith("margin ") and first.endswith(": 1 fails, 0 passes")


def test_the_correlation_heatmap_is_fixed_to_minus_one_one():
    matrix = pd.DataFrame([[1.0, 0.3], [0.3, 1.0]], index=["gold", "METEOR-1.5"], columns=["gold", "METEOR-1.5"])
    figure = charts.correlation_heatmap(matrix, "Spearman ρ")
    trace = figure.data[0]
    assert (trace.zmin, trace.zmax) == (-1.0, 1.0)
    assert {(y, x): z for y, row in zip(trace.y, trace.z) for x, z in zip(trace.x, row)} == {
        ("gold", "gold"): 1.0, ("gold", "METEOR-1.5"): 0.3, ("METEOR-1.5", "gold"): 0.3,
        ("METEOR-1.5", "METEOR-1.5"): 1.0}
    assert [list(r) for r in trace.text] == [["1.000", "0.300"], ["0.300", "1.000"]]
    assert read_as_plotly_shows(trace.hovertext[1][0]) == "METEOR-1.5 × gold: Spearman ρ = 0.300"


def test_a_chart_download_draws_offline():
    page = charts.offline_html(charts.accuracy_heatmap(accuracy_table(_results())), "grid")
    assert "Plotly.newPlot(" in page and 'id="mutt-chart-0"' in page and "BLEU-4" in page
    assert "<script src=" not in page and len(page) > 3_000_000  # plotly.js (4.7 MB) inlined


def test_a_report_inlines_plotly_once_for_all_its_figures():
    cell = pd.DataFrame({"margin": [-0.2, 0.1, 0.3], "passed": [False, True, True]})
    two = charts.embed_html([charts.margin_histogram(cell), charts.margin_histogram(cell)])
    one = charts.embed_html([charts.margin_histogram(cell)])
    assert two.count("Plotly.newPlot(") == 2 and len(two) - len(one) < 100_000


def test_a_large_grid_stacks_its_panels():
    rows = [(m, f"type{c}", k, [1, 0, 1, 1]) for m in ("BLEU-4", "ROUGE-L") for c in range(10) for k in (5, 10, 20)]
    frames = [pd.DataFrame({"trial": [f"{c}/{i}" for i in range(4)], "corruption": c, "metric": m, "refs": k,
                            "passed": np.array(ok, dtype=bool)}) for m, c, k, ok in rows]
    # 10 corruptions x 3 counts: one panel per count, one above the other; two small panels side by side.
    stacked = charts.accuracy_heatmap(accuracy_table(pd.concat(frames, ignore_index=True)))
    assert [tuple(stacked.layout[f"xaxis{i or ''}"].domain) for i in (0, 2, 3)] == [(0.0, 1.0)] * 3
    side = charts.accuracy_heatmap(accuracy_table(_results()))
    assert side.layout.xaxis.domain[1] < side.layout.xaxis2.domain[0]


def test_the_loss_curve_draws_one_line_per_seed_and_never_the_seed_itself():
    history = pd.DataFrame({"seed": [1, 1, 2, 2], "epoch": [1, 2, 1, 2], "train_loss": [0.9, 0.7, 0.8, 0.6],
                            "dev_pearson": [0.5, 0.6, 0.55, 0.65]})
    figure = charts.loss_curve(history)
    assert [t.name for t in figure.data] == ["train_loss (seed 1)", "dev_pearson (seed 1)", "train_loss (seed 2)",
                                             "dev_pearson (seed 2)"]
    assert list(figure.data[2].y) == [0.8, 0.6] and list(figure.data[2].x) == [1, 2]


def test_the_severity_curves_share_a_legend_entry_across_both_panels():
    curve = pd.DataFrame({"metric": ["BLEU-4"] * 2 + ["ROUGE-L"] * 2, "strength": [1, 2, 1, 2], "n": [30] * 4,
                          "pass_rate": [100.0, 80.0, 70.0, 75.0], "pass_ci_low": [88.6, 62.7, 52.1, 57.7],
                          "pass_ci_high": [100.0, 90.5, 83.3, 88.1], "mean_drop": [0.1, 0.2, 0.1, 0.05],
                          "monotone": ["yes", "yes", "no", "no"]})
    figure = charts.severity_curves(curve, "Typo")
    rates = [t for t in figure.data if t.yaxis == "y"]
    drops = [t for t in figure.data if t.yaxis == "y2"]
    assert [t.name for t in rates] == ["BLEU-4", "ROUGE-L (not monotone)"]
    assert [t.showlegend for t in drops] == [False, False]  # one legend entry hides or isolates both panels
    assert [t.legendgroup for t in rates] == [t.legendgroup for t in drops]
    assert [t.line.dash for t in rates] == ["solid", "dash"]
    assert list(rates[0].y) == [100.0, 80.0] and list(rates[0].error_y.array) == pytest.approx([0.0, 10.5])
    assert list(rates[0].error_y.arrayminus) == pytest.approx([11.4, 17.3])
    low, high = figure.layout.yaxis.range  # 100 % is drawn where it is, with room for its marker
    assert low < 0 and high > 100


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
    else:  # "rgb(r, g, b)", as charts.colours_with_ink writes it
        values = [float(v) for v in colour[colour.index("(") + 1:-1].split(",")]
    srgb = np.array(values) / 255.0
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def _seen_apart(a: str, b: str) -> float:
    """The smallest CIELAB distance between two colours as seen with normal vision and by each dichromat."""
    pairs = [(_linear(a), _linear(b))]
    pairs += [(m @ _linear(a), m @ _linear(b)) for m in DICHROMATS.values()]
    return min(float(np.linalg.norm(_lab(x) - _lab(y))) for x, y in pairs)


def test_the_grid_scale_and_the_verdict_colours_are_told_apart_by_red_green_colour_blind_readers():
    (low, _), (high, _) = charts.colours_with_ink(charts.ACCURACY_SCALE, [0.0, 1.0])
    assert _seen_apart(low, high) > 30
    assert _seen_apart(charts.PASS_COLOUR, charts.FAIL_COLOUR) > 30
    # The check can fail: a red-yellow-green grid's ends (ColorBrewer's RdYlGn) look alike to a deuteranope.
    assert _seen_apart("#a50026", "#006837") < 20


def test_every_chart_draws_its_lines_and_bars_in_the_colour_blind_safe_palette():
    curve = pd.DataFrame({"metric": ["BLEU-4"] * 2 + ["ROUGE-L"] * 2, "strength": [1, 2, 1, 2], "n": [9] * 4,
                          "pass_rate": [90.0, 80.0, 70.0, 75.0], "mean_drop": [0.1, 0.2, 0.1, 0.05],
                          "monotone": ["yes", "yes", "no", "no"]})
    table = pd.DataFrame({"metric": ["BLEU-4", "METEOR", "BLEU-4", "METEOR"], "tau": [0.3, 0.4, 0.2, 0.1],
                          "dataset": ["expert", "expert", "crowd", "crowd"]})
    scores = pd.DataFrame({"metric": ["BLEU-4", "BLEU-4"], "candidate": [0, 1], "score": [0.5, 0.4]})
    figures = [charts.severity_curves(curve, "Typo"), charts.correlation_bars(table, "tau", colour="dataset"),
               charts.sentence_scores(scores, ["sentence", "negated"]),
               charts.loss_curve(pd.DataFrame({"epoch": [1, 2], "train_loss": [0.9, 0.7]}))]
    for figure in figures:
        colours = {t.marker.color for t in figure.data}
        assert colours and colours <= set(charts.OKABE_ITO), colours


def test_the_house_style_reaches_every_panel_and_keeps_the_figures_own_settings():
    acc = accuracy_table(_results())
    figure = charts.accuracy_heatmap(acc, {"neg_subj": "Negated Subject", "passive": "Active-to-Passive"})
    layout = figure.to_plotly_json()["layout"]
    axes = sorted(key for key in layout if key[1:5] == "axis")
    assert axes == ["xaxis", "xaxis2", "yaxis", "yaxis2"]
    for key in axes:
        assert {k: layout[key][k] for k in ("gridcolor", "zerolinecolor", "automargin")} == {
            "gridcolor": charts.GRID_LINE, "zerolinecolor": charts.GRID_LINE, "automargin": True}, key
        assert "domain" in layout[key]  # the panels' places, set before the style, are kept
    assert [a["font"] for a in layout["annotations"]] == [{"size": 13}, {"size": 13}]
    assert "layout" not in layout["template"]  # plotly's "none": none of its default template's 7 kB
    assert layout["font"]["family"] == charts.FONT and "title" not in layout
    assert layout["margin"]["t"] == charts.PANEL_TITLE_PX and layout["showlegend"] is False  # a colour bar, no legend

    title = "<b>Changes</b> & 100%"
    verdicts = pd.DataFrame({"metric": ["BLEU-4"], "corruption": ["Typo"], "s_orig": [0.5], "s_corr": [0.4],
                             "passed": [True]})
    layout = charts.change_heatmap(verdicts, title).to_plotly_json()["layout"]
    assert layout["title"]["text"] == charts.text(title) and "<b>" not in layout["title"]["text"]
    assert layout["title"]["font"] == {"size": 15} and layout["showlegend"] is False
    # The figure's own axis settings and the style, merged.
    assert layout["yaxis"]["autorange"] == "reversed" and layout["yaxis"]["gridcolor"] == charts.GRID_LINE
    assert layout["xaxis"]["tickangle"] == -30 and layout["xaxis"]["automargin"] is True

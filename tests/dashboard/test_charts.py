"""Charts (Vega-Lite specs) from result frames, without Streamlit."""
from __future__ import annotations

import numpy as np
import pandas as pd

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


def _values(spec: dict) -> list[dict]:
    """Every data row of a spec (Altair gathers each chart's inline rows under the top level's ``datasets``)."""
    return [row for rows in spec.get("datasets", {}).values() for row in rows]


def _encodings(spec: dict) -> list[dict]:
    out = [spec["encoding"]] if "encoding" in spec else []
    for key in ("layer", "vconcat", "hconcat"):
        for part in spec.get(key, []):
            out += _encodings(part)
    return out + (_encodings(spec["spec"]) if "spec" in spec else [])


def test_heatmap_has_one_panel_per_ref_count_with_the_accuracies():
    acc = accuracy_table(_results())
    spec = charts.spec(charts.accuracy_heatmap(acc, {"neg_subj": "Negated Subject", "passive": "Active-to-Passive"}))
    assert spec["facet"]["column"]["sort"] == ["5 references", "10 references"]
    cells = {(r["metric"], r["type"], r["refs"]): r["accuracy"] for r in _values(spec)}
    assert cells == {("BLEU-4", "Negated Subject", "5 references"): 75.0,
                     ("BLEU-4", "Active-to-Passive", "5 references"): 50.0,
                     ("ROUGE-L", "Negated Subject", "5 references"): 25.0,
                     ("BLEU-4", "Negated Subject", "10 references"): 100.0,
                     ("BLEU-4", "Active-to-Passive", "10 references"): 25.0,
                     ("ROUGE-L", "Negated Subject", "10 references"): 50.0}  # ROUGE-L x passive was not run
    colour = next(e["color"] for e in _encodings(spec) if e.get("color", {}).get("field") == "accuracy")
    assert colour["scale"]["domain"][0] == 0 and colour["scale"]["domain"][-1] == 100
    x = next(e["x"] for e in _encodings(spec) if "x" in e)
    assert x["sort"] == ["Negated Subject", "Active-to-Passive"]


def test_heatmap_cells_show_counts_and_interval_on_hover():
    acc = accuracy_table(_results())
    spec = charts.spec(charts.accuracy_heatmap(acc))
    row = next(r for r in _values(spec)
               if (r["metric"], r["type"], r["refs"]) == ("BLEU-4", "neg_subj", "5 references"))
    low, high = acc.loc[(acc["metric"] == "BLEU-4") & (acc["corruption"] == "neg_subj") & (acc["refs"] == 5),
                        ["ci_low", "ci_high"]].iloc[0]
    assert row["trials"] == "3/4" and row["interval"] == f"{low:.1f}–{high:.1f}%"
    tooltip = next(e["tooltip"] for e in _encodings(spec) if "tooltip" in e)
    assert {t["field"] for t in tooltip} >= {"trials", "interval", "accuracy"}


def _counts(spec: dict) -> dict[str, int]:
    out: dict[str, int] = {}
    for row in _values(spec):
        if "outcome" in row:
            out[row["outcome"]] = out.get(row["outcome"], 0) + row["trials"]
    return out


def _x_title(spec: dict) -> str:
    return next(e["x"]["title"] for e in _encodings(spec) if e.get("x", {}).get("field") == "left")


def test_margin_histogram_splits_passes_and_fails():
    margins = [-0.2, -0.1] + [0.01 * i for i in range(1, 49)]
    cell = pd.DataFrame({"margin": margins, "passed": [m > 0 for m in margins]})
    spec = charts.spec(charts.margin_histogram(cell))
    assert _counts(spec) == {"fails (2)": 2, "passes (48)": 48}
    assert all(row["right"] <= 0 for row in _values(spec) if row.get("outcome") == "fails (2)")
    assert "beyond the axis" not in _x_title(spec)


def test_margin_histogram_keeps_outliers_from_flattening_the_axis():
    # A difference-rule margin over a near-zero original score: tolerance - |delta| / 1e-9.
    margins = [0.15 - 0.5 / 1e-9] + [0.01 * i for i in range(1, 100)]
    cell = pd.DataFrame({"margin": margins, "passed": [m >= 0 for m in margins]})
    spec = charts.spec(charts.margin_histogram(cell))
    fails = [row for row in _values(spec) if row.get("outcome") == "fails (1)"]
    assert len(fails) == 1 and -10 < fails[0]["left"] < 0  # clipped into the edge bin, not at -5e8
    assert "1 beyond the axis" in _x_title(spec)
    assert _counts(spec) == {"fails (1)": 1, "passes (99)": 99}


def test_correlation_heatmap_is_fixed_to_minus_one_one():
    matrix = pd.DataFrame([[1.0, 0.3], [0.3, 1.0]], index=["gold", "METEOR-1.5"], columns=["gold", "METEOR-1.5"])
    spec = charts.spec(charts.correlation_heatmap(matrix, "spearman"))
    colour = next(e["color"] for e in _encodings(spec) if e.get("color", {}).get("field") == "r")
    assert (colour["scale"]["domain"][0], colour["scale"]["domain"][-1]) == (-1, 1)
    assert {(r["y"], r["x"]): r["r"] for r in _values(spec)} == {
        ("gold", "gold"): 1.0, ("gold", "METEOR-1.5"): 0.3, ("METEOR-1.5", "gold"): 0.3,
        ("METEOR-1.5", "METEOR-1.5"): 1.0}


def test_a_chart_download_draws_offline():
    page = charts.offline_html(charts.accuracy_heatmap(accuracy_table(_results())), "grid")
    assert "window.vegaEmbed=" in page and 'vegaEmbed("#mutt-chart-0"' in page and "BLEU-4" in page
    assert "<script src=" not in page


def test_a_large_grid_stacks_its_panels():
    rows = [(m, f"type{c}", k, [1, 0, 1, 1]) for m in ("BLEU-4", "ROUGE-L") for c in range(10) for k in (5, 10, 20)]
    frames = [pd.DataFrame({"trial": [f"{c}/{i}" for i in range(4)], "corruption": c, "metric": m, "refs": k,
                            "passed": np.array(ok, dtype=bool)}) for m, c, k, ok in rows]
    # 10 corruptions x 3 counts: one panel per count, one above the other; two small panels side by side.
    assert "row" in charts.spec(charts.accuracy_heatmap(accuracy_table(pd.concat(frames, ignore_index=True))))["facet"]
    assert "column" in charts.spec(charts.accuracy_heatmap(accuracy_table(_results())))["facet"]


def test_loss_curve_draws_one_line_per_seed_and_never_the_seed_itself():
    history = pd.DataFrame({"seed": [1, 1, 2, 2], "epoch": [1, 2, 1, 2], "train_loss": [0.9, 0.7, 0.8, 0.6],
                            "dev_pearson": [0.5, 0.6, 0.55, 0.65]})
    spec = charts.spec(charts.loss_curve(history))
    colour = next(e["color"] for e in _encodings(spec) if "color" in e)
    assert colour["scale"]["domain"] == ["train_loss (seed 1)", "dev_pearson (seed 1)", "train_loss (seed 2)",
                                         "dev_pearson (seed 2)"]
    assert [r["value"] for r in _values(spec) if r["series"] == "train_loss (seed 2)"] == [0.8, 0.6]


def test_a_page_draws_a_stack_panel_by_panel_each_with_the_charts_data_and_title():
    import vl_convert

    curve = pd.DataFrame({"metric": ["BLEU-4"] * 2, "strength": [1, 2], "pass_rate": [90.0, 80.0],
                          "mean_drop": [0.1, 0.2], "monotone": ["yes", "yes"]})
    figure = charts.severity_curves(curve, "Typo")
    whole, parts = charts.spec(figure), charts.panels(figure)
    assert len(parts) == len(whole["vconcat"]) == 2
    assert all("vconcat" not in part and part["config"] == whole["config"] for part in parts)
    assert parts[0]["title"]["text"] == whole["title"]["text"] and parts[0]["title"]["subtitle"] == "pass rate (%)"
    assert [r["pass_rate"] for r in _values(parts[1])] == [90.0, 80.0]
    for part in parts:  # each compiles and draws its lines from the data it carries
        assert "<path" in vl_convert.vegalite_to_svg({**part, "width": 400})
    single = charts.margin_histogram(pd.DataFrame({"margin": [0.1, -0.1], "passed": [True, False]}))
    assert charts.panels(single) == [charts.spec(single)]


def test_every_chart_spec_compiles_and_draws():
    """Each chart through Vega-Lite's own compiler and Vega's renderer (vl-convert), as a browser would draw it."""
    import vl_convert

    acc = accuracy_table(_results())
    cell = pd.DataFrame({"margin": [-0.2, 0.1, 0.3, 0.5], "passed": [False, True, True, True]})
    joined = pd.DataFrame({"trial": ["a", "b", "c"], "margin": [0.1, -0.2, 0.3], "vs_margin": [0.2, 0.1, -0.1],
                           "passed": [True, False, True], "vs_passed": [True, True, False]})
    figures = [charts.accuracy_heatmap(acc), charts.margin_histogram(cell, "Margins"),
               charts.comparison_chart(pd.DataFrame([[1, 1], [1, 0]], index=["A passes", "A fails"],
                                                    columns=["B passes", "B fails"]), joined, "A", "B"),
               charts.change_heatmap(pd.DataFrame([dict(metric="A", corruption="x", s_orig=0.5, s_corr=0.4,
                                                        passed=True)]))]
    for figure in figures:
        svg = vl_convert.vegalite_to_svg(charts.sized(figure))
        assert svg.startswith("<svg") and "<text" in svg


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
    else:  # "rgb(r, g, b)", as charts.scale_colours writes it
        values = [float(v) for v in colour[colour.index("(") + 1:-1].split(",")]
    srgb = np.array(values) / 255.0
    return np.where(srgb <= 0.04045, srgb / 12.92, ((srgb + 0.055) / 1.055) ** 2.4)


def _seen_apart(a: str, b: str) -> float:
    """The smallest CIELAB distance between two colours as seen with normal vision and by each dichromat."""
    pairs = [(_linear(a), _linear(b))]
    pairs += [(m @ _linear(a), m @ _linear(b)) for m in DICHROMATS.values()]
    return min(float(np.linalg.norm(_lab(x) - _lab(y))) for x, y in pairs)


def test_the_grid_scale_and_the_verdict_colours_are_told_apart_by_red_green_colour_blind_readers():
    low, high = charts.scale_colours(charts.ACCURACY_SCALE, [0.0, 1.0])
    assert _seen_apart(low, high) > 30
    assert _seen_apart(charts.PASS_COLOUR, charts.FAIL_COLOUR) > 30
    # The check can fail: a red-yellow-green grid's ends (ColorBrewer's RdYlGn) look alike to a deuteranope.
    assert _seen_apart("#a50026", "#006837") < 20


def _colour_scale(spec: dict) -> dict:
    return next(e["color"]["scale"] for e in _encodings(spec) if "scale" in e.get("color", {}))


def test_every_chart_draws_passes_fails_and_lines_in_the_colour_blind_safe_palette():
    cell = pd.DataFrame({"margin": [-0.2, 0.1, 0.3, 0.5], "passed": [False, True, True, True]})
    histogram = _colour_scale(charts.spec(charts.margin_histogram(cell)))
    assert dict(zip(histogram["domain"], histogram["range"])) == {"fails (1)": charts.FAIL_COLOUR,
                                                                  "passes (3)": charts.PASS_COLOUR}
    curve = pd.DataFrame({"metric": ["BLEU-4"] * 2 + ["ROUGE-L"] * 2, "strength": [1, 2, 1, 2],
                          "pass_rate": [90.0, 80.0, 70.0, 75.0], "mean_drop": [0.1, 0.2, 0.1, 0.05],
                          "monotone": ["yes", "yes", "no", "no"]})
    lines = _colour_scale(charts.spec(charts.severity_curves(curve, "Typo")))
    assert lines["domain"] == ["BLEU-4", "ROUGE-L (not monotone)"] and set(lines["range"]) <= set(charts.OKABE_ITO)
    bars = charts.correlation_bars(pd.DataFrame({"metric": ["BLEU-4", "METEOR"], "tau": [0.3, 0.4]}), "tau")
    assert set(_colour_scale(charts.spec(bars))["range"]) <= set(charts.OKABE_ITO)

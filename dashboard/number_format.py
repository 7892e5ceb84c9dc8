"""How the dashboard writes a number: one formatter per quantity, called by every place that shows one — the
grid's tooltips, the charts' hovers and cell labels, the trial cards, the pages' tables and numbers, the offline
reports — so that a number reads the same wherever it appears, and as its CSV export rounded. No Streamlit here.

The quantities, as the engine gives them (:func:`muttlab.engine.accuracy.accuracy_cells`):

- **percent**: an accuracy, an interval's end, a tie rate: all already in percent (0-100), one decimal;
- **score**: a metric's score, and a margin (a difference of scores): four decimals, scientific when tiny or huge;
- **relative change** of a score: a percentage of the original, none when the original is near zero;
- **rating**: a human rating (SICK relatedness, 1-5), two decimals;
- **correlation**: Pearson, Spearman, Kendall (and τ × 100 where a study reports it so), three decimals;
- **p value**: three significant digits.
"""
from __future__ import annotations

import math
from typing import Callable, Mapping

import pandas as pd

# Below this size a score is written in scientific notation, and a change relative to it is noise: BLEU-4's
# smoothing gives an original with no 4-gram match 1e-8, so a difference of 6.39e-05 read as +472770.8%.
NEAR_ZERO = 1e-3
DASH = "–"
PERCENT_FORMAT = "%.1f%%"  # printf, for Streamlit's NumberColumn: what percent() writes
SCORE_FORMAT = "%.4f"  # printf: what fmt_score() writes for a score that is not tiny
CORRELATION_FORMAT = "%.3f"  # printf: what correlation_text() writes
# The columns of the engine's tables that hold one of the quantities above, and how each is written.
PERCENT_COLUMNS = ("accuracy", "ci_low", "ci_high", "tie_rate", "pass_rate", "pass_ci_low", "pass_ci_high")
SCORE_COLUMNS = ("s_orig", "s_corr", "margin", "mean_drop", "score")


def _missing(value) -> bool:
    return value is None or value != value


def fmt_score(value: float) -> str:
    """A score (or a margin) for display: four decimals, or scientific notation for tiny (BLEU-4) or huge
    values; "–" for NaN."""
    if _missing(value):
        return DASH
    if value == 0 or NEAR_ZERO <= abs(value) < 1e4:
        return f"{value:.4f}"
    return f"{value:.2e}"


def percent(value: float) -> str:
    """A percentage (an accuracy, an interval's end, a tie rate: the engine gives each in percent) with one
    decimal, "–" for NaN (nothing to count)."""
    return DASH if _missing(value) else f"{float(value):.1f}%"


def round_percent(value: float) -> int:
    """The whole percentage an accuracy cell shows (the grid's number and colour class, the heatmap's label)."""
    return int(f"{float(value):.0f}")


def whole_percent(value: float) -> str:
    """:func:`round_percent` as text, "–" for NaN."""
    return DASH if _missing(value) else str(round_percent(value))


def accuracy_text(passed: int, judged: int) -> str:
    """Passed of judged trials as a percentage, "–" when nothing was judged."""
    return percent(100.0 * passed / judged if judged else float("nan"))


def interval_text(low: float, high: float) -> str:
    """A 95% interval of a percentage: ``94.6–98.8%``."""
    if _missing(low) or _missing(high):
        return DASH
    return f"{float(low):.1f}–{percent(high)}"


def relative_change(s_orig: float, s_corr: float) -> float:
    """(s_corr − s_orig) / |s_orig|, or NaN when the original is near zero (|s_orig| < :data:`NEAR_ZERO`) or
    either score is missing: a change relative to nothing is not a size."""
    if _missing(s_orig) or _missing(s_corr) or not math.isfinite(s_orig) or abs(s_orig) < NEAR_ZERO:
        return float("nan")
    return (s_corr - s_orig) / abs(s_orig)


def change_text(s_orig: float, s_corr: float) -> str:
    """The relative change of a score as a signed whole percentage (``-12%``), or "n/a" over a near-zero
    original (:func:`relative_change`)."""
    change = relative_change(s_orig, s_corr)
    return "n/a" if change != change else f"{100.0 * change:+.0f}%"


def margin_text(s_orig: float, s_corr: float, margin: float) -> str:
    """A margin with the corruption's change relative to the original; over an original that scores 0 or near
    it, the plain difference instead: the Difference rule divides by |s_orig| + 1e-9, so a zero original turns a
    difference of 2.65e-05 into a margin of -2.65e+04, and any change relative to it is noise."""
    if _missing(margin):
        return f"{DASH} (unsupported)"
    if s_orig == 0:
        return f"orig = 0, Δ = {fmt_score(s_corr - s_orig)}"
    change = relative_change(s_orig, s_corr)
    if change != change:
        return f"orig ≈ 0 ({fmt_score(s_orig)}), Δ = {fmt_score(s_corr - s_orig)}"
    if not math.isfinite(margin) or abs(margin) >= 1e6:
        return "too large to show"
    return f"{fmt_score(margin)} (corruption {change:+.1%} vs original)"


def correlation_text(value: float) -> str:
    """A correlation coefficient (or τ × 100) with three decimals, "–" when it is not defined."""
    return DASH if _missing(value) else f"{float(value):.3f}"


def rating_text(value: float) -> str:
    """A human rating (SICK's relatedness 1-5, a mean of ratings): two decimals, "–" when there is none."""
    return DASH if _missing(value) else f"{float(value):.2f}"


def p_value_text(p: float) -> str:
    return f"{p:.3g}"


def count_text(n: int, one: str, many: str) -> str:
    """``1 trial``, ``3 trials``, ``2,217 trials``: the noun agrees with the count."""
    return f"{int(n):,} {one if int(n) == 1 else many}"


def cell_lines(row, metric: str, label: str, refs: int) -> list[str]:
    """What hovering an accuracy cell says, line by line (the grid's tooltip and the heatmap's hover): the cell,
    accuracy with passed/n, the 95% Wilson interval, and the tie rate when the results carry one.

    Args:
      row: a row of ``Results.accuracy()`` or the shipped grid: accuracy, passed, n, ci_low, ci_high (percent),
        optionally tie_rate (percent).
    """
    lines = [f"{metric} · {label} · {int(refs)} refs",
             f"accuracy {percent(row.accuracy)} ({int(row.passed)}/{int(row.n)})",
             f"95% CI {interval_text(row.ci_low, row.ci_high)}"]
    tie_rate = getattr(row, "tie_rate", float("nan"))
    if not _missing(tie_rate):
        lines.append(f"ties {percent(tie_rate)}")
    return lines


def column_formats(columns) -> dict[str, str]:
    """printf formats (Streamlit's ``NumberColumn(format=...)``) for the columns of ``columns`` that hold a
    percentage or a score, as :func:`percent` and :func:`fmt_score` write them."""
    out = {c: PERCENT_FORMAT for c in columns if c in PERCENT_COLUMNS}
    out.update({c: SCORE_FORMAT for c in columns if c in SCORE_COLUMNS})
    return out


def correlation_columns(frame: pd.DataFrame) -> list[str]:
    """The columns of a study's table holding a coefficient or its interval (``tau``, ``rho_low``, ``ci_high``,
    ``r``…): written by :func:`correlation_text`, on the page as in a report."""
    return [c for c in frame.columns if str(c).split("_")[0] in ("tau", "rho", "ci", "r")]


def correlation_formatters(frame: pd.DataFrame) -> Mapping[str, Callable[[object], str]]:
    """:func:`column_formatters` for a study's table: its coefficients and intervals by :func:`correlation_text`."""
    return {c: correlation_text for c in correlation_columns(frame)}


def column_formatters(frame: pd.DataFrame) -> Mapping[str, Callable[[object], str]]:
    """Per column of ``frame`` holding a percentage or a score, its formatter: for an HTML table of the frame
    (``DataFrame.to_html(formatters=...)``), so that a report writes each number as the page does."""
    out: dict[str, Callable[[object], str]] = {c: percent for c in frame.columns if c in PERCENT_COLUMNS}
    out.update({c: fmt_score for c in frame.columns if c in SCORE_COLUMNS})
    return out

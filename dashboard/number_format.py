"""How the dashboard writes a number: the Drill-down page and its offline report call these same functions,
so a view and its report show the same characters. No Streamlit here."""
from __future__ import annotations

import math


def fmt_score(value: float) -> str:
    """A score for display: four decimals, or scientific notation for tiny (BLEU-4) or huge values."""
    if value != value:  # NaN
        return "–"
    if value == 0 or 1e-3 <= abs(value) < 1e4:
        return f"{value:.4f}"
    return f"{value:.2e}"


def margin_text(s_orig: float, s_corr: float, margin: float) -> str:
    """A margin that stays readable when the original scores 0: the Difference rule divides by
    |s_orig| + 1e-9, so a zero original turns a difference of 2.65e-05 into a margin of -2.65e+04; say
    "orig = 0" and the plain difference instead."""
    if margin != margin:
        return "– (unsupported)"
    if s_orig == 0 or not math.isfinite(margin) or abs(margin) >= 1e6:
        return f"orig = 0, Δ = {fmt_score(s_corr - s_orig)}" if s_orig == 0 else "too large to show"
    relative = (s_corr - s_orig) / abs(s_orig)
    return f"{fmt_score(margin)} (corruption {relative:+.1%} vs original)"


def percent(value: float) -> str:
    """A percentage with one decimal, "–" for NaN (nothing to count)."""
    return "–" if value != value else f"{value:.1f}%"


def accuracy_text(passed: int, judged: int) -> str:
    """Passed of judged trials as a percentage, "–" when nothing was judged."""
    return percent(100.0 * passed / judged if judged else float("nan"))


def p_value_text(p: float) -> str:
    return f"{p:.3g}"

"""Two metrics' profiles compared: which phenomena one catches and the other misses, and where the difference
is significant.

Unit tests: the two metrics' outcomes on the same trials, cell by cell, with McNemar's test on the trials both
scored (:func:`muttlab.stats.mcnemar`; exact below 25 discordant trials). A metric *catches* a cell when the
95% Wilson interval of its accuracy there lies above 50 % (it does the right thing more often than not, beyond
chance), *misses* it when the interval lies below 50 %. MQM: both values of each statistic and the
meta-evaluation's own significance test of the two (acc*_eq: swapping pair outcomes, each metric keeping its
ε; the other statistics: permuting scores; :mod:`muttlab.meta.evaluate`), where both were evaluated together.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd

from muttlab.meta.result import MetaEvaluation
from muttlab.profile.result import (COMPARISON_COLUMNS, MQM_COMPARISON_COLUMNS, TRIAL_SECTIONS, Profile,
                                    ProfileComparison)
from muttlab.stats import mcnemar, wilson_interval

CHANCE = 0.5


def reading(passed: int, n: int) -> str:
    """``caught`` when the 95% Wilson interval of passed / n lies above one half, ``missed`` below, else
    ``unclear`` (no trial: ``unclear``)."""
    if not n:
        return "unclear"
    low, high = (float(v) for v in wilson_interval(passed, n))
    return "caught" if low > CHANCE else "missed" if high < CHANCE else "unclear"


def _words(first: str, second: str, a: str, b: str, p: float, alpha: float, a_acc: float, b_acc: float) -> str:
    if a == "caught" and b == "missed":
        head = f"only {first} catches it"
    elif b == "caught" and a == "missed":
        head = f"only {second} catches it"
    elif a == b == "caught":
        head = "both catch it"
    elif a == b == "missed":
        head = "both miss it"
    else:
        head = "not clear for both"
    if p < alpha:
        better = first if a_acc > b_acc else second
        return f"{head}; {better} significantly better (McNemar p = {p:.3g})"
    return f"{head}; no significant difference (McNemar p = {p:.3g})"


def unit_test_cells(first: Profile, second: Profile, alpha: float) -> tuple[pd.DataFrame, list[str]]:
    rows, notes = [], []
    for suite in TRIAL_SECTIONS:
        a, b = first.trials.get(suite), second.trials.get(suite)
        if a is None or b is None:
            missing = [p.metric for p, t in ((first, a), (second, b)) if t is None]
            if suite in first.sections or suite in second.sections:
                notes.append(f"{suite}: no trial-by-trial outcomes of {', '.join(missing)}; not compared")
            continue
        if a.keys != b.keys:
            notes.append(f"{suite}: the two profiles were judged on different trials; not compared")
            continue
        table = first.sections[suite]
        both = a.supported & b.supported
        for i, cell in enumerate(table.itertuples(index=False)):
            mask = both & (a.cell == i)
            n = int(mask.sum())
            pa, pb = a.passed[mask], b.passed[mask]
            test = mcnemar(pa, pb)
            acc_a, acc_b = (100.0 * int(x.sum()) / n if n else math.nan for x in (pa, pb))
            ra, rb = reading(int(pa.sum()), n), reading(int(pb.sum()), n)
            rows.append({"suite": suite, "group": cell.group, "refs": int(getattr(cell, "refs", 0) or 0), "n": n,
                         "first_accuracy": acc_a, "second_accuracy": acc_b, "difference": acc_a - acc_b,
                         "first_only": test.b, "second_only": test.c, "p_value": test.p_value,
                         "significant": bool(test.p_value < alpha), "first": ra, "second": rb,
                         "reading": _words(first.metric, second.metric, ra, rb, test.p_value, alpha, acc_a, acc_b)})
    frame = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)
    return frame.astype({"refs": np.int64, "n": np.int64, "first_only": np.int64, "second_only": np.int64,
                         "first_accuracy": float, "second_accuracy": float, "difference": float,
                         "p_value": float, "significant": bool}), notes


def _p_value(result: MetaEvaluation, statistic: str, first: str, second: str) -> float:
    sig = result.significance.get(statistic)
    if sig is None or first not in sig.ranking or second not in sig.ranking:
        return math.nan
    i, j = sorted((sig.ranking.index(first), sig.ranking.index(second)))
    p = sig.p_values[i][j]
    return math.nan if p is None else float(p)


def mqm_cells(first: Profile, second: Profile, together: dict[str, MetaEvaluation],
              alpha: float) -> tuple[pd.DataFrame, list[str]]:
    rows, notes = [], []
    a, b = first.mqm, second.mqm
    for pair in sorted(set(a["pair"]) & set(b["pair"])):
        result = together.get(pair)
        if result is None:
            notes.append(f"MQM {pair}: the two metrics were not evaluated together; no significance")
        for row in a[a["pair"] == pair].itertuples(index=False):
            other = b[(b["pair"] == pair) & (b["statistic"] == row.statistic)]
            if other.empty:
                continue
            value = float(other["value"].iloc[0])
            p = _p_value(result, row.statistic, first.metric, second.metric) if result is not None else math.nan
            method = result.significance[row.statistic].method if (result is not None and not math.isnan(p)) else ""
            rows.append({"pair": pair, "statistic": row.statistic, "first_value": row.value, "second_value": value,
                         "difference": row.value - value, "p_value": p,
                         "significant": bool(not math.isnan(p) and p < alpha), "method": method})
    for pair, why in {**first.mqm_skipped, **second.mqm_skipped}.items():
        notes.append(f"MQM {pair}: {why}")
    frame = pd.DataFrame(rows, columns=MQM_COMPARISON_COLUMNS)
    return frame.astype({"first_value": float, "second_value": float, "difference": float, "p_value": float,
                         "significant": bool}), notes


def compare_profiles(first: Profile, second: Profile, together: dict[str, MetaEvaluation] | None = None,
                     alpha: float = 0.05) -> ProfileComparison:
    """The comparison of two profiles judged under the same rules (module doc).

    Args:
      together: per TED pair, a meta-evaluation holding both metrics (for the MQM significance), if any.
    """
    cells, notes = unit_test_cells(first, second, alpha)
    mqm, mqm_notes = mqm_cells(first, second, together or {}, alpha)
    if first.rules != second.rules:
        notes.append(f"judged under different rules: {first.metric} {first.rules}, {second.metric} {second.rules}")
    return ProfileComparison(first.metric, second.metric, first.rules, alpha, cells, mqm, notes + mqm_notes,
                             (first, second))

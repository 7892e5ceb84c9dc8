"""Two metrics on the same trials of one drill-down cell: which trials only one of them gets right, and
McNemar's test on those counts (b: only the page's metric, c: only the other). No Streamlit here: the page and
its report build the same comparison from two cells of :mod:`muttlab.dashboard.cell_view`."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from muttlab.dashboard.number_format import p_value_text, percent
from muttlab.api import McNemarResult, mcnemar

# The other metric's columns beside the page's metric's, in Comparison.joined.
OTHER_COLUMNS = ("passed", "unsupported", "margin", "s_orig", "s_corr")


@dataclass(frozen=True)
class Comparison:
    """``joined``: the first cell, in its order, with the other metric's verdict and scores as ``vs_*``
    columns; the test counts the trials both metrics could score (an unsupported trial has no verdict)."""

    metric: str
    other: str
    joined: pd.DataFrame
    test: McNemarResult

    @property
    def both_judged(self) -> pd.Series:
        return _judged_by_both(self.joined)

    @property
    def only_metric_mask(self) -> pd.Series:
        return self.both_judged & self.joined["passed"] & ~self.joined["vs_passed"]

    @property
    def only_other_mask(self) -> pd.Series:
        return self.both_judged & ~self.joined["passed"] & self.joined["vs_passed"]

    def accuracy(self) -> tuple[float, float]:
        """Each metric's accuracy (%) on the trials both could score."""
        both = self.joined[self.both_judged]
        if both.empty:
            return float("nan"), float("nan")
        return 100.0 * float(both["passed"].mean()), 100.0 * float(both["vs_passed"].mean())

    def numbers(self) -> list[tuple[str, str]]:
        """The comparison's numbers, label and text, as the page's metrics and the report's table show them."""
        acc_a, acc_b = self.accuracy()
        return [(f"{self.metric} accuracy", percent(acc_a)), (f"{self.other} accuracy", percent(acc_b)),
                (f"only {self.metric} right / only {self.other} right", f"{self.test.b} / {self.test.c}"),
                ("McNemar p", p_value_text(self.test.p_value))]

    def contingency(self) -> pd.DataFrame:
        """The 2 x 2 table of paired outcomes: rows the page's metric, columns the other."""
        both = self.joined[self.both_judged]
        a, b = both["passed"], both["vs_passed"]
        return pd.DataFrame({f"{self.other} passes": [int((a & b).sum()), int((~a & b).sum())],
                             f"{self.other} fails": [int((a & ~b).sum()), int((~a & ~b).sum())]},
                            index=[f"{self.metric} passes", f"{self.metric} fails"])

    def disagreeing(self) -> pd.DataFrame:
        """The trials only one metric gets right, with ``right`` naming it: what the CSV download holds."""
        rows = self.joined[self.only_metric_mask | self.only_other_mask]
        right = rows["passed"].map({True: self.metric, False: self.other})
        columns = ["trial", "margin", "s_orig", "s_corr", "vs_margin", "vs_s_orig", "vs_s_corr", "original",
                   "corrupted"]
        return rows[columns].rename(columns={
            "margin": f"margin {self.metric}", "s_orig": f"s_orig {self.metric}", "s_corr": f"s_corr {self.metric}",
            "vs_margin": f"margin {self.other}", "vs_s_orig": f"s_orig {self.other}",
            "vs_s_corr": f"s_corr {self.other}"}).assign(right=right.to_numpy())


def _judged_by_both(joined: pd.DataFrame) -> pd.Series:
    return ~joined["unsupported"] & ~joined["vs_unsupported"]


def compare(cell: pd.DataFrame, other_cell: pd.DataFrame, metric: str, other: str) -> Comparison:
    """``metric``'s cell against ``other``'s on the same trials (:mod:`muttlab.dashboard.cell_view` frames)."""
    theirs = other_cell.set_index("trial")[list(OTHER_COLUMNS)].add_prefix("vs_")
    joined = cell.join(theirs, on="trial")
    # A trial missing from the other cell has no verdict there: unsupported, not passed.
    joined["vs_unsupported"] = joined["vs_unsupported"].fillna(True).astype(bool)
    joined["vs_passed"] = joined["vs_passed"].fillna(False).astype(bool)
    both = joined[_judged_by_both(joined)]
    test = mcnemar(both["passed"].to_numpy(dtype=bool), both["vs_passed"].to_numpy(dtype=bool))
    return Comparison(metric, other, joined, test)

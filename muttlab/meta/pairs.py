"""The pairs behind an item-grouped statistic, one row each: what a scatter of Δmetric against Δhuman draws.

Each pair is two systems' outputs for one item, both judged (:func:`muttlab.meta.statistics.item_pairs`, the
systems ``a < b`` in the result's order). Δ is the first output's score minus the second's, the metric's oriented
so that larger is better (TER's negated), as every statistic reads it. The metric ties the pair when
|Δmetric| ≤ ε (the statistic's calibrated ε; 0 for the plain pairwise accuracy), the human when Δhuman = 0;
the pair is right when both tie it or both order it the same way.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from muttlab.errors import MuttlabError
from muttlab.meta import statistics as st
from muttlab.meta.result import MetaEvaluation

COLUMNS = ["item", "system_a", "system_b", "delta_human", "delta_metric", "tied_human", "tied_metric", "right"]
EPSILON_OF = {"acc_eq_item": "acc_eq_item", "pairwise_acc_item": None}


def item_pair_table(result: MetaEvaluation, metric: str, statistic: str = "acc_eq_item") -> pd.DataFrame:
    """Every item-grouped pair of ``metric`` (module doc); ``attrs``: ``epsilon``, ``metric``, ``statistic``.

    Raises:
      MuttlabError: a statistic that is not item-grouped pairwise accuracy, or a result without the metric's
        scores and the human ones (``keep_scores=True``; the shipped ones: ``api.shipped_meta_evaluation``).
    """
    if statistic not in EPSILON_OF:
        raise MuttlabError(f"a scatter of pairs is of {' or '.join(EPSILON_OF)}, not {statistic[:40]!r}")
    if result.gold is None or not result.scores or metric not in result.scores:
        held = ", ".join(sorted(result.scores or {})) or "none"
        raise MuttlabError(f"{result.name}: no per-output scores of {metric[:60]!r} here (scores held: {held}); "
                           "meta-evaluate it with keep_scores=True")
    epsilon = result.epsilons[metric][statistic] if EPSILON_OF[statistic] else 0.0
    sign = 1.0 if result.higher_is_better[metric] else -1.0
    pairs = st.item_pairs(result.gold, sign * result.scores[metric])
    a, b = np.triu_indices(len(result.systems), k=1)
    rows, items = np.nonzero(pairs.valid)
    dh, dm = pairs.dh[rows, items], pairs.dm[rows, items]
    tied_human, tied_metric = dh == 0, np.abs(dm) <= epsilon
    right = np.where(tied_metric, tied_human, np.sign(dh) * np.sign(dm) > 0)
    systems = np.array(result.systems, dtype=object)
    frame = pd.DataFrame({"item": items.astype(np.int64), "system_a": systems[a[rows]], "system_b": systems[b[rows]],
                          "delta_human": dh, "delta_metric": dm, "tied_human": tied_human,
                          "tied_metric": tied_metric, "right": right}, columns=COLUMNS)
    frame = frame.sort_values("item", kind="stable").reset_index(drop=True)  # per item, in the systems' order
    frame.attrs.update(epsilon=epsilon, metric=metric, statistic=statistic)
    return frame

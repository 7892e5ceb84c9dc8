"""The Playground's table of scores: one row per metric, one column per candidate."""
from __future__ import annotations

import numpy as np
import pandas as pd


def score_table(scores: pd.DataFrame) -> pd.DataFrame:
    """Metric x candidate scores (``api.score``'s rows), metrics and candidates in the order they were scored;
    a metric no candidate has a score of (it failed) and a candidate no metric scored are left out: what
    ``scores.pivot_table(index="metric", columns="candidate", values="score", sort=False)`` gives, built from the
    columns at once (the pivot's group-by was a fifth of the page's run)."""
    metrics, candidates = list(dict.fromkeys(scores["metric"])), list(dict.fromkeys(scores["candidate"]))
    row, column = {m: i for i, m in enumerate(metrics)}, {c: j for j, c in enumerate(candidates)}
    values = np.full((len(metrics), len(candidates)), np.nan)
    values[[row[m] for m in scores["metric"]], [column[c] for c in scores["candidate"]]] = scores["score"]
    wide = pd.DataFrame(values, index=pd.Index(metrics, name="metric"), columns=pd.Index(candidates, name="candidate"))
    return wide.dropna(how="all").dropna(how="all", axis=1)

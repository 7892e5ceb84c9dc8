"""Statistics over plain arrays: no files, no metrics. Every random procedure takes an explicit seed."""
from __future__ import annotations

import numpy as np
from scipy import stats as _sp


def wilson_interval(successes, n, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval for a binomial proportion (Wilson 1927), as fractions in [0, 1].

    Preferred over the normal approximation because accuracies near 0% or 100% are common here.
    """
    successes = np.asarray(successes, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    z = _sp.norm.ppf(0.5 + confidence / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = successes / n
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = np.where(n > 0, centre - half, np.nan)
    high = np.where(n > 0, centre + half, np.nan)
    return np.clip(low, 0, 1), np.clip(high, 0, 1)

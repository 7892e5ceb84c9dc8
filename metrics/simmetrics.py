"""SimMetrics' Smith-Waterman-Gotoh similarity with a windowed affine gap (Chapman, SimMetrics 1.6, Sheffield).

The measure BADGER reports (its output folder ``SmithWatermanGotohWindowedAffine``), re-derived from the
SimMetrics definition with its default settings:

* substitution ``SubCost5_3_Minus3``: +5 for identical characters, +3 for an approximate match (both
  characters, lower-cased, in one of the groups ``dt``, ``gj``, ``lr``, ``mn``, ``bpv``, ``aeiou``, ``,.``),
  -3 otherwise;
* gap ``AffineGap5_1``: a gap over ``k`` characters costs ``5 + (k - 1)``;
* local alignment (Smith & Waterman 1981) with Gotoh's affine gaps: every cell is
  ``max(0, diagonal + substitution, best vertical gap, best horizontal gap)`` and the score is the largest cell;
* the gap window of 100 characters, *as SimMetrics implements it*: a gap into row ``i`` may start from
  rows ``1 .. min(i - 1, window)`` (never row 0), so past the window it is the first ``window`` rows that
  stay reachable, not the last ones; the same holds for columns;
* ``getSimilarity`` = best cell / (5 × the shorter length), 1.0 when either string is empty.

The kernel keeps, instead of SimMetrics' full n×m matrix and its O(window) inner loops, the previous row and,
per column, the running maximum of ``cell + row`` over the rows a vertical gap may start from (a gap from
row ``r`` to row ``i`` costs ``4 + i - r``, so the best start is the largest ``cell + r``); the same for the
columns within a row. That is O(n·m) time and O(m) memory with the same values.
"""
from __future__ import annotations

import numpy as np

try:
    import numba
except ImportError:  # pragma: no cover - numba is a dependency; the pure-Python path keeps the metric usable
    numba = None

EXACT, APPROX, MISMATCH = 5.0, 3.0, -3.0
GAP_OPEN, GAP_EXTEND = 5.0, 1.0
WINDOW = 100
APPROX_GROUPS = ("dt", "gj", "lr", "mn", "bpv", "aeiou", ",.")
_GROUP = {ch: k for k, group in enumerate(APPROX_GROUPS) for ch in group}


def _swg_kernel(s, t, s_group, t_group, window):
    """Best local alignment score of code-point arrays ``s`` and ``t`` (see the module docstring)."""
    n, m = s.shape[0], t.shape[0]
    neg = -1e30
    prev = np.zeros(m)
    cur = np.zeros(m)
    # col_best[j]: max over the rows r a vertical gap may start from of (cell[r][j] + r).
    col_best = np.full(m, neg)
    best = 0.0
    for i in range(n):
        row_best = neg  # max over the columns c a horizontal gap may start from of (cell[i][c] + c)
        for j in range(m):
            if s[i] == t[j]:
                sub = EXACT
            elif s_group[i] >= 0 and s_group[i] == t_group[j]:
                sub = APPROX
            else:
                sub = MISMATCH
            diagonal = (prev[j - 1] if i > 0 and j > 0 else 0.0) + sub
            # A gap over k characters costs GAP_OPEN + (k - 1) * GAP_EXTEND = 4 + k with the defaults.
            vertical = col_best[j] - (GAP_OPEN - GAP_EXTEND) - GAP_EXTEND * i
            horizontal = row_best - (GAP_OPEN - GAP_EXTEND) - GAP_EXTEND * j
            cell = max(0.0, diagonal, vertical, horizontal)
            cur[j] = cell
            if cell > best:
                best = cell
            if 1 <= j <= window and cell + GAP_EXTEND * j > row_best:
                row_best = cell + GAP_EXTEND * j
        if 1 <= i <= window:
            for j in range(m):
                if cur[j] + GAP_EXTEND * i > col_best[j]:
                    col_best[j] = cur[j] + GAP_EXTEND * i
        prev, cur = cur, prev
    return best


if numba is not None:
    _swg_kernel = numba.njit(cache=True, nogil=True)(_swg_kernel)


def encode(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Code points of ``text`` and, per character, its approximate-match group (-1 for none)."""
    codes = np.fromiter((ord(ch) for ch in text), dtype=np.int64, count=len(text))
    groups = np.fromiter((_GROUP.get(ch.lower(), -1) for ch in text), dtype=np.int64, count=len(text))
    return codes, groups


def swg_windowed_affine_unnormalised(a: str | tuple, b: str | tuple, window: int = WINDOW) -> float:
    """The best local alignment score (SimMetrics ``getUnNormalisedSimilarity`` for non-empty strings).

    ``a`` and ``b`` are strings or the pairs :func:`encode` returns (to reuse an encoding).
    """
    sa, ga = encode(a) if isinstance(a, str) else a
    sb, gb = encode(b) if isinstance(b, str) else b
    if sa.shape[0] == 0 or sb.shape[0] == 0:
        return 0.0
    return float(_swg_kernel(sa, sb, ga, gb, window))


def swg_windowed_affine(a: str | tuple, b: str | tuple, window: int = WINDOW) -> float:
    """SimMetrics ``SmithWatermanGotohWindowedAffine.getSimilarity``: best cell / (5 × shorter length), in [0, 1].

    Two strings of which one is empty score 1.0, as in SimMetrics (the maximum possible score is then 0).
    """
    la = len(a) if isinstance(a, str) else a[0].shape[0]
    lb = len(b) if isinstance(b, str) else b[0].shape[0]
    # SimMetrics divides by the larger of the best substitution score and minus the gap's max cost (5 vs -5).
    max_value = min(la, lb) * max(EXACT, -GAP_OPEN)
    if max_value == 0:
        return 1.0
    return swg_windowed_affine_unnormalised(a, b, window) / max_value

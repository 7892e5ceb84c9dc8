"""sacrebleu's TER edit count (``sacrebleu.metrics.lib_ter.translation_edit_rate``) compiled with numba.

The same algorithm step by step, on word ids instead of strings: greedy shifts chosen by Tercom's ranking
(largest edit reduction, then longest, earliest start, earliest target), at most 10 words moved at most 50
positions, 1,000 shift candidates in all (the round that reaches the limit is not applied), and the
Levenshtein distance within sacrebleu's beam around the pseudo-diagonal, its ties broken as sacrebleu's
(substitution or match, then deletion, then insertion, before the trace is flipped). sacrebleu's row cache
only saves work (every hypothesis a reference sees has the same length, so a cached row is the row it
would compute), so it has no counterpart here. The tests compare every pair of the MUTT grid with
sacrebleu's function.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
BEAM_WIDTH = 25
MAX_SHIFT_CANDIDATES = 1000
INF = 10 ** 16
# Trace operations: match, substitution, insertion, deletion (sacrebleu's ' ', 's', 'i', 'd').
NOP, SUB, INS, DEL = 0, 1, 2, 3


@njit(cache=True)
def _edit_distance(hyp, ref):
    """(distance, trace) of sacrebleu's BeamEditDistance for ``hyp`` against ``ref``."""
    n_h, n_r = hyp.shape[0], ref.shape[0]
    cost = np.full((n_h + 1, n_r + 1), INF, dtype=np.int64)
    op = np.full((n_h + 1, n_r + 1), -1, dtype=np.int64)
    for j in range(n_r + 1):
        cost[0, j] = j
        op[0, j] = INS
    length_ratio = n_r / n_h if n_h > 0 else 1.0
    beam = BEAM_WIDTH
    if BEAM_WIDTH < length_ratio / 2:
        beam = int(math.ceil(length_ratio / 2 + BEAM_WIDTH))
    for i in range(1, n_h + 1):
        diag = int(math.floor(i * length_ratio))
        lo = max(0, diag - beam)
        hi = min(n_r + 1, diag + beam)
        if i == n_h:
            hi = n_r + 1
        for j in range(lo, hi):
            if j == 0:
                cost[i, j] = cost[i - 1, j] + 1
                op[i, j] = DEL
            else:
                if hyp[i - 1] == ref[j - 1]:
                    c, o = cost[i - 1, j - 1], NOP
                else:
                    c, o = cost[i - 1, j - 1] + 1, SUB
                if cost[i, j] > c:
                    cost[i, j], op[i, j] = c, o
                c = cost[i - 1, j] + 1
                if cost[i, j] > c:
                    cost[i, j], op[i, j] = c, DEL
                c = cost[i, j - 1] + 1
                if cost[i, j] > c:
                    cost[i, j], op[i, j] = c, INS
    trace = np.empty(n_h + n_r, dtype=np.int64)
    n = 0
    i, j = n_h, n_r
    while i > 0 or j > 0:
        o = op[i, j]
        trace[n] = o
        n += 1
        if o == NOP or o == SUB:
            i -= 1
            j -= 1
        elif o == INS:
            j -= 1
        else:
            i -= 1
    return cost[n_h, n_r], trace[:n][::-1].copy()


@njit(cache=True)
def _shifted(words, start, length, target):
    """sacrebleu's ``_perform_shift``."""
    n = words.shape[0]
    out = np.empty(n, dtype=np.int64)
    k = 0
    if target < start:
        parts = ((0, target), (start, start + length), (target, start), (start + length, n))
    elif target > start + length:
        parts = ((0, start), (start + length, target), (start, start + length), (target, n))
    else:
        parts = ((0, start), (start + length, length + target), (start, start + length), (length + target, n))
    for a, b in parts:
        for x in range(a, min(b, n)):
            out[k] = words[x]
            k += 1
    return out


@njit(cache=True)
def _best_shift(hyp, ref, checked):
    """sacrebleu's ``_shift``: (gain, shifted words, candidates checked so far)."""
    n_h, n_r = hyp.shape[0], ref.shape[0]
    pre_score, trace = _edit_distance(hyp, ref)
    # The alignment of the flipped trace (sacrebleu's trace_to_alignment after _flip_trace).
    align = np.full(n_r, -10, dtype=np.int64)
    has = np.zeros(n_r, dtype=np.bool_)
    hyp_err = np.zeros(n_h, dtype=np.int64)
    ref_err = np.zeros(n_r, dtype=np.int64)
    pos_h, pos_r = -1, -1
    for o in trace:
        if o == INS:  # flipped: a deletion
            o = DEL
        elif o == DEL:
            o = INS
        if o == NOP or o == SUB:
            pos_h += 1
            pos_r += 1
            align[pos_r], has[pos_r] = pos_h, True
            if o == SUB:
                hyp_err[pos_h] = 1
                ref_err[pos_r] = 1
        elif o == INS:
            pos_h += 1
            hyp_err[pos_h] = 1
        else:
            pos_r += 1
            align[pos_r], has[pos_r] = pos_h, True
            ref_err[pos_r] = 1
    found = False
    best_gain, best_len, best_start, best_idx = 0, 0, 0, 0
    best_words = hyp
    stop = False
    for start_h in range(n_h):
        if stop:
            break
        for start_r in range(n_r):
            if stop:
                break
            if abs(start_r - start_h) > MAX_SHIFT_DIST:
                continue
            length = 0
            while hyp[start_h + length] == ref[start_r + length] and length < MAX_SHIFT_SIZE:
                length += 1
                # one shift candidate (start_h, start_r, length)
                if hyp_err[start_h:start_h + length].sum() != 0 and ref_err[start_r:start_r + length].sum() != 0 \
                        and not (has[start_r] and start_h <= align[start_r] < start_h + length):
                    prev_idx = -1
                    for offset in range(-1, length):
                        pos = start_r + offset
                        if pos == -1:
                            idx = 0
                        elif 0 <= pos < n_r and has[pos]:
                            idx = align[pos] + 1
                        else:
                            break
                        if idx == prev_idx:
                            continue
                        prev_idx = idx
                        words = _shifted(hyp, start_h, length, idx)
                        gain = pre_score - _edit_distance(words, ref)[0]
                        checked += 1
                        # Tercom's ranking as sacrebleu's tuple comparison: gain, length, -start, -target.
                        if not found or (gain, length, -start_h, -idx) > (best_gain, best_len, -best_start, -best_idx):
                            found = True
                            best_gain, best_len, best_start, best_idx = gain, length, start_h, idx
                            best_words = words
                    if checked >= MAX_SHIFT_CANDIDATES:
                        stop = True
                        break
                if n_h == start_h + length or n_r == start_r + length:
                    break
    if not found:
        return 0, hyp, checked
    return best_gain, best_words, checked


@njit(cache=True)
def edits(hyp, ref):
    """Number of edits (shifts plus edit distance) turning ``hyp`` into ``ref`` (word-id arrays)."""
    if ref.shape[0] == 0:
        return hyp.shape[0]
    words = hyp
    shifts = 0
    checked = 0
    while True:
        gain, shifted, checked = _best_shift(words, ref, checked)
        if checked >= MAX_SHIFT_CANDIDATES or gain <= 0:
            break
        shifts += 1
        words = shifted
    return shifts + _edit_distance(words, ref)[0]

"""The TERp alignment core: beam edit distance with stem / synonym / phrase edits and greedy shifts.

This is the search of TERp (Snover, Madnani, Dorr & Schwartz, "TER-Plus: paraphrase, semantic, and alignment
enhancements to Translation Edit Rate", Machine Translation 23(2-3), 2009, §3-4) written as numba kernels over
integer word ids, so that a whole batch of (hypothesis, reference) pairs is aligned without Python in the loop.
It follows the TERp tool's search exactly, because its quirks decide which alignment (and so which shifts) it
finds:

* the edit distance fills the table column by column (hypothesis word by word) and pushes each cell's cost
  forward (match or substitution, then stem, then synonym, then phrases, then insertion, then deletion); a
  later candidate replaces an earlier one only when strictly cheaper, which fixes the tie-breaking;
* a cell is expanded only while its cost is within ``beam`` of the cheapest diagonal move of the previous
  column (TERp's beam is a cost margin, 35 for TERp-A);
* shifts are gathered from every (hypothesis, reference) start: a run of words that match exactly, or, with
  the *relaxed* constraint, by stem or synonym (and phrases extend a run); a run is kept only when it covers
  an error on both sides, is not made only of shift stop words on either side, and moves at most
  ``shift_dist`` positions; it may be placed before or after any word aligned to the run's reference span;
* candidates are tried longest first, then by (start, end, new position); TER's bound (a shift of n words
  fixes at most 2n edits) stops the search, and the first best gain wins; a shift is made while it pays for
  its cost, and the search repeats on the shifted hypothesis.

Word relations: ``rel[h, r]`` has bit 1 for an exact match, 2 for a Porter-stem match, 4 for WordNet synonyms.
Edit codes of an alignment: 0 match, 1 substitution, 2 stem, 3 synonym, 4 insertion (hypothesis word without
reference word), 5 deletion (reference word without hypothesis word), 6 phrase substitution.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

EXACT, STEM, SYN = 1, 2, 4
OP_MATCH, OP_SUB, OP_STEM, OP_SYN, OP_INS, OP_DEL, OP_PHRASE = 0, 1, 2, 3, 4, 5, 6
OP_CHARS = " STYIDP"

# Indices into the cost vector.
C_MATCH, C_INS, C_DEL, C_SUB, C_STEM, C_SYN, C_SHIFT = range(7)
# Indices into the integer settings vector.
P_BEAM, P_SHIFT_DIST, P_SHIFT_SIZE, P_RELAX = range(4)


@njit(cache=True)
def _phrase_at(i, j, perm, hyp_ids, ph_rstart, ph_rlen, ph_hlen, ph_words, lo, hi):
    """Phrase entries ``lo..hi`` that start at reference word ``i`` and hypothesis position ``j``: a mask."""
    nh = perm.shape[0]
    out = np.zeros(hi - lo, dtype=np.bool_)
    for p in range(lo, hi):
        if ph_rstart[p] != i or j + ph_hlen[p] > nh:
            continue
        ok = True
        for k in range(ph_hlen[p]):
            if hyp_ids[perm[j + k]] != ph_words[p, k]:
                ok = False
                break
        out[p - lo] = ok
    return out


@njit(cache=True)
def _diagonal(S, P, i, j, cost, op, current_best):
    """A substitution-like move into cell (i+1, j+1): kept when first or strictly cheaper. Returns the column's
    cheapest diagonal cost so far (TERp's beam reference)."""
    if S[i + 1, j + 1] < 0 or cost < S[i + 1, j + 1]:
        S[i + 1, j + 1] = cost
        P[i + 1, j + 1] = op
        if cost < current_best:
            return cost
    return current_best


@njit(cache=True)
def min_edit_dist(perm, hyp_ids, rel, nr, costs, beam, ph_rstart, ph_rlen, ph_hlen, ph_words, ph_cost, lo, hi):
    """TERp's beam edit distance of the hypothesis ``hyp_ids[perm]`` against a reference of ``nr`` words.

    Returns (cost, ops, hyp_lens, ref_lens): the alignment as edit codes with the number of hypothesis and
    reference words each covers.
    """
    nh = perm.shape[0]
    inf = 999999.0
    S = np.full((nr + 1, nh + 1), -1.0)
    P = np.zeros((nr + 1, nh + 1), dtype=np.int8)
    PL = np.full((nr + 1, nh + 1), -1, dtype=np.int32)
    S[0, 0] = 0.0
    has_phrases = hi > lo
    current_best = inf
    current_first_good = 0
    cur_last_good = 0
    for j in range(nh + 1):
        last_best = current_best
        current_best = inf
        first_good = max(current_first_good, 0)
        current_first_good = -1
        last_good = cur_last_good
        cur_last_good = -1
        i = first_good
        while i <= nr:
            if j != nh and i > last_good:
                break
            score = S[i, j]
            if score < 0 or (j < nh and score > last_best + beam):
                i += 1
                continue
            if current_first_good == -1:
                current_first_good = i
            if i < nr and j < nh:
                r = rel[perm[j], i]
                if r & EXACT:
                    cost = costs[C_MATCH] + score
                    if S[i + 1, j + 1] == -1 or cost < S[i + 1, j + 1]:
                        S[i + 1, j + 1] = cost
                        P[i + 1, j + 1] = OP_MATCH
                    if cost < current_best:
                        current_best = cost
                else:
                    current_best = _diagonal(S, P, i, j, costs[C_SUB] + score, OP_SUB, current_best)
                    if r & STEM:
                        current_best = _diagonal(S, P, i, j, costs[C_STEM] + score, OP_STEM, current_best)
                    if r & SYN:
                        current_best = _diagonal(S, P, i, j, costs[C_SYN] + score, OP_SYN, current_best)
            cur_last_good = i + 1
            if has_phrases:
                found = _phrase_at(i, j, perm, hyp_ids, ph_rstart, ph_rlen, ph_hlen, ph_words, lo, hi)
                for p in range(lo, hi):
                    if found[p - lo]:
                        ti, tj = i + ph_rlen[p], j + ph_hlen[p]
                        cost = score + ph_cost[p]
                        if S[ti, tj] < 0 or cost < S[ti, tj]:
                            S[ti, tj] = cost
                            P[ti, tj] = OP_PHRASE
                            PL[ti, tj] = p
            if j < nh:
                cost = score + costs[C_INS]
                if S[i, j + 1] < 0 or S[i, j + 1] > cost:
                    S[i, j + 1] = cost
                    P[i, j + 1] = OP_INS
            if i < nr:
                cost = score + costs[C_DEL]
                if S[i + 1, j] < 0 or S[i + 1, j] > cost:
                    S[i + 1, j] = cost
                    P[i + 1, j] = OP_DEL
                    if i >= last_good:
                        last_good = i + 1
            i += 1
    # Trace back from the end.
    n = 0
    ops = np.empty(nr + nh, dtype=np.int8)
    hl = np.empty(nr + nh, dtype=np.int32)
    rl = np.empty(nr + nh, dtype=np.int32)
    i, j = nr, nh
    while i > 0 or j > 0:
        op = P[i, j]
        ops[n] = op
        if op == OP_INS:
            hl[n], rl[n] = 1, 0
        elif op == OP_DEL:
            hl[n], rl[n] = 0, 1
        elif op == OP_PHRASE:
            hl[n], rl[n] = ph_hlen[PL[i, j]], ph_rlen[PL[i, j]]
        else:
            hl[n], rl[n] = 1, 1
        i -= rl[n]
        j -= hl[n]
        n += 1
    return S[nr, nh], ops[:n][::-1].copy(), hl[:n][::-1].copy(), rl[:n][::-1].copy()


@njit(cache=True)
def _align_errors(ops, hl, rl, nh, nr):
    """Which hypothesis / reference words are not exact matches, and where each side's words align."""
    herr = np.zeros(nh, dtype=np.bool_)
    rerr = np.zeros(nr, dtype=np.bool_)
    halign = np.zeros(nh, dtype=np.int64)
    ralign = np.zeros(nr, dtype=np.int64)
    hpos = -1
    rpos = -1
    for k in range(ops.shape[0]):
        op = ops[k]
        if op == OP_PHRASE:
            first_r, first_h = rpos + 1, hpos + 1
            for _ in range(hl[k]):
                hpos += 1
                herr[hpos] = True
                halign[hpos] = first_r
            for _ in range(rl[k]):
                rpos += 1
                rerr[rpos] = True
                ralign[rpos] = first_h
        elif op == OP_INS:
            hpos += 1
            herr[hpos] = True
            halign[hpos] = rpos
        elif op == OP_DEL:
            rpos += 1
            rerr[rpos] = True
            ralign[rpos] = hpos
        else:
            hpos += 1
            rpos += 1
            herr[hpos] = op != OP_MATCH
            rerr[rpos] = op != OP_MATCH
            ralign[rpos] = hpos
            halign[hpos] = rpos
    return herr, rerr, halign, ralign


@njit(cache=True)
def _perform_shift(perm, start, end, newloc):
    """The hypothesis with words ``start..end`` moved after position ``newloc`` (-1: to the front)."""
    n = perm.shape[0]
    out = perm.copy()
    c = 0
    if newloc == -1:
        for k in range(start, end + 1):
            out[c] = perm[k]; c += 1
        for k in range(0, start):
            out[c] = perm[k]; c += 1
        for k in range(end + 1, n):
            out[c] = perm[k]; c += 1
    elif newloc < start:
        for k in range(0, newloc + 1):
            out[c] = perm[k]; c += 1
        for k in range(start, end + 1):
            out[c] = perm[k]; c += 1
        for k in range(newloc + 1, start):
            out[c] = perm[k]; c += 1
        for k in range(end + 1, n):
            out[c] = perm[k]; c += 1
    elif newloc > end:
        for k in range(0, start):
            out[c] = perm[k]; c += 1
        for k in range(end + 1, newloc + 1):
            out[c] = perm[k]; c += 1
        for k in range(start, end + 1):
            out[c] = perm[k]; c += 1
        for k in range(newloc + 1, n):
            out[c] = perm[k]; c += 1
    else:
        # A move inside the moved span itself, as TERp writes it (the words after the span come first).
        for k in range(0, start):
            out[c] = perm[k]; c += 1
        k = end + 1
        while k < n and k <= end + (newloc - start):
            out[c] = perm[k]; c += 1
            k += 1
        for k in range(start, end + 1):
            out[c] = perm[k]; c += 1
        for k in range(end + (newloc - start) + 1, n):
            out[c] = perm[k]; c += 1
    return out


@njit(cache=True)
def _gather_shifts(perm, hyp_ids, rel, nr, stop_h, stop_r, herr, rerr, halign, ralign, ints,
                   ph_rstart, ph_rlen, ph_hlen, ph_words, lo, hi):
    """Candidate shifts as sorted unique keys (longest first, then start, end and new position)."""
    nh = perm.shape[0]
    size = ints[P_SHIFT_SIZE]
    dist = ints[P_SHIFT_DIST]
    relax = ints[P_RELAX] != 0
    use_phrases = relax and hi > lo
    keys = np.empty(64, dtype=np.int64)
    nk = 0
    stack_h = np.empty(64, dtype=np.int64)
    stack_r = np.empty(64, dtype=np.int64)
    for ri in range(nr):
        for hs in range(nh):
            sp = 0
            stack_h[0] = 0
            stack_r[0] = 0
            sp = 1
            while sp > 0:
                sp -= 1
                h_len = stack_h[sp]
                r_len = stack_r[sp]
                if h_len >= size:
                    continue
                ln = 0
                while ln < size - h_len:
                    hind = hs + h_len + ln
                    rind = ri + r_len + ln
                    if hind >= nh or rind >= nr:
                        break
                    if use_phrases:
                        # TERp only looks up phrases whose reference side lies within reach of a shift.
                        a = max(hind - dist, 0)
                        b = min(hind + dist, nh - 1)
                        rlo = max(halign[a], 0)
                        rhi = min(halign[b], nr - 1)
                        if rlo <= rind <= rhi:
                            found = _phrase_at(rind, hind, perm, hyp_ids, ph_rstart, ph_rlen, ph_hlen, ph_words, lo, hi)
                            for p in range(lo, hi):
                                if found[p - lo]:
                                    if sp == stack_h.shape[0]:
                                        stack_h = np.concatenate((stack_h, np.empty(sp, dtype=np.int64)))
                                        stack_r = np.concatenate((stack_r, np.empty(sp, dtype=np.int64)))
                                    stack_h[sp] = h_len + ln + ph_hlen[p]
                                    stack_r[sp] = r_len + ln + ph_rlen[p]
                                    sp += 1
                    r = rel[perm[hind], rind]
                    if not ((r & EXACT) or (relax and (r & (STEM | SYN)))):
                        break
                    ln += 1
                    # The run must cover an error on both sides and not be made only of shift stop words.
                    if not herr[hs:hind + 1].any() or not rerr[ri:rind + 1].any():
                        continue
                    if stop_r[ri:rind + 1].all():
                        continue
                    all_stop = True
                    for k in range(hs, hind + 1):
                        if not stop_h[perm[k]]:
                            all_stop = False
                            break
                    if all_stop:
                        continue
                    moveto = ralign[ri]
                    if moveto == hs or (hs <= moveto <= hind) or moveto - hs > dist or hs - moveto > dist:
                        continue
                    maxlen = max(hind - hs + 1, rind - ri + 1)
                    if maxlen > size + 1:
                        maxlen = size + 1
                    bucket = size + 1 - maxlen  # longest first when the keys are sorted
                    for roff in range(-1, hind - hs + 1):
                        newloc = -2
                        if roff == -1 and ri == 0:
                            newloc = -1
                        elif 0 <= ri + roff < nr and hs != ralign[ri + roff] and (
                                roff == 0 or ralign[ri + roff] != ralign[ri]):
                            newloc = ralign[ri + roff]
                        if newloc == -2:
                            continue
                        if nk == keys.shape[0]:
                            keys = np.concatenate((keys, np.empty(nk, dtype=np.int64)))
                        keys[nk] = ((bucket * (nh + 1) + hs) * (nh + 1) + hind) * (nh + 2) + newloc + 1
                        nk += 1
    return np.unique(keys[:nk])


@njit(cache=True)
def terp_pair(hyp_ids, rel, nr, stop_h, stop_r, costs, ints, ph_rstart, ph_rlen, ph_hlen, ph_words, ph_cost, lo, hi):
    """TERp edits of one hypothesis against one reference (TERcalc.TERpp): shifts, then the edit distance.

    Returns (total cost, number of shifts, final hypothesis order, ops, hyp_lens, ref_lens).
    """
    nh = hyp_ids.shape[0]
    beam = float(ints[P_BEAM])
    perm = np.arange(nh)
    if nh == 0 or nr == 0:
        ops = np.full(nh + nr, OP_INS if nr == 0 else OP_DEL, dtype=np.int8)
        hl = np.full(nh + nr, 1 if nr == 0 else 0, dtype=np.int32)
        rl = np.full(nh + nr, 0 if nr == 0 else 1, dtype=np.int32)
        cost = 0.0
        for _ in range(nh):  # summed one edit at a time, as TERp does
            cost += costs[C_INS]
        for _ in range(nr):
            cost += costs[C_DEL]
        return cost, np.int64(0), perm, ops, hl, rl
    cur_cost, ops, hl, rl = min_edit_dist(perm, hyp_ids, rel, nr, costs, beam,
                                          ph_rstart, ph_rlen, ph_hlen, ph_words, ph_cost, lo, hi)
    if ints[P_SHIFT_SIZE] <= 0 or ints[P_SHIFT_DIST] <= 0:
        return cur_cost, np.int64(0), perm, ops, hl, rl
    shift_total = 0.0
    n_shifts = np.int64(0)
    size = ints[P_SHIFT_SIZE]
    while True:
        herr, rerr, halign, ralign = _align_errors(ops, hl, rl, nh, nr)
        keys = _gather_shifts(perm, hyp_ids, rel, nr, stop_h, stop_r, herr, rerr, halign, ralign, ints,
                              ph_rstart, ph_rlen, ph_hlen, ph_words, lo, hi)
        curerr = cur_cost
        best_shift_cost = 0.0
        best_cost = cur_cost
        best_perm = perm
        best_ops, best_hl, best_rl = ops, hl, rl
        any_gain = False
        for key in keys:
            newloc = key % (nh + 2) - 1
            rest = key // (nh + 2)
            end = rest % (nh + 1)
            rest //= nh + 1
            start = rest % (nh + 1)
            bucket = rest // (nh + 1)
            maxfix = 2.0 * (size + 1 - bucket)
            curfix = curerr - (best_shift_cost + best_cost)
            if curfix > maxfix or (best_shift_cost != 0 and curfix == maxfix):
                break
            shifted = _perform_shift(perm, start, end, newloc)
            c, o, h, r = min_edit_dist(shifted, hyp_ids, rel, nr, costs, beam,
                                       ph_rstart, ph_rlen, ph_hlen, ph_words, ph_cost, lo, hi)
            gain = (best_cost + best_shift_cost) - (c + costs[C_SHIFT])
            if gain > 0 or (best_shift_cost == 0 and gain == 0):
                any_gain = True
                best_shift_cost = costs[C_SHIFT]
                best_cost = c
                best_perm = shifted
                best_ops, best_hl, best_rl = o, h, r
        if not any_gain:
            break
        shift_total += best_shift_cost
        n_shifts += 1
        perm, cur_cost = best_perm, best_cost
        ops, hl, rl = best_ops, best_hl, best_rl
    return cur_cost + shift_total, n_shifts, perm, ops, hl, rl


@njit(cache=True)
def relations(h_tok, r_tok, stem_id, syn_ptr, syn_ids, use_stem, use_syn):
    """rel[h, r] bits for two token-id sequences (exact, same Porter stem, a shared WordNet synset)."""
    nh, nr = h_tok.shape[0], r_tok.shape[0]
    rel = np.zeros((nh, nr), dtype=np.int8)
    for a in range(nh):
        x = h_tok[a]
        for b in range(nr):
            y = r_tok[b]
            if x == y:
                rel[a, b] = EXACT
                continue
            v = 0
            if use_stem and stem_id[x] == stem_id[y]:
                v |= STEM
            if use_syn:
                # Both synset lists are sorted: a merge finds a shared synset.
                p, q = syn_ptr[x], syn_ptr[y]
                pe, qe = syn_ptr[x + 1], syn_ptr[y + 1]
                while p < pe and q < qe:
                    if syn_ids[p] == syn_ids[q]:
                        v |= SYN
                        break
                    if syn_ids[p] < syn_ids[q]:
                        p += 1
                    else:
                        q += 1
            rel[a, b] = v
    return rel


@njit(cache=True, parallel=True)
def terp_batch(h_tok, h_ptr, r_tok, r_ptr, stem_id, syn_ptr, syn_ids, stop, costs, ints, use_stem, use_syn,
               ph_ptr, ph_rstart, ph_rlen, ph_hlen, ph_words, ph_cost):
    """TERp edits of pairs ``k``: hypothesis ``h_tok[h_ptr[k]:h_ptr[k+1]]`` against ``r_tok[r_ptr[k]:...]``.

    Phrase entries of pair ``k`` are ``ph_ptr[k]:ph_ptr[k+1]`` (reference start, lengths, hypothesis words,
    cost). Returns the edit costs and the number of shifts of each pair.
    """
    n = h_ptr.shape[0] - 1
    out = np.empty(n)
    shifts = np.zeros(n, dtype=np.int64)
    for k in prange(n):
        h = h_tok[h_ptr[k]:h_ptr[k + 1]]
        r = r_tok[r_ptr[k]:r_ptr[k + 1]]
        rel = relations(h, r, stem_id, syn_ptr, syn_ids, use_stem, use_syn)
        stop_h = np.empty(h.shape[0], dtype=np.bool_)
        for a in range(h.shape[0]):
            stop_h[a] = stop[h[a]]
        stop_r = np.empty(r.shape[0], dtype=np.bool_)
        for b in range(r.shape[0]):
            stop_r[b] = stop[r[b]]
        cost, ns, _, _, _, _ = terp_pair(h, rel, r.shape[0], stop_h, stop_r, costs, ints,
                                         ph_rstart, ph_rlen, ph_hlen, ph_words, ph_cost, ph_ptr[k], ph_ptr[k + 1])
        out[k] = cost
        shifts[k] = ns
    return out, shifts

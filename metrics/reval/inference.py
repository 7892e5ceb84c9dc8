"""Scoring-time encoders: the trained LSTM and Tree-LSTM run forward by numba kernels, in float64.

Training uses the torch modules of :mod:`muttlab.metrics.reval.model` (batched, with gradients). Scoring
needs only the forward pass, sentence by sentence, and a sentence's encoding must not depend on which
other sentences are encoded with it (encodings are memoised, and scores are cached). Torch gives that only
one sentence per call, which costs ~30 ms a sentence for a 7-member ensemble, almost all of it call
overhead. Here every matrix-vector product is an explicit loop in a fixed order over one sentence's own
vectors, so an encoding is a function of that sentence alone, by construction, whatever else is in the call.

Work that sentences share is done once, which changes no number (the same inputs go through the same
operations):

* the input projection ``W x + b`` of a word is computed once per word and call;
* LSTM: sentences are encoded in sorted token order, and the states of the prefix a sentence shares with
  the previous one are reused (originals and corruptions share their beginnings, captions start alike);
* Tree-LSTM: a node's state depends only on its subtree, so each distinct subtree (word and ordered
  children's subtrees) is computed once; leaves are computed once per word.

The results equal the torch modules' float32 forward pass to about 1e-6 (``tests/metrics/test_reval.py``).
"""
from __future__ import annotations

from typing import Sequence

import numba
import numpy as np

from muttlab.metrics.reval.trees import DepTree


@numba.njit(cache=True, nogil=True)
def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


@numba.njit(cache=True, nogil=True)
def _add_product(acc, w_t, x):
    """``acc += x @ w_t``, each entry summed over ``x`` in index order (the inner loop runs over contiguous
    output entries, so it vectorises without reordering any sum)."""
    for d in range(w_t.shape[0]):
        value = x[d]
        row = w_t[d]
        for j in range(w_t.shape[1]):
            acc[j] += row[j] * value


@numba.njit(cache=True, nogil=True)
def _project(vectors, w_t, bias):
    """``vectors @ w_t + bias`` row by row, each entry summed over the input in index order."""
    n = vectors.shape[0]
    out = np.empty((n, w_t.shape[1]), vectors.dtype)
    for r in range(n):
        row = out[r]
        row[:] = 0.0
        _add_product(row, w_t, vectors[r])
        for j in range(w_t.shape[1]):
            row[j] += bias[j]
    return out


@numba.njit(cache=True, nogil=True)
def _lstm_kernel(wx, u_t, starts, words, shared, out, col):
    """Last hidden state of each sentence (``out[s, col:col + H]``), sentences in sorted token order.

    ``wx[w]``: the gates' input part for word ``w`` (biases included, order i, f, g, o as torch's LSTM);
    ``u_t``: the recurrent weights transposed ``(H, 4H)``, so the inner loops run over contiguous gates;
    ``shared[s]``: tokens sentence ``s`` shares with sentence ``s - 1``, whose states are reused.
    """
    memory = u_t.shape[0]
    longest = 1
    for s in range(len(starts) - 1):
        longest = max(longest, starts[s + 1] - starts[s])
    hs = np.zeros((longest + 1, memory), wx.dtype)  # hs[t]: the state after t tokens of the current sentence
    cs = np.zeros((longest + 1, memory), wx.dtype)
    gates = np.empty(4 * memory, wx.dtype)
    for s in range(len(starts) - 1):
        a, n = starts[s], starts[s + 1] - starts[s]
        for t in range(shared[s], n):
            gates[:] = wx[words[a + t]]
            if t > 0:
                _add_product(gates, u_t, hs[t])
            for j in range(memory):
                i = _sigmoid(gates[j])
                f = _sigmoid(gates[memory + j])
                g = np.tanh(gates[2 * memory + j])
                o = _sigmoid(gates[3 * memory + j])
                c = f * cs[t, j] + i * g
                cs[t + 1, j] = c
                hs[t + 1, j] = o * np.tanh(c)
        out[s, col:col + memory] = hs[n]


@numba.njit(cache=True, nogil=True)
def _tree_kernel(wx_iou, wx_f, u_iou_t, u_f_t, words, child_start, children, roots, out, col):
    """Root hidden state of each tree (``out[k, col:col + H]``) from its distinct subtrees.

    Subtree ``k`` is word ``words[k]`` with children ``children[child_start[k]:child_start[k + 1]]``
    (earlier subtrees, in sentence order). Child-sum Tree-LSTM as :class:`ChildSumTreeLSTM`:
    h̃ = Σ h_k; i, o, u from ``W x + U h̃``; f_k = σ(W_f x + U_f h_k); c = σ(i)·tanh(u) + Σ f_k·c_k.
    """
    memory = u_f_t.shape[0]
    n = len(words)
    dtype = wx_f.dtype
    hs = np.empty((n, memory), dtype)
    cs = np.empty((n, memory), dtype)
    iou = np.empty(3 * memory, dtype)
    h_sum = np.empty(memory, dtype)
    fc = np.empty(memory, dtype)
    f = np.empty(memory, dtype)
    for k in range(n):
        w = words[k]
        iou[:] = wx_iou[w]
        first, last = child_start[k], child_start[k + 1]
        if last > first:
            h_sum[:] = 0.0
            fc[:] = 0.0
            for q in range(first, last):
                child = children[q]
                hc = hs[child]
                for j in range(memory):
                    h_sum[j] += hc[j]
                f[:] = wx_f[w]
                _add_product(f, u_f_t, hc)
                for j in range(memory):
                    fc[j] += _sigmoid(f[j]) * cs[child, j]
            _add_product(iou, u_iou_t, h_sum)
        for j in range(memory):
            c = _sigmoid(iou[j]) * np.tanh(iou[2 * memory + j])
            if last > first:
                c += fc[j]
            cs[k, j] = c
            hs[k, j] = _sigmoid(iou[memory + j]) * np.tanh(c)
    for t in range(len(roots)):
        out[t, col:col + memory] = hs[roots[t]]


def _numpy(tensor) -> np.ndarray:
    return np.ascontiguousarray(tensor.detach().numpy(), dtype=np.float64)


class Encoder:
    """The encoders of a loaded ReVal model or ensemble, as float64 numpy weights for the kernels.

    Args:
      net: a :class:`~muttlab.metrics.reval.model.ReValModel` or ``ReValEnsemble``.
      vector: ``word -> float32 vector`` (:meth:`WordVectors.vector`).
    """

    def __init__(self, net, vector):
        self.model = net.config.model
        self.memory = net.config.memory
        self.vector = vector
        self.members = []
        for member in getattr(net, "members", [net]):
            enc = member.encoder
            if self.model == "lstm":
                lstm = enc.lstm
                self.members.append((_numpy(lstm.weight_ih_l0).T.copy(),
                                     _numpy(lstm.bias_ih_l0) + _numpy(lstm.bias_hh_l0),
                                     _numpy(lstm.weight_hh_l0).T.copy()))
            else:
                self.members.append((_numpy(enc.w_iou.weight).T.copy(), _numpy(enc.w_iou.bias),
                                     _numpy(enc.u_iou.weight).T.copy(),
                                     _numpy(enc.w_f.weight).T.copy(), _numpy(enc.w_f.bias),
                                     _numpy(enc.u_f.weight).T.copy()))

    def encode(self, trees: Sequence[DepTree]) -> np.ndarray:
        """``(len(trees), members × memory)`` float64: each member's encoding, side by side."""
        vocab: dict[str, int] = {}
        out = np.empty((len(trees), self.memory * len(self.members)), np.float64)
        if not trees:
            return out
        if self.model == "lstm":
            sequences = [tuple(vocab.setdefault(w, len(vocab)) for w in tree.tokens) for tree in trees]
            order = sorted(range(len(trees)), key=sequences.__getitem__)
            words = np.fromiter((w for k in order for w in sequences[k]), dtype=np.int64)
            starts = np.zeros(len(order) + 1, dtype=np.int64)
            np.cumsum([len(sequences[k]) for k in order], out=starts[1:])
            shared = np.zeros(len(order), dtype=np.int64)
            for s in range(1, len(order)):
                a, b = sequences[order[s - 1]], sequences[order[s]]
                m = min(len(a), len(b))
                p = 0
                while p < m and a[p] == b[p]:
                    p += 1
                shared[s] = p
            inputs = self._inputs(vocab)
            sorted_out = np.empty_like(out)
            for m, (w_t, bias, u_t) in enumerate(self.members):
                _lstm_kernel(_project(inputs, w_t, bias), u_t, starts, words, shared, sorted_out, m * self.memory)
            out[order] = sorted_out
            return out
        subtree: dict[tuple, int] = {}
        words, child_start, children, roots = [], [0], [], []
        for tree in trees:
            kids = tree.children()
            ids: dict[int, int] = {}
            stack = [(tree.root, False)]
            while stack:  # post-order: a node after all its children
                node, ready = stack.pop()
                if not ready:
                    stack.append((node, True))
                    stack.extend((c, False) for c in reversed(kids[node]))
                    continue
                key = (vocab.setdefault(tree.tokens[node], len(vocab)),) + tuple(ids[c] for c in kids[node])
                found = subtree.get(key)
                if found is None:
                    found = subtree[key] = len(words)
                    words.append(key[0])
                    children.extend(key[1:])
                    child_start.append(len(children))
                ids[node] = found
            roots.append(ids[tree.root])
        inputs = self._inputs(vocab)
        arrays = [np.asarray(x, dtype=np.int64) for x in (words, child_start, children, roots)]
        for m, (w_iou, b_iou, u_iou, w_f, b_f, u_f) in enumerate(self.members):
            _tree_kernel(_project(inputs, w_iou, b_iou), _project(inputs, w_f, b_f), u_iou, u_f, *arrays,
                         out, m * self.memory)
        return out

    def _inputs(self, vocab: dict[str, int]) -> np.ndarray:
        return np.stack([self.vector(w) for w in vocab]).astype(np.float64)


@numba.njit(cache=True, nogil=True)
def _head_kernel(h1, h2, first, second, w_h_t, b_h, w_o_t, b_o, out):
    """ŷ of each pair (``h1[first[p]]``, ``h2[second[p]]``): the mean over members of rᵀ softmax(...)."""
    members, width, hidden = w_h_t.shape[0], w_h_t.shape[1] // 2, w_h_t.shape[2]
    classes = b_o.shape[1]
    features = np.empty(2 * width)
    act = np.empty(hidden)
    logits = np.empty(classes)
    mean = np.empty(classes)
    for p in range(len(first)):
        a, b = h1[first[p]], h2[second[p]]
        mean[:] = 0.0
        for m in range(members):
            offset = m * width
            for d in range(width):
                features[d] = a[offset + d] * b[offset + d]
                features[width + d] = abs(a[offset + d] - b[offset + d])
            act[:] = 0.0
            _add_product(act, w_h_t[m], features)
            logits[:] = 0.0
            for j in range(hidden):
                x = _sigmoid(act[j] + b_h[m, j])
                row = w_o_t[m, j]
                for k in range(classes):
                    logits[k] += row[k] * x
            top = -np.inf
            for k in range(classes):
                logits[k] += b_o[m, k]
                top = max(top, logits[k])
            total = 0.0
            for k in range(classes):
                logits[k] = np.exp(logits[k] - top)
                total += logits[k]
            for k in range(classes):
                mean[k] += logits[k] / total
        score = 0.0
        for k in range(classes):
            score += (k + 1.0) * (mean[k] / members)
        out[p] = score


class Head:
    """The similarity head of a model or ensemble (Tai et al. §4.2), float64, one pair at a time:
    h_s = σ(W (h1 ⊙ h2 ; |h1 − h2|) + b), p̂ = softmax(W_p h_s + b_p), ŷ = rᵀ mean over members of p̂."""

    def __init__(self, net):
        members = getattr(net, "members", [net])
        self.memory = net.config.memory
        self.w_h_t = np.stack([_numpy(m.head.hidden.weight).T for m in members])
        self.b_h = np.stack([_numpy(m.head.hidden.bias) for m in members])
        self.w_o_t = np.stack([_numpy(m.head.out.weight).T for m in members])
        self.b_o = np.stack([_numpy(m.head.out.bias) for m in members])
        if self.w_h_t.shape[1] != 2 * self.memory:
            raise ValueError(f"head input {self.w_h_t.shape[1]} is not twice the memory {self.memory}")

    def __call__(self, h1: np.ndarray, h2: np.ndarray, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """ŷ ∈ [1, K] of the pairs (``h1[first[p]]``, ``h2[second[p]]``): encodings side by side per member."""
        out = np.empty(len(first))
        _head_kernel(np.ascontiguousarray(h1, dtype=np.float64), np.ascontiguousarray(h2, dtype=np.float64),
                     np.asarray(first, dtype=np.int64), np.asarray(second, dtype=np.int64),
                     self.w_h_t, self.b_h, self.w_o_t, self.b_o, out)
        return out

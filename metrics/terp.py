"""TERp-style translation edit rate: TER plus stem, synonym and paraphrase matches (Snover et al. 2009).

The core is TER (Snover et al. 2006) exactly as sacrebleu implements Tercom (``sacrebleu/metrics/lib_ter.py``):
greedy phrase shifts (at most 10 words, at most 50 positions, 1,000 candidates) chosen by how much they lower a
beam-limited word edit distance, then insertions, deletions and substitutions at cost 1 and shifts at cost 1.
TERp (Snover, Madnani, Dorr & Schwartz, "TER-Plus", Machine Translation 23(2-3), 2009, §3) adds edits that
cost less than a substitution; here, with the costs this project uses (TERp's own costs are tuned per task):

=====================  ====  =====================================================================
edit                   cost  when
=====================  ====  =====================================================================
exact match            0     identical (lowercased) words
stem match             0.2   same Snowball (Porter2) stem: ``plays`` / ``playing``
synonym match          0.2   the words share a WordNet 3.0 synset: ``big`` / ``large``
phrase substitution    0.2   per word of the longer side, when Meteor's paraphrase table
                             (``paraphrase-en.gz`` in pycocoevalcap) pairs a hypothesis phrase of 1-4 words
                             with a reference phrase: ``is playing`` / ``plays``
insertion, deletion,   1
substitution, shift
=====================  ====  =====================================================================

Shifts move exactly matching phrases only, as in TER. With every extension off the scores are sacrebleu's
``TER()`` sentence scores (lowercased, whitespace tokens) divided by 100; the tests check this on real data.

Several references follow TER's convention: the fewest edits against any one reference, divided by the
average length of all references. Scores are error rates (lower is better; 0 = identical).
"""
from __future__ import annotations

import math
import os
from collections import Counter
import tempfile
import threading
import zlib
from functools import lru_cache
from pathlib import Path
from typing import ClassVar, Sequence

import numpy as np

from muttlab.metrics.base import Metric, MetricUnavailable

COST_MATCH = 0.0
COST_STEM = 0.2
COST_SYNONYM = 0.2
COST_PHRASE_PER_WORD = 0.2
COST_EDIT = 1.0  # insertion, deletion, substitution and shift, as in TER

# Tercom's search limits, as in sacrebleu's lib_ter.py.
_MAX_SHIFT_SIZE = 10
_MAX_SHIFT_DIST = 50
_BEAM_WIDTH = 25
_MAX_SHIFT_CANDIDATES = 1000
_MAX_PHRASE = 4
_INF = float("inf")
_EPS = 1e-9

# Operations of the trace: exact match, substitution, insertion into the reference side, deletion, and the
# TERp matches (stem, synonym, phrase). Only exact matches count as "aligned without error" for shifts.
_NOP, _SUB, _INS, _DEL, _STEM, _SYN, _PHRASE, _UNDEF = " ", "s", "i", "d", "t", "y", "p", "x"


class _Matcher:
    """Substitution costs between hypothesis and reference words, and phrase pairs, for one configuration."""

    def __init__(self, stems: bool, synonyms: bool, phrases: "PhraseTable | None"):
        self.stems = stems
        self.synonyms = synonyms
        self.phrases = phrases
        self._stem = _stemmer() if stems else None
        self._wordnet = _wordnet() if synonyms else None
        self._cache: dict[tuple[str, str], tuple[float, str]] = {}

    @property
    def extended(self) -> bool:
        return self.stems or self.synonyms or self.phrases is not None

    def sub(self, h: str, r: str) -> tuple[float, str]:
        if h == r:
            return COST_MATCH, _NOP
        key = (h, r)
        hit = self._cache.get(key)
        if hit is None:
            hit = (COST_EDIT, _SUB)
            if self.stems and self._stem(h) == self._stem(r):
                hit = (COST_STEM, _STEM)
            elif self.synonyms and _synsets(h) & _synsets(r):
                hit = (COST_SYNONYM, _SYN)
            self._cache[key] = hit
        return hit


@lru_cache(maxsize=1)
def _stemmer():
    from nltk.stem.snowball import SnowballStemmer
    return lru_cache(maxsize=100_000)(SnowballStemmer("english").stem)


@lru_cache(maxsize=1)
def _wordnet():
    from muttlab.resources.wordnet import WordNetMissing, load_wordnet
    try:
        return load_wordnet()
    except WordNetMissing as exc:
        raise MetricUnavailable(f"TERp synonym matching needs WordNet: {exc}") from exc


@lru_cache(maxsize=200_000)
def _synsets(word: str) -> frozenset:
    """Names of the WordNet synsets of ``word`` (any part of speech; NLTK's morphy finds the base form)."""
    return frozenset(s.name() for s in _wordnet().synsets(word))


def _phrase_hash(text: str) -> int:
    # A stable 64-bit hash (CRC-32 and Adler-32 side by side), so the table can be cached on disk.
    data = text.encode("utf-8")
    value = (zlib.crc32(data) << 32) | zlib.adler32(data)
    return value - (1 << 64) if value >= (1 << 63) else value


class PhraseTable:
    """Meteor's English paraphrase table, as 64-bit hashes of (phrase, paraphrase) pairs, both directions.

    ``paraphrase-en.gz`` holds 5.3 million pairs as line triples (probability, phrase, paraphrase). Keeping
    the strings would take gigabytes; two sorted int64 arrays of hashes of the pairs that are not one word on
    both sides (those are left to the synonym matcher) take about 100 MB, and a lookup is a binary search.
    Building them reads the whole table (a minute or two); they are then cached as ``.npy`` files in
    ``cache_dir`` and later loads take well under a second. A hash collision can at worst give one spurious
    cheap phrase match.
    """

    FORMAT = "1"

    def __init__(self, path, cache_dir=None, max_words: int = _MAX_PHRASE):
        self.path = Path(path)
        self.max_words = max_words
        self._memo: dict[str, frozenset] = {}
        stat = self.path.stat()
        folder = Path(cache_dir) if cache_dir else Path(tempfile.gettempdir()) / "muttlab-paraphrase"
        stem = f"paraphrase-{stat.st_size}-{int(stat.st_mtime)}-n{max_words}-v{self.FORMAT}"
        src_file, tgt_file = folder / f"{stem}.src.npy", folder / f"{stem}.tgt.npy"
        if src_file.is_file() and tgt_file.is_file():
            self._src, self._tgt = np.load(src_file), np.load(tgt_file)
            return
        self._src, self._tgt = self._build()
        folder.mkdir(parents=True, exist_ok=True)
        for arr, target in ((self._src, src_file), (self._tgt, tgt_file)):
            tmp = target.with_name(f"{target.stem}.{os.getpid()}.tmp.npy")
            np.save(tmp, arr)
            os.replace(tmp, target)

    def _build(self) -> tuple[np.ndarray, np.ndarray]:
        import gzip
        import itertools

        src_parts, tgt_parts = [], []
        limit = self.max_words
        with gzip.open(self.path, "rt", encoding="utf-8", errors="replace") as fh:
            while True:
                chunk = list(itertools.islice(fh, 3 * 500_000))
                if not chunk:
                    break
                pairs = []
                for a, b in zip(chunk[1::3], chunk[2::3]):
                    a, b = a.strip(), b.strip()
                    na, nb = a.count(" "), b.count(" ")
                    if a != b and na < limit and nb < limit and (na or nb):
                        pairs.append((a, b))
                src_parts.append(np.fromiter((_phrase_hash(a) for a, _ in pairs), dtype=np.int64, count=len(pairs)))
                tgt_parts.append(np.fromiter((_phrase_hash(b) for _, b in pairs), dtype=np.int64, count=len(pairs)))
        src = np.concatenate(src_parts + tgt_parts)
        tgt = np.concatenate(tgt_parts + src_parts)
        order = np.lexsort((tgt, src))
        return src[order], tgt[order]

    def __len__(self) -> int:
        return len(self._src)

    def paraphrases(self, phrase: str) -> frozenset:
        """Hashes of the paraphrases of ``phrase`` (empty when it has none), memoised."""
        hit = self._memo.get(phrase)
        if hit is None:
            h = _phrase_hash(phrase)
            lo = np.searchsorted(self._src, h, side="left")
            hi = np.searchsorted(self._src, h, side="right")
            hit = frozenset(self._tgt[lo:hi].tolist())
            if len(self._memo) > 500_000:
                self._memo.clear()
            self._memo[phrase] = hit
        return hit

    def pairs_for(self, ref: Sequence[str]):
        """A function ``hyp -> {(i, j): [(a, b), ...]}`` of phrase pairs between a hypothesis and ``ref``.

        Keys are end positions (hypothesis i, reference j), values the phrase lengths (a, b). Pairs that are
        one word on both sides are left out (synonym territory). Matches of each hypothesis phrase are
        memoised, since the shift search asks again for every shifted hypothesis.
        """
        ref_spans: dict[int, list[tuple[int, int]]] = {}
        for b in range(1, self.max_words + 1):
            for j in range(b, len(ref) + 1):
                ref_spans.setdefault(_phrase_hash(" ".join(ref[j - b:j])), []).append((j, b))
        ref_set = set(ref_spans)
        memo: dict[tuple[str, ...], list[tuple[int, int]]] = {}

        def matches(phrase: tuple[str, ...]) -> list[tuple[int, int]]:
            hit = memo.get(phrase)
            if hit is None:
                targets = self.paraphrases(" ".join(phrase))
                hit = memo[phrase] = [span for t in (ref_set & targets if targets else ()) for span in ref_spans[t]]
            return hit

        def pairs(hyp: Sequence[str]) -> dict[tuple[int, int], list[tuple[int, int]]]:
            found: dict[tuple[int, int], list[tuple[int, int]]] = {}
            for a in range(1, self.max_words + 1):
                for i in range(a, len(hyp) + 1):
                    for j, b in matches(tuple(hyp[i - a:i])):
                        if a > 1 or b > 1:
                            found.setdefault((i, j), []).append((a, b))
            return found

        return pairs

    def pairs(self, hyp: Sequence[str], ref: Sequence[str]) -> dict[tuple[int, int], list[tuple[int, int]]]:
        """Phrase pairs between two token lists; see :meth:`pairs_for`."""
        return self.pairs_for(ref)(hyp)


_TABLES: dict[str, PhraseTable] = {}
_TABLES_LOCK = threading.Lock()


def load_phrase_table(path, cache_dir=None) -> PhraseTable:
    """The paraphrase table at ``path``, loaded once per process (hash arrays cached in ``cache_dir``)."""
    with _TABLES_LOCK:
        key = str(path)
        if key not in _TABLES:
            _TABLES[key] = PhraseTable(path, cache_dir)
        return _TABLES[key]


# --------------------------------------------------------------------------- TER with soft matches

def _edit_distance(hyp: Sequence[str], ref: Sequence[str], sub_rows: dict, phrase_pairs: dict | None,
                   prefix_rows: dict) -> tuple[float, list[str]]:
    """Beam-limited edit distance and its trace (as sacrebleu's BeamEditDistance, plus TERp's soft edits).

    ``sub_rows[word]`` holds the (cost, op) of substituting ``word`` for each reference word. Rows of the
    matrix depend only on the hypothesis prefix, so they are kept in ``prefix_rows`` (keyed by the prefix)
    and reused by the next shifted hypothesis, as sacrebleu's cache does. The trace reads hypothesis →
    reference: ``' '`` match, ``s`` substitution, ``d`` hypothesis word deleted, ``i`` reference word
    inserted, ``t``/``y`` stem/synonym match, ``p<a><b>`` phrase substitution.
    """
    nh, nr = len(hyp), len(ref)
    ratio = nr / nh if nh else 1
    beam = math.ceil(ratio / 2 + _BEAM_WIDTH) if _BEAM_WIDTH < ratio / 2 else _BEAM_WIDTH
    row0 = [j * COST_EDIT for j in range(nr + 1)]
    cost = [row0]
    ops = [[_INS] * (nr + 1)]
    key: tuple = ()
    for i in range(1, nh + 1):
        key = key + (hyp[i - 1],)
        hit = prefix_rows.get(key)
        if hit is not None:
            cost.append(hit[0])
            ops.append(hit[1])
            continue
        diag = math.floor(i * ratio)
        lo = max(0, diag - beam)
        hi = nr + 1 if i == nh else min(nr + 1, diag + beam)
        prev = cost[i - 1]
        row = [_INF] * (nr + 1)
        oprow = [_UNDEF] * (nr + 1)
        subs = sub_rows[hyp[i - 1]]
        for j in range(lo, hi):
            if j == 0:
                row[0] = prev[0] + COST_EDIT
                oprow[0] = _DEL
                continue
            c, op = subs[j - 1]
            best, best_op = prev[j - 1] + c, op
            d = prev[j] + COST_EDIT
            if d < best:
                best, best_op = d, _DEL
            ins = row[j - 1] + COST_EDIT
            if ins < best:
                best, best_op = ins, _INS
            if phrase_pairs:
                for a, b in phrase_pairs.get((i, j), ()):
                    p = cost[i - a][j - b] + COST_PHRASE_PER_WORD * max(a, b)
                    if p < best - _EPS:
                        best, best_op = p, f"{_PHRASE}{a}{b}"
            row[j], oprow[j] = best, best_op
        cost.append(row)
        ops.append(oprow)
        prefix_rows[key] = (row, oprow)
    trace: list[str] = []
    i, j = nh, nr
    while i > 0 or j > 0:
        op = ops[i][j]
        trace.append(op)
        if op[0] == _PHRASE:
            i -= int(op[1])
            j -= int(op[2])
        elif op == _INS:
            j -= 1
        elif op == _DEL:
            i -= 1
        else:
            i -= 1
            j -= 1
    trace.reverse()
    return cost[nh][nr], trace


def _alignment(trace: list[str]) -> tuple[dict[int, int], list[int], list[int]]:
    """sacrebleu's trace_to_alignment on a trace read reference → hypothesis (insertions and deletions flipped)."""
    pos_h = pos_r = -1
    hyp_err: list[int] = []
    ref_err: list[int] = []
    align: dict[int, int] = {}
    for op in trace:
        if op[0] == _PHRASE:
            a, b = int(op[1]), int(op[2])
            for k in range(max(a, b)):
                if k < a:
                    pos_h += 1
                    hyp_err.append(1)
                if k < b:
                    pos_r += 1
                    align[pos_r] = pos_h
                    ref_err.append(1)
        elif op == _NOP:
            pos_h += 1
            pos_r += 1
            align[pos_r] = pos_h
            hyp_err.append(0)
            ref_err.append(0)
        elif op == _DEL:  # flipped: a hypothesis word without a reference word
            pos_h += 1
            hyp_err.append(1)
        elif op == _INS:  # flipped: a reference word without a hypothesis word
            pos_r += 1
            align[pos_r] = pos_h
            ref_err.append(1)
        else:  # substitution or a soft match
            pos_h += 1
            pos_r += 1
            align[pos_r] = pos_h
            hyp_err.append(1)
            ref_err.append(1)
    return align, ref_err, hyp_err


def _perform_shift(words: list[str], start: int, length: int, target: int) -> list[str]:
    if target < start:
        return words[:target] + words[start:start + length] + words[target:start] + words[start + length:]
    if target > start + length:
        return words[:start] + words[start + length:target] + words[start:start + length] + words[target:]
    return words[:start] + words[start + length:length + target] + words[start:start + length] + words[length + target:]


def _shifted_pairs(words_h: list[str], words_r: list[str]):
    nh, nr = len(words_h), len(words_r)
    for start_h in range(nh):
        for start_r in range(nr):
            if abs(start_r - start_h) > _MAX_SHIFT_DIST:
                continue
            length = 0
            while words_h[start_h + length] == words_r[start_r + length] and length < _MAX_SHIFT_SIZE:
                length += 1
                yield start_h, start_r, length
                if nh == start_h + length or nr == start_r + length:
                    break


class _Aligner:
    """Edit distances of shifted hypotheses against one reference, memoised (shift search re-asks often)."""

    def __init__(self, ref: list[str], matcher: _Matcher, table: "PhraseTable | None"):
        self.ref = ref
        self.matcher = matcher
        self.phrases_for = table.pairs_for(ref) if table is not None else None
        self._memo: dict[tuple[str, ...], tuple[float, list[str]]] = {}
        self._prefix_rows: dict[tuple[str, ...], tuple[list, list]] = {}
        self._sub_rows: dict[str, list[tuple[float, str]]] = {}

    def __call__(self, hyp: list[str]) -> tuple[float, list[str]]:
        key = tuple(hyp)
        hit = self._memo.get(key)
        if hit is None:
            for w in hyp:
                if w not in self._sub_rows:
                    self._sub_rows[w] = [self.matcher.sub(w, r) for r in self.ref]
            pairs = self.phrases_for(hyp) if self.phrases_for else None
            hit = self._memo[key] = _edit_distance(hyp, self.ref, self._sub_rows, pairs, self._prefix_rows)
        return hit


def _best_shift(words_h: list[str], words_r: list[str], aligner: _Aligner, checked: int):
    pre_score, trace = aligner(words_h)
    align, ref_err, hyp_err = _alignment(trace)
    best = None
    for start_h, start_r, length in _shifted_pairs(words_h, words_r):
        if sum(hyp_err[start_h:start_h + length]) == 0:
            continue
        if sum(ref_err[start_r:start_r + length]) == 0:
            continue
        if start_h <= align[start_r] < start_h + length:
            continue
        prev_idx = -1
        for offset in range(-1, length):
            if start_r + offset == -1:
                idx = 0
            elif start_r + offset in align:
                idx = align[start_r + offset] + 1
            else:
                break
            if idx == prev_idx:
                continue
            prev_idx = idx
            shifted = _perform_shift(words_h, start_h, length, idx)
            candidate = (pre_score - aligner(shifted)[0], length, -start_h, -idx, shifted)
            checked += 1
            if not best or candidate[:4] > best[:4]:
                best = candidate
        if checked >= _MAX_SHIFT_CANDIDATES:
            break
    if not best:
        return 0.0, words_h, checked
    return best[0], best[4], checked


def edit_cost(words_hyp: list[str], words_ref: list[str], matcher: _Matcher,
              table: PhraseTable | None = None) -> float:
    """TER(p) edits of a hypothesis against one reference: shifts (cost 1 each) + edit distance."""
    if not words_ref:
        return float(len(words_hyp)) * COST_EDIT
    aligner = _Aligner(words_ref, matcher, table)
    shifts = 0
    words = words_hyp
    checked = 0
    while True:
        delta, shifted, checked = _best_shift(words, words_ref, aligner, checked)
        if checked >= _MAX_SHIFT_CANDIDATES:
            break
        # Tercom keeps a shift that lowers the edit distance at all; with integer costs that is a gain of
        # at least one shift's cost, the form that also makes sense for TERp's fractional costs.
        if delta < COST_EDIT - _EPS:
            break
        shifts += 1
        words = shifted
    return shifts * COST_EDIT + aligner(words)[0]


class TerPlus(Metric):
    """TERp-style edit rate; see the module docstring for the costs and the multi-reference rule.

    Args:
      stems: count words with the same Snowball stem as a cheap match.
      synonyms: count words sharing a WordNet synset as a cheap match (needs ``wordnet-base``).
      paraphrases: substitute phrases paired in Meteor's paraphrase table (hashed once into ``cache_dir``,
        a minute or two; later loads under a second, ~100 MB); skipped with a note in :attr:`notes` when
        the table is not installed.
      cache_dir: where the hashed paraphrase table is kept (default: a folder in the system temp dir).
    """

    name = "TERp"
    version = "1"
    higher_is_better = False
    requires = ("nltk", "wordnet-base")
    description = "TER + stem / WordNet synonym / paraphrase matches at reduced cost (Snover et al. 2009)"
    # Kept in the main process: the per-pair memo then serves the 5-, 10- and 20-reference batches alike,
    # and WordNet and the paraphrase table are loaded once.
    parallel: ClassVar[bool] = False

    def __init__(self, stems: bool = True, synonyms: bool = True, paraphrases: bool = True, cache_dir=None):
        self.cache_dir = cache_dir
        self.stems = bool(stems)
        self.synonyms = bool(synonyms)
        self.paraphrases = bool(paraphrases)
        self.notes: list[str] = []
        self._matcher: _Matcher | None = None
        self._table: PhraseTable | None = None
        self._memo: dict[tuple, float] = {}
        self._lock = threading.Lock()

    def params(self) -> dict[str, object]:
        return {"stem": "yes" if self.stems else "no", "syn": "yes" if self.synonyms else "no",
                "para": "yes" if self.paraphrases and self._paraphrase_path() else "no",
                "costs": f"{COST_STEM:g}/{COST_SYNONYM:g}/{COST_PHRASE_PER_WORD:g}", "case": "lc"}

    @staticmethod
    def _paraphrase_path():
        from muttlab.metrics.meteor import paraphrase_table
        return paraphrase_table()

    def check_available(self) -> None:
        if self.synonyms:
            from muttlab.resources.wordnet import WordNetMissing, prepare_root
            try:
                prepare_root()
            except WordNetMissing as exc:
                raise MetricUnavailable(f"TERp synonym matching needs WordNet: {exc}") from exc

    def _setup(self) -> _Matcher:
        if self._matcher is None:
            if self.paraphrases:
                path = self._paraphrase_path()
                if path is None:
                    self.notes.append("paraphrase table not found (pip install pycocoevalcap); phrases skipped")
                else:
                    self._table = load_phrase_table(path, self.cache_dir)
            self._matcher = _Matcher(self.stems, self.synonyms, self._table)
        return self._matcher

    @staticmethod
    def _tokens(text: str) -> tuple[str, ...]:
        # sacrebleu's TER default: lowercase, split on whitespace, no further tokenisation.
        return tuple(text.rstrip().lower().split())

    def edits(self, hyp: Sequence[str], ref: Sequence[str]) -> float:
        """Edits (TERp cost) of one tokenised hypothesis against one tokenised reference, memoised."""
        key = (tuple(hyp), tuple(ref))
        hit = self._memo.get(key)
        if hit is None:
            matcher = self._setup()
            hit = edit_cost(list(hyp), list(ref), matcher, self._table)
            if len(self._memo) > 2_000_000:
                self._memo.clear()
            self._memo[key] = hit
        return hit

    def lower_bound(self, hyp: Sequence[str], ref: Sequence[str]) -> float:
        """A cost no alignment of ``hyp`` with ``ref`` can go below (lets the search skip hopeless references).

        Every word that cannot be matched exactly is covered by an edit whose cost, shared among the words
        it covers, is at least 0.1 per word for a stem/synonym match or a phrase substitution and 0.5 per
        word for a substitution, insertion or deletion; so each surplus word costs at least 0.1 when it has
        a cheap partner (a soft match or a phrase pair) and 0.5 otherwise. Without phrases, the words left
        over by the length difference also need an insertion or deletion each (cost 1).
        """
        ch, cr = Counter(hyp), Counter(ref)
        matcher = self._matcher
        if not matcher.extended:
            # Plain TER: every operation but an exact match costs 1 and pairs at most one word per side.
            return max(len(hyp), len(ref)) - sum((ch & cr).values())
        cheap_h: set[str] = set()
        cheap_r: set[str] = set()
        if matcher.stems or matcher.synonyms:
            for h in ch:
                for r in cr:
                    if h != r and matcher.sub(h, r)[0] < COST_EDIT:
                        cheap_h.add(h)
                        cheap_r.add(r)
        if self._table is not None:
            for (i, j), spans in self._table.pairs(hyp, ref).items():
                for a, b in spans:
                    cheap_h.update(hyp[i - a:i])
                    cheap_r.update(ref[j - b:j])
        low = COST_STEM / 2
        bound = sum((low if t in cheap_h else COST_EDIT / 2) * (n - cr.get(t, 0)) for t, n in ch.items() if n > cr.get(t, 0))
        bound += sum((low if t in cheap_r else COST_EDIT / 2) * (n - ch.get(t, 0)) for t, n in cr.items() if n > ch.get(t, 0))
        if self._table is None:
            m = sum((ch & cr).values())
            cheapest = min([COST_EDIT] + [COST_STEM] * self.stems + [COST_SYNONYM] * self.synonyms)
            bound = max(bound, abs(len(hyp) - len(ref)) * COST_EDIT + cheapest * max(0, min(len(hyp), len(ref)) - m))
        return bound

    def _score(self, candidates: list[str], references: list[list[str]]) -> np.ndarray:
        out = np.empty(len(candidates), dtype=np.float64)
        with self._lock:
            self._setup()
            for k, (cand, refs) in enumerate(zip(candidates, references)):
                hyp = self._tokens(cand)
                ref_toks = [self._tokens(r) for r in refs]
                # TER's multi-reference rule needs only the fewest edits: visit references from the most
                # promising lower bound and stop when no remaining one can beat the best found.
                bounds = sorted((self._memo.get((hyp, r), self.lower_bound(hyp, r)), i) for i, r in enumerate(ref_toks))
                best = _INF
                for bound, i in bounds:
                    if bound >= best - _EPS:
                        break
                    best = min(best, self.edits(hyp, ref_toks[i]))
                avg_len = sum(len(r) for r in ref_toks) / len(ref_toks)
                out[k] = best / avg_len if avg_len > 0 else (1.0 if best > 0 else 0.0)
        return out

"""TERp with the TERp-A settings (Snover, Madnani, Dorr & Schwartz 2009), reproducing the original TERp tool.

TER-Plus ("TER-Plus: paraphrase, semantic, and alignment enhancements to Translation Edit Rate", Machine
Translation 23(2-3), 2009) extends TER (Snover et al. 2006) with edits for words that share a Porter stem,
words that share a WordNet synset and phrase pairs from a paraphrase table, all with their own costs, and with
shifts that may move runs matching by stem or synonym. TERp-A is the setting tuned for adequacy (§5); its
parameters are those of the TERp distribution's ``terpa.param`` (the MUTT study's run is in
``mutt/terp/terpa.param``):

==========================  ==================  ==========================================================
edit                        TERp-A cost         when
==========================  ==================  ==========================================================
match                       0                   identical words (after lower-casing)
stem match                  0                   same Porter stem (Martin Porter's reference implementation)
synonym match               0                   the words share a WordNet 3.0 synset
insertion                   0.2588527567630183  a hypothesis word with no reference word
deletion                    1.4269364675533365  a reference word with no hypothesis word
substitution                1.5565478292505814  any other pair of words
shift                       0.5620538767397316  moving a run of up to 10 words by up to 50 positions
phrase substitution         see below           a (reference phrase, hypothesis phrase) pair of the table
==========================  ==================  ==========================================================

Text is normalised as TERp does (lower case; punctuation split off, the possessive ``'s`` split, a final
period or comma split from its word: ``A man is holding a frog.`` → ``a man is holding a frog .``). The search
(beam 35, the relaxed shift constraint with TERp's shift stop-word list) is in :mod:`muttlab.metrics.terp_align`.
With several references the score is the fewest edits against any one reference divided by the *average*
length of all references, capped at 1.0.

Phrase substitutions: TERp-A's table (pivot paraphrases, ``phrases.db``) is not distributed with this
project. With ``paraphrases=True`` METEOR 1.5's English paraphrase table (also pivot paraphrases, shipped in
pycocoevalcap) stands in, its probability p(hypothesis phrase | reference phrase) fed to TERp-A's ``STD``
cost function (``terpa.param``: a + b·NED·log10(p) + c·NED·p + d·NED, at least 0, where NED is the TERp cost
of the two phrases without phrases). The default is off: the stand-in table shares few pairs with TERp's
(12 of the 90 pairs the original used on the MUTT sets), and without it the scores reproduce the original
tool better (see docs/metrics.md).
"""
from __future__ import annotations

import re
import threading
from functools import lru_cache
from typing import Callable, ClassVar, Sequence

import numpy as np

from muttlab.metrics.base import Metric, MetricUnavailable

# TERp-A's costs (terpa.param, Snover et al. 2009 §5).
TERPA_COSTS = {
    "match": 0.0,
    "insert": 0.2588527567630183,
    "delete": 1.4269364675533365,
    "substitute": 1.5565478292505814,
    "stem": 0.0,
    "synonym": 0.0,
    "shift": 0.5620538767397316,
}
# The STD phrase-cost function's parameters (a, b, c, d) and its floor (terpa.param).
TERPA_PHRASE_PARAMS = (-0.2306579294476191, -0.1469465037633749, -0.07843705907022736, 0.17708577297831574)
TERPA_PHRASE_MIN = 0.0
BEAM_WIDTH = 35
SHIFT_DIST = 50
SHIFT_SIZE = 10

# TERp's shift stop-word list (data/shift_word_stop_list.txt of the TERp distribution): a shifted run made only
# of these words, on either side, is never a shift candidate.
SHIFT_STOP_WORDS = frozenset("""
. , " ' ( ) & ! ? - $ : ; + a about actually after again ago ah all also although am among an and any anyone
anything are as at away be been before being between bit but by can center could did do does done down during
each either else entire even every everything fact few for from got had has have having here if in indeed into
is it its itself just kind kinds let located many might more most mostly much must neither nor of off often oh
on ones onto or other others ours out over perhaps please plenty really regarding same self set shall should so
some somebody something sometimes sort still such surely t than that the them then there these thing this
those though till to too type types um until up upon via was way ways were what whether while will with within
would yet yourself
""".split())

_WS = "[ \t\n\x0b\f\r]"
_SPACES = re.compile(_WS + "+")
# TERp's "tokenize punctuation" class: { | } ~ [ \ ] ^ _ ` space ! " # $ % & ( ) * + : ; < = > ? @ /
_PUNCT = re.compile(r"([{-~\[-` -&(-+:-@/])")
_FINAL_PERIOD = re.compile(_WS + r"([^,. \t]+)([.,])" + _WS)
_DIGIT_DASH = re.compile(r"([0-9])(-)")
_ENTITIES = (("<skipped>", ""), ("-\n", ""), ("\n", " "), ("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"),
             ("&gt;", ">"))


@lru_cache(maxsize=200_000)
def tokenize(text: str) -> tuple[str, ...]:
    """TERp's normalisation (NormalizeText with ``Normalize``, case-insensitive) and whitespace split.

    A period or comma is split from the end of a word only when the word holds no earlier one, and matches do
    not overlap (the tool's regular expressions): ``a, b, c.`` gives ``a , b, c .``.
    """
    s = _SPACES.sub(" ", text.strip()).lower()
    for old, new in _ENTITIES:
        s = s.replace(old, new)
    s = _PUNCT.sub(r" \1 ", " " + s + " ")
    s = s.replace("'s ", " 's ")
    if s.endswith("'s"):
        s = s[:-2] + " 's"
    s = _FINAL_PERIOD.sub(r" \1 \2 ", s)
    s = _DIGIT_DASH.sub(r"\1 \2 ", s)
    return tuple(t for t in _SPACES.split(s.strip()) if t)


@lru_cache(maxsize=1)
def _porter():
    # Martin Porter's own implementations (which TERp's Porter.java is) differ from the 1980 paper in a few
    # rules (-logi, -bli, words of one or two letters); NLTK's MARTIN_EXTENSIONS mode is exactly those.
    from nltk.stem.porter import PorterStemmer
    return PorterStemmer(mode=PorterStemmer.MARTIN_EXTENSIONS)


@lru_cache(maxsize=1)
def _wordnet():
    from muttlab.resources.wordnet import WordNetMissing, load_wordnet
    try:
        return load_wordnet()
    except WordNetMissing as exc:
        raise MetricUnavailable(f"TERp synonym matching needs WordNet: {exc}") from exc


def synset_names(word: str) -> frozenset[str]:
    """The WordNet synsets of ``word`` and of each base form WordNet's morphology finds for it, any POS.

    TERp asks JAWS for a word's synsets, and JAWS (like WordNet's own ``morphy``) takes the base forms from the
    exception list *and* from the detachment rules, where NLTK's ``synsets`` uses the rules only when the
    exception list has no entry: ``is`` is then the verb *be* and also the noun *i* (= one).
    """
    wn = _wordnet()
    index = wn._lemma_pos_offset_map
    names = set()
    for pos in ("n", "v", "a", "r"):
        forms = {word, *wn._exception_map[pos].get(word, ())}
        forms.update(word[:-len(old)] + new for old, new in wn.MORPHOLOGICAL_SUBSTITUTIONS[pos] if word.endswith(old))
        for form in forms:
            for offset in index.get(form, {}).get(pos, ()):
                names.add(wn.synset_from_pos_and_offset(pos, offset).name())
    return frozenset(names)


class _Lexicon:
    """Integer ids for words, with each word's stem id, sorted synset ids and stop-word flag, as arrays."""

    def __init__(self, stems: bool, synonyms: bool):
        self.stems = stems
        self.synonyms = synonyms
        self.ids: dict[str, int] = {}
        self._stem_ids: dict[str, int] = {}
        self._synset_ids: dict[str, int] = {}
        self._stem: list[int] = []
        self._syn: list[np.ndarray] = []
        self._stop: list[bool] = []
        self._arrays = None

    def add(self, word: str) -> int:
        wid = self.ids.get(word)
        if wid is not None:
            return wid
        wid = self.ids[word] = len(self.ids)
        stem = _porter().stem(word, to_lowercase=False) if self.stems else word
        self._stem.append(self._stem_ids.setdefault(stem, len(self._stem_ids)))
        if self.synonyms:
            names = synset_names(word)
            syn = sorted(self._synset_ids.setdefault(n, len(self._synset_ids)) for n in names)
        else:
            syn = []
        self._syn.append(np.asarray(syn, dtype=np.int64))
        self._stop.append(word in SHIFT_STOP_WORDS)
        self._arrays = None
        return wid

    def encode(self, tokens: Sequence[str]) -> np.ndarray:
        return np.fromiter((self.add(t) for t in tokens), dtype=np.int64, count=len(tokens))

    def arrays(self):
        """(stem_id, syn_ptr, syn_ids, stop) over all words seen so far."""
        if self._arrays is None:
            lens = np.fromiter((len(s) for s in self._syn), dtype=np.int64, count=len(self._syn))
            ptr = np.zeros(len(self._syn) + 1, dtype=np.int64)
            np.cumsum(lens, out=ptr[1:])
            ids = np.concatenate(self._syn) if self._syn else np.zeros(0, dtype=np.int64)
            self._arrays = (np.asarray(self._stem, dtype=np.int64), ptr, ids.astype(np.int64),
                            np.asarray(self._stop, dtype=np.bool_))
        return self._arrays


# numba's default threading layer runs one parallel kernel at a time; instances in several threads (the
# dashboard's sessions) take turns.
_KERNEL_LOCK = threading.Lock()
# Pairs aligned per kernel call when a caller follows the progress: 0.1 s of both cores at rest, about a second
# under the load where a 20-reference grid cell (13,000 pairs) took 9-16 s as one call; as fast in all as one
# call (measured: 0.9-1.1 s for Negated Subject at 20 references either way). Each pair is aligned on its own, so
# the chunks change no score.
CHUNK = 1_000

_NO_PHRASES = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64),
               np.zeros((0, 1), dtype=np.int64), np.zeros(0, dtype=np.float64))


class TerPlus(Metric):
    """TERp-A (TERp's adequacy-tuned parameters); see the module docstring.

    Args:
      stems: Porter-stem matches (TERp-A: on).
      synonyms: WordNet synonym matches (TERp-A: on; needs ``wordnet-base``).
      paraphrases: phrase substitutions from METEOR 1.5's paraphrase table standing in for TERp's own table
        (default off; see the module docstring). Skipped with a note in :attr:`notes` when the table is missing.
      cap: cap scores at 1.0 (TERp-A: on).
      cache_dir: where the indexed paraphrase table is kept (default: a folder in the system temp dir).
    """

    name = "TERp"
    version = "2"
    higher_is_better = False
    requires = ("nltk", "numba", "wordnet-base")
    languages = ("en",)
    language_reason = "TERp-A's Porter stemmer and WordNet synonyms are English"
    description = "TERp-A: TER with stem, WordNet synonym (and paraphrase) edits, TERp-A costs (Snover et al. 2009)"
    # Kept in the main process: the pair memo then serves the 5-, 10- and 20-reference batches alike, and the
    # kernel already uses both cores.
    parallel: ClassVar[bool] = False
    reports_progress = True  # a followed call aligns its pairs CHUNK at a time, each chunk reported

    def __init__(self, stems: bool = True, synonyms: bool = True, paraphrases: bool = False, cap: bool = True,
                 cache_dir=None):
        self.stems = bool(stems)
        self.synonyms = bool(synonyms)
        self.paraphrases = bool(paraphrases)
        self.cap = bool(cap)
        self.cache_dir = cache_dir
        self.notes: list[str] = []
        self._lexicon = _Lexicon(self.stems, self.synonyms)
        self._phrases = None
        self._phrases_ready = False
        self._memo: dict[tuple, float] = {}
        self._ned: dict[tuple, float] = {}
        self._lock = threading.Lock()
        self._costs = np.array([TERPA_COSTS[k] for k in
                                ("match", "insert", "delete", "substitute", "stem", "synonym", "shift")])
        self._ints = np.array([BEAM_WIDTH, SHIFT_DIST, SHIFT_SIZE, 1], dtype=np.int64)

    def params(self) -> dict[str, object]:
        return {"costs": "terpa", "stem": "porter" if self.stems else "no", "syn": "wn30" if self.synonyms else "no",
                "para": "meteor-en" if self.paraphrases and self._paraphrase_path() else "no",
                "shift": "relax-stop", "beam": BEAM_WIDTH, "dist": SHIFT_DIST, "size": SHIFT_SIZE,
                "norm": "terp-lc", "len": "avg-ref", "cap": "1" if self.cap else "no"}

    @staticmethod
    def _paraphrase_path():
        from muttlab.metrics.meteor import paraphrase_table
        return paraphrase_table()

    def check_available(self) -> None:
        try:
            import numba  # noqa: F401
        except ImportError as exc:
            raise MetricUnavailable("TERp needs numba for its alignment kernel: pip install numba") from exc
        if self.synonyms:
            from muttlab.resources.wordnet import WordNetMissing, prepare_root
            try:
                prepare_root()
            except WordNetMissing as exc:
                raise MetricUnavailable(f"TERp synonym matching needs WordNet: {exc}") from exc

    def prepare(self) -> None:
        """Load the kernel (compiled, or read from numba's cache), WordNet and the Porter stemmer by aligning one
        pair, so that a run says *loading* while it happens (seconds) instead of holding its first cell's count."""
        with self._lock:
            self._align([(("a", "dog", "runs"), ("the", "dogs", "run"))])

    # ------------------------------------------------------------------ pairs

    def _phrase_table(self):
        if not self._phrases_ready:
            self._phrases_ready = True
            if self.paraphrases:
                path = self._paraphrase_path()
                if path is None:
                    self.notes.append("paraphrase table not found (pip install pycocoevalcap); phrases skipped")
                else:
                    from muttlab.metrics.terp_phrases import load_phrase_table
                    self._phrases = load_phrase_table(path, self.cache_dir)
        return self._phrases

    def edit_costs(self, pairs: Sequence[tuple[tuple[str, ...], tuple[str, ...]]],
                   progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        """TERp-A edit costs of (hypothesis tokens, reference tokens) pairs (memoised), one per pair. With
        ``progress``, the pairs not memoised are aligned :data:`CHUNK` at a time and ``progress(aligned, to
        align)`` is told after each chunk; without it, in one kernel call."""
        out = np.empty(len(pairs))
        todo: dict[tuple, list[int]] = {}
        for k, pair in enumerate(pairs):
            hit = self._memo.get(pair)
            if hit is None:
                todo.setdefault(pair, []).append(k)
            else:
                out[k] = hit
        keys = list(todo)
        step = CHUNK if progress is not None else max(1, len(keys))
        for start in range(0, len(keys), step):
            chunk = keys[start:start + step]
            if len(self._memo) > 2_000_000:
                self._memo.clear()
            for key, cost in zip(chunk, self._align(chunk).tolist()):
                self._memo[key] = cost
                for k in todo[key]:
                    out[k] = cost
            if progress is not None:
                progress(start + len(chunk), len(keys))
        return out

    def _align(self, keys: list[tuple[tuple[str, ...], tuple[str, ...]]]) -> np.ndarray:
        """The kernel's edit costs of (hypothesis tokens, reference tokens) pairs, one call for all of them."""
        from muttlab.metrics.terp_align import terp_batch

        lex = self._lexicon
        h_arrs = [lex.encode(h) for h, _ in keys]
        r_arrs = [lex.encode(r) for _, r in keys]
        phrases = self._phrase_entries(keys) if self._phrase_table() is not None else None
        h_tok, h_ptr = _concat(h_arrs)
        r_tok, r_ptr = _concat(r_arrs)
        stem_id, syn_ptr, syn_ids, stop = lex.arrays()
        if phrases is None:
            ph_ptr = np.zeros(len(keys) + 1, dtype=np.int64)
            phrases = (ph_ptr,) + _NO_PHRASES
        with _KERNEL_LOCK:
            costs, _ = terp_batch(h_tok, h_ptr, r_tok, r_ptr, stem_id, syn_ptr, syn_ids, stop, self._costs,
                                  self._ints, self.stems, self.synonyms, *phrases)
        return costs

    def _phrase_entries(self, keys):
        """Phrase entries of each pair as the kernel's CSR arrays (pointer, ref start, lengths, words, cost)."""
        table = self._phrase_table()
        rows = []
        ptr = [0]
        for hyp, ref in keys:
            rows.extend(table.matches(hyp, ref))
            ptr.append(len(rows))
        if not rows:
            return (np.asarray(ptr, dtype=np.int64),) + _NO_PHRASES
        width = max(e[2] for e in rows)
        words = np.full((len(rows), width), -1, dtype=np.int64)
        for n, e in enumerate(rows):
            words[n, :e[2]] = self._lexicon.encode(e[3])
        costs = self._phrase_costs([(e[3], e[4], e[5]) for e in rows])
        return (np.asarray(ptr, dtype=np.int64), np.array([e[0] for e in rows], dtype=np.int64),
                np.array([e[1] for e in rows], dtype=np.int64), np.array([e[2] for e in rows], dtype=np.int64),
                words, costs)

    def _phrase_costs(self, entries) -> np.ndarray:
        """TERp's STD adjustment of table probabilities (PhraseTable.adjust_cost), floored at 0.

        NED is the TERp cost of turning the hypothesis phrase into the reference phrase without phrases.
        """
        missing = list({(h, r) for h, r, _ in entries if (h, r) not in self._ned})
        if missing:
            saved, self._phrases = self._phrases, None
            saved_memo, self._memo = self._memo, {}
            try:
                for pair, ned in zip(missing, self.edit_costs(missing)):
                    self._ned[pair] = float(ned)
            finally:
                self._phrases, self._memo = saved, saved_memo
        a, b, c, d = TERPA_PHRASE_PARAMS
        out = np.empty(len(entries))
        for k, (h, r, prob) in enumerate(entries):
            ned = self._ned[(h, r)]
            out[k] = max(TERPA_PHRASE_MIN, a + b * np.log10(prob) * ned + c * prob * ned + d * ned)
        return out

    def align(self, hypothesis: str, reference: str) -> dict:
        """One pair's TERp alignment, as TERp's ``.pra`` output shows it (for inspection and tests).

        Returns a dict with the normalised ``hyp`` and ``ref`` tokens, ``shifted`` (the hypothesis after its
        shifts), ``shifts`` (how many), ``alignment`` (TERp's letters: space match, S, T stem, Y synonym, I, D,
        P phrase) and ``cost`` (the edits).
        """
        from muttlab.metrics.terp_align import OP_CHARS, relations, terp_pair

        hyp, ref = tokenize(hypothesis), tokenize(reference)
        with self._lock:
            lex = self._lexicon
            h, r = lex.encode(hyp), lex.encode(ref)
            phrases = self._phrase_entries([(hyp, ref)]) if self._phrase_table() is not None else None
            stem_id, syn_ptr, syn_ids, stop = lex.arrays()
        if phrases is None:
            phrases = (np.zeros(2, dtype=np.int64),) + _NO_PHRASES
        rel = relations(h, r, stem_id, syn_ptr, syn_ids, self.stems, self.synonyms)
        cost, n_shifts, perm, ops, _, _ = terp_pair(h, rel, len(r), stop[h], stop[r], self._costs, self._ints,
                                                    *phrases[1:], phrases[0][0], phrases[0][1])
        return {"hyp": hyp, "ref": ref, "shifted": tuple(hyp[k] for k in perm), "shifts": int(n_shifts),
                "alignment": "".join(OP_CHARS[o] for o in ops), "cost": float(cost)}

    # ------------------------------------------------------------------ scores

    def _score(self, candidates: list[str], references: list[list[str]],
               progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        with self._lock:
            hyps = [tokenize(c) for c in candidates]
            refs = [[tokenize(r) for r in rs] for rs in references]
            pairs = [(h, r) for h, rs in zip(hyps, refs) for r in rs]
            costs = self.edit_costs(pairs, progress)
        out = np.empty(len(candidates))
        pos = 0
        for k, rs in enumerate(refs):
            best = float(costs[pos:pos + len(rs)].min())
            pos += len(rs)
            out[k] = self.rate(best, sum(len(r) for r in rs) / len(rs))
        return out

    def rate(self, edits: float, avg_len: float) -> float:
        """TERalignment.score(): edits / average reference length, 1.0 when over it (cap) or nothing to match."""
        if avg_len <= 0:
            return 1.0 if edits > 0 else 0.0
        if self.cap and edits > avg_len:
            return 1.0
        return edits / avg_len


def _concat(arrays: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum([len(a) for a in arrays], out=ptr[1:])
    tok = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.int64)
    return tok.astype(np.int64), ptr

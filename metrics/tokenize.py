"""Tokenisation as coco-caption does it, without Java.

coco-caption runs Stanford's PTBTokenizer (CoreNLP 3.4.1, ``-preserveLines -lowerCase``) and then drops
punctuation tokens (pycocoevalcap/tokenizer/ptbtokenizer.py, ``PUNCTUATIONS``). This module reproduces
the result on caption-style English: lowercase; clitics split (``man's`` -> ``man 's``, ``don't`` ->
``do n't``); quotes and punctuation split off and removed; hyphenated words, numbers and abbreviations
(``mr.``, ``u.s.``) kept whole. Brackets become ``-lrb-``/``-rrb-`` and *stay*: the Java tokenizer
lowercases its escapes, so they no longer match coco-caption's upper-case ``-LRB-`` entries. The tests
compare this function with the Java tokenizer on every sentence of the MUTT, SICK and Flickr8k data.
"""
from __future__ import annotations

import re
from functools import lru_cache

# pycocoevalcap's PUNCTUATIONS list; '"' is in it as the PTB quotes `` and ''.
PUNCTUATIONS = frozenset(["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-",
                          ".", "?", "!", ",", ":", "-", "--", "...", ";", '"'])
_BRACKETS = {"(": "-lrb-", ")": "-rrb-", "[": "-lsb-", "]": "-rsb-", "{": "-lcb-", "}": "-rcb-"}
_CLITICS = ("n't", "'s", "'re", "'ve", "'m", "'ll", "'d")
# Abbreviations PTBTokenizer keeps with their period (the ones that occur in caption data).
_ABBREVIATIONS = frozenset("mr mrs ms dr st jr sr vs etc inc co corp ltd mt ave jan feb aug sept oct nov dec".split())
_ACRONYM = re.compile(r"^(?:[a-z]\.)+[a-z]?$")
# Punctuation glued between two letters ("screaming,looking", "at&t") is split off; "1,000" stays whole.
_GLUED = re.compile(r"(?<=[a-z])([,;=&!?]|\.{2,})(?=[a-z])")
_WHOLE = {"cannot": ["can", "not"], "'n'": ["'n'"]}


_PLAIN = re.compile(r"[a-z0-9 ]*")


@lru_cache(maxsize=200_000)
def ptb_tokenize(text: str) -> str:
    """Lowercased, PTB-tokenised text with punctuation tokens removed, tokens joined by single spaces."""
    lowered = text.lower().rstrip(" .")
    if _PLAIN.fullmatch(lowered):  # most captions: words, spaces and a final period
        words = lowered.split()
        if lowered == text.lower() or not words or not _keeps_period(words[-1] + "."):
            return " ".join(t for w in words for t in _WHOLE.get(w, (w,)))
    words = _GLUED.sub(r" \1 ", text.lower()).split()
    return " ".join(t for raw in words for t in _split_word(raw) if t not in PUNCTUATIONS)


def _split_word(word: str) -> list[str]:
    if word in _CLITICS:
        return [word]
    if word in _WHOLE:
        return _WHOLE[word]
    lead: list[str] = []
    while word and not word[0].isalnum():
        step = 3 if word.startswith("...") else 1
        lead.append(word[:step])
        word = word[step:]
    trail: list[str] = []
    while word and not word[-1].isalnum():
        if word[-1] == "." and _keeps_period(word):
            break
        step = 3 if word.endswith("...") else 1
        trail.append(word[-step:])
        word = word[:-step]
    middle: list[str] = []
    if word:
        for clitic in _CLITICS:
            if word.endswith(clitic) and len(word) > len(clitic):
                middle = [word[: -len(clitic)], clitic]
                break
        else:
            middle = [word]
    return [_BRACKETS.get(t, t) for t in lead] + middle + [_BRACKETS.get(t, t) for t in reversed(trail)]


def _keeps_period(word: str) -> bool:
    stem = word[:-1]
    return stem in _ABBREVIATIONS or bool(_ACRONYM.match(word)) or (len(stem) == 1 and stem.isalpha())


# Tokenizers a metric can be asked for by name; "none" means the text is already tokenised.
TOKENIZERS = {"ptb": ptb_tokenize, "none": None}


def tokenizer(name: str):
    """The tokenizer called ``name`` (None for ``none``); a ValueError naming the choices otherwise."""
    if name not in TOKENIZERS:
        raise ValueError(f"tokenize must be one of {sorted(TOKENIZERS)}, got {name!r}")
    return TOKENIZERS[name]

"""Corruptions generated from a spaCy parse (``en_core_web_sm``; see ``muttlab.resources.spacy_nlp``).

Every generator takes a parsed sentence (a spaCy ``Doc``) and a seed, and returns the corrupted
sentence, or None when the corruption does not apply to that sentence (no prepositional phrase to
repeat, no subject and object to swap, ...). Where a choice is made (which phrase, which word) it is
drawn from ``random.Random(f"{seed}:{doc.text}")``: the same sentence and seed always give the same
corruption, whatever else is in the batch.

The study's three fluency corruptions (MUTT, Boag et al. 2016, §3.3) were made with the ``pattern``
chunker; here they are made from spaCy's dependency parse:

* ``double_PP``: one prepositional phrase (a preposition and its subtree) is repeated right after
  itself. The study repeated every PP; one is enough to break fluency and keeps the change minimal.
* ``remove_prep``: the head preposition of one PP is dropped (the study dropped every PP head).
* ``swap_chunks``: the sentence is cut into chunks (noun chunks, verb groups, single other words) and
  the chunks are shuffled until their order changes; final punctuation stays last.

Generators for the new types and simple templates for three of the study's SICK types (so that a
corpus without SICK, such as the bundled sample, can have them) follow.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Optional, Sequence

Generator = Callable[..., Optional[str]]

FINAL_PUNCT = {".", "!", "?"}
CONTENT_POS = {"NOUN", "VERB", "ADJ"}


def rng_for(doc, seed: int) -> random.Random:
    """A generator's random source: a function of the seed and the sentence only."""
    return random.Random(f"{seed}:{doc.text}")


# --------------------------------------------------------------------------- text assembly

@dataclass(frozen=True)
class Piece:
    """A run of text and whether a space follows it."""

    text: str
    space: bool = True


def pieces(tokens) -> list[Piece]:
    return [Piece(t.text, bool(t.whitespace_)) for t in tokens]


def join(parts: Sequence[Piece]) -> str:
    """Text from pieces, each followed by a space when it had one (last one never)."""
    out = []
    for i, p in enumerate(parts):
        out.append(p.text)
        if p.space and i < len(parts) - 1:
            out.append(" ")
    return "".join(out).strip()


def match_case(word: str, like: str) -> str:
    """``word`` capitalised the way ``like`` is (all upper, capitalised or lower)."""
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def article_for(next_word: str, like: str) -> str:
    """"a" or "an" before ``next_word`` (by its first letter), cased like ``like``."""
    return match_case("an" if next_word[:1].lower() in "aeiou" else "a", like)


def with_sentence_case(parts: list[Piece]) -> list[Piece]:
    """Capitalise the first piece (a re-ordered sentence must still start with a capital)."""
    if parts and parts[0].text[:1].islower():
        parts[0] = Piece(parts[0].text[:1].upper() + parts[0].text[1:], parts[0].space)
    return parts


def lower_if_moved(token) -> str:
    """A sentence-initial word moved inside the sentence loses its capital (not a proper noun or "I")."""
    if token.i == 0 and token.tag_ not in ("NNP", "NNPS") and token.text != "I":
        return token.text[:1].lower() + token.text[1:]
    return token.text


# --------------------------------------------------------------------------- prepositional phrases

def prepositional_phrases(doc) -> list[tuple[int, int]]:
    """(start, end) token spans of PPs: a preposition with an object, and its contiguous subtree."""
    spans = []
    for tok in doc:
        if tok.dep_ == "prep" and tok.pos_ == "ADP" and any(c.dep_ == "pobj" for c in tok.children):
            start, end = tok.i, tok.right_edge.i + 1
            if tok.left_edge.i == tok.i and end > start + 1:
                spans.append((start, end))
    return spans


def double_pp(doc, seed: int = 0, strength: int = 1) -> Optional[str]:
    """The sentence with one prepositional phrase repeated right after itself (``strength`` extra copies),
    or None (no PP)."""
    spans = prepositional_phrases(doc)
    if not spans:
        return None
    start, end = rng_for(doc, seed).choice(spans)
    toks = list(doc)
    before = pieces(toks[:end])
    before[-1] = Piece(before[-1].text, True)  # the copy follows the phrase after a space
    copies = []
    for _ in range(max(1, strength)):
        copy = pieces(toks[start:end])
        copy[-1] = Piece(copy[-1].text, True)
        copies += copy
    copies[-1] = Piece(copies[-1].text, bool(toks[end - 1].whitespace_))
    return join(before + copies + pieces(toks[end:]))


def remove_prep(doc, seed: int = 0, strength: int = 1) -> Optional[str]:
    """The sentence without the head preposition of one PP (of ``strength`` PPs), or None (too few PPs)."""
    spans = prepositional_phrases(doc)
    if len(spans) < max(1, strength):
        return None
    rng = rng_for(doc, seed)
    # One PP is drawn as it always was, so strength 1 gives the same corruption as before.
    starts = {rng.choice(spans)[0]} if strength <= 1 else {s for s, _ in rng.sample(spans, strength)}
    toks = list(doc)
    kept = [p for i, p in enumerate(pieces(toks)) if i not in starts]
    if 0 in starts and kept:
        kept = with_sentence_case(kept)
    return join(kept) or None


# --------------------------------------------------------------------------- chunks

def chunks(doc) -> list[list]:
    """The sentence cut into chunks: noun chunks, runs of auxiliaries/verbs/particles, other words.

    Final punctuation is left out (the caller keeps it last).
    """
    toks = list(doc)
    if toks and toks[-1].text in FINAL_PUNCT:
        toks = toks[:-1]
    in_chunk = {}
    for n, chunk in enumerate(doc.noun_chunks):
        for t in chunk:
            in_chunk[t.i] = n
    out: list[list] = []
    for tok in toks:
        verbal = tok.pos_ in ("AUX", "VERB", "PART") and tok.i not in in_chunk
        if out:
            prev = out[-1][-1]
            same_np = tok.i in in_chunk and in_chunk.get(prev.i) == in_chunk[tok.i]
            same_vp = verbal and prev.pos_ in ("AUX", "VERB", "PART") and prev.i not in in_chunk
            if same_np or same_vp:
                out[-1].append(tok)
                continue
        out.append([tok])
    return out


def swap_chunks(doc, seed: int = 0, strength: int | None = None) -> Optional[str]:
    """The chunks of the sentence in a shuffled order (never the original one), or None when the
    sentence has fewer than two chunks or every order reads the same.

    ``strength`` k: instead of a full shuffle, k transpositions of two different chunks (a severity
    scale: 1 swap disturbs the sentence least); None when it has fewer than k + 1 chunks."""
    parts = chunks(doc)
    texts = [" ".join(t.text for t in c) for c in parts]
    if len(parts) < 2 or len(set(texts)) < 2 or (strength is not None and len(parts) < strength + 1):
        return None
    rng = rng_for(doc, seed)
    order = list(range(len(parts)))
    if strength is not None:
        for _ in range(strength):
            a, b = rng.sample(range(len(parts)), 2)
            order[a], order[b] = order[b], order[a]
        if [texts[i] for i in order] == texts:
            return None
    while [texts[i] for i in order] == texts:
        rng.shuffle(order)
    words = []
    for i in order:
        for tok in parts[i]:
            # the old first word keeps its capital only if its chunk stays first
            words.append(Piece(tok.text if i == order[0] else lower_if_moved(tok)))
    words = with_sentence_case(words)
    last = doc[-1]
    if last.text in FINAL_PUNCT:
        words[-1] = Piece(words[-1].text, bool(doc[-2].whitespace_) if len(doc) > 1 else False)
        words.append(Piece(last.text, False))
    return join(words)


# --------------------------------------------------------------------------- new types

def _noun_chunk_of(doc, token):
    for chunk in doc.noun_chunks:
        if chunk.start <= token.i < chunk.end:
            return chunk
    return None


def subj_obj_swap(doc, seed: int = 0) -> Optional[str]:
    """Subject and direct object exchanged ("A man bites a dog" -> "A dog bites a man"), or None.

    Applies when the main verb has a subject and an object noun chunk of the same grammatical number
    (so the verb still agrees) and the two differ.
    """
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None:
        return None
    subj = next((c for c in root.children if c.dep_ == "nsubj"), None)
    obj = next((c for c in root.children if c.dep_ == "dobj"), None)
    if subj is None or obj is None or subj.pos_ == "PRON" or obj.pos_ == "PRON":
        return None
    if ("Number=Plur" in str(subj.morph)) != ("Number=Plur" in str(obj.morph)):
        return None
    s_chunk, o_chunk = _noun_chunk_of(doc, subj), _noun_chunk_of(doc, obj)
    if s_chunk is None or o_chunk is None or s_chunk.end > o_chunk.start:
        return None
    if s_chunk.text.lower() == o_chunk.text.lower():
        return None
    toks = list(doc)

    def moved(chunk) -> list[Piece]:
        return [Piece(lower_if_moved(t), True) for t in chunk]

    parts = (pieces(toks[:s_chunk.start]) + moved(o_chunk) + pieces(toks[s_chunk.end:o_chunk.start])
             + moved(s_chunk))
    parts[-1] = Piece(parts[-1].text, bool(toks[o_chunk.end - 1].whitespace_))
    parts += pieces(toks[o_chunk.end:])
    return join(with_sentence_case(parts))


NUMBER_WORDS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
IRREGULAR_PLURALS = {"man": "men", "woman": "women", "child": "children", "person": "people", "foot": "feet",
                     "tooth": "teeth", "mouse": "mice", "goose": "geese", "sheep": "sheep", "fish": "fish",
                     "deer": "deer", "knife": "knives", "leaf": "leaves", "wife": "wives", "life": "lives"}


def pluralise(noun: str) -> str:
    """English plural of a singular noun (irregulars from a short list, then the spelling rules)."""
    lower = noun.lower()
    if lower in IRREGULAR_PLURALS:
        return match_case(IRREGULAR_PLURALS[lower], noun)
    if lower.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"


def number_change(doc, seed: int = 0) -> Optional[str]:
    """A count changed: a number word replaced by another ("Two dogs" -> "Five dogs"), else one
    singular object noun with "a"/"an" made plural with a count ("a frog" -> "two frogs"); or None."""
    rng = rng_for(doc, seed)
    toks = list(doc)
    numbers = [t for t in toks if t.tag_ == "CD" and t.lower_ in NUMBER_WORDS]
    if numbers:
        tok = rng.choice(numbers)
        new = rng.choice([w for w in NUMBER_WORDS if w != tok.lower_])
        out = pieces(toks)
        out[tok.i] = Piece(match_case(new, tok.text), bool(tok.whitespace_))
        return join(out)
    # Only "a/an NOUN" right next to each other, so nothing between them needs to agree.
    nouns = [t for t in toks if t.tag_ == "NN" and t.dep_ in ("dobj", "pobj") and t.i > 0
             and toks[t.i - 1].lower_ in ("a", "an") and toks[t.i - 1].head.i == t.i]
    if not nouns:
        return None
    tok = rng.choice(nouns)
    det = toks[tok.i - 1]
    count = rng.choice(NUMBER_WORDS[:4])
    out = pieces(toks)
    out[det.i] = Piece(match_case(count, det.text), bool(det.whitespace_))
    out[tok.i] = Piece(pluralise(tok.text), bool(tok.whitespace_))
    return join(out)


GENDER_PAIRS = (("man", "woman"), ("men", "women"), ("boy", "girl"), ("boys", "girls"), ("he", "she"),
                ("him", "her"), ("his", "her"), ("himself", "herself"), ("father", "mother"),
                ("fathers", "mothers"), ("son", "daughter"), ("sons", "daughters"), ("brother", "sister"),
                ("brothers", "sisters"), ("gentleman", "lady"), ("gentlemen", "ladies"), ("husband", "wife"),
                ("king", "queen"), ("male", "female"), ("guy", "woman"), ("dad", "mom"), ("uncle", "aunt"))
_MALE = {m: f for m, f in GENDER_PAIRS}
_FEMALE = {f: m for m, f in GENDER_PAIRS if (f, m) not in (("her", "him"), ("woman", "guy"))}


def gender_swap(doc, seed: int = 0) -> Optional[str]:
    """Every gendered word turned to the other gender ("A man ... his" -> "A woman ... her"), or None.

    Applies only when all gendered words are of one gender: swapping "a man and a woman" would
    describe the same scene.
    """
    toks = list(doc)
    male = [t for t in toks if t.lower_ in _MALE]
    female = [t for t in toks if t.lower_ in _FEMALE]
    if bool(male) == bool(female):
        return None
    out = pieces(toks)
    for tok in male:
        out[tok.i] = Piece(match_case(_MALE[tok.lower_], tok.text), bool(tok.whitespace_))
    for tok in female:
        word = _FEMALE[tok.lower_]
        if tok.lower_ == "her":  # possessive "her" -> "his", object "her" -> "him"
            word = "his" if tok.tag_ == "PRP$" else "him"
        out[tok.i] = Piece(match_case(word, tok.text), bool(tok.whitespace_))
    return join(out)


def drop_content(doc, seed: int = 0, strength: int = 1) -> Optional[str]:
    """One modifying content word (``strength`` of them) dropped (an adjective or a noun modifier: "a red
    jacket" -> "a jacket"), the article fixed ("an old man" -> "a man"); or None when there are too few."""
    toks = list(doc)
    candidates = [t for t in toks if t.dep_ in ("amod", "compound") and t.pos_ in ("ADJ", "NOUN")
                  and t.is_alpha and t.head.i > t.i and not any(True for _ in t.children)]
    if len(candidates) < max(1, strength):
        return None
    rng = rng_for(doc, seed)
    dropped = [rng.choice(candidates)] if strength <= 1 else rng.sample(candidates, strength)
    gone = {t.i for t in dropped}
    out = pieces(toks)
    for tok in dropped:
        if tok.i > 0 and toks[tok.i - 1].lower_ in ("a", "an") and toks[tok.i - 1].i not in gone:
            following = next((t for t in toks[tok.i + 1:] if t.i not in gone), None)
            if following is not None:
                det = toks[tok.i - 1]
                out[det.i] = Piece(article_for(following.text, det.text), bool(det.whitespace_))
    kept = [p for i, p in enumerate(out) if i not in gone]
    if 0 in gone:
        kept = with_sentence_case(kept)
    return join(kept)


def typo(doc, seed: int = 0, strength: int = 1) -> Optional[str]:
    """One content word (``strength`` of them) misspelt by swapping two adjacent inner letters ("riding"
    -> "ridnig"), or None when too few words can be misspelt."""
    rng = rng_for(doc, seed)
    words = [t for t in doc if t.pos_ in CONTENT_POS and t.is_alpha and len(t.text) >= 4]
    rng.shuffle(words)
    out = pieces(list(doc))
    done = 0
    for tok in words:
        text = tok.text
        positions = [i for i in range(1, len(text) - 2) if text[i] != text[i + 1]]
        if not positions:
            continue
        i = rng.choice(positions)
        out[tok.i] = Piece(text[:i] + text[i + 1] + text[i] + text[i + 2:], bool(tok.whitespace_))
        done += 1
        if done == max(1, strength):
            return join(out)
    return None


# --------------------------------------------------------------------------- templates for study types

def _progressive_root(doc):
    """(root verb, its "is"/"are" auxiliary, its subject) of "<subject> is/are <verb>-ing ...", or None."""
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    if root is None or root.tag_ != "VBG":
        return None
    aux = next((c for c in root.children if c.dep_ == "aux" and c.lower_ in ("is", "are")), None)
    subj = next((c for c in root.children if c.dep_ == "nsubj"), None)
    if aux is None or subj is None or not subj.i < aux.i < root.i:
        return None
    if any(c.dep_ == "neg" for c in root.children):
        return None
    return root, aux, subj


def neg_verb(doc, seed: int = 0) -> Optional[str]:
    """"not" after the auxiliary of a progressive main verb ("is riding" -> "is not riding"), or a
    simple present/past verb negated with "do" ("rides" -> "does not ride"); None otherwise."""
    toks = list(doc)
    found = _progressive_root(doc)
    if found is not None:
        _, aux, _ = found
        out = pieces(toks)
        out.insert(aux.i + 1, Piece("not", True))
        out[aux.i] = Piece(aux.text, True)
        return join(out)
    root = next((t for t in doc if t.dep_ == "ROOT"), None)
    do = {"VBZ": "does", "VBP": "do", "VBD": "did"}.get(root.tag_ if root is not None else "")
    if root is None or do is None or root.lemma_ == "be" or any(c.dep_ in ("aux", "neg") for c in root.children):
        return None
    if not any(c.dep_ == "nsubj" and c.i < root.i for c in root.children):
        return None
    out = pieces(toks)
    out[root.i] = Piece(f"{do} not {root.lemma_}", bool(root.whitespace_))
    return join(out)


def neg_subj(doc, seed: int = 0) -> Optional[str]:
    """"A man is riding ..." -> "There is no man riding ..." (the SICK template), or None.

    Applies to a progressive main verb whose subject is a noun chunk opening the sentence with "a",
    "an", "the", "one" or a number word.
    """
    found = _progressive_root(doc)
    if found is None:
        return None
    root, aux, subj = found
    chunk = _noun_chunk_of(doc, subj)
    if chunk is None or chunk.start != 0 or chunk.end != aux.i:
        return None
    first = chunk[0]
    if first.lower_ not in ("a", "an", "the", "one") + NUMBER_WORDS:
        return None
    toks = list(doc)
    rest = pieces(toks[aux.i + 1:])
    noun_phrase = pieces(list(chunk)[1:])
    if not noun_phrase:
        return None
    noun_phrase[-1] = Piece(noun_phrase[-1].text, True)
    lead = [Piece("There"), Piece(aux.lower_), Piece("no")]
    return join(lead + noun_phrase + rest)


def det_sub(doc, seed: int = 0) -> Optional[str]:
    """One article exchanged: "a"/"an" -> "the", or "the" -> "a"/"an" (seeded choice), or None."""
    toks = list(doc)
    articles = [t for t in toks if t.lower_ in ("a", "an", "the") and t.dep_ == "det" and t.i + 1 < len(toks)
                and t.head.tag_ in ("NN", "NNP")]
    if not articles:
        return None
    tok = rng_for(doc, seed).choice(articles)
    new = "the" if tok.lower_ in ("a", "an") else article_for(toks[tok.i + 1].text, "a")
    out = pieces(toks)
    out[tok.i] = Piece(match_case(new, tok.text), bool(tok.whitespace_))
    return join(out)


GENERATORS: dict[str, Generator] = {
    "double_PP": double_pp,
    "remove_prep": remove_prep,
    "swap_chunks": swap_chunks,
    "subj_obj_swap": subj_obj_swap,
    "number_change": number_change,
    "gender_swap": gender_swap,
    "drop_content": drop_content,
    "typo": typo,
    "neg_verb": neg_verb,
    "neg_subj": neg_subj,
    "det_sub": det_sub,
}


# Generated types with a natural strength, and what the strength counts (``muttlab severity``).
STRENGTHS: dict[str, str] = {
    "drop_content": "content words dropped",
    "typo": "words misspelt",
    "swap_chunks": "chunk transpositions",
    "double_PP": "extra copies of the PP",
    "remove_prep": "prepositions removed",
}


def generate(docs, names: Sequence[str], seed: int = 0) -> list[dict[str, str]]:
    """For each parsed sentence, {type name: corrupted sentence} for the types that apply.

    A generator that returns the sentence unchanged is treated as not applying.
    """
    out = []
    for doc in docs:
        made = {}
        for name in names:
            corrupted = GENERATORS[name](doc, seed)
            if corrupted and corrupted != doc.text.strip():
                made[name] = corrupted
        out.append(made)
    return out

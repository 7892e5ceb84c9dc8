"""WordNet 3.0 (Fellbaum 1998) through NLTK, read from Debian's ``wordnet-base`` files.

NLTK's ``WordNetCorpusReader`` expects the database files of the Princeton distribution plus a ``lexnames``
file that Debian's ``/usr/share/wordnet`` lacks. :func:`load_wordnet` builds a reader folder in a cache:
copies of the Debian files (28 MB, once; NLTK refuses symbolic links that leave its root) and a ``lexnames`` file listing the 45 standard lexicographer files
(wndb(5WN): the number, the name and the syntactic category of each). No download is needed.
"""
from __future__ import annotations

from muttlab.errors import ResourceMissing

import os
import shutil
import tempfile
import threading
from functools import lru_cache
from pathlib import Path

WORDNET_DIR = Path("/usr/share/wordnet")
INSTALL_HINT = "install WordNet's database files: apt-get install wordnet-base (they go to /usr/share/wordnet)"
REQUIRED = ("data.noun", "data.verb", "data.adj", "data.adv", "index.noun", "index.verb", "index.adj", "index.adv")

# The lexicographer files of WordNet 3.0 (lexnames(5WN)); category 1 noun, 2 verb, 3 adjective, 4 adverb.
LEXNAMES = (
    ("adj.all", 3), ("adj.pert", 3), ("adv.all", 4), ("noun.Tops", 1), ("noun.act", 1), ("noun.animal", 1),
    ("noun.artifact", 1), ("noun.attribute", 1), ("noun.body", 1), ("noun.cognition", 1),
    ("noun.communication", 1), ("noun.event", 1), ("noun.feeling", 1), ("noun.food", 1), ("noun.group", 1),
    ("noun.location", 1), ("noun.motive", 1), ("noun.object", 1), ("noun.person", 1), ("noun.phenomenon", 1),
    ("noun.plant", 1), ("noun.possession", 1), ("noun.process", 1), ("noun.quantity", 1), ("noun.relation", 1),
    ("noun.shape", 1), ("noun.state", 1), ("noun.substance", 1), ("noun.time", 1), ("verb.body", 2),
    ("verb.change", 2), ("verb.cognition", 2), ("verb.communication", 2), ("verb.competition", 2),
    ("verb.consumption", 2), ("verb.contact", 2), ("verb.creation", 2), ("verb.emotion", 2), ("verb.motion", 2),
    ("verb.perception", 2), ("verb.possession", 2), ("verb.social", 2), ("verb.stative", 2), ("verb.weather", 2),
    ("adj.ppl", 3),
)

_LOCK = threading.Lock()


class WordNetMissing(ResourceMissing):
    """WordNet's database files are not installed; the message says how to install them."""


def default_cache_dir() -> Path:
    return Path(tempfile.gettempdir()) / f"muttlab-wordnet-{os.getuid() if hasattr(os, 'getuid') else 'user'}"


def prepare_root(source: Path = WORDNET_DIR, cache_dir: Path | None = None) -> Path:
    """A folder NLTK can read: copies of ``source``'s files plus the ``lexnames`` file. Returns its path."""
    source = Path(source)
    missing = [name for name in REQUIRED if not (source / name).is_file()]
    if missing:
        raise WordNetMissing(f"WordNet files {', '.join(missing)} are missing from {source}: {INSTALL_HINT}")
    root = Path(cache_dir or default_cache_dir())
    root.mkdir(parents=True, exist_ok=True)
    for entry in source.iterdir():
        copy = root / entry.name
        if entry.is_file() and not (copy.is_file() and copy.stat().st_size == entry.stat().st_size):
            tmp = root / f"{entry.name}.{os.getpid()}.tmp"
            shutil.copyfile(entry, tmp)
            os.replace(tmp, copy)
    lexnames = root / "lexnames"
    if not lexnames.is_file():
        tmp = root / f"lexnames.{os.getpid()}.tmp"
        tmp.write_text("".join(f"{i:02d}\t{name}\t{cat}\n" for i, (name, cat) in enumerate(LEXNAMES)))
        os.replace(tmp, lexnames)
    return root


@lru_cache(maxsize=2)
def _load(source: Path, cache_dir: Path | None):
    import warnings

    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    import nltk.data

    class _Reader(WordNetCorpusReader):
        def map_wn(self, version="wordnet"):
            # NLTK maps synsets to those of its own downloaded "wordnet" corpus; these files ARE WordNet 3.0.
            return None

    root = prepare_root(source, cache_dir)
    # NLTK only opens files under its data paths.
    if str(root.resolve()) not in nltk.data.path:
        nltk.data.path.append(str(root.resolve()))
    with warnings.catch_warnings():
        # No Open Multilingual Wordnet: only English is used.
        warnings.simplefilter("ignore")
        return _Reader(str(root), None)


def load_wordnet(source: Path = WORDNET_DIR, cache_dir: Path | None = None):
    """NLTK's WordNet reader over the Debian files (built once per process, about 3 s).

    Raises:
      WordNetMissing: the database files are not installed (says ``apt-get install wordnet-base``).
    """
    with _LOCK:
        return _load(Path(source), None if cache_dir is None else Path(cache_dir))

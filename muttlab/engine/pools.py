"""Reference pools: for each clean sentence, its ordered references.

A trial compares two candidates against the references of the scene the clean sentence describes,
so "5 / 10 / 20 references" means the first k of one ordered pool (MUTT, Boag et al. 2016, §4).

Where the pools come from (what of the study can be reproduced from the files we have):

* **Flickr8k** captions: a SICK sentence made from a Flickr8k caption gets the five captions of that
  image, ordered by caption number (``#0`` .. ``#4``). The caption is found by exact match on normalised
  text (lower case, letters and digits only); when several images carry the caption the first image in
  file order wins, as in the study's ``flickr_reverse[key][0]``. Five references only, which is why the
  study (which kept pairs with at least 20 references) has no Flickr8k trials.
* **MSR-Video** descriptions (SICK's ``SEMEVAL`` sentences): the MSR Video Description Corpus itself is
  not in the data dir, but the study's pools are: every trial of ``mutt/experiments`` carries the first
  20 English descriptions of the video its caption came from. We align the study's extracted lists
  (``mutt/corruptions/*.txt``, in file order) with the trials of the same set to learn
  caption -> pool, and the study's debug dump ``mutt/cache/semeval.txt`` (caption -> video id) to carry a
  pool to every other caption of the same video. A sentence can also be looked up directly (the
  generated sets ``double_PP`` / ``remove_prep`` / ``swap_chunks`` only record sentences).
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from muttlab.settings import Settings
from muttlab.sources import data_file, load_flickr_captions, load_mutt_experiments, read_lines

FLICKR, SEMEVAL = "FLICKR", "SEMEVAL"
# The sets of the study taken from SICK; only these have an extracted list to align with.
SICK_SETS = ("neg_subj", "neg_verb", "sem_opps", "shuffled", "passive", "near_syms", "det_sub")
LIST_FIELDS = ("dataset", "orig", "sent", "corr", "score")


def normalise(text: str) -> str:
    """Lower case, letters/digits/spaces only, single spaces: the key captions are matched on."""
    text = re.sub(r"[^a-z0-9 ]", "", text.lower())
    return re.sub(r" +", " ", text).strip()


@dataclass(frozen=True)
class Pool:
    """An ordered reference pool and where it came from (``flickr:<image>``, ``msr:<video>``,
    ``mutt:<set>#<id>`` when the video id is unknown)."""

    references: tuple[str, ...]
    origin: str


@dataclass(frozen=True)
class ListEntry:
    """One block of a study list ``mutt/corruptions/<set>.txt``."""

    dataset: str
    caption: str
    sentence: str
    corrupted: str
    score: float


@dataclass
class ReferencePools:
    """Lookup of reference pools by source caption or by sentence.

    ``by_caption`` maps (dataset, normalised caption) -> Pool; ``by_sentence`` maps a normalised
    sentence of the study's trials -> Pool.
    """

    by_caption: dict[tuple[str, str], Pool] = field(default_factory=dict)
    by_sentence: dict[str, Pool] = field(default_factory=dict)

    def for_caption(self, caption: str, dataset: str) -> Pool | None:
        """The pool of a caption, matched exactly first (the study keyed videos by the exact
        description, and one common description such as "A man is playing a guitar." belongs to many
        videos), then on normalised text."""
        dataset = dataset.upper()
        return (self.by_caption.get((dataset, caption.strip()))
                or self.by_caption.get((dataset, normalise(caption))))

    def for_sentence(self, sentence: str) -> Pool | None:
        return self.by_sentence.get(normalise(sentence))

    def lookup(self, sentence: str, caption: str | None = None, dataset: str | None = None) -> Pool | None:
        """The pool of a clean sentence: by its source caption when known, else by the sentence."""
        if caption and dataset:
            pool = self.for_caption(caption, dataset)
            if pool is not None:
                return pool
        return self.for_sentence(sentence)

    def counts(self) -> dict[str, int]:
        """How many captions have a pool, per dataset, and how many sentences."""
        out: dict[str, int] = defaultdict(int)
        for (dataset, caption), pool in self.by_caption.items():
            if caption == normalise(caption):
                out[f"captions_{dataset.lower()}"] += 1
        out["sentences"] = len(self.by_sentence)
        return dict(out)


# --------------------------------------------------------------------------- the study's text files

def read_study_list(path: Path) -> list[ListEntry]:
    """The blocks of a study list (header, then ``dataset/orig/sent/corr/score`` lines per pair)."""
    entries, block = [], {}
    for line in read_lines(path):
        key, _, value = line.strip().partition(":")
        if key in LIST_FIELDS and _:
            block[key] = value.strip()
            if key == "score":
                if len(block) == len(LIST_FIELDS):
                    entries.append(ListEntry(block["dataset"], block["orig"], block["sent"], block["corr"],
                                             float(block["score"])))
                block = {}
    return entries


def read_cluster_dump(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """(caption, cluster ids) from the study's ``cache/*.txt`` dumps (``sent:`` / ``cluster:`` lines)."""
    out, caption = [], None
    for line in read_lines(path):
        if line.startswith("sent:"):
            caption = line[len("sent:"):].strip()
        elif line.startswith("cluster:") and caption is not None:
            out.append((caption, tuple(line[len("cluster:"):].split())))
            caption = None
    return out


# --------------------------------------------------------------------------- building

def _flickr_pools(settings: Settings) -> dict[tuple[str, str], Pool]:
    pools: dict[tuple[str, str], Pool] = {}
    for image, captions in load_flickr_captions(settings).items():
        pool = Pool(tuple(captions), f"flickr:{image}")
        for caption in captions:
            pools.setdefault((FLICKR, normalise(caption)), pool)  # first image in file order wins
    return pools


def _msr_pools(settings: Settings) -> tuple[dict[tuple[str, str], Pool], dict[str, Pool]]:
    suite = load_mutt_experiments(settings)
    by_sentence: dict[str, Pool] = {}
    by_caption: dict[tuple[str, str], Pool] = {}
    for name in SICK_SETS:
        trials = suite.of(name)
        entries = [e for e in read_study_list(data_file(settings, f"mutt/corruptions/{name}.txt"))
                   if e.dataset == SEMEVAL]
        # The study wrote a trial for each listed SEMEVAL pair with >= 20 references, in list order:
        # walk both in step, skipping list entries that have no trial.
        i = 0
        for trial in trials:
            while i < len(entries) and not (normalise(entries[i].sentence) == normalise(trial.original)
                                            and normalise(entries[i].corrupted) == normalise(trial.corrupted)):
                i += 1
            if i == len(entries):
                break
            pool = Pool(trial.references, f"mutt:{trial.source.split(':', 1)[1]}")
            by_caption.setdefault((SEMEVAL, entries[i].caption.strip()), pool)
            by_caption.setdefault((SEMEVAL, normalise(entries[i].caption)), pool)
            i += 1
    for trial in suite.trials:
        by_sentence.setdefault(normalise(trial.original), Pool(trial.references, trial.source))

    # The cluster dump names the video of each caption: name the pools by video and share them
    # with every other caption of that video.
    dump = read_cluster_dump(data_file(settings, "mutt/cache/semeval.txt"))
    by_video: dict[str, Pool] = {}
    for caption, clusters in dump:
        pool = by_caption.get((SEMEVAL, caption.strip()))
        if pool is not None and clusters:
            by_video.setdefault(clusters[0], Pool(pool.references, f"msr:{clusters[0]}"))
    for caption, clusters in dump:
        video = by_video.get(clusters[0]) if clusters else None
        if video is None:
            continue
        for key in ((SEMEVAL, caption.strip()), (SEMEVAL, normalise(caption))):
            known = by_caption.get(key)
            if known is None or known.references == video.references:
                by_caption[key] = video
    return by_caption, by_sentence


@lru_cache(maxsize=4)
def _pools_cached(data_dir: Path) -> ReferencePools:
    settings = Settings(data_dir=data_dir)
    msr_captions, by_sentence = _msr_pools(settings)
    by_caption = _flickr_pools(settings)
    by_caption.update(msr_captions)
    return ReferencePools(by_caption, by_sentence)


def load_pools(settings: Settings) -> ReferencePools:
    """Reference pools for SICK's captions and the study's sentences (needs the data dir)."""
    data_file(settings, "mutt/cache/semeval.txt")
    return _pools_cached(settings.data_dir)

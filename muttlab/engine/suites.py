"""Building trial suites: from SICK (extracted + generated), from the bundled sample, from the store.

* ``build_suite(settings, source="sick")``: the seven SICK types extracted by templates
  (``muttlab.corruptions.extract``), each pair with the reference pool of its source caption
  (``muttlab.engine.pools``) and its SICK relatedness as ``human_score``; plus the generated types applied to
  the clean sentences of those pairs (as the study generated its fluency sets from SICK sentences).
  Pairs whose pool has fewer than ``min_refs`` references are left out (the study kept pairs with at
  least 20, which leaves out every Flickr8k pair: an image has five captions).
* ``build_suite(settings, source="sample")``: the sample scenes corrupted by every generator that applies.
* ``suite_from_store(settings)``: the pairs of the store, rejected ones left out. The runner scores
  these like any suite; its cache is keyed on the text, so an edited pair is scored afresh.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from muttlab.corruptions import catalog
from muttlab.corruptions.extract import EXTRACTORS, Extracted
from muttlab.corruptions.generate import GENERATORS
from muttlab.errors import MuttlabError
from muttlab.engine.pools import load_pools
from muttlab.settings import DEFAULT_SEED, Limits, Settings, active_limits
from muttlab.sources import (DATA_LAYOUT, SAMPLE_SCENES, SAMPLE_TRIALS, join_sick, load_sample_scenes,
                                    load_sick)
from muttlab.pairs.store import ACCEPTED, EDITED, PROPOSED, open_store
from muttlab.trials import Suite, Trial

ProgressFn = Callable[[int, int, str], None]

SOURCES = ("sick", "sample")
STUDY_MIN_REFS = 20


@dataclass(frozen=True)
class TypeCount:
    """How many trials of one type a build produced, next to the study's count where there is one."""

    corruption: str
    trials: int
    study: int | None = None


# The study's numbers: pairs in its extracted lists (mutt/corruptions/*.txt headers) and trials in its
# experiment files (pairs with >= 20 references; data/README.md).
STUDY_LIST_COUNTS = {"neg_subj": 543, "neg_verb": 339, "sem_opps": 619, "shuffled": 19, "passive": 304,
                     "near_syms": 515, "det_sub": 150}
STUDY_TRIAL_COUNTS = {"neg_subj": 336, "neg_verb": 198, "sem_opps": 246, "passive": 214, "near_syms": 240,
                      "det_sub": 65, "double_PP": 202, "remove_prep": 202, "swap_chunks": 500, "shuffled": 14}


def _check_types(types: Sequence[str] | None, allowed: Sequence[str]) -> list[str]:
    if types is None:
        return list(allowed)
    for name in types:
        try:
            catalog.get(name)
        except KeyError as exc:
            raise MuttlabError(str(exc)) from None
    return [t for t in types if t in allowed]


# With a progress report, sentences are parsed and corrupted this many at a time, each part reported.
PART = 100


def _parse(sentences: Sequence[str], progress: ProgressFn | None = None):
    from muttlab.resources.spacy_nlp import ModelMissing, parse
    try:
        if progress is None:
            return parse(list(sentences))
        docs = []
        for start in range(0, len(sentences), PART):
            docs.extend(parse(list(sentences[start:start + PART])))
            progress(len(docs), 2 * len(sentences), f"parsing: {len(docs):,} of {len(sentences):,} sentences")
        return docs
    except ModelMissing as exc:
        raise MuttlabError(str(exc)) from None


def generated_trials(items: Sequence[tuple[str, str, tuple[str, ...], str]], types: Sequence[str],
                     seed: int, not_applied: list[tuple[str, str, str]] | None = None,
                     progress: ProgressFn | None = None) -> list[Trial]:
    """Trials made by the generators from (id stem, clean sentence, references, source) items.

    Sentences are parsed in one batch; each type that applies gives a trial ``<type>/<stem>``. The
    order is type by type (catalogue order), items in the given order. A corruption that comes out over the
    sentence limits (``MUTTLAB_MAX_WORDS`` / ``MUTTLAB_MAX_CHARS``: Duplicated PP grows a 186-word sentence to
    213 words) is no trial, since no metric may score it; it is appended to ``not_applied`` as (stem, type,
    reason) instead of failing the suite it belongs to. ``progress(step, total, message)`` is told the sentences
    parsed, then corrupted, :data:`PART` at a time (the same trials either way).
    """
    limits = active_limits()
    docs = _parse([sentence for _, sentence, _, _ in items], progress)
    out: dict[str, list[Trial]] = {name: [] for name in types}
    for done, ((stem, sentence, refs, source), doc) in enumerate(zip(items, docs), start=1):
        for name in types:
            corrupted = GENERATORS[name](doc, seed)
            too_long = corrupted and _over_limits(corrupted, limits)
            if too_long:
                if not_applied is not None:
                    not_applied.append((stem, name, too_long))
                continue
            if corrupted and corrupted != sentence.strip():
                out[name].append(Trial(id=f"{name}/{stem}", corruption=name, original=sentence,
                                       corrupted=corrupted, references=tuple(refs), source=source,
                                       status=PROPOSED))
        if progress is not None and (done % PART == 0 or done == len(items)):
            progress(len(items) + done, 2 * len(items), f"corrupting: {done:,} of {len(items):,} sentences")
    return [t for name in types for t in out[name]]


def _over_limits(text: str, limits: Limits) -> str:
    """Why ``text`` is over the sentence limits ('' when it is not)."""
    try:
        limits.check_text(text, "the corrupted sentence")
    except MuttlabError as exc:
        return str(exc)
    return ""


def _sick_trials(settings: Settings, types: Sequence[str], min_refs: int, seed: int) -> list[Trial]:
    pairs = load_sick(settings)
    pools = load_pools(settings)
    extracted_types = [t for t in types if t in EXTRACTORS]
    generated_types = [t for t in types if t in GENERATORS and t not in EXTRACTORS]
    trials: list[Trial] = []
    clean: dict[str, tuple[str, str, tuple[str, ...], str]] = {}
    # Generated types need the clean sentences of every extracted type, not only the requested ones.
    for name in (catalog.extracted_types() if generated_types else extracted_types):
        extractor = EXTRACTORS[name]
        for pair in pairs:
            found: Extracted | None = extractor(pair)
            if found is None:
                continue
            pool = pools.lookup(found.original, found.caption, found.dataset)
            if pool is None or len(pool.references) < min_refs:
                continue
            # Generators work on each clean sentence once, from the first pair that carries it.
            clean_side = "b" if found.corrupted_side == "a" else "a"
            clean.setdefault(found.original, (f"sick-{found.pair_id}{clean_side}", found.original,
                                              pool.references, found.source))
            if name in extracted_types:
                trials.append(Trial(id=f"{name}/sick-{found.pair_id}", corruption=name, original=found.original,
                                    corrupted=found.corrupted, references=pool.references, source=found.source,
                                    human_score=found.human_score, status=PROPOSED))
    if generated_types:
        trials += generated_trials(list(clean.values()), generated_types, seed)
    return trials


def _sample_trials(scenes_path: Path, types: Sequence[str], seed: int) -> list[Trial]:
    scenes = load_sample_scenes(scenes_path)
    items = [(str(s["id"]), s["original"], tuple(s["references"]), f"sample:{s['id']}") for s in scenes]
    return generated_trials(items, [t for t in types if t in GENERATORS], seed)


def build_suite(settings: Settings, source: str = "sick", types: Sequence[str] | None = None,
                min_refs: int = STUDY_MIN_REFS, seed: int | None = None,
                scenes_path: Path = SAMPLE_SCENES) -> Suite:
    """A suite built from SICK (needs the data dir) or from the sample scenes.

    Args:
      source: ``sick`` or ``sample``.
      types: corruption types to build (default: every type the source supports).
      min_refs: SICK only; pairs whose reference pool is smaller are left out.
      seed: generators' seed (default ``settings.seed``).
    Returns: a Suite named after the source, trials in status ``proposed``.
    """
    seed = settings.seed if seed is None else seed
    if source == "sick":
        allowed = catalog.extracted_types() + [t for t in catalog.generated_types()
                                               if t not in catalog.extracted_types()]
        return Suite("sick", _sick_trials(settings, _check_types(types, allowed), min_refs, seed))
    if source == "sample":
        return Suite("sample", _sample_trials(scenes_path, _check_types(types, catalog.generated_types()), seed),
                     is_sample=True)
    raise MuttlabError(f"unknown suite source {source!r}; choose one of {', '.join(SOURCES)}")


def count_types(suite: Suite) -> list[TypeCount]:
    """Trials per type, with the study's trial count (pairs with >= 20 references) where it has one."""
    counts = Counter(t.corruption for t in suite.trials)
    return [TypeCount(name, counts[name], STUDY_TRIAL_COUNTS.get(name)) for name in suite.corruptions()]


# --------------------------------------------------------------------------- JSONL

def trial_json(trial: Trial) -> dict:
    """The JSONL form of a trial (what ``load_sample`` reads, plus human_score when there is one)."""
    record = {"id": trial.id, "corruption": trial.corruption, "original": trial.original,
              "corrupted": trial.corrupted, "references": list(trial.references), "source": trial.source}
    if trial.human_score is not None:
        record["human_score"] = trial.human_score
    return record


def write_trials(trials: Sequence[Trial], path: Path) -> None:
    text = "".join(json.dumps(trial_json(t), ensure_ascii=False) + "\n" for t in trials)
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise MuttlabError(f"cannot write {path}: {exc.strerror}") from None


def write_sample_trials(path: Path = SAMPLE_TRIALS, scenes_path: Path = SAMPLE_SCENES,
                        seed: int = DEFAULT_SEED) -> Suite:
    """Regenerate the bundled sample trials (``data/sample/trials.jsonl``) from the sample scenes.

    The file is a function of the scenes, the seed and the generators only: rerunning it gives the
    same bytes (tests check this).
    """
    suite = build_suite(Settings(), source="sample", seed=seed, scenes_path=scenes_path)
    write_trials(suite.trials, path)
    return suite


# --------------------------------------------------------------------------- the store

def store_suite(settings: Settings, suite: Suite, author: str):
    """Add a suite's trials to the pair store (keys already stored are kept as they are)."""
    with open_store(settings) as store:
        return store.add(suite.trials, author=author)


def suite_from_store(settings: Settings, types: Sequence[str] | None = None,
                     statuses: Sequence[str] = (PROPOSED, ACCEPTED, EDITED)) -> Suite:
    """The store's pairs as a suite for the runner (rejected pairs left out by default).

    Raises MuttlabError when no pair matches, naming how to fill the store.
    """
    with open_store(settings) as store:
        trials = store.trials(types, statuses)
    if not trials:
        raise MuttlabError(f"the pair store ({settings.store_url}) has no pairs with status "
                           f"{'/'.join(statuses)}{' of the chosen types' if types else ''}; "
                           "fill it with `muttlab corrupt`")
    if settings.data_dir is not None and (settings.data_dir / DATA_LAYOUT["sick"]).is_file():
        trials = join_sick(trials, load_sick(settings))  # pair ids and splits, for --split and leakage warnings
    return Suite("store", trials, is_sample=all(t.source.startswith("sample:") for t in trials))

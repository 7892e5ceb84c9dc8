"""The studies, registered once: what `muttlab correlate`, :func:`muttlab.api.correlate`, `muttlab reproduce`
and the dashboard's pages list and run.

A study is one module. It is listed here with

* ``run``: ``"module:function"``, called as ``function(settings, registry=..., progress=..., **options)``; it
  returns a dataclass holding DataFrames (and ``notes()``). None for a study that only measures published
  numbers (the MUTT grid is `muttlab run`'s, SICK relatedness `muttlab reval evaluate`'s).
* ``published``: the studies of the data dir's ``published/published.csv`` it measures, each with the
  ``"module:function"`` that computes their numbers (see :mod:`muttlab.human.reproduce`).

Functions are named by import path and imported when used, so listing the studies imports none of them.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Callable

from muttlab.errors import MuttlabError


@dataclass(frozen=True)
class Published:
    """Numbers of a paper that a study computes: ``name`` as in published.csv's ``study`` column."""

    name: str
    description: str
    measure: str  # "module:function"(settings, rows, registry, progress) -> {row index: (value, reason)}


@dataclass(frozen=True)
class Study:
    name: str
    title: str
    run: str | None = None
    published: tuple[Published, ...] = field(default_factory=tuple)

    def runner(self) -> Callable:
        if self.run is None:
            raise MuttlabError(f"study {self.name!r} has no computation of its own; choose from "
                               f"{', '.join(runnable())}")
        return load(self.run)


STUDIES: tuple[Study, ...] = (
    Study("flickr8k", "Kendall τ×100 with Flickr8K-Expert and CrowdFlower ratings (Hessel et al. 2021)",
          run="muttlab.human.flickr:flickr_correlations",
          published=(Published("flickr8k_expert", "Flickr8K-Expert Kendall tau-c, Hessel et al. 2021, Table 1",
                               "muttlab.human.reproduce:measure_flickr_expert"),
                     Published("flickr8k_cf", "Flickr8K-CrowdFlower Kendall tau-b, Hessel et al. 2021, Table 2",
                               "muttlab.human.reproduce:measure_flickr_crowdflower"))),
    Study("sick", "MUTT §5: gold SICK relatedness against metric scores on one corruption type",
          run="muttlab.human.sick:sick_study",
          published=(Published("sick_neg_subj_correlation",
                               "SICK Negated Subject correlations, Boag et al. 2016, Table 3",
                               "muttlab.human.reproduce:measure_sick_table3"),)),
    Study("dbleu", "ΔBLEU observation-unit correlations (Galley et al. 2015)",
          run="muttlab.human.dbleu:study"),
    Study("mutt", "MUTT accuracy per metric, corruption type and number of references (Boag et al. 2016)",
          published=(Published("mutt_accuracy", "MUTT accuracy, Boag et al. 2016, Tables 4-7",
                               "muttlab.human.reproduce:measure_mutt_accuracy"),)),
    Study("reval", "ReVal models' Pearson r with SICK relatedness (Tai et al. 2015)",
          published=(Published("sick_relatedness", "SICK relatedness Pearson r, Tai et al. 2015, Table 3",
                               "muttlab.human.reproduce:measure_tai"),)),
    # Meta-evaluated with `muttlab meta-eval mqm-ted:<pair>` (muttlab.meta); its pairs are en-de and zh-en.
    Study("mqm-ted", "Expert MQM judgments of WMT21 TED talks, en-de and zh-en (Freitag et al., TACL 2021): "
                     "metrics meta-evaluated with `muttlab meta-eval mqm-ted:en-de`",
          published=(Published("mqm_ted_system", "TED system-level MQM, Freitag et al. 2021 "
                                                 "(google/wmt-mqm-human-evaluation README)",
                               "muttlab.meta.mqm:measure_published"),)),
)


def load(path: str) -> Callable:
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def runnable() -> tuple[str, ...]:
    """The studies with a computation of their own, in registry order."""
    return tuple(s.name for s in STUDIES if s.run is not None)


def get(name: str) -> Study:
    for study in STUDIES:
        if study.name == name:
            return study
    raise MuttlabError(f"unknown study {name!r}; choose from {', '.join(runnable())}")


def published() -> dict[str, Published]:
    """Every published study a registered study measures, by its name in published.csv."""
    return {p.name: p for study in STUDIES for p in study.published}

"""The Playground's scores and what the page makes of them, kept for the whole server by what was scored (the
process cache's ``playground`` region), so that a link to a form someone has scored shows its results at once while
a link to a new one waits for the Score button."""
from __future__ import annotations

from typing import Callable, TypeVar

import pandas as pd

from muttlab.dashboard.services.core import is_memoised, memoised, score_sentences
from muttlab.api import installed_state
from muttlab.settings import Settings

T = TypeVar("T")


def _key(settings: Settings, metrics: tuple[str, ...], candidates: tuple[str, ...],
         references: tuple[str, ...]) -> tuple:
    return ("playground", settings, installed_state(settings.model_dir), metrics, candidates, references)


def playground_scores(settings: Settings, metrics: tuple[str, ...], candidates: tuple[str, ...],
                      references: tuple[str, ...]) -> pd.DataFrame:
    """:func:`~muttlab.dashboard.services.core.score_sentences`, kept in the server's ``playground`` region."""
    return memoised(_key(settings, metrics, candidates, references),
                    lambda: score_sentences(settings, metrics, candidates, references), kept_in="playground")


def playground_judged(settings: Settings, metrics: tuple[str, ...], candidates: tuple[str, ...],
                      references: tuple[str, ...], labels: tuple[str, ...], compute: Callable[[], T]) -> T:
    """``compute()``, what the page makes of :func:`playground_scores` of these and the corruptions ``labels`` (the
    verdicts, their heatmap), kept in the server's ``playground`` region by the same key: a visitor opening the
    Playground on its example, or a link to a form this server has scored, gets it without judging and drawing
    again (the heatmap alone was a fifth of the page's run)."""
    return memoised(("playground-judged", *_key(settings, metrics, candidates, references)[1:], labels), compute,
                    kept_in="playground")


def playground_scored(settings: Settings, metrics: tuple[str, ...], candidates: tuple[str, ...],
                      references: tuple[str, ...]) -> bool:
    """Whether :func:`playground_scores` of these has been computed on this server (nothing is computed)."""
    return is_memoised(_key(settings, metrics, candidates, references), kept_in="playground")

"""The robustness profiles of the default metrics as they ship (``profiles.json``), so that a profile page opens
at once and two of them compare without scoring anything (written by ``scripts/precompute_profiles.py`` with
:func:`muttlab.api.profile` on the real data, under the default rules).

Each :class:`~muttlab.profile.result.Profile` holds derived numbers only: accuracies with their intervals per
MUTT cell, DEMETR perturbation and severity, MSLC24-B edge case, the MQM statistics, and every trial's
pass/fail as packed bits (what a comparison pairs with McNemar's test); no sentence and no score.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from muttlab.errors import DataError
from muttlab.profile.outcomes import data_files as suite_files
from muttlab.profile.result import Profile
from muttlab.snapshots import meta_eval

# The metrics whose profiles ship: those whose per-output MQM scores ship too.
SHIPPED = meta_eval.SCORED
CODE_MODULES = ("muttlab.profile.build", "muttlab.profile.outcomes", "muttlab.profile.mslc", "muttlab.profile.result",
                "muttlab.suites.mslc",
                "muttlab.engine.verdict", "muttlab.engine.accuracy", "muttlab.suites.contrastive",
                *meta_eval.CODE_MODULES)


@dataclass(frozen=True)
class Profiles:
    profiles: dict[str, Profile]

    @property
    def metrics(self) -> list[str]:
        return list(self.profiles)


def data_files(root: Path) -> list[str]:
    """The unit-test suites' files (MUTT, DEMETR, MSLC24-B) and the TED MQM files, relative to the data dir."""
    return sorted({f for suite in ("mutt", "demetr", "mslc") for f in suite_files(root, suite)}
                  | set(meta_eval.data_files(root)))


def to_document(content: Profiles) -> dict:
    return {"profiles": {metric: profile.to_dict() for metric, profile in content.profiles.items()}}


def parse(document: dict, where: str) -> Profiles:
    try:
        profiles = {str(m): Profile.from_dict(p, f"the profile of {m}") for m, p in document["profiles"].items()}
    except DataError as exc:  # the snapshot module names the file and how to write it again
        raise ValueError(str(exc)) from None
    wrong = [m for m, p in profiles.items() if p.metric != m]
    if wrong:
        raise ValueError(f"the profile under {wrong[0]!r} is another metric's")
    return Profiles(profiles)

"""The registry of studies: every entry resolves, and a study registered once is found by the API,
`muttlab correlate` and `muttlab reproduce` with nothing else edited."""
from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from muttlab import api
from muttlab.cli import main
from muttlab.errors import MuttlabError
from muttlab.human import reproduce as rp
from muttlab.human import studies
from muttlab.settings import Settings


@dataclass
class LengthStudy:
    table: pd.DataFrame


def length_study(settings: Settings, registry=None, progress=None, words: int = 3) -> LengthStudy:
    """A study outside the package: how many of ``words`` candidates' lengths it lists."""
    return LengthStudy(pd.DataFrame({"words": range(1, words + 1), "letters": [4 * n for n in range(1, words + 1)]}))


def measure_length(settings: Settings, rows: pd.DataFrame, registry, progress) -> dict:
    return {i: (float(len(metric)), "") for i, metric in rows["metric"].items()}


LENGTH = studies.Study("length", "Sentence lengths", run=f"{__name__}:length_study",
                       published=(studies.Published("length_numbers", "Lengths, a paper", f"{__name__}:measure_length"),))


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setattr(studies, "STUDIES", studies.STUDIES + (LENGTH,))


def test_every_entry_resolves_and_names_are_unique():
    names = [s.name for s in studies.STUDIES]
    published = [p.name for s in studies.STUDIES for p in s.published]
    assert len(set(names)) == len(names) and len(set(published)) == len(published)
    for study in studies.STUDIES:
        if study.run is not None:
            assert callable(study.runner()), study.name
        for entry in study.published:
            assert callable(studies.load(entry.measure)), entry.name
    assert set(studies.runnable()) == {"flickr8k", "sick", "dbleu"}


def test_a_study_without_a_computation_of_its_own_is_a_clear_error(sample_settings):
    with pytest.raises(MuttlabError, match="'mutt' has no computation of its own; choose from flickr8k, sick, dbleu"):
        api.correlate(sample_settings, "mutt")
    with pytest.raises(MuttlabError, match="unknown study 'nope'"):
        api.correlate(sample_settings, "nope")


def test_a_registered_study_runs_through_the_api(registered, sample_settings):
    study = api.correlate(sample_settings, "length", words=4)
    assert list(study.table["letters"]) == [4, 8, 12, 16]
    assert LENGTH in api.studies()


def test_a_registered_study_is_a_correlate_subcommand(registered, capsys):
    assert main(["correlate", "length", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"table": [{"words": w, "letters": 4 * w} for w in (1, 2, 3)]}


def test_the_correlate_help_lists_each_runnable_study(registered, capsys):
    assert main(["correlate", "--help"]) == 0
    listed = {line.split()[0] for line in capsys.readouterr().out.splitlines() if line.startswith(" " * 4)
              and not line.startswith(" " * 5)}
    assert listed == {study.name for study in api.studies() if study.run is not None} == {*studies.runnable()}
    assert "length" in listed


def test_reproduce_measures_a_registered_study(registered, tmp_path):
    (tmp_path / "published").mkdir()
    pd.DataFrame([{"study": "length_numbers", "source": "a paper", "metric": "BLEU-4", "subset": "", "refs": "",
                   "rule": "", "statistic": "pearson_r", "value": 6.01}]).to_csv(tmp_path / "published" /
                                                                                   "published.csv", index=False)
    report = rp.reproduce(Settings(data_dir=tmp_path, cache_dir=tmp_path / "cache"), "length_numbers")
    row = report.frame.iloc[0]
    assert row["measured"] == 6.0 and row["published"] == 6.01 and bool(row["within"])
    assert np.isclose(row["difference"], -0.01)

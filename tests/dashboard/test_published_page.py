"""Published vs measured: the frame of muttlab.api.reproduce, per study, with the tolerance verdicts."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from muttlab import api
from muttlab.dashboard import services
from tests.dashboard.conftest import open_page, shown_errors

# Two published numbers of MUTT Table 2 style and one of ΔBLEU, as the report returns them.
FRAME = pd.DataFrame([
    {"study": "MUTT", "source": "Boag et al. 2016, Table 2", "metric": "BLEU-4", "subset": "neg_subj", "refs": 5,
     "published": 61.0, "measured": 60.4, "difference": -0.6, "tolerance": 2.0, "within": True, "reason": ""},
    {"study": "MUTT", "source": "Boag et al. 2016, Table 2", "metric": "TERp", "subset": "passive", "refs": 5,
     "published": 70.0, "measured": 55.0, "difference": -15.0, "tolerance": 2.0, "within": False,
     "reason": "TERp paraphrase table differs"},
    {"study": "ΔBLEU", "source": "Galley et al. 2015, Table 3", "metric": "DeltaBLEU", "subset": "units", "refs": 4,
     "published": 0.51, "measured": 0.50, "difference": -0.01, "tolerance": 0.05, "within": True, "reason": ""},
])


@dataclass
class FakeReport:
    frame: pd.DataFrame


def test_published_numbers_per_study_with_verdicts(app_env, monkeypatch):
    monkeypatch.setattr(services, "reproduce_available", lambda: True)
    monkeypatch.setattr(api, "reproduce", lambda settings, **options: FakeReport(FRAME))
    # Without shipped numbers (a build without data/results) the page waits for the server's own, on demand.
    monkeypatch.setattr(services, "shipped_reproduction", lambda: None)
    at = open_page("published")
    assert not shown_errors(at)
    assert not at.metric
    at.button(key="pub-recompute").click().run()
    assert not shown_errors(at)
    assert any("Measured on this server's data" in c.value for c in at.caption)
    shown = {m.label: m.value for m in at.metric}
    assert shown == {"published numbers": "3", "within tolerance": "2", "outside": "1"}
    assert [s.value for s in at.subheader] == ["MUTT", "ΔBLEU"]
    mutt = at.dataframe[0].value
    assert mutt["reason"].tolist() == ["", "TERp paraphrase table differs"]
    at.toggle(key="pub-off").set_value(True).run()
    assert [d.value["metric"].tolist() for d in at.dataframe] == [["TERp"]]
    assert at.query_params["off"] in ("1", ["1"])


def test_without_the_reproduction_module_the_page_says_so(app_env, monkeypatch):
    monkeypatch.setattr(services, "reproduce_available", lambda: False)
    at = open_page("published")
    assert not shown_errors(at)
    assert any("not available" in w.value for w in at.warning)
    # The footer is on every page: version and the datasets' licences.
    footer = " ".join(c.value for c in at.caption)
    assert "muttlab " in footer and "CC BY-NC-SA 3.0" in footer and "Hodosh" in footer

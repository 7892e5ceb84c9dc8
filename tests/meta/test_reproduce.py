"""The TED system-level MQM table in `muttlab reproduce`, measured from the judgment files."""
from __future__ import annotations

from muttlab.cli import main
from muttlab.human import reproduce as rp
from muttlab.human import studies


def test_the_ted_table_is_reproduced(meta_settings):
    report = rp.reproduce(meta_settings, "mqm_ted_system")
    frame = report.frame
    # 14 en-de and 15 zh-en rated outputs (data README), each within 0.01 of the README of
    # google/wmt-mqm-human-evaluation (data/published/mqm_ted_system.csv).
    assert len(frame) == 29 and frame["within"].all() and (frame["tolerance"] == 0.01).all()
    assert report.summary() == "29 within tolerance of 29 computed"
    shown = report.display().set_index("subset")
    assert shown.loc["en-de:eTranslation", "published"] == "1.96" and shown.loc["en-de:eTranslation", "measured"] == "1.97"
    assert studies.get("mqm-ted").published[0].name == "mqm_ted_system"


def test_reproduce_on_the_command_line(meta_settings, monkeypatch, capsys):
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(meta_settings.cache_dir))
    assert main(["reproduce", "--data-dir", str(meta_settings.data_dir), "--studies", "mqm_ted_system",
                 "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert "zh-en:ref-A" in out and "mqm_per_segment" in out

"""The new surfaces of the robustness profile and the comparison of tie rules, attacked by whoever can reach
them — anyone with the command line or the API, and whoever can write a shipped results file:

* ``muttlab profile METRIC [--vs OTHER] [--suites ...]``: an unknown metric, a path or an import path where a
  name belongs (never read, never imported), markup in a name (escaped in every format);
* ``muttlab compare-rules RULE``: an unknown study or pair and a path instead of a name are refused before any
  file is read; a calibration that is not informative judges nothing and is listed with its reason;
* the ``meta_eval`` and ``profiles`` snapshot files: a tampered file is a DataError saying how to regenerate it
  (never a crash, never a huge allocation); a stale one is not served as this server's numbers.
"""
from __future__ import annotations

import base64
import json
import subprocess
import time
import zlib
from pathlib import Path

import pytest

from muttlab import api
from muttlab.errors import DataError, InvalidArgument, MuttlabError, UnknownMetric
from muttlab.resources.bundled import results_dir
from muttlab.snapshots import KINDS, load
from tests.conftest import DATA_DIR, run_muttlab

BAD_NAMES = ["NoSuchMetric", "../../../etc/passwd", "/etc/passwd", "~/.ssh/id_rsa", "C:\\Windows\\win.ini",
             "<script>alert(1)</script>", "$(id)", "\\input{/etc/passwd}", "chrF|TER", "x" * 5000]


def muttlab(*args: str, tmp_path: Path, **env) -> subprocess.CompletedProcess:
    base = {"MUTTLAB_DATA_DIR": str(DATA_DIR), "MUTTLAB_CACHE_DIR": str(tmp_path / "cache"), "MUTTLAB_WORKERS": "1"}
    return run_muttlab(*args, env={**base, **env}, cwd=tmp_path)


def refused_in_one_line(done: subprocess.CompletedProcess) -> bool:
    return (done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
            and "Traceback" not in done.stderr and done.stderr.startswith("muttlab: error:"))


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_bad_metric_name_is_refused_in_one_line(name, tmp_path):
    for args in (["profile", name], ["profile", "chrF", "--vs", name]):
        done = muttlab(*args, "--format", "json", tmp_path=tmp_path)
        assert refused_in_one_line(done), (args, done.stderr[-300:])
        assert "unknown metric" in done.stderr or "must be" in done.stderr


def test_an_import_path_where_a_name_belongs_is_never_imported(tmp_path):
    marker = tmp_path / "imported"
    (tmp_path / "trap.py").write_text(f"open({str(marker)!r}, 'w').write('x')\nclass Metric: pass\n")
    done = muttlab("profile", "trap:Metric", tmp_path=tmp_path, PYTHONPATH=str(tmp_path))
    assert refused_in_one_line(done) and "unknown metric 'trap:Metric'" in done.stderr
    assert not marker.exists()


def test_the_api_refuses_what_is_not_a_metric_name(sample_settings):
    for value in (None, 5, b"chrF", ["chrF"], "", " "):
        with pytest.raises(InvalidArgument, match="profile.*metric"):
            api.profile(sample_settings, value)
    with pytest.raises(UnknownMetric):
        api.profile(sample_settings, "../../../etc/passwd")
    with pytest.raises(InvalidArgument, match="a profile reads mutt, demetr, mslc"):
        api.profile(sample_settings, "chrF", suites=["../../etc/passwd"])
    with pytest.raises(InvalidArgument, match="compare two different metrics"):
        api.compare_profiles(sample_settings, "chrF", "chrF")


def test_markup_in_a_metric_name_is_escaped_in_every_format(tmp_path):
    name = "<img src=x onerror=alert(1)>|**x**|\\input{/etc/passwd}"
    (tmp_path / "hostile.py").write_text(
        "import numpy as np\nfrom muttlab.metrics.base import Metric\n"
        f"class Hostile(Metric):\n    name = {name!r}\n    version = '1'\n"
        "    def _score(self, candidates, references):\n"
        "        return np.array([float(len(c)) for c in candidates])\n")
    common = ["--metric-path", "hostile:Hostile", "--suites", "mslc"]
    markdown = muttlab("profile", name, *common, "--format", "markdown", tmp_path=tmp_path,
                       PYTHONPATH=str(tmp_path))
    assert markdown.returncode == 0, markdown.stderr[-500:]
    assert "<img" not in markdown.stdout and "&lt;img src=x onerror=alert(1)&gt;\\|" in markdown.stdout
    latex = muttlab("profile", name, *common, "--format", "latex", tmp_path=tmp_path, PYTHONPATH=str(tmp_path))
    assert latex.returncode == 0 and "\\input{" not in latex.stdout
    assert "\\textbackslash input\\{/etc/passwd\\}" in latex.stdout


@pytest.mark.parametrize("rule, reason", [
    ("calibrated:wmt99:zh-en", "unknown study 'wmt99'"),
    ("calibrated:mqm-ted:fr-en", "unknown language pair 'fr-en' of mqm-ted"),
    ("calibrated:../../etc/passwd:zh-en", "plain name"), ("calibrated:mqm-ted:/etc/passwd", "plain name"),
    ("calibrated:mqm-ted", "calibrated:<study>:<pair>"), ("/etc/passwd", "give 'exact'"),
])
def test_a_rule_that_cannot_be_used_is_refused_before_anything_is_read(rule, reason, tmp_path):
    done = muttlab("compare-rules", rule, "--metrics", "chrF", "--suites", "mutt", tmp_path=tmp_path)
    assert refused_in_one_line(done) and reason in done.stderr, done.stderr


def test_a_calibration_that_is_not_informative_judges_nothing(sample_settings, data_dir, tmp_path):
    # en-de's chrF ε ties every pair of the study (data/results/calibrations.json): on a suite of German outputs
    # (where the language would allow it) it is still never used, and the reason is quoted.
    from tests.profile.test_rule_change import german_suite

    settings = sample_settings.with_overrides(data_dir=data_dir)
    result = api.compare_rules(settings, "calibrated:mqm-ted:en-de", ["chrF"], [german_suite(data_dir, tmp_path)])
    assert result.table.empty and result.summary.empty and "chrF" not in result.epsilons
    (reason,) = result.refused["reason"]
    assert "chrF's calibration is not informative (ε = 92.59 ties every one of the 41,262 pairs" in reason


# --------------------------------------------------------------------------- the snapshot files

def _document(kind: str) -> dict:
    return json.loads((results_dir() / KINDS[kind].file).read_text(encoding="utf-8"))


def _bomb(size: int) -> str:
    return base64.b64encode(zlib.compress(b"\0" * size, 9)).decode()


def _tamper_profiles(document: dict, how: str) -> None:
    chrf = document["content"]["profiles"]["chrF"]
    if how == "trials":
        chrf["trials"]["mutt"]["n"] = 10 ** 12
    elif how == "bits":
        chrf["trials"]["mslc"]["passed"] = "!!not base64!!"
    elif how == "bomb":  # 200 MB of zeros in 200 kB: inflated no further than the trials it claims
        chrf["trials"]["mslc"]["cell"] = _bomb(200 * 1024 * 1024)
    elif how == "other metric":
        document["content"]["profiles"]["chrF"] = document["content"]["profiles"]["TER"]
    elif how == "rows":
        chrf["sections"]["mutt"]["rows"][0].append(1)
    elif how == "kind":
        document["kind"] = "grid"


def _tamper_meta(document: dict, how: str) -> None:
    content = document["content"]
    if how == "shape":
        content["scores"]["zh-en"]["chrF"]["shape"] = [10 ** 9, 10 ** 9]
    elif how == "short":
        content["scores"]["zh-en"]["chrF"]["float64"] = base64.b64encode(zlib.compress(b"\0" * 80)).decode()
    elif how == "bomb":
        content["gold"]["en-de"]["float64"] = _bomb(200 * 1024 * 1024)
    elif how == "foreign":
        content["scores"]["en-de"]["METEOR-1.5"] = content["scores"]["zh-en"]["METEOR-1.5"]
    elif how == "format":
        content["results"]["en-de"]["format"] = 1


@pytest.mark.parametrize("kind, how", [("profiles", h) for h in ("trials", "bits", "bomb", "other metric", "rows",
                                                                  "kind")]
                         + [("meta_eval", h) for h in ("shape", "short", "bomb", "foreign", "format")])
def test_a_tampered_snapshot_is_a_data_error_saying_how_to_regenerate(kind, how, tmp_path):
    document = _document(kind)
    (_tamper_profiles if kind == "profiles" else _tamper_meta)(document, how)
    path = tmp_path / KINDS[kind].file
    path.write_text(json.dumps(document), encoding="utf-8")
    began = time.perf_counter()
    with pytest.raises(DataError) as refused:
        load(KINDS[kind], path)
    assert time.perf_counter() - began < 30  # refused as read, not after inflating hundreds of megabytes
    assert KINDS[kind].script in str(refused.value)


def test_a_stale_shipped_profile_is_not_served_as_this_servers(tmp_path, monkeypatch, sample_settings):
    folder = tmp_path / "results"
    folder.mkdir()
    for kind in KINDS.values():
        (folder / kind.file).write_bytes((results_dir() / kind.file).read_bytes())
    document = _document("profiles")
    document["stamp"]["rules"] = "tol:0.15|tie:exact"  # judged under other rules than this server's
    (folder / "profiles.json").write_text(json.dumps(document), encoding="utf-8")
    monkeypatch.setattr("muttlab.snapshots.snapshot.results_dir", lambda: folder)
    shipped = api.snapshot("profiles")
    assert api.snapshot_differences(sample_settings, shipped, signatures={}) == [
        "judged under other rules: tol:0.15|tie:exact, this server's are tol:0.15|tie:1e-9"]
    profile = api.profile(sample_settings, "chrF")
    assert profile != shipped.content.profiles["chrF"] and profile.origin["mutt"].startswith("shipped accuracy grid")
    assert set(profile.unavailable) == {"demetr", "mslc"}  # no data dir here: not computed, and said so


def test_a_profile_of_markup_never_reaches_a_page_unescaped_through_a_link():
    # No page reads a profile yet; the API gives names back as data, and every front-end escapes them (the CLI
    # above). The JSON form keeps the name exactly, for the page to escape as it draws.
    from muttlab.profile.result import Profile
    profile = Profile("<b>x</b>", "sig", "rules")
    assert Profile.from_dict(json.loads(json.dumps(profile.to_dict()))).metric == "<b>x</b>"


def test_compare_rules_refuses_bad_arguments_naming_them(sample_settings):
    with pytest.raises(InvalidArgument, match="rule"):
        api.compare_rules(sample_settings, None)
    with pytest.raises(InvalidArgument, match="suites"):
        api.compare_rules(sample_settings, "exact", ["chrF"], [])
    with pytest.raises(MuttlabError, match="no data dir"):
        api.compare_rules(sample_settings, "exact", ["chrF"], ["demetr"])

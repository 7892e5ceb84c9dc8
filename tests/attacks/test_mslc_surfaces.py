"""MSLC24-B on the Challenge sets and Drill-down pages, attacked by an anonymous visitor of the read-only demo
(AppTest, ``MUTTLAB_READ_ONLY=1``): the four files of a pair uploaded together (mismatched lines, bad types rows,
not UTF-8, markup in the texts, over-size files, too many pairs, a crafted pair name), and the links' ``file=``
(a path out of the data dir, an absolute one, a symlink out of it as the folder or as one of its files) and
``format=`` (unknown or crafted). Each gets a message on the page naming what is wrong — never a traceback,
never a server path, never a command-line flag — and nothing outside the data dir is read or scored."""
from __future__ import annotations

import shutil

import pytest

import muttlab.suites
from muttlab.dashboard.report import build_report
from muttlab.errors import MuttlabError
from muttlab.settings import Limits, load_settings, set_limits
from muttlab.suites.mslc import FILES
from tests.attacks.test_links import markdown_values, page_text
from tests.dashboard.conftest import (app_env, html_bodies, html_start_tags, open_link, open_page,  # noqa: F401
                                      press, trial_cards)

SECRET = "TOP SECRET LINE"
MARKUP = '<script>alert("x")</script> **bold** [link](http://evil.example) <img src=x onerror=alert(1)>'
REAL = ("mslc", "2024", "data", "MSLC-B", "en-de")


@pytest.fixture
def demo(app_env, monkeypatch, data_dir, tmp_path):
    """The read-only demo on a data dir holding en-de's four real files (``MSLC-B/en-de``), a folder whose
    types.tsv is a symlink to a secret outside, a symlink to a folder outside, and that outside folder: a
    readable MSLC pair whose texts are the secret."""
    monkeypatch.setenv("MUTTLAB_READ_ONLY", "1")
    outside = tmp_path / "outside" / "en-de"
    outside.mkdir(parents=True)
    for name in FILES[:3]:
        (outside / name).write_text(f"{SECRET}\n", encoding="utf-8")
    (outside / "types.tsv").write_text("1\tmix-language\ts-sent\tr-sent\tmix-sent\n", encoding="utf-8")
    root = tmp_path / "data"
    pair = root / "MSLC-B" / "en-de"
    pair.mkdir(parents=True)
    for name in FILES:
        shutil.copy(data_dir.joinpath(*REAL, name), pair / name)
    leaky = root / "leaky" / "en-de"
    leaky.mkdir(parents=True)
    for name in FILES[:3]:
        shutil.copy(pair / name, leaky / name)
    (leaky / "types.tsv").symlink_to(outside / "types.tsv")
    (root / "elsewhere").symlink_to(outside.parent)
    monkeypatch.setenv("MUTTLAB_DATA_DIR", str(root))
    yield root
    set_limits(None)


def _files(root, **changed: bytes) -> list[tuple[str, bytes, str]]:
    """The four files of en-de as an upload, with ``changed`` ones (``hypothesis_txt=...``) replaced."""
    out = []
    for name in FILES:
        data = changed.get(name.replace(".", "_"), (root / "MSLC-B" / "en-de" / name).read_bytes())
        out.append((name, data, "text/plain"))
    return out


def _upload(files, pair: str = "en-de"):
    at = open_page("challenge")
    at.radio(key="ch-source").set_value("upload")
    at.file_uploader(key="ch-upload").set_value(files)
    at.multiselect(key="ch-metrics").set_value(["chrF"])
    at = at.run()
    at.text_input(key="ch-pair").input(pair)
    return at.run()


def _told(at) -> str:
    return " ".join(m.value.replace("\\", "") for m in [*at.error, *at.warning])


def _clean(at, root) -> None:
    """No traceback, no secret, no server path, no command-line flag on the page."""
    shown = page_text(at)
    assert not at.exception
    assert SECRET not in shown and str(root) not in shown and str(root.parent) not in shown
    assert " --" not in _told(at) and "`muttlab" not in _told(at)


def _not_scored(at) -> None:
    assert not [b for b in at.button if b.key == "ch-score"] and not [d for d in at.dataframe
                                                                      if "tau" in d.value.columns]


def _lines(root, name: str) -> list[str]:
    return (root / "MSLC-B" / "en-de" / name).read_text(encoding="utf-8")[:-1].split("\n")


def test_mismatched_line_counts_are_refused_naming_the_file_and_line(demo):
    short = "\n".join(_lines(demo, "hypothesis.txt")[:-5]) + "\n"
    at = _upload(_files(demo, hypothesis_txt=short.encode("utf-8")))
    _clean(at, demo)
    _not_scored(at)
    assert "en-de/hypothesis.txt, line 156: the four files must have one line per segment each" in _told(at)


def test_bad_types_rows_are_listed_by_line_and_the_good_ones_read(demo):
    rows = _lines(demo, "types.tsv")
    rows[4] = "5\tempty-hypothesis"  # two columns
    rows[6] = f"7\t{MARKUP}\ts-sent\tr-sent\tempty"  # a crafted type
    rows[8] = "9\tempty-hypothesis\ts-sent\tr-sent\tr-sent"  # lies: the hypothesis is empty
    at = _upload(_files(demo, types_tsv=("\n".join(rows) + "\n").encode("utf-8")))
    _clean(at, demo)
    problems = next(d.value for d in at.dataframe if "problem" in d.value.columns)
    assert list(problems["line"]) == [5, 7, 9]
    assert "3 malformed row(s) left out" in _told(at)
    assert not any("<script>" in m for m in markdown_values(at))  # the crafted type is a table cell, as text
    # The other lines are read: en-de's 190 pairs (docs/suites.md) less those of the three lines left out.
    whole = muttlab.suites.read_suite(demo / "MSLC-B" / "en-de").suite.trials
    kept = 190 - sum(t.id.rsplit("/", 1)[1] in ("5", "7", "9") for t in whole)
    assert any(f"{kept} pairs read as MSLC24-B" in b for b in html_bodies(at))


def test_files_that_are_not_utf8_are_refused_naming_the_file_and_line(demo):
    source = (demo / "MSLC-B" / "en-de" / "source.txt").read_bytes()
    broken = source.replace(b"\n", b"\n\xff", 3)[: len(source) + 3]
    at = _upload(_files(demo, source_txt=broken))
    _clean(at, demo)
    _not_scored(at)
    assert "en-de/source.txt, line 2: not valid UTF-8 (byte 0xff)" in _told(at)


def test_markup_in_the_texts_stays_text_on_the_drilldown(demo):
    hypotheses = _lines(demo, "hypothesis.txt")
    types = _lines(demo, "types.tsv")
    line = next(i for i, row in enumerate(types) if row.split("\t")[1] == "wrong-language")
    hypotheses[line] = MARKUP
    at = press(_upload(_files(demo, hypothesis_txt=("\n".join(hypotheses) + "\n").encode("utf-8"))), "ch-score")
    _clean(at, demo)
    link = next(d.value for d in at.dataframe if "tau" in d.value.columns).set_index("phenomenon").loc[
        "en-de/wrong-language", "pairs"]
    query = dict(part.split("=", 1) for part in link.partition("?")[2].split("&"))
    from urllib.parse import unquote_plus
    opened = open_link("drilldown", {k: unquote_plus(v) for k, v in query.items()} | {"show": "all", "q": "alert"})
    _clean(opened, demo)
    cards = trial_cards(opened)
    assert len(cards) == 1 and cards[0]["trial"] == f"mslc/en-de/wrong-language/{line + 1}"
    bodies = "\n".join(html_bodies(opened))
    assert "&lt;script&gt;" in bodies
    tags = [tag for body in html_bodies(opened) for tag, _ in html_start_tags(body)]
    assert "script" not in tags and "img" not in tags
    assert not any("<script" in m or "](http://evil" in m for m in markdown_values(opened))


def test_over_size_files_are_refused_before_they_are_read(demo, monkeypatch):
    set_limits(Limits(max_upload_mb=1))
    read = []
    monkeypatch.setattr(muttlab.suites, "read_suite", lambda *a, **k: read.append(1))
    big = "\n".join(["x" * 7_000] * 160) + "\n"  # 1.07 MiB, the four files together over 1 MiB
    at = _upload(_files(demo, reference_txt=big.encode("utf-8")))
    _clean(at, demo)
    _not_scored(at)
    assert read == []
    assert "the set has 1.1 MiB, over the limit of 1" in _told(at)


def test_too_many_pairs_are_refused_before_they_are_read(demo, monkeypatch):
    set_limits(Limits(max_pairs=100))
    read = []
    monkeypatch.setattr(muttlab.suites, "read_suite", lambda *a, **k: read.append(1))
    at = _upload(_files(demo))
    _clean(at, demo)
    _not_scored(at)
    assert read == []
    assert "the set has 160 pairs, over the limit of 100" in _told(at)


@pytest.mark.parametrize("pair, message", [
    ("../../etc", "is not a language pair"),
    ("<b>en</b>-de", "is not a language pair"),
    ("en-de/../../x", "is not a language pair"),
])
def test_a_crafted_pair_name_is_refused(demo, pair, message):
    at = _upload(_files(demo), pair)
    _clean(at, demo)
    _not_scored(at)
    assert message in _told(at)
    assert not any("<b>" in m for m in markdown_values(at))


def test_files_that_are_not_a_pairs_are_refused(demo):
    at = _upload([*_files(demo)[:3], ("notes.txt", b"x\n", "text/plain")])
    _clean(at, demo)
    _not_scored(at)
    assert "en-de/notes.txt: is not one of MSLC24-B's files" in _told(at)


@pytest.mark.parametrize("file, message", [
    ("../../etc", "not a path relative to the data dir"),
    ("/etc", "not a path relative to the data dir"),
    ("elsewhere", "leads outside the data dir"),  # a symlinked folder
    ("elsewhere/en-de", "leads outside the data dir"),
    ("leaky", "leads outside the data dir"),  # a folder whose types.tsv is a symlink out
    ("leaky/en-de", "leads outside the data dir"),
    ("MSLC-B/de", "no such file"),
])
def test_a_file_link_that_may_not_be_read_gets_a_message(demo, monkeypatch, file, message):
    read = []
    monkeypatch.setattr(muttlab.suites, "read_suite", lambda *a, **k: read.append(1))
    at = open_link("challenge", {"file": file, "format": "mslc24-b", "metrics": "chrF"})
    _clean(at, demo)
    _not_scored(at)
    assert message in _told(at) and read == []
    drill = open_link("drilldown", {"suite": f"file:{file}", "format": "mslc24-b", "metric": "chrF",
                                    "corruption": "en-de/mix-language"})
    _clean(drill, demo)
    assert message in _told(drill) and read == []
    with pytest.raises(MuttlabError) as refused:
        build_report(load_settings(), f"page=drilldown&metric=chrF&corruption=x&format=mslc24-b&suite=file:{file}")
    assert SECRET not in str(refused.value) and str(demo) not in str(refused.value)


@pytest.mark.parametrize("value", ["mslc24-c", "../../etc/passwd", "<script>x</script>", "mslc24-b\x00",
                                   "trials-jsonl", "M" * 5_000])
def test_an_unknown_or_crafted_format_is_left_out_of_the_link(demo, value):
    at = open_link("challenge", {"file": "MSLC-B", "format": value, "metrics": "chrF"})
    _clean(at, demo)
    assert "Left out of this link: format=" in _told(at)
    assert "<script>" not in " ".join(markdown_values(at)) and "M" * 1_000 not in page_text(at)
    # The rest of the link still opens: the folder, told from what it is.
    assert any("MSLC-B: 190 pairs read as MSLC24-B" in b for b in html_bodies(at))


def test_a_folder_forced_into_a_file_format_is_refused_in_the_pages_words(demo):
    at = open_link("challenge", {"file": "MSLC-B", "format": "wmt-tsv", "metrics": "chrF"})
    _clean(at, demo)
    _not_scored(at)
    assert "is a folder of files, read as mslc24-b, not as wmt-tsv" in _told(at)

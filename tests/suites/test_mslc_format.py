"""MSLC24-B as the suite format ``mslc24-b`` (muttlab.suites.mslc): the real data read from its folder, one pair's
folder or its files' bytes gives one trial per edge-case line of types.tsv (counted here with pandas from the data
set's README), and ``muttlab run --suite MSLC-B`` reports it per phenomenon as sacreBLEU's own chrF judges it.
Malformed input is refused naming the file and the line, or left out by line."""
from __future__ import annotations

import json
import re
import shutil
from collections import Counter

import pandas as pd
import pytest
from sacrebleu.metrics import CHRF

from muttlab import api
from muttlab.cli import main
from muttlab.errors import DataError
from muttlab.settings import Limits, set_limits
from muttlab.suites.mslc import EDGE_CASES, FILES

FOLDER = ("mslc", "2024", "data", "MSLC-B")
PAIRS = ("en-de", "en-es", "ja-zh")
COLUMNS = ["SEGID", "GENERAL", "SOURCE", "REFERENCE", "HYPOTHESIS"]


def _mslc(data_dir):
    return data_dir.joinpath(*FOLDER)


def _table(folder):
    """One pair's four files as one frame, read by pandas (every field text: "empty" stays a string)."""
    types = pd.read_csv(folder / "types.tsv", sep="\t", header=None, names=COLUMNS, dtype=str, keep_default_na=False,
                        quoting=3)
    for name in ("source", "reference", "hypothesis"):
        text = (folder / f"{name}.txt").read_text(encoding="utf-8")
        types[name] = text[:-1].split("\n")
    return types


def _expected_counts(data_dir) -> Counter:
    """Per phenomenon: the edge-case lines of each pair's types.tsv, and (README: refB, en-de only) each edge-case
    line whose source and reference a correct-language line shares, once more against that line's hypothesis."""
    counts = Counter()
    for pair in PAIRS:
        table = _table(_mslc(data_dir) / pair)
        edge = table[table["GENERAL"].isin(EDGE_CASES)]
        for kind, n in edge["GENERAL"].value_counts().items():
            counts[f"{pair}/{kind}"] += int(n)
        refb = table[table["GENERAL"] == "correct-language"][["source", "reference"]].drop_duplicates()
        matched = edge.merge(refb, on=["source", "reference"])
        for kind, n in matched["GENERAL"].value_counts().items():
            counts[f"{pair}/{kind} vs refB"] += int(n)
    return counts


def test_the_folder_gives_one_trial_per_edge_case_line(data_dir):
    read = api.read_suite(_mslc(data_dir))
    assert read.format == "mslc24-b" and read.contrastive and not read.problems
    assert Counter(t.corruption for t in read.suite.trials) == _expected_counts(data_dir)
    # The README: 40 empty hypotheses in en-de and en-es, 20 in ja-zh; ten refB sources in en-de.
    assert Counter(t.corruption for t in read.suite.trials)["ja-zh/empty-hypothesis"] == 20
    assert read.target_languages() == ("de", "es", "zh")
    table = _table(_mslc(data_dir) / "en-de")
    trial = next(t for t in read.suite.trials if t.id == "mslc/en-de/untranslated/81")
    row = table.iloc[80]
    assert row["GENERAL"] == "untranslated"
    assert (trial.original, trial.corrupted, trial.references) == (row["reference"], row["hypothesis"],
                                                                    (row["reference"],))
    assert read.sources[trial.id] == row["source"] and read.language(trial.id) == "de"


def test_a_pair_folder_and_the_files_bytes_read_the_same(data_dir):
    whole = api.read_suite(_mslc(data_dir))
    one = api.read_suite(_mslc(data_dir) / "en-de")
    assert one.suite.name == "en-de"
    assert one.suite.trials == [t for t in whole.suite.trials if t.corruption.startswith("en-de/")]
    files = {f"en-de/{name}": (_mslc(data_dir) / "en-de" / name).read_bytes() for name in FILES}
    uploaded = api.read_suite(files, name="en-de")
    assert uploaded.suite.trials == one.suite.trials and uploaded.sources == one.sources
    assert api.read_suite(files, format="mslc24-b", name="en-de").suite.trials == one.suite.trials


def test_the_profile_reads_the_same_trials(data_dir):
    from muttlab.profile.mslc import read_mslc

    read = read_mslc(api.load_settings({"MUTTLAB_DATA_DIR": str(data_dir)}))
    whole = api.read_suite(_mslc(data_dir))
    assert read.suite.trials == whole.suite.trials and read.sources == whole.sources
    assert read.suite.name == "mslc24-b"


def test_run_suite_on_the_folder_is_sacrebleus_chrf_per_phenomenon(data_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["run", "--suite", str(_mslc(data_dir)), "--metrics", "chrF", "--format", "json"]) == 0
    phenomena = pd.DataFrame(json.loads(capsys.readouterr().out)["phenomena"]).set_index("phenomenon")
    # The count made here: sacreBLEU's chrF of both texts against the line's reference; a tie fails.
    chrf = CHRF()
    passed, n = Counter(), Counter()
    for trial in api.read_suite(_mslc(data_dir)).suite.trials:
        better = chrf.sentence_score(trial.original, list(trial.references)).score
        worse = chrf.sentence_score(trial.corrupted, list(trial.references)).score
        passed[trial.corruption] += (better - worse) > 1e-9 * max(1.0, abs(better))
        n[trial.corruption] += 1
    assert set(phenomena.index) == set(n)
    for phenomenon, row in phenomena.iterrows():
        assert (row["n"], row["concordant"]) == (n[phenomenon], passed[phenomenon]), phenomenon
    # chrF gives every text 0 against an empty reference: an empty source and reference is all ties.
    assert phenomena.loc["en-de/empty-source-and-reference", "ties"] == 40


def test_the_cli_names_the_folder_and_its_table(data_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["run", "--suite", str(_mslc(data_dir) / "ja-zh"), "--metrics", "chrF"]) == 0
    out = capsys.readouterr().out
    assert "ja-zh/empty-hypothesis" in out and "ja-zh/mix-language" in out


# --------------------------------------------------------------------------- malformed input

@pytest.fixture
def pair(data_dir, tmp_path):
    """A copy of en-de's four files, to break."""
    folder = tmp_path / "MSLC-B" / "en-de"
    folder.mkdir(parents=True)
    for name in FILES:
        shutil.copy(_mslc(data_dir) / "en-de" / name, folder / name)
    return folder


def _edit(path, change) -> None:
    lines = path.read_text(encoding="utf-8")[:-1].split("\n")
    path.write_text("\n".join(change(lines)) + "\n", encoding="utf-8")


def test_files_of_different_lengths_are_refused_naming_the_file_and_line(pair):
    _edit(pair / "hypothesis.txt", lambda lines: lines[:-2])
    with pytest.raises(DataError) as refused:
        api.read_suite(pair)
    message = str(refused.value)
    assert "en-de/hypothesis.txt, line 159" in message and "160 (source.txt)" in message and "158 (hypothesis.txt)" \
        in message


def test_bad_and_lying_types_rows_are_left_out_by_line(pair):
    def change(lines):
        lines[0] = "1\tempty-hypothesis\ts-sent"  # three columns
        lines[1] = "2\tno-such-type\ts-sent\tr-sent\tempty"
        lines[2] = "3\tempty-hypothesis\ts-sent\tr-sent\tr-sent"  # says the empty hypothesis has text
        return lines
    _edit(pair / "types.tsv", change)
    read = api.read_suite(pair.parent)
    assert [p.line for p in read.problems] == [1, 2, 3]
    assert "expected the 5 tab-separated columns" in read.problems[0].problem
    assert "'no-such-type' is not one of MSLC-B's types" in read.problems[1].problem
    assert "HYPOTHESIS says 'r-sent' but the line of hypothesis.txt is empty" in read.problems[2].problem
    assert all(p.problem.startswith("en-de/types.tsv: ") for p in read.problems)
    assert Counter(t.corruption for t in read.suite.trials)["en-de/empty-hypothesis"] == 40 - 3


def test_the_profile_refuses_a_data_dir_whose_types_lie(pair):
    from muttlab.profile.mslc import FOLDER, read_mslc

    root = pair.parent.parent / "data"
    target = root / FOLDER
    target.parent.mkdir(parents=True)
    shutil.copytree(pair.parent, target)
    for other in ("en-es", "ja-zh"):
        shutil.copytree(pair, target / other)
    _edit(target / "ja-zh" / "types.tsv", lambda lines: lines[:4] + ["5\tnope\ts\tr\th"] + lines[5:])
    with pytest.raises(DataError, match=r"MSLC-B/ja-zh/types.tsv, line 5: GENERAL 'nope'"):
        read_mslc(api.load_settings({"MUTTLAB_DATA_DIR": str(root)}))


@pytest.mark.parametrize("data, message", [
    (b"caf\xe9\n", "en-de/source.txt, line 1: not valid UTF-8 (byte 0xe9)"),
    (b"a\nb", "en-de/source.txt, line 2: the last line does not end with a newline"),
])
def test_undecodable_or_cut_files_are_refused_naming_file_and_line(pair, data, message):
    files = {f"en-de/{name}": (pair / name).read_bytes() for name in FILES}
    files["en-de/source.txt"] = data
    with pytest.raises(DataError, match=re.escape(message)):
        api.read_suite(files)


@pytest.mark.parametrize("change, message", [
    (lambda f: {**f, "en-de/notes.txt": b"x\n"}, "en-de/notes.txt: is not one of MSLC24-B's files"),
    (lambda f: {k: v for k, v in f.items() if not k.endswith("types.tsv")}, "en-de: lacks types.tsv"),
    (lambda f: {k.replace("en-de", "../etc"): v for k, v in f.items()}, "'../etc': is not a language pair"),
    (lambda f: {}, "no MSLC24-B file"),
])
def test_files_that_are_not_a_pair_are_refused(pair, change, message):
    files = {f"en-de/{name}": (pair / name).read_bytes() for name in FILES}
    with pytest.raises(DataError, match=message):
        api.read_suite(change(files), name="upload")


def test_a_folder_format_and_a_file_format_are_not_mixed(pair):
    with pytest.raises(DataError, match="is a folder of files, read as mslc24-b, not as wmt-tsv"):
        api.read_suite(pair, format="wmt-tsv")
    with pytest.raises(DataError, match="is one file, but mslc24-b is read from a folder"):
        api.read_suite((pair / "types.tsv").read_bytes(), format="mslc24-b")
    with pytest.raises(DataError, match="holds no MSLC24-B pair"):
        api.read_suite(pair.parent.parent)  # a folder with no pair folder in it


def test_more_lines_than_the_pair_limit_are_refused_before_any_is_read(pair):
    set_limits(Limits(max_pairs=100))
    try:
        with pytest.raises(DataError) as refused:
            api.read_suite(pair)
    finally:
        set_limits(None)
    assert "en-de/types.tsv, line 101: the set has 160 pairs, over the limit of 100" in str(refused.value)

"""What a file of judgments can make the meta-evaluation's readers do. Each test is one attack by a visitor
with no role, through the surface a page or the command line hands such input to: the bytes of an uploaded
file (:func:`muttlab.meta.generic.parse_judgments`), a path or a study name given to
:func:`muttlab.api.meta_evaluate`, an MQM pair's folder. What must hold instead: a DataError (or
InvalidArgument) naming the problem, before any heavy work, and nothing read outside what was named."""
from __future__ import annotations

import json
import os

import pytest

from muttlab import api
from muttlab.errors import DataError, InvalidArgument, MuttlabError
from muttlab.meta import generic, mqm
from muttlab.settings import Limits, set_limits

ROW = {"item": "1", "system": "A", "hypothesis": "a cat", "reference": "a cat", "score": 0.0}


def jsonl(*rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")


def test_a_huge_field_is_refused_by_the_limits():
    big = "word " * 2_000_000  # 10 MB in one field
    with pytest.raises(DataError, match=r"line 1: field hypothesis has 10,000,000 characters, over the limit"):
        generic.parse_judgments(jsonl({**ROW, "hypothesis": big}, {**ROW, "system": "B"}), "up.jsonl")
    tsv = f"item\tsystem\thypothesis\treference\tscore\n1\tA\ta\t{big}\t1\n".encode()
    with pytest.raises(DataError, match=r"line 2: field reference has 10,000,000 characters"):
        generic.parse_judgments(tsv, "up.tsv", ".tsv")


def test_deep_nesting_is_a_data_error_not_a_recursion_error():
    deep = b'{"item": ' + b"[" * 200_000 + b"]" * 200_000 + b"}\n"
    with pytest.raises(DataError, match=r"up.jsonl, line 1: malformed JSON"):
        generic.parse_judgments(deep, "up.jsonl")
    with pytest.raises(DataError, match=r"line 1: field item: must be a string, got list"):
        generic.parse_judgments(jsonl({**ROW, "item": [[["x"]]]}), "up.jsonl")


@pytest.mark.parametrize("raw,message", [
    (b'{"item": "1", "system": "A", "hypothesis": "a", "reference": "a", "score": 1e999}\n', "not a finite number"),
    (b'{"item": "1", "system": "A", "hypothesis": "a", "reference": "a", "score": NaN}\n', "not a finite number"),
    (b'{"item": "1", "system": "A", "hypothesis": "a", "reference": "a", "score": -Infinity}\n', "not a finite"),
    (b'{"item": "1", "system": "A", "hypothesis": "a", "reference": "a", "score": ' + b"9" * 5000 + b"}\n",
     "malformed JSON"),
    (b'{"item": ' + b"9" * 5000 + b', "system": "A"}\n', "malformed JSON"),
])
def test_huge_numbers_are_refused(raw, message):
    with pytest.raises(DataError, match=message):
        generic.parse_judgments(raw, "up.jsonl")


def test_finite_scores_too_large_to_subtract_are_refused():
    rows = [{**ROW, "system": "A", "score": 1e308}, {**ROW, "system": "B", "score": -1e308}]
    with pytest.raises(DataError, match=r"line 1: field score: 1e\+308 is outside ±1e\+15; rescale the scores"):
        generic.parse_judgments(jsonl(*rows), "up.jsonl")


@pytest.mark.parametrize("data", [
    "é".encode("latin-1") + jsonl(ROW),
    json.dumps(ROW).encode("utf-16"),
    b"\xff\xfe\x00\x00",
])
def test_wrong_encodings_are_named(data):
    with pytest.raises(DataError, match=r"up.jsonl, line 1: not valid UTF-8"):
        generic.parse_judgments(data, "up.jsonl")


def test_a_lone_surrogate_is_not_text():
    raw = b'{"item": "1", "system": "A", "hypothesis": "\\ud800", "reference": "a", "score": 1}\n'
    with pytest.raises(DataError, match=r"line 1: field hypothesis: holds a lone surrogate \(U\+D800\)"):
        generic.parse_judgments(raw, "up.jsonl")


def test_an_upload_over_the_size_and_row_limits_is_refused_before_parsing():
    try:
        set_limits(Limits(max_upload_mb=1))
        with pytest.raises(DataError, match=r"over the limit of 1 MiB|MUTTLAB_MAX_UPLOAD_MB"):
            generic.parse_judgments(b"{" * (2 ** 20 + 1), "up.jsonl")
        set_limits(Limits(max_pairs=3))
        rows = [{**ROW, "system": str(k)} for k in range(10)]
        with pytest.raises(DataError, match=r"line 4: the file has 4 pairs, over the limit of 3"):
            generic.parse_judgments(jsonl(*rows), "up.jsonl")
    finally:
        set_limits(None)


@pytest.mark.parametrize("name", ["mqm-ted:../../../etc/passwd", "mqm-ted:en-de/../zh-en", "mqm-ted:",
                                  "mqm-ted:EN-DE", "mqm-ted:en-de\n"])
def test_a_study_pair_is_a_name_never_a_path(data_settings, name):
    with pytest.raises(MuttlabError, match="unknown language pair .* of study mqm-ted; choose from en-de, zh-en"):
        api.meta_evaluate(data_settings, name, ["chrF"])


@pytest.mark.parametrize("value", [None, 3, 1.5, ["mqm-ted:en-de"], "", "a\0b", object()])
def test_what_is_not_judgments_is_an_invalid_argument(data_settings, value):
    with pytest.raises(InvalidArgument, match=r"meta_evaluate: data must be a study's pair"):
        api.meta_evaluate(data_settings, value, ["chrF"])


def test_devices_pipes_and_folders_are_not_read(data_settings, tmp_path):
    fifo = tmp_path / "judgments.jsonl"
    os.mkfifo(fifo)
    with pytest.raises(DataError, match="is not a regular file"):
        api.meta_evaluate(data_settings, str(fifo), ["chrF"])
    folder = tmp_path / "pair"
    folder.mkdir()
    (folder / "x.avg_seg_scores.tsv").symlink_to("/dev/zero")
    with pytest.raises(DataError, match="is not a regular file"):
        mqm.read_mqm_folder(folder, reference="ref-A", pair="en-de")
    with pytest.raises(DataError, match="holds 0 files named"):
        api.meta_evaluate(data_settings, str(tmp_path), ["chrF"])


def test_a_folder_whose_error_file_is_a_link_elsewhere_reads_only_a_valid_mqm_file(data_settings, tmp_path):
    """A link to a file that is not an MQM error file (a system file) is refused by its header."""
    folder = tmp_path / "pair"
    folder.mkdir()
    (folder / "x.avg_seg_scores.tsv").write_text("system mqm_avg_score seg_id\nA\t-1 1\n", encoding="utf-8")
    (folder / "x.tsv").symlink_to("/etc/hostname" if os.path.exists("/etc/hostname") else "/etc/passwd")
    with pytest.raises(DataError, match=r"x.tsv, line 1: the header must be"):
        mqm.read_mqm_folder(folder, reference="A", pair="en-de")


ARGUMENTS = ["metrics", "statistics", "significance", "progress", "registry", "n_resamples", "seed", "alpha",
             "max_exact_pairs", "keep_scores"]
READING = ["reference", "pair", "target_language"]


@pytest.fixture(scope="module")
def tiny(data_dir, tmp_path_factory):
    from muttlab.settings import Settings
    settings = Settings(data_dir=data_dir, cache_dir=tmp_path_factory.mktemp("meta-fuzz"), workers=1)
    return settings, api.load_judgments(settings, "mqm-ted:en-de").first_items(3)


def _bad_values():
    from tests.attacks.api_fuzz_cases import BAD_VALUES
    return [v for v in BAD_VALUES if not (isinstance(v, str) and v == "iterator")] + [iter(["chrF"])]


@pytest.mark.parametrize("argument", ARGUMENTS + READING)
def test_every_argument_refuses_what_it_cannot_take(tiny, data_dir, argument):
    """Each value of the API fuzz's list either works or ends in a documented error: never an AttributeError,
    TypeError or ValueError of a library (a string read letter by letter, an array's truth value, a name
    too long for the file system)."""
    settings, judgments = tiny
    data = str(data_dir / "mqm" / "ted" / "ende") if argument in READING else judgments
    for value in _bad_values():
        try:
            if argument in READING:
                api.load_judgments(settings, data, **{argument: value})
            else:
                api.meta_evaluate(settings, data, **{"metrics": ["chrF"], "statistics": ["acc_eq_item"],
                                                     "n_resamples": 10, argument: value})
        except MuttlabError:
            pass

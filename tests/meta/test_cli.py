"""``muttlab meta-eval`` on a judgments file (TED en-de's first items in the generic format) and on a study
pair: one JSON document, every format, errors as one line and exit status 2."""
from __future__ import annotations

import csv
import io
import json

import pytest

from muttlab.cli import main
from tests.meta.test_generic import as_jsonl, records

ITEMS = 30


@pytest.fixture(scope="module")
def judgments_file(ted, tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "ende.jsonl"
    path.write_text(as_jsonl(records(ted["en-de"], ITEMS)), encoding="utf-8")
    return path


@pytest.fixture
def cli_env(meta_settings, monkeypatch):
    monkeypatch.setenv("MUTTLAB_DATA_DIR", str(meta_settings.data_dir))
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(meta_settings.cache_dir))
    monkeypatch.setenv("MUTTLAB_WORKERS", "1")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_is_one_document_of_rows(cli_env, capsys, judgments_file):
    code, out, err = run(capsys, "meta-eval", str(judgments_file), "--metrics", "chrF,METEOR-1.5", "--format",
                         "json", "--resamples", "100")
    assert code == 0
    rows = json.loads(out)
    assert isinstance(rows, list) and {"metric", "statistic", "value"} <= set(rows[0])
    tied = [r for r in rows if r["statistic"] in ("acc_eq_item", "acc_eq") and r["value"] is not None]
    assert tied and all(isinstance(r["epsilon"], float) for r in tied)
    assert {r["metric"] for r in rows} == {"chrF", "METEOR-1.5", "constant baseline", "random baseline"}
    assert "note: METEOR-1.5 not evaluated: scores en only" in err  # the file's lang is en-de


@pytest.mark.parametrize("fmt", ["csv", "table", "markdown", "latex"])
def test_every_format(cli_env, capsys, judgments_file, fmt):
    code, out, _ = run(capsys, "meta-eval", str(judgments_file), "--metrics", "chrF", "--format", fmt,
                       "--statistics", "acc_eq_item,pairwise_acc_sys", "--significance", "none")
    assert code == 0 and "chrF" in out and "constant baseline" in out
    if fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(out)))
        assert {r["statistic"] for r in rows} == {"acc_eq_item", "pairwise_acc_sys"}
    if fmt == "table":
        assert out.startswith("ende.jsonl: 13 systems, 30 items, 390 outputs judged (human); target language de")


def test_calibrations_are_written(cli_env, capsys, judgments_file, tmp_path):
    target = tmp_path / "calibrations.json"
    code, _, err = run(capsys, "meta-eval", str(judgments_file), "--metrics", "chrF", "--statistics", "acc_eq_item",
                       "--significance", "none", "--calibrations-out", str(target))
    assert code == 0 and f"wrote {target}" in err
    document = json.loads(target.read_text(encoding="utf-8"))
    (record,) = document["calibrations"]
    assert (record["study"], record["pair"], record["metric"]) == ("ende.jsonl", "en-de", "chrF")


@pytest.mark.parametrize("argv,message", [
    (["meta-eval", "/nonexistent/judgments.tsv"], "no such file or folder"),
    (["meta-eval", "mqm-ted:fr-de"], "unknown language pair 'fr-de' of study mqm-ted; choose from en-de, zh-en"),
    (["meta-eval", "mqm-tex:en-de"], "unknown study 'mqm-tex'"),
    (["meta-eval", "mqm-ted:en-de", "--metrics", "chrF", "--statistics", "tau"], "unknown statistics 'tau'"),
])
def test_errors_are_one_line_and_exit_2(cli_env, capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and message in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_an_mqm_error_file_asks_for_its_folder(cli_env, capsys, meta_settings):
    path = meta_settings.data_dir / "mqm" / "ted" / "ende" / "mqm_ted_ende.tsv"
    code, _, err = run(capsys, "meta-eval", str(path))
    assert code == 2 and "is an MQM error file (give its folder" in err

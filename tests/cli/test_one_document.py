"""Machine-readable output is one document: every ``--format json`` parses as one JSON value and every
``--format csv`` is one table (one header, every row as wide), whatever the command prints for people
(notes go to standard error). A challenge set's per-phenomenon, per-severity and ACES tables are fields of one
JSON object, or files beside ``--output``; each table's rows name their rules in their signature."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from dataclasses import dataclass

import pandas as pd
import pytest

from muttlab.cli import main
from muttlab.human import studies

DEMETR = "demetr/dataset/critical_id8_negation.json"  # DEMETR's negation: 1,000 records, translations into English


@pytest.fixture
def cli(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MUTTLAB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MUTTLAB_DATA_DIR", raising=False)
    monkeypatch.delenv("MUTTLAB_TIE_RULE", raising=False)

    def invoke(*args: str) -> str:
        assert main([*args]) == 0
        return capsys.readouterr().out

    return invoke


def one_csv_table(text: str) -> list[dict]:
    """The rows of ``text`` read as one CSV table; fails on a second header or a row of another width."""
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    assert body, "no rows"
    assert all(len(row) == len(header) for row in body), "rows of another width: more than one table"
    assert header not in body, "a second header: more than one table"
    return [dict(zip(header, row)) for row in body]


@dataclass
class TwoTables:
    units: pd.DataFrame
    totals: pd.DataFrame


def two_tables(settings, registry=None, progress=None) -> TwoTables:
    """A study whose result has two frames of different columns (as a registered outside study may)."""
    return TwoTables(pd.DataFrame({"unit": [1, 2], "rho": [0.5, 0.25]}), pd.DataFrame({"total": [3]}))


COMMANDS = {
    "run": ["run", "--suite", "sample", "--metrics", "BLEU-4,TER", "--refs", "5"],
    "severity": ["severity", "--corruption", "typo", "--metrics", "BLEU-4", "--strengths", "1,2"],
    "metrics": ["metrics"],
    "models": ["models", "list"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_json_and_csv_are_one_document(cli, command):
    json.loads(cli(*COMMANDS[command], "--format", "json"))
    one_csv_table(cli(*COMMANDS[command], "--format", "csv"))


def test_a_study_of_several_tables_is_one_csv_document(cli, monkeypatch):
    study = studies.Study("two-tables", "Two tables", run=f"{__name__}:two_tables")
    monkeypatch.setattr(studies, "STUDIES", studies.STUDIES + (study,))
    rows = one_csv_table(cli("correlate", "two-tables", "--format", "csv"))
    assert [(r["table"], r["unit"], r["total"]) for r in rows] == [("units", "1", ""), ("units", "2", ""),
                                                                   ("totals", "", "3")]
    assert set(json.loads(cli("correlate", "two-tables", "--format", "json"))) == {"units", "totals"}


def test_a_demetr_run_is_one_json_document_for_json_tool(data_dir, tmp_path):
    """The brief's check, as a user runs it: ``muttlab run --suite <DEMETR file> --format json | python -m
    json.tool`` on the real DEMETR data."""
    command = (f"{sys.executable} -m muttlab run --suite {data_dir / DEMETR} --metrics sentBLEU --format json "
               f"| {sys.executable} -m json.tool")
    done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=600,
                          env={"PATH": "/usr/bin:/bin", "MUTTLAB_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert set(document) == {"phenomena", "severity"}
    phenomena, severity = document["phenomena"], document["severity"]
    assert [(r["metric"], r["phenomenon"]) for r in phenomena] == [("sentBLEU", "critical_id8_negation")]
    assert [r["severity"] for r in severity] == ["critical"]
    # The two tables count the same pairs; DEMETR's negation file has 1,000 records (its README).
    assert phenomena[0]["n"] + phenomena[0]["not_applied"] + phenomena[0]["unsupported"] == 1000
    assert severity[0]["n"] == phenomena[0]["n"]
    signature = phenomena[0]["signature"]
    assert signature.startswith("sentBLEU|") and signature.endswith("|tol:0.15|tie:1e-9")


def test_a_demetr_csv_is_one_table_and_the_others_go_beside_output(cli, data_dir, tmp_path, capsys):
    suite = str(data_dir / DEMETR)
    rows = one_csv_table(cli("run", "--suite", suite, "--metrics", "sentBLEU", "--format", "csv"))
    assert [r["phenomenon"] for r in rows] == ["critical_id8_negation"]
    out = tmp_path / "negation.csv"
    assert main(["run", "--suite", suite, "--metrics", "sentBLEU", "--format", "csv", "--output", str(out)]) == 0
    assert "per severity" not in capsys.readouterr().out
    assert [r["phenomenon"] for r in one_csv_table(out.read_text())] == ["critical_id8_negation"]
    severity = one_csv_table((tmp_path / "negation.severity.csv").read_text())
    assert [r["severity"] for r in severity] == ["critical"] and severity[0]["signature"].endswith("|tie:1e-9")
    # The text formats keep both tables, one after the other, for people.
    text = cli("run", "--suite", suite, "--metrics", "sentBLEU", "--format", "table")
    assert "Per severity:" in text and "negation" in text

"""Attacks through exported reports: a suite's phenomenon names reach LaTeX, CSV and Markdown tables.

Written raw, ``\\input{/etc/passwd}`` is read by the LaTeX build of a paper, ``=cmd|' /C calc'!A0`` runs in
the spreadsheet that opens the CSV, and ``|`` or ``![x](http://…)`` break or load things in a Markdown table.
Reports escape each text cell for their format (muttlab/escaping.py, muttlab/cli/common.py); suite and trial
files are data and read back byte for byte.
"""
from __future__ import annotations

import csv
import io
import json
import re

import pandas as pd
import pytest

from muttlab.cli import main
from muttlab.engine.suites import write_trials
from muttlab.trials import Suite, Trial
from muttlab.suites import read_suite
from muttlab.suites.export import write_suite

LATEX_ATTACK = "\\input{/etc/passwd}"
CSV_ATTACK = "=cmd|' /C calc'!A0"
MARKDOWN_ATTACK = "a|b ![x](http://evil.example/x.png) <img src=x onerror=alert(1)>"
LATEX_SPECIALS = "50% & #1 $x$ ~y^2_z {w}"
PHENOMENA = [LATEX_ATTACK, CSV_ATTACK, MARKDOWN_ATTACK, LATEX_SPECIALS, "+SUM(A1)", "@HYPERLINK(x)", "-2+3"]
PAIRS = [("A dog runs in the park.", "A dog runs in the bark.", "A dog is running in the park."),
         ("A man rides a bike.", "A man rides no bike.", "A man is riding a bike."),
         ("Two kids play outside.", "Two kids pray outside.", "Two children are playing outside.")]


@pytest.fixture
def evil_suite(tmp_path):
    path = tmp_path / "evil.jsonl"
    rows = [{"phenomenon": name, "good": good, "incorrect": bad, "reference": ref}
            for i, name in enumerate(PHENOMENA) for good, bad, ref in [PAIRS[i % len(PAIRS)]]]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def report(evil_suite, tmp_path, monkeypatch, capsys):
    """`muttlab run --suite evil.jsonl --format FMT` on two cheap metrics: its standard output."""
    monkeypatch.delenv("MUTTLAB_DATA_DIR", raising=False)

    def run(fmt: str, *extra: str) -> str:
        code = main(["run", "--suite", str(evil_suite), "--metrics", "BLEU-1,chrF", "--cache-dir",
                     str(tmp_path / "cache"), "--format", fmt, *extra])
        out = capsys.readouterr().out
        assert code == 0
        return out
    return run


def _rows(latex: str) -> list[str]:
    body = latex.split("\\midrule", 1)[1].split("\\bottomrule", 1)[0]
    return body.strip().splitlines()


def test_latex_prints_names_and_runs_nothing(report):
    out = report("latex")
    # pandas' LaTeX escaping (muttlab.escaping.latex_table); tests/test_escaping.py reads it back as TeX does.
    assert "\\input{" not in out and "\\textbackslash input\\{/etc/passwd\\}" in out
    assert "50\\% \\& \\#1 \\$x\\$ \\textasciitilde y\\textasciicircum 2\\_z \\{w\\}" in out
    header = out.split("\\toprule", 1)[1].split("\\midrule", 1)[0]
    columns = len(re.findall(r"(?<!\\)&", header)) + 1
    rows = _rows(out)
    assert len(rows) == 2 * len(PHENOMENA)
    for row in rows:  # no name adds a column (an unescaped &) or ends the row early
        assert len(re.findall(r"(?<!\\)&", row)) == columns - 1, row
        assert row.endswith("\\\\") and row.count("\\\\") == 1, row


def test_csv_neutralises_formulas_and_keeps_numbers(report, tmp_path):
    out = report("csv")
    table = list(csv.reader(io.StringIO(out)))
    header, rows = table[0], table[1:]
    phenomena = [row[header.index("phenomenon")] for row in rows]
    assert "'" + CSV_ATTACK in phenomena and "'+SUM(A1)" in phenomena and "'@HYPERLINK(x)" in phenomena
    assert "'-2+3" in phenomena
    assert LATEX_ATTACK in phenomena  # nothing to neutralise: kept as it is
    for row in rows:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")) or _is_number(cell), cell
    # Every text cell is quoted (a ; separator in some locales cannot start a new cell); numbers are not.
    for line in out.splitlines()[1:]:
        assert line.startswith('"') and re.search(r",-?\d+(\.\d+)?(e-?\d+)?,", line), line
    json_rows = json.loads(report("json"))["phenomena"]  # one document: a field per table
    assert [float(r[header.index("tau")]) for r in rows] == [r["tau"] for r in json_rows]


def test_csv_trial_table_keeps_full_precision(report, tmp_path):
    report("table", "--trials-out", str(tmp_path / "trials.csv"))
    report("table", "--trials-out", str(tmp_path / "trials.jsonl"))
    from_csv = pd.read_csv(tmp_path / "trials.csv")
    from_jsonl = pd.read_json(tmp_path / "trials.jsonl", lines=True, precise_float=True)
    score_columns = [c for c in from_jsonl.columns if pd.api.types.is_float_dtype(from_jsonl[c])]
    assert score_columns
    for column in score_columns:  # the same floats, bit for bit (NaN where both are empty)
        pd.testing.assert_series_equal(from_csv[column], from_jsonl[column], check_exact=True, check_dtype=False,
                                       obj=column)
    text_cells = [v for c in from_csv.columns if from_csv[c].dtype == object for v in from_csv[c].dropna()]
    assert not [v for v in text_cells if v.startswith(("=", "+", "-", "@"))]


def test_markdown_cells_stay_cells(report):
    out = report("markdown")
    lines = out.strip().splitlines()
    columns = len(re.findall(r"(?<!\\)\|", lines[0]))
    for line in lines[2:]:
        assert len(re.findall(r"(?<!\\)\|", line)) == columns, line
    assert not re.search(r"(?<!\\)!(?<!\\)\[", out) and "![" not in out.replace("\\!\\[", "")
    assert "<img" not in out and "&lt;img src=x onerror=alert(1)&gt;" in out


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# --------------------------------------------------------------------------- data files round-trip exactly

EVIL_TEXTS = [CSV_ATTACK, LATEX_ATTACK, MARKDOWN_ATTACK, "+1", "-1", "@x", "tab\tinside", "next\x85line",
              "quote \" and ' and \\", "line\u2028sep", "🙂 שלום"]


def _evil_trials() -> list[Trial]:
    return [Trial(id=f"typo/{i}", corruption="typo", original=text, corrupted=text + " x",
                  references=(text, "a plain reference"), source=f"user:{i}") for i, text in enumerate(EVIL_TEXTS)]


def _round_trips(tmp_path, suffix: str, write) -> list:
    """The suite written, read back and written again twice, each time as ``suite<suffix>`` in a folder of its
    own; returns the three paths. A trial's ``source`` records the file it was read from (``trials-jsonl:
    suite#3``), so the second and third files, read from files of the same name, must be identical."""
    paths = [tmp_path / folder / f"suite{suffix}" for folder in ("a", "b", "c")]
    for path in paths:
        path.parent.mkdir()
    write(Suite("evil", _evil_trials()), paths[0])
    for before, after in zip(paths, paths[1:]):
        back = read_suite(before)
        assert not back.problems
        assert [(t.id, t.original, t.corrupted, t.references) for t in back.suite.trials] == \
            [(t.id, t.original, t.corrupted, t.references) for t in _evil_trials()]
        write(back if write is write_suite else back.suite, after)
    return paths


def test_trial_files_round_trip_byte_exact(tmp_path):
    """What `muttlab corrupt --output` writes: no text is escaped or neutralised."""
    _, second, third = _round_trips(tmp_path, ".jsonl", lambda suite, path: write_trials(suite.trials, path))
    assert third.read_bytes() == second.read_bytes()
    assert CSV_ATTACK.encode() in second.read_bytes()


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_suite_exports_round_trip_byte_exact(tmp_path, suffix):
    """What `muttlab export` and `muttlab corrupt --input … --output` write (muttlab/suites/export.py)."""
    first, second, third = _round_trips(tmp_path, suffix, write_suite)
    assert third.read_bytes() == second.read_bytes()
    before, after = (pd.read_parquet(p) if suffix == ".parquet" else pd.read_json(p, lines=True, dtype=False)
                     for p in (first, second))
    kept = [c for c in before.columns if c != "source"]
    pd.testing.assert_frame_equal(before[kept], after[kept])

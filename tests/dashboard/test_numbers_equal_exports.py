"""Every number a page shows for an accuracy cell equals its export: the grid's tooltips (the live grid and the
shipped one), the report's heatmap hovers and its table against the CSV of the same view, read back as a visitor
reads them. The tie rate is a percentage in the export; a tooltip once multiplied any value up to 1 by 100 again
("ties 93.5%" for 2 ties in 214 trials), in 61 of the shipped grid's 630 cells."""
from __future__ import annotations

import io
from pathlib import Path
from urllib.parse import parse_qs, urlencode

import pandas as pd
import pytest

from muttlab import api
from muttlab.dashboard.report import build_report
from muttlab.settings import load_settings
from tests.dashboard.conftest import (assert_says_the_export, browser, downloads, figures_in_html,  # noqa: F401
                                      grid_html, grid_tooltips, html_tables, new_page, open_link, open_page,
                                      read_as_plotly_shows, run_ended, shown_errors)

KEY = ["metric", "corruption", "refs"]


def _csv(data: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data)).set_index(KEY)


def test_the_shipped_grids_tooltips_equal_its_csv(app_env, downloads):
    at = open_page("run")
    assert not shown_errors(at)
    exported = _csv(downloads("shipped-grid-csv"))
    tooltips = grid_tooltips(grid_html(at))
    assert len(tooltips) == len(exported) == len(api.snapshot("grid").content.cells) == 630
    for cell, said in tooltips.items():
        assert_says_the_export(said, exported.loc[cell])
    # The cells whose tie rate is at most 1 % (61 of them): said as measured, never multiplied by 100 again.
    small = exported[(exported["tie_rate"] > 0) & (exported["tie_rate"] <= 1)]
    assert len(small) == 61
    # METEOR-1.5 x Active-to-Passive x 5 refs: 2 ties of 214 trials, 0.9346 % in the export.
    assert exported.loc[("METEOR-1.5", "passive", 5), "tie_rate"] == 0.9346
    assert tooltips[("METEOR-1.5", "passive", 5)].splitlines()[-2] == "ties 0.9%"


def test_the_live_grids_tooltips_and_table_equal_its_csv(app_env, downloads):
    at = open_page("run")
    at.multiselect(key="run-metrics").set_value(["BLEU-4", "METEOR-1.5"])
    at.multiselect(key="run-corruptions").set_value(["passive", "det_sub"])
    at.multiselect(key="run-refs").set_value(["5", "20"])
    at.get("form_submit_button")[0].click().run()
    assert not shown_errors(at)
    exported = _csv(downloads("grid-csv"))
    tooltips = grid_tooltips(grid_html(at))
    assert len(tooltips) == len(exported) == 8
    for cell, said in tooltips.items():
        assert_says_the_export(said, exported.loc[cell])
    # The tidy table shows each percentage as the tooltips write it (one decimal and %), its data as exported.
    at.session_state["run-tables"] = True
    at.run()
    tidy = next(d for d in at.dataframe if "ci_low" in d.value.columns)
    formats = {c: f for c, f in _column_formats(tidy).items() if c in ("accuracy", "ci_low", "ci_high", "tie_rate")}
    assert formats == dict.fromkeys(("accuracy", "ci_low", "ci_high", "tie_rate"), "%.1f%%")
    assert tidy.value.set_index(KEY)[["accuracy", "tie_rate"]].sort_index().equals(
        exported[["accuracy", "tie_rate"]].sort_index())


def _column_formats(dataframe) -> dict[str, str]:
    """The printf format of each column a Streamlit table was given (its column configuration)."""
    import json

    config = json.loads(dataframe.proto.columns)
    return {column: spec.get("type_config", {}).get("format") for column, spec in config.items()}


def test_the_reports_heatmap_and_table_equal_the_pages_csv(app_env, downloads):
    view = {"metrics": "BLEU-4,METEOR-1.5,TER", "corruptions": "passive,neg_subj", "refs": "5,10"}
    at = open_link("run", view)
    assert not shown_errors(at)
    exported = _csv(downloads("shipped-grid-csv"))
    assert len(exported) == 12
    document = build_report(load_settings(), urlencode(view))
    (heatmap,) = figures_in_html(document)
    hovers = [read_as_plotly_shows(h) for trace in heatmap.data for row in trace.hovertext for h in row]
    assert len(hovers) == 12
    labels = {"Active-to-Passive": "passive", "Negated Subject": "neg_subj"}
    for said in hovers:
        metric, label, refs = said.split("\n")[0].removesuffix(" refs").split(" · ")
        assert_says_the_export(said, exported.loc[(metric, labels[label], int(refs))])
    rows = html_tables(document)["grid"]
    header = rows[0]
    for row in rows[1:]:
        cell = dict(zip(header, row))
        expected = exported.loc[(cell["metric"], cell["corruption"], int(cell["refs"]))]
        for column in ("accuracy", "ci_low", "ci_high", "tie_rate"):
            assert cell[column] == f"{round(float(expected[column]), 1):.1f}%", (column, cell)
        assert (int(cell["passed"]), int(cell["n"])) == (int(expected["passed"]), int(expected["n"]))


@pytest.mark.browser
def test_the_grids_tooltips_in_chromium_equal_the_csv_it_downloads(sample_server, browser):
    """The landing grid as a visitor's browser holds it: each cell's tooltip (its ``title``, as Chromium reads
    the attribute) against the CSV the page's button downloads."""
    page = new_page(browser)
    page.goto(sample_server.url)
    page.locator(".mutt-grid td a").first.wait_for()
    run_ended(page)
    cells = page.evaluate("Array.from(document.querySelectorAll('.mutt-grid td a'))"
                          ".map(a => [a.getAttribute('href'), a.title])")
    with page.expect_download() as download:
        page.get_by_role("button", name="Download CSV").first.click()
    exported = _csv(Path(download.value.path()).read_bytes())
    page.close()
    assert len(cells) == len(exported) == 630
    for href, said in cells:
        query = parse_qs(href.partition("?")[2])
        assert_says_the_export(said, exported.loc[(query["metric"][0], query["corruption"][0],
                                                   int(query["refs"][0]))])

"""Text made safe for the document it is written into: a LaTeX table, a Markdown table, a spreadsheet's CSV.

A report's cells hold names and sentences that come from users (a suite's phenomena, an outside metric's name,
an uploaded sentence). Written raw, ``\\input{/etc/passwd}`` runs in a LaTeX build, ``|`` splits a Markdown
cell and ``![x](http://…)`` loads an image, and ``=cmd|' /C calc'!A0`` is a formula to the spreadsheet that
opens the CSV. Each function here turns one text cell into text its format shows literally.

LaTeX is pandas' escaping (``Styler.format(escape="latex")``, which ``DataFrame.to_latex(escape=True)`` applies
to cells and labels): each of LaTeX's ten special characters ``& % $ # _ { } ~ ^ \\`` becomes the command that
prints it. Markdown and CSV are escaped here: neither pandas nor tabulate escapes a Markdown cell.

Data files (suite and trial JSONL/Parquet, ``muttlab corrupt --output``) are not escaped: they must read back
exactly as written.
"""
from __future__ import annotations

import csv
import io
import math
import numbers
import re
import sys
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # pandas is imported by the callers that write frames
    import pandas as pd

# A line break inside a cell: a blank line is \par in LaTeX (a tabular cell cannot hold one), and any newline
# ends a Markdown table row.
_BREAKS = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")

# What Markdown (CommonMark and GitHub's tables) reads as syntax inside a table cell that changes more than
# emphasis: the cell separator, links and images, code spans, and raw HTML (& too, so an entity stays text).
_MARKDOWN = {"\\": "\\\\", "|": "\\|", "[": "\\[", "]": "\\]", "!": "\\!", "`": "\\`", "<": "&lt;", ">": "&gt;",
             "&": "&amp;"}
_MARKDOWN_PATTERN = re.compile(r"[\\|\[\]!`<>&]")

# OWASP's CSV injection guidance: a cell beginning with one of these is a formula to a spreadsheet (= + - @,
# tab and carriage return; line feed and NUL as ASVS 1.2.10 adds; the full-width forms Excel also reads).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n", "\0", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def _one_line(text: str) -> str:
    """``text`` with every run of line breaks as one space."""
    return _BREAKS.sub(" ", text)


def latex(text: str) -> str:
    """``text`` as LaTeX that prints it (a heading, a list item): pandas' escaping, line breaks as spaces.

    The one-cell table goes through ``Styler.format(escape="latex")``, the public way to pandas' escaper.
    """
    import pandas as pd

    styler = pd.DataFrame([[_one_line(text)]]).style.hide(axis="index").hide(axis="columns")
    return styler.format(escape="latex").to_string()[:-1]  # to_string ends the one row with a newline


def latex_table(frame: "pd.DataFrame", index: bool = False, float_format: str | None = None,
                na_rep: str = "NaN") -> str:
    """``frame`` as a LaTeX tabular (booktabs rules) that prints every text cell, column name and index label as
    it is: ``DataFrame.to_latex(escape=True)`` after line breaks in them become spaces.

    Args:
      float_format: a %-format for floats, e.g. ``"%.1f"``.
      na_rep: what a missing value prints as.
    """
    return text_mapped(frame, _one_line).to_latex(index=index, float_format=float_format, na_rep=na_rep,
                                                 escape=True)


def text_mapped(frame: "pd.DataFrame", escape: Callable[[str], str]) -> "pd.DataFrame":
    """A copy of ``frame`` with ``escape`` applied to every text cell, column name and index label (numbers and
    other values as they are)."""
    import pandas as pd

    def cell(value):
        return escape(value) if isinstance(value, str) else value

    out = frame.rename(columns=cell, index=cell)
    for i in range(out.shape[1]):
        column = out.iloc[:, i]
        if not pd.api.types.is_numeric_dtype(column):
            out.isetitem(i, column.map(cell))
    return out


def markdown(text: str) -> str:
    """``text`` as a Markdown table cell that shows it: syntax characters escaped, HTML as entities, line
    breaks as spaces."""
    return _MARKDOWN_PATTERN.sub(lambda m: _MARKDOWN[m.group()], _one_line(text))


def spreadsheet(text: str) -> str:
    """``text`` as a CSV cell a spreadsheet shows as text: a leading single quote where it would begin a formula.
    The CSV writer must also quote the cell (a ``;`` separator in some locales would otherwise start a new one)."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def csv_frame(frame: "pd.DataFrame", index: bool = False) -> str:
    """A frame as CSV for people (:func:`csv_text`)."""
    if index:
        frame = frame.reset_index()
    return _csv(list(frame.columns), [frame.iloc[:, i].tolist() for i in range(frame.shape[1])])


def csv_text(columns: dict[str, list]) -> str:
    """Columns of plain Python values as CSV for people to open in a spreadsheet, by OWASP's CSV injection
    guidance: every text cell is quoted (a quote doubled) and one that would begin a formula starts with a
    single quote (:func:`spreadsheet`); numbers are not quoted and keep full precision (a
    float as its shortest repr), NaN and None are an empty cell."""
    return _csv(list(columns), list(columns.values()))


def _csv(header: list, columns: list[list]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)
    writer.writerow([_csv_cell(v) for v in header])
    writer.writerows(zip(*([_csv_cell(v) for v in values] for values in columns)))
    return buffer.getvalue()


class _Blank(float):
    """A missing number: a number to the CSV writer (so not quoted), written as an empty cell."""

    def __str__(self) -> str:
        return ""


_BLANK = _Blank("nan")


def _csv_cell(value):
    if isinstance(value, numbers.Real):
        return _BLANK if math.isnan(value) else value
    pd = sys.modules.get("pandas")  # its missing values exist only once it is imported; run's CSV never needs it
    if value is None or (pd is not None and (value is pd.NA or value is pd.NaT)):
        return _BLANK
    return spreadsheet(value if isinstance(value, str) else str(value))

"""Text made safe for the document it is written into: a LaTeX table, a Markdown table, a spreadsheet's CSV.

A report's cells hold names and sentences that come from users (a suite's phenomena, an outside metric's name,
an uploaded sentence). Written raw, ``\\input{/etc/passwd}`` runs in a LaTeX build, ``|`` splits a Markdown
cell and ``![x](http://…)`` loads an image, and ``=cmd|' /C calc'!A0`` is a formula to the spreadsheet that
opens the CSV. Each function here turns one text cell into text its format shows literally.

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
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported by the callers that write frames
    import pandas as pd

# LaTeX's ten special characters (the LaTeX Companion, §2.1), each as the command that prints it.
_LATEX = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "$": r"\$", "&": r"\&", "#": r"\#",
          "^": r"\textasciicircum{}", "_": r"\_", "%": r"\%", "~": r"\textasciitilde{}"}
_LATEX_PATTERN = re.compile(r"[\\{}$&#^_%~]")
# A line break inside a cell: a blank line is \par in LaTeX, and any newline ends a Markdown table row.
_BREAKS = re.compile(r"[\r\n\u2028\u2029\x0b\x0c\x85]+")

# What Markdown (CommonMark and GitHub's tables) reads as syntax inside a table cell that changes more than
# emphasis: the cell separator, links and images, code spans, and raw HTML (& too, so an entity stays text).
_MARKDOWN = {"\\": "\\\\", "|": "\\|", "[": "\\[", "]": "\\]", "!": "\\!", "`": "\\`", "<": "&lt;", ">": "&gt;",
             "&": "&amp;"}
_MARKDOWN_PATTERN = re.compile(r"[\\|\[\]!`<>&]")

# OWASP's CSV injection guidance: a cell beginning with one of these is a formula to a spreadsheet (= + - @,
# tab and carriage return; line feed and NUL as ASVS 1.2.10 adds; the full-width forms Excel also reads).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n", "\0", "\uff1d", "\uff0b", "\uff0d", "\uff20")


def latex(text: str) -> str:
    """``text`` as LaTeX that prints it: special characters as commands, line breaks as spaces."""
    return _LATEX_PATTERN.sub(lambda m: _LATEX[m.group()], _BREAKS.sub(" ", text))


def markdown(text: str) -> str:
    """``text`` as a Markdown table cell that shows it: syntax characters escaped, HTML as entities, line
    breaks as spaces."""
    return _MARKDOWN_PATTERN.sub(lambda m: _MARKDOWN[m.group()], _BREAKS.sub(" ", text))


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

"""One study's published numbers as an HTML table: what the Published vs measured page draws. No Streamlit here
(testable alone).

A table element (``st.dataframe``) has the browser fetch and run about 1.4 MB of scripts before it draws
anything, and the page's numbers above it waited for them: on a loaded machine that was most of the page's
first paint (docs/dashboard.md, Design). A plain table is drawn as soon as it
arrives, wraps a long reason onto as many lines as it needs instead of cutting it, and scrolls sideways
inside its own box on a narrow window. The CSV download below it holds the same rows, unformatted.

Every cell is HTML-escaped: a reason or source is text from the published-numbers file.
"""
from __future__ import annotations

import html
from typing import Mapping

import pandas as pd

from muttlab.dashboard.charts import FAIL_COLOUR, PASS_COLOUR

# The columns of a number, right-aligned in tabular figures; "within" is drawn as a mark and a word.
NUMBER_COLUMNS = ("refs", "published", "measured", "measured_lab", "difference", "tolerance")
HEADERS = {"metric_ours": "ours", "within": "within tolerance", "measured_lab": "under the lab's rules"}
# Text columns written in the row below a number instead of a column: a reason, and why the lab's rules give
# another number (ties judged exactly, as the paper did).
NOTE_COLUMNS = ("reason", "rule_note")
CSS = """<style>
.mutt-published { overflow-x: auto; max-width: 100%; }
.mutt-published table { border-collapse: collapse; min-width: 48rem; width: 100%; font-size: 0.8rem; margin: 0; }
.mutt-published th, .mutt-published td { padding: 3px 6px; border: none; border-bottom: 1px solid #e5e7eb;
  text-align: left; vertical-align: top; white-space: nowrap; }
.mutt-published th { font-weight: 600; background: none; }
.mutt-published td.mutt-num { text-align: right; font-variant-numeric: tabular-nums; }
.mutt-published td.mutt-wrap { white-space: normal; overflow-wrap: break-word; min-width: 9rem; }
.mutt-published tr.mutt-has-reason td { border-bottom: none; padding-bottom: 0; }
.mutt-published tr.mutt-reason td { white-space: normal; padding-top: 0; padding-left: 1.5rem; opacity: 0.8; }
.mutt-published .mutt-in { color: """ + PASS_COLOUR + """; font-weight: 600; white-space: nowrap; }
.mutt-published .mutt-out { color: """ + FAIL_COLOUR + """; font-weight: 600; white-space: nowrap; }
</style>"""


def _missing(value) -> bool:
    """None, NaN or pandas' NA: a cell of the frame with nothing in it."""
    return value is None or bool(pd.isna(value))


def number_text(value) -> str:
    """A number as the table shows it: at most four decimals, no trailing zeros; "–" when there is none."""
    if _missing(value):
        return "–"
    if float(value).is_integer():
        return str(int(value))
    return f"{float(value):.4f}".rstrip("0").rstrip(".")


def within_text(value) -> tuple[str, str]:
    """(css class, text) of a verdict: within, outside, or not measured."""
    if _missing(value):
        return "", "not measured"
    return ("mutt-in", "✓ within") if bool(value) else ("mutt-out", "✗ outside")


def published_table_html(part: pd.DataFrame, labels: Mapping[str, str] | None = None) -> str:
    """One ``<div class="mutt-published">`` holding ``part``'s rows (one study's, its "study" column left out:
    the page names the study above the table), columns in the frame's order. A row's reason, a sentence, is
    the row below it across the table's width: as a column it was either cut or squeezed to a word a line.
    A subset named in ``labels`` (a corruption type's id -> its label) is shown by its label; the CSV keeps ids."""
    columns = [c for c in part.columns if c not in ("study", *NOTE_COLUMNS)]
    esc = html.escape
    head = "".join(f"<th>{esc(HEADERS.get(c, c))}</th>" for c in columns)
    rows = []
    for record in part.itertuples(index=False):
        values = record._asdict()
        cells = []
        for column in columns:
            value = values[column]
            if column == "within":
                css, text = within_text(value)
                cells.append(f'<td><span class="{css}">{text}</span></td>' if css else f"<td>{text}</td>")
            elif column in NUMBER_COLUMNS:
                cells.append(f'<td class="mutt-num">{esc(number_text(value))}</td>')
            else:
                css = ' class="mutt-wrap"' if column == "source" else ""
                text = (labels or {}).get(value, value) if column == "subset" and isinstance(value, str) else value
                cells.append(f"<td{css}>{esc(_text(text))}</td>")
        reason = " · ".join(text for text in (_text(values.get(c)) for c in NOTE_COLUMNS) if text)
        css = ' class="mutt-has-reason"' if reason else ""
        rows.append(f"<tr{css}>{''.join(cells)}</tr>")
        if reason:
            rows.append(f'<tr class="mutt-reason"><td colspan="{len(columns)}">{esc(reason)}</td></tr>')
    return (f'{CSS}<div class="mutt-published"><table><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _text(value) -> str:
    return "" if _missing(value) else str(value)


def rules_note(frame: pd.DataFrame, lab_rules: str) -> str:
    """Which rules the numbers follow, where the frame holds MUTT accuracies: the paper's (ties judged exactly)
    and the lab's (``lab_rules``, as the Run grid judges) beside them where those give another number; empty
    otherwise. Markdown-free text: the page and the report write it as they write text."""
    if "measured_lab" not in frame.columns or "mutt_accuracy" not in set(frame.get("study", [])):
        return ""
    differ = int(frame["rule_note"].astype(bool).sum()) if "rule_note" in frame.columns else 0
    return (f"MUTT accuracies are measured with ties judged exactly, as the paper did (tie:exact); the Run grid "
            f"judges a tie by the lab's rules ({lab_rules}). Where the two give different numbers ({differ} here), "
            "measured_lab is the number under the lab's rules, the one the grid shows, with the reason.")

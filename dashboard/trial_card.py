"""A drill-down trial card as one HTML block: verdict, word diff, scores and margin, the compared metric's
verdict, the link to edit its pair, notes, and its references folded. No Streamlit here (testable alone).

A card made of Streamlit elements was about seven of them (Markdown, HTML, columns, a caption, an expander
and its text); fifteen cards were a hundred elements for the browser to lay out, most of them Markdown it
parses, before the page's first word diff appeared. One block per card is drawn as it arrives
(docs/dashboard.md, Design). Every number is written by :mod:`muttlab.dashboard.cell_view`, as
in the view's report; every text is escaped by the ``text`` function the page passes (the dashboard scrubs
secrets and server folders too).
"""
from __future__ import annotations

import html
import math
from typing import Callable

from muttlab.dashboard import cell_view
from muttlab.dashboard.charts import FAIL_COLOUR, PASS_COLOUR
from muttlab.dashboard.diff import diff_block
from muttlab.dashboard.number_format import rating_text

VERDICT_MARKS = {"passes": "✓", "fails": "✗", "unsupported": "⊘"}
CSS = """<style>
.mutt-card { border: 1px solid rgba(49, 51, 63, 0.2); border-radius: 0.5rem; padding: 0.75rem 1rem;
  margin: 0 0 0.25rem 0; }
.mutt-card .mutt-card-body { display: flex; flex-wrap: wrap; gap: 0.25rem 1.5rem; }
.mutt-card .mutt-card-text { flex: 5 1 20rem; min-width: 0; overflow-wrap: anywhere; }
.mutt-card .mutt-card-side { flex: 2 1 12rem; min-width: 0; overflow-wrap: anywhere; }
.mutt-card p { margin: 0 0 0.3rem 0; }
.mutt-card dl { display: grid; grid-template-columns: max-content 1fr; gap: 0 0.5rem; margin: 0 0 0.4rem 0; }
.mutt-card dt { font-weight: 400; }
.mutt-card dd { font-weight: 600; margin: 0; font-variant-numeric: tabular-nums; }
.mutt-card .mutt-passes { color: """ + PASS_COLOUR + """; font-weight: 600; }
.mutt-card .mutt-fails { color: """ + FAIL_COLOUR + """; font-weight: 600; }
.mutt-card .mutt-unsupported { color: #6b7280; font-weight: 600; }
.mutt-card .mutt-notes { font-size: 0.875rem; opacity: 0.65; }
.mutt-card details summary { cursor: pointer; font-size: 0.875rem; }
.mutt-card details ol { margin: 0.3rem 0 0 0; font-size: 0.9rem; }
</style>"""


def verdict_html(passed: bool, unsupported: bool) -> str:
    word = cell_view.verdict_word(passed, unsupported)
    return f'<span class="mutt-{word}">{VERDICT_MARKS[word]} {word}</span>'


def _numbers_html(numbers: list[tuple[str, str]], css: str, text: Callable[[object], str]) -> str:
    items = "".join(f"<dt>{text(label)}</dt><dd>{text(value)}</dd>" for label, value in numbers)
    return f'<dl class="{css}">{items}</dl>'


def notes(row, higher_is_better: bool) -> list[str]:
    """What a card says below its numbers: the metric's direction, the pair's expectation, SICK, the source."""
    out = [] if higher_is_better else ["lower scores are better for this metric"]
    if row.expected is not None:
        out.append(cell_view.EXPECTED_TEXT.get(row.expected, row.expected))
    if row.human_score is not None and not (isinstance(row.human_score, float) and math.isnan(row.human_score)):
        out.append(f"SICK gold relatedness: {rating_text(row.human_score)} / 5")
    for label, attr in (("SICK pair", "sick_pair_id"), ("SICK split", "sick_split")):
        value = getattr(row, attr, None)
        if value not in (None, "") and value == value:
            out.append(f"{label}: {value}")
    if row.source:
        out.append(f"{'source sentence' if row.expected is not None else 'source'}: {row.source}")
    return out


def card_html(row, higher_is_better: bool, pair_id: int | None = None, other: str | None = None,
              text: Callable[[object], str] = lambda t: html.escape(str(t))) -> str:
    """One ``<div class="mutt-card">`` for a row of a cell's trials (:mod:`muttlab.dashboard.cell_view`), or of
    a comparison's joined trials when ``other`` names the compared metric; ``pair_id`` links the pair's editor."""
    side = [_numbers_html(cell_view.trial_numbers(row), "mutt-numbers", text)]
    if other is not None:
        side.append(f'<dl class="mutt-vs"><dt>{text(other)}</dt>'
                    f'<dd>{verdict_html(bool(row.vs_passed), bool(row.vs_unsupported))}</dd>'
                    f"<dt>margin</dt><dd>{text(cell_view.vs_margin_text(row))}</dd></dl>")
    if pair_id is not None:
        side.append(f'<p><a class="mutt-edit" href="annotate?pair={int(pair_id)}" target="_self">'
                    "✎ Edit this pair</a></p>")
    said = notes(row, higher_is_better)
    refs = list(row.references)
    items = "".join(f"<li>{text(ref)}</li>" for ref in refs)
    return (f'<div class="mutt-card" data-trial="{text(row.trial)}">'
            '<div class="mutt-card-body"><div class="mutt-card-text">'
            f'<p>{verdict_html(row.passed, row.unsupported)} · <span class="mutt-trial">{text(row.trial)}</span></p>'
            f"{diff_block(row.original, row.corrupted)}</div>"
            f'<div class="mutt-card-side">{"".join(side)}</div></div>'
            + (f'<p class="mutt-notes">{text(" · ".join(said))}</p>' if said else "")
            + f"<details><summary>{len(refs)} reference{'s' if len(refs) != 1 else ''}</summary><ol>{items}</ol>"
            "</details></div>")

"""A judged output with its MQM error spans highlighted where the annotators' ``<v>`` marks were, as escaped HTML.

The text is cut at every span's start and end; each piece passes through :func:`html.escape` before any markup is
added, and a piece inside one or more spans is wrapped in a ``<mark>`` whose class is the most severe of them
(``mutt-major``, ``mutt-minor``, ``mutt-other``) and whose ``title`` (escaped too) lists each span's severity,
category and rater. So an output, a category or a rater holding ``<script>`` is shown as text. No Streamlit here.
"""
from __future__ import annotations

import html
from typing import Iterable, Mapping

SPANS_CSS = """
<style>
.mutt-output {font-size: 1.0rem; line-height: 1.8; margin: 0.1rem 0 0.5rem 0;}
.mutt-output .mutt-label {display: inline-block; min-width: 9rem; color: #6b7280; font-size: 0.8rem;}
.mutt-output mark {border-radius: 3px; padding: 0 2px; color: inherit;}
.mutt-major {background: #fbd3c2; border-bottom: 2px solid #D55E00;}
.mutt-minor {background: #fdefc7; border-bottom: 2px solid #E69F00;}
.mutt-other {background: #e5e7eb; border-bottom: 2px solid #6b7280;}
</style>
"""
# Most severe first; a severity outside these (a user's own labels) is "other".
SEVERITY_CLASS = {"major": "mutt-major", "minor": "mutt-minor"}
_RANK = {"mutt-major": 0, "mutt-minor": 1, "mutt-other": 2}


def _class(severity: str) -> str:
    return SEVERITY_CLASS.get(str(severity).strip().lower(), "mutt-other")


def _describe(span: Mapping) -> str:
    return f"{span.get('severity', '')} {span.get('category', '')} ({span.get('rater', '')})".strip()


def highlighted(text: str, spans: Iterable[Mapping]) -> str:
    """``text`` as escaped HTML with each span (``start``, ``end`` in characters, ``severity``, ``category``,
    ``rater``) marked; spans of several raters may overlap (a piece covered by two lists both). A span outside
    the text is clipped to it; an empty one marks nothing."""
    text = str(text)
    spans = [s for s in spans if int(s["end"]) > int(s["start"])]
    cuts = sorted({0, len(text)} | {min(max(int(s[k]), 0), len(text)) for s in spans for k in ("start", "end")})
    out = []
    for start, end in zip(cuts, cuts[1:]):
        piece = html.escape(text[start:end])
        covering = [s for s in spans if int(s["start"]) <= start and int(s["end"]) >= end]
        if not covering:
            out.append(piece)
            continue
        cls = min((_class(s["severity"]) for s in covering), key=_RANK.get)
        title = html.escape("; ".join(_describe(s) for s in covering), quote=True)
        out.append(f'<mark class="{cls}" title="{title}">{piece}</mark>')
    return "".join(out)


def output_html(label: str, text: str, spans: Iterable[Mapping], note: str = "") -> str:
    """One line of a segment's view: its label (a system's name), the highlighted output and a note (the human
    score), every text escaped."""
    extra = f' <span class="mutt-label">{html.escape(note)}</span>' if note else ""
    return (f'<div class="mutt-output"><span class="mutt-label">{html.escape(str(label))}</span> '
            f"{highlighted(text, spans)}{extra}</div>")

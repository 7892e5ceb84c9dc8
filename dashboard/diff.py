"""A word-level diff of an original sentence and its corruption, as escaped HTML.

Every word is passed through :func:`html.escape` before any markup is added, so a sentence containing
``<script>`` is shown as text. The markup uses two classes, ``mutt-del`` (words only in the original)
and ``mutt-ins`` (words only in the corruption), styled by :data:`DIFF_CSS`.
"""
from __future__ import annotations

import difflib
import html
from dataclasses import dataclass

DIFF_CSS = """
<style>
.mutt-diff {font-size: 1.02rem; line-height: 1.7; margin: 0.1rem 0 0.4rem 0;}
.mutt-diff .mutt-label {display: inline-block; min-width: 6.5rem; color: #6b7280; font-size: 0.8rem;
  text-transform: uppercase; letter-spacing: 0.04em;}
.mutt-del {background: #fde2e1; color: #9b1c1c; text-decoration: line-through; border-radius: 3px;
  padding: 0 2px;}
.mutt-ins {background: #dcfce7; color: #14532d; border-radius: 3px; padding: 0 2px; font-weight: 600;}
</style>
"""


@dataclass(frozen=True)
class WordDiff:
    """The two sides of a word diff as escaped HTML fragments, and the changed words of each side."""

    original_html: str
    corrupted_html: str
    removed: tuple[str, ...]
    added: tuple[str, ...]


def _mark(words: list[str], cls: str) -> str:
    return f'<span class="{cls}">{html.escape(" ".join(words))}</span>'


def word_diff(original: str, corrupted: str) -> WordDiff:
    """Align the two sentences word by word (difflib) and mark what changed on each side.

    Returns:
      :class:`WordDiff`; words in ``removed`` occur only in the original, words in ``added`` only in the
      corruption (a moved phrase counts as removed at one place and added at another).
    """
    a, b = original.split(), corrupted.split()
    left: list[str] = []
    right: list[str] = []
    removed: list[str] = []
    added: list[str] = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            left.append(html.escape(" ".join(a[i1:i2])))
            right.append(html.escape(" ".join(b[j1:j2])))
            continue
        if i2 > i1:
            left.append(_mark(a[i1:i2], "mutt-del"))
            removed.extend(a[i1:i2])
        if j2 > j1:
            right.append(_mark(b[j1:j2], "mutt-ins"))
            added.extend(b[j1:j2])
    return WordDiff(" ".join(left), " ".join(right), tuple(removed), tuple(added))


def diff_block(original: str, corrupted: str, labels: tuple[str, str] = ("original", "corruption")) -> str:
    """Both sides of :func:`word_diff` as one escaped HTML block with labels, ready for ``st.html``."""
    diff = word_diff(original, corrupted)
    return (f'<div class="mutt-diff"><div><span class="mutt-label">{html.escape(labels[0])}</span>'
            f'{diff.original_html}</div><div><span class="mutt-label">{html.escape(labels[1])}</span>'
            f'{diff.corrupted_html}</div></div>')

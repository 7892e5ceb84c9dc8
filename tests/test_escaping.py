"""muttlab.escaping's LaTeX: pandas' escaper, read back as TeX reads it, prints exactly the text it was given.

The reader below knows the only commands an escaped text may hold, from the LaTeX Companion (2nd ed., §7.5.3,
"special characters"): the control symbols ``\\& \\% \\$ \\# \\_ \\{ \\}``, and the control words
``\\textbackslash``, ``\\textasciitilde``, ``\\textasciicircum`` and ``\\space``, each of which swallows one space
after it. Anything else — a bare special character, another command — fails the test: it would be LaTeX
syntax, not text.
"""
from __future__ import annotations

import re

import pandas as pd
import pytest

from muttlab import escaping
from muttlab.sources import load_sick
from muttlab.settings import Settings

_SYMBOLS = set("&%$#_{}")
_WORDS = {"textbackslash": "\\", "textasciitilde": "~", "textasciicircum": "^", "space": " "}
_SPECIALS = set("&%$#_{}~^\\")

NAMES = ["\\input{/etc/passwd}", "50% & #1 $x$ ~y^2_z {w}", "a\\ b", "~ ^ \\ ", "\\\\", "tail\\",
         "<img src=x onerror=alert(1)>|**x**", "\\end{tabular}\\begin{document}", "a\n\nb\rc", "ΔBLEU & τ-c",
         "\\def\\x{1}", "%comment", "^^5c"]


def tex_text(latex: str) -> str:
    """What TeX prints for ``latex``, made only of escaped text; AssertionError on any other LaTeX."""
    out, i = [], 0
    while i < len(latex):
        ch = latex[i]
        if ch == "\\":
            word = re.match(r"[A-Za-z]+", latex[i + 1:])
            if word:
                assert word.group() in _WORDS, f"a command in the text: \\{word.group()}"
                out.append(_WORDS[word.group()])
                i += 1 + len(word.group())
                if latex[i:i + 1] == " ":
                    i += 1  # the space ending a control word is not printed
                continue
            assert latex[i + 1:i + 2] in _SYMBOLS, f"an unknown control symbol in {latex!r}"
            out.append(latex[i + 1])
            i += 2
            continue
        assert ch not in _SPECIALS, f"a bare {ch!r} in {latex!r}"
        out.append(ch)
        i += 1
    return "".join(out)


def _printed(text: str) -> str:
    # TeX prints a run of spaces (and an end of line) as one space.
    return re.sub(r"\s+", " ", text)


@pytest.mark.parametrize("text", NAMES)
def test_latex_prints_the_text_and_nothing_else(text):
    assert _printed(tex_text(escaping.latex(text))) == _printed(text)
    assert "\n" not in escaping.latex(text)  # a blank line would end a paragraph (\par) inside a heading


def _cells(table: str) -> list[list[str]]:
    """The rows of a booktabs tabular between \\toprule and \\bottomrule, split at unescaped ``&``."""
    body = table.split("\\toprule\n", 1)[1].split("\\bottomrule", 1)[0].replace("\\midrule\n", "")
    rows = [line for line in body.splitlines() if line]
    assert all(row.endswith(" \\\\") for row in rows), rows
    return [[cell.strip() for cell in re.split(r"(?<!\\)&", row[:-3])] for row in rows]


def test_a_table_keeps_its_shape_and_prints_every_name():
    names = NAMES[:-1]
    frame = pd.DataFrame({"phenomenon": names, "tau & co": [0.25] * len(names), "n": range(len(names))},
                         index=pd.Index(names[::-1], name="#id"))
    table = escaping.latex_table(frame, index=True, float_format="%.1f")
    assert "\\input{" not in table and "\\end{tabular}\\begin" not in table
    rows = _cells(table)
    assert [tex_text(c) for c in rows[0]] == ["", "phenomenon", "tau & co", "n"]
    assert [tex_text(c) for c in rows[1]][0] == "#id"
    for row, (label, name, number) in zip(rows[2:], zip(names[::-1], names, range(len(names)))):
        assert len(row) == 4, row
        assert [_printed(tex_text(c)) for c in row] == [_printed(label), _printed(name), "0.2", str(number)]


def test_a_table_of_sick_sentences(data_dir):
    """Real text: SICK's first 300 pairs, sentence A in a table, read back."""
    pairs = load_sick(Settings(data_dir=data_dir))[:300]
    frame = pd.DataFrame({"sentence": [p.sentence_a for p in pairs], "relatedness": [p.relatedness for p in pairs]})
    rows = _cells(escaping.latex_table(frame, float_format="%.2f", na_rep=""))
    assert [tex_text(r[0]) for r in rows[1:]] == [_printed(p.sentence_a).strip() for p in pairs]
    assert [float(r[1]) for r in rows[1:]] == pytest.approx([p.relatedness for p in pairs], abs=0.005)


def test_missing_values_and_other_objects():
    frame = pd.DataFrame({"name": ["a_b", None], "value": [float("nan"), 1.0]})
    rows = _cells(escaping.latex_table(frame, float_format="%.1f", na_rep=""))
    assert rows[1:] == [["a\\_b", ""], ["", "1.0"]]
    assert _cells(escaping.latex_table(frame))[1][1] == "NaN"

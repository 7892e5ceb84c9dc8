"""The one-file HTML report of a dashboard view: sections of headings, notes, number tables, plotly figures and
data tables, written by one Jinja2 template (``templates/report.html.j2``) with autoescape on, so a name,
sentence or note is always text, never markup. A page that reports its view builds :class:`Section` values from
the frames it draws (with the same figure builders, :mod:`muttlab.dashboard.charts`, and formatters,
:mod:`muttlab.dashboard.number_format`) and hands them to :func:`render`.

Only two kinds of block carry markup, both written here from data: a figure (plotly's own HTML, plotly.js
inlined once per document) and a table (pandas' ``to_html`` with ``escape=True``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Sequence

import pandas as pd
from markupsafe import Markup

from muttlab.dashboard import charts, facts
from muttlab.dashboard.number_format import column_formatters


@dataclass(frozen=True)
class Block:
    """One piece of a section, drawn by the template according to ``kind``."""

    kind: str  # heading, note, numbers, figure, table
    text: str = ""
    level: int = 2
    code: str = ""
    css: str = ""
    rows: tuple[tuple[str, str], ...] = ()
    figure: object = None
    markup: Markup = Markup("")


@dataclass
class Section:
    """A part of a report, its blocks in the order the view shows them."""

    blocks: list[Block] = field(default_factory=list)

    def heading(self, text: str, level: int = 2) -> "Section":
        self.blocks.append(Block("heading", text, level))
        return self

    def note(self, text: str, code: str = "", css: str = "") -> "Section":
        """A paragraph of text, with a ``code`` part after it (a signature, a command)."""
        self.blocks.append(Block("note", text, code=code, css=css))
        return self

    def numbers(self, rows: Sequence[tuple[str, str]], css: str = "") -> "Section":
        """A two-column table of labels and numbers already written by the view's formatters."""
        self.blocks.append(Block("numbers", rows=tuple((str(a), str(b)) for a, b in rows), css=css))
        return self

    def figure(self, figure: charts.Figure) -> "Section":
        self.blocks.append(Block("figure", figure=figure))
        return self

    def table(self, frame: pd.DataFrame, caption: str = "", css: str = "", formatters: dict | None = None
              ) -> "Section":
        """``frame`` as an HTML table, each column written by its quantity's formatter (``formatters``, by default
        :func:`muttlab.dashboard.number_format.column_formatters`), every cell escaped."""
        self.blocks.append(Block("table", caption, 3, markup=table_markup(frame, css, formatters)))
        return self

    def markup_table(self, markup: str, caption: str = "") -> "Section":
        """A table another module of the dashboard wrote, escaping every value itself (the published table)."""
        self.blocks.append(Block("table", caption, 3, markup=Markup(markup)))
        return self


def table_markup(frame: pd.DataFrame, css: str = "", formatters: dict | None = None) -> Markup:
    """``frame`` as an escaped HTML table (classes ``grid`` and ``css``)."""
    return Markup(frame.to_html(index=False, escape=True, border=0, classes=" ".join(filter(None, ("grid", css))),
                                formatters=column_formatters(frame) if formatters is None else formatters,
                                float_format=lambda v: f"{v:.4g}"))


@lru_cache(maxsize=1)
def _template():
    from jinja2 import Environment, PackageLoader, StrictUndefined

    environment = Environment(loader=PackageLoader("muttlab.dashboard", "templates"), autoescape=True,
                              undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return environment.get_template("report.html.j2")


def render(page: str, query: str, sections: Sequence[Section]) -> str:
    """The report's HTML document: the view's page and query string, its sections, the installation's facts
    (versions, data licences) as the footer. Figures are drawn by plotly.js, inlined with the first."""
    drawn, count = [], 0
    for section in sections:
        blocks = []
        for block in section.blocks:
            if block.kind == "figure":
                block = Block("figure", markup=Markup(charts.embed_html([block.figure], start=count)))
                count += 1
            blocks.append(block)
        drawn.append(Section(blocks))
    return _template().render(page=page, query=query, sections=drawn, footer=facts.collect().lines())

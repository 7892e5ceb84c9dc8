"""The accuracy grid as one HTML table: what the Run page draws first. No Streamlit here (testable alone).

A chart of the full grid (17 metrics x 10 corruption types x 3 reference counts) costs a browser a chart
library and one SVG cell, label and hover marker per cell; on a loaded machine that was most of the time to
the first grid. A table of coloured links is drawn as soon as it arrives and shows the
same: each cell's accuracy as text and colour (the heatmap's red-yellow-blue scale, fixed to 0-100 %),
passed/n, the 95% Wilson interval and the tie rate on hover (the cell's ``title``), and a link that opens
its drill-down — an ordinary address, so it can also be copied or opened in a new tab. The chart is still
offered as a download (:func:`muttlab.dashboard.charts.accuracy_heatmap`).

Every name in the table (metric names can come from a user's metric plug-in) is HTML-escaped.
"""
from __future__ import annotations

import html
from typing import Mapping, Sequence
from urllib.parse import urlencode

import pandas as pd

from muttlab import api
from muttlab.dashboard.charts import ACCURACY_SCALE, colours_with_ink
from muttlab.dashboard.legend import EMPTY_COLOUR, grid_legend_html
from muttlab.dashboard.number_format import cell_lines, round_percent

# Widths that keep every label and number readable at any window width: a corruption type's label is set
# vertically (a narrow window cannot hold ten horizontal labels side by side without one running into the
# next), and below the table's minimum width the table scrolls sideways inside its own box, not the page.
METRIC_COLUMN_REM = 9.5
CELL_COLUMN_REM = 2.4
CSS = """<style>
.mutt-grid { font-size: 0.8rem; }
.mutt-grid h4 { font-size: 0.95rem; margin: 0.6rem 0 0.2rem 0; padding: 0; }
.mutt-grid .mutt-scroll { overflow-x: auto; max-width: 100%; }
.mutt-grid table { border-collapse: separate; border-spacing: 2px; table-layout: fixed; width: 100%; margin: 0; }
.mutt-grid th { font-weight: 600; padding: 2px 4px; vertical-align: bottom; line-height: 1.15; border: none;
  background: none; overflow-wrap: anywhere; }
.mutt-grid th.mutt-metric { text-align: right; width: """ + f"{METRIC_COLUMN_REM}rem" + """; white-space: nowrap;
  overflow: hidden; text-overflow: ellipsis; }
.mutt-grid th.mutt-type { writing-mode: sideways-lr; text-align: start; vertical-align: middle; white-space: nowrap;
  padding: 4px 2px; }
.mutt-grid td { padding: 0; text-align: center; border: none; }
.mutt-grid td a { display: block; padding: 3px 0; text-decoration: none; font-variant-numeric: tabular-nums; }
.mutt-grid td a:hover { outline: 2px solid #111827; }
.mutt-grid td.mutt-empty { background: """ + EMPTY_COLOUR + """; }
.mutt-grid th.mutt-family { text-align: center; font-weight: 600; border-bottom: 2px solid #6b7280; }
.mutt-grid th.mutt-family + th.mutt-family, .mutt-grid th.mutt-first { border-left: 2px solid #6b7280; }
.mutt-grid .mutt-legend { display: flex; flex-wrap: wrap; align-items: center; gap: 0.3rem 1.2rem;
  margin-top: 0.5rem; opacity: 0.85; }
.mutt-grid .mutt-legend-title { font-weight: 600; }
.mutt-grid .mutt-scale { display: inline-flex; align-items: center; gap: 0.4rem; }
.mutt-grid .mutt-bar { display: inline-block; width: 12rem; max-width: 40vw; height: 0.6rem; border-radius: 2px; }
.mutt-grid .mutt-swatch { display: inline-block; width: 0.8rem; height: 0.8rem; margin-right: 0.3rem;
  border: 1px solid #9ca3af; vertical-align: middle; }
</style>"""
OTHER_FAMILY = "other"
# The grid as one tab stop (the WAI-ARIA grid pattern's roving tabindex): the first cell of each grid is in the
# tab order, the others are reached with the arrow keys (Home / End: the row's ends; Ctrl+Home / Ctrl+End: the
# grid's), and the cell last reached keeps the tab stop. Up and down run on through the tables of the other
# reference counts; empty cells are passed over. Static code that only moves focus: the markup stays usable
# without it (the offline report: every cell a link in the tab order).
KEYS_SCRIPT = """<script>
(() => {
  const prepare = (grid) => {
    if (grid.querySelector("td a[tabindex]")) return;  // prepared: it runs after every change of the page
    grid.querySelectorAll("td a").forEach((a, i) => a.setAttribute("tabindex", i === 0 ? "0" : "-1"));
  };
  const prepareAll = () => document.querySelectorAll(".mutt-grid").forEach(prepare);
  prepareAll();
  if (window.muttlabGridKeys) return;
  window.muttlabGridKeys = true;
  new MutationObserver(prepareAll).observe(document.body, {childList: true, subtree: true});
  document.addEventListener("keydown", (event) => {
    const from = event.target;
    const grid = from instanceof HTMLAnchorElement && from.closest("td") ? from.closest(".mutt-grid") : null;
    if (!grid) return;
    const rows = [...grid.querySelectorAll("tbody tr")].map((tr) => [...tr.querySelectorAll("td")]);
    const r = rows.findIndex((row) => row.includes(from.parentElement));
    const c = rows[r].indexOf(from.parentElement);
    const at = (i, j) => (rows[i] && rows[i][j] ? rows[i][j].querySelector("a") : null);
    const walk = (i, j, di, dj) => {
      for (i += di, j += dj; rows[i] && j >= 0 && j < rows[i].length; i += di, j += dj) {
        if (at(i, j)) return at(i, j);
      }
      return null;
    };
    const ends = (row, last) => (last ? [...row].reverse() : row).map((td) => td.querySelector("a")).find(Boolean);
    const key = event.key, ctrl = event.ctrlKey || event.metaKey;
    const to = key === "ArrowRight" ? walk(r, c, 0, 1) : key === "ArrowLeft" ? walk(r, c, 0, -1)
      : key === "ArrowDown" ? walk(r, c, 1, 0) : key === "ArrowUp" ? walk(r, c, -1, 0)
      : key === "Home" ? ends(ctrl ? rows.flat() : rows[r], false)
      : key === "End" ? ends(ctrl ? rows.flat() : rows[r], true) : undefined;
    if (to === undefined) return;
    event.preventDefault();
    if (!to) return;
    grid.querySelectorAll('td a[tabindex="0"]').forEach((a) => a.setAttribute("tabindex", "-1"));
    to.setAttribute("tabindex", "0");
    to.focus();
  });
})();
</script>"""


def cell_colours(accuracies: Sequence[float]) -> list[tuple[str, str]]:
    """Per accuracy (%): the background (the heatmap chart's colour there) and a text colour readable on it."""
    return colours_with_ink(ACCURACY_SCALE, [float(a) / 100.0 for a in accuracies])


def family_of(corruption: str) -> str:
    """The family a corruption type belongs to ("meaning-altering"...), or "other" for a type the catalogue
    does not know (a user's suite)."""
    try:
        return api.corruption_type(corruption).family.value
    except KeyError:
        return OTHER_FAMILY


def by_family(corruptions: Sequence[str]) -> list[tuple[str, list[str]]]:
    """The corruption types grouped by family, families in order of first appearance, types in given order."""
    groups: dict[str, list[str]] = {}
    for c in corruptions:
        groups.setdefault(family_of(c), []).append(c)
    return list(groups.items())


def drilldown_link(metric: str, corruption: str, refs: int, suite: str = "default") -> str:
    """The Drill-down page's address for one cell, relative to the app's root (as the page reads it)."""
    params = {"metric": metric, "corruption": corruption, "refs": int(refs)}
    if suite != "default":
        params["suite"] = suite
    return "drilldown?" + urlencode(params)


def cell_title(row, metric: str, label: str, refs: int) -> str:
    """What hovering a cell shows: :func:`muttlab.dashboard.number_format.cell_lines` (the heatmap chart's hover
    says the same), then what a click does."""
    return "\n".join(cell_lines(row, metric, label, refs) + ["click to open the trials"])


def cell_name(row, metric: str, label: str, refs: int) -> str:
    """A cell's accessible name, what a screen reader says on reaching it: metric, type, reference count and
    the accuracy as the tooltip writes it (``BLEU-4, Negated Subject, 5 references: accuracy 97.3% (327/336)``)."""
    return f"{metric}, {label}, {int(refs)} references: {cell_lines(row, metric, label, refs)[1]}"


def accuracy_grid_html(accuracy: pd.DataFrame, labels: Mapping[str, str] | None = None,
                       metric_order: Sequence[str] | None = None, corruption_order: Sequence[str] | None = None,
                       suite: str = "default") -> str:
    """One ``<div class="mutt-grid">``: a table per reference count, rows metrics, columns corruption types
    grouped by family under a header row of the families, and the colour legend below.

    Args:
      accuracy: ``Results.accuracy()`` or the shipped cells: metric, corruption, refs, n, passed, accuracy,
        ci_low, ci_high (%), optionally tie_rate.
      labels: display names of the corruption types.
      suite: the suite the cells were scored on; the drill-down links name it when it is not the default.
    """
    labels = dict(labels or {})
    metrics = list(metric_order or dict.fromkeys(accuracy["metric"]))
    families = by_family(list(corruption_order or dict.fromkeys(accuracy["corruption"])))
    corruptions = [c for _, group in families for c in group]
    first_of_family = {group[0] for _, group in families[1:]}
    by_cell = {(r.metric, r.corruption, int(r.refs)): r for r in accuracy.itertuples(index=False)}
    # A cell is coloured at the whole percentage it shows, by a class per percentage: a full grid needs
    # about 90 colour rules instead of two inline styles on each of its 630 cells (a sixth of the markup
    # the browser sanitises and parses before the grid appears).
    shown = sorted({round_percent(r.accuracy) for r in by_cell.values() if r.accuracy == r.accuracy})
    rules = [f".mutt-grid td.mutt-a{p}{{background:{bg}}}.mutt-grid td.mutt-a{p} a{{color:{fg}}}"
             for p, (bg, fg) in zip(shown, cell_colours(shown))]
    esc = html.escape
    min_width = METRIC_COLUMN_REM + CELL_COLUMN_REM * len(corruptions)
    parts = [CSS, f"<style>{''.join(rules)}</style>", '<div class="mutt-grid">']
    for k in sorted({int(k) for k in accuracy["refs"]}):
        parts.append(f'<h4>{k} references</h4><div class="mutt-scroll"><table style="min-width: {min_width:.1f}rem" '
                     f'aria-label="Accuracy with {k} references (arrow keys move between cells)">'
                     '<thead><tr><th class="mutt-metric"></th>')
        parts += [f'<th class="mutt-family" colspan="{len(group)}">{esc(family)}</th>' for family, group in families]
        parts.append('</tr><tr><th class="mutt-metric"></th>')
        parts += [f'<th class="{_type_class(c, first_of_family)}">{esc(labels.get(c, c))}</th>' for c in corruptions]
        parts.append("</tr></thead><tbody>")
        for m in metrics:
            parts.append(f'<tr><th class="mutt-metric" title="{esc(m)}">{esc(m)}</th>')
            for c in corruptions:
                row = by_cell.get((m, c, k))
                if row is None or row.accuracy != row.accuracy:
                    parts.append('<td class="mutt-empty"></td>')
                    continue
                percent = round_percent(row.accuracy)
                label = labels.get(c, c)
                parts.append(f'<td class="mutt-a{percent}"><a href="{esc(drilldown_link(m, c, k, suite))}" '
                             f'target="_self" aria-label="{esc(cell_name(row, m, label, k))}" '
                             f'title="{esc(cell_title(row, m, label, k))}">{percent}</a></td>')
            parts.append("</tr>")
        parts.append("</tbody></table></div>")
    parts.append(grid_legend_html(cell_colours))
    parts.append("</div>")
    return "".join(parts)


def _type_class(corruption: str, first_of_family: set[str]) -> str:
    """A corruption type's column header: set vertically; the first of a family draws the family's left border."""
    return "mutt-type mutt-first" if corruption in first_of_family else "mutt-type"

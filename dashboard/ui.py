"""Small Streamlit building blocks every page uses: the header and sample banner, tables and charts with
their downloads, and the notice shown when part of the project is not installed.

User text is never passed to ``unsafe_allow_html``: tables go through ``st.dataframe``, sentences
through ``st.text``/``st.code`` or the escaped HTML of :mod:`muttlab.dashboard.diff`. Where user text
(pair keys, sources, names, file names, error messages quoting them) sits inside Markdown — messages,
captions, labels — it goes through :func:`md_text` or :func:`caption_text`, so an image or link written in
it is shown as characters and never fetched.
"""
from __future__ import annotations

import html
import json
import logging
import re
import secrets
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from muttlab.dashboard import charts, number_format, plotly_hint, services
from muttlab.dashboard import view as link_view
from muttlab.dashboard.diff import DIFF_CSS
from muttlab import escaping
from muttlab.errors import MuttlabError
from muttlab.redact import scrub
from muttlab.settings import Settings, load_settings
from muttlab.api import Suite

LOG = logging.getLogger("muttlab.dashboard")

SAMPLE_BANNER = ("**Sample data.** No data dir is configured, so this is MUTT Lab's small bundled sample "
                 "(sentences written for the project, corrupted by its own generators; no human scores). "
                 "Set `MUTTLAB_DATA_DIR` (or `muttlab serve --data-dir`) to use the MUTT study's trials.")


# The app's one stylesheet for Streamlit's own widgets, drawn by :func:`header` on every page: what keeps a
# page readable in a narrow window (a phone, or four widgets side by side on a small laptop). The grid's own
# styles travel with it (:data:`muttlab.dashboard.grid_table.CSS`), the word diff's with the diff.
LAYOUT_CSS = """<style>
/* A small laptop: the wide layout's side margins left the content barely half the window. */
@media (max-width: 1280px) {
  [data-testid="stMainBlockContainer"] { padding-left: 1.5rem; padding-right: 1.5rem; }
}
/* Columns of widgets wrap onto a new row rather than shrink a selectbox below the width of its value. */
[data-testid="stHorizontalBlock"] { flex-wrap: wrap; }
[data-testid="stColumn"]:has([data-testid="stSelectbox"], [data-testid="stMultiSelect"], [data-testid="stCheckbox"]) {
  min-width: min(100%, 12rem); }
/* A multiselect's chosen values wrap onto further lines inside the widget (they scrolled sideways out of
   sight), and a long one onto two lines of its chip (it was cut). */
[data-testid="stMultiSelect"] div:has(> [data-testid="stMultiSelectTagsContainer"]) { height: auto; max-height: none; }
[data-testid="stMultiSelectTagsContainer"] { flex-wrap: wrap; overflow: visible; min-width: 0; padding-bottom: 5px; }
[data-testid="stMultiSelectTagsContainer"] span:has(> button) { height: auto; min-height: 28px; white-space: normal; }
[data-testid="stMultiSelectTagsContainer"] span:has(> button) > span { white-space: normal; overflow-wrap: anywhere; }
/* Labels wrap instead of ending in an ellipsis: a page link's, a toggle's, a number's (the comparison's "only A
   right / only B right" in a quarter of the column). */
[data-testid="stMetricLabel"] [data-testid="stMarkdownContainer"],
[data-testid="stMetricLabel"] [data-testid="stMarkdownContainer"] p,
[data-testid="stPageLink-NavLink"] span,
[data-testid="stCheckbox"] [data-testid="stWidgetLabel"] [data-testid="stMarkdownContainer"],
[data-testid="stCheckbox"] [data-testid="stWidgetLabel"] [data-testid="stMarkdownContainer"] p {
  white-space: normal !important; }
</style>"""


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "table"


# Characters that start inline Markdown in Streamlit (CommonMark + GFM: emphasis, code, links, images, raw
# HTML, strikethrough, tables, autolinks through "scheme:" and e-mail "@"; Streamlit's ":icon:" and "$math$").
_MD_INLINE = re.compile(r"([\\`*_{}\[\]()!<>~|$:@])")
# At the start of a line: headings, quotes, list items, rules, setext underlines, ordered lists.
_MD_LINE_START = re.compile(r"^(\s*)([#>+=-]|\d+(?=\.))", re.MULTILINE)
# What GFM's autolinks begin with, as md_text has escaped it: a scheme's "://", "www.", an address's "@".
_AUTOLINK = re.compile(r"\\:(?=//)|(?i:www)(?=\.)|\\@")
WORD_JOINER = "\u2060"


def md_text(text: object) -> str:
    """``text`` escaped for any Markdown element (``st.markdown``, ``st.caption``, ``st.info``, labels...):
    it shows as the same characters, with no link, image, emphasis or HTML, and with no secret or server
    folder (:func:`muttlab.redact.scrub`: anyone may open a page)."""
    return md_escape(scrub(text, services.settings()))


def md_escape(text: str) -> str:
    """``text`` as Markdown that shows its characters (no link, image, emphasis or HTML); nothing scrubbed."""
    out = _MD_INLINE.sub(r"\\\1", text)
    # GFM links URLs, "www." names and e-mail addresses found in the text once its escapes are read, so no
    # escape stops it: an invisible word joiner inside each keeps it text.
    out = _AUTOLINK.sub(lambda m: m.group() + WORD_JOINER if m.group().startswith("\\") else WORD_JOINER + m.group(),
                        out)
    return _MD_LINE_START.sub(lambda m: m.group(1) + (m.group(2) + "\\" if m.group(2)[0].isdigit()
                                                      else "\\" + m.group(2)), out)


def html_text(text: object) -> str:
    """``text`` for an HTML block (``st.html``): scrubbed like :func:`md_text`, then HTML-escaped."""
    return html.escape(scrub(text, services.settings()))


def caption_text(text: object) -> None:
    """A caption of user text: scrubbed and HTML-escaped into a caption-styled block, never read as Markdown."""
    st.html(f'<div class="mutt-caption" style="font-size: 0.875rem; opacity: 0.65">{html_text(text)}</div>')


def header(title: str, caption: str | None = None) -> Settings:
    """Page title and caption (plus the page styles); returns the server's settings."""
    st.title(title)
    if caption:
        st.caption(caption)
    st.html(LAYOUT_CSS + DIFF_CSS)
    problems = view().problems
    if st.session_state.pop(REPAINT_KEY, False):
        # The run that brings the figures is the page's own, not the visitor's: the first run has written the
        # checked link into the address, but what the link got wrong is still to be read.
        problems = problems or st.session_state.get(LINK_PROBLEMS_KEY, [])
    st.session_state[LINK_PROBLEMS_KEY] = problems
    if problems:
        st.warning(md_text("Left out of this link: " + "; ".join(problems) + "."), icon=":material/link_off:")
    return services.settings()


def load_suite(settings: Settings) -> Suite | None:
    """The app's suite with the sample banner when it is the sample; None (after an error box) when
    the data cannot be read."""
    try:
        suite = services.suite(settings)
    except MuttlabError as exc:
        st.error(f"The trials cannot be loaded: {md_text(exc)}")
        return None
    if suite.is_sample:
        st.info(SAMPLE_BANNER, icon=":material/science:")
    if not suite.trials:
        st.warning("The suite has no trials.")
        return None
    return suite


def table(frame: pd.DataFrame, name: str, key: str, column_config: dict | None = None, **kwargs) -> None:
    """``st.dataframe`` followed by its CSV download (every number as measured). Its columns of percentages and
    scores are shown as the grid's tooltips and the figures' hovers write them
    (:func:`muttlab.dashboard.number_format.column_formats`), unless ``column_config`` says otherwise."""
    formats = {c: st.column_config.NumberColumn(format=f) for c, f in number_format.column_formats(frame.columns).items()}
    st.dataframe(frame, hide_index=True, column_config={**formats, **(column_config or {})}, **kwargs)
    csv_download("Download CSV", frame, name, f"{key}-csv")


def folded_table(label: str, frame: pd.DataFrame, name: str, key: str, expanded: bool = False, **kwargs) -> None:
    """:func:`table` in an expander (keyed ``<key>-open``), sent only once it is opened: for what a page shows
    beside its main element. A table on the page has the browser fetch its scripts (about 1.4 MB) with the
    page's, and they held a chart above it back by 0.1–0.4 s (docs/dashboard.md, "Tables beside a chart")."""
    box = st.expander(label, expanded=expanded, key=f"{key}-open", on_change="rerun", icon=":material/table:")
    if box.open:
        with box:
            table(frame, name, key, **kwargs)


def csv_download(label: str, frame: pd.DataFrame, name: str, key: str) -> None:
    """A CSV download of ``frame``, written only when clicked (a full run's table is megabytes); text cells are
    neutralised for spreadsheets (:func:`muttlab.escaping.csv_frame`)."""
    st.download_button(label, lambda: escaping.csv_frame(frame).encode("utf-8"), file_name=f"{_slug(name)}.csv",
                       mime="text/csv", key=key, icon=":material/download:", on_click="ignore")


# A browser draws a session's first figure only once it has fetched and run plotly's script (4.7 MB), and while
# that runs nothing else on the page is drawn: the trial cards under a Drill-down's histogram waited 2-5 s for it
# (docs/dashboard.md, Paints). So a session's first page with figures is sent without them, each one's place kept
# at its height; at the page's end (:func:`footer`) a fragment is declared whose rerun the browser asks for on a
# timer (``st.fragment(run_every=...)``): it comes once the browser has drawn the page, and runs the page again
# with its figures. Every later page of the session has plotly already and draws its figures at once.
PLOTLY_READY_KEY = "muttlab-plotly-ready"  # this session's browser has been sent a figure
PAINT_PASS_KEY = "muttlab-paint-pass"  # None, "wanted" (a figure waits), "armed" (the browser's timer runs)
PAINT_PASS_S = 0.5
REPAINT_KEY = "muttlab-repaint"  # set for the page run the paint pass asks for
LINK_PROBLEMS_KEY = "muttlab-link-problems"  # what the page's last own run said its link got wrong
PLOTLY_HINT_KEY = "muttlab-plotly-hint"  # the footer has asked for the hint's cookie (dashboard.plotly_hint)


def chart(fig: charts.Figure, name: str, key: str, live: bool = False, selectable: bool = False):
    """The figure across the column, drawn by plotly as built (no Streamlit theme: the page shows what the
    download holds), with "Download chart (HTML)" below: the same figure as a page that opens offline. Its
    toolbar saves a PNG.

    On a session's first page with figures, the figure's place is kept (its height) and the figure comes with
    the page's second run, once the browser has drawn the rest (:data:`PLOTLY_READY_KEY`). A ``live`` figure, one
    redrawn while a computation runs (the training curve), is drawn at once and has no download: the run it
    belongs to has no second. A ``selectable`` figure's points can be clicked: returns the points chosen (plotly's
    selection: each with its ``customdata``), else an empty list."""
    chosen = []
    if not st.session_state.get(PLOTLY_READY_KEY) and plotly_hint.seen(st.context.cookies):
        st.session_state[PLOTLY_READY_KEY] = True
    if live or st.session_state.get(PLOTLY_READY_KEY):
        if selectable:
            event = st.plotly_chart(fig, theme=None, key=key, width="stretch", config=_config(name),
                                    on_select="rerun", selection_mode="points")
            chosen = list((event or {}).get("selection", {}).get("points", []))
        else:
            st.plotly_chart(fig, theme=None, key=key, width="stretch", config=_config(name))
    else:
        with st.container(height=int(fig.layout.height or 450), border=False):
            st.caption("Drawing the chart…")
        st.session_state[PAINT_PASS_KEY] = "wanted"
    if not live:
        chart_download(lambda: fig, name, key)
    return chosen


@st.fragment(run_every=PAINT_PASS_S)
def _paint_pass() -> None:
    """Declared at the end of a page whose figures wait (:func:`chart`): its first run, with the page, arms it;
    the next, which the browser asks for once the page is drawn, runs the page again with its figures. That
    full run declares no fragment, so the browser drops the timer."""
    if st.session_state.get(PAINT_PASS_KEY) == "armed":
        st.session_state[PLOTLY_READY_KEY] = True
        st.session_state[PAINT_PASS_KEY] = None
        st.session_state[REPAINT_KEY] = True
        st.rerun()
    st.session_state[PAINT_PASS_KEY] = "armed"


def _config(name: str) -> dict:
    """plotly's options for the figure, its PNG named as its HTML download is."""
    return {**charts.CONFIG, "toImageButtonOptions": {**charts.CONFIG["toImageButtonOptions"], "filename": _slug(name)}}


def chart_download(make_figure: Callable[[], charts.Figure], name: str, key: str) -> None:
    """"Download chart (HTML)": the figure ``make_figure()`` as a standalone page that draws it offline (plotly.js
    inlined), built only when clicked."""
    st.download_button("Download chart (HTML)",
                       lambda: charts.offline_html(make_figure(), name).encode("utf-8"),
                       file_name=f"{_slug(name)}.html", mime="text/html", key=f"{key}-html",
                       icon=":material/bar_chart:", on_click="ignore")


# A progress message that counts its own work ("300 of 1,200 items", "1,024 of 9,000 sentences encoded", "5,000
# of 100,000 lines"): drawn as it is, without the step count after it.
COUNTED = re.compile(r"\d of [\d,]+ (items|sentences|lines)\b")


def with_progress(text: str, compute, failure: str = "The study failed", unit: str = ""):
    """Run ``compute(progress)`` under a progress bar fed by the engine's ``(step, total, message)`` callback.
    Each report is also where the computation stops when its visitor has gone or used up their share of the
    demo (``services.still_wanted``).

    Returns what ``compute`` returns, or None after showing the :class:`MuttlabError` it raised.
    """
    try:
        with progress_bar(text, unit) as progress:
            return compute(progress)
    except services.DemoLimit as exc:
        demo_limit(exc)
        return None
    except MuttlabError as exc:
        st.error(f"{failure}: {md_text(exc)}")
        return None


@contextmanager
def progress_bar(text: str, unit: str = "") -> Iterator[Callable[[int, int, str], None]]:
    """A progress bar for the block, removed at its end; yields the engine's ``(step, total, message)`` callback
    that draws it. Each report is also where the work stops when its visitor has gone or used up their share of
    the demo (``services.still_wanted``)."""
    bar = st.progress(0.0, text=text)

    def progress(step: int, total: int, message: str) -> None:
        services.still_wanted()
        # The engine's item counts (muttlab.engine.progress.RunProgress) say n of N themselves, a study's step
        # with its items (services.queued_with_progress) says its step, and so does a count of sentences.
        counted = message if COUNTED.search(message) or " · loading " in message else f"{message} · {step}/{total}{unit}"
        bar.progress(min(1.0, step / total) if total else 1.0, text=counted)

    try:
        yield progress
    finally:
        bar.empty()


def demo_limit(exc: MuttlabError) -> None:
    """What the public demo refused or stopped, and why (:class:`muttlab.dashboard.services.DemoLimit`)."""
    st.warning(md_text(exc), icon=":material/hourglass_disabled:")


def demo_caption(settings: Settings) -> None:
    """On the public demo, under a form that computes: what a visitor may ask of it."""
    if services.governs(settings):
        limits = settings.limits
        st.caption(f"Public demo: each visitor has {limits.visitor_compute_s:,} s of computing in 15 minutes, one "
                   "computation at a time, with the quick metrics (BLEU, ROUGE, CIDEr, METEOR, chrF, TER); what "
                   "was computed before is answered at once.")


def loadable_metrics(settings: Settings) -> list[str]:
    """The metrics this installation can load; when there are none, the page says so (and gets an empty list)."""
    available = services.available_metrics(settings)
    if not available:
        st.error("No metric can be loaded in this installation (see the Run page).")
    return available


def not_available(what: str, module: str, issue_hint: str = "") -> None:
    """The notice a page shows in place of a part of the project that is not installed."""
    st.warning(f"**{what} is not available in this installation** (the module `{module}` is missing). "
               f"{issue_hint}".strip(), icon=":material/construction:")


# The browser's own check of a paste into a text box, before the text reaches the box: Streamlit's max_chars
# refuses an over-long value only after the browser has put it in the box, which for half a megabyte froze the
# tab for minutes. Static code: the box's label and limit are the only values written into it (as JSON).
_PASTE_GUARD = """<div class="mutt-paste-note" role="alert" data-label="%(attribute)s" hidden
  style="color:#a33f00;font-size:0.875rem;margin-top:-0.5rem"></div>
<script>
(() => {
  const label = %(label)s, limit = %(limit)d;
  const guards = (window.muttlabPasteGuards = window.muttlabPasteGuards || {});
  if (guards[label]) { guards[label] = limit; return; }
  guards[label] = limit;
  document.addEventListener("beforeinput", (event) => {
    const box = event.target;
    if (!(box instanceof HTMLTextAreaElement) || box.getAttribute("aria-label") !== label) return;
    const text = event.data || (event.dataTransfer ? event.dataTransfer.getData("text/plain") : "");
    const room = guards[label] - (box.value.length - (box.selectionEnd - box.selectionStart));
    const note = [...document.querySelectorAll(".mutt-paste-note")].find((n) => n.dataset.label === label);
    if (text.length <= room) { if (note) note.hidden = true; return; }
    event.preventDefault();
    if (note) {
      note.textContent = "Not pasted: the text holds " + text.length.toLocaleString("en") + " characters, and "
        + "this box takes at most " + guards[label].toLocaleString("en") + " in all. The box keeps what it held. "
        + "Split the text, or upload it as a file (the same limit applies).";
      note.hidden = false;
    }
  }, true);
})();
</script>"""


def paste_guard(label: str, limit: int) -> None:
    """Below the text area labelled ``label``: a paste (or drop, or typed text) that would take it past ``limit``
    characters is refused by the browser before it enters the box, which keeps what it held, and a note says
    the limit (the text area's ``max_chars`` stays, checked again by the server)."""
    st.html(_PASTE_GUARD % {"attribute": html.escape(label, quote=True), "label": json.dumps(label),
                            "limit": int(limit)}, unsafe_allow_javascript=True)


def grid_keys() -> None:
    """After an accuracy grid (:mod:`muttlab.dashboard.grid_table`): one tab stop per grid, the arrow keys move
    between its cells (:data:`~muttlab.dashboard.grid_table.KEYS_SCRIPT`, static code)."""
    from muttlab.dashboard.grid_table import KEYS_SCRIPT

    st.html(KEYS_SCRIPT, unsafe_allow_javascript=True)


# --------------------------------------------------------------------------- state in the address bar

def view() -> link_view.View:
    """The address bar's query parameters, checked (:mod:`muttlab.dashboard.view`): the only way pages read
    them. What a link got wrong is left out; :func:`header` says what."""
    settings = services.settings()
    try:
        names = services.registry(settings).names
    except MuttlabError:  # a broken metric path: the page's catalogue says so; the link keeps no metric name
        names = []
    return link_view.check(st.query_params.to_dict(), settings, names)


def query_value(name: str, default: str | None = None) -> str | None:
    """Checked query parameter ``name`` of the address bar, or ``default``."""
    return view().value(name, default)


def query_list(name: str, options: Sequence, default: list, cast: Callable = str) -> list:
    """Checked values of query parameter ``name`` (comma-separated, or ``all``) that are among ``options``,
    in the order given; ``default`` when the parameter is absent or names nothing offered here."""
    raw = view().values(name)
    if not raw:
        return list(default)
    if raw == ["all"]:
        return list(options)
    wanted = [cast(part) for part in raw]
    return [v for v in dict.fromkeys(wanted) if v in options] or list(default)


def query_int(name: str, default: int | None = None) -> int | None:
    value = view().value(name)
    return int(value) if value is not None and value.isdigit() else default


def query_choice(name: str, options: Sequence, default, what: str, cast: Callable = str):
    """Checked query parameter ``name`` cast to one of ``options``; ``default`` when absent, and with a warning
    naming it when the link asks for a valid value this page does not offer."""
    raw = view().value(name)
    if raw is None:
        return default
    value = cast(raw)
    if value in options:
        return value
    st.warning(md_text(f"This page does not offer the {what} {raw}; showing {default}."), icon=":material/link_off:")
    return default


def query_choices(name: str, options: Sequence, default: list, what: str, cast: Callable = str) -> list:
    """:func:`query_list` that names, in a warning, the values of the link this page does not offer."""
    raw = view().values(name)
    chosen = query_list(name, options, default, cast)
    dropped = [v for v in raw if v != "all" and cast(v) not in options]
    if dropped:
        st.warning(md_text(f"This page does not offer the {what} {', '.join(dropped)}; left out."),
                   icon=":material/link_off:")
    return chosen


ASKED_KEY = "muttlab-asked"


def asked(what: tuple) -> bool:
    """Whether this session asked for ``what`` with a click (:func:`ask`)."""
    return what in st.session_state.get(ASKED_KEY, ())


def ask(what: tuple) -> None:
    """Record that this session clicked to compute ``what``: a link alone never starts work that takes more than
    a second, a visitor's click does."""
    st.session_state[ASKED_KEY] = {*st.session_state.get(ASKED_KEY, ()), what}


def waits_for_click(what: tuple, label: str, key: str, note: str, finished: bool = False) -> bool:
    """True (after a button and ``note``) while ``what`` is neither ``finished`` (the server has it: a memo, a
    shipped result) nor asked for by this session with a click: a link fills the form, a click starts the work.
    The button's click records ``what`` (:func:`ask`) and returns False at once."""
    if finished or asked(what):
        return False
    if st.button(label, key=key, type="primary", icon=":material/play_arrow:"):
        ask(what)
        return False
    st.info(md_text(note), icon=":material/touch_app:")
    return True


def slow_and_unasked(metrics: Sequence[str], what: tuple, label: str, key: str) -> bool:
    """:func:`waits_for_click` when ``metrics`` hold a slow one (outside ``services.is_quick``): a quick metric's
    one drill-down cell is small bounded work and opens at once."""
    slow = [m for m in metrics if not services.is_quick(m)]
    if not slow:
        return False
    return waits_for_click(what, label, key, f"{', '.join(slow)} take a while to score; press the button to "
                                             "compute.")


def encode_params(params: dict) -> dict[str, str]:
    """Query parameters as strings: lists comma-joined, None / empty left out."""
    out = {}
    for key, value in params.items():
        if value is None or value == "" or (isinstance(value, (list, tuple)) and not value):
            continue
        out[key] = ",".join(str(v) for v in value) if isinstance(value, (list, tuple)) else str(value)
    return out


def write_query(params: dict, keep: Sequence[str] = ()) -> None:
    """Make the address bar hold exactly ``params`` (plus the ``keep`` parameters already there), so that a
    reload or a shared link restores this view. Writes only when something changed."""
    wanted = encode_params(params)
    checked = view()
    for key in keep:
        if checked.value(key) is not None and key not in wanted:
            wanted[key] = checked.value(key)
    if st.query_params.to_dict() != wanted:
        st.query_params.from_dict(wanted)


def current_link() -> str:
    """The address of this view (page and query string) as the browser shows it."""
    base = ""
    try:
        base = (st.context.url or "").split("?")[0]
    except Exception:  # no browser context (AppTest, bare mode): the query string alone still restores the view
        base = ""
    query = view().query()
    return f"{base}?{query}" if query else base or "?"


def copy_link(page: str | None = None) -> None:
    """The link to this view, in a code box with Streamlit's copy button; with ``page`` (a page the report
    module covers) also the view as one offline HTML file."""
    link = st.expander("Link to this view", icon=":material/link:", key=f"link-{page or 'view'}", on_change="rerun")
    if not link.open:  # filled only when opened: its code box loads a large script into the browser
        return
    with link:
        st.caption("Opening this address restores the page with its selections.")
        st.code(current_link(), language=None)
        if page:
            from muttlab.dashboard.report_download import report_file

            query = urlencode({**view().params, "page": page})
            settings, visitor = services.settings(), services.current_visitor()
            # Made when pressed, from what this server has computed: never a computation.
            st.download_button("Download this view as a report (HTML, works offline)",
                               lambda: report_file(settings, query, visitor),
                               file_name=f"muttlab-{page}-report.html", mime="text/html", key=f"report-{page}",
                               icon=":material/description:", on_click="ignore")
            caption_text(f"Same file from the command line: muttlab report --view '{query}' --output report.html")


# An absolute path of the server that no scrubbing named (a library's, the interpreter's): not after ":" or "/"
# (a URL's), nor inside a word.
_SERVER_PATH = re.compile(r"(?<![\w:/.~-])/(?:[\w.@+~-]+/)+[\w.@+~-]*")


def _shown_error(exc: BaseException, reference: str) -> str:
    """What a visitor reads of an error the page did not handle: a MuttlabError's message (it is written for
    users), scrubbed of secrets and server paths; of any other error, only that it happened and its reference in
    the log."""
    if not isinstance(exc, MuttlabError):
        return (f"Something went wrong on this page and it stopped. The server's log has the details under "
                f"reference {reference}; reloading the page may help.")
    try:
        settings = load_settings()
    except MuttlabError:  # the settings themselves are what is broken: hide every path
        settings = None
    return f"This page cannot be shown: {_SERVER_PATH.sub('<server path>', scrub(str(exc), settings))}"


@contextmanager
def error_boundary() -> Iterator[None]:
    """Around a page's run (``app.py``): an error the page did not handle is shown as one scrubbed message
    (:func:`_shown_error`: no secret, no server path, no stack) and logged whole with a reference that the
    message names. Streamlit's stop and rerun signals are no Exceptions and pass through."""
    try:
        yield
    except Exception as exc:  # noqa: BLE001 (the one place a page's unexpected error is caught)
        reference = secrets.token_hex(4)
        LOG.error("a page failed (reference %s)", reference, exc_info=exc)
        st.error(md_escape(_shown_error(exc, reference)), icon=":material/error:")


def footer() -> None:
    """Version, commit, data checksums and the datasets' licences and citations (every page); then, on a page
    whose figures wait for the browser (:func:`chart`), the pass that brings them."""
    facts = services.facts()
    st.divider()
    st.caption("  \n".join(facts.lines()))
    if st.session_state.get(PAINT_PASS_KEY) == "wanted":
        _paint_pass()
    elif st.session_state.get(PLOTLY_READY_KEY) and not plotly_hint.seen(st.context.cookies):
        beacon = plotly_hint.beacon(st.context.headers)
        if beacon is not None and not st.session_state.get(PLOTLY_HINT_KEY):
            st.session_state[PLOTLY_HINT_KEY] = True
            st.html(beacon)

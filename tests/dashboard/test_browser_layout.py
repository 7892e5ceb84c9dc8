"""Every page is readable on a small laptop (1,024 x 768) and a phone (390 x 844), measured in real Chromium
against `muttlab serve` on the bundled sample from the boxes the browser laid out (``getBoundingClientRect``):

* the accuracy grid's column headers do not overlap one another;
* nothing reaches past the right edge of the window unless it sits in a scroll container of its own inside
  the page (a wide grid or table scrolls sideways in its box; the page itself never does);
* a multiselect's chosen values (its chips) lie inside the widget's box, so every choice can be read;
* a selectbox shows its whole value (its text is not cut: ``scrollWidth <= clientWidth``), and no other text is
  cut short with an ellipsis (a page link's label, a chip, a button).

The server's pair store holds a pair, so that Annotate is laid out with a pair and its review buttons.
"""
from __future__ import annotations

import pytest

from muttlab.dashboard.app import page_stems
from muttlab.pairs.store import open_store
from muttlab.sources import load_sample
from tests.dashboard.conftest import settle
from tests.dashboard.test_browser import ARTIFACTS, EXCEPTION

pytestmark = pytest.mark.browser

WIDTHS = {"laptop": (1024, 768), "phone": (390, 844)}
# What a page draws only when asked: a link that asks for it, so its controls and tables are measured too.
LINKS = {
    "run": "?metrics=BLEU-4,ROUGE-L&refs=5",
    "drilldown": "?metric=ROUGE-L&corruption=neg_subj&refs=5&vs=BLEU-4",
    "severity": "?metrics=BLEU-4,ROUGE-L&corruption=typo&strengths=1,2,3&refs=5",
}
SLACK = 1.0  # px: sub-pixel rounding of the layout

# One script per check; each returns a list of what it found wrong, described for the failure message.
HEADERS_OVERLAP = """() => {
  const out = [];
  const textBox = (el) => { const r = document.createRange(); r.selectNodeContents(el);
                            return r.getBoundingClientRect(); };
  for (const row of document.querySelectorAll('.mutt-grid thead tr')) {
    const boxes = [...row.querySelectorAll('th')].filter(th => th.textContent.trim())
                    .map(th => [th.textContent.trim(), textBox(th)]);
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const [a, ra] = boxes[i], [b, rb] = boxes[j];
      const x = Math.min(ra.right, rb.right) - Math.max(ra.left, rb.left);
      const y = Math.min(ra.bottom, rb.bottom) - Math.max(ra.top, rb.top);
      if (x > %(slack)s && y > %(slack)s) out.push(`"${a}" overlaps "${b}" by ${x.toFixed(1)} px`);
    }
  }
  return out;
}""" % {"slack": SLACK}

# A scroll container of the page's own content: inside the main block, scrolling sideways, within the window.
PAST_THE_EDGE = """() => {
  const out = [], width = document.documentElement.clientWidth;
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  const scrolls = (el) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
  const inScrollBox = (el) => {
    for (let a = el.parentElement; a && a !== main; a = a.parentElement) {
      if (scrolls(a) && a.getBoundingClientRect().right <= width + %(slack)s) return true;
    }
    return false;
  };
  for (const el of main.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.height === 0 || r.right <= width + %(slack)s) continue;
    const style = getComputedStyle(el);
    if (style.visibility === 'hidden' || style.display === 'none') continue;
    if (!inScrollBox(el)) {
      const name = el.getAttribute('data-testid') || el.className || el.tagName;
      out.push(`${el.tagName.toLowerCase()} ${String(name).slice(0, 60)} "${el.textContent.trim().slice(0, 40)}"`
               + ` ends at ${r.right.toFixed(0)} px`);
    }
  }
  if (document.documentElement.scrollWidth > width + %(slack)s)
    out.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} px wide`);
  return [...new Set(out)].slice(0, 20);
}""" % {"slack": SLACK}

# A chip is a chosen value with its remove button; the widget's box is the control the chips sit in.
CHIPS_OUTSIDE = """() => {
  const out = [];
  for (const widget of document.querySelectorAll('[data-testid="stMultiSelect"]')) {
    const tags = widget.querySelector('[data-testid="stMultiSelectTagsContainer"]');
    if (!tags) continue;
    const box = tags.parentElement.getBoundingClientRect();
    const label = widget.querySelector('label')?.textContent.trim() || '?';
    for (const chip of tags.querySelectorAll('span:has(> button)')) {
      const r = chip.getBoundingClientRect(), text = chip.textContent.trim();
      if (r.left < box.left - %(slack)s || r.right > box.right + %(slack)s
          || r.top < box.top - %(slack)s || r.bottom > box.bottom + %(slack)s)
        out.push(`${label}: chip "${text}" at ${r.left.toFixed(0)}-${r.right.toFixed(0)} x ${r.top.toFixed(0)}-`
                 + `${r.bottom.toFixed(0)} px outside the widget's ${box.left.toFixed(0)}-${box.right.toFixed(0)} x `
                 + `${box.top.toFixed(0)}-${box.bottom.toFixed(0)} px`);
      for (const part of chip.querySelectorAll('span'))
        if (part.scrollWidth > part.clientWidth + %(slack)s) out.push(`${label}: chip "${text}" is cut`);
    }
  }
  return out;
}""" % {"slack": SLACK}

# A selectbox shows its value in the text field of its combo box.
SELECT_CUT = """() => {
  const out = [];
  for (const widget of document.querySelectorAll('[data-testid="stSelectbox"]')) {
    const label = widget.querySelector('label')?.textContent.trim() || '?';
    const field = widget.querySelector('input');
    if (field && field.scrollWidth > field.clientWidth + %(slack)s)
      out.push(`${label}: "${field.value}" needs ${field.scrollWidth} px, shows ${field.clientWidth} px`);
  }
  return out;
}""" % {"slack": SLACK}

# Any other text the page shortens with an ellipsis (a page link's label, a tab, a metric's name in the grid).
ELLIPSIS_CUT = """() => {
  const out = [];
  for (const el of document.querySelectorAll('[data-testid="stMain"] *')) {
    if (getComputedStyle(el).textOverflow !== 'ellipsis' || !el.getBoundingClientRect().width) continue;
    if (el.scrollWidth > el.clientWidth + %(slack)s)
      out.push(`"${el.textContent.trim().slice(0, 60)}" needs ${el.scrollWidth} px, shows ${el.clientWidth} px`);
  }
  return out;
}""" % {"slack": SLACK}

CHECKS = {"grid headers overlap": HEADERS_OVERLAP, "past the right edge": PAST_THE_EDGE,
          "multiselect chips outside their widget": CHIPS_OUTSIDE, "selectbox text cut": SELECT_CUT,
          "text cut by an ellipsis": ELLIPSIS_CUT}


def page_paths() -> list[tuple[str, str]]:
    """(name, address) of every page in the navigation (the Run page is the root)."""
    return [(stem, ("/" if stem == "run" else f"/{stem}") + LINKS.get(stem, "")) for stem in page_stems()]


@pytest.fixture(scope="module")
def a_stored_pair(sample_server):
    with open_store(sample_server.settings) as store:
        store.add(load_sample().trials[:1], author="loader", status="proposed")


def test_every_page_is_readable_at_both_widths(sample_server, a_stored_pair, browser):
    # One window per width, each page opened in both at once: each window waits for the server's run of its page
    # while the other's is drawn (one width after the other, the test waited for each run twice).
    tabs = {width: browser.new_page(viewport={"width": w, "height": h}) for width, (w, h) in WIDTHS.items()}
    for tab in tabs.values():
        tab.set_default_timeout(300_000)
    found = {}
    try:
        for name, path in page_paths():
            for tab in tabs.values():
                tab.goto(sample_server.url + path, wait_until="commit")
            for width, tab in tabs.items():
                settle(tab)
                assert tab.locator(EXCEPTION).count() == 0, (name, width)
                if name == "run":
                    assert tab.locator(".mutt-grid thead th").count() > 10  # the grid whose headers are measured
                tab.screenshot(path=str(ARTIFACTS / f"layout-{width}-{name}.png"), full_page=True)
                for check, script in CHECKS.items():
                    problems = tab.evaluate(script)
                    if problems:
                        found[f"{width}, {name}: {check}"] = problems
    finally:
        for tab in tabs.values():
            tab.close()
    assert not found, "\n".join(f"{where}:\n  " + "\n  ".join(what) for where, what in found.items())

"""The dashboard's terms, one sentence each: shown as ``help=`` tooltips beside the widgets and numbers that
use them, and all together in an expander on the Run page. No Streamlit here."""
from __future__ import annotations

from muttlab.corruptions import catalog
from muttlab.corruptions.base import Rule
from muttlab.settings import DEFAULT_TIE_TOLERANCE, DEFAULT_TOLERANCE

TERMS: dict[str, str] = {
    "signature": "A metric's exact identity (name, version, parameters, model hash and rule settings); two results "
                 "with the same signature were computed the same way, so their numbers may be compared.",
    "tie": "A trial whose original and corrupted sentence get the same score, up to rounding: "
           f"|s_orig − s_corr| ≤ {DEFAULT_TIE_TOLERANCE:g} × max(1, |s_orig|) (the default tie tolerance).",
    "tie rule": "How a tie is judged: for meaning-altering and fluency-disrupting corruptions a tie is a failure "
                "(the metric did not notice the change); for meaning-preserving ones it passes.",
    "Wilson interval": "The 95% confidence interval of an accuracy (Wilson score interval): where the true pass "
                       "rate plausibly lies given how many trials the cell has; few trials give a wide interval.",
    "margin (orig > corr)": "For meaning-altering and fluency-disrupting corruptions: how much better the original "
                            "scores than the corruption, in the metric's better direction; positive passes, zero "
                            "or negative fails.",
    "margin (difference)": "For meaning-preserving corruptions: the allowed change minus the actual one, "
                           f"{DEFAULT_TOLERANCE:g} (the default tolerance) − |s_orig − s_corr| / s_orig; zero or "
                           "positive passes, and "
                           f"−0.85 means the score moved by 100% of s_orig, {1 / DEFAULT_TOLERANCE:.1f} times "
                           "the allowed change.",
    "noise floor": "The smallest score difference a metric can tell from its own numerical noise; differences "
                   "below it are not evidence either way.",
    "references (5/10/20)": "How many human-written reference sentences each trial is scored against; more "
                            "references usually make a metric more accurate.",
    "unsupported": "A challenge-set pair in a language the metric was not built for: it is not scored and counts "
                   "in no statistic (neither a pass nor a failure).",
    "not applied": "A corruption generator found nothing to rewrite in the sentence (for example no "
                   "prepositional phrase to duplicate), so that corruption has no trial for it.",
}


def term(name: str) -> str:
    """The explanation of ``name`` (a key of :data:`TERMS`)."""
    return TERMS[name]


def margin(corruption: str) -> str:
    """What a margin means for ``corruption``'s rule; both meanings for a type the catalogue does not know."""
    try:
        rule = catalog.get(corruption).rule
    except KeyError:
        return f"{TERMS['margin (orig > corr)']} {TERMS['margin (difference)']}"
    return TERMS["margin (difference)" if rule is Rule.DIFFERENCE else "margin (orig > corr)"]


def markdown() -> str:
    """Every term as a Markdown list, for the glossary expander."""
    return "\n".join(f"- **{name}**: {text}" for name, text in TERMS.items())

"""The dashboard's terms, one sentence each: shown as ``help=`` tooltips beside the widgets and numbers that
use them, and all together in an expander on the Run page. The terms a verdict's rules decide (tie, tie rule,
the Difference margin) are written with the server's rules (``settings.rules``), not the defaults. No Streamlit
here."""
from __future__ import annotations

from muttlab import api
from muttlab.api import Rule
from muttlab.settings import Settings

TERMS: dict[str, str] = {
    "signature": "A metric's exact identity (name, version, parameters, model hash and rule settings); two results "
                 "with the same signature were computed the same way, so their numbers may be compared.",
    "tie": "A trial whose original and corrupted sentence get the same score under this server's tie rule: {tie}.",
    "tie rule": "How a tie is judged: for meaning-altering and fluency-disrupting corruptions a tie is a failure "
                "(the metric did not notice the change); for meaning-preserving ones it passes. This server's "
                "rules: {rules}.",
    "Wilson interval": "The 95% confidence interval of an accuracy (Wilson score interval): where the true pass "
                       "rate plausibly lies given how many trials the cell has; few trials give a wide interval.",
    "margin (orig > corr)": "For meaning-altering and fluency-disrupting corruptions: how much better the original "
                            "scores than the corruption, in the metric's better direction; positive passes, zero "
                            "or negative fails.",
    "margin (difference)": "For meaning-preserving corruptions: the allowed change minus the actual one, "
                           "{tolerance} (this server's tolerance) − |s_orig − s_corr| / s_orig; zero or positive "
                           "passes, and {full} means the score moved by 100% of s_orig, {times} times the allowed "
                           "change.",
    "noise floor": "The smallest score difference a metric can tell from its own numerical noise; differences "
                   "below it are not evidence either way.",
    "references (5/10/20)": "How many human-written reference sentences each trial is scored against; more "
                            "references usually make a metric more accurate.",
    "unsupported": "A challenge-set pair in a language the metric was not built for: it is not scored and counts "
                   "in no statistic (neither a pass nor a failure).",
    "not applied": "A corruption generator found nothing to rewrite in the sentence (for example no "
                   "prepositional phrase to duplicate), so that corruption has no trial for it.",
}


def term(name: str, settings: Settings | None = None) -> str:
    """The explanation of ``name`` (a key of :data:`TERMS`), written with ``settings``' rules (the defaults'
    when None)."""
    rules = (settings or Settings()).rules
    tolerance = rules.tolerance
    return TERMS[name].format(tie=rules.describe(), rules=rules.signature(), tolerance=f"{tolerance:g}",
                              full=f"{tolerance - 1:+.2f}".replace("-", "−"),
                              times=f"{1 / tolerance:.1f}" if tolerance else "infinitely many")


def margin(corruption: str, settings: Settings | None = None) -> str:
    """What a margin means for ``corruption``'s rule; both meanings for a type the catalogue does not know."""
    try:
        rule = api.corruption_type(corruption).rule
    except KeyError:
        return f"{term('margin (orig > corr)', settings)} {term('margin (difference)', settings)}"
    return term("margin (difference)" if rule is Rule.DIFFERENCE else "margin (orig > corr)", settings)


def markdown(settings: Settings | None = None) -> str:
    """Every term as a Markdown list, for the glossary expander, written with ``settings``' rules."""
    return "\n".join(f"- **{name}**: {term(name, settings)}" for name in TERMS)

"""Who may edit corruption pairs from the dashboard.

Viewing needs no login. Editing needs the annotator credential, configured as ``annotator_token`` in
``.streamlit/secrets.toml`` or as ``MUTTLAB_ANNOTATOR_TOKEN`` (``Settings.annotator_token``). With
``Settings.read_only`` (``MUTTLAB_READ_ONLY=1``, the hosted demo) nobody can edit, whatever they type;
the pair store refuses writes at its own level as well.
"""
from __future__ import annotations

import hmac
from dataclasses import dataclass

import streamlit as st

from muttlab.settings import Settings

SESSION_KEY = "annotator"


@dataclass(frozen=True)
class Access:
    """Whether this session may write, who it writes as, and, when it may not, why."""

    can_edit: bool
    author: str | None = None
    reason: str = ""


def configured_token(settings: Settings) -> str | None:
    """The annotator credential: ``st.secrets["annotator_token"]`` first, then the settings."""
    try:
        token = st.secrets.get("annotator_token")
    except Exception:  # no secrets.toml at all: Streamlit raises rather than returning a default
        token = None
    return str(token) if token else settings.annotator_token


def token_matches(given: str, expected: str | None) -> bool:
    """Constant-time comparison, so the credential cannot be guessed from response times."""
    if not expected or not given:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


def access(settings: Settings) -> Access:
    """This session's access to the pair store."""
    if settings.read_only:
        return Access(False, reason="This server is read-only (MUTTLAB_READ_ONLY): pairs can be browsed, "
                                    "not edited.")
    if not configured_token(settings):
        return Access(False, reason="Editing is off: no annotator credential is configured (set "
                                    "annotator_token in .streamlit/secrets.toml or MUTTLAB_ANNOTATOR_TOKEN).")
    author = st.session_state.get(SESSION_KEY)
    if not author:
        return Access(False, reason="Sign in with the annotator credential to edit pairs.")
    return Access(True, author=author)


def sign_in(name: str, token: str, settings: Settings) -> str | None:
    """Record ``name`` as this session's annotator if the token is right; returns an error message or None."""
    if settings.read_only:
        return "This server is read-only; nobody can sign in to edit."
    name = name.strip()
    if not name:
        return "Give your name: every edit records its author."
    if not token_matches(token, configured_token(settings)):
        return "That annotator credential is not right."
    st.session_state[SESSION_KEY] = name
    return None


def sign_out() -> None:
    st.session_state.pop(SESSION_KEY, None)

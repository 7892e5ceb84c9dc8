"""The server's credentials, for the pages (:mod:`.auth`) and the sign-in address (:mod:`.signin`) alike:
whether anyone can sign in, with what, and the authenticator whose rate limiter every session and process
of the server shares. Apart from both so that neither imports the other."""
from __future__ import annotations

import streamlit as st

from muttlab.api import Authenticator, RateLimiter
from muttlab.dashboard.shared import singleton
from muttlab.settings import Settings


def configured_token(settings: Settings) -> str | None:
    """The shared annotator credential: ``st.secrets["annotator_token"]`` first, then the settings."""
    try:
        token = st.secrets.get("annotator_token")
    except Exception:  # no secrets.toml at all: Streamlit raises rather than returning a default
        token = None
    return str(token) if token else settings.annotator_token


def uses_accounts(settings: Settings) -> bool:
    return settings.users_file is not None


def can_sign_in(settings: Settings) -> bool:
    return not settings.read_only and (uses_accounts(settings) or bool(configured_token(settings)))


def credential_label(settings: Settings) -> str:
    return "Password" if uses_accounts(settings) else "Annotator credential"


@singleton
def _limiter(settings: Settings) -> RateLimiter:
    """One limiter per server configuration, shared by all sessions (a new tab does not reset it) and, through
    its file in the cache dir, by every process of the server."""
    return RateLimiter.for_settings(settings)


def _authenticator(settings: Settings) -> Authenticator:
    # The shared credential as it is at each check (secrets.toml first): a session opened with it ends when it
    # is rotated.
    return Authenticator(settings, _limiter(settings), shared_credential=configured_token)


def authenticator(settings: Settings) -> Authenticator:
    """The server's authenticator (its limiter shared by every session): the sign-in address uses it too."""
    return _authenticator(settings)

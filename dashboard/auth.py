"""Who this browser session is, for the pages: signing in and out through :mod:`muttlab.access`.

Anyone is a viewer. Accounts (annotator, maintainer) live in the users file (``MUTTLAB_USERS_FILE``,
managed with ``muttlab users``). Without a users file, the older shared annotator credential
(``annotator_token`` in ``.streamlit/secrets.toml`` or ``MUTTLAB_ANNOTATOR_TOKEN``) still makes whoever
knows it an annotator. Failed sign-ins are rate limited per name and per client by a limiter shared by
every session of the server; a sign-in is a server-side session that lasts ``Settings.session_ttl`` seconds
unless signed out first. With ``Settings.read_only`` nobody signs in.

Under ``muttlab serve`` a sign-in goes through the server's own sign-in address (:mod:`.signin`), which keeps
the session's id in an HttpOnly cookie: the page reads it back from the request (``st.context.cookies``), so
a reload, a new tab and a link stay signed in. A server started with ``streamlit run`` has no such address;
there the page's own form signs in the tab it is in.

The pages hide what a role cannot use; the actions themselves check the sign-in again
(:func:`muttlab.access.roles.require`), so a hidden control is never the only guard.
"""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import streamlit as st

from muttlab.api import ANONYMOUS, Action, Identity, Session, SignInRefused, allowed
from muttlab.dashboard import signin
from muttlab.dashboard.credentials import (_authenticator, authenticator, can_sign_in, configured_token,
                                          credential_label, uses_accounts)
from muttlab.errors import MuttlabError
from muttlab.settings import Settings

SESSION_KEY = "muttlab-session"
EXPIRED_KEY = "muttlab-session-expired"


@dataclass(frozen=True)
class Access:
    """Whether this session may edit pairs, who it writes as, and, when it may not, why."""

    can_edit: bool
    author: str | None = None
    reason: str = ""
    identity: Identity = ANONYMOUS


def sign_in_route() -> bool:
    """Whether this server has the sign-in address (``muttlab serve`` adds it)."""
    return signin.mounted()


# A link drawn as a button, opened in this tab (``st.link_button`` opens a second one, and the first stayed
# signed out): the sign-in form brings this tab back to the page, signed in.
_SIGN_IN_LINK = """<a class="mutt-signin" href="{href}" target="_self">{label}</a>
<style>.mutt-signin {{ display: inline-block; padding: 0.4rem 0.9rem; border: 1px solid #d1d5db;
  border-radius: 0.5rem; color: inherit; text-decoration: none; font-weight: 500; }}
.mutt-signin:hover, .mutt-signin:focus-visible {{ border-color: #0072B2; color: #0072B2; }}</style>"""


def sign_in_link(label: str) -> None:
    """A button-like link to the server's sign-in address, in this tab, which brings the visitor back to this
    page signed in."""
    import html

    try:
        here = urlsplit(st.context.url or "")
        back_to = here.path + (f"?{here.query}" if here.query else "")
    except Exception:  # no request behind this run
        back_to = "/"
    st.html(_SIGN_IN_LINK.format(href=html.escape(signin.address(back_to or "/"), quote=True),
                                 label=html.escape(label)))


def _cookie() -> str | None:
    try:
        token = st.context.cookies.get(signin.COOKIE)
    except Exception:  # no request behind this run
        return None
    return token if isinstance(token, str) else None


def client_address() -> str:
    """The client's address as the server saw it. Without one (some proxies) every such visitor is one client:
    a new tab must not be a fresh client to the limiter."""
    try:
        address = st.context.ip_address
    except Exception:
        address = None
    return f"ip:{address if isinstance(address, str) and address else 'unknown'}"


def identity(settings: Settings) -> Identity:
    """This session's identity: the signed-in one while the sign-in lasts, else anonymous."""
    if settings.read_only:
        return ANONYMOUS
    token = _cookie()
    if token:
        try:
            current = _authenticator(settings).resume(token)
        except MuttlabError:
            current = None
        if current is not None:
            return current
    session = st.session_state.get(SESSION_KEY)
    if not isinstance(session, Session):
        return ANONYMOUS
    try:
        current = _authenticator(settings).current(session)
    except MuttlabError:
        current = None
    if current is None:
        st.session_state.pop(SESSION_KEY, None)
        st.session_state[EXPIRED_KEY] = True
        return ANONYMOUS
    return current


def access(settings: Settings) -> Access:
    """This session's access to the pair store."""
    who = identity(settings)
    ok, why = allowed(who, Action.EDIT_PAIRS, settings)
    if ok:
        return Access(True, author=who.name, identity=who)
    if settings.read_only:
        return Access(False, reason="This server is read-only (MUTTLAB_READ_ONLY): pairs can be browsed, "
                                    "not edited.", identity=who)
    if not can_sign_in(settings):
        return Access(False, reason="Editing is off: no accounts are configured (MUTTLAB_USERS_FILE, see "
                                    "`muttlab users add`) and no annotator credential (annotator_token in "
                                    ".streamlit/secrets.toml or MUTTLAB_ANNOTATOR_TOKEN).", identity=who)
    expired = st.session_state.pop(EXPIRED_KEY, False)
    prefix = "Your sign-in has expired. " if expired else ""
    if who.anonymous:
        what = "an annotator or maintainer account" if uses_accounts(settings) else "the annotator credential"
        return Access(False, reason=f"{prefix}Sign in with {what} to edit pairs.", identity=who)
    return Access(False, reason=f"{why}.", identity=who)


def sign_in(name: str, secret: str, settings: Settings) -> str | None:
    """Sign this session in; returns an error message, or None when it worked."""
    if settings.read_only:
        return "This server is read-only; nobody can sign in to edit."
    if not (name or "").strip():
        return "Give your name: every edit records its author."
    try:
        if uses_accounts(settings):
            session = _authenticator(settings).sign_in(name.strip(), secret, client_address())
        else:
            session = _authenticator(settings).sign_in_with_token(name, secret, configured_token(settings),
                                                                  client_address())
    except SignInRefused as exc:
        if exc.retry_after or uses_accounts(settings):
            return f"Not signed in: {exc}."
        return "That annotator credential is not right."
    except MuttlabError as exc:
        return f"Not signed in: {exc}"
    st.session_state[SESSION_KEY] = session
    st.session_state.pop(EXPIRED_KEY, None)
    return None


def sign_out(settings: Settings) -> None:
    """Revoke this browser's session on the server (every tab of it) and forget this tab's."""
    session = st.session_state.pop(SESSION_KEY, None)
    for token in (_cookie(), session.token if isinstance(session, Session) else None):
        if token:
            _authenticator(settings).sign_out(token)


def sign_in_form(settings: Settings, key: str, title: str) -> None:
    """A sign-in form (name and password or credential); reruns the page once signed in. Under
    ``muttlab serve``, a link to the server's sign-in address instead (a sign-in every tab keeps)."""
    if sign_in_route():
        sign_in_link(title)
        return
    with st.form(f"{key}-signin", border=True):
        st.markdown(f"**{title}**")
        name_col, secret_col = st.columns(2)
        name = name_col.text_input("Your name", key=f"{key}-signin-name")
        secret = secret_col.text_input(credential_label(settings), type="password", key=f"{key}-signin-secret")
        if st.form_submit_button("Sign in"):
            problem = sign_in(name, secret, settings)
            if problem:
                st.error(problem)
            else:
                st.rerun()

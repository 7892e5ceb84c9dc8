"""The server's sign-in address: the one place a browser gets a session cookie.

``muttlab serve`` mounts these routes beside Streamlit's (:func:`routes`). ``GET /_muttlab/signin`` shows a
plain form; ``POST`` checks the name and password through the server's authenticator (its rate limit, its cap
on password checks at once) and, when they are right, opens a server-side session and sets its id in a cookie
that is ``HttpOnly`` (no script of the page can read it: ``document.cookie`` never holds it) and
``SameSite=Strict`` (no other site's page can send it), ``Secure`` behind HTTPS, for the session's lifetime.
The Streamlit pages read it back from the request that opened them (``st.context.cookies``), so a reload, a
new tab and an ``/annotate?pair=`` link stay signed in. ``POST /_muttlab/signout`` revokes the session on the
server and clears the cookie. The id never appears in an address. A POST whose ``Origin`` (or ``Referer``)
is another site is refused, so no other page can sign a visitor in or out.
"""
from __future__ import annotations

import html
from urllib.parse import parse_qs, quote, urlsplit

COOKIE = "muttlab_session"
SIGN_IN = "/_muttlab/signin"
SIGN_OUT = "/_muttlab/signout"
MAX_FORM_BYTES = 8192  # a name, a password of at most 1024 characters and the return address

_MOUNTED = False


def mounted() -> bool:
    """Whether this process serves the routes (``muttlab serve`` does; ``streamlit run`` by hand does not)."""
    return _MOUNTED


def address(back_to: str) -> str:
    """The sign-in address that returns to ``back_to`` (a path of this server) once signed in."""
    return f"{SIGN_IN}?next={quote(_local(back_to), safe='')}"


def _local(target: str | None) -> str:
    """``target`` when it is a path on this server, else "/": the return address never leaves the site."""
    target = target or "/"
    parts = urlsplit(target)
    if (parts.scheme or parts.netloc or not target.startswith("/") or target.startswith("//") or "\\" in target
            or any(ord(c) < 32 for c in target)):
        return "/"
    return target


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in · MUTT Lab</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{{font-family:Inter,"Source Sans Pro",sans-serif;color:#111827;background:#f9fafb;max-width:28rem;
margin:4rem auto;padding:0 1rem}}
form{{background:#fff;border:1px solid #e5e7eb;border-radius:.75rem;padding:1.2rem 1.4rem}}
h1{{font-size:1.5rem;font-weight:600}}label{{display:block;margin:.8rem 0 .2rem;font-size:.9rem}}
input{{width:100%;padding:.5rem;box-sizing:border-box;border:1px solid #d1d5db;border-radius:.5rem;font:inherit}}
input:focus{{outline:2px solid #0072B2;border-color:#0072B2}}
button{{margin-top:1.2rem;padding:.5rem 1.2rem;border:none;border-radius:.5rem;background:#0072B2;color:#fff;
font:inherit;font-weight:600;cursor:pointer}}a{{color:#0072B2}}.problem{{color:#a33f00}}</style></head>
<body><h1>Sign in to MUTT Lab</h1>{problem}
<form method="post" action="{action}">
<input type="hidden" name="next" value="{next}">
<label for="name">Your name</label><input id="name" name="name" autocomplete="username" required>
<label for="password">{secret_label}</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>
<p><a href="{back}">Back without signing in</a></p></body></html>
"""

_HEADERS = {"Cache-Control": "no-store", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin",
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; "
                                       "frame-ancestors 'none'"}


def _settings():
    from muttlab.settings import load_settings

    return load_settings()


def _form(problem: str, back_to: str, secret_label: str, status: int, headers: dict | None = None):
    from starlette.responses import HTMLResponse

    body = _PAGE.format(problem=f'<p class="problem" role="alert">{html.escape(problem)}</p>' if problem else "",
                        action=SIGN_IN, next=html.escape(back_to), back=html.escape(back_to),
                        secret_label=html.escape(secret_label))
    return HTMLResponse(body, status_code=status, headers={**_HEADERS, **(headers or {})})


def _same_site(request) -> bool:
    """The POST came from a page of this server (its Origin, or else its Referer, names this host)."""
    source = request.headers.get("origin") or request.headers.get("referer")
    if not source or source == "null":
        return False
    return urlsplit(source).netloc.lower() == (request.headers.get("host") or "").lower()


def _secure(request) -> bool:
    # The scheme uvicorn settled on: X-Forwarded-Proto counts only from a proxy in MUTTLAB_TRUSTED_PROXIES.
    return request.url.scheme == "https"


async def _fields(request) -> dict[str, str]:
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        return {}
    try:
        parsed = parse_qs(body.decode("utf-8"), max_num_fields=8, strict_parsing=False)
    except (UnicodeDecodeError, ValueError):
        return {}
    return {k: v[0] for k, v in parsed.items() if v}


async def sign_in_page(request):
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import RedirectResponse

    from muttlab.dashboard import credentials as auth
    from muttlab.errors import MuttlabError

    settings = _settings()
    label = auth.credential_label(settings)
    if request.method == "GET":
        back_to = _local(request.query_params.get("next"))
        if not auth.can_sign_in(settings):
            return _form("Nobody signs in on this server (it is read-only, or no accounts are configured).",
                         back_to, label, 403)
        return _form("", back_to, label, 200)
    if not _same_site(request):
        return _form("Refused: this sign-in was not sent from this server's own page.", "/", label, 403)
    fields = await _fields(request)
    back_to = _local(fields.get("next"))
    if not auth.can_sign_in(settings):
        return _form("Nobody signs in on this server (it is read-only, or no accounts are configured).",
                     back_to, label, 403)
    name, secret = fields.get("name", "").strip(), fields.get("password", "")
    client = f"ip:{request.client.host}" if request.client else "ip:unknown"
    authenticator = auth.authenticator(settings)
    try:
        if auth.uses_accounts(settings):
            session = await run_in_threadpool(authenticator.sign_in, name, secret, client)
        else:
            session = await run_in_threadpool(authenticator.sign_in_with_token, name, secret,
                                              auth.configured_token(settings), client)
    except MuttlabError as exc:
        retry = getattr(exc, "retry_after", 0.0)
        headers = {"Retry-After": str(int(retry) + 1)} if retry else None
        return _form(f"Not signed in: {exc}.", back_to, label, 429 if retry else 401, headers)
    response = RedirectResponse(back_to, status_code=303, headers=_HEADERS)
    response.set_cookie(COOKIE, session.token, max_age=int(settings.session_ttl), path="/", httponly=True,
                        samesite="strict", secure=_secure(request))
    return response


async def sign_out(request):
    from starlette.concurrency import run_in_threadpool
    from starlette.responses import PlainTextResponse, RedirectResponse

    from muttlab.dashboard import credentials as auth

    if not _same_site(request):
        return PlainTextResponse("Refused: this sign-out was not sent from this server's own page.", 403,
                                 headers=_HEADERS)
    fields = await _fields(request)
    token = request.cookies.get(COOKIE)
    if token:
        await run_in_threadpool(auth.authenticator(_settings()).sign_out, token)
    response = RedirectResponse(_local(fields.get("next")), status_code=303, headers=_HEADERS)
    response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict", secure=_secure(request))
    return response


def routes() -> list:
    """The sign-in and sign-out routes, for Streamlit's app (``st.App(..., routes=routes())``)."""
    global _MOUNTED
    from starlette.routing import Route

    _MOUNTED = True
    return [Route(SIGN_IN, sign_in_page, methods=["GET", "POST"]), Route(SIGN_OUT, sign_out, methods=["POST"])]

"""Whether this browser has drawn a figure of this server before: a hint that orders a page's paint, and nothing
else.

A session's first page with figures is sent without them and its figures come with the page's second run
(:func:`muttlab.dashboard.ui.chart`), because a browser that has never run plotly's script (4.7 MB) draws nothing
else while it fetches and runs it. A returning visitor's browser has that script in its HTTP cache (Streamlit
serves it as immutable), so every new tab of theirs can draw its figures in the first run: half a second of timer
and a second run of the page sooner. Once a session has drawn a figure, the page's footer asks the server for
:data:`SEEN` (a hidden image), whose answer sets :data:`COOKIE`.

The cookie is a claim of the browser about itself, so the lab decides nothing with it but the order in which that
browser's own page is sent: a forged or stale cookie costs its holder the paint pass's benefit (the cards wait for
plotly's script, as they did before the pass existed) and nobody else anything; no permission, budget, number or
other visitor's page reads it (tests/attacks/test_plotly_hint.py).
"""
from __future__ import annotations

COOKIE = "muttlab_plotly"
SEEN = "/_muttlab/plotly-seen"
MAX_AGE_S = 30 * 24 * 3600  # about as long as a browser keeps a script of its HTTP cache

_MOUNTED = False


def seen(cookies) -> bool:
    """Whether the request's ``cookies`` (``st.context.cookies``) say this browser has drawn a figure here."""
    try:
        return cookies.get(COOKIE) == "1"
    except Exception:  # noqa: BLE001 (no request context: AppTest, a script run outside a server)
        return False


def beacon(headers) -> str | None:
    """The hidden image whose request sets :data:`COOKIE`, for a page opened by a browser with the request's
    ``headers`` (``st.context.headers``); None where the route is not served (``streamlit run`` by hand) or no
    browser asked (AppTest, whose runs carry no request, in a process where a test mounted the routes)."""
    if not _MOUNTED or not headers:
        return None
    return f'<img src="{SEEN}" alt="" width="1" height="1" style="display:none">'


async def _mark(request):
    from starlette.responses import Response

    response = Response(status_code=204, headers={"Cache-Control": "no-store"})
    response.set_cookie(COOKIE, "1", max_age=MAX_AGE_S, path="/", httponly=True, samesite="strict",
                        secure=request.url.scheme == "https")
    return response


def routes() -> list:
    """:data:`SEEN`, for Streamlit's app (``st.App(..., routes=...)``): GET only, no parameter read."""
    global _MOUNTED
    from starlette.routing import Route

    _MOUNTED = True
    return [Route(SEEN, _mark, methods=["GET"])]

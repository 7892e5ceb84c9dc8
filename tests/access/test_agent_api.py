"""Streamlit's agent API (``/_stcore/agent/interact``, which drives sessions over HTTP) is off in what
``muttlab serve`` ships, even when the environment tries to turn it on; only benchmarks/bench_load.py
enables it, for a server of its own."""
from __future__ import annotations

import json
import os
import urllib.error
import urllib.request

from muttlab.cli.serve import command


def test_serve_passes_the_agent_api_off():
    argv = command(8765)
    pairs = dict(zip(argv[5::2], argv[6::2]))
    assert pairs["--server.enableAgentApi"] == "false"


def test_a_served_dashboard_refuses_agent_requests(tmp_path):
    from tests.dashboard.test_browser import serving

    env = {k: v for k, v in os.environ.items() if not k.startswith("MUTTLAB_")}
    # Streamlit reads STREAMLIT_SERVER_* variables: an operator's environment that turns the API on.
    env.update(MUTTLAB_CACHE_DIR=str(tmp_path / "cache"), MUTTLAB_WORKERS="1", STREAMLIT_SERVER_ENABLE_AGENT_API="true")
    with serving(env, tmp_path / "serve.log") as url:
        request = urllib.request.Request(url + "/_stcore/agent/interact", data=b"{}", method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(request, timeout=60)
            raise AssertionError("the agent API answered a request")
        except urllib.error.HTTPError as exc:
            body = json.loads(exc.read())
            assert exc.code == 403 and body["error"]["code"] == "not_available", body

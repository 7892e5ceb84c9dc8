"""Streamlit's agent API (``/_stcore/agent/interact``, which drives sessions over HTTP) is off in what
``muttlab serve`` ships, even when the environment tries to turn it on; only benchmarks/bench_load.py
enables it, for a server of its own."""
from __future__ import annotations

import json
import urllib.error
import urllib.request

from muttlab.cli.serve import command


def test_serve_passes_the_agent_api_off():
    argv = command(8765)
    pairs = dict(zip(argv[5::2], argv[6::2]))
    assert pairs["--server.enableAgentApi"] == "false"


def test_a_served_dashboard_refuses_agent_requests(sample_server):
    # Streamlit reads STREAMLIT_SERVER_* variables: the shared server's environment turns the API on, as an
    # operator's could.
    url = sample_server.url
    request = urllib.request.Request(url + "/_stcore/agent/interact", data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
    try:
        urllib.request.urlopen(request, timeout=60)
        raise AssertionError("the agent API answered a request")
    except urllib.error.HTTPError as exc:
        body = json.loads(exc.read())
        assert exc.code == 403 and body["error"]["code"] == "not_available", body

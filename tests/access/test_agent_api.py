"""Streamlit's agent API (``/_stcore/agent/interact``, which drives sessions over HTTP) is off in what
``muttlab serve`` ships, even when the environment tries to turn it on; only benchmarks/bench_load.py
enables it, for a server of its own."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

from muttlab.cli.serve import command


def test_serve_passes_the_agent_api_off():
    argv = command(8765)
    pairs = dict(zip(argv[5::2], argv[6::2]))
    assert pairs["--server.enableAgentApi"] == "false"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_served_dashboard_refuses_agent_requests(tmp_path):
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MUTTLAB_")}
    env.update(MUTTLAB_CACHE_DIR=str(tmp_path / "cache"), STREAMLIT_SERVER_ENABLE_AGENT_API="true")
    (tmp_path / ".streamlit").mkdir()
    (tmp_path / ".streamlit" / "config.toml").write_text("[server]\nenableAgentApi = true\n")
    log = (tmp_path / "server.log").open("w")
    server = subprocess.Popen([sys.executable, "-m", "muttlab", "serve", "--port", str(port), "--address",
                               "127.0.0.1"], cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            assert server.poll() is None, (tmp_path / "server.log").read_text()
            try:
                with urllib.request.urlopen(url + "/_stcore/health", timeout=5):
                    break
            except (urllib.error.URLError, OSError):
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.5)
        request = urllib.request.Request(url + "/_stcore/agent/interact", data=b"{}", method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(request, timeout=60)
            raise AssertionError("the agent API answered a request")
        except urllib.error.HTTPError as exc:
            body = json.loads(exc.read())
            assert exc.code == 403 and "not_available" in json.dumps(body), body
    finally:
        server.terminate()
        server.wait(30)
        log.close()

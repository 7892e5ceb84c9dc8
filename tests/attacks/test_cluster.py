"""A Dask cluster is believed only as far as it can be trusted, and a scheduler address never ends in a traceback.

Each test plays the role that must fail: someone who hands ``muttlab run --scheduler`` an address that is no
scheduler (another scheme, a malformed IPv6 address, a port where another service listens), or a rogue worker
that joins an unauthenticated scheduler and returns forged scores, aiming at the shared score cache. The CLI runs
in a subprocess on the real MUTT data (helpers of tests/attacks/test_forgery.py); the cluster is a real
``dask scheduler`` and ``dask worker`` on loopback.
"""
from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.attacks.test_forgery import RUN_BLEU, _cell, _muttlab, _one_error_line
from tests.conftest import muttlab_env

distributed = pytest.importorskip("distributed")

PUBLISHED = 327  # data/results/grid.json, BLEU-4 x neg_subj at 5 references


class Banner:
    """A TCP service on loopback that greets every connection with ``banner`` and then waits (an SSH server)."""

    def __init__(self, banner: bytes):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.banner = banner
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        held = []
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                break
            conn.sendall(self.banner)
            held.append(conn)
        for conn in held:
            conn.close()

    def close(self):
        self.server.close()


@pytest.fixture
def ssh_like():
    service = Banner(b"SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13\r\n")
    yield f"tcp://127.0.0.1:{service.port}"
    service.close()


@pytest.mark.parametrize("address", ["inproc://x", "file:///etc/passwd", "tcp://[::1", "tcp://[fe80::zz]:8786",
                                     "ucx://127.0.0.1:8786", "tcp://127.0.0.1:99999", "SSH"])
def test_a_scheduler_address_that_is_no_scheduler_is_one_line(address, ssh_like, data_dir, tmp_path):
    """Attack (round three): five ``--scheduler`` values ended ``muttlab run`` in a traceback, one of them a
    port where an SSH server answers, whose banner Dask read as a frame length of 3.07 EiB. Each is now refused
    with one line before (or instead of) Dask reading anything, and the line says what was wrong."""
    address = ssh_like if address == "SSH" else address
    result = _muttlab([*RUN_BLEU[:1], "--scheduler", address, *RUN_BLEU[1:]], tmp_path, data_dir=data_dir)
    line = _one_error_line(result)
    assert "scheduler" in line or "Dask" in line, line
    if address == ssh_like:
        assert "does not speak Dask's protocol" in line


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(predicate, what: str, timeout: float = 90.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


ROGUE = '''
"""Preloaded by a rogue worker: every block it is given scores zero."""
import numpy as np
import muttlab.engine.distributed as cluster


def forged(name, extra_paths, model_dir, signature, candidates, references, stats=None):
    return np.zeros(len(candidates))


cluster.score_block = forged
'''


def test_a_rogue_worker_on_an_open_scheduler_never_reaches_the_cache(data_dir, tmp_path):
    """Attack (round three): a worker that joined the unauthenticated scheduler returned zeros for every block
    of BLEU-4; the client wrote them into its cache under BLEU-4's keys, and every later local run reported
    0/336. Without TLS the cluster's scores now serve only the run that asked for them: that run is as wrong as
    its cluster, the cache keeps nothing of it, and the next plain run reports 327/336."""
    port = _free_port()
    env = muttlab_env()
    rogue = tmp_path / "rogue.py"
    rogue.write_text(ROGUE)
    log = (tmp_path / "cluster.log").open("w")
    scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                                  "--port", str(port), "--dashboard-address", "127.0.0.1:0"], env=env, stdout=log,
                                 stderr=subprocess.STDOUT, cwd=tmp_path)
    worker = None
    try:
        address = f"tcp://127.0.0.1:{port}"
        worker = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1",
                                   "--nworkers", "1", "--no-nanny", "--dashboard-address", "127.0.0.1:0",
                                   "--preload", str(rogue)], env=env, stdout=log, stderr=subprocess.STDOUT,
                                  cwd=tmp_path)
        with distributed.Client(address, timeout="60s", set_as_default=False) as client:
            _wait_for(lambda: len(client.scheduler_info()["workers"]) == 1, "the rogue worker to join")
        forged = _cell(_muttlab([*RUN_BLEU[:1], "--scheduler", address, *RUN_BLEU[1:]], tmp_path, data_dir=data_dir))
        assert forged["passed"] == 0  # the cluster answered for this run...
    finally:
        for process in (worker, scheduler):
            if process is not None:
                process.terminate()
                process.wait(timeout=30)
        log.close()
    plain = _cell(_muttlab(RUN_BLEU, tmp_path, data_dir=data_dir))  # ...and for nothing after it
    assert plain["passed"] == PUBLISHED


def test_tls_settings_are_checked_before_any_connection(data_dir, tmp_path):
    """A half-configured TLS setup (a CA without the client's certificate and key), TLS files that do not
    exist, a tls:// address without TLS files and a tcp:// one with them are each one line, not a plaintext
    connection made by mistake."""
    ca = tmp_path / "ca.pem"
    ca.write_text("not a certificate")
    cases = [({"MUTTLAB_DASK_TLS_CA": str(ca)}, "tls://127.0.0.1:1", "set MUTTLAB_DASK_TLS_CERT, MUTTLAB_DASK_TLS_KEY"),
             ({"MUTTLAB_DASK_TLS_CA": str(ca), "MUTTLAB_DASK_TLS_CERT": str(tmp_path / "no.pem"),
               "MUTTLAB_DASK_TLS_KEY": str(ca)}, "tls://127.0.0.1:1", "no such file"),
             ({}, "tls://127.0.0.1:1", "needs MUTTLAB_DASK_TLS_CA"),
             ({"MUTTLAB_DASK_TLS_CA": str(ca), "MUTTLAB_DASK_TLS_CERT": str(ca), "MUTTLAB_DASK_TLS_KEY": str(ca)},
              "tcp://127.0.0.1:1", "must be tls://")]
    for env, address, message in cases:
        result = _muttlab([*RUN_BLEU[:1], "--scheduler", address, *RUN_BLEU[1:]], tmp_path, env, data_dir=data_dir)
        assert message in _one_error_line(result), (env, address)


@pytest.fixture
def pki(tmp_path) -> dict[str, Path]:
    """A CA, a certificate it signed for the scheduler, the worker and the client (loopback), and a second CA."""
    folder = tmp_path / "pki"
    folder.mkdir()

    def run(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=folder)

    for ca in ("ca", "other-ca"):
        run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{ca}.key", "-out", f"{ca}.pem", "-days", "1",
            "-subj", f"/CN={ca}")
    for who, ca in (("scheduler", "ca"), ("worker", "ca"), ("client", "ca"), ("stranger", "other-ca")):
        run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{who}.key", "-out", f"{who}.csr", "-subj", "/CN=127.0.0.1")
        (folder / f"{who}.ext").write_text("subjectAltName=IP:127.0.0.1\n")
        run("x509", "-req", "-in", f"{who}.csr", "-CA", f"{ca}.pem", "-CAkey", f"{ca}.key", "-CAcreateserial",
            "-out", f"{who}.pem", "-days", "1", "-extfile", f"{who}.ext")
    return {name: folder / name for name in ("ca.pem", "scheduler.pem", "scheduler.key", "worker.pem", "worker.key",
                                             "client.pem", "client.key", "stranger.pem", "stranger.key")}


@pytest.mark.skipif(subprocess.run(["which", "openssl"], capture_output=True).returncode != 0,
                    reason="openssl is needed to make certificates")
def test_with_mutual_tls_a_worker_without_the_cas_certificate_cannot_join(pki, data_dir, tmp_path):
    """What TLS buys: a scheduler started with the CA accepts only workers whose certificate that CA signed. A
    worker holding another CA's certificate never joins, and a run through the TLS settings is scored by the
    trusted worker and stored (327/336, then served from the cache)."""
    port = _free_port()
    address = f"tls://127.0.0.1:{port}"
    env = muttlab_env()
    log = (tmp_path / "cluster.log").open("w")

    def start(module: str, who: str, *extra: str) -> subprocess.Popen:
        tls = ["--tls-ca-file", str(pki["ca.pem"]), "--tls-cert", str(pki[f"{who}.pem"]), "--tls-key",
               str(pki[f"{who}.key"])]
        return subprocess.Popen([sys.executable, "-m", f"distributed.cli.{module}", *extra, *tls,
                                 "--dashboard-address", "127.0.0.1:0"], env=env, stdout=log, stderr=subprocess.STDOUT,
                                cwd=tmp_path)

    processes = [start("dask_scheduler", "scheduler", "--host", "127.0.0.1", "--port", str(port), "--protocol", "tls")]
    try:
        processes.append(start("dask_worker", "stranger", address, "--nthreads", "1", "--no-nanny"))
        processes.append(start("dask_worker", "worker", address, "--nthreads", "1", "--no-nanny"))
        security = distributed.security.Security(tls_ca_file=str(pki["ca.pem"]), tls_client_cert=str(pki["client.pem"]),
                                                 tls_client_key=str(pki["client.key"]), require_encryption=True)
        with distributed.Client(address, timeout="60s", security=security, set_as_default=False) as client:
            _wait_for(lambda: len(client.scheduler_info()["workers"]) >= 1, "the trusted worker to join")
            time.sleep(3)  # the stranger had as long as the trusted worker
            assert len(client.scheduler_info()["workers"]) == 1
        tls = {"MUTTLAB_DASK_TLS_CA": str(pki["ca.pem"]), "MUTTLAB_DASK_TLS_CERT": str(pki["client.pem"]),
               "MUTTLAB_DASK_TLS_KEY": str(pki["client.key"])}
        scored = _cell(_muttlab([*RUN_BLEU[:1], "--scheduler", address, *RUN_BLEU[1:]], tmp_path, tls, data_dir=data_dir))
        assert scored["passed"] == PUBLISHED
    finally:
        for process in reversed(processes):
            process.terminate()
            process.wait(timeout=30)
        log.close()
    assert "certificate" in (tmp_path / "cluster.log").read_text().lower()  # the stranger was refused for it
    from tests.attacks.test_identity import _rows
    assert _rows(tmp_path) > 0  # a trusted cluster's scores were stored

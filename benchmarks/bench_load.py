"""Load: 20 dashboard sessions using the Playground while one more session runs the full grid.

Default (``--mode sessions``): a real server, started exactly as ``muttlab serve`` starts it (the same
``streamlit run`` command line and settings, a private cache), plus Streamlit's agent API for this
benchmark only (``--server.enableAgentApi true``; what ``muttlab serve`` ships keeps it off, see
``tests/access/test_agent_api.py``). Every simulated visitor is a real Streamlit session of that server,
driven over ``POST /_stcore/agent/interact``: the request sets the page's widgets and presses its button,
the app runs as it does for a browser (same script, same session state, same fair queue), and the
response comes once the run has settled, i.e. when the visitor would see the scores.

* one session opens the Run page and runs the grid (``--grid`` metrics x every corruption x 5/10/20 refs);
* ``--sessions`` sessions each open the Playground and score ``--requests`` new sentence pairs (a trial's
  original with a unique suffix, so no cache hit, against its 5 references, with the n-gram metrics and
  METEOR, every corruption generator on), paced like a person (0.5-2 s between requests);
* with ``--oversized N``, N of those sessions send a 200,000-word candidate instead (what a hostile visitor
  pastes); the others' latency is reported apart, with how the oversized requests were answered;
* printed: Playground latency (median, p95, max) while the grid ran, the grid's time, the server's
  resident memory (the Streamlit process and all its children: METEOR JVMs, scoring workers) sampled
  during the load, and after ``--warm-all`` scored once with every available metric.

``--mode in-process`` is the older, lighter measurement: threads submitting the same work straight to the
fair queue (:func:`muttlab.engine.queue.shared_queue`) in this process, no Streamlit.

    MUTTLAB_DATA_DIR=../shared/data nice -n 5 .venv/bin/python benchmarks/bench_load.py [--sessions 20] [--warm-all]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from bench_dashboard import free_port, stop_server  # this folder, on the path when run as a script
from muttlab import api
from muttlab.settings import load_settings

PLAYGROUND = ("BLEU-4", "ROUGE-L", "CIDEr-D", "METEOR-1.5")
GRID = ("BLEU-4", "ROUGE-L", "CIDEr-D", "METEOR-1.5", "TER")
INTERACT = "/_stcore/agent/interact"
OVERSIZED = "word " * 200_000  # a 200,000-word Playground candidate (--oversized)


def tree_rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` and all its descendants (the JVMs, the workers), in MB."""
    import psutil

    try:
        me = psutil.Process(pid)
        procs = [me, *me.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.NoSuchProcess:
            pass
    return total / 2 ** 20


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summary(latencies: list[float]) -> str:
    if not latencies:
        return "no requests"
    return (f"median {statistics.median(latencies):.2f} s, p95 {percentile(latencies, 0.95):.2f} s, "
            f"max {max(latencies):.2f} s ({len(latencies)} requests)")


# --------------------------------------------------------------------------- a real server, real sessions

class Server:
    """``muttlab serve``'s command line and environment, with the agent API on; stopped on exit."""

    def __init__(self, settings, wait_timeout: int):
        from muttlab.cli import serve

        self.port = free_port()
        argv = serve.command(self.port, "127.0.0.1") + [
            "--server.enableAgentApi", "true", "--server.agentWaitTimeout", str(wait_timeout),
            "--server.agentMaxSessions", "200"]
        self.log = tempfile.NamedTemporaryFile("w+", prefix="bench-load-server-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(argv, env=serve.environment(settings, os.environ), stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.url = f"http://127.0.0.1:{self.port}"

    def wait_healthy(self, timeout: float = 600.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(f"the server stopped; its log: {self.log.name}")
            try:
                with urllib.request.urlopen(self.url + "/_stcore/health", timeout=5) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(1.0)
        raise SystemExit(f"the server did not answer within {timeout:.0f} s; its log: {self.log.name}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            stop_server(self.proc)


class Session:
    """One visitor: an agent-API session of the server (an ordinary Streamlit AppSession)."""

    def __init__(self, server: Server, page: str):
        self.server = server
        self.id: str | None = None
        self.snapshot = self.send({"page": page})

    def send(self, body: dict) -> dict:
        if self.id is not None:
            body = {"session_id": self.id, **body}
        while True:
            request = urllib.request.Request(self.server.url + INTERACT, data=json.dumps(body).encode(),
                                             headers={"Content-Type": "application/json"}, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=3600) as r:
                    answer = json.loads(r.read())
            except urllib.error.HTTPError as exc:
                error = json.loads(exc.read() or b"{}").get("error", {})
                if error.get("code") == "wait_timed_out" and (self.id or error.get("session_id")):
                    # The run goes on: wait for the same run (only the session id, as the protocol says).
                    self.id = self.id or error["session_id"]
                    body = {"session_id": self.id}
                    continue
                raise RuntimeError(f"{exc.code} {json.dumps(error)[:500]}") from None
            self.id = answer["session_id"]
            return answer

    def trigger_key(self, label: str) -> str:
        return next(a["key"] for a in self.snapshot["actions"] if a["kind"] == "trigger" and a["label"] == label)


def problems(snapshot: dict) -> list[str]:
    """What went wrong in a settled run: its status, and exception or error elements on the page."""
    found = [] if snapshot.get("status") == "ready" else [f"status {snapshot.get('status')}"]

    def walk(node):
        if isinstance(node, dict):
            if node.get("type") in ("exception", "error"):
                found.append(f"{node['type']}: {json.dumps(node.get('props', {}))[:200]}")
            for child in node.get("children", []) or []:
                walk(child)

    walk(snapshot.get("tree"))
    return found


def run_sessions(args, settings, suite) -> int:
    server = Server(settings, wait_timeout=args.wait_timeout)
    samples: list[float] = []
    stop_sampling = threading.Event()

    def sample() -> None:
        while not stop_sampling.wait(2.0):
            samples.append(tree_rss_mb(server.proc.pid))

    try:
        start = time.perf_counter()
        server.wait_healthy()
        up = time.perf_counter() - start
        # The first visitor pays for loading the suite, the models and the JVMs; measured apart.
        start = time.perf_counter()
        first = Session(server, "playground")
        cold = time.perf_counter() - start
        trials = suite.trials
        errors: list[str] = problems(first.snapshot)
        latencies: list[float] = []
        lock = threading.Lock()
        grid: dict = {}

        def run_grid() -> None:
            session = Session(server, "")
            # Every corruption and reference count, as the widgets name them (labels, not ids).
            options = {n["key"]: n["props"]["options"] for n in _nodes(session.snapshot["tree"])
                       if n.get("key") in ("run-corruptions", "run-refs")}
            start = time.perf_counter()
            settled = session.send({"widget_state": {"run-metrics": list(args.grid), **options},
                                    "trigger": {"key": session.trigger_key("Run")}})
            grid["seconds"] = time.perf_counter() - start
            grid["problems"] = problems(settled)

        oversized: list[float] = []
        refused: list[str] = []

        def ask(session: Session, k: int, rng: random.Random, into: list[float]) -> None:
            """One Playground request: a new pair typed in, Score pressed, until the scores are shown."""
            t = rng.choice(trials)
            hostile = 0 <= k < args.oversized  # k = -1 is the baseline visitor
            candidate = OVERSIZED if hostile else f"{t.original} {k}{rng.random():.6f}"
            state = {"pg-candidate": candidate, "pg-refs": "\n".join(t.refs(5)), "pg-metrics": list(PLAYGROUND)}
            start = time.perf_counter()
            try:
                wrong = problems(session.send({"widget_state": state, "trigger": {"key": session.trigger_key("Score")}}))
            except Exception as exc:  # noqa: BLE001 (a benchmark reports every failure and goes on)
                wrong = [str(exc)]
            elapsed = time.perf_counter() - start
            with lock:
                if hostile:  # refused with the limit's message is the expected answer
                    oversized.append(elapsed)
                    refused.extend(w for w in wrong if "over the limit" in w)
                    wrong = [w for w in wrong if "over the limit" not in w]
                else:
                    into.append(elapsed)
                errors.extend(f"visitor {k}: {w}" for w in wrong)

        def visitor(k: int) -> None:
            rng = random.Random(k)
            try:
                session = Session(server, "playground")
            except Exception as exc:  # noqa: BLE001
                with lock:
                    errors.append(f"visitor {k} could not open the Playground: {exc}")
                return
            for _ in range(args.requests):
                ask(session, k, rng, latencies)
                time.sleep(rng.uniform(0.5, 2.0))

        # The baseline of the same run: one visitor alone on the warm server.
        idle: list[float] = []
        alone = random.Random(-1)
        for _ in range(args.requests):
            ask(first, -1, alone, idle)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        grid_thread = threading.Thread(target=run_grid)
        grid_thread.start()
        time.sleep(args.grid_head_start)  # the grid is running
        visitors = [threading.Thread(target=visitor, args=(k,)) for k in range(args.sessions)]
        load_start = time.perf_counter()
        for th in visitors:
            th.start()
        for th in visitors:
            th.join()
        load_seconds = time.perf_counter() - load_start
        grid_still_running = grid_thread.is_alive()
        grid_thread.join()
        rss_peak = max(samples, default=tree_rss_mb(server.proc.pid))
        rss_after = tree_rss_mb(server.proc.pid)
        warm_all = None
        if args.warm_all:
            session = Session(server, "playground")
            options = next(n for n in _nodes(session.snapshot["tree"]) if n.get("key") == "pg-metrics")
            start = time.perf_counter()
            settled = session.send({"widget_state": {"pg-metrics": options["props"]["options"]},
                                    "trigger": {"key": session.trigger_key("Score")}})
            warm_all = (time.perf_counter() - start, len(options["props"]["options"]), problems(settled))
        stop_sampling.set()
        rss_all = tree_rss_mb(server.proc.pid)
    finally:
        stop_sampling.set()
        server.stop()

    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; real server (muttlab serve's "
          f"command line + agent API), {args.sessions} sessions x {args.requests} Playground requests "
          f"({', '.join(PLAYGROUND)}, every generator) while one more session runs the grid "
          f"({', '.join(args.grid)} x {len(suite.corruptions())} corruptions x 5/10/20 refs, {len(trials)} trials)")
    print(f"server up in {up:.1f} s; first Playground view (cold: suite, models, JVMs) {cold:.1f} s")
    print(f"Playground latency, one visitor alone (warm): {summary(idle)}")
    print(f"Playground latency, {args.sessions} visitors during the grid: {summary(latencies)}; visitors done after "
          f"{load_seconds:.0f} s, the grid {'still running then' if grid_still_running else 'already done'}")
    if idle and latencies:
        print(f"ratio p95 under load / median alone: {percentile(latencies, 0.95) / statistics.median(idle):.1f}x")
    if args.oversized:
        print(f"{args.oversized} of the visitors sent a {len(OVERSIZED.split()):,}-word candidate each request: "
              f"{summary(oversized)}; {len(refused)} of {len(oversized)} refused with the limit's message; the "
              f"latency above is the other {args.sessions - args.oversized} visitors'")
    print(f"full grid under load: {grid.get('seconds', float('nan')):.1f} s"
          + (f" ({'; '.join(grid['problems'])})" if grid.get("problems") else ""))
    print(f"server RSS (Streamlit process + JVMs + workers): peak {rss_peak:.0f} MB during the load, "
          f"{rss_after:.0f} MB after it" + (f", {rss_all:.0f} MB after scoring once with all {warm_all[1]} "
                                             f"available metrics ({warm_all[0]:.0f} s)" if warm_all else ""))
    all_errors = errors + (warm_all[2] if warm_all else [])
    print(f"errors: {len(all_errors)}" + "".join(f"\n  {e}" for e in all_errors[:20]))
    print(f"server log: {server.log.name}")
    return 0 if not all_errors else 1


def _nodes(node):
    if isinstance(node, dict):
        yield node
        for child in node.get("children", []) or []:
            yield from _nodes(child)


# --------------------------------------------------------------------------- in this process, no Streamlit

def run_in_process(args, settings, suite) -> int:
    from muttlab.engine import queue as work_queue
    from muttlab.engine import runner

    registry = runner.registry_for(settings)
    queue = work_queue.shared_queue()
    trials = suite.trials
    latencies: list[float] = []
    lock = threading.Lock()

    def grid() -> float:
        # As the Run page runs it: the runner's plan, the fair queue as executor, one cell at a time.
        start = time.perf_counter()
        scorer = work_queue.QueuedScorer(runner.cache_for(settings), registry, queue, "grid")
        runner.run(suite, list(args.grid), None, settings, registry, scorer=scorer)
        return time.perf_counter() - start

    def visitor(k: int) -> None:
        rng = random.Random(k)
        for _ in range(args.requests):
            t = rng.choice(trials)
            # A typed pair is new text: no cache hit (a suffix makes it unique).
            cands = (t.original + f" {k}{rng.random():.6f}", t.corrupted)
            start = time.perf_counter()
            queue.run(f"visitor-{k}", lambda: api.score(settings, PLAYGROUND, cands,
                                                        [list(t.refs(5))] * 2, registry), cost=8)
            with lock:
                latencies.append(time.perf_counter() - start)
            time.sleep(rng.uniform(0.5, 2.0))

    # Start the metrics (JVM) first so that latencies are about waiting, not a one-time start.
    queue.run("warm", lambda: api.score(settings, PLAYGROUND, ["a man rides"], [["a man is riding"]], registry))
    grid_result: list[float] = []
    grid_thread = threading.Thread(target=lambda: grid_result.append(grid()))
    grid_thread.start()
    time.sleep(args.grid_head_start)
    threads = [threading.Thread(target=visitor, args=(k,)) for k in range(args.sessions)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    grid_thread.join()
    rss_after_load = tree_rss_mb(os.getpid())
    if args.warm_all:
        names = [i.name for i in api.metric_catalogue(settings, registry) if i.available]
        queue.run("warm", lambda: api.score(settings, names, ["a man rides a horse"],
                                            [["a man is riding a horse", "a person rides"]], registry))
    rss_all = tree_rss_mb(os.getpid())
    registry.close()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; in-process threads on the fair queue "
          f"(no Streamlit): {args.sessions} sessions x {args.requests} requests ({', '.join(PLAYGROUND)}, "
          f"the pair only) during a full grid ({', '.join(args.grid)}, {len(trials)} trials x 5/10/20 refs)")
    print(f"Playground latency: {summary(latencies)}")
    print(f"full grid under load: {grid_result[0]:.1f} s")
    print(f"RSS (process + JVMs): {rss_after_load:.0f} MB after the load"
          + (f", {rss_all:.0f} MB with every available metric warm" if args.warm_all else ""))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=("sessions", "in-process"), default="sessions")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--requests", type=int, default=5, help="Playground requests per session")
    parser.add_argument("--oversized", type=int, default=0, help="how many of the sessions send a 200,000-word "
                        "candidate instead of a sentence (sessions mode)")
    parser.add_argument("--grid", type=lambda s: tuple(s.split(",")), default=GRID, help="the grid's metrics")
    parser.add_argument("--grid-head-start", type=float, default=5.0, help="seconds the grid runs alone first")
    parser.add_argument("--wait-timeout", type=int, default=600, help="seconds one agent request waits for a "
                        "run before asking again (server.agentWaitTimeout)")
    parser.add_argument("--warm-all", action="store_true", help="also score once with every available metric")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        settings = load_settings(cache_dir=Path(cache))
        suite = api.load_suite(settings, "mutt" if settings.data_dir else "sample")
        if args.mode == "sessions":
            return run_sessions(args, settings, suite)
        return run_in_process(args, settings, suite)


if __name__ == "__main__":
    sys.exit(main())

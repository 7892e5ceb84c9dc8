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

``--mode demo`` is the read-only demo under the attacks of issues 34 and 35, one scenario: the server as
``muttlab serve --read-only`` starts it on the data dir (a private shared cache and demo cache, the agent API on
for this server, agent sessions ending ``--session-ttl`` seconds after their last call), once its warm-up is done:

* ``--sessions`` (20) visitors: 2 **uploaders**, each a Chromium tab uploading the largest challenge set the caps
  allow (``MUTTLAB_MAX_PAIRS`` WMT rows, just under ``server.maxUploadSize``, every upload different), again and
  again; 2 **link openers** opening distinct links to expensive views (ΔBLEU units, severity curves, SICK
  choices, challenge sets and their drill-downs, ``run=1``), each in a new session; 2 **button pressers**
  pressing every expensive button in turn (Run on the full grid, Draw the curves, Correlate, Run the unit study,
  Score the pairs, Score the challenge set and its drill-down, Recompute on this server, Evaluate); the
  **other** visitors each open ``--requests`` pages (a new session each, as a new tab) and score a new pair on
  the Playground after each, paced like a person;
* printed: the other visitors' page loads and Playground answers (median, p95, max), how each expensive action
  was answered, the server's resident memory (the process tree) at its peak, and its CPU seconds after the last
  visitor left: in the first 60 s and in the 10 s after them (no work left: near nothing).

    MUTTLAB_DATA_DIR=../shared/data .venv/bin/python benchmarks/bench_load.py --mode demo

``--mode costs`` is what each of those actions costs the warm demo with one visitor alone: every page opened and
the Playground answering ``--requests`` times each, one after another; printed, the mean wall time and the
server process's CPU seconds per action.
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
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from bench_dashboard import free_port, stop_server  # this folder, on the path when run as a script
from muttlab import api
from muttlab.settings import load_settings

PLAYGROUND = ("BLEU-4", "ROUGE-L", "CIDEr-D", "METEOR-1.5")
GRID = ("BLEU-4", "ROUGE-L", "CIDEr-D", "METEOR-1.5", "TER")
INTERACT = "/_stcore/agent/interact"
OVERSIZED = "word " * 200_000  # a 200,000-word Playground candidate (--oversized)


def _tree_sum(pid: int, measure) -> float:
    """``measure(process)`` summed over process ``pid`` and all its descendants (the JVMs, the workers); a
    process that ends meanwhile counts 0."""
    import psutil

    try:
        me = psutil.Process(pid)
        procs = [me, *me.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0.0
    total = 0.0
    for p in procs:
        try:
            total += measure(p)
        except psutil.NoSuchProcess:
            pass
    return total


def tree_rss_mb(pid: int) -> float:
    """Resident memory of process ``pid`` and all its descendants (the JVMs, the workers), in MB: a page that a
    forked child shares with its parent counts twice (see :func:`tree_pss_mb`)."""
    return _tree_sum(pid, lambda p: p.memory_info().rss) / 2 ** 20


def _pss(process) -> int:
    """A process's proportional set size in bytes: a page it shares with n processes counts 1/n (Linux's
    ``smaps_rollup``; elsewhere its resident size)."""
    try:
        with open(f"/proc/{process.pid}/smaps_rollup") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return process.memory_info().rss


def tree_pss_mb(pid: int) -> float:
    """The memory process ``pid`` and its descendants use together, in MB: their proportional set sizes, so that
    a computation forked from the server (``services.apart``) adds only the pages it wrote, as it does."""
    return _tree_sum(pid, _pss) / 2 ** 20


def tree_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` and all its descendants so far."""
    return _tree_sum(pid, lambda p: sum(p.cpu_times()[:2]))


def process_cpu(pid: int) -> dict[str, float]:
    """CPU seconds so far of process ``pid`` and each descendant, by ``name pid`` (which of them still works)."""
    found: dict[str, float] = {}

    def note(p) -> float:
        found[f"{p.name()} {p.pid}"] = sum(p.cpu_times()[:2])
        return 0.0

    _tree_sum(pid, note)
    return found


class CpuWatch:
    """CPU seconds used during a block by the processes of two trees, the server's and this benchmark's (its
    Chromium tabs; the server's tree left out), sampled every ``every`` seconds: a process that ends within the
    block (an uploader's browser, closed) keeps what it had used at its last sample, where a sum taken at the
    end would count it as nothing. :attr:`used` is by kind: the server's Python, its JVM (``java``), other
    processes of the server's tree, the uploaders' browsers (Chromium) and the rest of the load generator."""

    def __init__(self, server_pid: int, every: float = 0.5):
        self.server_pid, self.every = server_pid, every
        # By process (process_cpu's "name pid"): its kind and CPU seconds at the first and the last sample.
        self._first: dict[str, tuple[str, float]] = {}
        self._last: dict[str, tuple[str, float]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def _kind(self, process: str, server: dict[str, float]) -> str:
        if process not in server:
            return "the uploaders' browsers" if process.startswith("chrom") else "the load generator"
        if process.endswith(f" {self.server_pid}"):
            return "the server's Python"
        return "its JVM" if process.startswith("java ") else "its other processes"

    def _sample(self, first: bool) -> None:
        server = process_cpu(self.server_pid)
        for process, cpu in process_cpu(os.getpid()).items():  # this benchmark's tree holds the server's
            seen = (self._kind(process, server), cpu)
            if first:
                self._first[process] = seen
            self._last[process] = seen

    def _watch(self) -> None:
        while not self._stop.wait(self.every):
            self._sample(first=False)

    def __enter__(self) -> "CpuWatch":
        self._sample(first=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample(first=False)

    @property
    def used(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for process, (kind, cpu) in self._last.items():
            out[kind] = out.get(kind, 0.0) + cpu - self._first.get(process, (kind, 0.0))[1]
        return out


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

    def __init__(self, settings, wait_timeout: int, session_ttl: int | None = None):
        from muttlab.cli import serve

        self.port = free_port()
        argv = serve.command(self.port, "127.0.0.1") + [
            "--server.enableAgentApi", "true", "--server.agentWaitTimeout", str(wait_timeout),
            "--server.agentMaxSessions", "400"]
        if session_ttl is not None:
            argv += ["--server.agentSessionTTL", str(session_ttl)]
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
    """One visitor: an agent-API session of the server (an ordinary Streamlit AppSession), opened on ``page``
    with the link's ``query``."""

    def __init__(self, server: Server, page: str, query: dict | None = None):
        self.server = server
        self.id: str | None = None
        self.snapshot = self.send({"page": page, **({"query_params": {k: [v] for k, v in query.items()}}
                                                    if query else {})})

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

    def offers(self, label: str) -> bool:
        return any(a["kind"] == "trigger" and a["label"] == label for a in self.snapshot.get("actions", []))


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


# --------------------------------------------------------------------------- the read-only demo under attack

# What the other visitors open (the Run page is ""): every page of the navigation.
PAGES = ("", "drilldown", "published", "playground", "severity", "challenge", "mine", "human", "correlation",
         "learned", "annotate")
DEMETR = "demetr/dataset"
WMT_HEADER = "lp\tsource\tgood\tincorrect\treference\tphenomena\n"


def expensive_link(k: int, sets: list[str]) -> tuple[str, dict]:
    """The ``k``-th distinct link to an expensive view (each a computation the server has not done)."""
    chosen = sets[k % len(sets)]
    links = [("correlation", {"assignments": str(10 + k % 1990)}),
             ("severity", {"metrics": "BLEU-4,METEOR-1.5", "corruption": ("typo", "drop_content")[k % 2],
                           "strengths": f"1,{2 + k % 4}", "refs": str((1, 3, 5, 10)[k % 4])}),
             ("human", {"corruption": ("det_sub", "passive", "neg_verb", "syn_phrase")[k % 4], "metric": "BLEU-4",
                        "metrics": "BLEU-4,ROUGE-L", "reference": "sentence"}),
             ("drilldown", {"suite": f"file:{DEMETR}/{chosen}", "metric": "BLEU-4",
                            "corruption": chosen.removesuffix(".json")}),
             ("challenge", {"file": f"{DEMETR}/{chosen}", "metrics": "BLEU-4,chrF"}),
             ("", {"metrics": "BLEU-4,METEOR-1.5", "corruptions": "all", "refs": "5,10,20", "run": "1"})]
    return links[k % len(links)]


def expensive_buttons(sets: list[str]) -> list[tuple[str, dict, dict, str]]:
    """Every expensive button of the dashboard: (page, link, widgets set before, the button's label)."""
    return [("", {"corruptions": "all", "refs": "5,10,20"}, {}, "Run"),
            ("severity", {"metrics": "BLEU-4,METEOR-1.5,CIDEr-D", "corruption": "swap_chunks", "strengths": "1,2,3",
                          "refs": "5"}, {}, "Draw the curves"),
            ("correlation", {"metrics": "BLEU-4,METEOR-1.5", "boot": "300"}, {}, "Correlate"),
            ("correlation", {}, {"dbleu-assignments": 250}, "Run the unit study"),
            ("human", {"corruption": "det_sub", "metric": "BLEU-4", "metrics": "BLEU-4,METEOR-1.5",
                       "reference": "sentence"}, {}, "Score the pairs of this view"),
            ("challenge", {"file": f"{DEMETR}/{sets[0]}", "metrics": "BLEU-4,chrF,METEOR-1.5"}, {},
             "Score the challenge set"),
            ("drilldown", {"suite": f"file:{DEMETR}/{sets[1]}", "metric": "METEOR-1.5",
                           "corruption": sets[1].removesuffix(".json")}, {}, "Score METEOR-1.5 on this challenge set"),
            ("published", {}, {}, "Recompute on this server"),
            ("learned", {}, {}, "Evaluate")]


def largest_upload(k: int, pairs: int, max_bytes: int) -> bytes:
    """A WMT challenge-set TSV of ``pairs`` rows as long as fits in ``max_bytes``, different for each ``k``."""
    def row(i: int, width: int) -> str:
        word = ("lorem ipsum dolor sit amet consectetur " * (width // 30 + 2))[:width]
        return f"en-de\t{word} {k}.{i}\t{word} good\t{word} bad\t{word} ref\tphenomenon-{i % 50}\n"

    width = (max_bytes - len(WMT_HEADER)) // pairs // 4
    while width > 8 and len(row(pairs, width)) * pairs + len(WMT_HEADER) > max_bytes:
        width -= 1
    return (WMT_HEADER + "".join(row(i, width) for i in range(pairs))).encode()


def answer(snapshot: dict) -> str:
    """What a settled run showed, in a few words: refused by the demo, an error, or done."""
    text = json.dumps(snapshot.get("tree", {}))
    for words, label in (("Your other tab", "refused: another computation of this address"),
                         ("right now, as many as it takes at once", "refused: the server's cap"),
                         ("was stopped: this public demo", "stopped: share used up"),
                         ("yours is used up: nothing was started", "refused: share used up"),
                         ("computes only the quick metrics live", "refused: slow metric"),
                         ("switched off on this public demo", "refused: not on the demo"),
                         ("over the limit", "refused: over a cap")):
        if words in text:
            return label
    return "error" if problems(snapshot) else "done"


def niced_chromium(folder: Path, niceness: int) -> str:
    """A Chromium executable for Playwright that runs at ``niceness``, every process it starts too."""
    if niceness == 0:
        return "/usr/bin/chromium"
    wrapper = folder / "chromium"
    wrapper.write_text(f'#!/bin/sh\nexec nice -n {niceness} /usr/bin/chromium "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def uploader(url: str, k: int, stop: threading.Event, pairs: int, max_bytes: int, record, niceness: int) -> None:
    """A Chromium tab on the Challenge page uploading the largest file again and again, until ``stop``: each time
    it takes the last file away, then uploads a new one and waits for the page to name it or to say why not.
    Its browser runs at ``niceness`` (see ``--attackers-nice``)."""
    from playwright.sync_api import sync_playwright

    waiting = '[data-testid="stStatusWidget"]'
    with sync_playwright() as p, tempfile.TemporaryDirectory() as folder:
        browser = p.chromium.launch(executable_path=niced_chromium(Path(folder), niceness),
                                    args=["--headless", "--no-sandbox", "--disable-gpu"])
        page = browser.new_page()
        page.set_default_timeout(600_000)
        page.goto(f"{url}/challenge")
        empty = page.get_by_text("Upload a challenge set or name one in the data dir")
        empty.wait_for()
        i = 0
        while not stop.is_set():
            name = f"largest-{k}-{i}"
            path = Path(folder) / f"{name}.tsv"
            path.write_bytes(largest_upload(1000 * k + i, pairs, max_bytes))
            start = time.perf_counter()
            page.locator('input[type="file"]').set_input_files(str(path))
            empty.wait_for(state="hidden")  # the page runs with the new file
            page.wait_for_selector(waiting, state="detached")
            shown = page.inner_text("body")
            record(time.perf_counter() - start, path.stat().st_size,
                   "read" if f"{name}: {pairs:,} pairs read as" in shown
                   else answer({"tree": shown, "status": "ready"}))
            page.locator('[data-testid="stFileChipDeleteBtn"]').first.click()
            empty.wait_for()
            path.unlink()
            i += 1
            time.sleep(random.Random(i).uniform(0.5, 2.0))
        browser.close()


class Demo:
    """One demo server and what its visitors saw: the other visitors' page loads and Playground answers (per
    phase), how each expensive action was answered, the uploads' times and answers, what went wrong."""

    def __init__(self, server: Server, suite, sets: list[str], max_pairs: int, upload_bytes: int,
                 attackers_nice: int, first_button: str = "Run"):
        self.first_button = first_button
        self.server, self.suite, self.sets = server, suite, sets
        self.max_pairs, self.upload_bytes, self.attackers_nice = max_pairs, upload_bytes, attackers_nice
        self.lock = threading.Lock()
        self.actions: dict[str, list[str]] = {}
        self.uploads: list[tuple[float, int, str]] = []
        self.errors: list[str] = []
        self.page_loads: list[tuple[float, str, bool]] = []  # (seconds, page, under the attacks)
        self.cpu: dict[str, tuple[float, dict[str, float]]] = {}  # phase: (wall s, CpuWatch.used)
        # When each attacker's action ran and each Playground answer was waited for (perf_counter seconds), to
        # say what was under way during the slowest answers.
        self.actions_at: list[tuple[float, float, str]] = []  # (start, end, what)
        self.answers_at: list[tuple[float, float, bool]] = []  # (start, seconds, under the attacks)

    def note(self, kind: str, what: str) -> None:
        with self.lock:
            self.actions.setdefault(kind, []).append(what)

    def regular(self, k: int, requests: int, loads: list[float], answers: list[float], attacked: bool) -> None:
        """A visitor opening ``requests`` pages (a new session each) and scoring a new pair after each. Each phase
        draws its own pairs: the same ones again would be answered from the first phase's memo, not scored."""
        rng = random.Random(f"{k}-{'attacked' if attacked else 'alone'}")
        try:
            playground = Session(self.server, "playground")
            for _ in range(requests):
                start = time.perf_counter()
                page = rng.choice(PAGES)
                opened = Session(self.server, page)
                seconds = time.perf_counter() - start
                t = rng.choice(self.suite.trials)
                state = {"pg-candidate": f"{t.original} {k}{rng.random():.6f}", "pg-refs": "\n".join(t.refs(5)),
                         "pg-metrics": list(PLAYGROUND)}
                start = time.perf_counter()
                settled = playground.send({"widget_state": state, "trigger": {"key": playground.trigger_key("Score")}})
                with self.lock:
                    loads.append(seconds)
                    self.page_loads.append((seconds, page or "run", attacked))
                    answers.append(time.perf_counter() - start)
                    self.answers_at.append((start, answers[-1], attacked))
                    self.errors.extend(f"visitor {k}: {p}" for p in problems(opened.snapshot) + problems(settled))
                time.sleep(rng.uniform(0.5, 2.0))
        except Exception as exc:  # noqa: BLE001 (a benchmark reports every failure and goes on)
            with self.lock:
                self.errors.append(f"visitor {k}: {exc}")

    def link_opener(self, k: int, stop: threading.Event) -> None:
        n, rng = k, random.Random(100 + k)
        while not stop.is_set():
            page, query = expensive_link(n, self.sets)
            start = time.perf_counter()
            try:
                shown = answer(Session(self.server, page, query).snapshot)
                self.note("links", shown)
                self.ran(start, f"a link to {page or 'run'} ({shown})")
            except Exception as exc:  # noqa: BLE001
                self.note("links", f"failed: {str(exc)[:80]}")
            n += 2
            time.sleep(rng.uniform(0.5, 2.0))  # paced like the others: a flood is the proxy's to limit

    def presser(self, k: int, stop: threading.Event) -> None:
        buttons = expensive_buttons(self.sets)
        n, rng = [b[3] for b in buttons].index(self.first_button) + k, random.Random(200 + k)
        while not stop.is_set():
            page, query, widgets, label = buttons[n % len(buttons)]
            n += 1
            time.sleep(rng.uniform(0.5, 2.0))
            try:
                session = Session(self.server, page, query)
                if not session.offers(label):  # refused before its button, or not on the demo at all
                    shown = answer(session.snapshot)
                    self.note(label, "not offered" if shown == "done" else shown)
                    continue
                start = time.perf_counter()
                settled = session.send({"widget_state": widgets, "trigger": {"key": session.trigger_key(label)}})
                shown = answer(settled)
                self.note(label, shown)
                self.ran(start, f"{label} ({shown})")
            except Exception as exc:  # noqa: BLE001
                self.note(label, f"failed: {str(exc)[:80]}")

    def ran(self, start: float, what: str) -> None:
        with self.lock:
            self.actions_at.append((start, time.perf_counter(), what))

    def uploaded(self, seconds: float, size: int, how: str) -> None:
        with self.lock:
            self.uploads.append((seconds, size, how))
        self.ran(time.perf_counter() - seconds, f"an upload ({how})")

    def during(self, start: float, seconds: float) -> list[str]:
        """The attackers' actions under way at some time while an answer was waited for."""
        with self.lock:
            return sorted({what for a, b, what in self.actions_at if a < start + seconds and b > start})

    def upload(self, k: int, stop: threading.Event) -> None:
        try:
            uploader(self.server.url, k, stop, self.max_pairs, self.upload_bytes, self.uploaded,
                     self.attackers_nice)
        except Exception as exc:  # noqa: BLE001
            with self.lock:
                self.errors.append(f"uploader {k}: {str(exc)[:300]}")

    def phase(self, others: int, requests: int, attacked: bool) -> tuple[list[float], list[float], float]:
        """``others`` visitors' page loads and Playground answers, with the six attackers at work or without; the
        CPU seconds the server's Python, its JVM, the uploaders' browsers and the rest of the load generator
        used meanwhile go to :attr:`cpu`, by phase (:class:`CpuWatch`)."""
        loads: list[float] = []
        answers: list[float] = []
        stop = threading.Event()
        attackers = [] if not attacked else (
            [threading.Thread(target=self.upload, args=(k, stop)) for k in range(2)]
            + [threading.Thread(target=self.link_opener, args=(k, stop)) for k in range(2)]
            + [threading.Thread(target=self.presser, args=(k, stop)) for k in range(2)])
        visitors = [threading.Thread(target=self.regular, args=(k, requests, loads, answers, attacked))
                    for k in range(others)]
        start = time.perf_counter()
        with CpuWatch(self.server.proc.pid) as watch:
            for thread in attackers + visitors:
                thread.start()
            for thread in visitors:
                thread.join()
            stop.set()
            for thread in attackers:
                thread.join()
        seconds = time.perf_counter() - start
        self.cpu["under the attacks" if attacked else "alone"] = (seconds, watch.used)
        return loads, answers, seconds


@contextmanager
def warm_demo(args, settings) -> Iterator[Server]:
    """The read-only demo as ``muttlab serve --read-only`` starts it on the data dir (with a fresh, private demo
    score cache and the agent API), once it answers and its warm-up has ended (under `streamlit run` the warm-up
    starts with the first session); stopped when the block ends."""
    with tempfile.TemporaryDirectory() as own:
        os.environ["MUTTLAB_DEMO_CACHE_DIR"] = own  # the demo's own score cache: fresh, like its shared one
        server = Server(settings.with_overrides(read_only=True), wait_timeout=args.wait_timeout,
                        session_ttl=args.session_ttl)
        try:
            server.wait_healthy()
            Session(server, "")
            deadline = time.monotonic() + 1200
            while "warm-up done" not in Path(server.log.name).read_text(errors="replace"):
                if time.monotonic() > deadline:
                    raise SystemExit("the warm-up did not end in 20 minutes")
                time.sleep(2)
            yield server
        finally:
            server.stop()


def run_costs(args, settings) -> int:
    """One visitor alone on the warm demo: each page opened ``--requests`` times and as many Playground answers,
    one after another; printed per action, its mean wall time and the server process's CPU seconds (its own
    Python process: the page runs and the queue; METEOR's JVM apart)."""
    import psutil

    def cpu() -> float:
        return sum(psutil.Process(server.proc.pid).cpu_times()[:2])

    with warm_demo(args, settings) as server:
        for page in PAGES:  # each page's first run (its caches) is not what a visitor of a warm demo pays
            Session(server, page)
        rng, trials, n = random.Random(1), api.load_suite(settings, "mutt").trials, args.requests
        playground = Session(server, "playground")

        def answer_a_new_pair() -> None:
            t = rng.choice(trials)
            state = {"pg-candidate": f"{t.original} {rng.random():.6f}", "pg-refs": "\n".join(t.refs(5)),
                     "pg-metrics": list(PLAYGROUND)}
            playground.send({"widget_state": state, "trigger": {"key": playground.trigger_key("Score")}})

        actions = [("a Playground answer", answer_a_new_pair)]
        actions += [(f"page {page or 'run'}", lambda page=page: Session(server, page)) for page in PAGES]
        print(f"one visitor alone on the warm demo, {n} of each, load average {os.getloadavg()[0]:.1f}")
        for what, act in actions:
            cpu0, start = cpu(), time.perf_counter()
            for _ in range(n):
                act()
            print(f"{what}: wall {(time.perf_counter() - start) / n:.3f} s, server CPU {(cpu() - cpu0) / n:.3f} s")
    return 0


def run_demo(args, settings) -> int:
    from muttlab.settings import Limits

    limits = Limits.from_env(os.environ)
    sets = sorted(p.name for p in (Path(settings.data_dir) / DEMETR).glob("critical_*.json"))
    labels = [button[3] for button in expensive_buttons(sets)]
    if args.first_button not in labels:
        raise SystemExit(f"--first-button {args.first_button!r} is no expensive button; choose one of: "
                         + ", ".join(labels))
    samples: list[tuple[float, float]] = []
    stop_sampling = threading.Event()
    others = args.sessions - 6
    with warm_demo(args, settings) as server:
        try:
            def sample() -> None:
                while not stop_sampling.wait(2.0):
                    samples.append((tree_pss_mb(server.proc.pid), tree_rss_mb(server.proc.pid)))

            threading.Thread(target=sample, daemon=True).start()
            # The browser's check of server.maxUploadSize counts a megabyte as 10^6 bytes (the server's, 2^20).
            demo = Demo(server, api.load_suite(settings, "mutt"), sets, limits.max_pairs,
                        args.upload_mb * 10 ** 6 - 4096, args.attackers_nice, args.first_button)
            # The baseline of the same run: the other visitors alone on the warm demo.
            alone_loads, alone_answers, _ = demo.phase(others, args.requests, attacked=False)
            loads, answers, load_seconds = demo.phase(others, args.requests, attacked=True)
            left = time.monotonic()
            cpu0 = tree_cpu_s(server.proc.pid)
            time.sleep(max(0.0, left + 60 - time.monotonic()))
            cpu60 = tree_cpu_s(server.proc.pid)
            before = process_cpu(server.proc.pid)
            time.sleep(10)
            cpu70 = tree_cpu_s(server.proc.pid)
            busy = {name: cpu - before.get(name, 0.0) for name, cpu in process_cpu(server.proc.pid).items()}
            stop_sampling.set()
            pss_after = tree_pss_mb(server.proc.pid)
        finally:
            stop_sampling.set()

    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (shared with other people's jobs); the "
          f"read-only demo (muttlab serve --read-only's command line + agent API), {args.sessions} visitors for "
          f"{load_seconds:.0f} s: {others} opening {args.requests} pages each and scoring a new pair on the "
          f"Playground after each, 2 uploading (their browsers at niceness {args.attackers_nice}), 2 opening expensive "
          f"links, 2 pressing expensive buttons")
    for what, alone, attacked in (("page loads", alone_loads, loads), ("Playground answers", alone_answers, answers)):
        print(f"{what} of the other {others}, alone: {summary(alone)}")
        print(f"{what} of the other {others}, under the attacks: {summary(attacked)}"
              + (f"; p95 {percentile(attacked, 0.95) / percentile(alone, 0.95):.1f}x alone's" if alone and attacked
                 else ""))
    slowest = sorted((load for load in demo.page_loads if load[2]), reverse=True)[:5]
    print("the slowest page loads under the attacks: " + ", ".join(f"{page} {seconds:.2f} s"
                                                                   for seconds, page, _ in slowest))
    attacked_at = [a for a in demo.answers_at if a[2]]
    first = min((start for start, _, _ in attacked_at), default=0.0)
    print("the slowest Playground answers under the attacks, with what the attackers had under way meanwhile: "
          + "; ".join(f"{seconds:.2f} s at +{start - first:.1f} s ({', '.join(demo.during(start, seconds)) or 'nothing'})"
                      for start, seconds, _ in sorted(attacked_at, key=lambda a: -a[1])[:5]))
    for phase, (wall, used) in demo.cpu.items():
        print(f"CPU {phase}, in {wall:.0f} s: " + ", ".join(f"{kind} {cpu:.0f} s ({cpu / wall:.2f} cores)"
                                                           for kind, cpu in used.items()))
    sizes = sorted({size for _, size, _ in demo.uploads})
    print(f"uploads ({limits.max_pairs:,} pairs, {sizes[-1] / 2 ** 20:.1f} MiB each): "
          f"{summary([s for s, _, _ in demo.uploads])}; "
          + ", ".join(f"{how} x{sum(1 for *_, h in demo.uploads if h == how)}"
                      for how in dict.fromkeys(h for *_, h in demo.uploads))
          if demo.uploads else "uploads: none finished")
    for kind, seen in sorted(demo.actions.items()):
        print(f"  {kind}: " + ", ".join(f"{how} x{seen.count(how)}" for how in dict.fromkeys(seen)))
    print(f"server memory (process tree, PSS): peak {max((m for m, _ in samples), default=0):.0f} MB, "
          f"{pss_after:.0f} MB at the end; their RSS summed (shared pages once per process) peaked at "
          f"{max((r for _, r in samples), default=0):.0f} MB")
    print(f"server CPU after the last visitor left: {cpu60 - cpu0:.1f} s in the first 60 s, "
          f"{cpu70 - cpu60:.2f} s in the 10 s after them"
          + "".join(f"; {name} {cpu:.2f} s" for name, cpu in sorted(busy.items(), key=lambda i: -i[1])[:3]
                    if cpu >= 0.05))
    print(f"errors: {len(demo.errors)}" + "".join(f"\n  {e}" for e in demo.errors[:20]))
    print(f"server log: {server.log.name}")
    return 0 if not demo.errors else 1


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
    parser.add_argument("--mode", choices=("sessions", "in-process", "demo", "costs"), default="sessions")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--requests", type=int, default=5, help="Playground requests per session")
    parser.add_argument("--oversized", type=int, default=0, help="how many of the sessions send a 200,000-word "
                        "candidate instead of a sentence (sessions mode)")
    parser.add_argument("--grid", type=lambda s: tuple(s.split(",")), default=GRID, help="the grid's metrics")
    parser.add_argument("--grid-head-start", type=float, default=5.0, help="seconds the grid runs alone first")
    parser.add_argument("--wait-timeout", type=int, default=600, help="seconds one agent request waits for a "
                        "run before asking again (server.agentWaitTimeout)")
    parser.add_argument("--warm-all", action="store_true", help="also score once with every available metric")
    parser.add_argument("--session-ttl", type=int, default=20, help="seconds an agent session lives after its "
                        "last call (demo mode: when a visitor has left)")
    parser.add_argument("--first-button", default="Run", help="the expensive button the two button pressers start "
                        "from (demo mode; the second presser the one after it): e.g. 'Run the unit study' to have the "
                        "attackers' first computation be the ΔBLEU unit study")
    parser.add_argument("--attackers-nice", type=int, default=19, help="the niceness of the uploaders' browsers "
                        "(demo mode): they stand for attackers' machines, not the server's, so they get only the "
                        "CPU the server leaves; 0 to let them take the server's cores as well")
    parser.add_argument("--upload-mb", type=int, default=20, help="the upload limit the uploaders fill (demo mode; "
                        "server.maxUploadSize)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cache:
        settings = load_settings(cache_dir=Path(cache))
        if args.mode in ("demo", "costs"):
            if settings.data_dir is None:
                raise SystemExit(f"{args.mode} mode needs the data dir (MUTTLAB_DATA_DIR)")
            return run_demo(args, settings) if args.mode == "demo" else run_costs(args, settings)
        suite = api.load_suite(settings, "mutt" if settings.data_dir else "sample")
        if args.mode == "sessions":
            return run_sessions(args, settings, suite)
        return run_in_process(args, settings, suite)


if __name__ == "__main__":
    sys.exit(main())

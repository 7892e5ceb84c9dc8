"""METEOR 1.5 (Denkowski & Lavie, WMT 2014) through the official jar shipped in ``pycocoevalcap``.

The jar's classes run in ONE long-lived Java process per Python process, started on the first score and
shared by every :class:`Meteor` instance whatever its parameters (the JVM start and the loading of the
paraphrase table take 10-30 s and about 1-2 GB, so starting one per call, as a naive wrapper would, is the
cost to avoid). The process is a small driver (:data:`DRIVER_SOURCE`, compiled once per user and jar by
:func:`compiled_driver`, or by Java's source launcher at each start where that cannot be; Java 11+) over the
jar's own ``MeteorScorer`` with pycocoevalcap's settings (``-l en -norm``, ``-Xmx2G``). It does what the jar's
``-stdio`` mode does, in two steps that can be batched and shared:

* ``ALIGN``: a (candidate, reference) pair's sufficient statistics, ``MeteorScorer.getMeteorStats`` printed
  with ``MeteorStats.toString`` (the stdio ``SCORE`` answer), for a whole batch, spread over one scorer per
  core (``new MeteorScorer(base)`` shares the paraphrase table, synonyms and function words; each copy has
  its own stemmer);
* ``EVAL``: scores from those statistics for one parameter setting, as stdio's ``EVAL`` computes them
  (statistics read back field by field, then ``computeMetrics``).

Alignment does not depend on α, β, γ, δ (they enter only ``computeMetrics``, which is why Meteor's own
trainer scores statistics once and re-weights them), so every parameter setting - METEOR, its tuned
variants and ML-METEOR's three levels - shares one JVM and one alignment per pair: a custom setting is the
default scorer with its α, β, γ, δ replaced (the English module weights kept, as ``-w`` keeps them for the
jar). The tests check both against the jar's stdio mode and pycocoevalcap's wrapper on MUTT trials.

A multi-reference score is the best single-reference score (the jar keeps the best-scoring reference), so
each (candidate, reference) pair is aligned once per process and remembered: the 5-, 10- and 20-reference
pools of a trial are nested and share their alignments, and the original sentence of a trial recurs. A
reader thread drains the driver's output so the pipes never fill; one lock makes concurrent callers
(dashboard users) take turns. Every read has a timeout; when the process dies or stops answering it is
killed, restarted and the batch retried once. :meth:`Meteor.close` lets go of the process, which stops after
:data:`LINGER_S` seconds without a request (so that API calls one after another, each closing its registry,
share one); :func:`shutdown_all` stops it at once, as the interpreter's exit does.

Input text is PTB-tokenised as coco-caption does before it calls METEOR (:func:`muttlab.metrics.tokenize.ptb_tokenize`),
so the scores are those of the MUTT study's coco-caption pipeline.
"""
from __future__ import annotations

import atexit
import collections
import hashlib
import os
import queue
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Callable, ClassVar, Sequence

import numpy as np

from muttlab.metrics.base import Metric, MetricError, MetricUnavailable
from muttlab.settings import user_cache_home

JAVA_HINT = "install a Java 11+ JDK (the driver is compiled by its javac or source launcher), e.g. `apt-get install default-jdk-headless`, and make sure `java` is on PATH"
# Meteor 1.5's English defaults (task "rank"; Denkowski & Lavie 2014, Table 1): alpha, beta, gamma, delta.
ENGLISH_DEFAULTS = {"alpha": 0.85, "beta": 0.2, "gamma": 0.6, "delta": 0.75}
# The module weights (exact stem synonym paraphrase) of that task, which every parameter setting keeps.
ENGLISH_WEIGHTS = "1.0 0.6 0.8 0.6"
# Pairs per request: small enough that an answer comes well within the timeout on a loaded machine, and that
# a caller told of each answer (a progress bar) hears from a long batch every few seconds.
CHUNK = 1000
# A JVM start costs 5-8 s and 7-10 CPU seconds (the paraphrase table; the same machine differs by day). When its
# user lets go of it (a registry closed: every muttlab.api call made without a registry closes its own) it is kept
# this long, unused, before it stops, so that the next call within that time finds it running.
LINGER_S = 30.0
# The JVM's scheduling priority (nice). Its alignments are batch work, and beside a server's page runs its
# scorer threads took as much of the machine's cores as the server's one interpreter: a visitor's page waited for
# the CPU behind another visitor's study. Niceness only orders work that is ready to run, so a JVM with the
# machine to itself (a command-line run, whose Python waits for it) goes as fast as before.
NICENESS = 10
_EOF = object()

DRIVER_SOURCE = r"""
import edu.cmu.meteor.scorer.MeteorConfiguration;
import edu.cmu.meteor.scorer.MeteorScorer;
import edu.cmu.meteor.scorer.MeteorStats;

import java.io.*;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/** Batched METEOR 1.5: "ALIGN n" + n lines "ref ||| hyp" -> n statistics lines; "EVAL n default" or
 * "EVAL n alpha beta gamma delta" + n statistics lines -> n scores. Arguments: threads, then Meteor's. */
public class MeteorBatch {
    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        String[] meteorArgs = java.util.Arrays.copyOfRange(args, 1, args.length);
        MeteorScorer base = new MeteorScorer(new MeteorConfiguration(Meteor.createPropertiesFromArgs(meteorArgs, 0)));
        MeteorScorer[] scorers = new MeteorScorer[threads];
        for (int t = 0; t < threads; t++) scorers[t] = t == 0 ? base : new MeteorScorer(base);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16),
                                          false, "UTF-8");
        String header;
        while ((header = in.readLine()) != null) {
            String[] h = header.trim().split(" ");
            int n = Integer.parseInt(h[1]);
            String[] lines = new String[n];
            for (int i = 0; i < n; i++) lines[i] = in.readLine();
            String[] answers = new String[n];
            if (h[0].equals("ALIGN")) {
                AtomicInteger next = new AtomicInteger();
                Thread[] pool = new Thread[threads];
                for (int t = 0; t < threads; t++) {
                    MeteorScorer scorer = scorers[t];
                    pool[t] = new Thread(() -> {
                        for (int i; (i = next.getAndIncrement()) < n; ) {
                            // As the stdio SCORE request is read: fields split on |||, trimmed, the last the hypothesis.
                            String[] parts = lines[i].split("\\|\\|\\|");
                            ArrayList<String> refs = new ArrayList<String>();
                            for (int j = 0; j < parts.length - 1; j++) refs.add(parts[j].trim());
                            answers[i] = scorer.getMeteorStats(parts[parts.length - 1].trim(), refs).toString();
                        }
                    });
                    pool[t].start();
                }
                for (Thread t : pool) t.join();
            } else if (h[0].equals("EVAL")) {
                MeteorScorer scorer = base;
                if (!h[2].equals("default")) {
                    scorer = new MeteorScorer(base);
                    String[] names = {"alpha", "beta", "gamma", "delta"};
                    for (int k = 0; k < 4; k++) {
                        Field f = MeteorScorer.class.getDeclaredField(names[k]);
                        f.setAccessible(true);
                        f.setDouble(scorer, Double.parseDouble(h[2 + k]));
                    }
                }
                for (int i = 0; i < n; i++) {
                    MeteorStats stats = parse(lines[i]);
                    scorer.computeMetrics(stats);
                    answers[i] = Double.toString(stats.score);
                }
            } else {
                throw new IllegalArgumentException("unknown request: " + header);
            }
            for (String a : answers) out.println(a);
            out.flush();
        }
    }

    /** MeteorStats(String) field by field, with Double.parseDouble instead of its (slow) Scanner. */
    static MeteorStats parse(String line) {
        String[] v = line.trim().split("\\s+");
        MeteorStats s = new MeteorStats();
        int i = 0;
        s.testLength = Double.parseDouble(v[i++]);
        s.referenceLength = Double.parseDouble(v[i++]);
        s.testFunctionWords = Double.parseDouble(v[i++]);
        s.referenceFunctionWords = Double.parseDouble(v[i++]);
        s.testTotalMatches = 0;
        s.referenceTotalMatches = 0;
        s.testStageMatchesContent = new ArrayList<Double>();
        s.referenceStageMatchesContent = new ArrayList<Double>();
        s.testStageMatchesFunction = new ArrayList<Double>();
        s.referenceStageMatchesFunction = new ArrayList<Double>();
        for (int k = 0; k < 4; k++) {
            double tc = Double.parseDouble(v[i++]), rc = Double.parseDouble(v[i++]);
            s.testTotalMatches += tc;
            s.referenceTotalMatches += rc;
            s.testStageMatchesContent.add(tc);
            s.referenceStageMatchesContent.add(rc);
            double tf = Double.parseDouble(v[i++]), rf = Double.parseDouble(v[i++]);
            s.testTotalMatches += tf;
            s.referenceTotalMatches += rf;
            s.testStageMatchesFunction.add(tf);
            s.referenceStageMatchesFunction.add(rf);
        }
        s.chunks = Double.parseDouble(v[i++]);
        s.testWordMatches = Double.parseDouble(v[i++]);
        s.referenceWordMatches = Double.parseDouble(v[i++]);
        return s;
    }
}
"""


def jar_path() -> Path:
    """The METEOR 1.5 jar inside the installed pycocoevalcap package."""
    try:
        import pycocoevalcap
    except ImportError as exc:
        raise MetricUnavailable("METEOR-1.5 needs the jar shipped with pycocoevalcap: pip install pycocoevalcap") from exc
    for root in pycocoevalcap.__path__:
        jar = Path(root) / "meteor" / "meteor-1.5.jar"
        if jar.is_file():
            return jar
    raise MetricUnavailable("pycocoevalcap is installed without meteor/meteor-1.5.jar; reinstall it: "
                            "pip install --force-reinstall pycocoevalcap")


def paraphrase_table() -> Path | None:
    """Meteor's English paraphrase table (``data/paraphrase-en.gz`` beside the jar), or None."""
    try:
        path = jar_path().parent / "data" / "paraphrase-en.gz"
    except MetricUnavailable:
        return None
    return path if path.is_file() else None


def _clean(text: str) -> str:
    # '|||' separates fields and a newline ends a request in the jar's protocol; the hypothesis is
    # cleaned exactly as pycocoevalcap's wrapper does it.
    return " ".join(text.replace("|||", "").split())


def _private_folder(path: Path) -> bool:
    """``path`` is a folder of this user's that nobody else may write in (else a planted class would run in the
    JVM)."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = path.stat()
    except OSError:
        return False
    owned = not hasattr(os, "getuid") or info.st_uid == os.getuid()
    return path.is_dir() and owned and not info.st_mode & 0o022


def compiled_driver() -> Path | None:
    """The folder holding the driver's class, compiled from :data:`DRIVER_SOURCE` against this jar, once per user,
    in the user's cache (``$XDG_CACHE_HOME/muttlab-meteor/<source and jar's hash>``); None where it cannot be
    (no ``javac``, a cache folder that is not the user's own or not writable): each start then compiles it
    with Java's source launcher, 0.5-1 s and about a CPU second more."""
    jar = jar_path()
    info = jar.stat()
    key = hashlib.sha256(f"{DRIVER_SOURCE}\0{jar.resolve()}\0{info.st_size}\0{info.st_mtime_ns}".encode()).hexdigest()
    root = user_cache_home() / "muttlab-meteor"
    folder = root / key[:20]
    if not _private_folder(root):
        return None
    if (folder / "MeteorBatch.class").is_file():
        return folder
    javac = shutil.which("javac")
    if javac is None:
        return None
    # Compiled in a folder of its own, then renamed into place: two processes starting at once each compile,
    # and the second rename finds the first's folder and keeps it.
    try:
        work = Path(tempfile.mkdtemp(prefix=".compiling-", dir=root))
    except OSError:
        return None
    try:
        source = work / "MeteorBatch.java"
        source.write_text(DRIVER_SOURCE, encoding="utf-8")
        done = subprocess.run([javac, "--release", "11", "-nowarn", "-cp", str(jar), "-d", str(work), str(source)],
                              capture_output=True, timeout=300)
        if done.returncode != 0 or not (work / "MeteorBatch.class").is_file():
            return None
        source.unlink()
        try:
            os.rename(work, folder)
        except OSError:
            pass  # another process's rename came first
        return folder if (folder / "MeteorBatch.class").is_file() else None
    except (OSError, subprocess.SubprocessError):
        return None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def default_threads() -> int:
    """Scorer threads in the JVM: one per core (alignments are independent)."""
    return max(1, min(8, os.cpu_count() or 1))


def serving_threads() -> int:
    """Scorer threads in a server's JVM: one core fewer than the machine has, at least one. A server's page runs
    share one interpreter, so they use one core at most; with a scorer thread on every core, a visitor's study
    took them all, and the other visitors' pages waited for the CPU (docs/deploy.md, "One core for the pages")."""
    return max(1, min(8, (os.cpu_count() or 1) - 1))


class MeteorProcess:
    """The running driver JVM; thread-safe, restarted when it dies."""

    def __init__(self, timeout: float = 60.0, startup_timeout: float = 300.0, threads: int | None = None):
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.threads = threads or default_threads()
        self.lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._source_dir: tempfile.TemporaryDirectory | None = None
        self._lines: queue.Queue = queue.Queue()
        self._stderr: collections.deque = collections.deque(maxlen=20)
        self._fresh = False
        self._calls = 0  # requests so far: a release stops the process only if none came after it

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def use_threads(self, threads: int) -> None:
        """Start the JVM with ``threads`` scorer threads from its next start on (a server sets this before anything
        is scored, so its JVM's first start has it; a JVM already running keeps its own)."""
        with self.lock:
            self.threads = max(1, int(threads))

    def command(self) -> list[str]:
        """The JVM's command line: the driver compiled once (:func:`compiled_driver`), else its source in a
        folder of this process's, for Java's source launcher."""
        # nice(1) lowers the priority before it execs java, so every thread of the JVM has it (there is no
        # fork-safe way to do that from Python in a threaded server, and Windows has no nice).
        nice = ["nice", "-n", str(NICENESS)] if shutil.which("nice") else []
        compiled = compiled_driver()
        if compiled is not None:
            driver = ["-cp", os.pathsep.join([str(jar_path()), str(compiled)]), "MeteorBatch"]
        else:
            self._source_dir = tempfile.TemporaryDirectory(prefix="muttlab-meteor-")
            source = Path(self._source_dir.name) / "MeteorBatch.java"
            source.write_text(DRIVER_SOURCE, encoding="utf-8")
            driver = ["-cp", str(jar_path()), str(source)]
        return nice + ["java", "-Xmx2G", *driver, str(self.threads), "-l", "en", "-norm"]

    def _start(self) -> None:
        if shutil.which("java") is None:
            raise MetricUnavailable(f"METEOR-1.5 needs Java, but `java` was not found: {JAVA_HINT}")
        jar = jar_path()
        self._lines = queue.Queue()
        self._stderr.clear()
        # cwd: the jar finds data/paraphrase-en.gz relative to itself, as pycocoevalcap runs it. The pipes are
        # buffered: readline on an unbuffered pipe reads one byte per system call, and the reader thread then
        # took the server's interpreter lock once per byte of every answer (requests are flushed as written).
        self._proc = subprocess.Popen(self.command(), cwd=jar.parent, stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        threading.Thread(target=self._drain, args=(self._proc.stdout, self._lines), daemon=True).start()
        threading.Thread(target=self._drain_err, args=(self._proc.stderr,), daemon=True).start()
        self._fresh = True

    @staticmethod
    def _drain(stream, lines: queue.Queue) -> None:
        """Hand the answers over as they come, a block of lines at a time (whatever one read of the pipe holds:
        the driver writes a request's answers at once). One line at a time, a study's 250,000 answers were as
        many hand-overs between this thread and the caller's, each taking the interpreter's lock: in a server,
        each could wait a switch interval behind the visitors' page runs."""
        rest = b""
        for block in iter(lambda: stream.read1(1 << 16), b""):
            *complete, rest = (rest + block).split(b"\n")
            if complete:
                lines.put([raw.decode("utf-8", "replace").strip() for raw in complete])
        if rest:
            lines.put([rest.decode("utf-8", "replace").strip()])
        lines.put(_EOF)

    def _drain_err(self, stream) -> None:
        for raw in iter(stream.readline, b""):
            self._stderr.append(raw.decode("utf-8", "replace").rstrip())

    def _read(self, n: int) -> list[str]:
        out = []
        while len(out) < n:
            wait = self.startup_timeout if self._fresh else self.timeout
            try:
                block = self._lines.get(timeout=wait)
            except queue.Empty:
                raise TimeoutError(f"no answer from the METEOR process within {wait:.0f} s") from None
            if block is _EOF:
                raise BrokenPipeError("the METEOR process exited")
            self._fresh = False
            out += block
        if len(out) > n:  # the driver answers each request whole: more lines than asked means out of step
            raise BrokenPipeError(f"the METEOR process gave {len(out)} answers to {n} requests")
        return out

    def _request(self, header: str, lines: list[str]) -> list[str]:
        self._proc.stdin.write((f"{header}\n" + "".join(f"{line}\n" for line in lines)).encode("utf-8"))
        self._proc.stdin.flush()
        return self._read(len(lines))

    def _call(self, header: str, lines: Sequence[str],
              answered: Callable[[int], None] | None = None) -> list[str]:
        """Answers to ``header`` requests over ``lines`` in chunks; restarts the process and retries once.
        ``answered(n)`` is told the number of lines answered after each chunk."""
        with self.lock:
            self._calls += 1
            for attempt in (1, 2):
                try:
                    if not self.running:
                        self._stop()
                        self._start()
                    out: list[str] = []
                    for i in range(0, len(lines), CHUNK):
                        chunk = list(lines[i:i + CHUNK])
                        out += self._request(header.format(n=len(chunk)), chunk)
                        if answered is not None:
                            answered(len(out))
                    return out
                except (BrokenPipeError, TimeoutError, OSError) as exc:
                    detail = f"{exc}; Java said: {' | '.join(self._stderr) or '(nothing)'}"
                    self._stop()
                    if attempt == 2:
                        raise MetricError(f"METEOR-1.5 failed twice ({detail}); check Java (11 or newer) and "
                                          "memory (the jar runs with -Xmx2G)") from exc
        raise AssertionError("unreachable")

    def align(self, hyps: Sequence[str], refs: Sequence[str],
              answered: Callable[[int], None] | None = None) -> list[str]:
        """Meteor's sufficient statistics of each (hypothesis, reference) pair (cleaned text); ``answered(n)``
        after each chunk of pairs aligned."""
        return self._call("ALIGN {n}", [f"{r} ||| {h}" for h, r in zip(hyps, refs)], answered)

    def evaluate(self, stats: Sequence[str], params: str) -> list[float]:
        """Scores of statistics from :meth:`align` under ``params``: ``default`` or ``"alpha beta gamma delta"``."""
        try:
            return [float(a) for a in self._call(f"EVAL {{n}} {params}", stats)]
        except ValueError as exc:
            raise MetricError(f"METEOR-1.5 answered something that is not a score ({exc})") from None

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                proc.stdin.close()
            except OSError:
                pass
            proc.kill()
            proc.wait(timeout=10)
        if self._source_dir is not None:
            self._source_dir.cleanup()
            self._source_dir = None

    def close(self) -> None:
        """Stop the process now."""
        with self.lock:
            self._stop()

    def release(self, linger: float | None = None) -> None:
        """Nothing needs the process now: it stops once it has gone ``linger`` seconds (:data:`LINGER_S`)
        without a request."""
        linger = LINGER_S if linger is None else linger
        with self.lock:
            if not self.running:
                self._stop()
                return
            calls = self._calls
        timer = threading.Timer(linger, self._stop_unless_called, args=(calls,))
        timer.daemon = True
        timer.start()

    def _stop_unless_called(self, calls: int) -> None:
        with self.lock:
            if self._calls == calls:
                self._stop()

    def forget_in_child(self) -> None:
        """In a forked child: this process's JVM is the parent's (its pipes' readers did not come along), so the
        child lets go of it without stopping it and starts its own if it needs one."""
        self.lock = threading.Lock()
        self._proc, self._source_dir, self._lines = None, None, queue.Queue()

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid


_PROCESS = MeteorProcess()
os.register_at_fork(after_in_child=_PROCESS.forget_in_child)
_MEMO_LOCK = threading.Lock()
# Statistics by (hypothesis, reference), shared by every parameter setting; scores by setting, then pair.
_STATS: dict[tuple[str, str], str] = {}
_SCORES: dict[str, dict[tuple[str, str], float]] = {}
_MEMO_LIMIT = 1_000_000


def process() -> MeteorProcess:
    """The one METEOR process of this Python process (created, not started)."""
    return _PROCESS


def clear_memo() -> None:
    """Forget remembered statistics and scores (the next score asks the process again)."""
    with _MEMO_LOCK:
        _STATS.clear()
        _SCORES.clear()


@atexit.register
def shutdown_all() -> None:
    """Stop the METEOR process of this Python process."""
    _PROCESS.close()


def _remember(memo: dict, items: dict) -> None:
    if len(memo) + len(items) > _MEMO_LIMIT:
        memo.clear()
    memo.update(items)


def align_pairs(hyps: Sequence[str], refs: Sequence[str],
                progress: Callable[[int, int], None] | None = None) -> dict[tuple[str, str], str]:
    """Meteor's statistics of each distinct (hypothesis, reference) pair of cleaned, PTB-tokenised text,
    aligned by the process unless already remembered. ``progress(pairs aligned, pairs to align + 1)`` after
    each of the process's answers (the last part, scoring the statistics, is the caller's)."""
    pairs = list(dict.fromkeys(zip(hyps, refs)))
    with _MEMO_LOCK:
        stats = {p: _STATS[p] for p in pairs if p in _STATS}
    unaligned = [p for p in pairs if p not in stats]
    if unaligned:
        answered = None if progress is None else (lambda n: progress(n, len(unaligned) + 1))
        aligned = dict(zip(unaligned, _PROCESS.align([h for h, _ in unaligned], [r for _, r in unaligned],
                                                     answered)))
        stats.update(aligned)
        with _MEMO_LOCK:
            _remember(_STATS, aligned)
    return stats


def pair_scores(hyps: Sequence[str], refs: Sequence[str], params: str = "default",
                progress: Callable[[int, int], None] | None = None) -> list[float]:
    """METEOR of each (hypothesis, reference) pair of cleaned, PTB-tokenised text under ``params``
    (``default`` or ``"alpha beta gamma delta"``): each distinct pair is aligned once per process, whatever
    the setting, and each (setting, pair) evaluated once. ``progress`` as :func:`align_pairs` tells it, then
    ``(1, 1)`` when every score is in."""
    pairs = list(zip(hyps, refs))
    with _MEMO_LOCK:
        memo = _SCORES.setdefault(params, {})
        have = {p: memo[p] for p in pairs if p in memo}
    todo = list(dict.fromkeys(p for p in pairs if p not in have))
    if todo:
        stats = align_pairs([h for h, _ in todo], [r for _, r in todo], progress)
        scored = dict(zip(todo, _PROCESS.evaluate([stats[p] for p in todo], params)))
        have.update(scored)
        with _MEMO_LOCK:
            _remember(_SCORES.setdefault(params, {}), scored)
    if progress is not None:
        progress(1, 1)
    return [have[p] for p in pairs]

class Meteor(Metric):
    """METEOR 1.5 per sentence, through the official jar, on PTB-tokenised text (coco-caption's pipeline).

    Args:
      alpha, beta, gamma, delta: Meteor's parameters (Denkowski & Lavie 2014, §2); None keeps the jar's
        English defaults. Any other setting scores the same alignments with its own α, β, γ, δ and the
        English module weights (what the jar computes when given ``-p`` and ``-w`` with those weights); all
        settings share the one process.
      timeout: seconds to wait for each answer of a running process (the first answer after a start may
        take up to 300 s: the JVM loads the paraphrase table).
    """

    name = "METEOR-1.5"
    score_range = (0.0, 1.0)
    languages = ("en",)  # English resources (see muttlab.metrics.base.Metric.languages)
    language_reason = "METEOR 1.5 is run with its English stemmer, WordNet synonyms and paraphrase table"
    version = "1"
    higher_is_better = True
    requires = ("java",)
    parallel: ClassVar[bool] = False  # one JVM per Python process, already using every core
    description = "METEOR 1.5 (Denkowski & Lavie 2014): the official jar, -l en -norm, PTB-tokenised input"
    reports_progress = True  # a batch is aligned by the JVM in chunks of CHUNK pairs; each answer is reported

    def __init__(self, alpha: float | None = None, beta: float | None = None, gamma: float | None = None,
                 delta: float | None = None, timeout: float = 60.0):
        self.alpha, self.beta, self.gamma, self.delta = alpha, beta, gamma, delta
        self.timeout = float(timeout)

    def params(self) -> dict[str, object]:
        values = self._custom()
        out: dict[str, object] = {"lang": "en", "norm": "yes", "tok": "ptb"}
        if values:
            out.update({k: f"{v:g}" for k, v in values.items()})
        return out

    def _custom(self) -> dict[str, float] | None:
        given = {"alpha": self.alpha, "beta": self.beta, "gamma": self.gamma, "delta": self.delta}
        if all(v is None for v in given.values()):
            return None
        values = {k: float(ENGLISH_DEFAULTS[k] if v is None else v) for k, v in given.items()}
        # The defaults spelled out are the default setting (same numbers).
        return None if values == ENGLISH_DEFAULTS else values

    def setting(self) -> str:
        """The parameters as the process takes them: ``default`` or α β γ δ as the signature shows them."""
        values = self._custom()
        if values is None:
            return "default"
        return " ".join(f"{values[k]:g}" for k in ("alpha", "beta", "gamma", "delta"))

    def check_available(self) -> None:
        if shutil.which("java") is None:
            raise MetricUnavailable(f"METEOR-1.5 needs Java, but `java` was not found: {JAVA_HINT}")
        jar_path()

    @property
    def process(self) -> MeteorProcess:
        _PROCESS.timeout = self.timeout
        return _PROCESS

    @staticmethod
    def _text(candidates: Sequence[str], references: Sequence[Sequence[str]]) -> tuple[list[str], list[list[str]]]:
        """The text the jar sees: PTB-tokenised as coco-caption does it, then cleaned for the protocol."""
        from muttlab.metrics.tokenize import ptb_tokenize
        return ([_clean(ptb_tokenize(c)) for c in candidates],
                [[_clean(ptb_tokenize(r)) for r in rs] for rs in references])

    def align(self, candidates: Sequence[str], references: Sequence[str]) -> None:
        """Align each (candidate, reference) pair now, for any setting to score later without the JVM's
        alignment cost (ML-METEOR starts this while spaCy parses)."""
        hyps, refs = self._text(candidates, [[r] for r in references])
        _ = self.process
        align_pairs(hyps, [r for (r,) in refs])

    def prepare(self) -> None:
        # One pair aligned: the JVM starts and reads its paraphrase table before its first answer (10-30 s).
        self.align(["a man rides a horse"], ["a man rides a horse"])

    def _score(self, candidates: list[str], references: list[list[str]],
               progress: Callable[[int, int], None] | None = None) -> np.ndarray:
        hyps, refs = self._text(candidates, references)
        # The jar scores a segment against several references by keeping the best-scoring one, so the score
        # is the max of single-reference scores (the tests check it against pycocoevalcap's multi-reference
        # call), computed from pairs the process aligned once.
        _ = self.process
        flat = pair_scores([h for h, rs in zip(hyps, refs) for _ in rs], [r for rs in refs for r in rs],
                           self.setting(), progress)
        out, start = np.empty(len(hyps), dtype=np.float64), 0
        for i, rs in enumerate(refs):
            out[i] = max(flat[start:start + len(rs)])
            start += len(rs)
        return out

    def close(self) -> None:
        _PROCESS.release()

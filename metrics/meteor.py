"""METEOR 1.5 (Denkowski & Lavie, WMT 2014) through the official jar shipped in ``pycocoevalcap``.

The jar runs as ONE long-lived Java process per parameter setting and Python process, started on the first
score and shared by every :class:`Meteor` instance with the same parameters (the JVM start and the loading of
the paraphrase table take 10-30 s and about 1-2 GB, so starting one per call, as a naive wrapper would, is the
cost to avoid). The command line is pycocoevalcap's (``-stdio -l en -norm``, ``-Xmx2G``); the protocol is the
jar's ``-stdio`` mode: one ``SCORE ||| ref1 ||| ... ||| hyp`` line per segment returns its sufficient
statistics, then ``EVAL ||| stats1 ||| stats2 ...`` returns one score per segment and the aggregate. Requests
are pipelined (all SCORE lines of a chunk are written before the answers are read; a reader thread drains the
jar's output so the pipes never fill), each (candidate, reference) pair is aligned once per process and
remembered (a multi-reference score is the best single-reference score), and one lock per process makes concurrent callers (dashboard users)
take turns. Every read has a timeout; when the process dies or stops answering it is killed, restarted and the
batch retried once. Processes are shut down by :meth:`Meteor.close`, :func:`shutdown_all` or at exit.

Input text is PTB-tokenised as coco-caption does before it calls METEOR (:func:`muttlab.metrics.tokenize.ptb_tokenize`),
so the scores are those of the MUTT study's coco-caption pipeline; the tests compare them with pycocoevalcap's
own ``Meteor`` wrapper on MUTT trials.
"""
from __future__ import annotations

import atexit
import collections
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import ClassVar, Sequence

import numpy as np

from muttlab.metrics.base import Metric, MetricError, MetricUnavailable

JAVA_HINT = "install a Java runtime, e.g. `apt-get install default-jre-headless`, and make sure `java` is on PATH"
# Meteor 1.5's English defaults (task "rank"; Denkowski & Lavie 2014, Table 1): alpha, beta, gamma, delta.
ENGLISH_DEFAULTS = {"alpha": 0.85, "beta": 0.2, "gamma": 0.6, "delta": 0.75}
# The module weights (exact stem synonym paraphrase) of that task. The jar switches to a "custom" task when
# given -p and then uses other weights (1.0 1.0 0.6 0.8), so they are passed explicitly with -w.
ENGLISH_WEIGHTS = "1.0 0.6 0.8 0.6"
CHUNK = 1000
_EOF = object()


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
    # '|||' separates fields and a newline ends a request in the jar's stdio protocol; the hypothesis is
    # cleaned exactly as pycocoevalcap's wrapper does it.
    return " ".join(text.replace("|||", "").split())


class MeteorProcess:
    """One running ``meteor-1.5.jar -stdio`` process; thread-safe, restarted when it dies."""

    def __init__(self, extra_args: tuple[str, ...] = (), timeout: float = 60.0, startup_timeout: float = 300.0):
        self.extra_args = tuple(extra_args)
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._lines: queue.Queue = queue.Queue()
        self._stderr: collections.deque = collections.deque(maxlen=20)
        self._fresh = False
        self.last_used = 0.0

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    @property
    def command(self) -> list[str]:
        return ["java", "-jar", "-Xmx2G", str(jar_path()), "-", "-", "-stdio", "-l", "en", "-norm", *self.extra_args]

    def _start(self) -> None:
        if shutil.which("java") is None:
            raise MetricUnavailable(f"METEOR-1.5 needs Java, but `java` was not found: {JAVA_HINT}")
        jar = jar_path()
        self._lines = queue.Queue()
        self._stderr.clear()
        # cwd: the jar finds data/paraphrase-en.gz relative to itself, as pycocoevalcap runs it.
        self._proc = subprocess.Popen(self.command, cwd=jar.parent, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, bufsize=0)
        threading.Thread(target=self._drain, args=(self._proc.stdout, self._lines), daemon=True).start()
        threading.Thread(target=self._drain_err, args=(self._proc.stderr,), daemon=True).start()
        self._fresh = True

    @staticmethod
    def _drain(stream, lines: queue.Queue) -> None:
        for raw in iter(stream.readline, b""):
            lines.put(raw.decode("utf-8", "replace").strip())
        lines.put(_EOF)

    def _drain_err(self, stream) -> None:
        for raw in iter(stream.readline, b""):
            self._stderr.append(raw.decode("utf-8", "replace").rstrip())

    def _read(self, n: int) -> list[str]:
        out = []
        for _ in range(n):
            wait = self.startup_timeout if self._fresh else self.timeout
            try:
                line = self._lines.get(timeout=wait)
            except queue.Empty:
                raise TimeoutError(f"no answer from the METEOR process within {wait:.0f} s") from None
            if line is _EOF:
                raise BrokenPipeError("the METEOR process exited")
            self._fresh = False
            out.append(line)
        return out

    def _write(self, lines: list[str]) -> None:
        self._proc.stdin.write(("\n".join(lines) + "\n").encode("utf-8"))
        self._proc.stdin.flush()

    def _score_chunk(self, hyps: list[str], refs: list[list[str]]) -> list[float]:
        self._write([" ||| ".join(["SCORE", *(_clean(r) for r in rs), _clean(h)]) for h, rs in zip(hyps, refs)])
        stats = self._read(len(hyps))
        self._write(["EVAL ||| " + " ||| ".join(stats)])
        answers = self._read(len(hyps) + 1)
        return [float(a) for a in answers[:-1]]

    def score(self, hyps: Sequence[str], refs: Sequence[Sequence[str]]) -> list[float]:
        """Per-segment METEOR scores; restarts the process and retries once if it dies or hangs."""
        with self.lock:
            self.last_used = time.monotonic()
            for attempt in (1, 2):
                try:
                    if self._proc is None or self._proc.poll() is not None:
                        _make_room(self)
                        self._start()
                    scores: list[float] = []
                    for i in range(0, len(hyps), CHUNK):
                        scores += self._score_chunk(list(hyps[i:i + CHUNK]), [list(r) for r in refs[i:i + CHUNK]])
                    return scores
                except (BrokenPipeError, TimeoutError, OSError, ValueError) as exc:
                    detail = f"{exc}; Java said: {' | '.join(self._stderr) or '(nothing)'}"
                    self._stop()
                    if attempt == 2:
                        raise MetricError(f"METEOR-1.5 failed twice ({detail}); check Java and memory "
                                          "(the jar runs with -Xmx2G)") from exc
        raise AssertionError("unreachable")

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            proc.stdin.close()
        except OSError:
            pass
        proc.kill()
        proc.wait(timeout=10)

    def close(self) -> None:
        with self.lock:
            self._stop()

    @property
    def pid(self) -> int | None:
        return None if self._proc is None else self._proc.pid


_PROCESSES: dict[tuple[str, ...], MeteorProcess] = {}
_PROCESSES_LOCK = threading.Lock()
_PAIR_MEMOS: dict[tuple[str, ...], dict[tuple[str, str], float]] = {}
_MEMO_LIMIT = 2_000_000


# JVMs running at once in this process. Each holds the paraphrase table (1-2 GB); METEOR and ML-METEOR's
# per-level parameter sets (and every dashboard session) draw from this one pool: starting a process for a
# new parameter set stops the least recently used idle one. Scores already computed stay in the pair memo.
MAX_RUNNING = 2


def _make_room(starting: MeteorProcess) -> None:
    """Stop least recently used idle processes until ``starting`` fits under :data:`MAX_RUNNING`."""
    with _PROCESSES_LOCK:
        running = sorted((p for p in _PROCESSES.values() if p is not starting and p.running),
                         key=lambda p: p.last_used)
    while running and len(running) >= MAX_RUNNING:
        victim = running.pop(0)
        if victim.lock.acquire(blocking=False):  # a busy process is left alone
            try:
                victim._stop()
            finally:
                victim.lock.release()


def _pair_memo(extra_args: tuple[str, ...]) -> dict[tuple[str, str], float]:
    """Single-reference scores already computed with these parameters, by (hypothesis, reference)."""
    with _PROCESSES_LOCK:
        return _PAIR_MEMOS.setdefault(extra_args, {})


def process_for(extra_args: tuple[str, ...]) -> MeteorProcess:
    """The shared process for these command-line parameters (created, not started, on first use)."""
    with _PROCESSES_LOCK:
        if extra_args not in _PROCESSES:
            _PROCESSES[extra_args] = MeteorProcess(extra_args)
        return _PROCESSES[extra_args]


@atexit.register
def shutdown_all() -> None:
    """Stop every METEOR process of this Python process."""
    with _PROCESSES_LOCK:
        processes = list(_PROCESSES.values())
    for proc in processes:
        proc.close()


class Meteor(Metric):
    """METEOR 1.5 per sentence, through the official jar, on PTB-tokenised text (coco-caption's pipeline).

    Args:
      alpha, beta, gamma, delta: Meteor's parameters (Denkowski & Lavie 2014, §2); None keeps the jar's
        English defaults. When any is given, all four are passed with ``-p`` (the missing ones at their
        defaults, and the English module weights with ``-w``), and that setting gets its own shared process
        (each one a JVM holding the paraphrase table: about 1-2 GB).
      timeout: seconds to wait for each answer of a running process (the first answer after a start may
        take up to 300 s: the JVM loads the paraphrase table).
    """

    name = "METEOR-1.5"
    score_range = (0.0, 1.0)
    languages = ("en",)  # English resources (see muttlab.metrics.base.Metric.languages)
    version = "1"
    higher_is_better = True
    requires = ("java",)
    parallel: ClassVar[bool] = False
    description = "METEOR 1.5 (Denkowski & Lavie 2014): the official jar, -l en -norm, PTB-tokenised input"

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
        # The defaults spelled out are the default process (same numbers, no second JVM).
        return None if values == ENGLISH_DEFAULTS else values

    def _args(self) -> tuple[str, ...]:
        values = self._custom()
        if values is None:
            return ()
        return ("-p", " ".join(f"{values[k]:g}" for k in ("alpha", "beta", "gamma", "delta")),
                "-w", ENGLISH_WEIGHTS)

    def check_available(self) -> None:
        if shutil.which("java") is None:
            raise MetricUnavailable(f"METEOR-1.5 needs Java, but `java` was not found: {JAVA_HINT}")
        jar_path()

    @property
    def process(self) -> MeteorProcess:
        proc = process_for(self._args())
        proc.timeout = self.timeout
        return proc

    def _score(self, candidates: list[str], references: list[list[str]]) -> np.ndarray:
        from muttlab.metrics.tokenize import ptb_tokenize
        hyps = [_clean(ptb_tokenize(c)) for c in candidates]
        refs = [[_clean(ptb_tokenize(r)) for r in rs] for rs in references]
        # The jar scores a segment against several references by keeping the best-scoring one, so the score
        # is the max of single-reference scores (the tests check it against pycocoevalcap's multi-reference
        # call). Each (candidate, reference) pair is therefore aligned once and remembered: the 5-, 10- and
        # 20-reference grids of a trial share their alignments, and reruns cost nothing.
        memo = _pair_memo(self._args())
        todo = list(dict.fromkeys((h, r) for h, rs in zip(hyps, refs) for r in rs if (h, r) not in memo))
        if todo:
            scores = self.process.score([h for h, _ in todo], [[r] for _, r in todo])
            if len(memo) + len(todo) > _MEMO_LIMIT:
                memo.clear()
            memo.update(zip(todo, scores))
        return np.array([max(memo[h, r] for r in rs) for h, rs in zip(hyps, refs)], dtype=np.float64)

    def close(self) -> None:
        with _PROCESSES_LOCK:
            proc = _PROCESSES.get(self._args())
        if proc is not None:
            proc.close()

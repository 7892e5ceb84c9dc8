"""A run's progress as the engine reports it: per metric, *loading* (building the metric: a model, a JVM)
then *scoring*, n of N items, with an estimate of the time left once the metric's throughput has been measured.

It speaks through the engine's ``progress(step, total, message)`` callback, ``step``/``total`` counting items
over the whole run (every metric scores the same items), so a bar moves with the work. The scorer reports
once per piece it scores (a grid cell, a worker's job) and, for a metric that reports within a call (the
neural encoders' passes, METEOR's JVM batches: :attr:`muttlab.metrics.base.Metric.reports_progress`), as the
piece's parts finish (:meth:`RunProgress.partial`), never per item: the run's hot path stays a loop over arrays.

The estimate is the work left times the seconds per unit of work measured on this metric over the later half of
the time since its first report (work: candidate-reference pairs, as a candidate's cost grows with its
references; the count shown is items): the time before that report (a JVM starting, a model loading, a first cell) is not
counted, a metric that speeds up as it goes is measured at its current pace, and nothing is guessed. It covers the metric being scored: a later metric's pace is unknown until it runs (METEOR is a
hundred times slower than BLEU), so while one is to come the estimate says it is this metric's.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, Sequence

ProgressFn = Callable[[int, int, str], None]

# Seconds of measured scoring before an estimate is shown: a shorter span is mostly noise.
MIN_MEASURED_S = 2.0
# The most often a part's report redraws the bar (a report per piece is always drawn).
EVERY_S = 0.5


_CALL = threading.local()


@contextmanager
def _in_this_thread(name: str, value) -> Iterator[None]:
    """``name`` set to ``value`` for this thread within the block (nested blocks restore the outer value)."""
    outer = getattr(_CALL, name, None)
    setattr(_CALL, name, value)
    try:
        yield
    finally:
        setattr(_CALL, name, outer)


def metric_call():
    """Marks this thread as inside a metric's scoring call: a report made there (a part of the call done) may
    stop the job (:func:`muttlab.engine.queue.checkpoint`) but lets no other job use the metric objects, which
    the call is using (METEOR's pipe is held, a model is half-way through its passes)."""
    return _in_this_thread("inside", True)


def in_metric_call() -> bool:
    """Whether this thread is inside :func:`metric_call`."""
    return bool(getattr(_CALL, "inside", None))


def in_pieces(seconds: float | None, between: Callable[[], None]):
    """Within the block, in this thread, a metric that scores each item on its own (not
    :attr:`~muttlab.metrics.base.Metric.corpus_dependent`) scores a job in pieces of about ``seconds`` each (the
    runner sizes each piece by the pace of the one before), and ``between()`` runs between two of them, outside
    the metric's call (``seconds=None``: whole jobs). The scoring queue gives its big jobs a ``between`` that lets
    the small jobs waiting use the metric objects: a Playground answer that needs METEOR waits for one piece of a
    study's METEOR call, not for the whole call."""
    return _in_this_thread("pieces", None if seconds is None else (float(seconds), between))


def pieces() -> tuple[float, Callable[[], None]] | None:
    """The enclosing :func:`in_pieces`' (seconds, between) in this thread, or None: jobs are scored whole."""
    return getattr(_CALL, "pieces", None)


def between_pieces() -> Callable[[], None]:
    """The enclosing :func:`in_pieces`' ``between`` (a no-op outside one), for long work outside a metric's call
    that runs in blocks (a study's bootstrap) to call between two of them: the queue's small jobs pass there
    too."""
    plan = pieces()
    return plan[1] if plan is not None else (lambda: None)


def items_reported_to(report: ProgressFn):
    """Within the block, in this thread, every scoring of one metric through
    :func:`muttlab.engine.runner.score_batches` (a study's, a severity curve's) reports its items to ``report``
    as ``(items done, items, "n of N items · time left")``: a caller that draws a study's own steps ("BLEU-4 on
    expert, 2 of 6") shows the items within each step too, and no study has to pass a callback down."""
    return _in_this_thread("items", report)


def items_report() -> ProgressFn | None:
    """The ``report`` of the enclosing :func:`items_reported_to` in this thread, or None."""
    return getattr(_CALL, "items", None)


def duration_text(seconds: float) -> str:
    """``about 40 s`` / ``about 90 s`` / ``about 4 min``: an estimate, rounded as one. Under 3 minutes it stays in
    seconds (tens from a minute on): "about 2 min" for 90 s would overstate it by a third."""
    if seconds < 60:
        return f"about {max(1, round(seconds))} s"
    if seconds < 180:
        return f"about {round(seconds, -1):.0f} s"
    return f"about {round(seconds / 60)} min"


class RunProgress:
    """The phases of one run of ``metrics`` over ``items`` items per metric, reported to ``report``.

    ``items`` may instead give each step its own count (a study scores each metric on data sets of different
    sizes): ``metrics`` then names the steps, :meth:`begin` starts one, and ``unit`` says what they are. With
    ``named`` False a message is only the counts and the time left (the caller names the step)."""

    def __init__(self, report: ProgressFn, metrics: Sequence[str], items: int | Sequence[int],
                 clock: Callable[[], float] = time.perf_counter, unit: str = "metrics", named: bool = True):
        self.report = report
        self.named = named
        self.metrics = list(metrics)
        self.sizes = [items] * len(self.metrics) if isinstance(items, int) else [int(n) for n in items]
        self.unit = unit
        self.clock = clock
        self.index = 0  # the metric being loaded or scored
        self.done = 0  # its items scored or found in the cache
        self.inside = 0  # items of the pieces being scored that their metric has reported done
        # The same in candidate-reference pairs, the unit of the pace (a candidate's cost grows with its
        # references); a scorer that does not tell them counts an item as the metric's mean pairs per item.
        self.work, self.work_done, self.work_inside = 0.0, 0.0, 0.0
        self._seen: list[tuple[float, int]] = []  # (time, items done) at each of the metric's reports
        self._drawn = float("-inf")

    @property
    def items(self) -> int:
        """The items of the step being scored."""
        return self.sizes[self.index] if self.sizes else 0

    @property
    def total(self) -> int:
        """The items of every step."""
        return sum(self.sizes)

    def _of_metrics(self) -> str:
        return f"{self.index + 1} of {len(self.metrics)} {self.unit}"

    def begin(self, index: int) -> None:
        """Step ``index`` is next (a step named otherwise than the metric that :meth:`planned` names)."""
        self.index = index

    def loading(self, index: int) -> None:
        """Metric ``index`` is being built (its model loaded, its JVM started); every metric is built before
        the first is scored."""
        self.index = index
        self._loading(0)

    def _loading(self, step: int) -> None:
        name = self.metrics[self.index]
        self.report(step, self.total, f"loading {name} ({self._of_metrics()})" if self.named else f"loading {name}")

    def loading_named(self, name: str) -> None:
        """Metric ``name`` is being prepared before its first piece (its model read, its JVM started); the bar
        stays where the metrics before it left it."""
        if name in self.metrics:
            self.index = self.metrics.index(name)
        self._loading(sum(self.sizes[:self.index]))

    def planned(self, name: str, cached: int, work: float | None = None, cached_work: float | None = None) -> None:
        """Metric ``name`` starts scoring; the cache has ``cached`` of its items already (``work``: the pairs of
        all its items, ``cached_work`` those of the cached ones)."""
        if name in self.metrics:
            self.index = self.metrics.index(name)
        self.done, self.inside = cached, 0
        self.work = float(self.items if work is None else work)
        self.work_done, self.work_inside = float(cached if cached_work is None else cached_work), 0.0
        self._seen = []
        self._emit()

    def _pairs(self, n: int, work: float | None) -> float:
        return n * self.work / self.items if work is None and self.items else float(work or 0)

    def scored(self, n: int, work: float | None = None) -> None:
        """A piece of ``n`` items (``work`` pairs) has been scored. What the pieces being scored had reported
        done loses this piece's share only: another piece still under way (the queue runs the next while this
        one is collected) keeps its count, so the count never steps back and the pace sees no stall."""
        if not n:
            return
        pairs = self._pairs(n, work)
        self.done = min(self.items, self.done + n)
        self.work_done = min(self.work, self.work_done + pairs)
        self.inside = max(0, min(self.inside - n, self.items - self.done))
        self.work_inside = max(0.0, min(self.work_inside - pairs, self.work - self.work_done))
        self._observe()
        self._emit()

    def partial(self, n: int, work: float | None = None) -> None:
        """The pieces being scored have ``n`` of their items (``work`` pairs) done (a metric's report within a
        call, or a poll of the queue while it scores): drawn at most every :data:`EVERY_S`, so the estimate
        counts down too."""
        if n != self.inside or (work is not None and work != self.work_inside):
            self.inside = max(0, min(n, self.items - self.done))
            self.work_inside = max(0.0, min(self._pairs(n, work), self.work - self.work_done))
            self._observe()
        if self.clock() - self._drawn >= EVERY_S:
            self._emit()

    def _observe(self) -> None:
        self._seen.append((self.clock(), self.work_done + self.work_inside))

    def _pace(self) -> float | None:
        """Seconds per pair: the faster of the pace since the metric's first report and the pace over the later
        half of that time (at least :data:`MIN_MEASURED_S`). A metric speeds up as it goes (METEOR's and the
        encoders' memos: the 10 references of a trial hold its 5), so the early pieces alone would overstate what
        is left; a stall of the latest seconds alone (the queue serving another visitor, a busy machine) would
        too."""
        if len(self._seen) < 2:
            return None
        (first, first_count), (last, count) = self._seen[0], self._seen[-1]
        if last - first < MIN_MEASURED_S or count <= first_count:
            return None
        since = last - max(MIN_MEASURED_S, (last - first) / 2)
        start, start_count = max((p for p in self._seen if p[0] <= since), key=lambda p: p[0])
        overall = (last - first) / (count - first_count)
        return min(overall, (last - start) / (count - start_count)) if count > start_count else overall

    def left_s(self) -> float | None:
        """Seconds left of the metric being scored: its items left at the measured pace (:meth:`_pace`), less the
        time since its latest report; None until :data:`MIN_MEASURED_S` of scoring has been measured."""
        pace = self._pace()
        if pace is None:
            return None
        left = (self.work - self.work_done - self.work_inside) * pace
        return max(0.0, left - (self.clock() - self._seen[-1][0]))

    def _emit(self) -> None:
        self._drawn = self.clock()
        count = self.done + self.inside
        text = f"{count:,} of {self.items:,} items"
        if self.named:
            text = f"scoring {self.metrics[self.index]} ({self._of_metrics()}): {text}"
        left = self.left_s()
        if left is not None and left >= 0.5:
            later = len(self.metrics) - self.index - 1
            text += f" · {duration_text(left)} left" + (" for this metric" if later else "")
        self.report(sum(self.sizes[:self.index]) + count, self.total, text)

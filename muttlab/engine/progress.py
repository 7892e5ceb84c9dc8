"""A run's progress as the engine reports it: per metric, *loading* (building the metric: a model, a JVM)
then *scoring*, n of N items, with an estimate of the time left once the metric's throughput has been measured.

It speaks through the engine's ``progress(step, total, message)`` callback, ``step``/``total`` counting items
over the whole run (every metric scores the same items), so a bar moves with the work. The scorer reports
once per piece it scores (a grid cell, a worker's job) and, for a metric that reports within a call (the
neural encoders' passes, METEOR's JVM batches: :attr:`muttlab.metrics.base.Metric.reports_progress`), as the
piece's parts finish (:meth:`RunProgress.partial`), never per item: the run's hot path stays a loop over arrays.

The estimate is the items left times the seconds per item measured on this metric since its first report:
the time before that report (a JVM starting, a model loading, a first cell) is not counted, and nothing is
guessed. It covers the metric being scored: a later metric's pace is unknown until it runs (METEOR is a
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
    """``about 40 s`` / ``about 3 min``: an estimate, rounded as one."""
    if seconds < 60:
        return f"about {max(1, round(seconds))} s"
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
        self._first: tuple[float, int] | None = None  # (time, items) at the metric's first report
        self._last: tuple[float, int] | None = None  # and at its latest
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
        self.report(0, self.total, f"loading {self.metrics[index]} ({self._of_metrics()})")

    def planned(self, name: str, cached: int) -> None:
        """Metric ``name`` starts scoring; the cache has ``cached`` of its items already."""
        if name in self.metrics:
            self.index = self.metrics.index(name)
        self.done, self.inside = cached, 0
        self._first = self._last = None
        self._emit()

    def scored(self, n: int) -> None:
        """A piece of ``n`` items has been scored."""
        if not n:
            return
        self.done = min(self.items, self.done + n)
        self.inside = 0
        self._observe()
        self._emit()

    def partial(self, n: int) -> None:
        """The pieces being scored have ``n`` of their items done (a metric's report within a call, or a poll
        of the queue while it scores): drawn at most every :data:`EVERY_S`, so the estimate counts down too."""
        if n != self.inside:
            self.inside = max(0, min(n, self.items - self.done))
            self._observe()
        if self.clock() - self._drawn >= EVERY_S:
            self._emit()

    def _observe(self) -> None:
        point = (self.clock(), self.done + self.inside)
        if self._first is None:
            self._first = point
        else:
            self._last = point

    def left_s(self) -> float | None:
        """Seconds left of the metric being scored: its items left at the pace measured since its first report,
        less the time since the latest; None until :data:`MIN_MEASURED_S` of scoring has been measured."""
        if self._first is None or self._last is None:
            return None
        seconds, counted = self._last[0] - self._first[0], self._last[1] - self._first[1]
        if seconds < MIN_MEASURED_S or counted <= 0:
            return None
        left = (self.items - self.done - self.inside) * seconds / counted
        return max(0.0, left - (self.clock() - self._last[0]))

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

"""A run's progress as the engine reports it: per metric, *loading* (building the metric: a model, a JVM)
then *scoring*, n of N items, with an estimate of the time left once a piece has been timed.

It speaks through the engine's ``progress(step, total, message)`` callback, ``step``/``total`` counting items
over the whole run (every metric scores the same items), so a bar moves with the work. The scorer reports
once per piece it scores (a grid cell, a worker's job), never per item: the run's hot path stays a loop over
arrays.
"""
from __future__ import annotations

import time
from typing import Callable, Sequence

ProgressFn = Callable[[int, int, str], None]


def duration_text(seconds: float) -> str:
    """``about 40 s`` / ``about 3 min``: an estimate, rounded as one."""
    if seconds < 60:
        return f"about {max(1, round(seconds))} s"
    return f"about {round(seconds / 60)} min"


class RunProgress:
    """The phases of one run of ``metrics`` over ``items`` items per metric, reported to ``report``."""

    def __init__(self, report: ProgressFn, metrics: Sequence[str], items: int,
                 clock: Callable[[], float] = time.perf_counter):
        self.report = report
        self.metrics = list(metrics)
        self.items = items
        self.clock = clock
        self.index = 0  # the metric being loaded or scored
        self.done = 0  # its items scored or found in the cache
        self._since = 0.0
        self._seconds = 0.0  # spent scoring the items scored so far, all metrics
        self._scored = 0
        self._metric_seconds = 0.0  # the same for the current metric
        self._metric_scored = 0

    def _of_metrics(self) -> str:
        return f"{self.index + 1} of {len(self.metrics)} metrics"

    def loading(self, index: int) -> None:
        """Metric ``index`` is being built (its model loaded, its JVM started); every metric is built before
        the first is scored."""
        self.index = index
        self.report(0, len(self.metrics) * self.items,
                    f"loading {self.metrics[index]} ({self._of_metrics()})")

    def planned(self, name: str, cached: int) -> None:
        """Metric ``name`` starts scoring; the cache has ``cached`` of its items already."""
        if name in self.metrics:
            self.index = self.metrics.index(name)
        self.done = cached
        self._metric_seconds, self._metric_scored = 0.0, 0
        self._since = self.clock()
        self._emit()

    def scored(self, n: int) -> None:
        """A piece of ``n`` items has been scored."""
        if not n:
            return
        now = self.clock()
        self._metric_seconds += now - self._since
        self._seconds += now - self._since
        self._since = now
        self._metric_scored += n
        self._scored += n
        self.done = min(self.items, self.done + n)
        self._emit()

    def left_s(self) -> float | None:
        """Seconds left: this metric's items at its own pace, the later metrics' at the run's; None until a
        piece has been timed."""
        if not self._scored:
            return None
        run_rate = self._seconds / self._scored
        rate = self._metric_seconds / self._metric_scored if self._metric_scored else run_rate
        later = len(self.metrics) - self.index - 1
        return (self.items - self.done) * rate + later * self.items * run_rate

    def _emit(self) -> None:
        text = (f"scoring {self.metrics[self.index]} ({self._of_metrics()}): "
                f"{self.done:,} of {self.items:,} items")
        left = self.left_s()
        if left is not None and left >= 0.5:
            text += f" · {duration_text(left)} left"
        self.report(self.index * self.items + self.done, len(self.metrics) * self.items, text)

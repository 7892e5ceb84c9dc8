"""Kendall τ of metrics with the Flickr8K human judgments (Hodosh et al. 2013).

Protocol (as in the caption-metric literature, e.g. Elliott & Keller 2014; Vedantam et al. 2015):

* references of a candidate are the five captions of the *rated image* (``Flickr8k.token.txt``);
* **Flickr8K-Expert** (``ExpertAnnotations.txt``): pairs whose candidate is one of the image's own captions
  are dropped; each of the three expert ratings (1-4) is its own sample, so a candidate's metric score
  appears three times; Kendall **τ-c** (the ratings form a rectangular table);
* **Flickr8K-CrowdFlower** (``CrowdFlowerAnnotations.txt``): the human score is the fraction of "yes"
  judgments; a candidate that is one of the image's captions is removed from its own references (four
  remain); Kendall **τ-b**.

τ is reported × 100 with a paired bootstrap percentile CI (:func:`muttlab.stats.correlate`), on scores
oriented so that larger is better (an error rate such as TER is negated), so every τ reads the same way.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from muttlab.engine.progress import between_pieces
from muttlab.engine.runner import registry_for
from muttlab import judged as judged_sets
from muttlab import stats
from muttlab.judged import JudgedSet
from muttlab.human.scoring import ProgressFn, choose_metrics, oriented, score_with
from muttlab.metrics.registry import Registry
from muttlab.settings import Settings

DATASETS = ("expert", "crowdflower")
VARIANTS = {"expert": "tau_c", "crowdflower": "tau_b"}
_METHOD = {"tau_c": "kendall_c", "tau_b": "kendall_b"}
COLUMNS = ["metric", "dataset", "variant", "tau", "ci_low", "ci_high", "n", "candidates", "signature"]


@dataclass
class FlickrStudy:
    """τ of each metric with each dataset: ``table`` has the columns of :data:`COLUMNS`."""

    table: pd.DataFrame
    skipped: dict[str, str] = field(default_factory=dict)
    n_boot: int = stats.DEFAULT_N_BOOT
    seed: int = 0

    def notes(self) -> list[str]:
        return [f"{name} skipped: {why}" for name, why in self.skipped.items()]

    def records(self) -> list[dict]:
        """JSON-ready records (the ``--format json`` output of ``muttlab correlate flickr8k``)."""
        return [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in rec.items()}
                for rec in self.table.to_dict(orient="records")]


def load_judged(settings: Settings, dataset: str) -> JudgedSet:
    """``expert`` or ``crowdflower`` under the protocol above (:mod:`muttlab.judged`)."""
    if dataset not in DATASETS:
        raise ValueError(f"unknown Flickr8K dataset {dataset!r}; use one of {', '.join(DATASETS)}")
    return judged_sets.load_judged(settings, f"flickr8k-{dataset}")


def flickr_correlations(settings: Settings, metrics="all", datasets=DATASETS, n_boot: int = stats.DEFAULT_N_BOOT,
                        seed: int | None = None, registry: Registry | None = None,
                        progress: ProgressFn | None = None) -> FlickrStudy:
    """Kendall τ × 100 of each available metric with Flickr8K-Expert (τ-c) and CrowdFlower (τ-b).

    Args:
      metrics: ``all`` (every available metric), a comma-separated string or a list of registry names;
        a known but unavailable metric is skipped and listed in ``FlickrStudy.skipped``.
      datasets: any of ``expert``, ``crowdflower``.
      n_boot: bootstrap resamples for the CI (0 = no interval); seed defaults to ``settings.seed``.
    Returns:
      :class:`FlickrStudy` whose table has one row per metric x dataset: ``tau``, ``ci_low``, ``ci_high``
      (all × 100), ``n`` (rating samples), ``candidates`` and the metric's ``signature``.
    """
    registry = registry or registry_for(settings)
    seed = settings.seed if seed is None else seed
    choice = choose_metrics(metrics, registry)
    data = [load_judged(settings, d) for d in datasets]
    rows = []
    steps = len(choice.metrics) * len(data)
    for m_index, metric in enumerate(choice.metrics):
        for d_index, judged in enumerate(data):
            dataset = datasets[d_index]
            if progress:
                progress(m_index * len(data) + d_index, steps, f"{metric.name} on {dataset}")
            scores = oriented(score_with(metric, judged.candidates, judged.references, settings, registry), metric)
            corr = stats.correlate(*judged.samples(scores), _METHOD[VARIANTS[dataset]], n_boot=n_boot, seed=seed,
                                   between=between_pieces())
            rows.append({"metric": metric.name, "dataset": dataset, "variant": VARIANTS[dataset],
                         "tau": 100 * corr.value, "ci_low": 100 * corr.ci_low, "ci_high": 100 * corr.ci_high,
                         "n": corr.n, "candidates": len(judged.candidates), "signature": metric.signature()})
    if progress:
        progress(steps, steps, "done")
    return FlickrStudy(pd.DataFrame(rows, columns=COLUMNS), dict(choice.skipped), n_boot, seed)

"""The meta-evaluation against expert MQM judgments as it ships (``meta_eval.json``), so that the
Meta-evaluation page opens on results, with or without a data dir (written by
``scripts/precompute_meta_eval.py``: every lab metric on both WMT21 TED pairs, 1,000 resamples).

What ships: each pair's :class:`~muttlab.meta.result.MetaEvaluation` (every statistic, ε, clusters, baseline
rows, system scores, p-values; :meth:`~muttlab.meta.result.MetaEvaluation.to_dict`), the MQM score of every
judged output and the per-output scores of :data:`SCORED` (for the scatter of Δmetric against ΔMQM), as
little-endian float64 compressed with zlib and base64-encoded: 30–40 kB a metric and pair, where JSON numbers
take 130–150 kB and float32 would move pairs across ε (docs/meta_eval.md, "What ships"). The MQM files
themselves (Apache-2.0) do not ship: the outputs' texts and error spans come from the data dir.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from muttlab.errors import DataError
from muttlab.meta import mqm
from muttlab.meta.result import MetaEvaluation
from muttlab.profile.result import pack_array, unpack_array
from muttlab.settings import DEFAULT_METRICS

# The metrics whose per-output scores ship: the lab's default ones and WMT's sentence-level baselines.
SCORED: tuple[str, ...] = ("sentBLEU", "chrF", *DEFAULT_METRICS)
# The code the numbers come from (the metrics' own code is versioned by their signatures).
CODE_MODULES = ("muttlab.meta.statistics", "muttlab.meta.evaluate", "muttlab.meta.corpus", "muttlab.meta.mqm",
                "muttlab.meta.judgments")


@dataclass(frozen=True)
class MetaTables:
    """Each TED pair's meta-evaluation (``results``, without per-output scores), the shipped per-output scores
    (``scores[pair][metric]``: systems × items in the metric's own orientation, NaN where not judged) and the
    MQM scores they are compared with (``gold[pair]``)."""

    results: dict[str, MetaEvaluation]
    scores: dict[str, dict[str, np.ndarray]] = field(default_factory=dict)
    gold: dict[str, np.ndarray] = field(default_factory=dict)

    @property
    def pairs(self) -> list[str]:
        return list(self.results)

    def result(self, pair: str, with_scores: bool = False) -> MetaEvaluation:
        """One pair's result; ``with_scores``: holding the shipped per-output scores (of :data:`SCORED`)."""
        result = self.results[pair]
        if not with_scores:
            return result
        return replace(result, scores=dict(self.scores.get(pair, {})), gold=self.gold.get(pair))


def data_files(root: Path) -> list[str]:
    """The two files (errors, segment scores) of each TED pair, relative to the data dir."""
    return [f for spec in mqm.TED_PAIRS.values() for f in spec.files]


def from_results(results: dict[str, MetaEvaluation], scored=SCORED) -> MetaTables:
    """The content from each pair's result computed with ``keep_scores=True``: the per-output scores of the
    ``scored`` metrics kept apart, the rest dropped."""
    kept = {pair: {m: np.asarray(v, dtype=np.float64) for m, v in (r.scores or {}).items() if m in scored}
            for pair, r in results.items()}
    return MetaTables({pair: replace(r, scores=None, gold=None) for pair, r in results.items()}, kept,
                      {pair: np.asarray(r.gold, dtype=np.float64) for pair, r in results.items() if r.gold is not None})


def pack(matrix: np.ndarray) -> dict:
    """A float matrix as {shape, its float64 values packed (:func:`muttlab.profile.result.pack_array`)}."""
    matrix = np.asarray(matrix, dtype=np.float64)
    return {"shape": list(matrix.shape), "float64": pack_array(matrix.ravel(), "<f8")}


def unpack(part: dict) -> np.ndarray:
    shape = tuple(int(k) for k in part["shape"])
    if len(shape) != 2 or any(k < 0 or k > 100_000 for k in shape):
        raise ValueError(f"a score matrix of shape {shape}")
    return unpack_array(part["float64"], "<f8", shape[0] * shape[1]).reshape(shape).astype(np.float64)


def to_document(tables: MetaTables) -> dict:
    return {"results": {pair: r.to_dict() for pair, r in tables.results.items()},
            "scores": {pair: {m: pack(v) for m, v in by_metric.items()} for pair, by_metric in tables.scores.items()},
            "gold": {pair: pack(v) for pair, v in tables.gold.items()}}


def parse(document: dict, where: str) -> MetaTables:
    try:
        results = {str(pair): MetaEvaluation.from_dict(data, pair) for pair, data in document["results"].items()}
    except DataError as exc:  # the snapshot module names the file and how to write it again
        raise ValueError(str(exc)) from None
    scores = {}
    for pair, by_metric in (document.get("scores") or {}).items():
        if pair not in results:
            raise ValueError(f"scores of {pair!r}, which has no result")
        shape = (len(results[pair].systems), results[pair].items)
        scores[pair] = {str(m): unpack(part) for m, part in by_metric.items()}
        wrong = [m for m, v in scores[pair].items() if v.shape != shape or m not in results[pair].metrics]
        if wrong:
            raise ValueError(f"{pair}: scores of {wrong[0]!r} are not of a metric of its result, {shape[0]} x "
                             f"{shape[1]}")
    gold = {str(pair): unpack(part) for pair, part in (document.get("gold") or {}).items()}
    wrong = [p for p, v in gold.items() if p not in results or v.shape != (len(results[p].systems), results[p].items)]
    if wrong:
        raise ValueError(f"the MQM scores of {wrong[0]!r} are not of a pair's result")
    return MetaTables(results, scores, gold)

"""Conformance check for metric authors: the properties every metric should have.

``muttlab check-metric NAME|MODULE:CALLABLE`` scores real sentences (the bundled sample's originals and
corruptions against their references) and checks:

* deterministic — the same batch twice gives the same scores;
* batch order — a permuted batch gives each sentence the same score;
* batch size — each sentence scored alone (in small batches) as in the full batch; for a metric that
  declares itself ``corpus_dependent`` (CIDEr-D's document frequencies), instead: a function of its batch
  alone — a batch scored again after another batch gives the same scores (no state carried over);
* identity — a candidate identical to one of its references scores at least as well as the batch's own
  candidate and as another sentence of the batch against the same references (sign-aware);
* empty / Unicode — an empty candidate, and a candidate whose only reference is empty, are scored (a
  finite score, as the metric's reference implementation gives) or, for a metric that declares
  ``scores_empty_text = False``, unsupported (NaN) — never an exception; an empty reference among others,
  and candidates in other scripts, with accents, combining marks, emoji and zero-width characters, get
  finite scores;
* range — scores lie within the metric's declared ``score_range`` (n/a when it declares none);
* signature — a setting that changes the numbers changes the signature (each numeric or boolean
  constructor argument is varied in turn; n/a when none can be varied);
* speed — seconds per 1,000 candidate-reference-pool pairs, reported, not judged.

A check that cannot pass raises nothing: it is a row with ``passed`` False and the reason. A failure that is
the metric's definition rather than a bug is declared once, in :data:`EXPECTED_FAILURES`, and reported as
"expected failure: <reason>" without failing the run.
"""
from __future__ import annotations

import inspect
import time
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from muttlab.errors import MetricError, MuttlabError
from muttlab.metrics.base import Metric, MetricUnavailable

TOLERANCE = 1e-6  # float models (BERTScore, embeddings) pad batches differently; exact metrics agree to 1e-12
DEFAULT_ITEMS = 40
DEFAULT_REFS = 5
UNICODE_CANDIDATES = (
    "Ein Mann fährt Fahrrad über die Brücke.",
    "Un garçon mange une crêpe à la plage.",
    "一个男人在骑自行车。",
    "رجل يركب دراجة",
    "A dog 🐕 runs on the beach 🏖️.",
    "A man\u200b is\u00a0riding a bike.",
    "Cafe\u0301 owners are standing outside.",
)
# Constructor arguments that change how a metric runs, not what it computes.
_NOT_SETTINGS = {"batch_size", "device", "gpus", "timeout", "startup_timeout", "model_dir", "cache_dir", "workers",
                 "extra_args", "model"}
MAX_VARIANTS = 3
AVAILABLE = "available"


@dataclass(frozen=True)
class ExpectedFailure:
    """A property a shipped metric fails by definition: ``metric`` with ``field`` in its signature fails
    ``prop`` because ``reason``. Keyed on a signature field so that a setting without the cause is held to the
    property again (W2V-AVG with ``combine="max"`` must pass identity)."""

    metric: str
    field: str
    prop: str
    reason: str


# The one place the shipped metrics' known failures are declared (the README's conformance table lists them).
EXPECTED_FAILURES = (
    ExpectedFailure("W2V-AVG", "combine:mean", "identity",
                    "averages the cosine over the references (MUTT's definition), so a copy of one reference is "
                    "far from the others and a candidate central to all of them can beat it"),
    ExpectedFailure("BADGER-like", "combine:mean", "identity",
                    "averages its similarity over the references (as the original tool combines them), so a copy "
                    "of one reference can score below a candidate close to all of them"),
)


@dataclass(frozen=True)
class Check:
    """One property: passed True / False, or None when it does not apply (the detail says why).
    ``expected`` is the declared reason when the metric fails this property by definition."""

    name: str
    passed: bool | None
    detail: str = ""
    expected: str = ""

    @property
    def verdict(self) -> str:
        if self.name == AVAILABLE:
            return "unavailable"
        if self.passed is None:
            return "n/a"
        if self.passed:
            return "PASS"
        return "expected failure" if self.expected else "FAIL"

    @property
    def failed(self) -> bool:
        """A failure that counts: not declared, or a named metric that could not be checked."""
        return self.passed is False and not self.expected


def expected_failure(metric: Metric, prop: str) -> str:
    """The declared reason ``metric`` fails ``prop`` ("" when it should pass)."""
    fields = metric.signature().split("|")
    for entry in EXPECTED_FAILURES:
        if entry.metric == metric.name and entry.prop == prop and entry.field in fields:
            return entry.reason
    return ""


def unavailable(reason: str, named: bool) -> Check:
    """The row of a metric that cannot be loaded: a failure when it was asked for by name, not under ``all``."""
    return Check(AVAILABLE, False if named else None, f"not available: {reason}")


def sample_pairs(items: int = DEFAULT_ITEMS, refs: int = DEFAULT_REFS) -> tuple[list[str], list[list[str]]]:
    """Real sentences: the bundled sample's originals and corruptions, each with its first ``refs`` references."""
    from muttlab.sources import load_sample
    trials = load_sample().trials[: max(1, items // 2)]
    candidates, references = [], []
    for t in trials:
        for cand in (t.original, t.corrupted):
            candidates.append(cand)
            references.append(list(t.references[:refs]))
    return candidates[:items], references[:items]


def _close(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.allclose(a, b, rtol=TOLERANCE, atol=TOLERANCE, equal_nan=True))


def _worst(a: np.ndarray, b: np.ndarray) -> str:
    diff = np.abs(a - b)
    i = int(np.nanargmax(diff)) if diff.size else 0
    return f"largest difference {diff[i]:.3g} (item {i}: {a[i]:.6g} vs {b[i]:.6g})" if diff.size else ""


def _deterministic(metric, cands, refs, base) -> Check:
    again = metric.score(cands, refs)
    return Check("deterministic", _close(base, again), "" if _close(base, again) else _worst(base, again))


def _batch_order(metric, cands, refs, base, seed: int) -> Check:
    order = np.random.default_rng(seed).permutation(len(cands))
    permuted = metric.score([cands[i] for i in order], [refs[i] for i in order])
    back = np.empty_like(permuted)
    back[order] = permuted
    return Check("batch order", _close(base, back), "" if _close(base, back) else _worst(base, back))


def _batch_size(metric, cands, refs, base) -> Check:
    if metric.corpus_dependent:
        half = len(cands) // 2
        other = metric.score(cands[half:], refs[half:])  # another batch in between
        first = metric.score(cands[:half], refs[:half])
        other_again = metric.score(cands[half:], refs[half:])
        ok = _close(other, other_again)
        return Check("batch size", ok, "corpus-level: a function of its batch alone"
                     + ("" if ok else f"; {_worst(other, other_again)}") + f" (halves scored: {len(first)})")
    pieces = [metric.score(cands[i:i + 1], refs[i:i + 1]) for i in range(min(len(cands), 8))]
    pieces.append(metric.score(cands[8:], refs[8:]) if len(cands) > 8 else np.zeros(0))
    joined = np.concatenate(pieces)
    ok = _close(base, joined)
    return Check("batch size", ok, "scored one by one and in a smaller batch" + ("" if ok else f"; {_worst(base, joined)}"))


def _identity(metric, cands, refs, base) -> Check:
    sign = 1.0 if metric.higher_is_better else -1.0
    identical = metric.score([r[0] for r in refs], refs)
    shifted = [cands[(i + 1) % len(cands)] for i in range(len(cands))]
    other = metric.score(shifted, refs)
    worse_than_own = np.flatnonzero(sign * identical < sign * base - TOLERANCE)
    worse_than_other = np.flatnonzero(sign * identical < sign * other - TOLERANCE)
    if len(worse_than_own) or len(worse_than_other):
        i = int((list(worse_than_own) + list(worse_than_other))[0])
        return Check("identity", False, f"{len(worse_than_own)} item(s) score a reference copy below their own "
                     f"candidate, {len(worse_than_other)} below another sentence; e.g. item {i}: copy "
                     f"{identical[i]:.4g}, own {base[i]:.4g}, other {other[i]:.4g}")
    ties = int(np.sum(np.isclose(identical, base)))
    return Check("identity", True, f"a reference copy is never beaten ({ties} tie(s) with the own candidate)")


def _empty_and_unicode(metric, cands, refs) -> Check:
    problems = []
    # An empty output is a test item (MSLC24's empty hypotheses): scored, or declared unsupported.
    for what, batch in (("an empty candidate", ([""], [refs[0]])), ("an empty reference", ([cands[0]], [[""]]))):
        try:
            score = metric.score(*batch)[0]
        except Exception as exc:  # the property under test: nothing is raised
            problems.append(f"{what} raised {type(exc).__name__}: {exc}")
            continue
        declared = getattr(metric, "scores_empty_text", True)
        if declared and not np.isfinite(score):
            problems.append(f"{what} gave {score}; score it, or declare scores_empty_text = False")
        elif not declared and not np.isnan(score):
            problems.append(f"{what} gave {score} though the metric declares scores_empty_text = False")
    try:
        scores = metric.score([cands[0]], [[""] + list(refs[0])])
        if not np.all(np.isfinite(scores)):
            problems.append(f"an empty reference among others gave {scores[0]}")
    except Exception as exc:
        problems.append(f"an empty reference among others raised {type(exc).__name__}: {exc}")
    unicode_refs = [list(refs[i % len(refs)]) + [UNICODE_CANDIDATES[(i + 1) % len(UNICODE_CANDIDATES)]]
                    for i in range(len(UNICODE_CANDIDATES))]
    try:
        scores = metric.score(list(UNICODE_CANDIDATES), unicode_refs)
        bad = [UNICODE_CANDIDATES[i] for i in np.flatnonzero(~np.isfinite(scores))]
        if bad:
            problems.append(f"non-finite scores for {bad}")
    except MetricError as exc:
        problems.append(f"Unicode input refused: {exc}")
    except Exception as exc:
        problems.append(f"Unicode input raised {type(exc).__name__}: {exc}")
    return Check("empty / Unicode", not problems, "; ".join(problems) or
                 "empty candidate and reference " + ("scored" if getattr(metric, "scores_empty_text", True) else
                 "unsupported (NaN), as declared") + "; empty reference among others and 7 scripts/symbol sets scored")


def _range(metric, scores: np.ndarray) -> Check:
    declared = getattr(metric, "score_range", None)
    if declared is None:
        return Check("range", None, f"no score_range declared (seen {np.nanmin(scores):.4g} .. {np.nanmax(scores):.4g})")
    low, high = declared
    outside = scores[(scores < low - TOLERANCE) | (scores > high + TOLERANCE) | ~np.isfinite(scores)]
    return Check("range", not len(outside), f"declared [{low}, {high}], seen {np.nanmin(scores):.4g} .. "
                 f"{np.nanmax(scores):.4g}" + (f"; {len(outside)} outside" if len(outside) else ""))


def _variants(metric: Metric):
    """(argument, value) pairs to build the metric with one setting changed."""
    try:
        params = inspect.signature(type(metric).__init__).parameters
    except (TypeError, ValueError):
        return
    for name, param in params.items():
        if name == "self" or name in _NOT_SETTINGS or param.default is inspect.Parameter.empty:
            continue
        current = getattr(metric, name, param.default)
        if isinstance(current, bool):
            yield name, [not current]
        elif isinstance(current, int):
            yield name, [current - 1, current + 1]
        elif isinstance(current, float):
            yield name, [current * 0.5, current * 1.5]


def _signature(metric, cands, refs, base) -> Check:
    tried, notes = 0, []
    for name, values in _variants(metric):
        if tried >= MAX_VARIANTS:
            break
        for value in values:
            try:
                variant = type(metric)(**{name: value})
                variant.check_available()
                scores = variant.score(cands, refs)
            except Exception:  # a value the metric refuses is not a setting to compare
                continue
            tried += 1
            changed = not _close(base, scores)
            same_signature = variant.signature() == metric.signature()
            try:
                variant.close()
            except Exception:
                pass
            if changed and same_signature:
                return Check("signature", False, f"{name}={value!r} changes the scores but not the signature "
                             f"{metric.signature()}")
            notes.append(f"{name}={value!r}: {'scores change, signature changes' if changed else 'same scores'}")
            break
    if not tried:
        return Check("signature", None, "no numeric or boolean setting to vary")
    return Check("signature", True, "; ".join(notes))


def _speed(metric, cands, refs) -> Check:
    start = time.perf_counter()
    metric.score(cands, refs)
    elapsed = time.perf_counter() - start
    return Check("speed", None, f"{1000 * elapsed / len(cands):.3g} s per 1,000 pairs "
                 f"({len(cands)} pairs, {len(refs[0])} refs each; reported, not judged)")


def check_metric(metric: Metric, items: int = DEFAULT_ITEMS, refs: int = DEFAULT_REFS, seed: int = 13) -> list[Check]:
    """Every property above for one metric, on ``items`` real sentences with ``refs`` references each."""
    try:
        metric.check_available()
    except MetricUnavailable as exc:
        raise MuttlabError(f"{metric.name} is not available: {exc}") from None
    cands, references = sample_pairs(items, refs)
    checks = []
    try:
        base = metric.score(cands, references)
    except Exception as exc:
        return [Check("scores the sample", False, f"{type(exc).__name__}: {exc}")]
    for name, run in (("deterministic", lambda: _deterministic(metric, cands, references, base)),
                      ("batch order", lambda: _batch_order(metric, cands, references, base, seed)),
                      ("batch size", lambda: _batch_size(metric, cands, references, base)),
                      ("identity", lambda: _identity(metric, cands, references, base)),
                      ("empty / Unicode", lambda: _empty_and_unicode(metric, cands, references)),
                      ("range", lambda: _range(metric, base)),
                      ("signature", lambda: _signature(metric, cands, references, base))):
        try:
            check = run()
        except Exception as exc:  # a crash inside a property is that property failing
            check = Check(name, False, f"{type(exc).__name__}: {exc}")
        reason = expected_failure(metric, check.name)
        if reason and check.passed is False:
            check = replace(check, expected=reason, detail=f"expected failure: {reason} ({check.detail})")
        elif reason:
            check = replace(check, detail=f"{check.detail}; declared as an expected failure, but it passed")
        checks.append(check)
    # Scores of the same sentences may be memoised by now; time a fresh batch the metric has not seen.
    fresh_cands, fresh_refs = sample_pairs(items * 3, refs)
    checks.append(_speed(metric, fresh_cands[items:], fresh_refs[items:]))
    return checks


def checks_frame(results: dict[str, list[Check]]) -> pd.DataFrame:
    """metric x property table: PASS / FAIL / expected failure / n/a / unavailable (and the detail) per row."""
    rows = [{"metric": metric, "property": check.name, "result": check.verdict, "detail": check.detail}
            for metric, checks in results.items() for check in checks]
    return pd.DataFrame(rows, columns=["metric", "property", "result", "detail"])


def all_passed(results: dict[str, list[Check]]) -> bool:
    return not any(c.failed for checks in results.values() for c in checks)

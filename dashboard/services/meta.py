"""What the Meta-evaluation and Profile pages call: the shipped meta-evaluation of the TED pairs and its pairs of
outputs, one segment's judged outputs, a visitor's own judgments (an upload) and their meta-evaluation, and the
robustness profiles, shipped or computed here, each kept for the whole server.

Work a visitor asks for (an upload's scoring, a profile that does not ship, a comparison of two) runs through
the fair queue under the public demo's share (:mod:`.budget`: quick metrics only for anonymous visitors on a
read-only server); what ships is read, never computed.
"""
from __future__ import annotations

import hashlib
from typing import Callable

from muttlab import api
from muttlab.dashboard.services.budget import scoring_settings
from muttlab.dashboard.services.core import (STUDY_COST, memoised, queued_with_progress, registry, shipped,
                                             shipped_differences)
from muttlab.dashboard.services.uploads import _records_at_most
from muttlab.errors import DataError
from muttlab.settings import Settings

Progress = Callable[[int, int, str], None]


# --------------------------------------------------------------------------- the shipped TED meta-evaluation

def meta_pairs_shipped() -> list[str]:
    """The language pairs whose meta-evaluation ships (``en-de``, ``zh-en``), none in a build without it."""
    snapshot = shipped("meta_eval")
    return [] if snapshot is None else list(snapshot.content.pairs)


def shipped_meta(pair: str):
    """The shipped meta-evaluation of ``pair`` with its per-output scores (:func:`muttlab.api.shipped_meta_evaluation`).

    Raises:
      UnknownName: no such pair; DataError: the shipped file is malformed.
    """
    return api.shipped_meta_evaluation(pair, with_scores=True)


def shipped_meta_notes(settings: Settings) -> list[str]:
    """What differs between the shipped meta-evaluation and what this server would compute (empty: current);
    no metric is loaded to tell (their signatures are compared only where the catalogue has them)."""
    snapshot = shipped("meta_eval")
    return [] if snapshot is None else shipped_differences(settings, snapshot, signatures=False)


# The item-grouped pairwise statistics: the ones a scatter of pairs of outputs shows; any other statistic's page
# shows acc*_eq's pairs.
SCATTER_STATISTICS = ("acc_eq_item", "pairwise_acc_item")


def scatter_statistic(statistic: str) -> str:
    """The statistic whose pairs the scatter shows for a ranking by ``statistic``: itself when item-grouped
    pairwise, else acc*_eq's."""
    return statistic if statistic in SCATTER_STATISTICS else "acc_eq_item"


def shipped_caption(result, stale: list[str]) -> str:
    """What the page and its report say of a shipped meta-evaluation: its size, resamples, seed and threshold,
    and ``stale`` (:func:`shipped_meta_notes`) when it is not this server's."""
    return (f"Shipped results: {len(result.systems)} systems × {result.items} segments ({result.outputs:,} outputs), "
            f"{result.n_resamples:,} resamples, seed {result.seed}, p < {result.alpha} for a new cluster."
            + (" Computed under another stamp than this server's: " + "; ".join(stale) if stale else ""))


def pairs_of(key: tuple, result, metric: str, statistic: str):
    """Every item-grouped pair of outputs of ``metric`` (:func:`muttlab.api.meta_pairs`), kept per ``key`` (what
    names ``result``: a shipped pair or an upload's evaluation) for the whole server.

    Raises:
      MuttlabError: the result holds no scores of ``metric``.
    """
    return memoised(("meta pairs", key, metric, statistic), lambda: api.meta_pairs(result, metric, statistic),
                    kept_in="pages")


def segment(settings: Settings, key: tuple, data, item: int):
    """One segment's judged outputs with their MQM error spans (:func:`muttlab.api.segment_outputs`), kept per
    ``key`` (what names ``data``): ``data`` is a TED pair's name (``mqm-ted:en-de``; the texts come from the data
    dir) or an upload's judgments. Raises MuttlabError without the data dir or for an item out of range."""
    return memoised(("meta segment", settings, key, item), lambda: api.segment_outputs(settings, data, item),
                    kept_in="pages")


def ranking_frame(result, statistic: str):
    """The ranking table a page shows and downloads for ``statistic``: one row per metric and baseline, best
    first (:meth:`muttlab.meta.result.MetaEvaluation.ranking`), every number written by
    :mod:`muttlab.dashboard.number_format` (a statistic with three decimals, ε as a score): ``rank``, ``metric``,
    ``baseline``, the statistic, its 95% interval over items where it has one, ε and whether it is informative
    for a tie-calibrated statistic, the significance ``cluster`` where tested."""
    import pandas as pd

    from muttlab.dashboard.number_format import DASH, correlation_text, fmt_score

    calibrated = statistic in api.meta_tie_calibrated()
    has_interval = any(statistic in i for i in result.intervals.values())
    records = []
    for rank, metric in enumerate((m for m in result.ranking(statistic) if m in result.values), start=1):
        record = {"rank": rank, "metric": metric, "baseline": "baseline" if metric in result.baselines else "",
                  statistic: correlation_text(result.value(metric, statistic))}
        if has_interval:
            low, high = result.intervals.get(metric, {}).get(statistic, (float("nan"), float("nan")))
            record["95% interval"] = (DASH if low != low else f"{correlation_text(low)}–{correlation_text(high)}")
        if calibrated:
            record["ε"] = fmt_score(result.epsilon(metric, statistic))
            informative = result.informative.get(metric, {}).get(statistic)
            record["ε informative"] = DASH if informative is None else ("yes" if informative else "no")
        if statistic in result.significance:
            cluster = result.cluster(metric, statistic)
            record["cluster"] = DASH if cluster is None else str(cluster)
        records.append(record)
    return pd.DataFrame(records)


def skipped_frame(result):
    """The metrics a meta-evaluation could not score, each with why (a language it cannot score, not installed)."""
    import pandas as pd

    return pd.DataFrame({"metric": list(result.skipped), "reason": list(result.skipped.values())})


# --------------------------------------------------------------------------- a visitor's own judgments

def read_judgments(settings: Settings, data: bytes, name: str):
    """An uploaded judgments file read (:func:`muttlab.api.parse_judgments`: the generic format's limits and
    messages), kept by content and name; returns (judgments, the key naming the upload).

    Raises:
      DataError: over the size or row limits (told before the file is decoded), malformed; DemoLimit.
    """
    from muttlab.settings import active_limits

    limits = active_limits()
    if len(data) > limits.max_upload_bytes:
        raise DataError(name, limits.exceeded("max_upload_mb", len(data) / 2 ** 20, "the file"))
    rows = _records_at_most(data)
    if rows > limits.max_pairs:
        raise DataError(name, limits.exceeded("max_pairs", rows, "the file") + "; split it, or run `muttlab "
                        "meta-eval FILE` on your own machine")
    key = ("judgments", hashlib.sha256(data).hexdigest(), name)
    return memoised(key, lambda: api.parse_judgments(data, name), settings, costly="reading the judgments"), key


def evaluation_key(settings: Settings, upload_key: tuple, metrics: tuple[str, ...]) -> tuple:
    return ("meta-eval", settings, upload_key, metrics)


def evaluate(settings: Settings, judgments, upload_key: tuple, metrics: tuple[str, ...],
             progress: Progress | None = None):
    """The meta-evaluation of uploaded judgments (:func:`muttlab.api.meta_evaluate`, with the per-output scores
    kept for the scatter), once per upload and metrics for the whole server, within the demo's share (slow
    metrics refused there)."""
    def compute():
        def score(report):
            return api.meta_evaluate(scoring_settings(settings), judgments, list(metrics), progress=report,
                                     registry=registry(settings), keep_scores=True)
        return queued_with_progress(score, STUDY_COST, progress)

    return memoised(evaluation_key(settings, upload_key, metrics), compute, settings,
                    costly="the meta-evaluation", metrics=metrics)


# --------------------------------------------------------------------------- robustness profiles

def shipped_profiles() -> dict:
    """metric -> its shipped profile (:class:`muttlab.profile.result.Profile`), {} in a build without them."""
    snapshot = shipped("profiles")
    return {} if snapshot is None else dict(snapshot.content.profiles)


def shipped_profile_notes(settings: Settings) -> list[str]:
    snapshot = shipped("profiles")
    return [] if snapshot is None else shipped_differences(settings, snapshot, signatures=False)


def profile_key(settings: Settings, metric: str) -> tuple:
    return ("profile", settings, metric)


def profile(settings: Settings, metric: str, progress: Progress | None = None):
    """``metric``'s robustness profile computed here (:func:`muttlab.api.profile`: what ships and is current is
    taken as it is), once per metric for the whole server, within the demo's share."""
    def compute():
        return queued_with_progress(lambda report: api.profile(scoring_settings(settings), metric, report,
                                                               registry(settings)), STUDY_COST, progress)

    return memoised(profile_key(settings, metric), compute, settings, costly="the profile", metrics=(metric,))


SECTION_TITLES = {"mutt": "MUTT: accuracy per corruption type and number of references",
                  "demetr_severity": "DEMETR: accuracy per severity", "demetr": "DEMETR: accuracy per perturbation",
                  "mslc": "MSLC24-B: edge cases", "mqm": "MQM meta-evaluation (WMT21 TED)"}


def section_label(name: str, table):
    """Each row's label in a profile section's table and figure: the group, with the references for MUTT."""
    if name == "mqm":
        return table["pair"].astype(str) + " " + table["statistic"].astype(str)
    if name == "demetr_severity":
        return table["severity"].astype(str)
    if name == "mutt":
        return table["group"].astype(str) + " ×" + table["refs"].astype(str)
    return table["group"].astype(str)


# A profile's sections as the page and its report show them, in order (the DEMETR per-perturbation table apart).
PROFILE_SECTIONS = ("mutt", "demetr_severity", "mslc", "mqm")


def section_tables(name: str, profiles: list) -> list:
    """(metric, its table of section ``name``) for each of ``profiles`` that has that section with rows."""
    tables = [(p.metric, p.tables().get(name)) for p in profiles]
    return [(m, t) for m, t in tables if t is not None and not t.empty]


def profile_points(name: str, tables: list) -> "pd.DataFrame":
    """The dots of a profile section's figure for ``tables`` ((metric, its section table) each): metric, row
    label, the value (``accuracy``; ``value`` for MQM) and its interval."""
    import pandas as pd

    value = "value" if name == "mqm" else "accuracy"
    return pd.concat([pd.DataFrame({"metric": m, "row": section_label(name, t).to_numpy(),
                                    value: t[value].to_numpy(float), "ci_low": t["ci_low"].to_numpy(float),
                                    "ci_high": t["ci_high"].to_numpy(float)}) for m, t in tables],
                     ignore_index=True)


def profile_figure(name: str, tables: list):
    """A profile section's figure for ``tables`` ((metric, its section table) each): each row's dot with its 95%
    interval, one colour per metric when two are compared (:func:`muttlab.dashboard.charts.interval_dots`)."""
    from muttlab.dashboard import charts

    names = " vs ".join(m for m, _ in tables)
    return charts.interval_dots(profile_points(name, tables), "row", "value" if name == "mqm" else "accuracy",
                                "ci_low", "ci_high", percent_values=name != "mqm",
                                series="metric" if len(tables) > 1 else None,
                                title=f"{names}: {SECTION_TITLES[name]}")


def profile_shown(name: str, tables: list) -> "pd.DataFrame":
    """A profile section's table for ``tables`` ((metric, its section table) each), as the page shows it."""
    import pandas as pd

    shown = pd.concat([profile_frame(name, t).assign(metric=m) for m, t in tables], ignore_index=True)
    return shown[["metric"] + [c for c in shown.columns if c != "metric"]]


def profile_frame(name: str, table):
    """A profile section as the page shows and downloads it, every number written by
    :mod:`muttlab.dashboard.number_format`: accuracies and tie rates in percent with their 95% interval for the
    unit tests; for MQM each statistic (three decimals), its interval over items, ε, whether it is informative
    and the cluster (rank of metrics)."""
    import pandas as pd

    from muttlab.dashboard.number_format import DASH, correlation_text, fmt_score, interval_text, percent

    out = pd.DataFrame({"row": section_label(name, table).to_numpy()})
    if name == "mqm":
        out["value"] = [correlation_text(v) for v in table["value"]]
        out["95% interval"] = [DASH if pd.isna(a) else f"{correlation_text(a)}–{correlation_text(b)}"
                               for a, b in zip(table["ci_low"], table["ci_high"])]
        out["ε"] = [DASH if pd.isna(e) else fmt_score(e) for e in table["epsilon"]]
        out["ε informative"] = [DASH if pd.isna(i) else ("yes" if i else "no") for i in table["informative"]]
        out["cluster"] = [DASH if pd.isna(c) else f"{int(c)} of {int(n)}"
                          for c, n in zip(table["cluster"], table["clusters"])]
        out["constant baseline"] = [correlation_text(v) for v in table["constant"]]
        return out
    out["trials"] = [f"{int(n):,}" for n in table["n"]]
    out["accuracy"] = [percent(v) for v in table["accuracy"]]
    out["95% interval"] = [interval_text(a, b) for a, b in zip(table["ci_low"], table["ci_high"])]
    out["ties"] = [percent(v) for v in table["tie_rate"]]
    return out


def comparison_frame(cells):
    """The unit-test cells of two metrics compared (:class:`muttlab.profile.result.ProfileComparison`), numbers
    written as the page writes them: both accuracies, the difference in points, who alone passes how many
    trials, McNemar's p and each metric's reading."""
    import pandas as pd

    from muttlab.dashboard.number_format import DASH, p_value_text, percent

    return pd.DataFrame({
        "suite": cells["suite"].astype(str).to_numpy(),
        "row": [f"{g} ×{int(r)}" if suite == "mutt" else str(g)
                for suite, g, r in zip(cells["suite"], cells["group"], cells["refs"])],
        "trials": [f"{int(n):,}" for n in cells["n"]],
        "first": [percent(v) for v in cells["first_accuracy"]], "second": [percent(v) for v in cells["second_accuracy"]],
        "difference (points)": [DASH if pd.isna(d) else f"{d:+.1f}" for d in cells["difference"]],
        "only first right": [DASH if pd.isna(v) else str(int(v)) for v in cells["first_only"]],
        "only second right": [DASH if pd.isna(v) else str(int(v)) for v in cells["second_only"]],
        "p (McNemar)": [DASH if pd.isna(p) else p_value_text(p) for p in cells["p_value"]],
        "significant": ["yes" if s else "no" for s in cells["significant"]],
        "first reads": cells["first"].astype(str).to_numpy(), "second reads": cells["second"].astype(str).to_numpy()})


def mqm_comparison_frame(mqm):
    """The MQM statistics of two metrics compared, as the page writes them."""
    import pandas as pd

    from muttlab.dashboard.number_format import DASH, correlation_text, p_value_text

    return pd.DataFrame({
        "pair": mqm["pair"].astype(str).to_numpy(), "statistic": mqm["statistic"].astype(str).to_numpy(),
        "first": [correlation_text(v) for v in mqm["first_value"]],
        "second": [correlation_text(v) for v in mqm["second_value"]],
        "difference": [DASH if pd.isna(d) else f"{d:+.3f}" for d in mqm["difference"]],
        "p": [DASH if pd.isna(p) else p_value_text(p) for p in mqm["p_value"]],
        "significant": ["yes" if s else "no" for s in mqm["significant"]],
        "test": mqm["method"].astype(str).to_numpy()})


def comparison_key(settings: Settings, first: str, second: str) -> tuple:
    return ("profile comparison", settings, first, second)


def comparison(settings: Settings, first: str, second: str, progress: Progress | None = None):
    """Two metrics' profiles compared (:func:`muttlab.api.compare_profiles`), once per pair of metrics."""
    def compute():
        return queued_with_progress(lambda report: api.compare_profiles(scoring_settings(settings), first, second,
                                                                        progress=report,
                                                                        registry=registry(settings)),
                                    STUDY_COST, progress)

    return memoised(comparison_key(settings, first, second), compute, settings, costly="the comparison",
                    metrics=(first, second))


__all__ = ["SECTION_TITLES", "comparison", "comparison_frame", "comparison_key", "evaluate", "evaluation_key",
           "meta_pairs_shipped", "mqm_comparison_frame", "pairs_of", "profile", "profile_frame", "profile_key",
           "ranking_frame", "read_judgments", "section_label", "segment", "shipped_meta", "shipped_meta_notes",
           "shipped_profile_notes", "shipped_profiles", "skipped_frame"]

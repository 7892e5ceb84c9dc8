"""Every published number the lab can compute, beside the number measured here (``muttlab reproduce``).

The published numbers are ``published/published.csv`` of the data dir (one row per number: study, source,
metric, subset, refs, rule, statistic, value; see its README). Each study is computed with the lab's own
study code, so the report measures exactly what the CLI and the dashboard show:

* ``mutt_accuracy`` (Boag et al. 2016, Tables 4-7): the runner on the MUTT experiment sets
  (:func:`muttlab.engine.runner.run`); a cell whose rule differs from its corruption type's (Table 7 applies
  the Difference formula to negations too) is decided from the same two scores with that rule;
* ``sick_neg_subj_correlation`` (Boag et al. 2016, Table 3): the SICK study's paper reading
  (:func:`muttlab.human.sick.sick_study` with ``reading="paper"``);
* ``flickr8k_expert`` / ``flickr8k_cf`` (Hessel et al. 2021, Tables 1-2): :func:`muttlab.human.flickr.flickr_correlations`;
* ``sick_relatedness`` (Tai et al. 2015, Table 3): :func:`muttlab.learned.reval.evaluate_model` of the
  ReVal models shipped in ``data/models`` on SICK TEST.

Scores go through the shared score cache (the ReVal evaluation through its parse cache), so a second run
recomputes the statistics only. A number is *within* when ``|measured - published| <= tolerance`` of its
statistic (:data:`TOLERANCES`).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from muttlab.corruptions import catalog
from muttlab.corruptions.base import Rule
from muttlab.engine import verdict
from muttlab.engine.cache import item_key
from muttlab.engine.runner import cache_for, registry_for, run
from muttlab.sources import DATA_LAYOUT, data_file, load_mutt_experiments, read_table
from muttlab.errors import MuttlabError
from muttlab.human import flickr, sick
from muttlab.human import studies as study_registry
from muttlab.metrics.base import MetricUnavailable, signature_of
from muttlab.metrics.registry import Registry
from muttlab.resources import bundled
from muttlab.rules import EXACT_RULE, number_text
from muttlab.settings import Settings

ProgressFn = Callable[[int, int, str], None]

PUBLISHED_FILE = "published/published.csv"
PUBLISHED_COLUMNS = ("study", "source", "metric", "subset", "refs", "rule", "statistic", "value")

# How far a measured number may be from the published one and still reproduce it, per statistic.
TOLERANCES = {
    "accuracy_pct": 2.0,  # percentage points
    "kendall_tau_c_x100": 1.0,
    "kendall_tau_b_x100": 1.0,
    "pearson_r": 0.02,
    "mqm_per_segment": 0.01,  # the published table's two decimals (some truncated, data/published/README.md)
}
# Decimals a statistic is shown with (default 1).
DIGITS = {"pearson_r": 3, "mqm_per_segment": 2}

# The papers' metric names -> the registry's. BADGER is looked up at run time (see _badger_name).
OUR_NAMES = {
    "BLEU": "BLEU-4", "BLEU-1": "BLEU-1", "BLEU-4": "BLEU-4", "CIDEr": "CIDEr-D", "METEOR": "METEOR-1.5",
    "ROUGE-L": "ROUGE-L", "TERp": "TERp", "BADGER": "BADGER", "W2V-AVG": "W2V-AVG",
    "Dependency Tree-LSTM": "ReVal-TreeLSTM", "LSTM": "ReVal-LSTM",
}
TAI_MODELS = {"ReVal-TreeLSTM": "treelstm", "ReVal-LSTM": "lstm"}

NOT_COMPUTABLE = {
    "SPICE": "SPICE needs the Stanford scene-graph parser (Java, CoreNLP); the lab does not ship it",
    "RefCLIP-S": "RefCLIP-S scores the image with CLIP; the lab has the captions, not the Flickr8k images",
    "Bidirectional LSTM": "the lab trains a sequential LSTM and a dependency Tree-LSTM, no bidirectional LSTM",
}

HELD_BACK = "published value held back on purpose (blind check of BADGER; data/published/README.md)"
# Human scores a study publishes beside no metric (the TED system-level MQM table): no lab metric measures them.
HUMAN_SCORES = frozenset({"MQM"})

# Known reasons for a difference, by (study, metric, subset); None matches anything. Every specific reason
# that matches is given; the generic one of a study only when none does.
KNOWN_REASONS: list[tuple[str | None, str | None, str | None, str]] = [
    ("mutt_accuracy", None, "passive", "paper used 238 passive trials, the release has 214"),
    (None, "TERp", None, "TERp's phrase table is not public: no phrase substitutions here (the original made "
                         "them in 11% of segments)"),
    (None, "BADGER", None, "BADGER is reimplemented from Parker 2008; the original tool is not public"),
    ("mutt_accuracy", "W2V-AVG", None, "W2V vectors differ: GoogleNews 300-d vs GloVe 50-d"),
    ("sick_relatedness", None, None, "inputs differ: frozen GloVe 6B 50-d here, 300-d GloVe in Tai et al.; "
                                     "full SICK release splits (4,439/495/4,906), not the SemEval files "
                                     "(4,500/500/4,927)"),
]
GENERIC_REASONS = {
    "mutt_accuracy": "the paper's test sets are a slightly different version of the released ones",
}

COLUMNS = ["study", "source", "metric", "metric_ours", "subset", "refs", "rule", "statistic", "published",
           "measured", "measured_lab", "difference", "tolerance", "within", "reason", "rule_note"]
# Why a MUTT accuracy measured here can differ from the lab's grid (issue: one cell, two numbers).
PAPER_TIES = "ties judged exactly, as the paper did"


@dataclass
class ReproductionReport:
    """Published numbers beside ours: ``frame`` has one row per number with the columns of :data:`COLUMNS`.

    ``measured`` is NaN for a number the lab cannot compute (``reason`` says why), ``published`` is NaN for
    a cell the published file holds back; ``within`` is None where either is missing. ``measured`` follows the
    paper's rules (MUTT: ties judged exactly); ``measured_lab`` is the same number under the lab's rules (the
    settings' :class:`~muttlab.rules.Rules`, as ``muttlab run`` and the grid judge it), NaN for a study that
    judges no trials, and ``rule_note`` says so where the two differ.
    """

    frame: pd.DataFrame
    studies: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def compared(self) -> pd.DataFrame:
        return self.frame[self.frame["published"].notna() & self.frame["measured"].notna()]

    def summary(self) -> str:
        """``N within tolerance of M computed`` (M: numbers with both a published and a measured value)."""
        compared = self.compared
        within = int(compared["within"].astype(bool).sum())
        missing = int(self.frame["measured"].isna().sum())
        held = int(self.frame["published"].isna().sum())
        text = f"{within} within tolerance of {len(compared)} computed"
        if missing:
            text += f"; {missing} not computed"
        if held:
            text += f"; {held} measured with no published value (held back)"
        return text

    def display(self) -> pd.DataFrame:
        """The frame for reading: numbers as text with the digits of their statistic, within as yes / no."""
        out = self.frame.copy()
        digits = out["statistic"].map(lambda st: DIGITS.get(st, 1))
        for column in ("published", "measured", "measured_lab", "difference", "tolerance"):
            out[column] = [_number(v, d, signed=column == "difference") for v, d in zip(out[column], digits)]
        out["published"] = out["published"].replace("", "not given")
        out["measured"] = out["measured"].replace("", "not computed")
        out["refs"] = [str(int(k)) if pd.notna(k) else "" for k in out["refs"]]
        out["within"] = [{True: "yes", False: "no"}.get(w, "") for w in out["within"]]
        return out

    def by_study(self) -> pd.DataFrame:
        """Per study: numbers published, computed, within tolerance."""
        rows = []
        for study in self.studies:
            part = self.frame[self.frame["study"] == study]
            compared = part[part["published"].notna() & part["measured"].notna()]
            rows.append({"study": study, "numbers": int(part["published"].notna().sum()),
                         "computed": len(compared), "within": int(compared["within"].astype(bool).sum())})
        return pd.DataFrame(rows, columns=["study", "numbers", "computed", "within"])


def _number(value: float, digits: int, signed: bool = False) -> str:
    if value is None or np.isnan(value):
        return ""
    value = round(float(value), digits) + 0.0  # no "-0.0"
    return f"{value:+.{digits}f}" if signed else f"{value:.{digits}f}"


def shipped_published() -> pd.DataFrame:
    """Published numbers the package ships (``data/published/*.csv``, same columns): tables the data dir's
    file lacks, transcribed with their source (the TED system-level MQM table)."""
    frames = [read_table(path, ",") for path in sorted((bundled.data_dir() / "published").glob("*.csv"))]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=list(PUBLISHED_COLUMNS))


def load_published(settings: Settings) -> pd.DataFrame:
    """``published/published.csv`` of the data dir with :func:`shipped_published`'s rows after it, ``refs`` as
    numbers (NaN where a study has none)."""
    if settings.data_dir is None:
        raise MuttlabError("muttlab reproduce needs the published numbers and the datasets: set MUTTLAB_DATA_DIR "
                           f"or pass --data-dir pointing at the folder that holds {PUBLISHED_FILE}, mutt/, sick/ "
                           "and flickr8k/")
    path = settings.data_dir / PUBLISHED_FILE
    table = read_table(path, ",", fix=f"the data dir must hold {PUBLISHED_FILE} (see data/README.md)")
    missing = [c for c in PUBLISHED_COLUMNS if c not in table.columns]
    if missing:
        raise MuttlabError(f"{path}: missing column(s) {', '.join(missing)}; expected {', '.join(PUBLISHED_COLUMNS)}")
    table = pd.concat([table[list(PUBLISHED_COLUMNS)], shipped_published()], ignore_index=True)
    table["refs"] = pd.to_numeric(table["refs"].replace("", np.nan))
    table["value"] = pd.to_numeric(table["value"], errors="coerce")
    if table["value"].isna().any():
        bad = int(np.flatnonzero(table["value"].isna())[0])
        raise MuttlabError(f"{path}, line {bad + 2}: value must be a number")
    return table


def choose_studies(names: Sequence[str] | str | None, available: Sequence[str]) -> list[str]:
    """The studies to reproduce (all by default), in the published file's order; unknown names are an error."""
    if names is None or names == "all" or (not isinstance(names, str) and list(names) in ([], ["all"])):
        return list(available)
    wanted = [n.strip() for n in names.split(",")] if isinstance(names, str) else [n.strip() for n in names]
    unknown = [n for n in wanted if n and n not in available]
    if unknown:
        raise MuttlabError(f"unknown study {', '.join(repr(n) for n in unknown)}; choose from {', '.join(available)}")
    return [s for s in available if s in wanted]


def _badger_name(registry: Registry) -> str:
    """The registry's BADGER (it may be registered under a variant name such as ``BADGER-like``)."""
    if "BADGER" in registry.names:
        return "BADGER"
    return next((n for n in registry.names if n.upper().startswith("BADGER")), "BADGER")


def our_name(paper_name: str, registry: Registry) -> str | None:
    """The registry name of a paper's metric, None when the lab has no such metric (or it is a human score)."""
    if paper_name in NOT_COMPUTABLE or paper_name in HUMAN_SCORES:
        return None
    if "~" in paper_name:  # a correlation between two variables (SICK Table 3)
        names = [v if v == sick.GOLD else our_name(v, registry) for v in paper_name.split("~")]
        return None if None in names else "~".join(names)
    name = OUR_NAMES.get(paper_name, paper_name)
    return _badger_name(registry) if name == "BADGER" else name


def known_reason(study: str, metric: str, subset: str) -> str:
    """The known reasons why a published number and ours may differ ("" when none is known)."""
    found = [text for s, m, sub, text in KNOWN_REASONS
             # A correlation row names two variables ("METEOR~TERp"); a reason for either applies.
             if (s is None or s == study) and (m is None or m in metric.split("~")) and (sub is None or sub == subset)]
    return "; ".join(found) or GENERIC_REASONS.get(study, "")


# --------------------------------------------------------------------------- the studies

# Published row index -> (measured value or NaN, why not[, the value under the lab's rules where the study judges
# trials and the paper's rules are not the lab's]).
Measured = dict[int, tuple]


def _unavailable(registry: Registry, names: Sequence[str]) -> dict[str, str]:
    out = {}
    for name in names:
        try:
            registry.get(name)
        except MetricUnavailable as exc:
            out[name] = str(exc)
        except KeyError:
            out[name] = f"{name} is not registered"
    return out


def _held_back_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """MUTT cells a table's metric lacks for a corruption of that table (BADGER's blind cells)."""
    extra = []
    for source, table in rows.groupby("source", sort=False):
        subsets = list(dict.fromkeys(table["subset"]))
        refs = sorted(table["refs"].dropna().unique())
        for metric in dict.fromkeys(table["metric"]):
            have = set(table.loc[table["metric"] == metric, "subset"])
            for subset in (s for s in subsets if s not in have):
                rule = table.loc[table["subset"] == subset, "rule"].iloc[0]
                extra += [{"study": "mutt_accuracy", "source": source, "metric": metric, "subset": subset,
                           "refs": k, "rule": rule, "statistic": "accuracy_pct", "value": np.nan} for k in refs]
    return pd.DataFrame(extra, columns=list(PUBLISHED_COLUMNS))


def measure_mutt_accuracy(settings: Settings, rows: pd.DataFrame, registry: Registry,
                          progress: ProgressFn) -> Measured:
    """Each MUTT accuracy as the paper computed it and as the lab's rules give it.

    The paper compared the two scores exactly; the lab's grid judges ties by the settings' tie rule (tie:1e-9
    by default), which moves cells where coco-caption's smoothing constants separate two BLEU-4 scores by
    ~1e-9. Reproducing the paper's number means applying the paper's rule, whatever tie rule is set; the lab's
    number beside it is judged from the same two scores by the settings' rules (NaN when they cannot judge the
    metric, e.g. a calibrated rule without its calibration).
    """
    paper = settings.with_rules(tie=EXACT_RULE)
    names = {i: our_name(m, registry) for i, m in rows["metric"].items()}
    metrics = list(dict.fromkeys(n for n in names.values() if n))
    missing = _unavailable(registry, metrics)
    suite = load_mutt_experiments(settings).select(list(dict.fromkeys(rows["subset"])))
    counts = sorted(int(k) for k in rows["refs"].dropna().unique())
    out: Measured = {}
    for step, metric in enumerate(metrics):
        progress(step, len(metrics), f"MUTT accuracy: {metric}")
        mine = [i for i, n in names.items() if n == metric]
        if metric in missing:
            out.update({i: (np.nan, missing[metric]) for i in mine})
            continue
        try:
            table = run(suite, [metric], counts, paper, registry).table
        except MuttlabError as exc:
            out.update({i: (np.nan, str(exc)) for i in mine})
            continue
        scorer = registry.get(metric)
        judges = {"paper": verdict.rules_for(paper, metric, signature_of(scorer), scorer.noise_floor)}
        try:
            judges["lab"] = verdict.rules_for(settings, metric, signature_of(scorer), scorer.noise_floor)
        except MuttlabError:
            judges["lab"] = None
        for i in mine:
            row = rows.loc[i]
            cell = table[(table["corruption"] == row["subset"]) & (table["refs"] == int(row["refs"]))]
            expected = verdict.EXPECTATION_OF_RULE[Rule.DIFFERENCE if row["rule"] == "difference" else Rule.ORIG_BETTER]
            value = {}
            for which, rules in judges.items():
                value[which] = np.nan if rules is None else 100.0 * float(np.mean(verdict.judge(
                    cell["s_orig"], cell["s_corr"], expected, scorer.higher_is_better, rules).passed))
            out[i] = (value["paper"], "", value["lab"])
    return out


def measure_sick_table3(settings: Settings, rows: pd.DataFrame, registry: Registry,
                        progress: ProgressFn) -> Measured:
    pairs = {i: our_name(m, registry).split("~") for i, m in rows["metric"].items()}
    metrics = list(dict.fromkeys(v for a_b in pairs.values() for v in a_b if v != sick.GOLD))
    progress(0, 1, "SICK Table 3 (paper reading)")
    study = sick.sick_study(settings, "neg_subj", metrics, registry=registry, reading="paper")
    out: Measured = {}
    for i, (a, b) in pairs.items():
        skipped = study.skipped.get(a) or study.skipped.get(b)
        out[i] = (np.nan, skipped) if skipped else (float(study.correlations.loc[a, b]), "")
    return out


def _flickr(dataset: str, settings: Settings, rows: pd.DataFrame, registry: Registry,
            progress: ProgressFn) -> Measured:
    names = {i: our_name(m, registry) for i, m in rows["metric"].items()}
    metrics = list(dict.fromkeys(n for n in names.values() if n))
    if not metrics:
        return {}
    progress(0, 1, f"Flickr8K {dataset}")
    study = flickr.flickr_correlations(settings, metrics, [dataset], n_boot=0, registry=registry)
    taus = study.table.set_index("metric")["tau"]
    return {i: (float(taus[n]), "") if n in taus.index else (np.nan, study.skipped.get(n, ""))
            for i, n in names.items() if n}


def measure_flickr_expert(settings: Settings, rows: pd.DataFrame, registry: Registry,
                          progress: ProgressFn) -> Measured:
    return _flickr("expert", settings, rows, registry, progress)


def measure_flickr_crowdflower(settings: Settings, rows: pd.DataFrame, registry: Registry,
                               progress: ProgressFn) -> Measured:
    return _flickr("crowdflower", settings, rows, registry, progress)


def _file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def measure_tai(settings: Settings, rows: pd.DataFrame, registry: Registry,
                progress: ProgressFn) -> Measured:
    """Pearson r on SICK TEST of each shipped ReVal model. Evaluating encodes ~9,800 sentences with an
    ensemble of seven (minutes), so r is kept in the score cache under the checkpoint's and SICK.txt's
    digests: a second run, or another data dir with the same SICK, reads it back."""
    from muttlab.learned.reval import evaluate_model
    from muttlab.metrics.reval.metric import PUBLISHED_DIR, checkpoint_name

    cache = cache_for(settings)
    sick_digest = _file_digest(data_file(settings, DATA_LAYOUT["sick"]))
    out: Measured = {}
    for i, paper in rows["metric"].items():
        name = our_name(paper, registry)
        if name is None:
            continue
        model = TAI_MODELS[name]
        checkpoint = PUBLISHED_DIR / checkpoint_name(model)
        progress(0, 1, f"SICK test: {name}")
        if not checkpoint.is_file():
            out[i] = (np.nan, f"no shipped {name} model ({checkpoint} is missing)")
            continue
        key = item_key(f"reproduce:sick-test-pearson|{model}|ckpt:{_file_digest(checkpoint)}", "", "", sick_digest)
        cached = cache.get_many([key])
        if key not in cached:
            try:
                evaluation = evaluate_model(settings, model, "test", checkpoint=checkpoint, bootstrap=0)
            except MuttlabError as exc:
                out[i] = (np.nan, str(exc))
                continue
            cached[key] = float(evaluation.pearson)
            cache.put_many({key: cached[key]})
        out[i] = (cached[key], "")
    return out


def _for_metrics(rows: pd.DataFrame, metrics: set[str], registry: Registry) -> pd.DataFrame:
    """The rows whose metrics (both, for a correlation between two) are among ``metrics`` (ours or the paper's)."""
    def wanted(paper: str) -> bool:
        parts = paper.split("~")
        ours = (our_name(paper, registry) or "").split("~")
        return all(p == sick.GOLD or p in metrics or o in metrics for p, o in zip(parts, ours))

    return rows[[wanted(m) for m in rows["metric"]]]


def reproduce(settings: Settings, studies: Sequence[str] | str | None = None, registry: Registry | None = None,
              progress: ProgressFn | None = None, metrics: Sequence[str] | None = None) -> ReproductionReport:
    """Compute every published number of the chosen studies (all by default) and set it beside ours.

    Args:
      studies: names of the ``study`` column of the published file that a registered study measures
        (:func:`muttlab.human.studies.published`), a list or a
        comma-separated string; None or ``all`` for every one.
      metrics: only the numbers of these metrics (registry or paper names); None for all.
    Returns:
      :class:`ReproductionReport`.
    Raises:
      MuttlabError: no data dir, a missing or malformed published file, an unknown study.
    """
    published = load_published(settings)
    chosen = choose_studies(studies, list(dict.fromkeys(published["study"])))
    registry = registry or registry_for(settings)
    measuring = study_registry.published()
    report = (lambda done, total, message: progress(done, total, message)) if progress else (lambda *a: None)
    frames = []
    for step, study in enumerate(chosen):
        rows = published[published["study"] == study]
        if study == "mutt_accuracy":
            rows = pd.concat([rows, _held_back_rows(rows)], ignore_index=True)
        if metrics is not None:
            rows = _for_metrics(rows, set(metrics), registry)
            if rows.empty:
                continue
        entry = measuring.get(study)
        measured: Measured = study_registry.load(entry.measure)(settings, rows, registry, report) if entry else {}
        frame = rows.rename(columns={"value": "published"}).copy()
        frame["metric_ours"] = [our_name(m, registry) or "" for m in frame["metric"]]
        values, why, lab = [], [], []
        for i, row in frame.iterrows():
            value, reason, *lab_value = measured.get(i, (np.nan, ""))
            if np.isnan(value) and not reason:
                reason = NOT_COMPUTABLE.get(row["metric"]) or f"the lab has no computation for study {study!r}"
            values.append(value)
            why.append(reason)
            lab.append(lab_value[0] if lab_value else np.nan)
        frame["measured"] = values
        frame["measured_lab"] = lab
        frame["reason"] = why
        frames.append(frame)
    report(len(chosen), len(chosen), "done")
    if not frames:
        raise MuttlabError(f"no published number of {', '.join(chosen)} is for {', '.join(metrics or [])}")
    frame = pd.concat(frames, ignore_index=True)
    frame["refs"] = frame["refs"].astype("Int64")
    frame["difference"] = frame["measured"] - frame["published"]
    frame["tolerance"] = frame["statistic"].map(TOLERANCES)
    both = frame["measured"].notna() & frame["published"].notna()
    # A hair over the tolerance from float arithmetic (97.52 - 95.52) must not flip the verdict.
    within = frame["difference"].abs() <= frame["tolerance"] + 1e-9
    frame["within"] = np.where(both, within, None)
    for i in frame.index:
        if frame.at[i, "reason"]:
            continue
        if np.isnan(frame.at[i, "published"]):
            frame.at[i, "reason"] = HELD_BACK
        elif both[i] and not within[i]:
            frame.at[i, "reason"] = known_reason(frame.at[i, "study"], frame.at[i, "metric"],
                                                 frame.at[i, "subset"]) or "no known reason"
    lab_rules = settings.rules.signature()
    differs = frame["measured_lab"].notna() & frame["measured"].notna() \
        & ((frame["measured_lab"] - frame["measured"]).abs() > 1e-9)
    frame["rule_note"] = [f"{PAPER_TIES}; the lab's rules ({lab_rules}) give {number_text(round(v, 4))}" if d else ""
                          for v, d in zip(frame["measured_lab"], differs)]
    notes = []
    if "mutt_accuracy" in set(frame["study"]):
        notes.append(f"MUTT accuracies are measured with {PAPER_TIES} (tie:exact), whatever the tie rule; "
                     f"`muttlab run` and the grid judge by the lab's rules ({lab_rules}): measured_lab, where the "
                     f"two differ in {int(differs.sum())} number(s); see docs/corruptions.md")
    return ReproductionReport(frame[COLUMNS], [s for s in chosen if s in set(frame["study"])], notes)

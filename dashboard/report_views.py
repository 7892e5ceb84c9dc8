"""The reports of the study pages (Severity, Published vs measured, Human judgments, Correlation studies): each
view's numbers as the page shows them for the same link, as :class:`~muttlab.dashboard.report_document.Section`
values, built with the page's figure builders (:mod:`muttlab.dashboard.charts`) and formatters
(:mod:`muttlab.dashboard.number_format`).

Where the page shows shipped numbers (the link asks for the default view and the snapshot is this server's), so
does the report, with the snapshot's label; any other request is computed through :mod:`muttlab.api`, as the page
computes it when its button is pressed. :data:`SECTIONS` maps each page to its builder.
"""
from __future__ import annotations

from typing import Callable

import pandas as pd

from muttlab import api
from muttlab.dashboard import charts
from muttlab.dashboard.number_format import correlation_formatters, correlation_text, fmt_score, rating_text
from muttlab.dashboard.published_table import published_table_html, rules_note
from muttlab.dashboard.report_document import Section
from muttlab.dashboard.view import View
from muttlab.errors import MuttlabError
from muttlab.settings import Settings

PUBLISHED_COLUMNS = ["study", "source", "metric", "subset", "refs", "published", "measured", "measured_lab",
                     "difference", "tolerance", "within", "reason", "rule_note"]
METHOD_LABELS = {"pearson": "Pearson r", "spearman": "Spearman ρ", "kendall_b": "Kendall τ-b",
                 "kendall_c": "Kendall τ-c"}
FLICKR_KEYS = ("metrics", "ratings", "boot")
UNIT_KEYS = ("unit", "order", "threshold", "assignments", "sweeps")


def _label(corruption: str) -> str:
    return api.corruption_label(corruption)


def _current(settings: Settings, snapshot) -> bool:
    """Whether a shipped snapshot's numbers are this server's (data, code, metrics, rules)."""
    return not api.snapshot_differences(settings, snapshot)


# ------------------------------------------------------------------------------------------------- severity

def severity_curve_section(curve: pd.DataFrame, corruption: str, source: str, note: str = "") -> Section:
    """The Severity page's view of ``curve`` (:func:`muttlab.api.severity`'s frame, with its ``attrs``): how many
    sentences, which curves are not monotone, the chart and the numbers."""
    STRENGTHS = api.STRENGTHS
    label = _label(corruption)
    section = Section().heading(f"Severity: {label}")
    if note:
        section.note(note)
    kept, offered = curve.attrs.get("kept"), curve.attrs.get("sentences")
    if kept is not None:
        strengths = ", ".join(str(k) for k in dict.fromkeys(curve["strength"]))
        section.note(f"n = {kept} of {offered} {source} sentences take {label} at every strength {strengths} "
                     f"({STRENGTHS.get(corruption, '')}); each point is the same sentences at one strength.")
    flagged = curve.loc[curve["monotone"] != "yes"].drop_duplicates("metric")
    for row in flagged.itertuples(index=False):
        section.note(f"{row.metric} is not monotone ({row.monotone}): a stronger corruption is penalised less "
                     "than a weaker one.")
    if flagged.empty:
        section.note("Every curve is monotone: no metric penalises a stronger corruption less, beyond the tie rule "
                     "and the pass rates' 95% intervals.")
    return section.figure(charts.severity_curves(curve, label, STRENGTHS.get(corruption, ""))).table(
        curve, css="severity")


def severity(settings: Settings, view: View) -> list[Section]:
    """The Severity view: without ``corruption=``, the shipped first curve (as the page's first visit shows it);
    else the link's curve, computed."""
    first = api.severity_default()
    corruption = view.value("corruption")
    if corruption is None:
        snapshot = api.snapshot("severity")
        if snapshot is not None and snapshot.content.request == first:
            differences = api.snapshot_differences(settings, snapshot)
            note = snapshot.label() + (" Not this server's numbers: " + "; ".join(differences) + "."
                                       if differences else "")
            return [severity_curve_section(snapshot.content.table(), first.corruption, "MUTT original", note)]
        corruption = first.corruption
    metrics = view.values("metrics") or list(first.metrics)
    strengths = [int(k) for k in view.values("strengths")] or list(first.strengths)
    refs = int(view.values("refs")[0]) if view.values("refs") else 5
    if len(strengths) < 2:
        raise MuttlabError("a severity view needs at least two strengths (strengths=1,2,3)")
    curve = api.severity(settings, corruption, metrics, strengths, refs=refs)
    source = "sample" if settings.data_dir is None else "MUTT original"
    return [severity_curve_section(curve, corruption, source, f"Computed now, {refs} references per sentence, judged "
                                                               f"under the rules {settings.rules.signature()}.")]


# ------------------------------------------------------------------------------------------------ published

def published_sections(frame: pd.DataFrame, studies: list[str] | None, only_off: bool, note: str,
                       lab_rules: str) -> list[Section]:
    """The Published vs measured page's view of ``frame``: its counts, which rules the numbers follow, and one
    table per study (the page's own table, :func:`muttlab.dashboard.published_table.published_table_html`)."""
    frame = frame[[c for c in PUBLISHED_COLUMNS if c in frame.columns]
                  + [c for c in frame.columns if c not in PUBLISHED_COLUMNS]]
    head = Section().heading("Published vs measured").note(note)
    rules = rules_note(frame, lab_rules)
    if rules:
        head.note(rules)
    if "within" in frame.columns:
        within = int(frame["within"].astype(bool).sum())
        head.numbers([("published numbers", str(len(frame))), ("within tolerance", str(within)),
                      ("outside", str(len(frame) - within))], "counts")
    shown = frame[frame["study"].isin(studies)] if studies and "study" in frame.columns else frame
    if only_off and "within" in shown.columns:
        shown = shown[~shown["within"].astype(bool)]
    sections = [head]
    groups = list(dict.fromkeys(shown["study"])) if "study" in shown.columns else [None]
    from muttlab.dashboard import services

    titles = services.published_titles()  # studies and subsets named as the page names them
    for study in groups:
        part = (shown if study is None else shown[shown["study"] == study]).reset_index(drop=True)
        subsets = [v for v in part["subset"].dropna().unique() if isinstance(v, str)] if "subset" in part else []
        sections.append(Section().markup_table(published_table_html(part, services.corruption_labels(subsets)),
                                               titles.get(study, study or "")))
    if shown.empty:
        head.note("No published number matches the filter.")
    return sections


def published(settings: Settings, view: View) -> list[Section]:
    """The Published vs measured view as it ships (a server's own recomputation lives in its memory only: the
    page's download passes it to :func:`published_sections`)."""
    snapshot = api.snapshot("published")
    if snapshot is None:
        raise MuttlabError("this installation ships no published-vs-measured numbers; `muttlab reproduce` "
                           "measures them")
    differences = api.snapshot_differences(settings, snapshot)
    note = (f"Shipped numbers, computed {snapshot.created} with muttlab {snapshot.muttlab_version} on the real data "
            f"(stamp {snapshot.stamp.digest()})." + (" Not this server's numbers: " + "; ".join(differences) + "."
                                                     if differences else ""))
    return published_sections(snapshot.content.frame, view.values("study"), view.value("off") == "1", note,
                              snapshot.stamp.rules)


# ------------------------------------------------------------------------------------------- human judgments

def human_sections(numbers, corruption: str, metric: str, matrix_metrics: list[str], method: str,
                   note: str) -> list[Section]:
    """The Human judgments page's view of a SICK study's numbers (:func:`muttlab.api.study_numbers`, or the
    shipped entry): the pairs, means, histograms, the pairwise correlation matrix and the summary."""
    label = _label(corruption)
    summary = numbers.summary.set_index("variable")
    section = Section().heading(f"{label}: gold vs {metric}").note(note)
    for line in numbers.notes:
        section.note(line)
    section.numbers([("pairs", str(numbers.pairs)),
                     ("gold: mean ± sd",
                      f"{rating_text(summary.loc['gold', 'mean'])} ± {rating_text(summary.loc['gold', 'std'])}"),
                     (f"{metric}: mean ± sd",
                      f"{fmt_score(summary.loc[metric, 'mean'])} ± {fmt_score(summary.loc[metric, 'std'])}")],
                    "counts")
    section.figure(charts.score_histograms(numbers.histograms, metric, "SICK gold relatedness (1–5)",
                                           f"{metric} score of the corruption"))
    shown = ["gold"] + [m for m in matrix_metrics if m in numbers.metrics]
    matrix = numbers.correlations[method].loc[shown, shown]
    name = METHOD_LABELS.get(method, method)
    section.heading("Pairwise correlation").figure(charts.correlation_heatmap(matrix, name, f"{name}, {label}"))
    section.table(matrix.reset_index(names=""), "The matrix as a table", css="matrix",
                  formatters={c: correlation_text for c in matrix.columns})
    return [section.table(numbers.summary, "Summary statistics", css="summary")]


def human(settings: Settings, view: View) -> list[Section]:
    """The Human judgments view: the shipped study where it covers the link's choice and is this server's, else
    the study computed (it needs the data dir)."""
    sick = api.study_choices("sick")
    defaults = [m for m in sick.STUDY_METRICS]
    corruption = view.value("corruption", sick.SICK_CORRUPTIONS[0])
    metric = view.value("metric", defaults[0])
    method = view.value("method", "pearson")
    matrix_metrics = view.values("metrics") or defaults
    reading = view.value("reading", sick.READINGS[0])
    reference = "sentence" if reading == "paper" else view.value("reference", "pool")
    wanted = list(dict.fromkeys([metric] + matrix_metrics))
    snapshot = api.snapshot("human")
    entry = snapshot.content.sick_study(corruption, reading) if snapshot is not None else None
    covered = (entry is not None and set(wanted) <= set(entry.metrics) and method in entry.correlations
               and reference == entry.reference)
    if covered and (settings.using_sample or _current(settings, snapshot)):
        return human_sections(entry, corruption, metric, matrix_metrics, method, snapshot.label())
    if settings.using_sample:
        raise MuttlabError("this choice needs the data dir (MUTTLAB_DATA_DIR): the shipped study does not cover it")
    study = api.correlate(settings, "sick", corruption=corruption, metrics=wanted, method=method,
                          reference=reference, reading=reading)
    numbers = api.study_numbers(study)
    if metric not in numbers.metrics:
        raise MuttlabError(f"{metric} could not be scored: {study.skipped.get(metric, 'unavailable')}")
    return human_sections(numbers, corruption, metric, matrix_metrics, method,
                          f"Computed now, judged under the rules {settings.rules.signature()}.")


# -------------------------------------------------------------------------------------- correlation studies

def flickr_section(table: pd.DataFrame, n_boot: int, seed: int, note: str) -> Section:
    """The Flickr8K part of the Correlation page: the bars, τ by metric and data set, the whole table."""
    section = Section().heading("Flickr8K: correlation with human ratings of captions").note(note)
    section.figure(charts.correlation_bars(table, "tau", "ci_low", "ci_high", colour="dataset",
                                           title="Kendall τ × 100 with human ratings (95% CI)"))
    wide = table.pivot_table(index="metric", columns="dataset", values="tau", sort=False).reset_index()
    section.table(wide, "τ × 100 by metric", css="by-metric",
                  formatters={c: correlation_text for c in wide.columns if c != "metric"})
    section.table(table, css="flickr", formatters=correlation_formatters(table))
    return section.note(f"{n_boot} bootstrap resamples, seed {seed}.")


def units_section(main: pd.DataFrame, sweeps: pd.DataFrame, notes, unit: int, note: str) -> Section:
    """The ΔBLEU unit study part of the Correlation page: its notes, the bars, the table, and the sweeps."""
    section = Section().heading("ΔBLEU: correlation on observation units").note(note)
    for line in notes:
        section.note(line)
    section.figure(charts.correlation_bars(main, "rho", "rho_low", "rho_high",
                                           title=f"Spearman ρ with human ratings, units of {unit} (95% interval)"))
    section.table(main, css="units", formatters=correlation_formatters(main))
    if not sweeps.empty:
        section.heading("Sweeps", 3)
        for sweep in ("unit_size", "order", "threshold"):
            part = sweeps[sweeps["sweep"] == sweep]
            section.figure(charts.sweep_lines(part, sweep, "rho", "rho_low", "rho_high", log_x=sweep == "unit_size"))
        section.table(sweeps, css="sweeps", formatters=correlation_formatters(sweeps))
    return section


def correlation(settings: Settings, view: View) -> list[Section]:
    """The Correlation studies view: each study shipped where the link leaves its settings out (and the snapshot
    is this server's, or the server has no data), else computed with the link's settings."""
    snapshot = api.snapshot("human")
    shipped = snapshot is not None and (settings.using_sample or _current(settings, snapshot))
    defaults = api.study_defaults()
    sections = []
    if shipped and not any(view.value(k) for k in FLICKR_KEYS):
        flickr = snapshot.content.flickr
        sections.append(flickr_section(flickr.table, flickr.n_boot, flickr.seed, snapshot.label()))
    elif settings.using_sample:
        raise MuttlabError("these studies need the Flickr8k judgments: set the data dir (MUTTLAB_DATA_DIR)")
    else:
        n_boot = int(view.value("boot", str(defaults.flickr_boot)))
        study = api.correlate(settings, "flickr8k", metrics=view.values("metrics") or list(defaults.flickr_metrics),
                              datasets=tuple(view.values("ratings")) or ("expert", "crowdflower"), n_boot=n_boot)
        sections.append(flickr_section(study.table, study.n_boot, study.seed, "Computed now."))
    units = defaults.units
    if shipped and not any(view.value(k) for k in UNIT_KEYS):
        part = snapshot.content.units
        sections.append(units_section(part.main, part.sweeps, part.notes, part.settings["unit"], snapshot.label()))
    else:
        DEFAULT_SWEEP_ASSIGNMENTS = api.study_choices("dbleu").DEFAULT_SWEEP_ASSIGNMENTS
        unit = int(view.value("unit", str(units["unit"])))
        assignments = int(view.value("assignments", str(units["assignments"])))
        study = api.correlate(settings, "dbleu", unit_size=unit, order=int(view.value("order", str(units["order"]))),
                              threshold=float(view.value("threshold", str(units["threshold"]))),
                              assignments=assignments, seed=settings.seed,
                              sweep_assignments=min(assignments, DEFAULT_SWEEP_ASSIGNMENTS),
                              sweeps=view.value("sweeps", "1" if units["sweeps"] else "0") == "1")
        sections.append(units_section(study.main, study.sweeps, study.notes, unit, "Computed now."))
    return sections


# ------------------------------------------------------------------------------------ meta-evaluation, profile

def meta_eval(settings: Settings, view: View) -> list[Section]:
    """The Meta-evaluation page's view of a shipped TED pair (``pair``, ``statistic``, ``metric``): its ranking
    with clusters and baselines, the metrics it could not score, and the scatter of pairs of outputs. An upload's
    evaluation is kept by the server only while it runs and is not linked: no report of it."""
    from muttlab.dashboard.services import meta

    pairs = meta.meta_pairs_shipped()
    if not pairs:
        return [Section().heading("Meta-evaluation").note("This build ships no meta-evaluation.")]
    pair = view.value("pair", pairs[0])
    pair = pair if pair in pairs else pairs[0]
    statistics = list(api.meta_statistics())
    statistic = view.value("statistic", statistics[0])
    statistic = statistic if statistic in statistics else statistics[0]
    result = meta.shipped_meta(pair)
    section = Section().heading(f"Meta-evaluation: WMT21 TED {pair}")
    section.note(meta.shipped_caption(result, meta.shipped_meta_notes(settings)))
    section.note(f"{statistic}: {api.meta_statistics()[statistic]}")
    section.table(meta.ranking_frame(result, statistic), "Ranking", css="ranking", formatters={})
    if result.skipped:
        section.table(meta.skipped_frame(result), "Not evaluated: these metrics cannot score this pair",
                      css="skipped", formatters={})
    scored = [m for m in result.metrics if m in (result.scores or {})]
    if scored:
        metric = view.value("metric", "chrF" if "chrF" in scored else scored[0])
        metric = metric if metric in scored else scored[0]
        grouped = meta.scatter_statistic(statistic)
        pairs_frame = meta.pairs_of(("shipped", pair), result, metric, grouped)
        section.figure(charts.meta_scatter(pairs_frame, metric, result.human,
                                           f"{metric} on {pair}: pairs of outputs of one source"))
        section.note(f"{len(pairs_frame):,} pairs; ε = {fmt_score(pairs_frame.attrs['epsilon'])}.")
    return [section]


def profile(settings: Settings, view: View) -> list[Section]:
    """The Metric profile page's view of shipped profiles (``metric``, ``vs``): each section's dots with their
    intervals and its table. A profile that does not ship is built on the page after a click, not by a report."""
    from muttlab.dashboard.services import meta

    shipped = meta.shipped_profiles()
    wanted = [m for m in (view.value("metric", "chrF"), view.value("vs")) if m]
    head = Section().heading("Metric profile: " + " vs ".join(wanted))
    missing = [m for m in wanted if m not in shipped]
    if missing:
        head.note(f"Not shipped, so not in this report: {', '.join(missing)} (the page builds a profile after a "
                  "click). Shipped: " + ", ".join(shipped) + ".")
    for note in meta.shipped_profile_notes(settings):
        head.note(f"Computed under another stamp than this server's: {note}")
    profiles = [shipped[m] for m in wanted if m in shipped]
    sections = [head]
    for name in meta.PROFILE_SECTIONS:
        tables = meta.section_tables(name, profiles)
        if not tables:
            continue
        sections.append(Section().heading(meta.SECTION_TITLES[name], 3).figure(meta.profile_figure(name, tables))
                        .table(meta.profile_shown(name, tables), css=f"profile-{name}", formatters={}))
    return sections


SECTIONS: dict[str, Callable[[Settings, View], list[Section]]] = {
    "severity": severity, "published": published, "human": human, "correlation": correlation,
    "meta_eval": meta_eval, "profile": profile}

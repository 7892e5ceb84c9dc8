"""``muttlab run --suite FILE``: a suite file instead of a built-in suite (:mod:`muttlab.suites`).

A trial suite (``muttlab corrupt --input ... --output``) goes back to ``muttlab run``'s grid; a contrastive
challenge set (WMT TSV, ACES, DEMETR, contrastive JSONL) is reported per phenomenon the way those papers
report: accuracy with ties as failures and the Kendall-τ-like statistic, plus DEMETR's per-severity table
and ACES' weighted summary. Every table counts the unsupported pairs and the records not applied.
"""
from __future__ import annotations

import argparse
import json
import sys

from muttlab.cli.common import emit, render
from muttlab.escaping import csv_frame
from muttlab.api import Suite
from muttlab.settings import Settings

MAX_PROBLEMS_SHOWN = 20


def report_problems_of(problems, label: str) -> None:
    """Rows left out, each with its line number, on stderr (the good rows are kept)."""
    if not problems:
        return
    print(f"warning: {len(problems)} malformed row(s) left out of {label}:", file=sys.stderr)
    for problem in problems[:MAX_PROBLEMS_SHOWN]:
        print(f"  {problem}", file=sys.stderr)
    if len(problems) > MAX_PROBLEMS_SHOWN:
        print(f"  ... and {len(problems) - MAX_PROBLEMS_SHOWN} more", file=sys.stderr)


def report_problems(suite_file) -> None:
    report_problems_of(suite_file.problems, repr(suite_file.suite.name))


def run_if_contrastive(args: argparse.Namespace) -> bool:
    """Read ``args.suite``; a contrastive set is scored and printed here (True). A trial suite is left to the
    grid (False), which loads it again through :func:`muttlab.api.load_suite`."""
    from muttlab.cli.common import settings_from_args
    from muttlab import api

    suite_file = api.read_suite(args.suite, format=args.format_in)
    report_problems(suite_file)
    if not suite_file.contrastive:
        return False
    results = api.run_challenge(settings_from_args(args), suite_file, args.metrics)
    if args.trials_out is not None:
        from muttlab.api import write_trials_table
        signatures = {m: results.signature(m) for m in results.signatures}
        if args.trials_out.suffix in (".jsonl", ".parquet"):
            write_trials_table(results.table, signatures, args.trials_out)
        else:
            emit(csv_frame(results.table.assign(signature=results.table["metric"].map(signatures))),
                 args.trials_out)
    print(f"rules {results.rules.signature()} (ties are failures)", file=sys.stderr)
    summary = results.summary()
    unsupported = summary.groupby("metric")["unsupported"].sum()
    for metric, count in unsupported.items():
        if count:
            print(f"note: {metric}: {count} pair(s) it cannot score (a target language outside its `languages`, "
                  "or empty text where it declares scores_empty_text = False) are marked unsupported, not scored",
                  file=sys.stderr)
    if results.not_applied:
        print(f"note: {sum(results.not_applied.values())} record(s) the data set marks as not applied "
              "(perturbation not possible) are no test items; counted per phenomenon in `not_applied`",
              file=sys.stderr)
    emit_challenge_tables(challenge_tables(results, suite_file), args.format, args.output)
    return True


def challenge_tables(results, suite_file) -> dict:
    """The tables a challenge set is reported by, by name: ``phenomena`` always, ``severity`` for DEMETR,
    ``aces`` for ACES; each row carries its metric's results signature (which names the rules)."""
    from muttlab.api import DEMETR_JSON, is_aces

    signatures = {m: results.signature(m) for m in results.signatures}
    tables = {"phenomena": results.summary()}
    if suite_file.format == DEMETR_JSON:
        tables["severity"] = results.by_severity()
    if is_aces(results):
        tables["aces"] = results.aces()
    return {name: frame.assign(signature=frame["metric"].map(signatures)) for name, frame in tables.items()}


# What each table is, for a reader of the text formats.
TABLE_TITLES = {"severity": "Per severity:",
                "aces": "ACES summary (category τ = mean over its phenomena; score = Σ weight × τ):"}


def emit_challenge_tables(tables: dict, fmt: str, output) -> None:
    """``tables`` as exactly one document: JSON, one object with a field per table; CSV, the per-phenomenon
    table, the others beside ``--output`` (``NAME.severity.csv``, ``NAME.aces.csv``) or, on standard output,
    left to the JSON form; the text formats, one table after the other with its title."""
    if fmt == "json":
        emit(render(None, "json", records={name: json.loads(frame.to_json(orient="records", double_precision=15))
                                           for name, frame in tables.items()}), output)
        return
    if fmt == "csv":
        emit(csv_frame(tables["phenomena"]), output)
        others = [name for name in tables if name != "phenomena"]
        for name in others:
            if output is not None:
                emit(csv_frame(tables[name]), output.with_name(f"{output.stem}.{name}{output.suffix}"))
        if others and output is None:
            print(f"note: the {' and '.join(others)} table(s) are in --format json, or beside --output FILE.csv "
                  f"({', '.join(f'FILE.{n}.csv' for n in others)})", file=sys.stderr)
        return
    parts = [render(frame.drop(columns=["signature"]), fmt, decimals=3) for frame in tables.values()]
    titles = [""] + [f"\n{TABLE_TITLES[name]}\n" for name in list(tables)[1:]]
    emit("".join(t + p for t, p in zip(titles, parts)), output)


def report_user_suite(args: argparse.Namespace, settings: Settings, types) -> Suite:
    """``muttlab corrupt --input``: a user's sentences corrupted by every generator that applies, written to
    ``--output`` as a suite file when one is given (then nothing goes to the pair store)."""
    from muttlab.api import read_user_sentences, user_suite, write_suite

    sentences = read_user_sentences(args.input)
    report_problems_of(sentences.problems, str(args.input))
    suite = user_suite(sentences, types, settings.seed, name=args.input.stem)
    if args.output is not None:
        count = write_suite(suite, args.output)
        print(f"wrote {args.output} ({count} trials from {len(sentences.items)} sentences; run it with "
              f"`muttlab run --suite {args.output}`)", file=sys.stderr)
        import pandas as pd
        counts = pd.Series([t.corruption for t in suite.trials], dtype=str).value_counts(sort=False)
        emit(render(counts.rename_axis("corruption").reset_index(name="trials"), "table"), None)
    return suite

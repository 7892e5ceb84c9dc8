"""Print docs/meta_eval.md's tables of tie-calibrated verdicts: every metric whose shipped calibration on a study's
pair is informative, judged on MUTT, DEMETR and MSLC24-B under the default rule and under that calibration
(:func:`muttlab.api.compare_rules`).

Usage (from the repository root, with the real data)::

    MUTTLAB_DATA_DIR=/path/to/data .venv/bin/python scripts/compare_rules_tables.py [--rule calibrated:mqm-ted:zh-en]

Scores come from the score cache (METEOR, BERTScore and the learned metrics over DEMETR's 35,000 pairs take a
while on a cold one). Markdown on standard output; progress on standard error.
"""
from __future__ import annotations

import argparse
import sys

import pandas as pd

from muttlab import api
from muttlab.escaping import markdown
from muttlab.rules import parse_tie_rule

SEVERITIES = ("base", "minor", "major", "critical")


def _moved(before: float, after: float) -> str:
    return f"{before:.1f} → {after:.1f}"


def _table(frame: pd.DataFrame) -> str:
    return frame.to_markdown(index=False) + "\n"


def tables(result) -> str:
    out = []
    summary = result.summary[result.summary["n"] > 0]
    unscored = result.summary[result.summary["n"] == 0]
    out.append("All trials of each suite, accuracy % under the default rule → under the calibrated ε (ties %, the "
               "same way):\n")
    rows = []
    for metric, part in summary.groupby("metric", sort=False):
        row = {"metric": metric, "ε": f"{result.epsilons[metric]:.3g}"}
        for r in part.itertuples(index=False):
            row[f"{r.suite} accuracy"] = _moved(r.accuracy_default, r.accuracy_compared)
            row[f"{r.suite} ties"] = _moved(r.ties_default, r.ties_compared)
        rows.append(row)
    out.append(_table(pd.DataFrame(rows)))
    cells = result.table
    for refs in (5, 20):
        mutt = cells[(cells["suite"] == "mutt") & (cells["refs"] == refs)]
        wide = mutt.pivot(index="metric", columns="group", values="accuracy_default").round(1).astype(str) + " → " \
            + mutt.pivot(index="metric", columns="group", values="accuracy_compared").round(1).astype(str)
        wide = wide.reindex(index=list(dict.fromkeys(mutt["metric"])), columns=list(dict.fromkeys(mutt["group"])))
        out.append(f"\nMUTT at {refs} references, accuracy % per corruption type, default → calibrated:\n")
        out.append(_table(wide.reset_index()))
    demetr = cells[cells["suite"] == "demetr"]
    if not demetr.empty:
        rows = []
        for metric, part in demetr.groupby("metric", sort=False):
            row = {"metric": metric}
            for severity in SEVERITIES:
                chosen = part[part["severity"] == severity]
                n = chosen["n"].to_numpy()
                before = (chosen["accuracy_default"] * n).sum() / n.sum()
                after = (chosen["accuracy_compared"] * n).sum() / n.sum()
                row[severity] = _moved(before, after)
            rows.append(row)
        out.append("\nDEMETR, accuracy % per severity (its perturbations' test items pooled), default → "
                   "calibrated:\n")
        out.append(_table(pd.DataFrame(rows)))
        change = demetr.pivot(index="group", columns="metric", values="change").round(1)
        change = change.reindex(index=list(dict.fromkeys(demetr["group"])),
                                columns=list(dict.fromkeys(demetr["metric"])))
        out.append("\nDEMETR, the change of accuracy (points) per perturbation, calibrated − default:\n")
        out.append(_table(change.reset_index().rename(columns={"group": "perturbation"})))
    if not result.refused.empty or not unscored.empty:
        out.append("\nNot judged under the calibration:\n")
    for (suite, reason), part in result.refused.assign(
            why=[r.reason.replace(f"{r.metric}'s", "the metric's") for r in result.refused.itertuples()]
    ).groupby(["suite", "why"], sort=False):
        out.append(f"* {suite}, {', '.join(map(markdown, part['metric']))}: {markdown(reason)}")
    for suite, part in unscored.groupby("suite", sort=False):
        out.append(f"* {suite}, {', '.join(map(markdown, part['metric']))}: the metric scores none of its trials "
                   "(it scores English only)")
    return "\n".join(out) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rule", default="calibrated:mqm-ted:zh-en")
    parser.add_argument("--suites", default="mutt,demetr,mslc")
    args = parser.parse_args(argv)
    settings = api.load_settings()
    if settings.data_dir is None:
        print("compare_rules_tables: set MUTTLAB_DATA_DIR to the datasets folder", file=sys.stderr)
        return 2
    rule = parse_tie_rule(args.rule, "--rule")
    from muttlab.engine.verdict import calibrations
    found = calibrations(settings)
    metrics = [c.metric for c in found.entries if (c.study, c.pair) == (rule.study, rule.pair) and c.informative]
    result = api.compare_rules(settings, args.rule, metrics, args.suites.split(","),
                               progress=lambda done, total, message: print(f"  {message}", file=sys.stderr))
    print(tables(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

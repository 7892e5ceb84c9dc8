"""Suites and trial-level results as JSON Lines or Parquet, with a fixed schema that ``datasets`` loads
(``datasets.load_dataset("parquet", data_files=...)`` or ``"json"``).

Suite schema (one trial per row / line; the same fields ``read_suite`` reads as ``trials-jsonl``):

=============  ==============  =====================================================================
field          type            meaning
=============  ==============  =====================================================================
id             string          unique within the suite (``drop_content/u17``)
corruption     string          corruption type or phenomenon
family         string          meaning-altering / meaning-preserving / fluency-disrupting / contrastive
rule           string          ``orig > corr`` or ``difference``
original       string          the clean sentence (a challenge set's good translation)
corrupted      string          the corruption (the incorrect translation)
references     list<string>    ordered reference pool
source         string          where the pair came from (``user:u17``, ``aces-tsv:aces#12``...)
src            string          source sentence (translation challenge sets), "" otherwise
lang           string          target language, ISO 639-1
human_score    double (null)   a gold score where one exists
expectation    string (null)   which text must win where it is not the rule's (``second better``:
                               DEMETR's reference baseline); null = the rule
severity       string (null)   the data set's severity of the phenomenon (DEMETR: base / minor / ...)
=============  ==============  =====================================================================

Records a data set marks as not applied (DEMETR's ``pert_check`` false) are no trials and are not written;
``muttlab export`` reports their count. Trial-level results (``muttlab run --trials-out``) carry each pair's
outcome, ``unsupported`` included, with its severity and expectation.
"""
from __future__ import annotations

import json
from pathlib import Path
import pandas as pd

from muttlab.corruptions import catalog
from muttlab.trials import Suite, Trial
from muttlab.errors import MuttlabError
from muttlab.suites.model import SuiteFile

SUITE_FIELDS = ("id", "corruption", "family", "rule", "original", "corrupted", "references", "source", "src", "lang",
                "human_score", "expectation", "severity")
EXPORT_SUFFIXES = (".jsonl", ".parquet")


def _family_rule(name: str, contrastive: bool) -> tuple[str, str]:
    if contrastive:
        return "contrastive", "orig > corr"
    try:
        ctype = catalog.get(name)
    except KeyError:
        return "", ""
    return ctype.family.value, ctype.rule.value


def suite_record(trial: Trial, src: str = "", lang: str = "en", contrastive: bool = False) -> dict:
    family, rule = _family_rule(trial.corruption, contrastive)
    return {"id": trial.id, "corruption": trial.corruption, "family": family, "rule": rule,
            "original": trial.original, "corrupted": trial.corrupted, "references": list(trial.references),
            "source": trial.source, "src": src, "lang": lang,
            "human_score": None if trial.human_score is None else float(trial.human_score),
            "expectation": None if trial.expectation is None else trial.expectation.value,
            "severity": trial.severity}


def suite_frame(suite: Suite | SuiteFile) -> pd.DataFrame:
    """A suite (or a suite file with its sources and languages) as a frame with :data:`SUITE_FIELDS`."""
    if isinstance(suite, SuiteFile):
        rows = [suite_record(t, suite.sources.get(t.id, ""), suite.language(t.id), suite.contrastive)
                for t in suite.suite.trials]
    else:
        rows = [suite_record(t) for t in suite.trials]
    return pd.DataFrame(rows, columns=list(SUITE_FIELDS))


def _suite_schema():
    import pyarrow as pa
    return pa.schema([(f, pa.list_(pa.string()) if f == "references" else
                       pa.float64() if f == "human_score" else pa.string()) for f in SUITE_FIELDS])


def write_frame(frame: pd.DataFrame, path: Path, schema=None) -> None:
    """A frame as ``.jsonl`` (one JSON object per line, UTF-8) or ``.parquet`` (pyarrow), by extension."""
    path = Path(path)
    if path.suffix not in EXPORT_SUFFIXES:
        raise MuttlabError(f"{path}: export to a .jsonl or .parquet file")
    try:
        if path.suffix == ".parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq
            table = pa.Table.from_pandas(frame, schema=schema, preserve_index=False)
            pq.write_table(table, path)
        else:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(frame_jsonl(frame))
    except OSError as exc:
        raise MuttlabError(f"cannot write {path}: {exc.strerror}") from None


def frame_jsonl(frame: pd.DataFrame) -> str:
    """A frame as JSON lines (one object per row; NaN as null), as ``.jsonl`` files and downloads hold it."""
    lines = []
    for record in frame.to_dict(orient="records"):
        clean = {k: (None if isinstance(v, float) and v != v else v) for k, v in record.items()}
        lines.append(json.dumps(clean, ensure_ascii=False, default=_plain) + "\n")
    return "".join(lines)


def _plain(value):
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def write_suite(suite: Suite | SuiteFile, path: Path) -> int:
    """Write a suite with the schema above; returns the number of trials written."""
    frame = suite_frame(suite)
    write_frame(frame, path, _suite_schema() if Path(path).suffix == ".parquet" else None)
    return len(frame)


def write_trials_table(table: pd.DataFrame, signatures: dict[str, str], path: Path) -> None:
    """Trial-level results (the runner's or a challenge set's table) with each metric's signature."""
    frame = table.assign(signature=table["metric"].map(signatures))
    # numpy booleans and integers become plain columns pyarrow types on its own.
    write_frame(frame.reset_index(drop=True), path)


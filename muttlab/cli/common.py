"""Options and output helpers shared by the subcommands."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from muttlab import escaping
from muttlab.errors import MuttlabError
from muttlab.rules import parse_tie_rule
from muttlab.settings import Settings, load_settings

if TYPE_CHECKING:  # pandas is imported by the commands that render tables, not by `muttlab --help`
    import pandas as pd

FORMATS = ("table", "csv", "json", "markdown", "latex")


def common_parser() -> argparse.ArgumentParser:
    """Options every subcommand accepts, before or after its name."""
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS keeps a value given before the subcommand from being reset by the subparser's default.
    common.add_argument("--data-dir", type=Path, default=argparse.SUPPRESS,
                        help="datasets folder (default: $MUTTLAB_DATA_DIR; the bundled sample when unset)")
    common.add_argument("--cache-dir", type=Path, default=argparse.SUPPRESS,
                        help="score cache folder (default: $MUTTLAB_CACHE_DIR or ~/.cache/muttlab)")
    common.add_argument("--no-cache", action="store_true", default=argparse.SUPPRESS,
                        help="neither read nor write the score cache")
    common.add_argument("--metric-path", action="append", default=argparse.SUPPRESS, metavar="MODULE:CALLABLE",
                        help="register an outside metric by import path (repeatable)")
    return common


def add_tie_rule_option(parser: argparse.ArgumentParser) -> None:
    """``--tie-rule`` for a command that judges trials (docs/corruptions.md, "Ties")."""
    parser.add_argument("--tie-rule", default=None, metavar="exact|TOLERANCE|calibrated:STUDY:PAIR",
                        help="when two scores count as tied (a tie fails the strict rules): 'exact' (the papers' "
                             "exact comparison), a relative tolerance from 1e-15 to below 0.01, or "
                             "'calibrated:STUDY:PAIR' (each metric's ε calibrated on expert judgments, e.g. "
                             "calibrated:mqm-ted:zh-en) (default: $MUTTLAB_TIE_RULE, else 1e-9)")


def settings_from_args(args: argparse.Namespace) -> Settings:
    settings = load_settings()
    data_dir = getattr(args, "data_dir", None)
    if data_dir is not None and not Path(data_dir).is_dir():
        raise MuttlabError(f"--data-dir {data_dir}: no such folder; point it at the datasets folder")
    cache_dir = getattr(args, "cache_dir", None)
    if cache_dir is not None and Path(cache_dir).exists() and not Path(cache_dir).is_dir():
        raise MuttlabError(f"--cache-dir {cache_dir}: is a file, not a folder; give a folder for the caches")
    if cache_dir is not None and not Path(cache_dir).exists():
        try:
            Path(cache_dir).mkdir(parents=True)
        except OSError as exc:
            raise MuttlabError(f"--cache-dir {cache_dir}: cannot be created ({exc.strerror or exc}); give a "
                               "folder that exists or can be made") from None
    extra = tuple(getattr(args, "metric_path", None) or ())
    tie_rule = getattr(args, "tie_rule", None)
    if tie_rule is not None:
        settings = settings.with_rules(tie=parse_tie_rule(tie_rule, "--tie-rule"))
    if settings.rules.tie.calibrated:  # an unknown study or pair is refused before a suite is read
        from muttlab import api
        api.check_rules(settings)
    return settings.with_overrides(
        data_dir=data_dir,
        cache_dir=getattr(args, "cache_dir", None),
        use_cache=False if getattr(args, "no_cache", False) else None,
        metric_paths=settings.metric_paths + extra if extra else None,
    )


def whole(low: int, high: int):
    """An argparse ``type`` for a whole number in ``low..high``: absurd values are usage errors (exit 2)
    rather than hours of work, an overflow deep in a library, or a hang."""
    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is outside the accepted range {low}..{high:,}")
        return value
    parse.__name__ = "whole number"
    return parse


def real(low: float, high: float):
    """An argparse ``type`` for a finite number in ``low..high`` (no nan, no inf)."""
    def parse(text: str) -> float:
        try:
            value = float(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not low <= value <= high:  # also false for nan
            raise argparse.ArgumentTypeError(f"{text.strip()} is outside the accepted range {low}..{high}")
        return value
    parse.__name__ = "number"
    return parse


def bound(parser: argparse.ArgumentParser, **types) -> None:
    """Give options already added to ``parser`` a checked type (:func:`whole`, :func:`real`), by destination."""
    for action in parser._actions:
        if action.dest in types:
            action.type = types[action.dest]


def split_names(text: str | None) -> list[str]:
    """The comma-separated items of an option value (``a, b,,c`` -> a, b, c); none for an empty value."""
    return [item.strip() for item in text.split(",") if item.strip()] if text else []


def parse_int_list(text: str, option: str, example: str) -> list[int]:
    """Whole numbers separated by commas (``5,10,20``); a MuttlabError naming the option otherwise."""
    try:
        values = [int(v) for v in split_names(text)]
    except ValueError:
        raise MuttlabError(f"{option} {text!r}: give whole numbers separated by commas, e.g. {example}") from None
    if not values:
        raise MuttlabError(f"{option} is empty: give whole numbers such as {example}")
    return values


def output_file(text: str) -> Path:
    """``--output``, checked when the command line is read: a run of minutes must not end in "cannot write"."""
    path = Path(text)
    try:
        if path.is_dir():
            raise argparse.ArgumentTypeError(f"{text!r} is a folder; give the name of a file")
        if not path.parent.is_dir():
            raise argparse.ArgumentTypeError(f"{text!r}: the folder {str(path.parent)!r} does not exist")
    except OSError as exc:  # e.g. a name longer than the file system allows; is_dir() does not hide that
        raise argparse.ArgumentTypeError(f"{text[:60]!r}…: not a usable file name ({exc.strerror})") from None
    return path


def add_output_options(parser: argparse.ArgumentParser, default: str = "table") -> None:
    parser.add_argument("--format", choices=FORMATS, default=default, help=f"output format (default: {default})")
    parser.add_argument("--output", "-o", type=output_file, help="write to this file instead of standard output")


def render(frame: "pd.DataFrame", fmt: str, records: list[dict] | None = None, index: bool = False,
           decimals: int = 1) -> str:
    """A frame as text in one of FORMATS, floats with ``decimals`` places (1 for accuracies, more for
    correlations; CSV and JSON keep full precision). ``records`` overrides what the JSON form holds. Text
    cells are escaped for the format (:func:`escaped`, :func:`muttlab.escaping.csv_frame`)."""
    if fmt == "csv":
        return escaping.csv_frame(frame, index=index)
    if fmt == "json":
        data = records if records is not None else json.loads(frame.to_json(orient="records", double_precision=15))
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return escaped(frame, fmt).to_markdown(index=index, floatfmt=f".{decimals}f") + "\n"
    if fmt == "latex":
        return escaping.latex_table(frame, index=index, float_format=f"%.{decimals}f")
    return frame.to_string(index=index, float_format=lambda v: f"{v:.{decimals}f}") + "\n"


def escaped(frame: "pd.DataFrame", fmt: str) -> "pd.DataFrame":
    """A copy of ``frame`` whose text cells, column names and index labels are escaped for ``markdown``; the frame
    itself for any other format (LaTeX is escaped as it is written: :func:`muttlab.escaping.latex_table`)."""
    return escaping.text_mapped(frame, escaping.markdown) if fmt == "markdown" else frame


class _NoBar:
    def close(self) -> None:
        pass


def progress_bar():
    """A tqdm bar on standard error and the ``progress(done, total, message)`` callback that the engine functions
    take; when standard error is not a terminal, no bar and tqdm is not imported (a script or a pipe shows
    nothing, and a short run does not pay for the import)."""
    if not sys.stderr.isatty():
        return _NoBar(), None
    from tqdm import tqdm

    bar = tqdm(total=0, file=sys.stderr)

    def progress(done: int, total: int, message: str) -> None:
        bar.total = total
        bar.n = done
        bar.set_description(message)
        bar.refresh()

    return bar, progress


def emit(text: str, output: Path | None) -> None:
    if output is None:
        # Started with its standard output closed (`muttlab metrics >&-`), Python has no sys.stdout at all.
        if sys.stdout is None:
            raise MuttlabError("standard output is closed, so nothing can be printed; write to a file with -o FILE")
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except OSError as exc:
            raise MuttlabError(f"cannot write to standard output ({exc.strerror or exc}); write to a file with "
                               "-o FILE") from None
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise MuttlabError(f"cannot write {output}: {exc.strerror}") from None
    print(f"wrote {output}", file=sys.stderr)

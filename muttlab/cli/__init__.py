"""``muttlab`` (and ``python -m muttlab``): every API function from the command line.

Each subcommand lives in its own module of this package and exposes ``register(subparsers, common)``;
its handler parses, calls the API and formats. Only the module of the command being run is imported,
so ``muttlab --help`` loads none of the scientific stack. Every error a user can fix (a
:class:`~muttlab.errors.MuttlabError`) prints one line on stderr and exits with status 2.
"""
from __future__ import annotations

import argparse
import gc
import importlib
import sys
import warnings

from muttlab.cli.common import common_parser
from muttlab.errors import MuttlabError
from muttlab.redact import secrets

# name -> (module in this package, one-line summary), in the order `muttlab --help` lists them.
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("run", "score trials with metrics and print the accuracy grid"),
    "metrics": ("metrics_cmd", "list metrics and their availability"),
    "export": ("export", "write a suite (built-in or a file) to JSONL or Parquet for `datasets`"),
    "check-metric": ("check_metric", "run a metric through the properties every metric should have (CI exit status)"),
    "severity": ("severity", "pass rate and score drop against a corruption's strength, per metric"),
    "dbleu": ("dbleu", "ΔBLEU of a file of hypotheses with weighted references"),
    "vectors": ("vectors", "word vectors for W2V-AVG"),
    "reval": ("reval", "train, evaluate and apply the ReVal learned metrics"),
    "serve": ("serve", "start the dashboard in a browser (Streamlit)"),
    "multilevel": ("multilevel", "tune and evaluate ML-METEOR, DREEM, ML-DREEM"),
    "ranking": ("ranking", "ranking judgments -> similarity training data"),
    "corrupt": ("corrupt", "build corruption pairs from SICK or the sample into the pair store"),
    "pairs": ("pairs", "review and edit corruption pairs in the pair store"),
    "correlate": ("correlate", "correlate metrics with human judgments (Flickr8K, SICK, ΔBLEU units)"),
    "reproduce": ("reproduce", "set every published number beside the one measured here"),
    "meta-eval": ("meta_eval", "meta-evaluate metrics against human judgments of system outputs (MQM, your own)"),
    "compare-rules": ("compare_rules", "how each metric's unit-test accuracies move under another tie rule"),
    "profile": ("profile", "one metric's robustness profile (MUTT, DEMETR, MSLC, MQM), or two compared"),
    "models": ("models", "list, install and uninstall the learned metrics' models"),
    "users": ("users", "dashboard accounts: add, remove, passwd, signout, list"),
    "report": ("report", "write a dashboard view as one offline HTML file"),
}

EXIT_USER_ERROR = 2


def summary(command: str) -> str:
    """The one-line summary of a subcommand, as ``muttlab --help`` lists it."""
    return COMMANDS[command][1]


def _version() -> str:
    # The installed distribution's metadata, as muttlab.api.version() reads it, without importing the API (and
    # numpy with it) for one line.
    from importlib import metadata
    try:
        return f"muttlab {metadata.version('muttlab')}"
    except metadata.PackageNotFoundError:  # a source tree that was never installed
        return "muttlab 0+unknown"


class _VersionAction(argparse.Action):
    """argparse's ``version`` action, with the version looked up only when asked for: finding an installed
    package's version (importlib.metadata) costs every other command a tenth of a second of start-up."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show program's version number and exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(_version())
        parser.exit()


def build_parser(commands: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; subcommands in ``commands`` (all when None) get their full options, the rest only a
    name and summary, so that building it imports nothing but the commands asked for."""
    common = common_parser()
    parser = argparse.ArgumentParser(
        prog="muttlab", parents=[common],
        description="Metric unit tests for text-generation metrics: corrupt sentences in controlled ways and "
                    "count how often each metric does the right thing.")
    parser.add_argument("--version", action=_VersionAction)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, text) in COMMANDS.items():
        if commands is None or name in commands:
            importlib.import_module(f"muttlab.cli.{module}").register(subparsers, common)
        else:
            subparsers.add_parser(name, help=text)
    _bound_ranges(subparsers)
    return parser


def _bound_ranges(subparsers) -> None:
    """Ranges for options declared without one, so an absurd value is a usage error, not a hang
    (``dbleu --max-n 99999999`` would build n-gram tables for ever)."""
    from muttlab.cli.common import bound, whole
    from muttlab.checks import MAX_SEED

    ranges = {"dbleu": {"max_n": whole(1, 10)}, "corrupt": {"seed": whole(0, MAX_SEED), "min_refs": whole(0, 1000)},
              "check-metric": {"items": whole(2, 10_000), "refs": whole(1, 50)}}
    for command, types in ranges.items():
        if command in subparsers.choices:
            bound(subparsers.choices[command], **types)


def _one_line_warnings() -> None:
    """Our own warnings (an unusable score cache...) as one line each, like our errors."""
    show = warnings.showwarning

    def showwarning(message, category, filename, lineno, file=None, line=None):
        if category.__module__.startswith("muttlab."):
            print(f"muttlab: warning: {message}", file=sys.stderr)
        else:
            show(message, category, filename, lineno, file, line)

    if getattr(warnings.showwarning, "__module__", "") != __name__:
        warnings.showwarning = showwarning


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (default: this program's arguments); the exit status."""
    if argv is not None:  # called from Python (a test, a notebook): the process goes on
        return _main(list(argv))
    try:
        return _main(sys.argv[1:])
    finally:
        # The program ends next, and the interpreter's last garbage collections would walk every object the
        # command made (~0.1 s after a grid run). Frozen objects are skipped by them; atexit handlers still
        # run, and objects are still released as the modules are torn down.
        gc.freeze()


def _main(argv: list[str]) -> int:
    _one_line_warnings()
    # The command is the first word that names one; an option value that happens to name one as well
    # only costs the import of that command's module.
    parser = build_parser([word for word in argv if word in COMMANDS])
    try:
        for word in argv:
            if word.startswith("-") and word.endswith("=--"):
                # argparse (3.11) drops a "--" value and hands the command an empty list instead of an error.
                parser.error(f"{word}: '--' is not a value for {word[:-3]}")
        args = parser.parse_args(argv)
    except SystemExit as exc:  # a usage error (2, message printed) or --help / --version (0)
        return exc.code if isinstance(exc.code, int) else EXIT_USER_ERROR
    try:
        if not getattr(args, "handler", None):
            parser.print_help()
            return EXIT_USER_ERROR
        return int(args.handler(args) or 0)
    except MuttlabError as exc:
        print(f"muttlab: error: {secrets(exc)}", file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        print("muttlab: interrupted", file=sys.stderr)
        return 130

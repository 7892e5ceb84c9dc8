"""Malformed calls of the public Python API, for tests/attacks/test_api_input.py and benchmarks/fuzz_api.py.

A case calls one function of :mod:`muttlab.api` (or ``load_settings``) with cheap, valid arguments except one,
which gets a value of the wrong kind: None, bytes, NaN, huge integers, nested lists, odd Unicode, empty strings,
iterators, arrays, paths. A case passes when the call returns, or raises an error the project documents (a
class named in :mod:`muttlab.errors`' docstring) whose message names the argument: an
:class:`~muttlab.errors.InvalidArgument` for that argument, or another documented error that names it or the
value it was given. Anything else (a built-in exception, a library's own, an error naming nothing) fails.
The same seed gives the same cases.
"""
from __future__ import annotations

import random
import signal
from dataclasses import dataclass
from pathlib import Path

import numpy as np

NESTED: list = []
for _ in range(50):
    NESTED = [NESTED]

# Values of every kind a caller could pass by mistake (or on purpose).
BAD_VALUES = [
    None, b"", b"\x01\x02", b"\x93\x01", bytearray(b"a man"), memoryview(b"x"), float("nan"), float("inf"),
    -float("inf"), 0, -1, 1.5, True, False, 10 ** 100, -(10 ** 100), 2 ** 64, np.float64("nan"), np.int64(-3),
    np.array([1, 2]), np.array([]), "", " ", "\0", "\ud800", "\u202e\u2028", "🙂" * 10, "x" * 5000, "nope",
    "BLEU-4,,nope", ",", "a\x00b", [], [None], [[]], [["a"]], [b"x"], [float("nan")], ["", ""], [1, 2], [[1]],
    [10 ** 100], [True], ["\ud800"], NESTED, {}, {"a": 1}, {"BLEU-1"}, object(), Path("/nonexistent/suite.jsonl"),
    Path("/"), Path(""), ("BLEU-1",), range(3), "iterator",
]


def bad_value(rng: random.Random):
    value = rng.choice(BAD_VALUES)
    return iter(["BLEU-1"]) if isinstance(value, str) and value == "iterator" else value


@dataclass
class Case:
    function: str
    argument: str  # the one argument given a bad value ("environ" or an option's name for keyword options)
    value: object

    def __repr__(self) -> str:
        text = repr(self.value)
        return f"{self.function}({self.argument}={text[:80] + '...' if len(text) > 80 else text})"


@dataclass
class Outcome:
    case: Case
    kind: str  # "returned", "refused" (documented, names the argument), "unnamed", "undocumented", "hang"
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.kind in ("returned", "refused")

    def __repr__(self) -> str:
        return f"{self.kind}: {self.case!r}: {self.error}"


class Fixtures:
    """Valid arguments, built once: settings on the bundled sample with the cache in ``root``, a small suite,
    a contrastive suite file, a score frame and a corruption frame."""

    def __init__(self, root: Path):
        from muttlab import api
        from muttlab.sources import load_sample

        root.mkdir(parents=True, exist_ok=True)
        self.settings = api.load_settings(environ={"MUTTLAB_CACHE_DIR": str(root / "cache"), "MUTTLAB_WORKERS": "1"})
        self.suite = load_sample().select(["neg_subj"])
        contrastive = root / "challenge.jsonl"
        contrastive.write_text('{"phenomenon": "negation", "good": "A dog runs.", "incorrect": "No dog runs.", '
                               '"reference": "A dog is running."}\n', encoding="utf-8")
        self.suite_file_path = contrastive
        self.suite_file = api.read_suite(contrastive)
        self.scores = api.score(self.settings, ["BLEU-1"], ["a man rides a bike", "a man rides no bike"],
                                [["a man is riding a bike"]] * 2)
        self.corrupted = api.corrupt("a man rides a bike", ["a man is riding a bike"], ["neg_subj"], 1)

    def calls(self) -> dict[str, tuple]:
        """function name -> (callable, valid keyword arguments)."""
        from muttlab import api

        s = self.settings
        return {
            "load_settings": (api.load_settings, {"environ": {}}),
            "metric_catalogue": (api.metric_catalogue, {"settings": s, "registry": None}),
            "load_suite": (api.load_suite, {"settings": s, "name": "sample"}),
            "select_corruptions": (api.select_corruptions, {"suite": self.suite, "names": ["neg_subj"]}),
            "select_split": (api.select_split, {"suite": self.suite, "split": "test"}),
            "run_grid": (api.run_grid, {"settings": s, "metrics": ["BLEU-1"], "corruptions": ["neg_subj"],
                                        "ref_counts": [5], "suite": self.suite, "progress": None,
                                        "registry": None}),
            "score": (api.score, {"settings": s, "metrics": ["BLEU-1"], "candidates": ["a man rides a bike"],
                                  "references": [["a man is riding a bike"]], "registry": None}),
            "score_together": (api.score_together, {"settings": s, "metrics": ["BLEU-1"],
                                                    "batches": [(["a man rides a bike"], [["a man is riding a bike"]])],
                                                    "registry": None}),
            "corrupt": (api.corrupt, {"sentence": "a man rides a bike", "references": ["a man is riding a bike"],
                                      "types": ["neg_subj"], "seed": 1}),
            "sentence_verdicts": (api.sentence_verdicts, {"scores": self.scores, "corrupted": self.corrupted,
                                                          "settings": s}),
            "correlate": (api.correlate, {"settings": s, "study": "nope", "progress": None, "registry": None}),
            "reproduce": (api.reproduce, {"settings": s, "nosuchoption": 1}),
            "read_suite": (api.read_suite, {"path_or_bytes": self.suite_file_path}),
            "run_challenge": (api.run_challenge, {"settings": s, "suite_file": self.suite_file, "metrics": ["BLEU-1"]}),
            "severity": (api.severity, {"settings": s, "corruption": "typo", "metrics": ["BLEU-1"], "strengths": [1],
                                        "sentences": [("s1", "a man rides a big red bike", ("a man rides a bike",))]}),
            "check_rules": (api.check_rules, {"settings": s}),
            "snapshot": (api.snapshot, {"kind": "grid"}),
            "snapshot_differences": (api.snapshot_differences, {"settings": s, "shipped": api.snapshot("grid"),
                                                                "signatures": {}}),
            "sign_out_everywhere": (api.sign_out_everywhere, {"settings": s, "user": "nobody"}),
        }


# Arguments not fuzzed: they keep a case cheap (correlate's study is always unknown, so that no case starts a
# study; reproduce always gets an unknown option for the same reason; severity scores one given sentence).
FIXED = {("correlate", "study"), ("reproduce", "nosuchoption"), ("severity", "sentences")}


def cases(n: int, fixtures: Fixtures, seed: int) -> list[Case]:
    rng = random.Random(seed)
    calls = fixtures.calls()
    names = sorted(calls)
    out = []
    for _ in range(n):
        function = rng.choice(names)
        arguments = [a for a in calls[function][1] if (function, a) not in FIXED]
        if function == "load_settings":
            arguments = ["environ", "environ[MUTTLAB_WORKERS]", "environ[MUTTLAB_DATA_DIR]", "data_dir", "workers",
                         "tolerance", "ref_counts", "use_cache", "metric_paths", "limits", "nosuchsetting"]
        elif function in ("reproduce", "severity"):  # keyword options handed on to the study function
            arguments = arguments + ["nosuchoption"]
        argument = rng.choice(arguments)
        out.append(Case(function, argument, bad_value(rng)))
    return out


def documented() -> tuple[type, ...]:
    """The error classes :mod:`muttlab.errors`' docstring names (with the pair store's it lists)."""
    import inspect
    import re

    from muttlab import errors
    from muttlab.pairs import store

    return tuple(c for module in (errors, store) for _, c in inspect.getmembers(module, inspect.isclass)
                 if issubclass(c, errors.MuttlabError) and re.search(rf"\b{c.__name__}\b", errors.__doc__))


def _names(exc: Exception, case: Case) -> bool:
    from muttlab.errors import DataError, InvalidArgument, UnknownName

    root = case.argument.split("[")[0]
    if case.function == "correlate" and "unknown study 'nope'" in str(exc):
        return True  # the value was taken (None is a valid progress); the baseline ends in this error
    if isinstance(exc, InvalidArgument):
        return exc.argument.split("[")[0] in (root, case.argument) or case.argument in str(exc)
    message = str(exc)
    if root.rstrip("s") in message:  # "candidate 0 must be a string" names the argument candidates
        return True
    if isinstance(exc, DataError) and case.argument in ("path_or_bytes", "name", "suite"):
        return True  # the file's content is what is wrong: the message names the file (or the upload) and line
    if isinstance(exc, UnknownName):  # one name of a list or of a comma-separated string
        # str() as well as repr(): a control character in the name is escaped in the repr only
        return isinstance(exc.name, str) and (exc.name in repr(case.value) or exc.name in str(case.value))
    shown = [case.value] + (list(case.value) if isinstance(case.value, (list, tuple, set)) else [])
    return any(isinstance(v, (str, int, float)) and (str(v) in message or repr(v) in message) for v in shown)


class _Hang(Exception):
    pass


def _alarm(signum, frame):
    raise _Hang()


def run_case(case: Case, fixtures: Fixtures, timeout: int = 120) -> Outcome:
    function, valid = fixtures.calls()[case.function]
    kwargs = dict(valid)
    if case.function == "load_settings" and case.argument.startswith("environ["):
        kwargs["environ"] = {case.argument[len("environ["):-1]: case.value}
    else:
        kwargs[case.argument] = case.value

    def call() -> None:
        function(**kwargs)  # whatever it returns is right: the fuzz looks at what it raises

    return classified(case, call, lambda exc: _names(exc, case), timeout)


def classified(case, call, names, timeout: int) -> Outcome:
    """``call()`` under a SIGALRM ``timeout``, as an Outcome: returned (``call`` gives None; a text is what is
    wrong with what it returned: unnamed), refused (a documented error for which ``names(exc)`` holds), unnamed,
    undocumented (any other exception) or hang."""
    from muttlab.errors import MuttlabError

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        wrong = call()
        return Outcome(case, "returned") if wrong is None else Outcome(case, "unnamed", wrong)
    except _Hang:
        return Outcome(case, "hang")
    except MuttlabError as exc:
        if not isinstance(exc, documented()):
            return Outcome(case, "undocumented", f"{type(exc).__module__}.{type(exc).__name__}: {exc}")
        return Outcome(case, "refused" if names(exc) else "unnamed", f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # the failure this fuzz looks for: reported, never hidden
        return Outcome(case, "undocumented", f"{type(exc).__module__}.{type(exc).__name__}: {exc}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)

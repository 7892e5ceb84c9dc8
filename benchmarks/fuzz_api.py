"""Fuzz the public Python API: every function of ``muttlab.api`` and ``load_settings`` with one bad argument.

Each case passes cheap valid arguments except one, which gets None, bytes, NaN, a huge integer, a nested list,
odd Unicode, an empty string, an iterator... (tests/attacks/api_fuzz_cases.py). It prints how many cases
returned, were refused with a documented MuttlabError naming the argument, raised something else (a built-in
or a library's exception, an undocumented error), raised an error that names no argument, or hung, and lists
each distinct failure once.

    MUTTLAB_DATA_DIR= .venv/bin/python benchmarks/fuzz_api.py --cases 500 --seed 20261125

With ``--readers N`` it fuzzes the readers instead: every suite format and upload path with N malformed files
(tests/attacks/reader_fuzz_cases.py), counting files read, refusals that name the file and line, refusals that do
not, undocumented errors and hangs.

    .venv/bin/python benchmarks/fuzz_api.py --readers 5000 --seed 20261127
"""
from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.attacks.api_fuzz_cases lives in the repository

from tests.attacks.api_fuzz_cases import Fixtures, cases, run_case  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument("--timeout", type=int, default=120, help="seconds before a case counts as a hang")
    parser.add_argument("--show", type=int, default=40, help="distinct failures to print")
    parser.add_argument("--readers", type=int, default=0, help="fuzz the file readers with this many cases instead")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="muttlab-fuzz-api-") as tmp:
        if args.readers:
            from tests.attacks.reader_fuzz_cases import cases as file_cases, run_case as read_case

            todo = file_cases(args.readers, args.seed)
            kinds, groups, failures, elapsed = campaign(
                todo, lambda case: read_case(case, Path(tmp), timeout=args.timeout), lambda case: case.reader,
                lambda case, outcome: f"{outcome.kind}: {case.reader} {outcome.error.split(':')[0]}")
            print(f"cases: {len(todo)}  read: {kinds['returned']}  refused naming file and line: {kinds['refused']}  "
                  f"refused without saying where: {kinds['unnamed']}  undocumented errors: {kinds['undocumented']}  "
                  f"hangs: {kinds['hang']}  ({elapsed:.0f} s, {elapsed / len(todo) * 1000:.1f} ms/case)")
        else:
            fixtures = Fixtures(Path(tmp))
            todo = cases(args.cases, fixtures, seed=args.seed)
            kinds, groups, failures, elapsed = campaign(
                todo, lambda case: run_case(case, fixtures, timeout=args.timeout), lambda case: case.function,
                lambda case, outcome: f"{outcome.kind}: {case.function}({case.argument}) {outcome.error.split(':')[0]}")
            print(f"cases: {len(todo)}  returned: {kinds['returned']}  refused (documented, names the argument): "
                  f"{kinds['refused']}  undocumented errors: {kinds['undocumented']}  errors naming no argument: "
                  f"{kinds['unnamed']}  hangs: {kinds['hang']}  ({elapsed:.0f} s, {elapsed / len(todo):.3f} s/case)")
    print(f"cases per {'reader' if args.readers else 'function'}: "
          + ", ".join(f"{name} {count}" for name, count in sorted(groups.items())))
    print(f"distinct failures: {len(failures)}")
    for outcome in list(failures.values())[:args.show]:
        print("-" * 80)
        print(outcome)
    return 0 if not failures else 1


def campaign(todo: list, run, group, key) -> tuple:
    """Run every case: (outcomes by kind, cases by ``group(case)``, the first outcome of each distinct failure
    ``key(case, outcome)``, seconds). Each new failure is printed when it first appears."""
    kinds: collections.Counter = collections.Counter()
    groups: collections.Counter = collections.Counter()
    failures: dict[str, object] = {}
    start = time.perf_counter()
    for i, case in enumerate(todo):
        outcome = run(case)
        kinds[outcome.kind] += 1
        groups[group(case)] += 1
        if not outcome.ok:
            found = key(case, outcome)
            if found not in failures:
                print(f"new failure after {i + 1} cases: {outcome!r}", file=sys.stderr, flush=True)
            failures.setdefault(found, outcome)
        if (i + 1) % 500 == 0:
            print(f"{i + 1} cases, {dict(kinds)}", file=sys.stderr, flush=True)
    return kinds, groups, failures, time.perf_counter() - start


if __name__ == "__main__":
    sys.exit(main())

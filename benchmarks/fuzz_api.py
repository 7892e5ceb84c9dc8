"""Fuzz the public Python API: every function of ``muttlab.api`` and ``load_settings`` with one bad argument.

Each case passes cheap valid arguments except one, which gets None, bytes, NaN, a huge integer, a nested list,
odd Unicode, an empty string, an iterator... (tests/attacks/api_fuzz_cases.py). It prints how many cases
returned, were refused with a documented MuttlabError naming the argument, raised something else (a built-in
or a library's exception, an undocumented error), raised an error that names no argument, or hung, and lists
each distinct failure once.

    MUTTLAB_DATA_DIR= .venv/bin/python benchmarks/fuzz_api.py --cases 500 --seed 20261125
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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="muttlab-fuzz-api-") as tmp:
        fixtures = Fixtures(Path(tmp))
        todo = cases(args.cases, fixtures, seed=args.seed)
        kinds: collections.Counter = collections.Counter()
        functions: collections.Counter = collections.Counter()
        failures: dict[str, object] = {}
        start = time.perf_counter()
        for i, case in enumerate(todo):
            outcome = run_case(case, fixtures, timeout=args.timeout)
            kinds[outcome.kind] += 1
            functions[case.function] += 1
            if not outcome.ok:
                key = f"{outcome.kind}: {case.function}({case.argument}) {outcome.error.split(':')[0]}"
                if key not in failures:
                    print(f"new failure after {i + 1} cases: {outcome!r}", file=sys.stderr, flush=True)
                failures.setdefault(key, outcome)
            if (i + 1) % 100 == 0:
                print(f"{i + 1} cases, {dict(kinds)}", file=sys.stderr, flush=True)
        elapsed = time.perf_counter() - start
    print(f"cases: {len(todo)}  returned: {kinds['returned']}  refused (documented, names the argument): "
          f"{kinds['refused']}  undocumented errors: {kinds['undocumented']}  errors naming no argument: "
          f"{kinds['unnamed']}  hangs: {kinds['hang']}  ({elapsed:.0f} s, {elapsed / len(todo):.3f} s/case)")
    print("cases per function: " + ", ".join(f"{name} {count}" for name, count in sorted(functions.items())))
    print(f"distinct failures: {len(failures)}")
    for outcome in list(failures.values())[:args.show]:
        print("-" * 80)
        print(outcome)
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())

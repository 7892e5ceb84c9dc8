"""Fuzz the ``muttlab`` command line: malformed invocations of every subcommand and option.

Each case runs ``muttlab.cli.main(argv)`` in a forked child with stdin at /dev/null and no terminal, and is
killed after a timeout. It prints how many cases ended with a traceback, hung, or exited with a status other
than 0 or 2 (bad input must exit 2 with one line on stderr), and lists each distinct failure once.

    .venv/bin/python benchmarks/fuzz_cli.py --cases 1000 --seed 20261123 [--jobs 2]

With ``--jobs N`` the cases are shared out among N worker processes (forked after the preload, each with
its stderr file of its own); the cases and their order within a worker are those of a serial run. Each
distinct failure is printed on stderr when it first appears, so a run stopped early still says what it found.
"""
from __future__ import annotations

import argparse
import collections
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.cli.fuzz_cases lives in the repository

from tests.cli.fuzz_cases import cases, fuzz_environment, make_files, preload, run_case  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=20261123)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds before a case counts as a hang")
    parser.add_argument("--show", type=int, default=40, help="distinct failures to print")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes running cases side by side")
    parser.add_argument("--code", type=Path, help="fuzz the muttlab package in this folder instead (e.g. an "
                        "export of an older commit whose muttlab/ holds links to the mapped folders)")
    args = parser.parse_args()
    if args.code:
        sys.path.insert(0, str(args.code.resolve()))
    import os
    with tempfile.TemporaryDirectory(prefix="muttlab-fuzz-") as tmp:
        root = Path(tmp)
        files = make_files(root / "files")
        os.environ.clear()
        os.environ.update(fuzz_environment(root))
        preload()
        todo = cases(args.cases, files, seed=args.seed)
        kinds: collections.Counter = collections.Counter()
        reached: collections.Counter = collections.Counter()
        failures: dict[str, object] = {}
        start = time.perf_counter()
        for i, outcome in enumerate(_outcomes(todo, root, args.timeout, args.jobs)):
            argv = outcome.argv
            kinds[outcome.kind] += 1
            if outcome.kind == "ok":
                reached[_stage(outcome)] += 1
            if outcome.kind != "ok":
                last = outcome.stderr.strip().splitlines()[-1] if outcome.stderr.strip() else ""
                key = f"{outcome.kind}: {argv[0]} {last[:160]}"
                if key not in failures:
                    print(f"new failure after {i + 1} cases: {outcome!r}", file=sys.stderr, flush=True)
                failures.setdefault(key, outcome)
            if (i + 1) % 100 == 0:
                print(f"{i + 1} cases, {dict(kinds)}", file=sys.stderr, flush=True)
        elapsed = time.perf_counter() - start
    print(f"cases: {len(todo)}  ok: {kinds['ok']}  tracebacks: {kinds['traceback']}  hangs: {kinds['hang']}  "
          f"other exit status: {kinds['bad-exit']}  ({elapsed:.0f} s, {elapsed / len(todo):.2f} s/case)")
    print(f"clean outcomes: {reached['usage']} usage errors (argparse), {reached['refused']} refused by the command "
          f"(one line, exit 2), {reached['done']} completed (exit 0)")
    print(f"distinct failures: {len(failures)}")
    for outcome in list(failures.values())[:args.show]:
        print("-" * 80)
        print(outcome)
    return 0 if len(failures) == 0 else 1


def _outcomes(todo: list, root: Path, timeout: float, jobs: int):
    """The outcome of every case, in the order they finish."""
    if jobs <= 1:
        for argv in todo:
            yield run_case(argv, root, timeout=timeout)
        return
    import multiprocessing

    context = multiprocessing.get_context("fork")  # the workers inherit the preloaded modules
    with context.Pool(jobs, initializer=_worker_init, initargs=(str(root),)) as pool:
        yield from pool.imap_unordered(_worker_case, [(argv, timeout) for argv in todo])


_WORKDIR: Path | None = None


def _worker_init(root: str) -> None:
    import os

    global _WORKDIR
    _WORKDIR = Path(root) / f"worker-{os.getpid()}"
    _WORKDIR.mkdir()


def _worker_case(job):
    argv, timeout = job
    return run_case(argv, _WORKDIR, timeout=timeout)


def _stage(outcome) -> str:
    if outcome.code == 0:
        return "done"
    return "usage" if "usage:" in outcome.stderr else "refused"


if __name__ == "__main__":
    sys.exit(main())

"""Fuzz the command line: malformed invocations of every subcommand end in one clear line, never a traceback.

The reduced form of ``benchmarks/fuzz_cli.py`` (which runs 1,000+ cases): a fixed seed, each case in a
forked child with stdin at /dev/null and no terminal, killed after a generous timeout. A case passes when
it exits 0, or 2 with a message on stderr, without a traceback.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.cli.fuzz_cases import cases, fuzz_environment, make_files, preload, run_case

CI_CASES = 80  # every subcommand once (39), then seeded random ones; the 1,000+ case run is the benchmark
SEED = 20261123


@pytest.fixture(scope="module")
def fuzz_root(tmp_path_factory, data_dir):
    root = tmp_path_factory.mktemp("fuzz")
    saved = dict(os.environ)
    os.environ.update({"MUTTLAB_DATA_DIR": str(data_dir)})  # the small well-formed copy is made from it
    files = make_files(root / "files")
    os.environ.clear()
    os.environ.update(fuzz_environment(root))
    preload()
    yield root, files
    os.environ.clear()
    os.environ.update(saved)


def test_fuzzed_invocations_end_cleanly(fuzz_root):
    root, files = fuzz_root
    todo = cases(CI_CASES, files, seed=SEED)
    assert len({tuple(c[:2]) for c in todo}) > 20  # every subcommand is reached
    failures = [outcome for outcome in (run_case(argv, root, timeout=180) for argv in todo) if outcome.kind != "ok"]
    assert not failures, "\n\n".join(map(repr, failures[:5]))


def one_line(outcome) -> str:
    lines = outcome.stderr.strip().splitlines()
    assert outcome.kind == "ok" and outcome.code == 2 and len(lines) >= 1, outcome
    return lines[-1]


@pytest.mark.parametrize("name", ["missing.txt", "a_folder", "binary.bin", "latin1.txt", "nested.json", "empty.txt"])
def test_unreadable_user_files_are_named(fuzz_root, name):
    root, files = fuzz_root
    path = next(p for p in files["input"] if p.name == name)
    for argv in (["dbleu", str(path)], ["pairs", "import", str(path), "--author", "a"],
                 ["correlate", "dbleu", "--input", str(path)], ["ranking", "convert", str(path)]):
        outcome = run_case(argv, root)
        if outcome.code == 0:
            continue  # an empty file can be a valid, empty input
        line = one_line(outcome)
        assert str(path) in line or path.name in line, (argv, line)


@pytest.mark.parametrize("path", ["nosuchmodule:make", "os:getcwd", "os", "math:pi", "builtins:input",
                                  "tests.engine.counting_metric:not_a_metric", "a..b:c"])
def test_bad_metric_paths_are_one_line(fuzz_root, path):
    root, _ = fuzz_root
    line = one_line(run_case(["run", "--metric-path", path, "--metrics", "BLEU-4", "--no-cache"], root))
    assert path in line and "metric path" in line or "metric" in line, line


@pytest.mark.parametrize("argv", [["reval", "train", "--epochs", "99999999999"], ["serve", "--port", "70000"],
                                  ["correlate", "flickr8k", "--n-boot", "1e999"], ["pairs", "list", "--limit", "-5"],
                                  ["dbleu", "x", "--max-n", "0"], ["correlate", "dbleu", "--threshold", "nan"]])
def test_absurd_numbers_are_usage_errors(fuzz_root, argv):
    root, _ = fuzz_root
    outcome = run_case(argv, root)
    assert "usage:" in outcome.stderr and "outside the accepted range" in outcome.stderr \
        or "not a" in outcome.stderr, outcome
    one_line(outcome)


def test_stdin_that_is_no_terminal_does_not_block(tmp_path):
    """stdin an open pipe that never ends: nothing may wait on it."""
    env = {**os.environ, "MUTTLAB_CACHE_DIR": str(tmp_path)}
    env.pop("MUTTLAB_DATA_DIR", None)
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    with out.open("w") as stdout, err.open("w") as stderr:
        proc = subprocess.Popen([sys.executable, "-m", "muttlab", "pairs", "list"], stdin=subprocess.PIPE,
                                stdout=stdout, stderr=stderr, env=env)
        try:
            code = proc.wait(timeout=120)  # our end of stdin stays open all the while
        finally:
            proc.kill()
            proc.stdin.close()
    assert code == 0 and "0 of 0 pairs" in err.read_text()


@pytest.mark.parametrize("argv", [["check-metric", "all"], ["run", "--metrics", "all"], ["metrics"]])
def test_an_unwritable_output_is_refused_before_any_work(fuzz_root, argv):
    """The fuzz's one hang: check-metric of every metric ran for minutes, then could not write its output."""
    root, files = fuzz_root
    for output in (root / "no" / "such" / "dir" / "out.txt", root):
        outcome = run_case(argv + ["-o", str(output)], root, timeout=60)
        assert "usage:" in outcome.stderr and str(output) in one_line(outcome), outcome

"""Malformed ``muttlab`` invocations for the CLI fuzz test (tests/cli/test_fuzz.py) and benchmarks/fuzz_cli.py.

Every subcommand and option of the real parser is reached: options get values from pools of bad input of
their kind (files: missing, empty, binary, non-UTF-8, huge, malformed, a folder; numbers: absurd, negative,
not numbers; names: unknown, empty, odd Unicode; import paths that do not import or give no metric), and the
global options point at poisoned data folders, unusable cache folders and bad metric paths. A case is a
plain argv list; the same seed gives the same cases.

The fuzz never hands a command a valid real data folder, so no case starts hours of legitimate work; the
metric lists it passes are cheap metrics or junk (the default list starts a JVM per case).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path

from tests.conftest import DATA_DIR

CHEAP_METRICS = ["BLEU-4", "chrF", "ROUGE-L", "BLEU-1,CIDEr-D", "TER", "sentBLEU"]
BAD_NAMES = ["", ",", "nope", "BLEU-4,,nope", "all,BLEU-4", "∅", "\u202e\u2028", "x" * 5000, "-1", "BLEU-4" * 50]
NUMBERS = ["0", "-1", "-999999999", "99999999999999999999", "1e999", "nan", "inf", "abc", "", "1.5", "0x10",
           "٣", "1_000", " 7 "]
BAD_IMPORT_PATHS = ["nosuchmodule:make", "os", ":", "os:", ":getcwd", "os:nosuchattr", "os:getcwd", "json:loads",
                    "a..b:c", "tests.engine.counting_metric:not_a_metric", "builtins:exit", "builtins:input",
                    "math:pi", "sys:exit", "os.path:sep", "tests.engine.counting_metric", "../../etc:passwd",
                    "muttlab.metrics.base:Metric", "x" * 300 + ":y"]
# Environment variables the settings read, with values a deployment could get wrong.
BAD_ENV = [("MUTTLAB_WORKERS", "abc"), ("MUTTLAB_WORKERS", "-3"), ("MUTTLAB_MAX_WORDS", "zero"),
           ("MUTTLAB_MAX_REFS", "0"), ("MUTTLAB_DATABASE_URL", "nosuchdialect://x"),
           ("MUTTLAB_DATABASE_URL", "sqlite:////proc/no/such/pairs.sqlite"), ("MUTTLAB_METRICS", "nosuch:thing"),
           ("MUTTLAB_DATA_DIR", "/dev/null"), ("MUTTLAB_CACHE_DIR", "/dev/null"), ("MUTTLAB_READ_ONLY", "1"),
           ("MUTTLAB_MAX_WORDS", "3"), ("MUTTLAB_MAX_UPLOAD_MB", "1")]
ENV_PREFIX = "@env:"  # an argv word of this form sets an environment variable for the case instead
TEXT = ["", " ", "A man is riding a bike.", "\u2028", "שלום עולם", "🙂" * 10, "a\tb", "word " * 3000, "--", "-x"]


def make_files(root: Path) -> dict[str, list[Path]]:
    """Bad input files of every kind under ``root``; returns {'input': [...], 'output': [...], 'dir': [...]}."""
    root.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    files: dict[str, bytes] = {
        "empty.txt": b"",
        "binary.bin": bytes(rng.randrange(256) for _ in range(4096)),
        "latin1.txt": "Ein Mann fährt Fahrrad.\tcafé\n".encode("latin-1") * 20,
        "utf16.txt": "A man rides a bike.\n".encode("utf-16"),
        "huge_line.txt": b"word " * 400_000,
        "many_lines.txt": b"a b c\td e f\t1\t2\t3\n" * 60_000,
        "bad.json": b'{"annotations": [ {"image_id": 1, "caption": ',
        "nested.json": b"[" * 100_000 + b"]" * 100_000,
        "bignum.jsonl": b'{"corruption": "typo", "human_score": ' + b"9" * 400 + b"}\n",
        "surrogate.jsonl": b'{"corruption": "typo", "original": "\\ud800", "corrupted": "x", "references": ["y"]}\n',
        "sep.txt": "A man\u2028rides\u2029a bike.\nA dog.\n".encode(),
        "crlf.tsv": b"a\tb\r\nc\td\r\n\r\n",
        "nul.txt": b"a\x00b\tc\x00\n" * 10,
        "garbage.tsv": b"col1\tcol2\n1\n2\t3\t4\t5\n\t\t\n",
        "good_pairs.jsonl": (json.dumps({"corruption": "typo", "original": "A dog runs.", "corrupted": "A dog rnus.",
                                         "references": ["A dog is running."]}) + "\n").encode(),
        "mixed_pairs.jsonl": b"{oops\n[1]\n\xff\xfe\n" + json.dumps(
            {"corruption": "typo", "original": "A cat sits.", "corrupted": "A cat sist.",
             "references": ["A cat is sitting."]}).encode() + b"\n",
        "refs_as_string.jsonl": json.dumps({"corruption": "typo", "original": "A b.", "corrupted": "B a.",
                                            "references": "A b."}).encode() + b"\n",
        "dbleu.tsv": b"hyp\tref\t0.5\nA man.\tA man.\tnot-a-number\n",
    }
    inputs = []
    for name, data in files.items():
        path = root / name
        path.write_bytes(data)
        inputs.append(path)
    folder = root / "a_folder"
    folder.mkdir(exist_ok=True)
    fifo = root / "a_pipe"
    if not fifo.exists():
        os.mkfifo(fifo)  # nobody ever writes to it: a reader that opens it waits for ever
    inputs += [root / "missing.txt", folder, Path("/dev/null"), Path("/dev/zero"), fifo]
    outputs = [root / "out.txt", folder, root / "no" / "such" / "dir" / "out.txt", Path("/proc/muttlab-cannot-write"),
               root / "binary.bin"]
    return {"input": inputs, "output": outputs, "dir": data_dirs(root)}


def data_dirs(root: Path) -> list[Path]:
    """Data folders with the expected layout and poisoned contents, a missing folder and a file."""
    dirs = []
    junk = {
        "sick/SICK.txt": b"pair_ID\tsentence_A\n1\tonly two\n",
        "flickr8k/Flickr8k.token.txt": b"no tab here\n\xff\xfe\n",
        "flickr8k/ExpertAnnotations.txt": b"a\tb\tc\n",
        "flickr8k/CrowdFlowerAnnotations.txt": b"\x00\x01\x02",
        "mutt/experiments/neg_subj_a.json": b"[{\"image_id\": \"x\"}]",
        "mutt/experiments/neg_subj_b.json": b"{",
        "mutt/experiments/neg_subj_r20.json": b"[" * 50_000,
    }
    poisoned = root / "data_poisoned"
    for rel, data in junk.items():
        path = poisoned / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    dirs.append(poisoned)
    binary = root / "data_binary"
    for rel in junk:
        path = binary / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(bytes(range(256)) * 8)
    dirs.append(binary)
    empty = root / "data_empty_files"
    for rel in junk:
        path = empty / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    dirs.append(empty)
    dirs += [root / "data_missing", root / "empty.txt"]
    if (DATA_DIR / "sick" / "SICK.txt").is_file():
        dirs.insert(0, small_data_dir(DATA_DIR, root / "data_small"))
    return dirs


def small_data_dir(real: Path, target: Path) -> Path:
    """A well-formed but small copy of the real data (first lines of each file), so that commands get
    past their readers and meet the bad options deeper down, without hours of legitimate work."""
    heads = {"sick/SICK.txt": 120, "flickr8k/Flickr8k.token.txt": 600, "flickr8k/ExpertAnnotations.txt": 80,
             "flickr8k/CrowdFlowerAnnotations.txt": 80}
    for rel, n in heads.items():
        source = real / rel
        if source.is_file():
            path = target / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            with source.open("rb") as handle:
                path.write_bytes(b"".join(line for _, line in zip(range(n), handle)))
    experiments = real / "mutt" / "experiments"
    if experiments.is_dir():
        (target / "mutt").mkdir(parents=True, exist_ok=True)
        link = target / "mutt" / "experiments"
        if not link.exists():
            link.symlink_to(experiments)
    return target


def _leaves(parser: argparse.ArgumentParser, prefix: list[str]):
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield prefix, parser
        return
    for name, sub in subs[0].choices.items():
        yield from _leaves(sub, prefix + [name])


GLOBAL = {"data_dir", "cache_dir", "no_cache", "metric_path", "help"}
# Options that rewrite the package's own files (``corrupt --sample`` regenerates data/sample/trials.jsonl
# with whatever seed the case picked): a fuzz run must not change the checkout it tests.
WRITES_PACKAGE_DATA = {("corrupt", "sample")}


def commands() -> list[tuple[list[str], list[argparse.Action]]]:
    """Every leaf command of the real parser with its own options (help and global ones left out)."""
    from muttlab.cli import COMMANDS, build_parser

    out = []
    for words, parser in _leaves(build_parser(list(COMMANDS)), []):
        if words:
            out.append((words, [a for a in parser._actions if a.dest not in GLOBAL
                                and (words[0], a.dest) not in WRITES_PACKAGE_DATA]))
    return out


def _value(action: argparse.Action, files: dict, rng: random.Random) -> str:
    dest = action.dest
    if action.choices:
        return rng.choice(list(action.choices) * 3 + ["", "nope", "TABLE"])
    if action.type in (int, float) or getattr(action.type, "__name__", "") in ("whole number", "number"):
        return rng.choice(NUMBERS + ["1", "2", "5"])
    if action.type is Path or dest in ("file", "references", "pairs", "input", "ratings"):
        pool = files["output"] if dest in ("output", "trials_out", "histograms_out", "out_dir") else files["input"]
        return str(rng.choice(pool))
    if dest in ("metrics", "metric"):
        return rng.choice(CHEAP_METRICS + BAD_NAMES)
    if dest in ("pair",):
        return rng.choice(["1", "0", "-1", "99999999999999999999", "typo/one", "", "neg_subj/sick-12", "🙂"])
    return rng.choice(TEXT + BAD_NAMES)


def case(commands_: list, files: dict, rng: random.Random) -> list[str]:
    """One invocation: a command, some of its options with bad values, maybe bad global options."""
    words, actions = rng.choice(commands_)
    argv = list(words)
    for action in actions:
        if isinstance(action, argparse._SubParsersAction):
            continue
        required = action.required or not action.option_strings
        if not required and rng.random() > 0.35:
            continue
        if required and rng.random() < 0.05:
            continue  # a missing required argument
        if action.nargs == 0:
            argv.append(action.option_strings[0])
            continue
        value = _value(action, files, rng)
        if action.option_strings:
            flag = rng.choice(action.option_strings)
            argv += [f"{flag}={value}"] if value.startswith("-") or not value else [flag, value]
        else:
            argv.append(value if not value.startswith("-") else "./" + value)
    if words[0] in ("run", "correlate") and not any(a.startswith("--metrics") for a in argv) \
            and any(a.dest == "metrics" for a in actions):
        argv += ["--metrics", rng.choice(CHEAP_METRICS)]
    if words[0] == "serve" and "--port" not in argv:
        argv += ["--port", rng.choice(NUMBERS)]
    if rng.random() < 0.7:
        argv += ["--data-dir", str(rng.choice(files["dir"][:1] * 2 + files["dir"]))]
    if rng.random() < 0.3:
        argv += ["--cache-dir", str(rng.choice([files["dir"][-1], files["output"][2], files["output"][3]]))]
    if rng.random() < 0.25:
        argv += [f"--metric-path={rng.choice(BAD_IMPORT_PATHS)}"]
    if rng.random() < 0.05:
        argv.append(rng.choice(["--no-such-option", "--format", "-o"]))
    if rng.random() < 0.12:
        name, value = rng.choice(BAD_ENV)
        argv.insert(0, f"{ENV_PREFIX}{name}={value}")
    return argv


def cases(n: int, files: dict, seed: int = 20261123) -> list[list[str]]:
    rng = random.Random(seed)
    found = commands()
    # Every command at least once, then random ones.
    chosen = [case([c], files, rng) for c in found]
    while len(chosen) < n:
        chosen.append(case(found, files, rng))
    return chosen[:n]


def fuzz_environment(root: Path) -> dict[str, str]:
    """Environment for a fuzz run: its own cache and pair store, nothing from the caller's MUTTLAB_*."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MUTTLAB_")}
    env["MUTTLAB_CACHE_DIR"] = str(root / "cache")
    env["MUTTLAB_WORKERS"] = "1"
    return env


# --------------------------------------------------------------------------- running a case

class Outcome:
    """How one case ended: ``kind`` is ok / traceback / hang / bad-exit; ``stderr`` its error output."""

    def __init__(self, argv: list[str], kind: str, code: int | None, stderr: str):
        self.argv, self.kind, self.code, self.stderr = argv, kind, code, stderr

    def __repr__(self) -> str:
        return f"{self.kind} (exit {self.code}): muttlab {' '.join(self.argv)!r:.300}\n{self.stderr[-1500:]}"


def preload() -> None:
    """Import what most cases need once, before forking, so that each case costs little."""
    import muttlab.cli
    import muttlab.engine.runner  # noqa: F401
    import muttlab.metrics.bleu  # noqa: F401
    import muttlab.metrics.sacre  # noqa: F401
    import muttlab.pairs.store  # noqa: F401

    muttlab.cli.build_parser(list(muttlab.cli.COMMANDS))


def run_case(argv: list[str], workdir: Path, timeout: float = 120.0) -> Outcome:
    """Run ``muttlab.cli.main(argv)`` in a forked child (stdin /dev/null, no terminal), killed after
    ``timeout`` seconds. ``serve`` is stopped where it would replace the process with Streamlit."""
    err_path = workdir / "stderr.txt"
    if "torch" in sys.modules:
        # A process whose torch has started its OpenMP threads cannot fork safely: a forked case that uses
        # torch again (reval with --threads N) deadlocks in the child. Such a process hands its cases to a
        # fresh interpreter that has not imported torch and forks them there.
        return _fork_server().run(argv, workdir, timeout)
    return _fork_case(argv, workdir, timeout, err_path)


def _fork_case(argv: list[str], workdir: Path, timeout: float, err_path: Path) -> Outcome:
    import signal
    import time

    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 70
        try:
            null = os.open(os.devnull, os.O_RDWR)
            err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(null, 0)
            os.dup2(null, 1)
            os.dup2(err, 2)
            import traceback

            sys.stdin = open(0, closefd=False)
            sys.stdout = open(1, "w", closefd=False)
            sys.stderr = open(2, "w", closefd=False)
            os.setsid()  # no controlling terminal: whatever waits on one would hang, and is counted
            os.chdir(workdir)  # a fuzzed relative --output lands in the case's folder, not the checkout
            _accept_serve()
            for word in [w for w in argv if w.startswith(ENV_PREFIX)]:
                name, _, value = word[len(ENV_PREFIX):].partition("=")
                os.environ[name] = value
            argv = [w for w in argv if not w.startswith(ENV_PREFIX)]
            from muttlab.cli import main
            try:
                result = main(argv)
                code = result if isinstance(result, int) else 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except BaseException:
                traceback.print_exc()
                code = 99
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return Outcome(argv, "hang", None, _read(err_path))
        time.sleep(0.01)
    return _classify(argv, os.waitstatus_to_exitcode(status), _read(err_path))


def _classify(argv: list[str], code: int, stderr: str) -> Outcome:
    if "Traceback (most recent call last)" in stderr or code == 99:
        kind = "traceback"
    elif code not in (0, 2):
        kind = "bad-exit"
    elif code == 2 and not stderr.strip():
        kind = "bad-exit"  # refused without saying why
    else:
        kind = "ok"
    return Outcome(argv, kind, code, stderr)


def _accept_serve() -> None:
    """`serve` with input it accepted would start a server and never return; reaching that point is the pass."""
    import muttlab.cli.serve

    muttlab.cli.serve.serve = lambda options: None


class _ForkServer:
    """A fresh interpreter, started once, that preloads what the cases need and forks each case sent to it.

    Requests and answers are JSON lines on its stdin and stdout; each request carries the caller's environment,
    which the forked case takes for its own.
    """

    def __init__(self):
        import subprocess

        root = Path(__file__).resolve().parents[2]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
        self.proc = subprocess.Popen([sys.executable, "-c", "from tests.cli.fuzz_cases import serve_cases; "
                                      "serve_cases()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                     cwd=root, text=True, start_new_session=True)

    def run(self, argv: list[str], workdir: Path, timeout: float) -> Outcome:
        request = {"argv": argv, "workdir": str(workdir), "timeout": timeout, "env": dict(os.environ)}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            raise RuntimeError(f"the case server ended with exit status {self.proc.wait()}")
        outcome = json.loads(answer)
        return Outcome(argv, outcome["kind"], outcome["code"], outcome["stderr"])

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


_SERVER: _ForkServer | None = None


def _fork_server() -> _ForkServer:
    global _SERVER
    if _SERVER is None or _SERVER.proc.poll() is not None:
        import atexit

        _SERVER = _ForkServer()
        atexit.register(_SERVER.close)
    return _SERVER


def serve_cases() -> None:
    """The fork server's loop (see ``_ForkServer``)."""
    preload()
    if "torch" in sys.modules:
        sys.exit("the case server imported torch while preloading; it could not fork its cases safely")
    for line in sys.stdin:
        request = json.loads(line)
        os.environ.clear()
        os.environ.update(request["env"])
        workdir = Path(request["workdir"])
        outcome = _fork_case(request["argv"], workdir, request["timeout"], workdir / "stderr.txt")
        print(json.dumps({"kind": outcome.kind, "code": outcome.code, "stderr": outcome.stderr}), flush=True)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""

"""METEOR 1.5: the shared process gives pycocoevalcap's per-sentence scores on MUTT trials at every pool size
(each pool scored whole by the jar), a tuned setting gives what the jar's stdio mode gives with ``-p``/``-w``,
the process survives its death, serves concurrent callers, and says how to install Java when it is missing."""
from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import muttlab.metrics.meteor as meteor_module
from muttlab.metrics.base import MetricUnavailable
from muttlab.metrics.meteor import ENGLISH_WEIGHTS, Meteor, jar_path
from muttlab.metrics.tokenize import ptb_tokenize
from tests.coco_reference import coco_meteor_scores

pytestmark = [pytest.mark.java, pytest.mark.skipif(shutil.which("java") is None, reason="needs Java")]


@pytest.fixture(scope="module")
def meteor():
    metric = Meteor()
    yield metric
    metric.close()


@pytest.fixture(scope="module")
def batch(mutt_suite):
    """Every 5th trial of every MUTT set, both sides, at 5, 10 and 20 references in turn (about 900
    segments; a trial's pools are nested, so the larger ones reuse the alignments of the smaller)."""
    cands, refs = [], []
    for name in mutt_suite.corruptions():
        for i, t in enumerate(mutt_suite.of(name)[::5]):
            for k in (5, 10, 20)[: 1 + i % 3]:
                cands += [t.original, t.corrupted]
                refs += [list(t.refs(k))] * 2
    return cands, refs


@pytest.fixture(scope="module")
def ours(meteor, batch):
    return meteor.score(*batch)


def test_equals_pycocoevalcap_wrapper(ours, batch):
    cands, refs = batch
    theirs = coco_meteor_scores(cands, refs)
    assert len(ours) == len(cands) > 800 and {len(r) for r in refs} == {5, 10, 20}
    assert np.array_equal(ours, theirs)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_every_thread_of_the_jvm_yields_the_cpu_to_the_python_that_waits_for_it(meteor, ours):
    """Beside a loaded demo's page runs the JVM's scorer threads took as much of the two cores as the server's
    interpreter, and visitors' pages waited for a study's alignments (docs/deploy.md, "Load on the demo")."""
    pid = meteor.process.pid
    assert pid is not None and Path(f"/proc/{pid}/comm").read_text().strip() == "java"
    # /proc/<pid>/task/<tid>/stat: the fields after the command's closing parenthesis start at the 3rd; nice is
    # the 19th.
    threads = [(Path(task) / "stat").read_text().rpartition(")")[2].split() for task in
               Path(f"/proc/{pid}/task").iterdir()]
    assert len(threads) > 5  # the scorer threads, the garbage collector's, the compiler's
    own = os.nice(0)  # this process's niceness, which the JVM's adds to
    assert meteor_module.NICENESS > 0 and {int(fields[16]) for fields in threads} == {
        min(19, own + meteor_module.NICENESS)}


@pytest.mark.parametrize("cores, threads", [(None, 1), (1, 1), (2, 1), (4, 3), (32, 8)])
def test_a_server_aligns_with_one_core_fewer_than_the_machine_has(monkeypatch, cores, threads):
    """A server's page runs share one interpreter: its JVM leaves them a core, where a command-line run takes a
    thread per core (docs/deploy.md, "One core for the pages")."""
    monkeypatch.setattr(os, "cpu_count", lambda: cores)
    assert meteor_module.serving_threads() == threads
    assert meteor_module.default_threads() == min(8, max(1, cores or 1))


def test_the_scorer_threads_chosen_are_the_ones_the_jvm_starts_with():
    process = meteor_module.MeteorProcess(threads=2)
    process.use_threads(1)
    assert process.command()[-4:] == ["1", "-l", "en", "-norm"]  # the driver's first argument, then Meteor's
    process.use_threads(0)  # never fewer than one
    assert process.threads == 1


def test_the_driver_is_compiled_once_per_user_and_jar(meteor, ours):
    """The JVM runs the class compiled into the user's cache (a start with Java's source launcher compiles the
    driver again: 0.5-1 s and a CPU second more), from a folder only this user may write in."""
    folder = meteor_module.compiled_driver()
    assert folder is not None and (folder / "MeteorBatch.class").is_file()
    assert meteor_module.compiled_driver() == folder
    assert folder.parent.stat().st_mode & 0o022 == 0
    command = Path(f"/proc/{meteor.process.pid}/cmdline").read_bytes().split(b"\0")
    assert b"MeteorBatch" in command and str(folder).encode() in command[command.index(b"-cp") + 1]


def test_a_cache_folder_others_may_write_in_is_not_used(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    (tmp_path / "muttlab-meteor").mkdir()
    (tmp_path / "muttlab-meteor").chmod(0o777)
    assert meteor_module.compiled_driver() is None
    (tmp_path / "a-file").write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "a-file"))
    assert meteor_module.compiled_driver() is None


def test_restarts_after_the_process_dies(meteor, ours, batch, tmp_path, monkeypatch):
    """Restarted where the driver cannot be compiled into the cache (a file where its folder should be): Java's
    source launcher compiles it, and the scores are the same."""
    cands, refs = batch[0][:40], batch[1][:40]
    meteor_module.clear_memo()  # make the next call ask the process again
    process = meteor.process
    first_pid = process.pid
    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "not-a-folder"))
    process._proc.kill()
    process._proc.wait()
    after = meteor.score(cands, refs)
    assert process.pid not in (None, first_pid)
    assert b"MeteorBatch.java" in Path(f"/proc/{process.pid}/cmdline").read_bytes()
    assert np.array_equal(after, ours[:40])


def test_answers_are_read_in_blocks_not_bytes(meteor, ours):
    """The reader thread's ``readline`` on an unbuffered pipe made one system call, and took the interpreter lock,
    per byte of every answer: in the server that lock is every visitor's page run's (docs/deploy.md)."""
    proc = meteor.process._proc
    assert isinstance(proc.stdout, io.BufferedReader) and isinstance(proc.stderr, io.BufferedReader)


def test_a_released_process_serves_the_next_caller_then_stops_unused(meteor, ours, batch):
    """A closed registry lets go of the JVM without stopping it: a call soon after finds the same process (an API
    call without a registry closes its own, and a start costs 5-6 s); one left unused stops."""
    cands, refs = batch[0][:20], batch[1][:20]
    process = meteor.process
    pid = process.pid
    Meteor().close()
    assert process.running and process.pid == pid
    meteor_module.clear_memo()  # make the next call ask the process again
    assert np.array_equal(Meteor().score(cands, refs), ours[:20]) and process.pid == pid
    process.release(linger=0.2)
    process.lock.acquire()  # a request under way: the timer waits for it, and sees it
    process._calls += 1
    process.lock.release()
    time.sleep(0.6)
    assert process.running and process.pid == pid  # asked after its release: kept
    process.release(linger=0.2)
    deadline = time.monotonic() + 30
    while process.running and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not process.running
    meteor_module.clear_memo()
    assert np.array_equal(meteor.score(cands, refs), ours[:20]) and process.pid not in (None, pid)  # started again


def test_a_forked_child_lets_the_parents_process_be(meteor, ours, batch):
    """A forked child (the runner's forked scorer) has the JVM's pipes but not their reader threads: it drops its
    handle and would start its own, and the parent's process goes on answering."""
    meteor.score(batch[0][:2], batch[1][:2])
    pid = meteor.process.pid
    child = os.fork()
    if child == 0:  # the child: its handle is empty, and nothing it does stops the parent's JVM
        process = meteor_module.process()
        process.close()
        os._exit(0 if process.pid is None and not process.running else 1)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    meteor_module.clear_memo()
    assert meteor.process.pid == pid and meteor.process.running
    assert np.array_equal(meteor.score(batch[0][:20], batch[1][:20]), ours[:20])


def test_concurrent_callers_get_their_own_scores(meteor, ours, batch):
    cands, refs = batch
    chunks = [(cands[i::4], refs[i::4]) for i in range(4)]
    meteor_module.clear_memo()
    results: dict[int, np.ndarray] = {}

    def work(i):
        results[i] = meteor.score(*chunks[i])

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        assert np.array_equal(results[i], ours[i::4])


def _stdio_jar(args: list[str], cands: list[str], refs: list[list[str]]) -> np.ndarray:
    """The jar's own stdio mode, as pycocoevalcap drives it: one SCORE line per segment, then one EVAL."""
    jar = jar_path()
    lines = [" ||| ".join(["SCORE", *(ptb_tokenize(r) for r in rs), ptb_tokenize(c)]) for c, rs in zip(cands, refs)]
    proc = subprocess.Popen(["java", "-jar", "-Xmx2G", str(jar), "-", "-", "-stdio", "-l", "en", "-norm", *args],
                            cwd=jar.parent, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    stats = []
    for line in lines:
        proc.stdin.write(line + "\n")
        proc.stdin.flush()
        stats.append(proc.stdout.readline().strip())
    out, _ = proc.communicate("EVAL ||| " + " ||| ".join(stats) + "\n", timeout=600)
    return np.array([float(x) for x in out.split()[: len(cands)]])


def test_a_tuned_setting_equals_the_jar_given_its_parameters(meteor, ours, batch):
    """All four parameters changed (ML-METEOR's levels change alpha): the shared process's alignments,
    re-weighted, give the jar's numbers for -p with the English module weights."""
    cands, refs = batch[0][::3], batch[1][::3]
    tuned = Meteor(alpha=0.3, beta=0.5, gamma=0.4, delta=0.9)
    assert tuned.process is meteor.process
    got = tuned.score(cands, refs)
    expected = _stdio_jar(["-p", "0.3 0.5 0.4 0.9", "-w", ENGLISH_WEIGHTS], cands, refs)
    assert len(got) > 250 and np.array_equal(got, expected)
    assert not np.array_equal(got, ours[::3])  # the setting does change the numbers
    assert "alpha:0.3" in tuned.signature() and "alpha" not in meteor.signature()
    # The defaults spelled out are the default setting, with the default signature.
    spelled = Meteor(alpha=0.85, beta=0.2, gamma=0.6, delta=0.75)
    assert spelled.setting() == "default" and spelled.signature() == meteor.signature()


def test_missing_java_names_the_fix(monkeypatch):
    monkeypatch.setattr(meteor_module.shutil, "which", lambda name: None)
    with pytest.raises(MetricUnavailable, match="apt-get install default-jdk-headless"):
        Meteor().check_available()

"""METEOR 1.5: the shared jar process gives pycocoevalcap's per-sentence scores on MUTT trials, survives
the death of its process, serves concurrent callers, and says how to install Java when it is missing."""
from __future__ import annotations

import shutil
import threading

import numpy as np
import pytest

import muttlab.metrics.meteor as meteor_module
from muttlab.metrics.base import MetricUnavailable
from muttlab.metrics.meteor import ENGLISH_WEIGHTS, Meteor
from muttlab.metrics.tokenize import ptb_tokenize

pytestmark = [pytest.mark.java, pytest.mark.skipif(shutil.which("java") is None, reason="needs Java")]


@pytest.fixture(scope="module")
def meteor():
    metric = Meteor()
    yield metric
    metric.close()


@pytest.fixture(scope="module")
def batch(mutt_suite):
    """Every 5th trial of every MUTT set, both sides, 5 references (about 900 segments)."""
    cands, refs = [], []
    for name in mutt_suite.corruptions():
        for t in mutt_suite.of(name)[::5]:
            cands += [t.original, t.corrupted]
            refs += [list(t.refs(5))] * 2
    return cands, refs


@pytest.fixture(scope="module")
def ours(meteor, batch):
    return meteor.score(*batch)


def test_equals_pycocoevalcap_wrapper(ours, batch):
    from pycocoevalcap.meteor.meteor import Meteor as CocoMeteor

    cands, refs = batch
    # Same jar, same text: pycocoevalcap's wrapper is fed the PTB tokenisation our metric uses, and scores
    # each segment against all its references in one SCORE line.
    gts = {i: [ptb_tokenize(r) for r in rs] for i, rs in enumerate(refs)}
    res = {i: [ptb_tokenize(c)] for i, c in enumerate(cands)}
    coco = CocoMeteor()
    try:
        _, theirs = coco.compute_score(gts, res)
    finally:
        with coco.lock:
            coco.meteor_p.kill()
            coco.meteor_p.wait()
    assert len(ours) == len(cands) > 800
    assert np.array_equal(ours, np.asarray(theirs, dtype=np.float64))


def test_restarts_after_the_process_dies(meteor, ours, batch):
    cands, refs = batch[0][:40], batch[1][:40]
    meteor_module._PAIR_MEMOS.clear()  # make the next call ask the process again
    process = meteor.process
    first_pid = process.pid
    process._proc.kill()
    process._proc.wait()
    after = meteor.score(cands, refs)
    assert process.pid not in (None, first_pid)
    assert np.array_equal(after, ours[:40])


def test_concurrent_callers_get_their_own_scores(meteor, ours, batch):
    cands, refs = batch
    chunks = [(cands[i::4], refs[i::4]) for i in range(4)]
    meteor_module._PAIR_MEMOS.clear()
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


def test_one_process_per_parameter_setting():
    default, same = Meteor(), Meteor()
    tuned = Meteor(alpha=0.5)
    assert default.process is same.process
    assert tuned.process is not default.process
    # -p switches the jar to a custom task, whose module weights differ; -w restores the English ones.
    assert tuned._args() == ("-p", "0.5 0.2 0.6 0.75", "-w", ENGLISH_WEIGHTS)
    assert "alpha:0.5" in tuned.signature() and "alpha" not in default.signature()
    # The defaults spelled out share the default process and signature (the numbers are the same).
    spelled = Meteor(alpha=0.85, beta=0.2, gamma=0.6, delta=0.75)
    assert spelled.process is default.process and spelled.signature() == default.signature()


def test_missing_java_names_the_fix(monkeypatch):
    monkeypatch.setattr(meteor_module.shutil, "which", lambda name: None)
    with pytest.raises(MetricUnavailable, match="apt-get install default-jre-headless"):
        Meteor().check_available()

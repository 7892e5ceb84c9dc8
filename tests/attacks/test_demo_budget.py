"""A demo nobody can tie up: on the read-only demo, an anonymous visitor's expensive actions are refused with a
message or run within the visitor's share and the server's cap, a new tab is no new share, and work whose
visitor has gone stops (AppTest on the real data; the budget and the queue in this process).

On 6c8e244 every one of these ran: "Recompute on this server" and "Evaluate on SICK" for anyone, a neural or
full grid for anyone, as many at once as tabs were open, for as long as they took, and a closed tab's
recomputation (one job on the queue) ran to its end."""
from __future__ import annotations

import importlib
import itertools
import os
import threading
import time

import numpy as np
import pandas as pd
import pytest

from muttlab import api
from muttlab.dashboard import services
from muttlab.dashboard.services import budget
from muttlab.engine import queue as work_queue
from muttlab.engine import runner
from muttlab.errors import MuttlabError
from tests.dashboard.conftest import app_env, open_link, open_page  # noqa: F401 (fixture)


@pytest.fixture
def demo(app_env, monkeypatch):
    """The read-only demo, with a share of ``MUTTLAB_VISITOR_COMPUTE_S`` seconds per visitor (default 120)."""
    monkeypatch.setenv("MUTTLAB_READ_ONLY", "1")
    return app_env


def _messages(at) -> str:
    return " ".join(e.value.replace("\\", "") for e in [*at.warning, *at.error, *at.info, *at.caption])


def _press_run(at, metrics: list[str], corruptions: list[str] | None = None, refs=(5,)):
    at.multiselect(key="run-metrics").set_value(metrics)
    if corruptions is not None:
        at.multiselect(key="run-corruptions").set_value(corruptions)
    at.multiselect(key="run-refs").set_value(list(refs))
    return at.get("form_submit_button")[0].click().run()


# --------------------------------------------------------------------------- refused outright

def _reproduce(settings):
    return services.reproduction(settings)


def _evaluate(settings):
    from muttlab.learned import reval

    return services.reval_evaluation(settings, "treelstm", "test", reval.find_checkpoint("treelstm", None))


# page, its button, what the page says instead, the engine function behind it, the service a crafted request calls
REFUSED = [("published", "pub-recompute", "this public demo shows the shipped ones", (api, "reproduce"), _reproduce),
           ("learned", "learned-evaluate", "this public demo does not offer it",
            ("muttlab.learned.reval", "evaluate_model"), _evaluate)]


@pytest.mark.parametrize("page, button, instead, engine, service", REFUSED, ids=[r[0] for r in REFUSED])
def test_a_minutes_long_action_is_refused_on_the_demo(demo, monkeypatch, page, button, instead, engine, service):
    """Published's "Recompute on this server" and Learned's "Evaluate on SICK": one piece of work of minutes each,
    which no progress report could stop, so the demo does not offer them."""
    calls = []
    module, name = engine
    monkeypatch.setattr(importlib.import_module(module) if isinstance(module, str) else module, name,
                        lambda *a, **k: calls.append(1))
    at = open_page(page)
    assert not at.exception
    assert not [b for b in at.button if b.key == button]
    assert instead in _messages(at)
    with pytest.raises(services.DemoLimit, match="switched off on this public demo"):
        service(services.settings())  # below the page: a crafted request meets the same refusal
    assert calls == []


@pytest.mark.parametrize("slow", ["TERp", "BADGER-like", "BERTScore-F1"])
def test_a_slow_metric_is_refused_on_the_demo(demo, monkeypatch, slow):
    calls = []
    monkeypatch.setattr(runner, "run", lambda *a, **k: calls.append(1))
    at = _press_run(open_page("run"), ["BLEU-4", slow], ["neg_subj"])
    assert not at.exception and calls == []
    shown = _messages(at)
    assert f"{slow} takes minutes of a cold server's time" in shown and "computes only the quick metrics" in shown


# --------------------------------------------------------------------------- a new tab is no new share

def _lease_elsewhere(visitor: str, what: str):
    """A computation under way for ``visitor`` (another tab of this visitor: ``ip:unknown`` in AppTest)."""
    return budget.demo_budget(services.settings()).take(visitor, what)


def test_a_second_tab_cannot_start_a_computation_while_the_first_runs_one(demo, monkeypatch):
    calls = []
    monkeypatch.setattr(runner, "run", lambda *a, **k: calls.append(1))
    first_tab = _lease_elsewhere(budget.visitor_key("ip:unknown"), "the grid run")
    try:
        at = _press_run(open_page("run"), ["BLEU-4"], ["neg_subj"])
        assert not at.exception and calls == []
        assert "Your other tab (or another visitor at your address) is computing the grid run" in _messages(at)
        # Every expensive button meets the same rule: the severity curves, a study, a challenge set.
        at = open_link("severity", {"metrics": "BLEU-4", "corruption": "typo", "strengths": "1,2", "refs": "5"})
        at.button(key="sev-link").click().run()
        assert "Your other tab" in _messages(at)
        at = open_link("correlation", {"assignments": "37"})
        at.button(key="dbleu-link").click().run()
        assert "Your other tab" in _messages(at)
    finally:
        budget.demo_budget(services.settings()).give_back(first_tab)
    at = _press_run(open_page("run"), ["BLEU-4"], ["neg_subj"])
    assert calls == [1]  # once the first tab's computation ended


def test_the_server_runs_one_visitors_computation_at_a_time(demo, monkeypatch):
    calls = []
    monkeypatch.setattr(runner, "run", lambda *a, **k: calls.append(1))
    other = _lease_elsewhere("ip:203.0.113.9", "the severity curves")
    try:
        at = _press_run(open_page("run"), ["BLEU-4"], ["neg_subj"])
    finally:
        budget.demo_budget(services.settings()).give_back(other)
    assert not at.exception and calls == []
    assert "This public demo is computing for 1 other visitor right now" in _messages(at)


def test_a_grid_that_outruns_the_share_stops_and_the_next_is_refused(demo, monkeypatch):
    """A visitor with a 2-second share presses Run on a grid whose pieces take 0.5 s each: the run stops once the
    share is used (the pieces not started are never scored) and the page says why; pressing Run again, in this tab
    or a new one, is refused until the share comes back."""
    monkeypatch.setenv("MUTTLAB_VISITOR_COMPUTE_S", "2")
    scored = []

    def slow_piece(self, metric, jobs):
        scored.append(len(jobs[0][0]))
        time.sleep(0.5)
        return [np.zeros(len(cands)) for cands, _ in jobs]

    monkeypatch.setattr(runner._Scorer, "_parallel", slow_piece)
    at = _press_run(open_page("run"), ["BLEU-1"], ["neg_subj", "neg_verb", "sem_opps", "passive"], refs=(5, 10, 20))
    assert not at.exception
    assert "was stopped: this public demo gives each visitor 2 s of computing in 15 minutes" in _messages(at)
    time.sleep(1.5)  # pieces not cancelled would have run by now
    assert 3 <= len(scored) < 24  # 4 types x 3 counts x 2 sides were planned
    done = len(scored)
    at = _press_run(open_page("run"), ["BLEU-2"], ["neg_subj"])
    assert "yours is used up: nothing was started" in _messages(at)
    assert len(scored) == done


def test_a_unit_study_apart_that_outruns_the_share_is_stopped_child_and_all(demo, monkeypatch, tmp_path):
    """The ΔBLEU unit study runs in a forked child (``services.apart``), out of the page thread's reach: its
    visitor's share still stops it, at the child's next report, and the child is ended, not left computing."""
    from muttlab.human import dbleu

    monkeypatch.setenv("MUTTLAB_VISITOR_COMPUTE_S", "2")
    pid_file = tmp_path / "child"

    def endless_study(data, progress=None, **options):
        pid_file.write_text(str(os.getpid()))
        for step in itertools.count():
            progress(step, 10 ** 6, "correlating units")
            time.sleep(0.2)

    monkeypatch.setattr(dbleu, "unit_study", endless_study)
    at = open_page("correlation", state={"dbleu-assignments": 20, "dbleu-sweeps": False})
    next(b for b in at.get("form_submit_button") if b.label == "Run the unit study").click().run()
    assert not at.exception
    assert "was stopped: this public demo gives each visitor 2 s of computing in 15 minutes" in _messages(at)
    child = int(pid_file.read_text())
    assert child != os.getpid()
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)


def test_a_share_comes_back_as_the_window_moves():
    now = [0.0]
    share = budget.Budget(seconds=10, jobs=1, window_s=60, clock=lambda: now[0])
    lease = share.take("ip:198.51.100.7", "a grid")
    now[0] = 10.5
    with pytest.raises(budget.DemoLimit, match="was stopped"):
        lease.check()
    share.give_back(lease)
    with pytest.raises(budget.DemoLimit, match=r"used up: nothing was started. More in about 1 min"):
        share.take("ip:198.51.100.7", "a grid")
    assert share.take("ip:198.51.100.8", "a grid")  # another visitor has a share of its own
    now[0] = 71.0
    share.give_back(share._running["ip:198.51.100.8"])
    assert share.left("ip:198.51.100.7") == 10


def test_a_visitor_is_an_address_an_ipv6_visitor_a_network():
    """What a new tab, a private window or a cleared cookie keeps: the address; an IPv6 client rotating the
    interface part of its address stays one visitor."""
    assert budget.visitor_key("ip:203.0.113.5") == "ip:203.0.113.5"
    assert budget.visitor_key("ip:2001:db8:1:2:aaaa::1") == budget.visitor_key("ip:2001:db8:1:2:ffff:1:2:3")
    assert budget.visitor_key("ip:2001:db8:1:2::1") != budget.visitor_key("ip:2001:db8:1:3::1")
    assert budget.visitor_key("ip:::ffff:203.0.113.5") == "ip:203.0.113.5"
    assert budget.visitor_key("ip:unknown") == "ip:unknown"


# --------------------------------------------------------------------------- work whose visitor has gone stops

def test_a_running_study_stops_at_its_next_report_once_its_visitor_has_gone(demo):
    """A long job on the fair queue (a published recomputation, a severity curve, a challenge set: one piece of
    work each) reports its progress; once the visitor's tab has closed it stops at the next report, where on
    6c8e244 it ran to its end (7.5 minutes of METEOR after the tab had closed)."""
    steps, ended = [], threading.Event()

    def study(report):
        try:
            for step in range(50):
                report(step, 50, "scoring")
                steps.append(step)
                time.sleep(0.05)
            return "finished"
        finally:
            ended.set()

    polls = []

    def tab_closed() -> None:
        polls.append(1)
        if len(polls) > 2:
            raise RuntimeError("the visitor closed the tab")

    queue = work_queue.FairQueue()
    report_then = []
    job = queue.submit("visitor", lambda: study(lambda *step: (work_queue.checkpoint(), report_then.append(step))))
    with pytest.raises(RuntimeError, match="closed the tab"):
        work_queue.gather([job], tab_closed, poll_s=0.05)
    assert ended.wait(5)
    assert len(steps) < 10  # stopped a report or two after the visitor left, not after 50
    assert isinstance(job.exception(), work_queue.Cancelled)
    queue.close()


def test_a_study_the_service_runs_stops_when_the_session_goes(demo, monkeypatch):
    """The same through the dashboard's door (``services.severity``): the severity job's progress reports are its
    stopping points."""
    steps, ended = [], threading.Event()

    def severity(settings, corruption, metrics, strengths, refs=5, registry=None, progress=None):
        try:
            for step in range(50):
                progress(step, 50, "scoring")
                steps.append(step)
                time.sleep(0.05)
        finally:
            ended.set()

    monkeypatch.setattr(api, "severity", severity)
    polls = []

    def gone() -> None:
        polls.append(1)
        if len(polls) > 2:
            raise RuntimeError("the visitor closed the tab")

    from muttlab.dashboard.services import core
    monkeypatch.setattr(core, "still_wanted", gone)
    with pytest.raises(RuntimeError, match="closed the tab"):
        services.severity(services.settings(), "typo", ("BLEU-4",), (1, 2), 5)
    assert ended.wait(5) and len(steps) < 40  # of 50: stopped at the report after the poll that found it gone


def test_the_severity_curves_let_a_small_request_pass_at_their_reports(demo, monkeypatch):
    """Through the dashboard's door (``services.severity``), the severity curves are a big job: another visitor's
    Playground request is answered at the curves' next report. On f687d20 they were queued at the cost of a small
    job (50 a metric and strength), so the request waited for their end (3.5 s in the load scenario)."""
    order: list[tuple] = []

    def severity(settings, corruption, metrics, strengths, refs=5, registry=None, progress=None):
        for step in range(40):
            progress(step, 40, "scoring")
            order.append(("curves", step))
            time.sleep(0.05)
        return pd.DataFrame()

    monkeypatch.setattr(api, "severity", severity)
    curves = threading.Thread(target=services.severity, args=(services.settings(), "typo", ("BLEU-4",), (1, 3), 5))
    curves.start()
    while not order:
        time.sleep(0.01)
    small = work_queue.shared_queue().submit("visitor", lambda: order.append(("small",)) or "small", cost=8)
    assert small.result(timeout=10) == "small"
    curves.join(10)
    assert len(order[:order.index(("small",))]) < 10  # a report or two after it came, of the curves' 40


def test_a_big_job_lets_small_requests_pass_at_its_reports():
    """An attacker's big job (a severity curve, a study, a challenge set: one piece of work each) holds the queue's
    one worker; another visitor's Playground request is answered at the big job's next report, not at its end (on
    6c8e244 it waited for the end: 31 s at p95 in the load scenario)."""
    queue = work_queue.FairQueue()
    order: list[tuple] = []

    def big():
        for step in range(40):
            order.append(("big", step))
            time.sleep(0.05)
            work_queue.checkpoint()  # its progress report
        return "big"

    attacker = queue.submit("attacker", big, cost=10 ** 6)
    while not order:
        time.sleep(0.01)
    visitor = queue.submit("visitor", lambda: order.append(("small",)) or "small", cost=8)
    assert visitor.result(timeout=10) == "small"
    assert attacker.result(timeout=10) == "big"
    before = order[:order.index(("small",))]
    assert len(before) < 10  # answered a report or two after it came, of the big job's 40
    queue.close()


def test_cancelled_is_a_message_not_a_traceback():
    assert issubclass(work_queue.Cancelled, MuttlabError) and issubclass(budget.DemoLimit, MuttlabError)

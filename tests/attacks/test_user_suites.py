"""What a visitor's own sentences can make the server do (the Your sentences page and
:mod:`muttlab.dashboard.services.user_suites`): each test is one attack, run as an anonymous visitor runs it
(AppTest on the real data, or the service a page calls), and what must hold instead."""
from __future__ import annotations

import json
import re

import pytest

from muttlab.dashboard import services
from muttlab.dashboard.grid_table import KEYS_SCRIPT
from muttlab.dashboard.services import user_suites
from muttlab.errors import MuttlabError
from muttlab.settings import Limits, load_settings
from muttlab.trials import Suite, Trial
from tests.attacks.test_links import markdown_values
from tests.attacks.test_served import page, served, visit  # noqa: F401 (fixtures: a served dashboard, Chromium)
from tests.dashboard.conftest import (app_env, app_settings, browser, html_bodies, open_link,  # noqa: F401
                                      html_start_tags, open_page, trial_cards)
from tests.dashboard.test_mine_page import build, grid_links, sentences_csv

SMALL = ("text,reference\n"
         "A dog runs across the beach.,A dog is running on the sand.\n"
         "Two men are playing chess.,Two people play a board game.\n")
SMALL_TYPES = ["double_PP", "neg_verb"]
NAME = re.compile(r"mine:[0-9a-f]{32}")


@pytest.fixture(autouse=True)
def empty_store():
    """Each test starts with a server that holds no visitor's suite, and leaves none behind."""
    user_suites._held.clear()
    yield
    user_suites._held.clear()


def _built_name(at) -> str:
    names = {link["suite"] for link in grid_links(at)}
    assert len(names) == 1
    return names.pop()


def _another_session_builds_and_scores() -> None:
    at = build(open_page("mine"), SMALL, types=SMALL_TYPES, metrics=["BLEU-4"], refs=[1])
    assert not at.exception and not at.error
    assert NAME.fullmatch(_built_name(at))


@pytest.mark.parametrize("variable, value, text, upload, message", [
    ("MUTTLAB_MAX_SUITE_SENTENCES", "3", sentences_csv(5), None,
     ("has 5 sentences, over the limit of 3", "split it into parts of at most 3 sentences")),
    ("MUTTLAB_MAX_REFS", "2", sentences_csv(3, refs=3), None,
     ("has 3 references, over the limit of 2", "keep at most 2 references per sentence")),
    ("MUTTLAB_MAX_CHARS", "40", sentences_csv(3), None, ("has 61 characters, over the limit of 40",)),
    ("MUTTLAB_MAX_SUITE_KB", "1", None, ("mine.csv", sentences_csv(8, refs=10).encode("utf-8"), "text/csv"),
     ("KiB, over the limit of 1", "split it into smaller files")),
])
def test_over_each_cap_the_page_says_so_and_keeps_the_text(app_env, monkeypatch, variable, value, text, upload,
                                                           message):
    """Attack: more sentences, references, characters or bytes than a shared server should parse and keep."""
    monkeypatch.setenv(variable, value)
    at = build(open_page("mine"), text, upload=upload, metrics=["BLEU-4"], refs=[1])
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and all(part in errors[0] for part in message), errors
    assert variable in errors[0].replace("\\", "")  # the setting that raises the limit is named
    assert not [b for b in html_bodies(at) if "mutt-grid" in b]  # nothing was built or scored
    if text is not None:
        assert at.text_area(key="mine-text").value == text  # the visitor's text stays in the form
    _another_session_builds_and_scores()


def test_an_oversized_upload_is_refused_before_it_is_parsed(app_settings, monkeypatch):
    """Attack: a file far over the size cap; refusing it must cost no parsing."""
    settings = load_settings(limits=Limits(max_suite_kb=1))

    def parse(*args, **kwargs):
        raise AssertionError("an oversized input was parsed")

    monkeypatch.setattr("muttlab.suites.user.parse_user_sentences", parse)
    data = sentences_csv(30, refs=10).encode("utf-8")
    with pytest.raises(MuttlabError, match=r"big\.csv has [\d.]+ KiB, over the limit of 1"):
        user_suites.build(settings, user_suites.Visitor("s", "ip:unknown"), data, "big.csv", "csv", SMALL_TYPES)
    assert not user_suites._held().suites


def test_markup_in_sentences_stays_text(app_env):
    """Attack: sentences, ids and references that are HTML, script and Markdown (links, images)."""
    script = "A man <script>alert(1)</script> is riding a horse in a field."
    image = "![x](http://attacker.example/x.png) A man rides a horse."
    tag = "<img src=x onerror=alert(1)>"
    text = ("id,text,reference\n"
            f'"{tag}","{script}","{image}"\n'
            f'"{tag}",A woman is slicing an onion.,A woman cuts an onion.\n'  # the id again: a row left out
            "[link](http://attacker.example),Two dogs play in the snow.,**Two** dogs in snow.\n")
    at = build(open_page("mine"), text, types=SMALL_TYPES + ["det_sub", "swap_chunks"], metrics=["BLEU-4"],
               refs=[1])
    assert not at.exception and not at.error
    # Kept as typed, and escaped wherever Markdown is drawn: no tag, link or image is left once every escaped
    # character is taken out.
    assert script in {t.original for t in user_suites.lookup(_built_name(at)).trials}
    assert [w for w in markdown_values(at) if "used twice" in w], "the repeated id is reported"
    for value in markdown_values(at):
        bare = re.sub(r"\\.", "", value)
        if any(marker in value for marker in ("alert", "onerror", "attacker")):
            assert "<" not in bare and "](" not in bare, value
    for body in html_bodies(at):
        if body.startswith('<div class="mutt-paste-note"') or body == KEYS_SCRIPT:  # the page's own static code
            continue  # (ui.paste_guard, ui.grid_keys)
        assert "<script" not in body and "onerror" not in body and "attacker.example" not in body
    # The suite's drill-down draws each trial as one HTML card: every text in it arrives as text, and the id
    # that is a tag (quotes and all) neither opens a tag nor leaves its attribute.
    link = next(link for link in grid_links(at) if link["corruption"] == "det_sub")
    drill = open_link("drilldown", {**link, "show": "all"})
    assert not drill.exception and not drill.error
    cards = [body for body in html_bodies(drill) if body.startswith('<div class="mutt-card"')]
    assert {card["trial"] for card in trial_cards(drill)} == {f"det_sub/{tag}", "det_sub/[link](http://attacker.example)"}
    for body in cards:
        tags = html_start_tags(body)
        assert {name for name, _ in tags} <= CARD_TAGS, tags
        for name, attrs in tags:
            assert set(attrs) <= {"class", "data-trial"}, (name, attrs)  # no href (nobody can edit), no src
            assert all(not value.startswith(("javascript", "http")) for value in attrs.values())


CARD_TAGS = {"div", "p", "span", "dl", "dt", "dd", "details", "summary", "ol", "li"}


def test_a_guessed_or_stale_suite_name_opens_nothing(app_env, app_settings, monkeypatch):
    """Attack: open someone's suite by guessing its name, a prefix of it, a path, or one that was dropped."""
    monkeypatch.setenv("MUTTLAB_MAX_SUITES", "1")
    at = build(open_page("mine"), SMALL, types=SMALL_TYPES, metrics=["BLEU-4"], refs=[1])
    first = _built_name(at)
    guesses = ["mine:" + "0" * 32, first[:13], first.upper(), first + "0", first + "\n", "mine:../../etc/passwd",
               "mine:" + first[5:].replace(first[-1], "f" if first[-1] != "f" else "e"), "mine:*", "mine:"]
    for guess in guesses:
        assert user_suites.lookup(guess) is None, guess
        with pytest.raises(MuttlabError):
            services.suite_named(app_settings, guess)
    selection = services.Selection(("BLEU-4",), ("neg_verb",), (1,))
    with pytest.raises(MuttlabError, match="holds no such suite"):
        services.run_grid(app_settings, selection, suite_name=guesses[0])
    # A Drill-down link with a guessed name: a message, never a traceback.
    link = open_link("drilldown", {"metric": "BLEU-4", "corruption": "neg_verb", "refs": "1", "suite": guesses[0]})
    assert not link.exception
    # The same session builds again with a cap of 1: its first suite is dropped, and its name opens nothing.
    at.get("form_submit_button")[0].click().run()
    second = _built_name(at)
    assert second != first and user_suites.lookup(second) is not None
    assert user_suites.lookup(first) is None
    # The page says which of the visitor's own suites made room (Markdown-escaped: mine\:…).
    assert any(first in i.value.replace("\\", "") for i in at.info)
    with pytest.raises(MuttlabError, match="holds no such suite"):
        services.suite_named(app_settings, first)


def _suite(tag: str) -> Suite:
    return Suite(tag, [Trial(id=f"neg_verb/{tag}", corruption="neg_verb", original="A man is riding a horse.",
                             corrupted="A man is not riding a horse.", references=("A man rides a horse.",))])


def test_one_client_cannot_push_out_other_clients_suites():
    """Attack: one client opens session after session and builds suites until the server's store is full."""
    victims = {}
    for n in range(3):
        for s in range(2):
            name = user_suites.add(user_suites.Visitor(f"victim-{n}-{s}", f"ip:10.0.0.{n}"), _suite("v"), 4)
            victims[name] = n
    attacker = [user_suites.add(user_suites.Visitor(f"attacker-{s}", "ip:6.6.6.6"), _suite("a"), 4)
                for s in range(300)]
    assert all(user_suites.lookup(name) is not None for name in victims)
    assert sum(user_suites.lookup(name) is not None for name in attacker) == user_suites.ADDRESS_SHARE
    # Many attacking clients fill the store: each may push out only suites of clients holding as many as it does.
    for client in range(12):
        for s in range(user_suites.ADDRESS_SHARE + 3):
            user_suites.add(user_suites.Visitor(f"bot-{client}-{s}", f"ip:7.7.7.{client}"), _suite("b"), 4)
    assert len(user_suites._held().suites) <= user_suites.KEPT
    assert all(user_suites.lookup(name) is not None for name in victims)


def test_a_session_keeps_at_most_its_cap():
    """Attack: one session builds suite after suite."""
    visitor = user_suites.Visitor("one-session", "ip:unknown")
    names = [user_suites.add(visitor, _suite(str(i)), 4) for i in range(10)]
    assert [user_suites.lookup(name) is not None for name in names] == [False] * 6 + [True] * 4
    # Another session of the same client keeps its own.
    other = user_suites.add(user_suites.Visitor("other-session", "ip:unknown"), _suite("o"), 4)
    assert user_suites.lookup(other) is not None and sum(user_suites.lookup(n) is not None for n in names) == 4


def test_suite_names_are_unguessable_and_not_listed(app_env):
    """Attack: enumerate other visitors' suites."""
    names = [user_suites.add(user_suites.Visitor(f"s{i}", f"ip:10.1.{i // 250}.{i % 250}"), _suite("x"), 4)
             for i in range(200)]
    assert all(NAME.fullmatch(name) for name in names)
    assert len(set(names)) == len(names) and len({name[5:13] for name in names}) == len(names)
    # The kept suite carries its name (results and downloads say which suite), never a hint of the others'.
    assert user_suites.lookup(names[-1]).name == names[-1]
    # A visitor's page shows its own suite only.
    mine = build(open_page("mine"), SMALL, types=SMALL_TYPES, metrics=["BLEU-4"], refs=[1])
    own = _built_name(mine)
    other = open_page("mine")
    shown = "\n".join(markdown_values(other) + html_bodies(other) + [c.value for c in other.code])
    assert own not in shown and not NAME.search(shown)


def test_a_read_only_server_builds_suites_and_writes_nothing_shared(app_env, monkeypatch):
    """An anonymous visitor on the hosted read-only demo may build and score a suite; nothing on disk changes."""
    monkeypatch.setenv("MUTTLAB_READ_ONLY", "1")
    at = open_page("mine")
    before = sorted(p.relative_to(app_env) for p in app_env.rglob("*")) if app_env.exists() else []
    at = build(at, SMALL, types=SMALL_TYPES, metrics=["BLEU-4"], refs=[1])
    assert not at.exception and not at.error
    assert user_suites.lookup(_built_name(at)) is not None
    after = sorted(p.relative_to(app_env) for p in app_env.rglob("*")) if app_env.exists() else []
    assert after == before


@pytest.mark.browser
def test_a_served_page_refuses_too_many_sentences_and_answers_the_next_visitor(served, page):
    """Attack against a served dashboard: a crafted form with more sentences than a suite may hold; the page
    names the limit, and the next visitor builds and scores a suite of their own."""
    rows = "".join(f"A man is riding horse number {i} in a field.,A man rides a horse.\n" for i in range(250))
    session = served.interact({"page": "mine"})
    button = next(a["key"] for a in session["actions"] if a["kind"] == "trigger" and a["label"] == "Build and score")
    answer = json.dumps(served.interact({"session_id": session["session_id"],
                                         "widget_state": {"mine-text": "text,reference\n" + rows},
                                         "trigger": {"key": button}}))
    assert "over the limit of 200" in answer and "Traceback" not in answer
    other = served.interact({"page": "mine"})
    answer = json.dumps(served.interact({"session_id": other["session_id"], "widget_state": {"mine-text": SMALL},
                                         "trigger": {"key": button}}))
    assert "Traceback" not in answer and "mutt-grid" in answer
    assert re.search(r"drilldown\?[^\"]*suite=mine%3A[0-9a-f]{32}", answer)  # its cells link to its drill-down
    visit(page, served, "mine", {}, "Your sentences")  # a browser's page still loads

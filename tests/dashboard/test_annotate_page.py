"""The Annotate page: browse, accept/reject, edit with conflict detection; user text shown as text;
read-only mode refuses every write in the page and in the store."""
from __future__ import annotations

import pytest

from muttlab.settings import load_settings
from muttlab.pairs.store import ReadOnlyError, open_store
from muttlab.trials import Trial
from tests.dashboard.conftest import html_bodies, open_page, shown_errors

TOKEN = "annotator-secret"
SCRIPT = "<script>alert('x')</script> A man plays a guitar"


@pytest.fixture
def stocked(app_env, data_dir):
    """A store holding three real MUTT trials (the first of neg_subj, passive and det_sub)."""
    from muttlab.sources import load_mutt_experiments
    settings = load_settings()
    suite = load_mutt_experiments(settings)
    trials = [suite.of(name)[0] for name in ("neg_subj", "passive", "det_sub")]
    with open_store(settings) as store:
        store.add(trials, author="loader")
    return trials


def _signed_in(**state):
    at = open_page("annotate", secrets={"annotator_token": TOKEN}, state=state)
    at.text_input(key="signin-name").input("Ada")
    at.text_input(key="signin-token").input(TOKEN)
    next(b for b in at.get("form_submit_button") if b.label == "Sign in").click().run()
    return at


def _edit_area(at, field):
    return next(t for t in at.text_area if t.key.endswith(f"-{field}"))


def _save(at):
    next(b for b in at.get("form_submit_button") if b.label == "Save edit").click().run()


def test_browse_without_login(stocked):
    at = open_page("annotate")
    assert not shown_errors(at)
    assert any("annotator credential" in i.value for i in at.info)
    listing = at.dataframe[1].value
    assert listing["key"].tolist() == [t.id for t in stocked]
    assert not [t for t in at.text_area]  # no edit form
    assert all(b.disabled for b in at.button if b.label in ("Accept", "Reject"))


def test_wrong_credential_is_refused(stocked):
    at = open_page("annotate", secrets={"annotator_token": TOKEN})
    at.text_input(key="signin-name").input("Eve")
    at.text_input(key="signin-token").input("guess")
    next(b for b in at.get("form_submit_button") if b.label == "Sign in").click().run()
    assert any("not right" in e.value for e in at.error)
    assert not [t for t in at.text_area]


def test_script_in_an_edit_is_shown_as_text(stocked):
    at = _signed_in()
    assert not shown_errors(at)
    _edit_area(at, "corrupted").input(SCRIPT)
    _save(at)
    assert any("Saved pair #1 as version 2" in s.value for s in at.success)
    with open_store(load_settings()) as store:
        assert store.get(1).corrupted == SCRIPT  # stored exactly as typed
        assert store.get(1).status == "edited"
    bodies = "\n".join(html_bodies(at))
    assert "<script>" not in bodies
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in bodies
    history = at.dataframe[-1].value
    assert history["corrupted"].tolist()[-1] == SCRIPT  # tables show the literal text
    assert history["author"].tolist() == ["loader", "Ada"]


def test_accept_and_reject_record_revisions(stocked):
    at = _signed_in()
    at.button(key="reject-1").click().run()
    assert any("rejected" in s.value for s in at.success)
    with open_store(load_settings()) as store:
        assert store.get(1).status == "rejected"
        assert [r.action for r in store.history(1)] == ["create", "reject"]


def test_a_concurrent_edit_is_detected_and_the_typing_kept(stocked):
    at = _signed_in()
    with open_store(load_settings()) as store:  # someone else saves first
        store.edit(1, 1, {"original": stocked[0].original + " today"}, author="Bob")
    _edit_area(at, "corrupted").input("There is nobody holding a frog")
    _save(at)
    # One message, which says what happened and what to do; no banner above it says otherwise.
    conflict = [m.value for m in at.markdown if m.value.startswith("**Conflict on pair #1**")]
    assert len(conflict) == 1 and "(by Bob)" in conflict[0] and "not saved" in conflict[0]
    assert "filled in below" in conflict[0] and "save again" in conflict[0]
    assert not at.error and not at.warning
    # The refused text is offered again in the form, now based on Bob's version.
    assert _edit_area(at, "corrupted").value == "There is nobody holding a frog"
    with open_store(load_settings()) as store:
        assert store.get(1).corrupted == stocked[0].corrupted


def test_read_only_refuses_writes_in_the_page_and_the_store(stocked, monkeypatch):
    monkeypatch.setenv("MUTTLAB_READ_ONLY", "1")
    monkeypatch.setenv("MUTTLAB_ANNOTATOR_TOKEN", TOKEN)
    at = open_page("annotate", state={"annotator": "Ada"})  # even a session that claims to be signed in
    assert not shown_errors(at)
    assert any("read-only" in i.value for i in at.info)
    assert not [t for t in at.text_area]
    assert not [t for t in at.text_input if t.key == "signin-token"]
    assert at.button(key="accept-1").disabled and at.button(key="reject-1").disabled
    settings = load_settings()
    assert settings.read_only
    with open_store(settings) as store:
        assert store.get(1).status == "accepted"
        assert len(store.history(1)) == 1
        with pytest.raises(ReadOnlyError):
            store.edit(1, 1, {"corrupted": "changed"}, author="Ada")
        with pytest.raises(ReadOnlyError):
            store.accept(1, author="Ada")
        with pytest.raises(ReadOnlyError):
            store.add([Trial("x/1", "neg_subj", "a", "b", ("c",))], author="Ada")


def test_empty_store_offers_to_load_the_suite(app_env):
    at = _signed_in()
    assert any("empty" in i.value for i in at.info)
    assert at.button(key="annotate-seed").label.startswith("Add the 2,217 trials")


def test_a_conflict_shows_mine_theirs_and_the_original_side_by_side(stocked):
    at = _signed_in()
    with open_store(load_settings()) as store:
        store.edit(1, 1, {"corrupted": "Bob's corruption"}, author="Bob")
    _edit_area(at, "corrupted").input("Ada's corruption")
    _save(at)
    assert any(m.value.startswith("**Conflict on pair #1**") for m in at.markdown)
    texts = [t.value for t in at.text]
    assert "Ada's corruption" in texts and "Bob's corruption" in texts and stocked[0].corrupted in texts
    assert _edit_area(at, "corrupted").value == "Ada's corruption"  # kept until Ada decides
    _save(at)  # saving again goes on Bob's version
    with open_store(load_settings()) as store:
        assert store.get(1).corrupted == "Ada's corruption" and store.get(1).version == 3
    assert not any(m.value.startswith("**Conflict on pair #1**") for m in at.markdown)


def test_revert_next_unreviewed_and_guideline(stocked):
    at = _signed_in()
    assert any(m.value == "**Guideline: Negated Subject**" for m in at.markdown)
    _edit_area(at, "corrupted").input("changed")
    _save(at)
    at.selectbox(key="revert-version-1").set_value(1)
    at.button(key="revert-1").click().run()
    with open_store(load_settings()) as store:
        pair = store.get(1)
        assert (pair.corrupted, pair.version, pair.status) == (stocked[0].corrupted, 3, "accepted")
        assert {p.status for p in store.iter_all()} == {"accepted"}
    at.button(key="annotate-next").click().run()
    assert any("Every pair has been reviewed" in s.value for s in at.success)
    with open_store(load_settings()) as store:
        store.add([Trial("x/1", "neg_verb", "A dog runs.", "A dog does not run.", ("A dog is running.",))],
                  author="loader", status="proposed")
        new_id = store.get_by_key("x/1").id
    at.button(key="annotate-next").click().run()
    assert any(m.value == f"#### Pair #{new_id}" for m in at.markdown)


def test_an_empty_store_says_who_can_add_pairs_on_this_server(app_env, monkeypatch):
    # No credential and no accounts: nobody can sign in here, so the page does not promise a signed-in annotator.
    at = open_page("annotate")
    assert not shown_errors(at)
    captions = " ".join(c.value for c in at.caption)
    assert "Nobody can sign in on this server" in captions and "docs/deploy.md" in captions
    assert "by a signed-in annotator" not in captions
    monkeypatch.setenv("MUTTLAB_READ_ONLY", "1")
    at = open_page("annotate", secrets={"annotator_token": TOKEN})
    captions = " ".join(c.value for c in at.caption)
    assert "read-only demo: nobody adds or edits pairs here" in captions and "docs/deploy.md" in captions
    assert "by a signed-in annotator" not in captions
    # Where an annotator can sign in, the page says so.
    monkeypatch.delenv("MUTTLAB_READ_ONLY")
    at = open_page("annotate", secrets={"annotator_token": TOKEN})
    assert "by a signed-in annotator" in " ".join(c.value for c in at.caption)


def test_adding_the_suite_copies_its_trials_unreviewed_imported_by_the_signed_in_annotator(app_env):
    at = _signed_in()
    at.button(key="annotate-seed").click().run()
    assert not shown_errors(at)
    with open_store(load_settings()) as store:
        counts = store.counts()
        # The MUTT experiment sets hold 2,217 trials (data/README.md), none reviewed here yet.
        assert sum(counts.values()) == 2217 and {status for _, status in counts} == {"proposed"}
        pair = store.get_by_key("neg_subj/0")
        assert pair.source == "mutt:neg_subj#0"
        (first,) = store.history(pair.id)
        assert (first.action, first.author) == ("import", "Ada")

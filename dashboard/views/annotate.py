"""Annotate: browse, accept, reject and edit corruption pairs in the pair store, with their history.

Editing needs an annotator (or maintainer) sign-in; a read-only server (the hosted demo) shows everything
and changes nothing. Writes go through :func:`muttlab.pairs.guard.guarded`, which checks the role again.
User text (sentences, keys, sources, names) is shown as text (``st.text``, tables, escaped HTML), never as
Markdown or HTML.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from muttlab.corruptions import catalog
from muttlab.dashboard import auth, services, ui
from muttlab.dashboard.diff import diff_block
from muttlab.errors import MuttlabError
from muttlab.pairs.guard import guarded

PAGE_SIZE = 25
PENDING_KEY = "annotate-pending"  # pair id -> a refused change, offered again so nothing typed is lost
FLASH_KEY = "annotate-flash"
SNAPSHOT_KEY = "annotate-snapshots"  # pair id -> the state the edit form started from


def _flash(kind: str, message: str) -> None:
    st.session_state[FLASH_KEY] = (kind, message)


def _show_flash() -> None:
    kind, message = st.session_state.pop(FLASH_KEY, (None, None))
    if kind == "success":
        st.success(message, icon=":material/check_circle:")
    elif kind == "error":
        st.error(message)
    elif kind == "info":
        st.info(message)


def _access_panel(settings, access: auth.Access) -> None:
    if access.can_edit:
        left, right = st.columns([6, 1], vertical_alignment="center")
        left.success(f"Signed in as {ui.md_text(access.author)} ({access.identity.role.value}): edits are "
                     f"recorded under this name.", icon=":material/edit:")
        if right.button("Sign out", key="annotate-signout"):
            auth.sign_out()
            st.rerun()
        return
    st.info(ui.md_text(access.reason), icon=":material/lock:")
    if not access.identity.anonymous:  # signed in, with a role that cannot edit
        if st.button("Sign out", key="annotate-signout"):
            auth.sign_out()
            st.rerun()
        return
    if not auth.can_sign_in(settings):
        return
    with st.form("annotate-signin", border=True):
        st.markdown("**Sign in to edit**")
        name_col, token_col = st.columns(2)
        name = name_col.text_input("Your name", key="signin-name")
        token = token_col.text_input(auth.credential_label(settings), type="password", key="signin-token")
        if st.form_submit_button("Sign in"):
            problem = auth.sign_in(name, token, settings)
            if problem:
                st.error(problem)
            else:
                st.rerun()


def _write(action, success: str) -> None:
    """Run one store write (from a widget callback); refusals and conflicts become messages."""
    try:
        action()
    except MuttlabError as exc:
        _flash("error", f"Not saved: {ui.md_text(str(exc))}")
    else:
        _flash("success", success)


def _review(store, pair_id: int, version: int, access: auth.Access, action: str) -> None:
    """Accept/reject callback; refuses unless this session may edit."""
    if not access.can_edit:
        _flash("error", f"Not saved: {ui.md_text(access.reason)}")
        return
    write = store.accept if action == "accept" else store.reject
    _write(lambda: write(pair_id, access.author, base_version=version), f"Pair #{pair_id} {action}ed.")
    st.session_state.get(SNAPSHOT_KEY, {}).pop(pair_id, None)


def _history_frame(history) -> pd.DataFrame:
    rows = []
    for rev in history:
        before = rev.before or {}
        changed = [k for k in rev.after if before.get(k) != rev.after.get(k)] if rev.before else ["created"]
        rows.append({"version": rev.version, "action": rev.action, "author": rev.author, "at": rev.at,
                     "changed": ", ".join(changed), "status": rev.after.get("status", ""),
                     "original": rev.after.get("original", ""), "corrupted": rev.after.get("corrupted", "")})
    return pd.DataFrame(rows, columns=["version", "action", "author", "at", "changed", "status", "original",
                                       "corrupted"])


def _snapshot(pair) -> dict:
    """What the edit form starts from: the pair as first shown, or a refused change offered again.

    Kept in session state, so the form (and the version the edit is based on) stays as the annotator
    saw it even when someone else changes the pair meanwhile; saving then reports the conflict.
    """
    snapshots = st.session_state.setdefault(SNAPSHOT_KEY, {})
    if pair.id not in snapshots:
        pending = st.session_state.setdefault(PENDING_KEY, {}).pop(pair.id, None)
        values = {"corruption": pair.corruption, "original": pair.original, "corrupted": pair.corrupted,
                  "references": list(pair.references)}
        snapshots[pair.id] = {"version": pair.version, "values": {**values, **(pending or {})},
                              "pending": bool(pending), "form": f"edit-{pair.id}-v{pair.version}-{bool(pending)}"}
    return snapshots[pair.id]


def _save_edit(store, pair_id: int, snapshot: dict, author: str | None) -> None:
    """Form callback: the changes against the form's starting values, saved on its base version."""
    state, key, start = st.session_state, snapshot["form"], snapshot["values"]
    if not author:  # the form is only drawn for editors; refuse anyway if the session changed
        _flash("error", "Not saved: this session cannot edit.")
        return
    typed = {"corruption": state[f"{key}-type"], "original": state[f"{key}-original"],
             "corrupted": state[f"{key}-corrupted"],
             "references": [line.strip() for line in state[f"{key}-references"].splitlines() if line.strip()]}
    changes = {k: v for k, v in typed.items() if v != start[k]}
    if not changes:
        _flash("info", "Nothing changed.")
        return
    try:
        saved = store.edit(pair_id, snapshot["version"], changes, author)
    except MuttlabError as exc:
        if hasattr(exc, "attempted"):  # a conflict: offer the change again on the current version
            state[PENDING_KEY][pair_id] = {k: v for k, v in exc.attempted.items() if k != "status"}
        _flash("error", f"Not saved: {ui.md_text(str(exc))}")
    else:
        _flash("success", f"Saved pair #{saved.id} as version {saved.version}.")
    state[SNAPSHOT_KEY].pop(pair_id, None)


def _edit_form(store, pair, access: auth.Access, corruptions: list[str], labels: dict[str, str]) -> None:
    snapshot = _snapshot(pair)
    values, key = snapshot["values"], snapshot["form"]
    if snapshot["pending"]:
        st.warning(f"Your earlier change to this pair was not saved because someone else changed it first. "
                   f"It is filled in below, now based on version {snapshot['version']}: check it and save again.",
                   icon=":material/warning:")
    elif pair.version != snapshot["version"]:
        st.warning(f"This pair has changed since you opened it (now version {pair.version}); saving this "
                   f"form will report the conflict.", icon=":material/warning:")
    with st.form(key, border=True):
        st.markdown(f"**Edit pair #{pair.id}** (based on version {snapshot['version']})")
        options = corruptions if values["corruption"] in corruptions else corruptions + [values["corruption"]]
        st.selectbox("Corruption type", options, index=options.index(values["corruption"]),
                     format_func=lambda c: labels.get(c, c), key=f"{key}-type")
        st.text_area("Original", values["original"], height=68, key=f"{key}-original")
        st.text_area("Corruption", values["corrupted"], height=68, key=f"{key}-corrupted")
        st.text_area("References (one per line, in pool order)", "\n".join(values["references"]), height=180,
                     key=f"{key}-references")
        st.form_submit_button("Save edit", type="primary", icon=":material/save:", on_click=_save_edit,
                              args=(store, pair.id, snapshot, access.author))


def _pair_detail(store, pair, access: auth.Access, corruptions: list[str], labels: dict[str, str]) -> None:
    with st.container(border=True):
        st.markdown(f"#### Pair #{pair.id}")
        ui.caption_text(f"key {pair.key} · {labels.get(pair.corruption, pair.corruption)} · status {pair.status} · "
                        f"version {pair.version} · updated {pair.updated_at}")
        st.html(diff_block(pair.original, pair.corrupted))
        if pair.human_score is not None:
            st.caption(f"SICK gold relatedness: {pair.human_score:.2f} / 5")
        if pair.source:
            ui.caption_text(f"source: {pair.source}")
        with st.expander(f"{len(pair.references)} references"):
            st.text("\n".join(f"{i:>2}. {ref}" for i, ref in enumerate(pair.references, start=1)))
        accept_col, reject_col, _ = st.columns([1, 1, 5])
        disabled = not access.can_edit
        # Callbacks bind the version shown now: a change made meanwhile by someone else is a conflict.
        accept_col.button("Accept", icon=":material/check:", key=f"accept-{pair.id}", disabled=disabled,
                          on_click=_review, args=(store, pair.id, pair.version, access, "accept"))
        reject_col.button("Reject", icon=":material/close:", key=f"reject-{pair.id}", disabled=disabled,
                          on_click=_review, args=(store, pair.id, pair.version, access, "reject"))
    if access.can_edit:
        _edit_form(store, pair, access, corruptions, labels)

    st.markdown("**History**")
    history = _history_frame(store.history(pair.id))
    ui.table(history, f"pair-{pair.id}-history", key=f"history-{pair.id}")


def _storable(trials) -> tuple[list, dict[str, str]]:
    """The trials the store accepts, and the others with the store's reason (e.g. an empty reference)."""
    check = services.optional_module("muttlab.pairs.store").validate_fields
    ok, refused = [], {}
    for trial in trials:
        try:
            check({"original": trial.original, "corrupted": trial.corrupted, "references": list(trial.references)})
        except MuttlabError as exc:
            refused[trial.id] = str(exc)
        else:
            ok.append(trial)
    return ok, refused


def _seed_store(store, settings, access: auth.Access) -> None:
    suite = ui.load_suite(settings)
    if suite is None:
        return
    if not access.can_edit:
        st.caption("Pairs are added with `muttlab pairs import FILE` (JSONL) or, by a signed-in annotator, "
                   "from this page.")
        return
    if st.button(f"Add the {len(suite.trials):,} trials of suite '{suite.name}' to the store",
                 key="annotate-seed", icon=":material/playlist_add:"):
        trials, refused = _storable(suite.trials)
        note = ""
        if refused:
            note = (f" {len(refused)} left out because the store refuses them: "
                    + "; ".join(f"{k} ({v})" for k, v in list(refused.items())[:5]))
        _write(lambda: store.add(trials, access.author),
               ui.md_text(f"Added {len(trials):,} trials of suite '{suite.name}' to the store.{note}"))
        st.rerun()


def page() -> None:
    settings = ui.header("Annotate corruption pairs",
                         "Review the pairs a suite is built from. Every change is a revision (who, when, "
                         "before and after); two people editing one pair never overwrite each other.")
    if services.optional_module("muttlab.pairs.store") is None:
        ui.not_available("The pair store", "muttlab.pairs.store")
        return
    access = auth.access(settings)
    try:
        # Every write below goes through the guard, which checks this session's role again.
        store = guarded(services.store(settings), access.identity, settings)
    except MuttlabError as exc:
        st.error(f"The pair store cannot be opened: {ui.md_text(str(exc))}")
        return
    _access_panel(settings, access)
    _show_flash()

    counts = store.counts()
    if not counts:
        st.info("The pair store is empty.", icon=":material/inbox:")
        _seed_store(store, settings, access)
        return
    corruptions = sorted({c for c, _ in counts})
    known = [t.name for t in catalog.all_types()]  # the edit form offers every known type
    labels = services.corruption_labels(known + corruptions)
    statuses = sorted({s for _, s in counts})
    summary = (pd.Series(counts).rename_axis(["corruption", "status"]).rename("pairs").reset_index()
               .pivot_table(index="corruption", columns="status", values="pairs", fill_value=0).reset_index())
    with st.expander(f"{sum(counts.values()):,} pairs in the store", expanded=False):
        ui.table(summary, "pair-counts", key="counts")

    f1, f2, f3 = st.columns([3, 2, 3])
    chosen_types = f1.multiselect("Corruption types", corruptions, format_func=lambda c: labels.get(c, c),
                                  key="annotate-types")
    chosen_status = f2.multiselect("Status", statuses, key="annotate-status")
    text = f3.text_input("Search the sentences", key="annotate-text")
    filters = dict(corruption=chosen_types or None, status=chosen_status or None, text=text.strip() or None)
    total = store.list(limit=0, **filters).total
    if total == 0:
        st.info("No pair matches the filters.")
        return
    n_pages = max(1, -(-total // PAGE_SIZE))
    number = st.number_input(f"Page (of {n_pages})", 1, n_pages, 1, key="annotate-page") if n_pages > 1 else 1
    listing = store.list(offset=(int(number) - 1) * PAGE_SIZE, limit=PAGE_SIZE, **filters)
    frame = pd.DataFrame([{"id": p.id, "key": p.key, "corruption": p.corruption, "status": p.status,
                           "version": p.version, "original": p.original, "corrupted": p.corrupted}
                          for p in listing.items])
    st.markdown(f"**{total:,}** matching pairs")
    st.dataframe(frame, hide_index=True)
    st.download_button("Download matching pairs (CSV)",
                       lambda: pd.DataFrame([r.to_json() for r in store.iter_all(**filters)]).to_csv(index=False),
                       file_name="pairs.csv", mime="text/csv", key="pairs-csv", icon=":material/download:",
                       on_click="ignore")

    ids = [p.id for p in listing.items]
    by_id = {p.id: p for p in listing.items}
    chosen = st.selectbox("Pair", ids, format_func=lambda i: f"#{i} · {by_id[i].key} · {by_id[i].status}",
                          key="annotate-pair")
    _pair_detail(store, store.get(chosen), access, known, labels)


page()

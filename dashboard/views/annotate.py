"""Annotate: browse, accept, reject and edit corruption pairs in the pair store, with their history.

Editing needs an annotator (or maintainer) sign-in; a read-only server (the hosted demo) shows everything
and changes nothing. Every write goes through :func:`muttlab.pairs.guard.guarded` with the identity of the
moment it is made (:func:`_writer`), never one a button kept from the run that drew it, and the guard checks
that sign-in again (account, role, session) before writing under its name.
User text (sentences, keys, sources, names) is shown as text (``st.text``, tables, escaped HTML), never as
Markdown or HTML.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from muttlab import api, escaping
from muttlab.dashboard import auth, number_format, services, ui
from muttlab.dashboard.diff import diff_block
from muttlab.errors import MuttlabError
from muttlab.api import ConflictError, guarded

PAGE_SIZE = 25
PENDING_KEY = "annotate-pending"  # pair id -> a refused change, offered again so nothing typed is lost
FLASH_KEY = "annotate-flash"
SNAPSHOT_KEY = "annotate-snapshots"  # pair id -> the state the edit form started from
CONFLICT_KEY = "annotate-conflicts"  # pair id -> {"mine", "theirs", "base"}: shown side by side until decided
OPEN_KEY = "annotate-open"  # the open pair's id: it stays open whatever the filters list


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


def _writer(settings):
    """The pair store as this session may write to it now: the identity is read when the write is made."""
    return guarded(services.store(settings), auth.identity(settings), settings)


def _access_panel(settings, access: auth.Access) -> None:
    if access.can_edit:
        left, right = st.columns([6, 1], vertical_alignment="center")
        left.success(f"Signed in as {ui.md_text(access.author)} ({access.identity.role.value}): edits are "
                     f"recorded under this name.", icon=":material/edit:")
        if right.button("Sign out", key="annotate-signout"):
            auth.sign_out(settings)
            st.rerun()
        return
    st.info(ui.md_text(access.reason), icon=":material/lock:")
    if not access.identity.anonymous:  # signed in, with a role that cannot edit
        if st.button("Sign out", key="annotate-signout"):
            auth.sign_out(settings)
            st.rerun()
        return
    if not auth.can_sign_in(settings):
        return
    if auth.sign_in_route():
        auth.sign_in_link("Sign in to edit")
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


def _review(settings, pair_id: int, version: int, action: str) -> None:
    """Accept/reject callback; the guard refuses unless this session may edit when it is clicked.

    Text typed in the edit form but not saved lives only in the browser (a form sends its values on
    submit), so the form must keep its identity: the snapshot moves to the new version instead of being
    dropped, and the typed text stays where it is, savable on the new version.
    """
    try:
        store = _writer(settings)
        write = store.accept if action == "accept" else store.reject
        saved = write(pair_id, base_version=version)
    except MuttlabError as exc:
        _flash("error", f"Not saved: {ui.md_text(str(exc))}")
        return
    _flash("success", f"Pair #{pair_id} {action}ed.")
    snapshot = st.session_state.get(SNAPSHOT_KEY, {}).get(pair_id)
    if snapshot is not None and snapshot["version"] == version:
        snapshot["version"] = saved.version


def _revert(settings, pair_id: int, version: int, widget: str) -> None:
    to_version = st.session_state.get(widget)
    if to_version is None:
        _flash("error", "Not saved: choose a version")
        return
    _write(lambda: _writer(settings).revert(pair_id, int(to_version), base_version=version),
           f"Pair #{pair_id} reverted to version {to_version}.")
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
        # "values" fill the form; changes are measured against "stored" (the pair at that version), so a
        # refused edit offered again is saved as it stands.
        snapshots[pair.id] = {"version": pair.version, "values": {**values, **(pending or {})}, "stored": values,
                              "pending": bool(pending), "form": f"edit-{pair.id}-v{pair.version}-{bool(pending)}"}
    return snapshots[pair.id]


def _save_edit(settings, pair_id: int, snapshot: dict) -> None:
    """Form callback: the changes against the form's starting values, saved on its base version."""
    state, key, start = st.session_state, snapshot["form"], snapshot.get("stored", snapshot["values"])
    typed = {"corruption": state[f"{key}-type"], "original": state[f"{key}-original"],
             "corrupted": state[f"{key}-corrupted"],
             "references": [line.strip() for line in state[f"{key}-references"].splitlines() if line.strip()]}
    changes = {k: v for k, v in typed.items() if v != start[k]}
    if not changes:
        _flash("info", "Nothing changed.")
        return
    try:
        store = _writer(settings)
        saved = store.edit(pair_id, snapshot["version"], changes)
    except ConflictError as exc:  # offer the change again on the current version; the panel says so
        mine = {**start, **{k: v for k, v in exc.attempted.items() if k != "status"}}
        state.setdefault(PENDING_KEY, {})[pair_id] = {k: v for k, v in exc.attempted.items() if k != "status"}
        try:
            base = store.version_at(pair_id, snapshot["version"])
        except MuttlabError:
            base = start
        state.setdefault(CONFLICT_KEY, {})[pair_id] = {"mine": mine, "theirs": exc.current.snapshot(),
                                                     "base": base, "base_version": snapshot["version"],
                                                     "their_version": exc.current.version,
                                                     "their_author": exc.last_author}
    except MuttlabError as exc:
        _flash("error", f"Not saved: {ui.md_text(str(exc))}")
    else:
        _flash("success", f"Saved pair #{saved.id} as version {saved.version}.")
        state.get(CONFLICT_KEY, {}).pop(pair_id, None)
    state[SNAPSHOT_KEY].pop(pair_id, None)


def _conflict_panel(pair) -> None:
    """The one message of a conflict: yours, theirs and the version both started from, side by side; yours
    stays in the form below, based on their version, until you save it again or discard it."""
    conflict = st.session_state.get(CONFLICT_KEY, {}).get(pair.id)
    if not conflict:
        return
    with st.container(border=True):
        by = f" (by {ui.md_text(conflict['their_author'])})" if conflict.get("their_author") else ""
        st.markdown(f"**Conflict on pair #{pair.id}**: your edit was not saved, because the pair changed to version "
                    f"{conflict['their_version']}{by} while you were editing version {conflict['base_version']}. "
                    f"Your edit is filled in below, now based on version {conflict['their_version']}: compare, "
                    f"then save again or discard it.")
        columns = st.columns(3)
        sides = (("Your edit (unsaved)", conflict["mine"]),
                 (f"Their version {conflict['their_version']}", conflict["theirs"]),
                 (f"Original: version {conflict['base_version']}", conflict["base"]))
        for column, (title, values) in zip(columns, sides):
            column.markdown(f"**{title}**")
            for field in ("original", "corrupted"):
                column.caption(field)
                column.text(str(values.get(field, "")))
            column.caption(f"{len(values.get('references') or [])} references · type {values.get('corruption', '')}")
        if st.button("Discard my edit (keep theirs)", key=f"discard-{pair.id}", icon=":material/delete:"):
            st.session_state[CONFLICT_KEY].pop(pair.id, None)
            st.session_state.get(SNAPSHOT_KEY, {}).pop(pair.id, None)
            st.session_state.get(PENDING_KEY, {}).pop(pair.id, None)
            st.rerun()


def _guideline(corruption: str) -> None:
    try:
        ctype = api.corruption_type(corruption)
    except KeyError:
        st.caption(f"No guideline: `{corruption}` is not in the catalogue.")
        return
    st.markdown(f"**Guideline: {ctype.label}**")
    st.caption(f"family {ctype.family.value} · rule {ctype.rule.value}")
    st.markdown(ctype.description)
    st.caption("A good pair changes only what the type names; the references describe the original.")


def _edit_form(settings, pair, corruptions: list[str], labels: dict[str, str]) -> None:
    snapshot = _snapshot(pair)
    values, key = snapshot["values"], snapshot["form"]
    if not snapshot["pending"] and pair.version != snapshot["version"]:
        st.warning(f"This pair has changed since you opened it (now version {pair.version}); saving this "
                   f"form will report the conflict.", icon=":material/warning:")
    _conflict_panel(pair)
    form_col, guide_col = st.columns([3, 1])
    with guide_col:
        _guideline(values["corruption"])
    with form_col, st.form(key, border=True):
        st.markdown(f"**Edit pair #{pair.id}** (based on version {snapshot['version']})")
        options = corruptions if values["corruption"] in corruptions else corruptions + [values["corruption"]]
        st.selectbox("Corruption type", options, index=options.index(values["corruption"]),
                     format_func=lambda c: labels.get(c, c), key=f"{key}-type")
        st.text_area("Original", values["original"], height=68, key=f"{key}-original")
        st.text_area("Corruption", values["corrupted"], height=68, key=f"{key}-corrupted")
        st.text_area("References (one per line, in pool order)", "\n".join(values["references"]), height=180,
                     key=f"{key}-references")
        st.form_submit_button("Save edit", type="primary", icon=":material/save:", on_click=_save_edit,
                              args=(settings, pair.id, snapshot))


def _pair_detail(settings, store, pair, access: auth.Access, corruptions: list[str], labels: dict[str, str]) -> None:
    with st.container(border=True):
        st.markdown(f"#### Pair #{pair.id}")
        ui.caption_text(f"key {pair.key} · {labels.get(pair.corruption, pair.corruption)} · status {pair.status} · "
                        f"version {pair.version} · updated {pair.updated_at}")
        st.html(diff_block(pair.original, pair.corrupted))
        if pair.human_score is not None:
            st.caption(f"SICK gold relatedness: {number_format.rating_text(pair.human_score)} / 5")
        if pair.source:
            ui.caption_text(f"source: {pair.source}")
        with st.expander(f"{len(pair.references)} references"):
            st.text("\n".join(f"{i:>2}. {ref}" for i, ref in enumerate(pair.references, start=1)))
        # One row that wraps (not fixed columns): each button keeps the width its label needs in a narrow column.
        buttons = st.container(horizontal=True)
        disabled = not access.can_edit
        # Callbacks bind the version shown now (a change made meanwhile by someone else is a conflict), not who
        # is signed in: that is read again when the button is clicked.
        buttons.button("Accept", icon=":material/check:", key=f"accept-{pair.id}", disabled=disabled,
                       on_click=_review, args=(settings, pair.id, pair.version, "accept"))
        buttons.button("Reject", icon=":material/close:", key=f"reject-{pair.id}", disabled=disabled,
                       on_click=_review, args=(settings, pair.id, pair.version, "reject"))
    if access.can_edit:
        _edit_form(settings, pair, corruptions, labels)

    st.markdown("**History**")
    history = _history_frame(store.history(pair.id))
    ui.table(history, f"pair-{pair.id}-history", key=f"history-{pair.id}")
    earlier = [int(v) for v in history["version"] if int(v) < pair.version]
    if access.can_edit and earlier:
        left, right = st.columns([2, 5], vertical_alignment="bottom")
        widget = f"revert-version-{pair.id}"
        left.selectbox("Earlier version", earlier[::-1], key=widget)
        right.button("Revert to this version", key=f"revert-{pair.id}", icon=":material/undo:", on_click=_revert,
                     args=(settings, pair.id, pair.version, widget))


def _storable(trials) -> tuple[list, dict[str, str]]:
    """The trials the store accepts, and the others with the store's reason (e.g. an empty reference)."""
    check = api.validate_pair_fields
    ok, refused = [], {}
    for trial in trials:
        try:
            check({"original": trial.original, "corrupted": trial.corrupted, "references": list(trial.references)})
        except MuttlabError as exc:
            refused[trial.id] = str(exc)
        else:
            ok.append(trial)
    return ok, refused


def _adding_pairs(settings) -> str:
    """How pairs get into the store, as it is on this server: only where someone can sign in is it this page."""
    own = ("To curate pairs, run your own server with accounts (`muttlab users`, `MUTTLAB_USERS_FILE`; see "
           "`docs/deploy.md`).")
    if settings.read_only:
        return "This is a read-only demo: nobody adds or edits pairs here. " + own
    if not auth.can_sign_in(settings):
        return ("Nobody can sign in on this server (no accounts or annotator credential are configured), so pairs "
                "are added only by whoever runs it, with `muttlab pairs import FILE` (JSONL). " + own)
    return "Pairs are added with `muttlab pairs import FILE` (JSONL) or, by a signed-in annotator, from this page."


def _seed_store(settings, access: auth.Access) -> None:
    suite = ui.load_suite(settings)
    if suite is None:
        return
    if not access.can_edit:
        st.caption(_adding_pairs(settings))
        return
    if st.button(f"Add the {len(suite.trials):,} trials of suite '{suite.name}' to the store",
                 key="annotate-seed", icon=":material/playlist_add:"):
        trials, refused = _storable(suite.trials)
        note = ""
        if refused:
            note = (f" {len(refused)} left out because the store refuses them: "
                    + "; ".join(f"{k} ({v})" for k, v in list(refused.items())[:5]))
        _write(lambda: _writer(settings).add(trials, imported_from=f"suite:{suite.name}"),
               ui.md_text(f"Added {len(trials):,} trials of suite '{suite.name}' to the store as proposed: each "
                          f"keeps its source and awaits review; its history names you as the importer.{note}"))
        st.rerun()


def page() -> None:
    settings = ui.header("Annotate corruption pairs",
                         "Review the pairs a suite is built from. Every change is a revision (who, when, "
                         "before and after); two people editing one pair never overwrite each other.")
    access = auth.access(settings)
    try:
        # The reads of this run; each write builds its own guarded store when it is made (_writer).
        store = guarded(services.store(settings), access.identity, settings)
    except MuttlabError as exc:
        st.error(f"The pair store cannot be opened: {ui.md_text(str(exc))}")
        return
    _access_panel(settings, access)
    _show_flash()

    try:
        counts = store.counts()  # the first read: an unreachable database is found here, not when opened
    except MuttlabError as exc:
        st.error(f"The pair store cannot be read: {ui.md_text(str(exc))}")
        return
    if not counts:
        st.info("The pair store is empty.", icon=":material/inbox:")
        _seed_store(settings, access)
        return
    corruptions = sorted({c for c, _ in counts})
    known = [t.name for t in api.corruption_types()]  # the edit form offers every known type
    labels = services.corruption_labels(known + corruptions)
    statuses = sorted({s for _, s in counts})
    summary = (pd.Series(counts).rename_axis(["corruption", "status"]).rename("pairs").reset_index()
               .pivot_table(index="corruption", columns="status", values="pairs", fill_value=0).reset_index())
    with st.expander(f"{sum(counts.values()):,} pairs in the store", expanded=False):
        ui.table(summary, "pair-counts", key="counts")

    _open_controls(store)
    if "annotate-types" not in st.session_state:
        st.session_state["annotate-types"] = ui.query_list("types", corruptions, [])
        st.session_state["annotate-status"] = ui.query_list("status", statuses, [])
        st.session_state["annotate-text"] = ui.query_value("q", "")
    f1, f2, f3 = st.columns([3, 2, 3])
    chosen_types = f1.multiselect("Corruption types", corruptions, format_func=lambda c: labels.get(c, c),
                                  key="annotate-types")
    chosen_status = f2.multiselect("Status", statuses, key="annotate-status")
    text = f3.text_input("Search the sentences", key="annotate-text")
    filters = dict(corruption=chosen_types or None, status=chosen_status or None, text=text.strip() or None)
    total = store.list(limit=0, **filters).total
    if total == 0:
        st.info("No pair matches the filters.")
        if st.session_state.get(OPEN_KEY) or ui.query_int("pair"):
            _sync_query(chosen_types, chosen_status, text, st.session_state.get(OPEN_KEY) or ui.query_int("pair"))
            _pair_detail_by_id(settings, store, st.session_state.get(OPEN_KEY) or ui.query_int("pair"), access, known,
                               labels)
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
                       lambda: escaping.csv_frame(pd.DataFrame([r.to_json() for r in store.iter_all(**filters)])),
                       file_name="pairs.csv", mime="text/csv", key="pairs-csv", icon=":material/download:",
                       on_click="ignore")

    ids = [p.id for p in listing.items]
    by_id = {p.id: p for p in listing.items}
    open_id = st.session_state.get(OPEN_KEY) or ui.query_int("pair") or ids[0]
    # The open pair stays open when the filters no longer list it: it heads the choices.
    options = ids if open_id in ids else [open_id] + ids
    chosen = st.selectbox("Pair", options, index=options.index(open_id),
                          format_func=lambda i: f"#{i} · {by_id[i].key} · {by_id[i].status}" if i in by_id
                          else f"#{i} (open; not in this listing)")
    _open(chosen)
    _sync_query(chosen_types, chosen_status, text, chosen)
    ui.copy_link()
    _pair_detail_by_id(settings, store, chosen, access, known, labels)


def _sync_query(types, statuses, text, pair_id) -> None:
    ui.write_query({"types": types, "status": statuses, "q": text.strip() or None, "pair": pair_id})


def _open(pair_id: int) -> None:
    st.session_state[OPEN_KEY] = int(pair_id)


def _pair_detail_by_id(settings, store, pair_id: int, access, known, labels) -> None:
    try:
        pair = store.get(pair_id)
    except MuttlabError as exc:
        st.error(ui.md_text(exc))
        return
    _pair_detail(settings, store, pair, access, known, labels)


def _next_unreviewed(store, after: int | None) -> int | None:
    """The first proposed pair after ``after`` (wrapping round), or None when every pair is reviewed."""
    pairs = [p.id for p in store.iter_all(status=["proposed"])]
    if not pairs:
        return None
    later = [i for i in pairs if after is None or i > after]
    return (later or pairs)[0]


def _open_controls(store) -> None:
    """Open a pair by its id or key, or the next one nobody has reviewed."""
    left, middle, right = st.columns([3, 2, 2], vertical_alignment="bottom")
    typed = left.text_input("Open pair by id or key", key="annotate-open-id", placeholder="e.g. 17 or neg_subj/42")
    if middle.button("Open", key="annotate-open-button", icon=":material/open_in_new:") and typed.strip():
        try:
            ident = typed.strip()
            pair = store.resolve(int(ident) if ident.isdigit() else ident)
        except MuttlabError as exc:
            st.error(ui.md_text(exc))
        else:
            _open(pair.id)
    if right.button("Next unreviewed", key="annotate-next", icon=":material/skip_next:"):
        nxt = _next_unreviewed(store, st.session_state.get(OPEN_KEY))
        if nxt is None:
            st.success("Every pair has been reviewed.")
        else:
            _open(nxt)


page()

"""``muttlab pairs``: review the pair store (muttlab.pairs.store) from the command line.

``list`` / ``show`` / ``edit`` / ``accept`` / ``reject`` / ``export`` / ``import``. An edit names the
version it is based on (``--base-version``, shown by ``show``); if someone changed the pair since, the
edit is refused with a message and nothing is overwritten.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from muttlab.cli import summary
from muttlab.cli.common import add_output_options, emit, render, settings_from_args, split_names, whole
from muttlab.api import read_lines
from muttlab.errors import MuttlabError
from muttlab.api import STATUSES, PairRecord, open_store

LIST_COLUMNS = ["id", "key", "corruption", "status", "version", "original", "corrupted"]


def _record_frame(records: list[PairRecord]) -> pd.DataFrame:
    return pd.DataFrame([{c: getattr(r, c) for c in LIST_COLUMNS} for r in records], columns=LIST_COLUMNS)


def _show_text(record: PairRecord, history) -> str:
    lines = [f"pair {record.id}  {record.key}", f"  type:       {record.corruption}",
             f"  status:     {record.status} (version {record.version}, updated {record.updated_at})",
             f"  source:     {record.source}",
             f"  human:      {record.human_score if record.human_score is not None else '-'}",
             f"  original:   {record.original}", f"  corrupted:  {record.corrupted}",
             f"  references ({len(record.references)}):"]
    lines += [f"    {i + 1:2d}. {ref}" for i, ref in enumerate(record.references)]
    if history is not None:
        lines.append("  history:")
        for rev in history:
            changed = sorted(k for k in rev.after if rev.before is None or rev.before.get(k) != rev.after[k])
            lines.append(f"    v{rev.version} {rev.action:7s} {rev.author} {rev.at}  {', '.join(changed)}")
    return "\n".join(lines) + "\n"


def handle_list(args: argparse.Namespace) -> int:
    with open_store(settings_from_args(args)) as store:
        page = store.list(corruption=split_names(args.type) or None, status=split_names(args.status) or None,
                          text=args.text, offset=args.offset, limit=args.limit)
    emit(render(_record_frame(page.items), args.format, records=[r.to_json() | {"store_id": r.id}
                                                                   for r in page.items]), args.output)
    print(f"{len(page.items)} of {page.total} pairs (offset {page.offset})", file=sys.stderr)
    return 0


def handle_show(args: argparse.Namespace) -> int:
    with open_store(settings_from_args(args)) as store:
        record = store.resolve(args.pair)
        history = store.history(record.id) if args.history else None
    if args.json:
        data = record.to_json() | {"store_id": record.id}
        if history is not None:
            data["history"] = [rev.__dict__ for rev in history]
        emit(json.dumps(data, indent=2, ensure_ascii=False) + "\n", None)
    else:
        emit(_show_text(record, history), None)
    return 0


def handle_edit(args: argparse.Namespace) -> int:
    changes = {}
    for name in ("corruption", "original", "corrupted"):
        value = getattr(args, name)
        if value is not None:
            changes[name] = value
    if args.references is not None:
        changes["references"] = [line for line in read_lines(Path(args.references)) if line.strip()]
    if not changes:
        raise MuttlabError("nothing to change: give --original, --corrupted, --corruption or --references")
    with open_store(settings_from_args(args)) as store:
        record = store.resolve(args.pair)
        saved = store.edit(record.id, args.base_version, changes, author=args.author)
    print(f"pair {saved.id} saved as version {saved.version} (status {saved.status})", file=sys.stderr)
    return 0


def _review(args: argparse.Namespace, accept: bool) -> int:
    with open_store(settings_from_args(args)) as store:
        record = store.resolve(args.pair)
        do = store.accept if accept else store.reject
        saved = do(record.id, author=args.author, base_version=args.base_version)
    print(f"pair {saved.id} {saved.status} (version {saved.version})", file=sys.stderr)
    return 0


def handle_export(args: argparse.Namespace) -> int:
    with open_store(settings_from_args(args)) as store:
        text = store.export_jsonl(None, corruption=split_names(args.type) or None,
                                  status=split_names(args.status) or None)
    emit(text, args.output)
    return 0


def handle_import(args: argparse.Namespace) -> int:
    with open_store(settings_from_args(args)) as store:
        report = store.import_jsonl(args.file, author=args.author)
    print(report.summary(), file=sys.stderr)
    return 0 if report.ok else 2


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "pairs", parents=[common], help=summary("pairs"),
        description="List, show, edit, accept, reject, export and import the pairs of the pair store "
                    "($MUTTLAB_DATABASE_URL, default SQLite in the cache dir). Every change is kept as a revision.")
    sub = parser.add_subparsers(dest="pairs_command", metavar="ACTION", required=True)

    p = sub.add_parser("list", parents=[common], help="list pairs (filter by type, status, text)")
    p.add_argument("--type", help="comma-separated corruption types")
    p.add_argument("--status", help=f"comma-separated statuses ({', '.join(STATUSES)})")
    p.add_argument("--text", help="only pairs whose sentences contain this text (case-insensitive)")
    p.add_argument("--offset", type=whole(0, 2 ** 62), default=0)
    p.add_argument("--limit", type=whole(0, 1_000_000), default=50)
    add_output_options(p)
    p.set_defaults(handler=handle_list)

    p = sub.add_parser("show", parents=[common], help="show one pair (by store id or key)")
    p.add_argument("pair", help="store id (a number) or key, e.g. neg_subj/sick-12")
    p.add_argument("--history", action="store_true", help="also list every revision")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=handle_show)

    p = sub.add_parser("edit", parents=[common], help="edit a pair (refused if it changed since --base-version)")
    p.add_argument("pair", help="store id or key")
    p.add_argument("--base-version", type=whole(1, 2 ** 62), required=True,
                   help="the version you are editing (see `show`)")
    p.add_argument("--author", required=True, help="who makes the change")
    p.add_argument("--original", help="new clean sentence")
    p.add_argument("--corrupted", help="new corrupted sentence")
    p.add_argument("--corruption", help="new corruption type")
    p.add_argument("--references", metavar="FILE", help="new references, one per line, from this file")
    p.set_defaults(handler=handle_edit)

    for name, accept in (("accept", True), ("reject", False)):
        p = sub.add_parser(name, parents=[common], help=f"{name} a pair")
        p.add_argument("pair", help="store id or key")
        p.add_argument("--author", required=True, help="who reviews it")
        p.add_argument("--base-version", type=whole(1, 2 ** 62), default=None,
                       help="refuse if the pair changed since this version")
        p.set_defaults(handler=lambda args, accept=accept: _review(args, accept))

    p = sub.add_parser("export", parents=[common], help="export pairs as JSONL")
    p.add_argument("--type", help="comma-separated corruption types")
    p.add_argument("--status", help="comma-separated statuses")
    p.add_argument("--output", "-o", type=Path, help="write to this file instead of standard output")
    p.set_defaults(handler=handle_export)

    p = sub.add_parser("import", parents=[common], help="import pairs from JSONL (bad lines are reported)")
    p.add_argument("file", type=Path)
    p.add_argument("--author", required=True, help="who imports them")
    p.set_defaults(handler=handle_import)


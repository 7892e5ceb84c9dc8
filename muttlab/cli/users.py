"""``muttlab users``: the dashboard's accounts in the users file (``MUTTLAB_USERS_FILE``).

Passwords are read from a prompt (no echo) on a terminal, or from the first line of standard input with
``--password-stdin``; without a terminal and without that option the command stops with an error instead
of waiting for input that never comes. The command acts as the local operator (a maintainer).
"""
from __future__ import annotations

import argparse
import getpass
import sys

from muttlab.cli import summary
from muttlab.cli.common import settings_from_args
from muttlab.errors import MuttlabError

ROLES = ("viewer", "annotator", "maintainer")


def read_password(args: argparse.Namespace, stdin=None) -> str:
    """The new password: from stdin with --password-stdin, else a twice-typed prompt on a terminal."""
    stdin = stdin or sys.stdin
    if args.password_stdin:
        password = stdin.readline().rstrip("\r\n")
        if not password:
            raise MuttlabError("--password-stdin: standard input gave no password (one line is expected)")
        return password
    if not stdin.isatty():
        raise MuttlabError("no terminal to ask for a password: pass it on standard input with --password-stdin")
    first = getpass.getpass("New password: ")
    if first != getpass.getpass("Repeat it: "):
        raise MuttlabError("the two passwords differ; nothing was changed")
    return first


def _store(args):
    from muttlab.api import UserStore

    settings = settings_from_args(args)
    return settings, UserStore.of(settings)


def _add(args: argparse.Namespace) -> int:
    from muttlab.api import local_operator

    settings, store = _store(args)
    user = store.add(local_operator(), settings, args.name, args.role, read_password(args))
    print(f"added {user.name} ({user.role.value}) to {store.path}")
    return 0


def _remove(args: argparse.Namespace) -> int:
    from muttlab.api import local_operator

    settings, store = _store(args)
    store.remove(local_operator(), settings, args.name)
    print(f"removed {args.name} from {store.path}")
    return 0


def _passwd(args: argparse.Namespace) -> int:
    from muttlab.api import local_operator

    settings, store = _store(args)
    store.set_password(local_operator(), settings, args.name, read_password(args), role=args.role)
    print(f"changed {args.name}'s password{f' and role ({args.role})' if args.role else ''}")
    return 0


def _signout(args: argparse.Namespace) -> int:
    from muttlab import api

    ended = api.sign_out_everywhere(settings_from_args(args), args.name)
    print(f"signed {args.name} out everywhere: {ended} session{'' if ended == 1 else 's'} ended")
    return 0


def _list(args: argparse.Namespace) -> int:
    _, store = _store(args)
    for user in store.users():
        print(f"{user.name}\t{user.role.value}\t{user.created}")
    return 0


def register(subparsers, common) -> None:
    parser = subparsers.add_parser("users", parents=[common], help=summary("users"),
                                   description="Dashboard accounts (viewer, annotator, maintainer) in the file "
                                               "MUTTLAB_USERS_FILE names; passwords are stored as argon2id hashes.")
    actions = parser.add_subparsers(dest="users_action", metavar="ACTION")
    add = actions.add_parser("add", parents=[common], help="add an account")
    add.add_argument("name")
    add.add_argument("--role", choices=ROLES, default="annotator", help="(default: annotator)")
    passwd = actions.add_parser("passwd", parents=[common], help="change an account's password (and role)")
    passwd.add_argument("name")
    passwd.add_argument("--role", choices=ROLES, help="also change the role")
    for sub in (add, passwd):
        sub.add_argument("--password-stdin", action="store_true",
                         help="read the password from the first line of standard input (scripts, no terminal)")
    add.set_defaults(handler=_add)
    passwd.set_defaults(handler=_passwd)
    remove = actions.add_parser("remove", parents=[common], help="remove an account")
    remove.add_argument("name")
    remove.set_defaults(handler=_remove)
    signout = actions.add_parser("signout", parents=[common],
                                 help="end every session of an account (or of a name signed in with the shared "
                                      "credential), in every browser and server process")
    signout.add_argument("name")
    signout.set_defaults(handler=_signout)
    listing = actions.add_parser("list", parents=[common], help="names, roles and creation dates")
    listing.set_defaults(handler=_list)
    parser.set_defaults(handler=lambda args: parser.print_help() or 2)

"""``muttlab models``: the shipped and trained learned models, which one each metric uses, and installing.

The command line acts as the server's local operator (a maintainer): whoever can run it can write the model
folder anyway. Every install and uninstall is appended to the model folder's install log.
"""
from __future__ import annotations

import argparse

from muttlab.cli import summary
from muttlab.cli.common import add_output_options, emit, render, settings_from_args


def _list(args: argparse.Namespace) -> int:
    import pandas as pd

    from muttlab import api

    settings = settings_from_args(args)
    rows = [r.as_row() for r in api.list_models(settings)]
    frame = pd.DataFrame(rows, columns=["id", "slot", "origin", "in use", "dev_pearson", "ensemble", "data", "file"])
    emit(render(frame, args.format, decimals=4), args.output)
    return 0


def _install(args: argparse.Namespace) -> int:
    from muttlab import api

    record = api.install_model(settings_from_args(args), api.local_operator(), args.id)
    print(f"installed {record.id} in {record.slot}; it changes {', '.join(api.MODEL_SLOTS[record.slot][1])}")
    return 0


def _uninstall(args: argparse.Namespace) -> int:
    from muttlab import api

    api.uninstall_model(settings_from_args(args), api.local_operator(), args.slot)
    print(f"{args.slot} uses the shipped model again")
    return 0


def _log(args: argparse.Namespace) -> int:
    import pandas as pd

    from muttlab import api

    entries = api.model_install_log(settings_from_args(args))
    frame = pd.DataFrame(entries, columns=["at", "who", "role", "action", "slot", "model", "previous", "metrics"])
    frame["metrics"] = frame["metrics"].map(lambda m: "; ".join(m) if isinstance(m, list) else m)
    emit(render(frame, args.format), args.output)
    return 0


def register(subparsers, common) -> None:
    parser = subparsers.add_parser("models", parents=[common], help=summary("models"),
                                   description="Shipped and trained models of the learned metrics (ReVal, and "
                                               "DREEM's reval representation). A trained model is used only "
                                               "once it is installed.")
    actions = parser.add_subparsers(dest="models_action", metavar="ACTION")
    listing = actions.add_parser("list", parents=[common], help="every model, its id and whether it is in use")
    add_output_options(listing)
    listing.set_defaults(handler=_list)
    install = actions.add_parser("install", parents=[common], help="make a model the one its metrics use")
    install.add_argument("id", help="the model id (or its first 6+ characters) from `muttlab models list`")
    install.set_defaults(handler=_install)
    uninstall = actions.add_parser("uninstall", parents=[common], help="go back to the shipped model")
    from muttlab.api import MODEL_SLOTS
    uninstall.add_argument("slot", choices=list(MODEL_SLOTS))
    uninstall.set_defaults(handler=_uninstall)
    log = actions.add_parser("log", parents=[common], help="who installed what, when")
    add_output_options(log)
    log.set_defaults(handler=_log)
    parser.set_defaults(handler=lambda args: parser.print_help() or 2)

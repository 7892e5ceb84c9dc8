"""Who may do what: three roles, the actions that change shared state, and the one check every such action
goes through.

* viewer (anyone, signed in or not): reads everything and scores with the shipped metrics;
* annotator: also edits corruption pairs;
* maintainer: also trains and installs models, clears the server's caches and manages users.

A read-only server (``Settings.read_only``, the hosted demo) refuses every write, whoever asks.

An identity that comes from a sign-in carries its :class:`Credential`; every action beyond a viewer's asks
the credential again (account still there, not disabled, role still enough, session not expired or
revoked), so an identity kept by a page since it was drawn cannot act for an account that no longer may.
"""
from __future__ import annotations

import getpass
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from muttlab.errors import MuttlabError, PermissionDenied
from muttlab.settings import Settings


class Role(str, Enum):
    VIEWER = "viewer"
    ANNOTATOR = "annotator"
    MAINTAINER = "maintainer"

    @classmethod
    def parse(cls, text: str) -> "Role":
        try:
            return cls(str(text).strip().lower())
        except ValueError:
            raise MuttlabError(f"unknown role {text!r}; choose one of "
                                   f"{', '.join(r.value for r in cls)}") from None


class Action(str, Enum):
    READ = "read"
    SCORE = "score with shipped metrics"
    EDIT_PAIRS = "edit corruption pairs"
    TRAIN = "train models"
    INSTALL_MODEL = "install or uninstall models"
    CLEAR_CACHES = "clear the server's caches"
    MANAGE_USERS = "manage users"


# Actions that write shared state: refused for everyone on a read-only server.
WRITES = frozenset({Action.EDIT_PAIRS, Action.TRAIN, Action.INSTALL_MODEL, Action.MANAGE_USERS})

PERMISSIONS: dict[Role, frozenset[Action]] = {
    Role.VIEWER: frozenset({Action.READ, Action.SCORE}),
    Role.ANNOTATOR: frozenset({Action.READ, Action.SCORE, Action.EDIT_PAIRS}),
    Role.MAINTAINER: frozenset(Action),
}


def can(role: Role, action: Action) -> bool:
    """Whether ``role`` may do ``action`` (the table of docs/security.md), setting read-only mode aside."""
    return action in PERMISSIONS[Role(role)]


class Credential(Protocol):
    """What a signed-in identity holds: asked again at each action beyond a viewer's."""

    def recheck(self, settings: Settings) -> "Identity":
        """The identity as it stands now; PermissionDenied when the sign-in no longer holds."""


@dataclass(frozen=True)
class Identity:
    """Who asks: a name for the records (revisions, the install log), a role, and for a signed-in visitor the
    credential that is checked again at each write (the local operator and tests have none)."""

    name: str
    role: Role = Role.VIEWER
    credential: Credential | None = field(default=None, compare=False, repr=False)

    @property
    def anonymous(self) -> bool:
        return self.role is Role.VIEWER and self.name == ANONYMOUS.name


ANONYMOUS = Identity("anonymous", Role.VIEWER)


def local_operator() -> Identity:
    """The person running the command line on the server: they own its files, so they act as maintainer."""
    try:
        user = getpass.getuser()
    except Exception:  # no login name (a container without /etc/passwd entry)
        user = "unknown"
    return Identity(f"local:{user}", Role.MAINTAINER)


def _checked(identity: Identity | None, action: Action, settings: Settings) -> tuple[Identity | None, str]:
    """(the identity as it stands now, "") when it may do ``action`` here, else (None, why not)."""
    identity = identity or ANONYMOUS
    if settings.read_only and action in WRITES:
        return None, (f"this server is read-only (MUTTLAB_READ_ONLY): nobody can {action.value} here")
    if identity.credential is not None and not can(Role.VIEWER, action):
        try:
            identity = identity.credential.recheck(settings)
        except PermissionDenied as exc:
            return None, str(exc)
    if not can(identity.role, action):
        who = "a visitor who is not signed in" if identity.anonymous else f"{identity.name} ({identity.role.value})"
        needed = next(r for r in Role if can(r, action))
        return None, f"{who} cannot {action.value}; this needs the {needed.value} role"
    return identity, ""


def allowed(identity: Identity | None, action: Action, settings: Settings) -> tuple[bool, str]:
    """(True, "") when ``identity`` may do ``action`` on this server, else (False, why not)."""
    checked, why = _checked(identity, action, settings)
    return checked is not None, why


def require(identity: Identity | None, action: Action, settings: Settings) -> Identity:
    """The identity as it stands now (its credential asked again) when it may do ``action`` here; else
    :class:`~muttlab.errors.PermissionDenied`. Callers record the returned identity's name."""
    checked, why = _checked(identity, action, settings)
    if checked is None:
        raise PermissionDenied(why)
    return checked

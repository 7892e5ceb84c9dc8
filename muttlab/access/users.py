"""Dashboard accounts: a JSON file outside the repository (``MUTTLAB_USERS_FILE``) of names, roles and
argon2id password hashes (RFC 9106, through ``argon2-cffi``'s recommended parameters).

The file is written atomically (a temporary file renamed over it) with mode 0600; no password is ever
stored or logged in clear. Only a maintainer changes it (:func:`muttlab.access.roles.require`); the
command line (``muttlab users``) acts as the local operator, who owns the file anyway.

Each account has an id, made at random when it is added (a name removed and added again is another account),
and a credential version, the SHA-256 of its password hash (which holds a fresh salt: every ``users passwd``
gives a new one). A sign-in's session records both (:mod:`muttlab.access.sessions`), so it ends when the account
is removed, re-added or given a new password.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import stat
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from muttlab.access.roles import Action, Identity, Role, require
from muttlab.errors import DataError, MuttlabError
from muttlab.settings import Settings

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}")
MIN_PASSWORD = 10
MAX_PASSWORD = 1024  # argon2 hashes anything, but a megabyte "password" is only a way to burn CPU

_HASHER = None
_DUMMY_HASH: str | None = None
_LOCK = threading.Lock()


def _hasher():
    global _HASHER
    if _HASHER is None:
        try:
            from argon2 import PasswordHasher
        except ImportError as exc:
            raise MuttlabError("user accounts need argon2-cffi: pip install argon2-cffi") from exc
        _HASHER = PasswordHasher()
    return _HASHER


def _dummy_hash() -> str:
    """A hash of no one's password, made once per process: an unknown name is verified against it, so it
    costs what a known one costs (one verification, no hashing) and timing does not tell which names exist."""
    global _DUMMY_HASH
    with _LOCK:
        if _DUMMY_HASH is None:
            _DUMMY_HASH = _hasher().hash("not the password of anyone")
        return _DUMMY_HASH


def hash_password(password: str) -> str:
    check_password(password)
    return _hasher().hash(password)


def check_name(name: str) -> str:
    name = (name or "").strip()
    if not NAME_PATTERN.fullmatch(name):
        raise MuttlabError(f"user name {name!r} is not allowed: use 1-64 letters, digits, '_', '.', '@' or '-', "
                           "starting with a letter or digit")
    return name


def check_password(password: str) -> None:
    if not isinstance(password, str) or len(password) < MIN_PASSWORD:
        raise MuttlabError(f"a password needs at least {MIN_PASSWORD} characters")
    if len(password) > MAX_PASSWORD:
        raise MuttlabError(f"a password has at most {MAX_PASSWORD} characters")


@dataclass(frozen=True)
class User:
    """An account as the users file has it now; ``id`` and ``credential`` bind its sessions to it."""

    name: str
    role: Role
    created: str
    disabled: bool = False
    id: str = ""
    credential: str = ""


def _user(name: str, entry: dict) -> User:
    # Accounts written before ids existed are known by their name until they are added again.
    return User(name, Role(entry["role"]), entry.get("created", ""), bool(entry.get("disabled")),
                id=str(entry.get("id") or f"name:{name}"),
                credential=hashlib.sha256(str(entry["hash"]).encode("utf-8")).hexdigest())


class UserStore:
    """The accounts of one users file. Reads go to the file each time, so every server process sees an edit."""

    def __init__(self, path: Path | str):
        self.path = Path(path)

    @classmethod
    def of(cls, settings: Settings) -> "UserStore":
        if settings.users_file is None:
            raise MuttlabError("no users file is configured: set MUTTLAB_USERS_FILE to a path outside the "
                               "repository (it is created by `muttlab users add`)")
        return cls(settings.users_file)

    # ----------------------------------------------------------------- reading

    def _checked_path(self) -> None:
        """A users file that exists must be a regular file (a folder, a pipe or a device never is one)."""
        try:
            mode = self.path.stat().st_mode
        except FileNotFoundError:
            return
        except OSError as exc:
            raise DataError(self.path, f"cannot be read ({exc.strerror or exc})",
                            fix="point MUTTLAB_USERS_FILE at a file this user may read") from None
        if not stat.S_ISREG(mode):
            raise DataError(self.path, "is a folder or a special file, not a users file",
                            fix="point MUTTLAB_USERS_FILE at a file, e.g. /srv/muttlab/secret/users.json") from None

    def _read(self) -> dict[str, dict]:
        self._checked_path()
        if not self.path.is_file():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            users = data["users"]
            if not isinstance(users, dict):
                raise TypeError("users is not an object")
            for name, entry in users.items():
                Role(entry["role"])
                str(entry["hash"])
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
            raise DataError(self.path, f"not a MUTT Lab users file ({exc})",
                            fix="fix it or move it away and recreate the accounts with `muttlab users add`") from None
        return users

    def users(self) -> list[User]:
        return [_user(name, e) for name, e in sorted(self._read().items())]

    def account(self, name: str) -> User | None:
        """The account ``name`` as the file has it now (with its id and credential version); None when there
        is none or it is disabled."""
        entry = self._read().get(name)
        if entry is None or entry.get("disabled"):
            return None
        return _user(name, entry)

    def verify_account(self, name: str, password: str) -> User | None:
        """The account, as it was when its password was checked, for a correct name and password of an enabled
        account, else None (never says which of the two was wrong; every name costs one verification)."""
        from argon2.exceptions import InvalidHashError, VerificationError

        dummy = _dummy_hash()
        name = (name or "").strip()
        entry = self._read().get(name)
        if not isinstance(password, str) or len(password) > MAX_PASSWORD:
            return None
        try:
            _hasher().verify(entry["hash"] if entry is not None else dummy, password)
        except (VerificationError, InvalidHashError):
            return None
        if entry is None or entry.get("disabled"):
            return None
        return _user(name, entry)

    def verify(self, name: str, password: str) -> Identity | None:
        """The identity for a correct name and password of an enabled account, else None."""
        user = self.verify_account(name, password)
        return Identity(user.name, user.role) if user is not None else None

    # ----------------------------------------------------------------- writing (maintainers only)

    def _write(self, users: dict[str, dict]) -> None:
        self._checked_path()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".users-", dir=self.path.parent)
        except OSError as exc:
            raise DataError(self.path, f"cannot be written ({exc.strerror or exc})",
                            fix="point MUTTLAB_USERS_FILE at a file in a folder this user may write") from None
        try:
            os.chmod(tmp, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump({"format": 1, "users": users}, out, indent=2, sort_keys=True)
                out.write("\n")
            os.replace(tmp, self.path)
        except OSError as exc:
            Path(tmp).unlink(missing_ok=True)
            raise DataError(self.path, f"cannot be written ({exc.strerror or exc})",
                            fix="point MUTTLAB_USERS_FILE at a file in a folder this user may write") from None
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def add(self, actor: Identity, settings: Settings, name: str, role: Role | str, password: str) -> User:
        require(actor, Action.MANAGE_USERS, settings)
        name, role = check_name(name), Role.parse(role) if isinstance(role, str) else role
        hashed = hash_password(password)
        with _LOCK:
            users = self._read()
            if name in users:
                raise MuttlabError(f"user {name!r} exists; change the password with `muttlab users passwd {name}`")
            users[name] = {"role": role.value, "hash": hashed, "id": secrets.token_hex(16),
                           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            self._write(users)
        return _user(name, users[name])

    def remove(self, actor: Identity, settings: Settings, name: str) -> None:
        require(actor, Action.MANAGE_USERS, settings)
        with _LOCK:
            users = self._read()
            if name not in users:
                raise MuttlabError(f"no user {name!r}; `muttlab users list` shows them")
            del users[name]
            self._write(users)

    def set_password(self, actor: Identity, settings: Settings, name: str, password: str,
                     role: Role | str | None = None) -> None:
        require(actor, Action.MANAGE_USERS, settings)
        hashed = hash_password(password)
        with _LOCK:
            users = self._read()
            if name not in users:
                raise MuttlabError(f"no user {name!r}; add it with `muttlab users add {name}`")
            users[name]["hash"] = hashed
            if role is not None:
                users[name]["role"] = (Role.parse(role) if isinstance(role, str) else role).value
            self._write(users)

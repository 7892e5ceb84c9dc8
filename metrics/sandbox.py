"""Taking away a process's right to write where the lab keeps what it trusts, with Linux's Landlock.

The process that runs outside metrics (:mod:`muttlab.metrics.outside`) calls :func:`deny_writes` before it
imports any outside code. From then on neither it nor any process it starts can create, change, rename or
delete anything under the folders and files it was given (the score cache, the model folder, the users file,
the data dir, the installed package and the Python it runs on), nor ptrace or write the memory of a process
outside the sandbox (Landlock scopes ptrace). Everything else stays writable: an outside metric may keep its own
temporary files or model downloads.

Landlock (Linux 5.13 and later, ``landlock_create_ruleset(2)``) grants rights on file hierarchies; it cannot
deny one folder inside a granted one. So the write rights are granted on every entry that lies beside the
way from ``/`` to a protected path, and never on that way itself: a protected folder, and the folders above
it, cannot be written. A new entry made later beside that way (a new folder in the protected one's parent)
is not writable either, which errs on the safe side. Symbolic links are not followed: their targets are
reached through their own paths. A bind mount of a protected folder elsewhere is not covered.

Where Landlock is not available (another OS, an older kernel, a seccomp profile that refuses the calls),
:func:`deny_writes` says so and changes nothing: the caller reports it (docs/security.md).
"""
from __future__ import annotations

import ctypes
import os
import stat
import sys
from pathlib import Path
from typing import Iterable

# linux/landlock.h; the system call numbers are those of every architecture since Linux 5.13.
_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

_WRITE_FILE = 1 << 1
_FILE_RIGHTS_V1 = _WRITE_FILE
_DIR_RIGHTS_V1 = (_WRITE_FILE | 1 << 4 | 1 << 5 | 1 << 6 | 1 << 7 | 1 << 8 | 1 << 9 | 1 << 10 | 1 << 11
                  | 1 << 12)  # remove dir/file, make char/dir/reg/sock/fifo/block/sym
_REFER = 1 << 13  # ABI 2: link or rename into another folder
_TRUNCATE = 1 << 14  # ABI 3


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi_version() -> int:
    """Landlock's ABI version on this system; 0 when it has none."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        version = _libc().syscall(_CREATE_RULESET, None, ctypes.c_size_t(0),
                                  ctypes.c_uint32(_CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(0, int(version))


def writable_roots(protected: Iterable[Path]) -> list[Path]:
    """The paths whose hierarchies stay writable: every entry beside the way from ``/`` to each protected path
    (none of the protected paths, none of the folders above them, no symbolic link)."""
    denied = {Path(os.path.realpath(p)) for p in protected}
    above = {a for d in denied for a in d.parents}
    roots: list[Path] = []

    def walk(folder: Path) -> None:
        try:
            entries = sorted(folder.iterdir())
        except OSError:
            return  # unreadable: nothing in it is granted
        for entry in entries:
            if entry in denied or entry.is_symlink():
                continue
            if entry in above:
                walk(entry)
            else:
                roots.append(entry)

    if denied:
        walk(Path("/"))
    return roots


def deny_writes(protected: Iterable[Path]) -> str:
    """Sandbox this process (and whatever it starts) so that nothing under ``protected`` can be written.

    Returns:
      ``"landlock ABI <n>"`` when the sandbox holds, else why it could not be set up (nothing changed then).
    """
    protected = [Path(p) for p in protected]
    version = abi_version()
    if version < 1:
        return "Landlock is not available on this system"
    file_rights = _FILE_RIGHTS_V1 | (_TRUNCATE if version >= 3 else 0)
    dir_rights = _DIR_RIGHTS_V1 | (_REFER if version >= 2 else 0) | (_TRUNCATE if version >= 3 else 0)
    libc = _libc()
    attr = _RulesetAttr(dir_rights)
    ruleset = libc.syscall(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)),
                           ctypes.c_uint32(0))
    if ruleset < 0:
        return f"Landlock refused a ruleset ({os.strerror(ctypes.get_errno())})"
    try:
        for root in writable_roots(protected):
            try:
                fd = os.open(root, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
            except OSError:
                continue  # gone since it was listed: not granted
            try:
                rights = dir_rights if stat.S_ISDIR(os.fstat(fd).st_mode) else file_rights
                rule = _PathBeneathAttr(rights, fd)
                libc.syscall(_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(_RULE_PATH_BENEATH),
                             ctypes.byref(rule), ctypes.c_uint32(0))  # a refused rule only grants less
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return f"no_new_privs refused ({os.strerror(ctypes.get_errno())})"
        if libc.syscall(_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            return f"Landlock refused to restrict this process ({os.strerror(ctypes.get_errno())})"
    finally:
        os.close(ruleset)
    return f"landlock ABI {version}"

"""Results computed ahead and shipped with the package (``data/results/<kind>.json``): one file format, one
stamp, one staleness rule for every kind (the accuracy grid, the human-judgment studies, the published
numbers, the default Severity curve; :data:`KINDS`).

A snapshot's :class:`Stamp` is what its numbers were computed from:

* ``data``: the sha256 of every data file read (relative to the data dir);
* ``signatures``: every metric's ``signature()``;
* ``rules``: the :class:`~muttlab.rules.Rules` the trials were judged by (their signature; empty for a kind
  that judges no trial, such as correlations with human judgments);
* ``code``: the sha256 of the modules that compute the numbers from the scores: the version of the
  computation (a metric's own code is versioned by its signature).

The one staleness rule (:meth:`Stamp.differences`): a shipped snapshot is this server's current numbers only
when every part of its stamp equals the stamp the server would give the same computation now
(:func:`current_stamp`): the same data files (not compared on a server without a data dir, which cannot
compute the numbers otherwise), the same signatures of the metrics it can load, the same rules, the same code.
A page shows a snapshot that is not current only as what it is: numbers computed under another stamp, with
what differs.

The document (``format`` 2)::

    {"format": 2, "kind": "grid", "created": "2026-11-27T14:02Z", "muttlab_version": "0.2.0",
     "stamp": {"data": {...}, "code": {...}, "signatures": {...}, "rules": "tol:0.15|tie:1e-9"},
     "content": {...}}

Adding a kind: a module beside this one with the kind's content (a dataclass, ``to_document(content) -> dict``
and ``parse(document, where) -> content``, raising :class:`KeyError`, :class:`TypeError` or
:class:`ValueError` on a malformed part), a :class:`Kind` naming its file, the script that writes it, the data
files and code its numbers come from and whether it judges trials, an entry in :data:`KINDS`
(``muttlab/snapshots/__init__.py``), and a test that its shipped file is current. ``docs/dashboard.md``
("Shipped results") says the same.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from importlib.util import find_spec
from pathlib import Path
from typing import Callable

from muttlab.errors import DataError
from muttlab.resources.bundled import results_dir
from muttlab.settings import Settings

FORMAT = 2


@dataclass(frozen=True)
class Kind:
    """One kind of shipped snapshot.

    Attributes:
      name: the kind (``grid``); its file is ``data/results/<name>.json``.
      script: the script that writes it (``scripts/precompute_grid.py``).
      code: the modules whose sha256 versions the computation.
      data_files: the data files (relative paths) its numbers are computed from, given the data dir.
      judged: whether verdicts decide its numbers (then the rules are part of its stamp).
      to_document, parse: the content to and from its JSON part.
    """

    name: str
    script: str
    code: tuple[str, ...]
    data_files: Callable[[Path], list[str]]
    judged: bool
    to_document: Callable[[object], dict]
    parse: Callable[[dict, str], object]

    @property
    def file(self) -> str:
        return f"{self.name}.json"

    @property
    def regenerate(self) -> str:
        """How to write the file again, for an error message."""
        return f"MUTTLAB_DATA_DIR=/path/to/data python {self.script} (then commit data/results/{self.file})"


@dataclass(frozen=True)
class Stamp:
    """What a snapshot's numbers were computed from (module doc). ``data`` is None for a server without a
    data dir: it cannot tell whether the data are the same, nor compute the numbers otherwise."""

    data: dict[str, str] | None = field(default_factory=dict)
    code: dict[str, str] = field(default_factory=dict)
    signatures: dict[str, str] = field(default_factory=dict)
    rules: str = ""

    def differences(self, current: "Stamp") -> list[str]:
        """What differs from ``current``, in words (empty when the snapshot is current). A metric ``current``
        lacks (this server cannot load it) is not compared: nothing here computes it otherwise."""
        out = []
        if current.data is not None:
            changed = sorted(k for k in (self.data or {}).keys() | current.data.keys()
                             if (self.data or {}).get(k) != current.data.get(k))
            if changed:
                out.append(f"data files changed: {', '.join(changed)}")
        changed = sorted(k for k in self.code.keys() | current.code.keys() if self.code.get(k) != current.code.get(k))
        if changed:
            out.append(f"code changed: {', '.join(changed)}")
        stale = self.stale_metrics(current)
        if stale:
            out.append(f"metrics changed: {', '.join(sorted(stale))}")
        if self.rules != current.rules:
            out.append(f"judged under other rules: {self.rules or 'none'}, this server's are {current.rules}")
        return out

    def stale_metrics(self, current: "Stamp") -> dict[str, tuple[str, str]]:
        """Metrics whose signature differs from ``current``'s (name -> (shipped, current))."""
        return {m: (s, current.signatures[m]) for m, s in self.signatures.items()
                if m in current.signatures and current.signatures[m] != s}

    @property
    def data_digest(self) -> str:
        """One sha256 over the data files' checksums (sorted by path), for a footer."""
        digest = hashlib.sha256()
        for path, sha in sorted((self.data or {}).items()):
            digest.update(f"{path}:{sha}\n".encode())
        return digest.hexdigest()

    def digest(self) -> str:
        """One short sha256 over the stamp, for a page's caption."""
        text = json.dumps([sorted((self.data or {}).items()), sorted(self.code.items()),
                           sorted(self.signatures.items()), self.rules])
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def document(self) -> dict:
        return {"data": dict(sorted((self.data or {}).items())), "code": dict(sorted(self.code.items())),
                "signatures": dict(sorted(self.signatures.items())), "rules": self.rules}


@dataclass(frozen=True)
class Snapshot:
    """A shipped snapshot: its kind, its content (the kind's dataclass), its stamp and when it was made."""

    kind: str
    content: object
    stamp: Stamp
    created: str
    muttlab_version: str

    def label(self) -> str:
        """The caption every shipped view carries: shipped, when, from what, under which rules."""
        rules = f", judged under {self.stamp.rules}" if self.stamp.rules else ""
        return (f"Shipped results, computed {self.created} with muttlab {self.muttlab_version} on the real data "
                f"(stamp {self.stamp.digest()}: {len(self.stamp.data or {})} data files, the code and "
                f"{len(self.stamp.signatures)} metric signatures{rules}).")


@lru_cache(maxsize=512)
def _file_digest(path: str, size: int, modified: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def sha256_file(path: Path) -> str:
    """The sha256 of a file, computed once per version of it in this process."""
    info = os.stat(path)
    return _file_digest(str(path), info.st_size, info.st_mtime_ns)


def code_digests(modules: tuple[str, ...]) -> dict[str, str]:
    return {name: sha256_file(Path(find_spec(name).origin)) for name in modules}


def current_stamp(kind: Kind, settings: Settings, signatures: dict[str, str]) -> Stamp:
    """The stamp ``kind``'s numbers computed now on ``settings`` would carry: its data files hashed (None
    without a data dir), its code, ``signatures`` (the current ones of the metrics to compare) and the
    settings' rules where the kind judges trials."""
    data = None
    if settings.data_dir is not None:
        root = Path(settings.data_dir)
        data = {f: sha256_file(root / f) for f in kind.data_files(root) if (root / f).is_file()}
    return Stamp(data, code_digests(kind.code), dict(signatures), settings.rules.signature() if kind.judged else "")


def path_of(kind: Kind) -> Path:
    return results_dir() / kind.file


def document(kind: Kind, content, stamp: Stamp, version: str, created: str | None = None) -> dict:
    """The JSON document of a snapshot."""
    return {"format": FORMAT, "kind": kind.name,
            "created": created or _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%MZ"),
            "muttlab_version": version, "stamp": stamp.document(), "content": kind.to_document(content)}


def write(kind: Kind, content, stamp: Stamp, version: str, path: Path | None = None) -> Path:
    """Write a snapshot (default: the package's ``data/results/<kind>.json``); returns where."""
    path = path or path_of(kind)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document(kind, content, stamp, version), indent=1, ensure_ascii=False) + "\n",
                    encoding="utf-8")
    return path


def parse(kind: Kind, document, where: str) -> Snapshot:
    """A :class:`Snapshot` of ``kind`` from its JSON document, or a DataError naming what is wrong."""
    fix = f"regenerate it: {kind.regenerate}"
    if not isinstance(document, dict) or document.get("format") != FORMAT or document.get("kind") != kind.name:
        raise DataError(where, f"not a format-{FORMAT} {kind.name} snapshot", fix=fix)
    missing = [k for k in ("stamp", "content") if not isinstance(document.get(k), dict)]
    if missing:
        raise DataError(where, f"it lacks {', '.join(missing)}", fix=fix)
    stamp = document["stamp"]
    try:
        parsed = Stamp(dict(stamp["data"]), dict(stamp["code"]), dict(stamp["signatures"]), str(stamp["rules"]))
        content = kind.parse(document["content"], where)
    except DataError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise DataError(where, f"a part is malformed ({type(exc).__name__}: {exc})", fix=fix) from None
    return Snapshot(kind.name, content, parsed, str(document.get("created", "")),
                    str(document.get("muttlab_version", "")))


def load(kind: Kind, path: Path | None = None) -> Snapshot | None:
    """The snapshot in ``path`` (default: the shipped one), or None when there is none (a build without
    ``data/results``).

    Raises:
      DataError: the file is not JSON or not a snapshot of this kind; the message says how to regenerate it.
    """
    path = path or path_of(kind)
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8")
        return parse(kind, json.loads(text), str(path))
    except json.JSONDecodeError as exc:
        raise DataError(path, f"malformed JSON: {exc.msg}", line=exc.lineno,
                        fix=f"regenerate it: {kind.regenerate}") from None

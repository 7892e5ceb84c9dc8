"""MSLC24-B's edge cases (Knowles, Larkin and Lo, WMT 2024) of the data dir, as the profile's contrastive trials.

The trials are the suite format ``mslc24-b``'s (:mod:`muttlab.suites.mslc`, which says what each line becomes
and what it is held to), read from ``mslc/2024/data/MSLC-B/<pair>/`` for the three pairs the data set has. The
profile holds the data dir to a stricter standard than an upload: a types.tsv line the reader would leave out
refuses the suite, so a profile never silently scores fewer trials than the data set lists.
"""
from __future__ import annotations

from pathlib import Path

from muttlab.errors import DataError
from muttlab.settings import Settings
from muttlab.sources import data_file, read_bytes
from muttlab.suites.mslc import EDGE_CASES, FILES, read_mslc as read_files
from muttlab.suites.model import MSLC24_B, SuiteFile

__all__ = ["EDGE_CASES", "FOLDER", "PAIRS", "data_files", "read_mslc"]

FOLDER = "mslc/2024/data/MSLC-B"
PAIRS = ("en-de", "en-es", "ja-zh")


def data_files(root: Path | None = None) -> list[str]:
    """The MSLC-B files read, relative to the data dir."""
    return [f"{FOLDER}/{pair}/{name}" for pair in PAIRS for name in FILES]


def read_mslc(settings: Settings) -> SuiteFile:
    """The edge-case trials of every MSLC-B pair of the data dir (:func:`muttlab.suites.mslc.read_mslc`), as a
    contrastive suite named ``mslc24-b``: each trial's target language is its pair's (``de``, ``es``, ``zh``),
    its source the pair's source segment.

    Raises:
      DataError: no data dir, a missing or cut file, files of different lengths, a malformed types line.
    """
    files = {name: read_bytes(data_file(settings, f"{FOLDER}/{name}"))
             for name in (f"{pair}/{file}" for pair in PAIRS for file in FILES)}
    read = read_files(files, MSLC24_B)
    if read.problems:
        first = read.problems[0]
        pair, _, problem = first.problem.partition(": ")
        raise DataError(f"{FOLDER}/{pair}", problem, line=first.line)
    return read

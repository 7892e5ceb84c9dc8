"""The calibrations fixture (``tests/engine/files/calibrations.json``): the file format the meta-evaluation writes
(:class:`muttlab.rules.Calibrations`), with made-up ε for the TED pairs of ``mqm-ted``.

Its entries name the metrics' signatures as ``{current:NAME}``: a calibration is of a metric as it is when the
meta-evaluation runs, so :func:`write_calibrations` writes each metric's signature of today in its place. The
ROUGE-L entry keeps an old signature on purpose (a metric changed since it was calibrated), TER's is not
informative (its ε ties every pair of the study) and the en-de pair translates into German.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

from muttlab.metrics.registry import Registry

TEMPLATE = Path(__file__).resolve().parent / "files" / "calibrations.json"
EPSILON = {"BLEU-4": 0.05, "chrF": 2.5}  # the zh-en ε of the informative entries, as the file gives them


def write_calibrations(folder: Path) -> Path:
    """The fixture with today's signatures, written to ``folder``; its path."""
    registry = Registry(use_entry_points=False)
    text = re.sub(r"\{current:([^}]+)\}", lambda m: registry.info(m.group(1)).signature,
                  TEMPLATE.read_text(encoding="utf-8"))
    json.loads(text)  # still JSON: a signature holds no quote
    path = folder / "calibrations.json"
    path.write_text(text, encoding="utf-8")
    return path

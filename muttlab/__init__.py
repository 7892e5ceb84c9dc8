"""MUTT Lab: metric unit tests for text-generation evaluation metrics.

Everything imports as ``muttlab.…``. The public entry points for notebooks and front-ends are in
:mod:`muttlab.api`; ``muttlab`` on the command line (or ``python -m muttlab``) mirrors it. Importing this
package is cheap: nothing heavy is loaded until a function that needs it runs.
"""
from __future__ import annotations

from importlib import metadata

try:
    __version__ = metadata.version("muttlab")
except metadata.PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0+unknown"

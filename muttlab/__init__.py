"""MUTT Lab: metric unit tests for text-generation evaluation metrics.

Everything imports as ``muttlab.…``. The public entry points for notebooks and front-ends are in
:mod:`muttlab.api`; ``muttlab`` on the command line (or ``python -m muttlab``) mirrors it. Importing this
package is cheap: nothing heavy is loaded until a function that needs it runs.
"""
from __future__ import annotations


def __getattr__(name: str):
    # The version is looked up on first use: importlib.metadata costs a tenth of a second of every start-up.
    if name == "__version__":
        from importlib import metadata
        try:
            return metadata.version("muttlab")
        except metadata.PackageNotFoundError:  # running from a source tree that was never installed
            return "0+unknown"
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

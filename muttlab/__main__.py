"""``python -m muttlab``: the same command line as ``muttlab``."""
import sys

from muttlab.cli import main

sys.exit(main())

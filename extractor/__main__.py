"""`python -m extractor` runs the command-line tool."""

import sys

from .cli import run

sys.exit(run())

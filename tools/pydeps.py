"""Imports the PyPI packages a tool needs, or exits (status 2) saying how to get them."""

import importlib
import sys


def require(*names):
    """Imports each module in `names`; on the first that is missing, exits with a hint."""
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as missing:
            sys.exit(
                f"{sys.argv[0]}: {missing} (interpreter {sys.executable}). Run tools/test.sh: it "
                "installs the pinned packages of tools/requirements.txt into .venv/ and runs the "
                "tests with that interpreter.")

"""This checkout for the subprocesses of tests and benchmarks: its root, and a ``PYTHONPATH`` that puts it first and
keeps the caller's entries after it (packages carried beside the interpreter — the wheels in ``/tmp/site`` on a GPU
machine — stay importable)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def checkout_pythonpath() -> str:
    """``ROOT``, then the non-empty entries of the caller's ``PYTHONPATH``."""
    return os.pathsep.join([str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))])

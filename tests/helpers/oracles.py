"""Test oracles pip cannot install as dependencies: a skip (or a CI failure) when one is missing, and the folder
of downloaded-but-not-installed wheels (``make install-test``: ``pip download --no-deps … -d <venv>/oracles``).

Outside CI (``$CI`` unset) a missing oracle skips the tests that need it, with the reason; in CI it is an error.
"""

from __future__ import annotations

import glob
import importlib
import os
import sys
from pathlib import Path
from types import ModuleType

import pytest


def missing_oracle(what: str, how: str) -> None:
    """Skip (outside CI) or fail (``$CI`` set) for a missing test oracle."""
    message = f"{what} is not installed ({how}; `make install-test` does it)"
    if os.environ.get("CI"):
        pytest.fail(f"{message} — CI must run these tests")
    pytest.skip(message, allow_module_level=True)


def import_oracle(module: str, install: str = "") -> ModuleType:
    """``module`` of a reference tool the tests compare against (``"pycocoevalcap.cider.cider"``); skips or fails
    (:func:`missing_oracle`) when it cannot be imported. ``install``: the pip requirement (the top package's name by
    default)."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        missing_oracle(f"{module} ({error})", f"pip install {install or module.split('.')[0]}")
        raise AssertionError("unreachable") from error  # missing_oracle skips or fails


def oracle_wheel(requirement: str) -> Path:
    """The downloaded wheel of ``requirement`` (``"name==version"``) in ``$GPUMETRICS_ORACLES/`` or
    ``<venv>/oracles/``; skips or fails (:func:`missing_oracle`) without it."""
    name, version = requirement.split("==")
    pattern = f"{name.replace('-', '_')}-{version}-py3-none-any.whl"
    for folder in (os.environ.get("GPUMETRICS_ORACLES"), os.path.join(sys.prefix, "oracles")):
        if folder:
            found = sorted(glob.glob(os.path.join(folder, pattern)))
            if found:
                return Path(found[-1])
    missing_oracle(f"the {requirement} wheel ({pattern})",
                   f"pip download --no-deps {requirement} -d {os.path.join(sys.prefix, 'oracles')}")
    raise AssertionError("unreachable")  # missing_oracle skips or fails


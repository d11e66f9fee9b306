"""Warnings that point at the caller's line, not at ours.

A fixed ``stacklevel`` depends on how deep inside the library the warning is raised: the same warning reached from
``Metric.compute`` (through torchmetrics' wrapper), from a functional form or from an ``nn.Module`` forward would
each need another number, and most pointed into torchmetrics or gpumetrics. :func:`warn_caller` walks out of the
library's own frames — gpumetrics, torchmetrics, torch and ``contextlib`` (whose ``__enter__`` runs our context
managers) — and attributes the warning to the first frame beyond them, as Python 3.12's ``skip_file_prefixes`` does.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from typing import Optional

_OWN_PACKAGES = ("gpumetrics", "torchmetrics", "torch")


def warn_caller(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` attributed to the first frame outside the library's own frames; the
    outermost frame when every frame is the library's (``python -m gpumetrics``).

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     warn_caller("odd input")
        >>> caught[0].filename.startswith("<doctest")  # the line that called, not this module
        True
    """
    prefixes = _own_prefixes()
    frame, level = sys._getframe(1), 2  # stacklevel 2: warn_caller's caller
    while frame.f_back is not None and frame.f_code.co_filename.startswith(prefixes):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)


def _own_prefixes() -> tuple[str, ...]:
    """Path prefixes of the library's own frames: the packages of ``_OWN_PACKAGES`` that are imported (one not
    imported has no frame on the stack) and contextlib's file."""
    prefixes = [contextlib.__file__]
    for name in _OWN_PACKAGES:
        directory = _package_directory(name)
        if directory is not None:
            prefixes.append(directory)
    return tuple(prefixes)


def _package_directory(name: str) -> Optional[str]:
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None)
    return os.path.dirname(path) + os.sep if path else None

"""Lazy package exports (PEP 562): a package names what it exports; a name's module is imported on first access.

``import gpumetrics`` then costs what it uses: ``gpumetrics.BLEUScore`` imports the BLEU room (and torch, which the
``Metric`` base needs), not FID's Inception, CLIP's ``transformers`` or ``scipy``. A subpackage or module of the
package is an attribute too, imported on first access (``gpumetrics.functional.bleu_score`` after
``import gpumetrics``).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any, Callable, Mapping


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package`` for names that live in other modules.

    Args:
        package: the package's ``__name__``.
        exports: exported name → the module (absolute dotted path) that defines it.

    Returns:
        ``(__getattr__, __dir__)``: the first imports the name's module on first access and caches the value in the
        package's namespace (later accesses are plain attribute look-ups); a name that is no export but a submodule
        of the package is that submodule, imported; other names raise ``AttributeError``.
        The second lists the package's namespace and every export.

    Example:
        >>> getattr_, dir_ = lazy_exports("json", {"JSONDecodeError": "json.decoder"})
        >>> getattr_("JSONDecodeError").__name__
        'JSONDecodeError'
    """
    exports = dict(exports)

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            if (not name.startswith("_") and hasattr(sys.modules[package], "__path__")  # (a package's submodule)
                    and importlib.util.find_spec(f"{package}.{name}") is not None):
                return importlib.import_module(f"{package}.{name}")  # (the import binds it in the package)
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list:
        return sorted({*vars(sys.modules[package]), *exports})

    return __getattr__, __dir__

"""A package that is not installed, for one test: ``import`` of it raises ``ImportError``."""

from __future__ import annotations

import builtins
from typing import Any, Callable


def refuse_import(monkeypatch: Any, module: str) -> Callable[..., Any]:
    """Make ``import module`` raise ``ImportError`` until the test ends (``monkeypatch`` undoes it); every other
    import works. Returns the patched ``__import__`` (for ``importlib.import_module`` too, where code uses that)."""
    real_import = builtins.__import__

    def refusing(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == module:
            raise ImportError(f"No module named {module!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refusing)
    return refusing

"""Register a class as a virtual subclass of an ``ABCMeta`` class of a package that may not be imported yet.

gpumetrics' ``Metric`` base is registered with ``torchmetrics.Metric`` (Lightning's ``self.log`` and
``MetricCollection`` check ``isinstance(value, torchmetrics.Metric)``) without importing torchmetrics (3+ s of every
CLI start): at once when the package is imported, else by a ``sys.meta_path`` finder that wraps the package's loader,
registers right after the package's own code has run (its ``__init__`` defines the class) and removes itself.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import sys
from typing import Any, Optional


def register_on_import(cls: type, package: str, attribute: str) -> None:
    """Make ``cls`` a virtual subclass of ``package.attribute`` (an ``ABCMeta`` class) now when ``package`` is
    imported, else right after its import; at most one pending hook per ``(package, attribute)``."""
    module = sys.modules.get(package)
    if module is not None and hasattr(module, attribute):
        getattr(module, attribute).register(cls)
    elif module is None:
        pending = [finder for finder in sys.meta_path if isinstance(finder, PostImportRegistration)
                   and (finder.package, finder.attribute) == (package, attribute)]
        if pending:
            pending[0].classes.append(cls)
        else:
            sys.meta_path.insert(0, PostImportRegistration(package, attribute, [cls]))


class PostImportRegistration(importlib.abc.MetaPathFinder):
    """A ``sys.meta_path`` finder that answers for ``package`` only: it finds the package through the other finders
    and wraps its loader, so that ``classes`` are registered with ``package.attribute`` right after the package's own
    code; then it removes itself."""

    def __init__(self, package: str, attribute: str, classes: list[type]) -> None:
        self.package, self.attribute, self.classes = package, attribute, classes

    def find_spec(self, fullname: str, path: Any = None,
                  target: Any = None) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname != self.package:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _RegisteringLoader(spec.loader, self)
                return spec
        return None

    def register(self, module: Any) -> None:
        for cls in self.classes:
            getattr(module, self.attribute).register(cls)

    def uninstall(self) -> None:
        with contextlib.suppress(ValueError):
            sys.meta_path.remove(self)


class _RegisteringLoader(importlib.abc.Loader):
    """Runs the wrapped loader, then registers the hook's classes with the freshly imported package."""

    def __init__(self, loader: Any, hook: PostImportRegistration) -> None:
        self.loader, self.hook = loader, hook

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        module.__spec__.loader = module.__loader__ = self.loader  # the module keeps its own (reloads, resources)
        try:
            self.loader.exec_module(module)
        finally:
            self.hook.uninstall()
        self.hook.register(module)

    def __getattr__(self, name: str) -> Any:  # get_resource_reader, is_package, …: the wrapped loader's
        return getattr(self.loader, name)

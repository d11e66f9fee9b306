"""No gpumetrics module imports a private (underscore) name or module from another gpumetrics module.

What one module shares with another is public and documented where it lives; a private name stays in its module.
The classification room imports nothing of torchmetrics (its stat scores are its own; torchmetrics is the tests'
oracle), so that a ``Metric`` base of our own can replace ``torchmetrics.Metric`` under it.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "gpumetrics"


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _offences(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("gpumetrics")):
            module = node.module or ""
            if any(_private(part) for part in module.split(".")):
                found.append(f"{path.name}:{node.lineno} from {module}")
            found += [f"{path.name}:{node.lineno} {alias.name} from {module}" for alias in node.names
                      if _private(alias.name)]
        elif isinstance(node, ast.Import):
            found += [f"{path.name}:{node.lineno} import {alias.name}" for alias in node.names
                      if alias.name.startswith("gpumetrics") and any(map(_private, alias.name.split(".")))]
    return found


def test_no_private_name_is_imported_across_modules() -> None:
    offences = [offence for path in sorted(PACKAGE.rglob("*.py")) for offence in _offences(path)]
    assert not offences, "private names imported across modules:\n" + "\n".join(offences)


def test_the_classification_room_imports_nothing_of_torchmetrics() -> None:
    offenders = []
    for path in sorted((PACKAGE / "classification").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
                [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
            offenders += [f"{path.name}:{node.lineno} {module}" for module in modules
                          if module.split(".")[0] == "torchmetrics"]
    assert not offenders, f"torchmetrics imported in gpumetrics/classification: {offenders}"


def test_the_check_sees_private_imports(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("from gpumetrics.image.fid import _build, public\nfrom gpumetrics.text import _tables\n"
                      "from .x import __all__ as names\nimport gpumetrics._hidden\n")
    assert len(_offences(sample)) == 3


def test_only_the_cli_package_imports_the_cli() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "cli" in path.relative_to(PACKAGE).parts[:1] or path.name == "__main__.py":
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else (
                [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
            offenders += [f"{path.name}:{node.lineno}" for module in modules if module.startswith("gpumetrics.cli")]
    assert not offenders, f"modules outside gpumetrics/cli import the CLI: {offenders}"

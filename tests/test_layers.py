"""The layer contract (docs/architecture.md): core < kernels < metrics < harness < catalog < suites < cli, nothing
imports upward. Every module's imports are read with ``ast`` — those inside functions too (a lazy import is still a
dependency) and ``importlib.import_module("literal")`` calls — and each must point at its own layer or one below,
unless the allow-list below names the edge with its reason."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "gpumetrics"

#: layer of each top-level part of the package (``gpumetrics.<part>``); higher may import lower, never the reverse
LAYERS = {
    "core": 0,
    "kernels": 1,
    **{name: 2 for name in ("text", "image", "detection", "retrieval", "classification", "attribution", "functional")},
    "__init__": 2,  # ``import gpumetrics``: the metrics' public names
    "harness": 3,
    "catalog": 4,
    "suites": 5,  # a suite names catalog entries (aij2022's token_f1 …); the catalog knows no suite
    "cli": 6,
    "__main__": 6,
}
LAYER_NAMES = {0: "core", 1: "kernels", 2: "metrics", 3: "harness", 4: "catalog", 5: "suites", 6: "cli"}

#: (importing module, imported module) → why the upward edge is allowed
ALLOWED: dict[tuple[str, str], str] = {}

#: the registry's plugin hook: the one place the harness names an upper layer, by string (importlib), never a name of it
PLUGIN_HOOK = ("gpumetrics.harness.registry", "BUILTIN_PROVIDERS", ("gpumetrics.catalog", "gpumetrics.suites"))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _part(module: str) -> str | None:
    """``gpumetrics.<part>...`` → part (``__init__`` for the package itself); None for a module not of ours."""
    pieces = module.split(".")
    if pieces[0] != "gpumetrics":
        return None
    return pieces[1] if len(pieces) > 1 else "__init__"


def _imports(path: Path) -> list[tuple[int, str]]:
    """``(line, imported module)`` of every import of ours in the file, at any depth."""
    tree = ast.parse(path.read_text("utf-8"), str(path))
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.append((node.lineno, module))
            for alias in node.names:  # ``from gpumetrics import text``: the submodule is the dependency
                candidate = f"{module}.{alias.name}"
                relative = Path(*candidate.split("."))
                if (ROOT / relative).is_dir() or (ROOT / relative).with_suffix(".py").is_file():
                    found.append((node.lineno, candidate))
        elif (isinstance(node, ast.Call)
              and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"):
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                found.append((node.lineno, node.args[0].value))
    return [(line, module) for line, module in found if _part(module) is not None]


def _violations() -> list[str]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        importer = _module_name(path)
        own = LAYERS[_part(importer)]
        for line, module in _imports(path):
            part = _part(module)
            if part not in LAYERS:
                out.append(f"{path.relative_to(ROOT)}:{line}: {module} is in no layer (add it to LAYERS)")
                continue
            if LAYERS[part] > own and (importer, module) not in ALLOWED:
                out.append(f"{path.relative_to(ROOT)}:{line}: {LAYER_NAMES[own]} imports {module} "
                           f"({LAYER_NAMES[LAYERS[part]]})")
    return out


def test_every_part_has_a_layer():
    parts = {path.stem if path.is_file() else path.name for path in PACKAGE.iterdir()
             if (path.is_dir() and (path / "__init__.py").is_file()) or path.suffix == ".py"}
    assert parts <= set(LAYERS), f"parts without a layer: {sorted(parts - set(LAYERS))}"


def test_nothing_imports_upward():
    assert _violations() == []


def test_the_harness_names_upper_layers_only_through_its_plugin_hook():
    """The registry loads the built-in providers by module name; no other harness module names catalog or suites."""
    import importlib

    module_name, attribute, providers = PLUGIN_HOOK
    assert getattr(importlib.import_module(module_name), attribute) == providers
    for path in sorted((PACKAGE / "harness").rglob("*.py")):
        source = path.read_text("utf-8")
        code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("#", ">>>", "...")))
        if _module_name(path) != module_name:
            for provider in providers:
                assert f'"{provider}"' not in code and f"'{provider}'" not in code, (path, provider)


def test_the_checker_sees_lazy_and_relative_imports(tmp_path, monkeypatch):
    """A deliberate upward import inside a function is caught (the test can fail)."""
    fake = tmp_path / "gpumetrics" / "core"
    fake.mkdir(parents=True)
    (tmp_path / "gpumetrics" / "__init__.py").write_text("")
    (tmp_path / "gpumetrics" / "cli").mkdir()
    (tmp_path / "gpumetrics" / "cli" / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "bad.py").write_text("def f():\n    from ..cli import main\n    import importlib\n"
                                 "    importlib.import_module('gpumetrics.harness')\n")
    globals()["ROOT"], saved = tmp_path, ROOT
    globals()["PACKAGE"], saved_package = tmp_path / "gpumetrics", PACKAGE
    try:
        found = _violations()
    finally:
        globals()["ROOT"], globals()["PACKAGE"] = saved, saved_package
    assert (any("imports gpumetrics.cli" in v for v in found)
            and any("imports gpumetrics.harness" in v for v in found)), found


@pytest.mark.parametrize("path", sorted((PACKAGE / "harness").glob("*.py")), ids=lambda p: p.stem)
def test_the_harness_knows_no_metric(path):
    """No harness module imports a metric package (text, image, …) — not even lazily."""
    metric_parts = {name for name, layer in LAYERS.items() if layer == 2}
    assert [m for _, m in _imports(path) if _part(m) in metric_parts] == []

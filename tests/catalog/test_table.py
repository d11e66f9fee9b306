"""The catalog table: declared options equal the factories' signatures, listing imports no metric module, and the
entries without an earlier task run through the harness."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest

from gpumetrics.catalog import ENTRIES
from gpumetrics.catalog.factories import IMAGE_FILE_METRICS
from gpumetrics.harness.registry import resolve

#: factories that fix an option of a class: (class path, fixed options)
_FIXED = {"gpumetrics.catalog.factories:ned_aij2022": ("gpumetrics.text.edit:NormalizedEditSimilarity",
                                                       {"preset": "aij2022"})}


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: e.name)
def test_declared_options_match_the_factory_signature(entry):
    assert isinstance(entry.factory, str), "catalog factories are dotted paths (resolved on first use)"
    target, fixed = _FIXED.get(entry.factory, (entry.factory, {}))
    name = entry.factory.rpartition(":")[2]
    if name in IMAGE_FILE_METRICS:  # _ImageFileScore(image_root, batch_size, workers, decode, …) around an image metric
        from gpumetrics.catalog.image_files import _ImageFileScore

        target = IMAGE_FILE_METRICS[name][0]
        assert list(entry.options)[:2] == ["image_root", "batch_size"]
        fixed = {key: p.default for key, p in inspect.signature(_ImageFileScore.__init__).parameters.items()
                 if key not in ("self", "metric", "pairing", "options")}
        assert fixed == {"image_root": ".", "batch_size": 32, "workers": None, "decode": "pil",
                         "missing_image": "error"}
    signature = inspect.signature(resolve(target).__init__)
    expected = {name: parameter.default for name, parameter in signature.parameters.items()
                if name != "self" and parameter.kind not in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL)}
    assert entry.options == ({**fixed, **expected} if name in IMAGE_FILE_METRICS else {**expected, **fixed})


def test_the_catalog_imports_no_metric_module_at_module_level():
    """Metric modules are imported by the factories, on use: none at the top level of a catalog module."""
    import ast
    from pathlib import Path

    import gpumetrics.catalog

    for path in Path(gpumetrics.catalog.__file__).parent.glob("*.py"):
        for node in ast.parse(path.read_text("utf-8")).body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                assert not [n for n in names if n.split(".")[:2] in (["gpumetrics", "text"], ["gpumetrics", "image"],
                                                                     ["gpumetrics", "detection"])], (path.name, names)


def test_listing_the_catalog_imports_no_metric_module():
    probe = ("import sys, json; import gpumetrics.{}; print(json.dumps(sorted(m for m in sys.modules "
             "if m.split('.')[:2] in (['gpumetrics', 'text'], ['gpumetrics', 'image'], ['gpumetrics', 'detection']))))")
    bare = subprocess.run([sys.executable, "-c", probe.format("core")], capture_output=True, text=True, check=True)
    assert json.loads(bare.stdout) == [], "`import gpumetrics.core` imports metric modules (lazy package __init__s)"
    out = subprocess.run([sys.executable, "-c", probe.format("catalog; gpumetrics.harness.registry.metrics()")],
                         capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_edit_distance_task_runs_through_the_harness(tmp_path):
    from gpumetrics.harness.config import parse_config
    from gpumetrics.harness.runner import evaluate
    from gpumetrics.text.edit import edit_distance

    (tmp_path / "p.jsonl").write_text('{"id": 1, "prediction": "kitten"}\n{"id": 2, "prediction": "flaw"}\n')
    (tmp_path / "r.jsonl").write_text('{"id": 1, "references": ["sitting"]}\n{"id": 2, "references": ["lawn"]}\n')
    config = parse_config({"tasks": [{"name": "ed", "metric": "edit_distance", "predictions": "p.jsonl",
                                      "references": "r.jsonl"}]}, tmp_path / "c.yaml")
    report = evaluate(config, batch_size=1, samples=True)
    (task,) = report.tasks
    expected = float(edit_distance(["kitten", "flaw"], ["sitting", "lawn"]))
    assert task.score == pytest.approx(expected) and task.higher_is_better is False

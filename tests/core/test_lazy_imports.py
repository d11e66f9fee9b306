"""Imports cost what is used: package ``__init__``s resolve names lazily (PEP 562), checked in fresh interpreters."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from testkit.checkout import checkout_pythonpath

import gpumetrics
import gpumetrics.functional

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torchmetrics", "transformers", "open_clip", "scipy", "torchvision", "PIL", "gensim", "matplotlib")


def _modules_after(code: str, before: str = "") -> dict:
    """Run ``before`` then ``code`` in a fresh interpreter: the top-level modules ``code`` added, and all of them."""
    script = (
        "import json, sys\n" + before + "\nbefore = set(sys.modules)\n" + code + "\n"
        "added = sorted(set(sys.modules) - before)\n"
        "print(json.dumps({'added': added, 'all': sorted(sys.modules)}))\n"
    )
    env = {**os.environ, "PYTHONPATH": checkout_pythonpath()}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _top(names) -> set:
    return {name.split(".")[0] for name in names}


@pytest.mark.parametrize("statement", ["import gpumetrics", "import gpumetrics.kernels", "import gpumetrics.core",
                                       "import gpumetrics.functional", "import gpumetrics.core.distributed",
                                       "import gpumetrics.text, gpumetrics.image, gpumetrics.detection, "
                                       "gpumetrics.retrieval, gpumetrics.classification, gpumetrics.attribution"])
def test_package_imports_pull_in_no_heavy_dependency(statement):
    loaded = _top(_modules_after(statement)["all"])
    assert not loaded & set(HEAVY), f"{statement} imported {sorted(loaded & set(HEAVY))}"
    if statement in ("import gpumetrics", "import gpumetrics.kernels"):
        modules = _modules_after(statement)["all"]
        assert [m for m in modules if m.startswith("gpumetrics.")] == [m for m in modules if m in (
            "gpumetrics.core", "gpumetrics.core.lazy", "gpumetrics.kernels")]


def test_a_metric_import_brings_only_its_own_room():
    # the Metric base imports torch only (torchmetrics' package init would bring transformers / scipy / torchvision)
    result = _modules_after("from gpumetrics import BLEUScore")
    added = result["added"]
    heavy = [m for m in added if m.split(".")[0] in HEAVY]
    assert not heavy, f"BLEUScore imported {heavy}"
    ours = {m for m in added if m.startswith("gpumetrics.")}
    assert "gpumetrics.text.bleu" in ours
    assert not {m for m in ours if m.startswith(("gpumetrics.image", "gpumetrics.detection", "gpumetrics.retrieval",
                                                 "gpumetrics.classification", "gpumetrics.text.meteor",
                                                 "gpumetrics.text.codebleu", "gpumetrics.text.wmd",
                                                 "gpumetrics.text.cider", "gpumetrics.text.rouge"))}, sorted(ours)
    assert "open_clip" not in _top(result["all"]) and "gensim" not in _top(result["all"])


def test_functional_import_of_one_function_brings_only_its_module():
    added = _modules_after("from gpumetrics.functional import char_error_rate")["added"]
    ours = {m for m in added if m.startswith("gpumetrics.")}
    assert "gpumetrics.text.edit" in ours
    assert not {m for m in ours if m.startswith(("gpumetrics.image", "gpumetrics.text.bleu", "gpumetrics.attribution"))}
    assert not _top(added) & set(HEAVY), sorted(_top(added) & set(HEAVY))


def test_a_subpackage_is_an_attribute_imported_on_first_access():
    """``import gpumetrics`` then ``gpumetrics.functional.bleu_score``: the subpackage is imported on first access
    (it raised ``AttributeError``), alone; a name that is neither an export nor a submodule still raises."""
    result = _modules_after("import gpumetrics\n"
                            "value = gpumetrics.functional.bleu_score(['a b c d'], [['a b c d']])\n"
                            "assert abs(float(value) - 1) < 1e-12, value\n"
                            "assert gpumetrics.text.edit.edit_distance is not None")
    ours = {m for m in result["added"] if m.startswith("gpumetrics.")}
    assert {"gpumetrics.functional", "gpumetrics.text.bleu", "gpumetrics.text.edit"} <= ours
    assert not {m for m in ours if m.startswith(("gpumetrics.image", "gpumetrics.detection"))}, sorted(ours)
    assert not _top(result["all"]) & set(HEAVY)
    with pytest.raises(AttributeError, match="has no attribute 'nosuch'"):
        gpumetrics.nosuch  # noqa: B018


@pytest.mark.parametrize("package", ["gpumetrics", "gpumetrics.functional", "gpumetrics.core", "gpumetrics.text",
                                     "gpumetrics.image", "gpumetrics.detection", "gpumetrics.retrieval",
                                     "gpumetrics.classification", "gpumetrics.attribution"])
def test_every_exported_name_resolves_and_is_listed(package):
    import importlib

    module = importlib.import_module(package)
    assert len(module.__all__) == len(set(module.__all__))
    listed = dir(module)
    for name in module.__all__:
        assert name in listed, name
        value = getattr(module, name)
        assert value is not None and getattr(value, "__name__", name) == name, name
        assert name in vars(module)  # cached: later look-ups are plain attributes
    with pytest.raises(AttributeError, match="no attribute 'NoSuchMetric'"):
        getattr(module, "NoSuchMetric")


def test_lazy_names_are_the_defining_objects_and_version_resolves():
    from gpumetrics.text.bleu import BLEUScore, bleu_score

    assert gpumetrics.BLEUScore is BLEUScore and gpumetrics.functional.bleu_score is bleu_score
    assert isinstance(gpumetrics.__version__, str) and gpumetrics.__version__
    assert issubclass(gpumetrics.TokenF1, gpumetrics.Metric)

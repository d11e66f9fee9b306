"""The base is our own ``nn.Module``: torchmetrics is not imported at run time, yet
``isinstance(m, torchmetrics.Metric)`` holds in either import order (ABC registration), and ``MetricCollection`` / its
compute groups treat our metrics as torchmetrics' own."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from testkit.checkout import checkout_pythonpath

from gpumetrics import BLEUScore, CharErrorRate, WordErrorRate
from gpumetrics.core import Metric

ROOT = Path(__file__).resolve().parents[2]

PREDS = [["the cat sat on the mat", "a quick brown fox"], ["hello world", "good morning to you all"],
         ["one two three", "four five six seven"]]
TARGET = [["the cat sat on a mat", "the quick brown fox"], ["hello there world", "good evening to all of you"],
          ["one two three four", "four five six"]]


def _run(script: str) -> dict:
    env = {**os.environ, "PYTHONPATH": checkout_pythonpath()}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=ROOT,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("order", ["gpumetrics first", "torchmetrics first", "torchmetrics.metric first",
                                   "find_spec first"])
def test_our_metrics_are_torchmetrics_metrics_in_either_import_order(order):
    first = {"gpumetrics first": "from gpumetrics import BLEUScore\nimport torchmetrics",
             "torchmetrics first": "import torchmetrics\nfrom gpumetrics import BLEUScore",
             "torchmetrics.metric first": "import gpumetrics.core.metric\nfrom torchmetrics.metric import Metric\n"
                                          "import torchmetrics\nfrom gpumetrics import BLEUScore",
             "find_spec first": "import importlib.util, gpumetrics.core.metric\n"  # a spec, not an import (Lightning's
                                "assert importlib.util.find_spec('torchmetrics')\n"  # RequirementCache does that)
                                "import torchmetrics\nfrom gpumetrics import BLEUScore"}[order]
    result = _run("import json, sys\n" + first + "\n"
                  "from gpumetrics.core.abc_registration import PostImportRegistration\n"
                  "metric = BLEUScore()\n"
                  "print(json.dumps({'isinstance': isinstance(metric, torchmetrics.Metric),\n"
                  "                  'issubclass': issubclass(BLEUScore, torchmetrics.Metric),\n"
                  "                  'in_mro': torchmetrics.Metric in BLEUScore.__mro__,\n"
                  "                  'hooks_left': sum(isinstance(f, PostImportRegistration)\n"
                  "                                    for f in sys.meta_path),\n"
                  "                  'loader': type(torchmetrics.__loader__).__name__,\n"
                  "                  'spec_loader': type(torchmetrics.__spec__.loader).__name__}))")
    assert result == {"isinstance": True, "issubclass": True, "in_mro": False, "hooks_left": 0,
                      "loader": "SourceFileLoader", "spec_loader": "SourceFileLoader"}


@pytest.mark.parametrize("code", [
    "import gpumetrics; gpumetrics.BLEUScore",
    "import gpumetrics; m = gpumetrics.BLEUScore(); m.update(['a b c'], [['a b c']]); m.compute()",
    "from gpumetrics.cli.main import main; assert main(['score', '-m', 'bleu', '-r', 'r.txt', 'h.txt']) == 0",
])
def test_gpumetrics_never_imports_torchmetrics(code, tmp_path):
    (tmp_path / "r.txt").write_text("the cat sat on the mat\n", encoding="utf-8")
    (tmp_path / "h.txt").write_text("the cat sat on a mat\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": checkout_pythonpath()}
    script = (code + "\nimport json, sys\n"
              "print(json.dumps(sorted(m for m in sys.modules if m.startswith('torchmetrics'))))")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=600)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def _metrics() -> dict:
    return {"cer": CharErrorRate(), "cer_again": CharErrorRate(), "wer": WordErrorRate(), "bleu": BLEUScore()}


def _alone(metrics: dict, method: str) -> list[dict]:
    values = []
    for preds, target in zip(PREDS, TARGET):
        step = {}
        for name, metric in metrics.items():
            args = (preds, [[t] for t in target]) if name.startswith("bleu") else (preds, target)
            if method == "forward":
                step[name] = metric(*args)
            else:
                metric.update(*args)
        values.append(step)
    values.append({name: metric.compute() for name, metric in metrics.items()})
    return values


@pytest.mark.parametrize("compute_groups", [True, False])
@pytest.mark.parametrize("method", ["update", "forward"])
@pytest.mark.parametrize("mixed", [False, True])
def test_metric_collection_equals_the_metrics_used_alone(compute_groups, method, mixed):
    from torchmetrics import MetricCollection
    from torchmetrics.text import CharErrorRate as TorchmetricsCER

    text_metrics = _metrics()
    if mixed:
        text_metrics["tm_cer"] = TorchmetricsCER()
    expected = _alone({name: metric.clone() for name, metric in text_metrics.items()}, method)
    bleu = text_metrics.pop("bleu")  # BLEU takes lists of references: a collection of its own
    collection = MetricCollection(text_metrics, compute_groups=compute_groups)
    bleu_collection = MetricCollection({"bleu": bleu}, compute_groups=compute_groups)
    for rounds in range(2):  # again after reset
        for step, (preds, target) in enumerate(zip(PREDS, TARGET)):
            if method == "forward":
                got = {**collection(preds, target), **bleu_collection(preds, [[t] for t in target])}
                assert got.keys() == expected[step].keys()
                for name, value in got.items():
                    torch.testing.assert_close(value, expected[step][name], check_dtype=False)
            else:
                collection.update(preds, target)
                bleu_collection.update(preds, [[t] for t in target])
        got = {**collection.compute(), **bleu_collection.compute()}
        for name, value in expected[-1].items():
            torch.testing.assert_close(got[name], value, check_dtype=False)
        if compute_groups and method == "update":
            assert ["cer", "cer_again"] in collection.compute_groups.values()
        collection.reset()
        bleu_collection.reset()
        assert all(not metric.update_called for metric in collection.values())


def test_unknown_options_are_refused_by_name_and_torchmetrics_options_are_kept():
    with pytest.raises(ValueError, match="`not_an_option`"):
        CharErrorRate(not_an_option=1)
    metric = CharErrorRate(compute_on_cpu=True, sync_on_compute=False, compute_with_cache=False,
                           dist_sync_on_step=False, process_group=None, dist_sync_fn=None)
    assert metric.compute_on_cpu and not metric.sync_on_compute and not metric.compute_with_cache
    with pytest.raises(TypeError, match="compute_on_cpu"):  # torchmetrics: ValueError; core.checks: TypeError
        CharErrorRate(compute_on_cpu="yes")


class Pair(Metric):
    """A one-element and a two-element result."""

    def __init__(self):
        super().__init__()
        self.add_state("total", torch.zeros(1, dtype=torch.float64), dist_reduce_fx="sum")

    def update(self, x):
        self.total += x

    def compute(self):
        return {"one": self.total, "two": torch.cat([self.total, self.total])}


def test_compute_results_are_squeezed_cached_and_cloned_as_torchmetrics_does():
    metric = Pair()
    with pytest.warns(UserWarning, match="was called before the ``update`` method"):
        metric.compute()
    metric.update(torch.tensor(2.0))
    value = metric.compute()
    assert value["one"].shape == () and value["two"].shape == (2,)
    value["one"] += 1  # a clone: the states are not the caller's (the cached value is, as in torchmetrics)
    assert float(metric.total) == 2.0 and metric.compute() is metric._computed
    restored = pickle.loads(pickle.dumps(metric))
    restored.update(torch.tensor(1.0))
    assert float(restored.compute()["one"]) == 3.0 and restored.update_count == 2
    assert restored.compute is not metric.compute and restored._update_signature.parameters.keys() == {"x"}

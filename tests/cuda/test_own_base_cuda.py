"""The own ``Metric`` base on CUDA: what moves between devices — a checkpoint written on the CPU restored into a
metric on the GPU, another metric's states merged from another device, half-precision casts that keep the
accumulators' dtype — and ``forward`` of a metric that owns metrics, with every state on the metric's device.
Each test runs on the CPU too (the devices it names are then all the CPU), so its logic is checked on CPU CI; the
CUDA cases belong to the CUDA suite."""

from __future__ import annotations

import io
import warnings

import pytest
import torch

from gpumetrics import BLEUScore, TokenF1
from tests.core.test_metric_trees import BATCHES, Composite

cuda_only = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA: run `make test-cuda` on a GPU")
DEVICES = ["cpu", pytest.param("cuda", marks=cuda_only)]
PREDS = ["the cat sat on the mat", "a dog runs", "Кошка спит", ""]
REFS = [["the cat is on the mat"], ["a dog is running"], ["кошка спит дома"], ["x"]]


def _states_on(metric: torch.nn.Module, device: str) -> bool:
    tensors = [v for m in metric.modules() if hasattr(m, "metric_state") for value in m.metric_state.values()
               for v in (value if isinstance(value, list) else [value])]
    return all(t.device.type == torch.device(device).type for t in tensors)


@pytest.mark.parametrize("device", DEVICES)
def test_a_cpu_checkpoint_resumes_on_the_device(device):
    whole = BLEUScore()
    whole.update(PREDS, REFS)
    partial = BLEUScore()
    partial.update(PREDS[:2], REFS[:2])
    partial.persistent(True)
    buffer = io.BytesIO()
    torch.save(partial.state_dict(), buffer)
    buffer.seek(0)
    resumed = BLEUScore().to(device)
    resumed.load_state_dict(torch.load(buffer, weights_only=True))
    assert _states_on(resumed, device)
    resumed.update(PREDS[2:], REFS[2:])
    assert float(resumed.compute()) == pytest.approx(float(whole.compute()), rel=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_merge_state_takes_a_metric_of_another_device(device):
    here, there, whole = TokenF1().to(device), TokenF1(), TokenF1()
    here.update(PREDS[:2], REFS[:2])
    there.update(PREDS[2:], REFS[2:])
    whole.update(PREDS, REFS)
    here.merge_state(there)
    assert _states_on(here, device)
    assert float(here.compute()) == pytest.approx(float(whole.compute()), rel=1e-12)


@pytest.mark.parametrize("device", DEVICES)
def test_half_precision_keeps_the_accumulators(device):
    metric = TokenF1().to(device).half()
    metric.update(PREDS, REFS)
    dtypes = {value.dtype for value in metric.metric_state.values() if isinstance(value, torch.Tensor)}
    assert torch.float16 not in dtypes and _states_on(metric, device)


@pytest.mark.parametrize("device", DEVICES)
def test_forward_of_a_metric_tree_on_the_device(device):
    stepped, whole = Composite().to(device), Composite().to(device)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        steps = [stepped(batch.to(device)) for batch in BATCHES]
        for batch in BATCHES:
            whole.update(batch.to(device))
        assert [float(step["sum"]) for step in steps] == [2.0, 3.0, -2.0]
        assert _states_on(stepped, device) and float(stepped.compute()["sum"]) == float(whole.compute()["sum"])


@cuda_only
def test_merge_state_from_cuda_into_a_cpu_metric():
    here, there, whole = TokenF1(), TokenF1().to("cuda"), TokenF1()
    here.update(PREDS[:2], REFS[:2])
    there.update(PREDS[2:], REFS[2:])
    whole.update(PREDS, REFS)
    here.merge_state(there)
    assert _states_on(here, "cpu") and float(here.compute()) == pytest.approx(float(whole.compute()), rel=1e-12)

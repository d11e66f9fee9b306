"""Text metrics run their kernels on one intra-op thread and restore torch's setting afterwards."""

from __future__ import annotations

import pytest
import torch

from gpumetrics.core import intra_op_threads, single_threaded
from gpumetrics.text.bleu import BLEUScore, bleu_score


@pytest.fixture
def two_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def test_context_restores_even_on_error(two_threads) -> None:
    with pytest.raises(RuntimeError):
        with intra_op_threads(1):
            assert torch.get_num_threads() == 1
            raise RuntimeError
    assert torch.get_num_threads() == 2
    with intra_op_threads(None):
        assert torch.get_num_threads() == 2
    with intra_op_threads(8):  # never raises the count
        assert torch.get_num_threads() == 2
    assert single_threaded(torch.get_num_threads)() == 1 and torch.get_num_threads() == 2


def test_text_metric_update_compute_and_functional_run_single_threaded(two_threads, monkeypatch) -> None:
    import gpumetrics.text.bleu as bleu_module

    seen = []
    original = bleu_module._bleu_update

    def spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return original(*args, **kwargs)

    monkeypatch.setattr(bleu_module, "_bleu_update", spy)
    metric = BLEUScore()
    metric.update(["the cat sat"], [["the cat sat"]])
    bleu_score(["a b"], [["a b"]])
    assert seen == [1, 1] and torch.get_num_threads() == 2
    metric.compute()
    assert torch.get_num_threads() == 2

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


def _functional_calls():
    from gpumetrics import functional as F
    from gpumetrics.detection.ocr_e2e import ocr_end_to_end
    from gpumetrics.detection.zero_shot_f1 import zero_shot_detection_f1

    preds, target = ["the cat sat on the mat", "кот"], ["a cat sat on a mat", "кошка"]
    quads = [torch.tensor([[[0.0, 0.0], [4.0, 0.0], [4.0, 2.0], [0.0, 2.0]]])] * 2
    boxes = [{"cat": torch.tensor([[0.0, 0.0, 4.0, 2.0]])}] * 2
    return {
        "edit_distance(torch)": lambda: F.edit_distance(preds, target, backend="torch"),
        "char_error_rate": lambda: F.char_error_rate(preds, target, backend="torch"),
        "word_error_rate": lambda: F.word_error_rate(preds, target, backend="torch"),
        "normalized_edit_similarity": lambda: F.normalized_edit_similarity(preds, target, backend="torch"),
        "bleu_score": lambda: F.bleu_score(preds, [[t] for t in target]),
        "rouge_score": lambda: F.rouge_score(preds, target),
        "cider_score": lambda: F.cider_score(preds, [[t] for t in target], tokenize="none"),
        "token_f1": lambda: F.token_f1(preds, target),
        "ocr_end_to_end": lambda: ocr_end_to_end(quads, [["a"]] * 2, quads, [["a"]] * 2, matching="icdar15"),
        "zero_shot_detection_f1": lambda: zero_shot_detection_f1(boxes, boxes),
    }


@pytest.mark.parametrize("name", sorted(_functional_calls()))
def test_functional_forms_run_on_one_thread(two_threads, name) -> None:
    from torch.utils._python_dispatch import TorchDispatchMode

    threads = set()

    class Seen(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            threads.add(torch.get_num_threads())
            return func(*args, **(kwargs or {}))

    call = _functional_calls()[name]
    with Seen():
        call()
    assert threads == {1} and torch.get_num_threads() == 2, (name, threads)

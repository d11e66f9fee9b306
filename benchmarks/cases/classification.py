"""Multiclass F1 over a vocabulary-sized class set (next-token F1 of a language model) vs torchmetrics, same data,
same process: torchmetrics counts top-1 labels through a C × C confusion matrix per update."""

from __future__ import annotations

import torch
from torchmetrics.classification import MulticlassF1Score as TorchmetricsMulticlassF1Score

from benchmarks.registry import Contenders, register
from gpumetrics.classification import MulticlassF1Score

_BATCH = 8_192  # labels per update: one batch of tokens


def _labels(num_classes: int, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(num_classes)
    target = torch.randint(num_classes, (_BATCH,), generator=generator)
    preds = torch.where(torch.rand(_BATCH, generator=generator) < 0.6, target,
                        torch.randint(num_classes, (_BATCH,), generator=generator))
    return preds.to(device), target.to(device)


def _contenders(size: int, device: str, preds: torch.Tensor, target: torch.Tensor, options: dict, what: str,
                anchor_how: str, note: str) -> Contenders:
    """gpumetrics' and torchmetrics' ``MulticlassF1Score(num_classes=size, average="none", **options)``: one update
    and ``compute()`` each, per-class values compared exactly."""

    def run(metric_class):
        metric = metric_class(num_classes=size, average="none", **options).to(device)
        metric.update(preds, target)
        return metric.compute()

    return Contenders(
        ours={f"MulticlassF1Score{what} update + compute": lambda: run(MulticlassF1Score)},
        anchors={f"torchmetrics MulticlassF1Score{what} ({anchor_how})": lambda: run(TorchmetricsMulticlassF1Score)},
        check=lambda ours, anchor: torch.equal(ours, anchor),
        note=note,
    )


@register("multiclass_f1_vocabulary", sizes=(1_000, 10_000, 30_000), quick_sizes=(1_000,), unit="classes",
          repeats=3)
def multiclass_f1_vocabulary_case(size: int, device: str) -> Contenders:
    preds, target = _labels(size, device)
    return _contenders(
        size, device, preds, target, {}, " (average=none)", "C × C confusion matrix",
        f"one update of {_BATCH:,} top-1 labels over `size` classes (60 % correct): per-class F1; torchmetrics "
        "allocates C² int64 bins per update (30,000 classes: 7.2 GB), gpumetrics three label counts (O(N + C))",
    )


_TOP_K_BATCH = 2_048  # scored samples per update ([N, C] float32 scores: 245 MB at 30,000 classes)


@register("multiclass_f1_top5_vocabulary", sizes=(1_000, 10_000, 30_000), quick_sizes=(1_000,), unit="classes",
          repeats=3)
def multiclass_f1_top5_vocabulary_case(size: int, device: str) -> Contenders:
    generator = torch.Generator().manual_seed(size)
    scores = torch.randn(_TOP_K_BATCH, size, generator=generator).to(device)
    target = torch.randint(size, (_TOP_K_BATCH,), generator=generator).to(device)
    return _contenders(
        size, device, scores, target, {"top_k": 5}, "(top_k=5)", "one-hot [N, C] int64 tensors",
        f"one update of {_TOP_K_BATCH:,} score rows over `size` classes, top-5 (the target when among the 5 highest "
        "scores, else the top 1): gpumetrics reduces each row to that label (O(N·k + C) beyond the scores), "
        "torchmetrics compares one-hot [N, C] int64 tensors",
    )

"""The multiclass counts without a C × C matrix equal torchmetrics' on random labels, and a vocabulary-sized class
set scores in the memory of its labels."""

from __future__ import annotations

import random

import pytest
import torch
from torchmetrics.functional.classification.stat_scores import (
    _multiclass_stat_scores_format,
    _multiclass_stat_scores_update,
)

from gpumetrics.classification import MulticlassF1Score, multiclass_recall
from gpumetrics.classification.stat_counts import class_counts, multiclass_stat_counts


@pytest.mark.parametrize("seed", range(40))
def test_counts_equal_torchmetrics_confusion_matrix(seed):
    rng = random.Random(seed)
    num_classes = rng.choice([2, 3, 7, 50])
    shape = (rng.randint(1, 40),) + ((rng.randint(1, 4),) if rng.random() < 0.3 else ())
    generator = torch.Generator().manual_seed(seed)
    target = torch.randint(num_classes, shape, generator=generator)
    preds = torch.where(torch.rand(shape, generator=generator) < 0.5, target,
                        torch.randint(num_classes, shape, generator=generator))
    ignore_index = rng.choice([None, 0, num_classes - 1, -1, 255])
    if ignore_index is not None:
        target = torch.where(torch.rand(shape, generator=generator) < 0.2, ignore_index, target)
        preds = torch.where(target == ignore_index, 0, preds)  # as _unscored_labels_to_zero leaves them
    for average in ("macro", "weighted", "none", None, "micro"):
        for multidim_average in ("global", "samplewise") if len(shape) > 1 else ("global",):
            p, t = _multiclass_stat_scores_format(preds, target, 1)
            args = (num_classes, 1, average, multidim_average, ignore_index)
            ours, theirs = multiclass_stat_counts(p, t, *args), _multiclass_stat_scores_update(p, t, *args)
            for name, mine, reference in zip(("tp", "fp", "tn", "fn"), ours, theirs):
                assert mine.dtype == reference.dtype and torch.equal(mine, reference), (name, average, ignore_index)


@pytest.mark.parametrize("seed", range(30))
def test_top_k_counts_equal_torchmetrics_one_hot_path(seed):
    """top_k > 1: one label per sample (the target when among the top k, else the top 1), counted as top-1 labels,
    equals torchmetrics' one-hot counts — scores with ties, extra dimensions, every average, ignore_index in and out
    of range."""
    rng = random.Random(seed)
    num_classes = rng.choice([3, 5, 12])
    top_k = rng.randint(2, num_classes)
    extra = (rng.randint(1, 3),) if rng.random() < 0.3 else ()
    n = rng.randint(1, 30)
    generator = torch.Generator().manual_seed(seed)
    scores = torch.randint(4, (n, num_classes, *extra), generator=generator).float()  # many ties
    if rng.random() < 0.5:
        scores = torch.rand(n, num_classes, *extra, generator=generator)
    target = torch.randint(num_classes, (n, *extra), generator=generator)
    ignore_index = rng.choice([None, 0, num_classes - 1, -1, 255])
    if ignore_index is not None:
        target = torch.where(torch.rand(target.shape, generator=generator) < 0.2, ignore_index, target)
    p, t = _multiclass_stat_scores_format(scores, target, top_k)
    for average in ("macro", "weighted", "none", None, "micro"):
        args = (num_classes, top_k, average, "global", ignore_index)
        ours, theirs = multiclass_stat_counts(p, t, *args), _multiclass_stat_scores_update(p.clone(), t.clone(), *args)
        for name, mine, reference in zip(("tp", "fp", "tn", "fn"), ours, theirs):
            assert mine.dtype == reference.dtype and torch.equal(mine, reference), (name, average, ignore_index)


def test_counts_equal_bincount(monkeypatch):
    generator = torch.Generator().manual_seed(0)
    for size, bins in ((0, 3), (1, 1), (1000, 12), (5000, 5000)):
        labels = torch.randint(max(bins - 2, 1), (size,), generator=generator)
        assert torch.equal(class_counts(labels, bins), torch.bincount(labels, minlength=bins))
    torch.use_deterministic_algorithms(True)  # scatter_add_ has a deterministic implementation on every device
    try:
        assert torch.equal(class_counts(labels, 5000), torch.bincount(labels, minlength=5000))
    finally:
        torch.use_deterministic_algorithms(False)


def test_a_vocabulary_sized_class_set_needs_no_square_matrix():
    """50,257 classes (GPT-2's vocabulary): torchmetrics' confusion matrix would be 2.5e9 int64 bins (20 GB) per
    update; the counts are three [C + 1] tensors."""
    vocabulary = 50_257
    target = torch.tensor([5, 50_000, 7, 7])
    preds = torch.tensor([5, 50_000, 8, 7])
    metric = MulticlassF1Score(num_classes=vocabulary, average="macro")
    metric.update(preds, target)
    metric.update(preds[:2], target[:2])
    assert metric.compute().item() == pytest.approx((1 + 1 + 2 / 3 + 0) / 4)  # classes 5, 50000, 7, 8 occur
    assert multiclass_recall(preds, target, vocabulary, average="none")[[5, 7, 8, 50_000]].tolist() == \
        [1.0, 0.5, 0.0, 1.0]

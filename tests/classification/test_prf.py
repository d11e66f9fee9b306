"""Precision / recall / F1 under gpumetrics.classification vs scikit-learn, incl. zero_division, plus DDP."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from sklearn import metrics as skm

import gpumetrics
from gpumetrics import classification as C
from gpumetrics.core import Metric
from tests.helpers.harness import check_metric

SKLEARN = {"precision": skm.precision_score, "recall": skm.recall_score, "f1": skm.f1_score}
MULTICLASS = {
    "precision": (C.MulticlassPrecision, C.multiclass_precision),
    "recall": (C.MulticlassRecall, C.multiclass_recall),
    "f1": (C.MulticlassF1Score, C.multiclass_f1_score),
}
BINARY = {
    "precision": (C.BinaryPrecision, C.binary_precision),
    "recall": (C.BinaryRecall, C.binary_recall),
    "f1": (C.BinaryF1Score, C.binary_f1_score),
}
MULTILABEL = {
    "precision": (C.MultilabelPrecision, C.multilabel_precision),
    "recall": (C.MultilabelRecall, C.multilabel_recall),
    "f1": (C.MultilabelF1Score, C.multilabel_f1_score),
}
ATOL = 1e-6  # torchmetrics returns float32


def _sk(name, y_true, y_pred, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # UndefinedMetricWarning is the point of zero_division
        return torch.as_tensor(SKLEARN[name](np.asarray(y_true), np.asarray(y_pred), **kwargs), dtype=torch.float64)


def _multiclass_cases():
    g = torch.Generator().manual_seed(7)
    num_classes = 6
    # class 5 occurs nowhere, class 4 only in preds, class 3 only in target
    target = torch.randint(0, 3, (300,), generator=g)
    target[::17] = 3
    preds = torch.where(torch.rand(300, generator=g) < 0.6, target, torch.randint(0, 3, (300,), generator=g))
    preds[target == 3] = 1
    preds[5::23] = 4
    logits = torch.randn(40, num_classes, generator=g)
    return [
        ("labels", preds, target, num_classes),
        ("logits", logits, torch.randint(0, num_classes, (40,), generator=g), num_classes),
        ("single", torch.tensor([2]), torch.tensor([2]), num_classes),
        ("single-wrong", torch.tensor([1]), torch.tensor([2]), num_classes),
    ]


def _labels(preds):
    return preds.argmax(dim=1) if preds.is_floating_point() else preds


@pytest.mark.parametrize("zero_division", [0, 1])
@pytest.mark.parametrize("average", ["micro", "macro", "weighted", "none"])
@pytest.mark.parametrize("name", ["precision", "recall", "f1"])
def test_multiclass_matches_sklearn(name, average, zero_division):
    cls, fn = MULTICLASS[name]
    for case, preds, target, num_classes in _multiclass_cases():
        kwargs = dict(num_classes=num_classes, average=average, zero_division=zero_division)
        sk_kwargs = dict(average=None, labels=list(range(num_classes))) if average == "none" else dict(average=average)
        expected = _sk(name, target, _labels(preds), zero_division=zero_division, **sk_kwargs)
        got = fn(preds, target, **kwargs)
        torch.testing.assert_close(got.double(), expected, atol=ATOL, rtol=0, msg=f"{case}")
        metric = cls(**kwargs)
        for chunk_p, chunk_t in zip(preds.split(7), target.split(7)):
            metric.update(chunk_p, chunk_t)
        torch.testing.assert_close(metric.compute().double(), expected, atol=ATOL, rtol=0, msg=f"{case} module")


@pytest.mark.parametrize("zero_division", [0, 1])
@pytest.mark.parametrize("name", ["precision", "recall", "f1"])
def test_binary_matches_sklearn(name, zero_division):
    cls, fn = BINARY[name]
    g = torch.Generator().manual_seed(3)
    probs = torch.rand(200, generator=g)
    target = (torch.rand(200, generator=g) < 0.3).long()
    cases = [
        (probs, target),
        (torch.zeros(5, dtype=torch.long), torch.zeros(5, dtype=torch.long)),  # no positive anywhere: 0/0 everywhere
        (torch.zeros(4, dtype=torch.long), torch.tensor([1, 0, 1, 0])),  # nothing predicted positive
        (torch.tensor([1, 1, 0]), torch.zeros(3, dtype=torch.long)),  # no positive in target
        (torch.tensor([0.2, 0.7, 0.5]), torch.tensor([0, 1, 1])),  # threshold: 0.5 is not positive
    ]
    for preds, y in cases:
        hard = (preds > 0.5).long() if preds.is_floating_point() else preds
        expected = _sk(name, y, hard, zero_division=zero_division)
        torch.testing.assert_close(fn(preds, y, zero_division=zero_division).double(), expected, atol=ATOL, rtol=0)
        metric = cls(zero_division=zero_division)
        metric.update(preds, y)
        torch.testing.assert_close(metric.compute().double(), expected, atol=ATOL, rtol=0)


@pytest.mark.parametrize("zero_division", [0, 1])
@pytest.mark.parametrize("average", ["micro", "macro", "weighted", "none"])
@pytest.mark.parametrize("name", ["precision", "recall", "f1"])
def test_multilabel_matches_sklearn(name, average, zero_division):
    cls, fn = MULTILABEL[name]
    g = torch.Generator().manual_seed(11)
    target = (torch.rand(120, 5, generator=g) < 0.4).long()
    target[:, 4] = 0  # a label never in target
    probs = torch.rand(120, 5, generator=g)
    probs[:, 3] = 0.1  # a label never predicted
    probs[:, 4] = torch.where(torch.arange(120) % 2 == 0, 0.9, 0.1)
    expected = _sk(name, target, (probs > 0.5).long(), zero_division=zero_division,
                   average=None if average == "none" else average)
    kwargs = dict(num_labels=5, average=average, zero_division=zero_division)
    torch.testing.assert_close(fn(probs, target, **kwargs).double(), expected, atol=ATOL, rtol=0)
    metric = cls(**kwargs)
    for p, t in zip(probs.split(50), target.split(50)):
        metric.update(p, t)
    torch.testing.assert_close(metric.compute().double(), expected, atol=ATOL, rtol=0)


def test_ignore_index_equals_sklearn_on_filtered_samples():
    g = torch.Generator().manual_seed(5)
    target = torch.randint(0, 4, (100,), generator=g)
    preds = torch.randint(0, 4, (100,), generator=g)
    target[::9] = -1
    keep = target != -1
    for average in ("micro", "macro", "weighted"):
        got = C.multiclass_f1_score(preds, target, num_classes=4, average=average, ignore_index=-1)
        expected = _sk("f1", target[keep], preds[keep], average=average)
        torch.testing.assert_close(got.double(), expected, atol=ATOL, rtol=0)


def test_documented_divergence_explicit_labels_macro():
    """Macro averages the classes present (sklearn's default), not sklearn's explicit ``labels=range(C)``."""
    preds, target = torch.tensor([0, 1, 1, 1, 1]), torch.tensor([0, 0, 1, 1, 2])
    ours = float(C.multiclass_precision(preds, target, num_classes=5, average="macro"))
    assert ours == pytest.approx(float(_sk("precision", target, preds, average="macro", zero_division=0)))
    explicit = float(_sk("precision", target, preds, average="macro", zero_division=0, labels=list(range(5))))
    assert explicit == pytest.approx(0.3) and ours == pytest.approx(0.5)


def test_modules_are_gpumetrics_metrics_with_signatures():
    a = C.MulticlassF1Score(num_classes=3, average="macro", zero_division=1)
    b = C.MulticlassF1Score(num_classes=3, average="weighted", zero_division=1)
    assert isinstance(a, Metric) and a.signature() != b.signature()
    assert a.signature().startswith("f1|task:multiclass|average:macro|num_classes:3")
    assert "zero_division:1" in a.signature() and "impl:torchmetrics-" in a.signature()
    assert "threshold:0.5" in C.MultilabelRecall(num_labels=2).signature()
    assert gpumetrics.MulticlassF1Score is C.MulticlassF1Score
    with pytest.raises(ValueError, match="zero_division"):
        C.MulticlassPrecision(num_classes=3, zero_division=0.5)
    with pytest.raises(ValueError, match="average"):
        C.MulticlassRecall(num_classes=3, average="samples")


@pytest.mark.ddp
def test_multiclass_f1_module_functional_sklearn_and_ddp():
    g = torch.Generator().manual_seed(1)
    sizes = (13, 1, 30, 6)
    batches = [(torch.randint(0, 5, (n,), generator=g), torch.randint(0, 4, (n,), generator=g)) for n in sizes]
    check_metric(
        C.MulticlassF1Score,
        C.multiclass_f1_score,
        lambda preds, target: _sk("f1", target, preds, average="macro", zero_division=1),
        batches,
        metric_kwargs={"num_classes": 6, "average": "macro", "zero_division": 1},
        atol=ATOL,
    )


def test_multilabel_precision_weighted_module_paths():
    """Same reducer path (sum states tp/fp/tn/fn) as the DDP test above, so DDP is not spawned again here."""
    g = torch.Generator().manual_seed(2)
    batches = [(torch.rand(n, 4, generator=g), (torch.rand(n, 4, generator=g) < 0.3).long()) for n in (9, 2, 17)]
    check_metric(
        C.MultilabelPrecision,
        C.multilabel_precision,
        lambda preds, target: _sk("precision", target, (preds > 0.5).long(), average="weighted", zero_division=0),
        batches,
        metric_kwargs={"num_labels": 4, "average": "weighted", "zero_division": 0},
        atol=ATOL,
        ddp=False,
    )


@pytest.mark.parametrize("zero_division", [0, 1])
@pytest.mark.parametrize("name", ["precision", "recall", "f1"])
def test_weighted_all_negative_target_falls_back_to_plain_mean_like_sklearn(name, zero_division):
    """No positive label anywhere: sklearn averages the per-label scores unweighted (torchmetrics returned 0)."""
    cls, fn = MULTILABEL[name]
    target = torch.zeros(6, 3, dtype=torch.long)
    for hard in (torch.zeros(6, 3, dtype=torch.long), torch.tensor([[1, 0, 0]] * 6), torch.tensor([[1, 1, 1]] * 6)):
        expected = _sk(name, target, hard, average="weighted", zero_division=zero_division)
        kwargs = dict(num_labels=3, average="weighted", zero_division=zero_division)
        torch.testing.assert_close(fn(hard, target, **kwargs).double(), expected, atol=ATOL, rtol=0)
        metric = cls(**kwargs)
        metric.update(hard[:2], target[:2])
        metric.update(hard[2:], target[2:])
        torch.testing.assert_close(metric.compute().double(), expected, atol=ATOL, rtol=0)


def test_multiclass_every_sample_ignored_is_zero_division_for_every_average():
    """sklearn raises on zero samples; every average is then the ``zero_division`` value (micro already was)."""
    target, preds = torch.full((4,), -1), torch.tensor([0, 1, 2, 1])
    for zero_division in (0, 1):
        for average in ("micro", "macro", "weighted"):
            got = C.multiclass_f1_score(preds, target, num_classes=3, average=average, ignore_index=-1,
                                        zero_division=zero_division)
            assert float(got) == zero_division, average


def test_wide_random_parity_with_sklearn():
    """Seeded mix: tiny batches, unused classes, all-negative multilabel batches, ignore_index, split updates."""
    rng = np.random.default_rng(2024)
    for _ in range(30):
        name = str(rng.choice(["precision", "recall", "f1"]))
        zero_division = int(rng.integers(0, 2))
        n = int(rng.choice([1, 2, 5, 23]))
        if rng.random() < 0.5:
            num_classes = int(rng.choice([2, 3, 7]))
            target = torch.as_tensor(rng.integers(0, rng.integers(1, num_classes + 1), n))
            preds = torch.as_tensor(rng.integers(0, rng.integers(1, num_classes + 1), n))
            ignore = int(rng.choice([-1, 0])) if rng.random() < 0.4 else None
            if ignore is not None:
                target[torch.as_tensor(rng.random(n) < 0.3)] = ignore
                if bool((target == ignore).all()):
                    continue
            keep = target != ignore if ignore is not None else torch.ones(n, dtype=torch.bool)
            cls, fn = MULTICLASS[name]
            for average in ("micro", "macro", "weighted", "none"):
                sk_kwargs = (dict(average=None, labels=list(range(num_classes))) if average == "none"
                             else dict(average=average))
                expected = _sk(name, target[keep], preds[keep], zero_division=zero_division, **sk_kwargs)
                kwargs = dict(num_classes=num_classes, average=average, zero_division=zero_division,
                              ignore_index=ignore)
                torch.testing.assert_close(fn(preds, target, **kwargs).double(), expected, atol=ATOL, rtol=0)
                metric = cls(**kwargs)
                for p, t in zip(preds.split(4), target.split(4)):
                    metric.update(p, t)
                torch.testing.assert_close(metric.compute().double(), expected, atol=ATOL, rtol=0)
        else:
            num_labels = int(rng.choice([2, 4]))
            target = torch.as_tensor(rng.random((n, num_labels)) < rng.choice([0.0, 0.3, 1.0])).long()
            probs = torch.as_tensor(rng.random((n, num_labels)) * rng.choice([0.4, 1.0]), dtype=torch.float32)
            cls, fn = MULTILABEL[name]
            for average in ("micro", "macro", "weighted", "none"):
                expected = _sk(name, target, (probs > 0.5).long(), zero_division=zero_division,
                               average=None if average == "none" else average)
                kwargs = dict(num_labels=num_labels, average=average, zero_division=zero_division)
                torch.testing.assert_close(fn(probs, target, **kwargs).double(), expected, atol=ATOL, rtol=0)
                metric = cls(**kwargs)
                for p, t in zip(probs.split(4), target.split(4)):
                    metric.update(p, t)
                torch.testing.assert_close(metric.compute().double(), expected, atol=ATOL, rtol=0)


# ---------------------------------------------------------------------------------------------- zero-sample batches
def _empty_inputs(task):
    if task == "binary":
        return torch.zeros(0), torch.zeros(0, dtype=torch.long), {}
    if task == "multiclass":
        return torch.zeros(0, 3), torch.zeros(0, dtype=torch.long), {"num_classes": 3}
    return torch.zeros(0, 3), torch.zeros(0, 3, dtype=torch.long), {"num_labels": 3}


@pytest.mark.parametrize("stat", ["precision", "recall", "f1"])
@pytest.mark.parametrize("task, table", [("binary", BINARY), ("multiclass", MULTICLASS), ("multilabel", MULTILABEL)])
@pytest.mark.parametrize("zero_division", [0, 1])
def test_zero_sample_batches_give_zero_division_and_add_nothing(stat, task, table, zero_division):
    # torchmetrics' formatting raised RuntimeError (reshape of 0 elements) on an empty batch, module and function
    module_cls, function = table[stat]
    preds, target, options = _empty_inputs(task)
    for average in (("binary",) if task == "binary" else ("micro", "macro", "weighted", "none")):
        kwargs = {**options, "zero_division": zero_division, **({} if task == "binary" else {"average": average})}
        value = function(preds, target, **kwargs)
        assert value.numel() == (3 if average == "none" else 1) and bool((value == zero_division).all()), value
        metric = module_cls(**kwargs)
        metric.update(preds, target)
        assert torch.equal(metric.compute(), value)
        full = _empty_inputs(task)[:2]
        full = (torch.ones((4,) + full[0].shape[1:]), torch.ones((4,) + full[1].shape[1:], dtype=torch.long))
        metric.update(*full)
        metric.update(preds, target)
        assert torch.equal(metric.compute(), function(*full, **kwargs))  # the empty batches added nothing
    if task == "binary":  # per-sample scores of zero samples: an empty tensor
        samplewise = function(torch.zeros(0, 5), torch.zeros(0, 5, dtype=torch.long), multidim_average="samplewise")
        assert samplewise.shape == (0,)


def test_zero_sample_batches_are_still_validated():
    with pytest.raises(ValueError):
        C.MulticlassPrecision(num_classes=3).update(torch.zeros(0, 4), torch.zeros(0, dtype=torch.long))
    with pytest.raises(ValueError):
        C.multilabel_recall(torch.zeros(0, 2), torch.zeros(0, 2, dtype=torch.long), num_labels=3)
    with pytest.raises(ValueError, match=r"binary `preds` and `target`.*\(0,\) and target \(2,\)"):  # one side empty
        C.BinaryF1Score().update(torch.zeros(0), torch.zeros(2, dtype=torch.long))


@pytest.mark.parametrize("call, shapes", [
    (lambda: C.MultilabelF1Score(num_labels=3).update(torch.rand(4), torch.randint(0, 2, (4,))),
     r"\(4,\) and target \(4,\)"),
    (lambda: C.multilabel_f1_score(torch.rand(4, 2), torch.randint(0, 2, (4, 2)), num_labels=3), r"\(4, 2\)"),
    (lambda: C.multiclass_f1_score(torch.rand(4, 3, 2), torch.randint(0, 3, (4,)), num_classes=3), r"\(4, 3, 2\)"),
    (lambda: C.MulticlassF1Score(num_classes=3).update(torch.rand(4, 2), torch.randint(0, 3, (4,))), r"num_classes=3"),
    (lambda: C.BinaryF1Score().update(torch.rand(4, 3), torch.randint(0, 2, (5,))), r"\(4, 3\) and target \(5,\)"),
])
def test_wrong_shapes_are_value_errors_naming_both_shapes(call, shapes):
    with pytest.raises(ValueError, match=shapes):
        call()


# ------------------------------------------------------------------- inputs that cannot be scored (issue 10, item 2)
_NAN = float("nan")
_BAD_INPUTS = [
    # (task, preds, target, kwargs, error type, message pattern)
    ("multiclass", torch.tensor([5]), torch.tensor([0]), {"num_classes": 4}, ValueError,
     r"`preds`.*0 ≤ label < 4.*\[5\]"),
    ("multiclass", torch.tensor([0]), torch.tensor([-1]), {"num_classes": 4}, ValueError, r"`target`.*0 ≤ label < 4"),
    ("multiclass", torch.tensor([0, 1]), torch.tensor([0, 4]), {"num_classes": 4}, ValueError, r"`target`.*\[4\]"),
    ("multiclass", torch.tensor([[_NAN, 0.5, 0.1]]), torch.tensor([0]), {"num_classes": 3}, ValueError, "`preds`.*NaN"),
    ("multiclass", [0, 1], torch.tensor([0, 1]), {"num_classes": 3}, TypeError, "`preds`.*Tensor.*list"),
    ("multiclass", torch.tensor([0, 1]), (0, 1), {"num_classes": 3}, TypeError, "`target`.*Tensor.*tuple"),
    ("multiclass", torch.tensor([0, 1]), torch.tensor([0.0, 1.0]), {"num_classes": 3}, TypeError, "`target`.*integer"),
    ("binary", torch.tensor([_NAN, 0.3]), torch.tensor([1, 0]), {}, ValueError, "`preds`.*NaN"),
    ("binary", torch.tensor([float("inf"), 0.3]), torch.tensor([1, 0]), {}, ValueError, "`preds`.*infinite"),
    ("binary", torch.tensor([2, 0]), torch.tensor([1, 0]), {}, ValueError, r"`preds`.*\{0, 1\}"),
    ("binary", torch.tensor([1, 0]), torch.tensor([1, 3]), {}, ValueError, r"`target`.*\{0, 1\}"),
    ("multilabel", torch.tensor([[0, 2]]), torch.tensor([[0, 1]]), {"num_labels": 2}, ValueError, "`preds`"),
    ("multilabel", torch.tensor([[0.2, _NAN]]), torch.tensor([[0, 1]]), {"num_labels": 2}, ValueError, "NaN"),
    ("multilabel", torch.tensor([[0, 1]]), torch.tensor([[-1, 1]]), {"num_labels": 2}, ValueError, "`target`"),
]


@pytest.mark.parametrize("stat", ["precision", "recall", "f1_score"])
@pytest.mark.parametrize("case", range(len(_BAD_INPUTS)))
def test_inputs_that_cannot_be_scored_are_errors_naming_the_argument(case, stat):
    import gpumetrics.classification as classification
    from gpumetrics import functional as F

    task, preds, target, kwargs, error, pattern = _BAD_INPUTS[case]
    function = getattr(F, f"{task}_{stat}")
    module_name = {"precision": "Precision", "recall": "Recall", "f1_score": "F1Score"}[stat]
    module = getattr(classification, f"{task.capitalize()}{module_name}")(**kwargs)
    with pytest.raises(error, match=pattern):
        function(preds, target, **kwargs)
    with pytest.raises(error, match=pattern):
        module.update(preds, target)
    assert int(module.tp.sum() + module.fp.sum() + module.fn.sum()) == 0  # nothing was counted


def test_ignore_index_positions_are_not_range_checked_and_match_sklearn():
    from sklearn.metrics import f1_score

    from gpumetrics import functional as F

    preds, target = torch.tensor([0, 9, 1, 2, 2]), torch.tensor([0, 7, 1, 2, 1])
    keep = target != 7
    expected = f1_score(target[keep].numpy(), preds[keep].numpy(), average="macro")
    got = F.multiclass_f1_score(preds, target, num_classes=3, ignore_index=7)
    assert float(got) == pytest.approx(expected, abs=1e-7)
    with pytest.raises(ValueError, match="`preds`"):  # a bad label where the target is scored is still an error
        F.multiclass_f1_score(torch.tensor([0, 9]), torch.tensor([0, 2]), num_classes=3, ignore_index=1)


@pytest.mark.parametrize("stat", ["precision", "recall", "f1"])
def test_label_values_at_ignored_positions_are_never_read(stat):
    """Where ``target`` is ``ignore_index`` a label prediction's value must not matter: torchmetrics raised
    ``RuntimeError`` for binary / multilabel labels outside {0, 1} there, for more than ``num_classes + 1`` distinct
    multiclass labels, and in samplewise one-hot encoding of an out-of-range label when ``ignore_index`` is a class."""
    garbage = torch.tensor([-3, 9, 40, 7, 300, 5])
    target = torch.tensor([[0, 1, 1, 2, 2, 0], [2, 1, 0, 1, 1, 1]])
    preds = torch.tensor([[0, 1, 2, 2, 1, 0], [2, 0, 0, 1, 2, 2]])
    for ignore in (1, -1):  # a class, and a value outside the classes
        t = target.masked_fill(target == 1, ignore)
        p = torch.where(t == ignore, garbage, preds)
        for average in ("micro", "macro", "weighted", "none"):
            sk_kwargs = dict(average=None, labels=[0, 1, 2]) if average == "none" else dict(average=average)
            kwargs = dict(num_classes=3, average=average, ignore_index=ignore)
            keep = t.flatten() != ignore
            expected = _sk(stat, t.flatten()[keep], p.flatten()[keep], **sk_kwargs)
            torch.testing.assert_close(MULTICLASS[stat][1](p, t, **kwargs).double(), expected, atol=ATOL, rtol=0)
            rows = torch.stack([_sk(stat, t[i][t[i] != ignore], p[i][t[i] != ignore], **sk_kwargs) for i in range(2)])
            got = MULTICLASS[stat][1](p, t, multidim_average="samplewise", **kwargs)
            torch.testing.assert_close(got.double(), rows, atol=ATOL, rtol=0)
            metric = MULTICLASS[stat][0](multidim_average="samplewise", **kwargs)
            metric.update(p[:1], t[:1])
            metric.update(p[1:], t[1:])
            torch.testing.assert_close(metric.compute().double(), rows, atol=ATOL, rtol=0)
    label_target = torch.tensor([[1, -1, 0], [0, 1, -1]])
    label_preds = torch.where(label_target == -1, torch.tensor(7), torch.tensor([[1, 0, 1], [0, 1, 0]]))
    expected = _sk(stat, torch.tensor([[1, 0], [1, 1]]), torch.tensor([[1, 1], [1, 0]]), average=None)  # label 0, 2
    function, module = MULTILABEL[stat][1], MULTILABEL[stat][0]
    scores = function(label_preds, label_target, num_labels=3, average="none", ignore_index=-1)
    torch.testing.assert_close(scores[[0, 2]].double(), expected, atol=ATOL, rtol=0)
    metric = module(num_labels=3, average="none", ignore_index=-1)
    metric.update(label_preds, label_target)
    torch.testing.assert_close(metric.compute(), scores)
    binary_target, binary_preds = torch.tensor([1, -1, 0, 1]), torch.tensor([1, 5, 1, 0])
    expected = _sk(stat, [1, 0, 1], [1, 1, 0])
    assert float(BINARY[stat][1](binary_preds, binary_target, ignore_index=-1)) == pytest.approx(float(expected))
    assert float(BINARY[stat][0](ignore_index=-1)(binary_preds, binary_target)) == pytest.approx(float(expected))


@pytest.mark.parametrize("zero_division", [0.5, -1, float("nan"), "warn"])
@pytest.mark.parametrize("stat", ["precision", "recall", "f1_score"])
@pytest.mark.parametrize("empty", [False, True])
def test_binary_functions_reject_zero_division_their_modules_reject(zero_division, stat, empty):
    """torchmetrics' binary functions skip the zero_division check: binary_precision([0, 0], [0, 0],
    zero_division=0.5) was 0.5 (sklearn raises), where BinaryPrecision and every multiclass/multilabel form raise."""
    import gpumetrics.classification as classification
    from gpumetrics import functional as F

    preds = target = torch.zeros(0 if empty else 2, dtype=torch.long)
    module_name = {"precision": "Precision", "recall": "Recall", "f1_score": "F1Score"}[stat]
    with pytest.raises(ValueError, match="zero_division"):
        getattr(F, f"binary_{stat}")(preds, target, zero_division=zero_division)
    with pytest.raises(ValueError, match="zero_division"):
        getattr(classification, f"Binary{module_name}")(zero_division=zero_division)
    for valid in (0, 1):
        assert float(getattr(F, f"binary_{stat}")(preds, target, zero_division=valid)) == valid


@pytest.mark.parametrize("stat", ["precision", "recall", "f1"])
def test_samplewise_keeps_the_sample_dimension_for_one_sample(stat):
    """torchmetrics squeezes samplewise statistics: one multilabel sample's [1, L] became [L] (average='micro' raised
    IndexError, 'macro' gave a 0-d value, a module fed one sample per update concatenated them into one [N * L] row),
    and binary samplewise on one sample returned a 0-d tensor. Every sample is now one row, as sklearn per sample."""
    g = torch.Generator().manual_seed(0)
    target = torch.randint(0, 2, (3, 4, 5), generator=g)
    preds = torch.randint(0, 2, (3, 4, 5), generator=g)
    function, module = MULTILABEL[stat][1], MULTILABEL[stat][0]
    for average in ("micro", "macro", "weighted", "none"):
        expected = torch.stack([
            _sk(stat, target[i].T, preds[i].T, average=None if average == "none" else average, zero_division=0)
            for i in range(3)])
        kwargs = dict(num_labels=4, average=average, multidim_average="samplewise")
        one = function(preds[:1], target[:1], **kwargs)
        assert one.shape == expected[:1].shape
        torch.testing.assert_close(one.double(), expected[:1], atol=ATOL, rtol=0)
        metric = module(**kwargs)
        for i in range(3):
            metric.update(preds[i:i + 1], target[i:i + 1])
        torch.testing.assert_close(metric.compute().double(), expected, atol=ATOL, rtol=0)
    binary = BINARY[stat][1](preds[:1, 0], target[:1, 0], multidim_average="samplewise")
    assert binary.shape == (1,)
    assert float(binary) == pytest.approx(float(_sk(stat, target[0, 0], preds[0, 0], zero_division=0)), abs=ATOL)


@pytest.mark.parametrize("stat", ["precision", "recall", "f1"])
def test_samplewise_modules_keep_the_sample_dimension_for_one_sample_in_total(stat):
    """A samplewise module that saw one sample in all returns ``[1]`` (torchmetrics' compute squeezed it to 0-d),
    binary, multiclass (micro / macro) and multilabel alike; per-class results keep ``[1, C]``."""
    preds, target = torch.tensor([[0, 1, 2, 2]]), torch.tensor([[0, 1, 1, 2]])
    for average in ("micro", "macro"):
        metric = MULTICLASS[stat][0](num_classes=3, average=average, multidim_average="samplewise")
        metric.update(preds, target)
        expected = _sk(stat, target[0], preds[0], average=average, zero_division=0)
        assert metric.compute().shape == (1,) and float(metric.compute()) == pytest.approx(float(expected), abs=ATOL)
    per_class = MULTICLASS[stat][0](num_classes=3, average="none", multidim_average="samplewise")
    per_class.update(preds, target)
    assert per_class.compute().shape == (1, 3)
    binary = BINARY[stat][0](multidim_average="samplewise")
    binary.update(preds.clamp(max=1), target.clamp(max=1))
    assert binary.compute().shape == (1,)
    label = MULTILABEL[stat][0](num_labels=3, average="micro", multidim_average="samplewise")
    label.update(torch.tensor([[[1, 0], [0, 1], [1, 1]]]), torch.tensor([[[1, 1], [0, 1], [0, 1]]]))
    assert label.compute().shape == (1,)
    plain = MULTICLASS[stat][0](num_classes=3, average="macro")  # global results stay 0-d
    plain.update(preds[0], target[0])
    assert plain.compute().shape == ()


def test_multiclass_integer_scores_are_a_type_error_naming_preds():
    """Integer scores ``[N, C]`` met an internal ``ValueError: not enough values to unpack`` in the input checks
    (found by fuzzing dtypes); they are a ``TypeError`` naming ``preds`` and its dtype, function and module alike."""
    preds, target = torch.tensor([[0, 2, 1], [3, 1, 0]]), torch.tensor([1, 0])
    for stat in ("precision", "recall", "f1"):
        module, function = MULTICLASS[stat]
        for dtype in (torch.int64, torch.int32, torch.uint8):
            with pytest.raises(TypeError, match=rf"`preds` of scores.*floating point.*{dtype}"):
                function(preds.to(dtype), target, num_classes=3, top_k=2)
            metric = module(num_classes=3)
            with pytest.raises(TypeError, match=r"`preds` of scores.*floating point"):
                metric.update(preds.to(dtype), target)
            assert int(metric.tp.sum() + metric.fp.sum() + metric.fn.sum()) == 0
        expected = _sk(stat, target, preds.float().argmax(1), average="macro", zero_division=0)
        torch.testing.assert_close(function(preds.float(), target, num_classes=3).double(), expected, atol=ATOL, rtol=0)


@pytest.mark.parametrize("stat", ["precision", "recall", "f1"])
def test_samplewise_modules_that_saw_no_samples_return_empty_rows(stat):
    """A samplewise module with zero samples in all (empty batches only, or none) raised torchmetrics' "No samples to
    concatenate" in ``compute``; it now returns the functions' ``[0]`` (``[0, C]`` for ``average="none"``), also
    after ``merge_state`` and a checkpoint round trip, and later batches count as usual."""
    cases = [
        (BINARY, {}, torch.zeros(0, 2), torch.zeros(0, 2, dtype=torch.long), ("binary",)),
        (MULTICLASS, {"num_classes": 3}, torch.zeros(0, 3, 2), torch.zeros(0, 2, dtype=torch.long),
         ("micro", "macro", "weighted", "none")),
        (MULTILABEL, {"num_labels": 3}, torch.zeros(0, 3, 2), torch.zeros(0, 3, 2, dtype=torch.long),
         ("micro", "macro", "weighted", "none")),
    ]
    for table, options, preds, target, averages in cases:
        module, function = table[stat]
        for average in averages:
            kwargs = {**options, "multidim_average": "samplewise",
                      **({} if average == "binary" else {"average": average})}
            expected = function(preds, target, **kwargs)
            assert expected.shape == ((0, 3) if average == "none" else (0,))
            metric = module(**kwargs)
            metric.update(preds, target)
            assert torch.equal(metric.compute(), expected)
            merged = module(**kwargs)
            merged.update(preds, target)
            merged.merge_state(metric)
            assert torch.equal(merged.compute(), expected)
            metric.persistent(True)
            restored = module(**kwargs)
            restored.load_state_dict(metric.state_dict())
            assert torch.equal(restored.compute(), expected)
            full = (torch.ones((2,) + preds.shape[1:]), torch.ones((2,) + target.shape[1:], dtype=torch.long))
            restored.update(*full)
            assert torch.equal(restored.compute(), function(*full, **kwargs))


@pytest.mark.parametrize("stat", ["precision", "recall", "f1"])
def test_top_k_scores_the_target_if_among_the_top_k_else_the_top_1_class(stat):
    """What the docs state for ``top_k > 1`` (fuzzed on tie-free scores): sklearn on those labels, micro = sklearn's
    ``top_k_accuracy_score``; macro precision / recall average over the classes in ``target`` only."""
    g = torch.Generator().manual_seed(4)
    num_classes, n = 6, 80
    scores = torch.rand(n, num_classes, generator=g)
    target = torch.randint(0, num_classes - 1, (n,), generator=g)  # class 5 never in target
    scores[:, 5] += 0.3  # ... but often the top-1 class of a miss
    module, function = MULTICLASS[stat]
    for k in (2, 3):
        in_top = (scores.topk(k, dim=1).indices == target[:, None]).any(1)
        labels = torch.where(in_top, target, scores.argmax(1))
        assert bool((labels == 5).any())
        micro = function(scores, target, num_classes=num_classes, top_k=k, average="micro")
        accuracy = skm.top_k_accuracy_score(target.numpy(), scores.numpy(), k=k, labels=list(range(num_classes)))
        assert float(micro) == pytest.approx(accuracy, abs=ATOL)
        per_class = _sk(stat, target, labels, average=None, labels=list(range(num_classes)))
        got = function(scores, target, num_classes=num_classes, top_k=k, average="none")
        torch.testing.assert_close(got.double(), per_class, atol=ATOL, rtol=0)
        classes = list(range(num_classes - 1)) if stat != "f1" else list(range(num_classes))
        expected = _sk(stat, target, labels, average="macro", labels=classes)
        metric = module(num_classes=num_classes, top_k=k, average="macro")
        for p, t in zip(scores.split(30), target.split(30)):
            metric.update(p, t)
        torch.testing.assert_close(metric.compute().double(), expected, atol=ATOL, rtol=0)
    # ties follow torch.topk (unspecified), not sklearn's higher-index-first ranking (docs example)
    tied, target = torch.zeros(1, 3), torch.tensor([2])
    picked = set(torch.topk(tied, 2, dim=1).indices[0].tolist())
    expected = float(2 in picked)
    assert float(C.multiclass_recall(tied, target, num_classes=3, top_k=2, average="micro")) == expected


@pytest.mark.parametrize("stat", ["precision", "recall", "f1"])
def test_top_k_outside_one_to_num_classes_or_with_label_preds_is_a_value_error_naming_it(stat):
    """torchmetrics' check (``not isinstance(top_k, int) and top_k < 1``) let ``top_k=0`` through: on 3 samples of 3
    classes it returned a number, otherwise a size-mismatch ``RuntimeError``; floats met
    ``topk()``'s ``TypeError`` and ``top_k > 1`` with label ``preds`` an index ``RuntimeError``."""
    module, function = MULTICLASS[stat]
    g = torch.Generator().manual_seed(0)
    scores, target = torch.rand(3, 3, generator=g), torch.tensor([0, 1, 1])
    for top_k in (0, -1, 4, 2.0, None):
        with pytest.raises(ValueError, match=r"`top_k` must be an integer in \[1, num_classes=3\]"):
            function(scores, target, num_classes=3, top_k=top_k)
        if top_k is not None:  # None: torchmetrics' own TypeError at construction
            with pytest.raises(ValueError, match=r"`top_k`"):  # at construction (torchmetrics) or the first update
                module(num_classes=3, top_k=top_k).update(scores, target)
    labels = torch.tensor([0, 2, 1])
    with pytest.raises(ValueError, match=r"`top_k=2` needs scores .* `preds`"):
        function(labels, target, num_classes=3, top_k=2)
    metric = module(num_classes=3, top_k=2)
    with pytest.raises(ValueError, match=r"`top_k=2` needs scores"):
        metric.update(labels, target)
    metric.update(scores, target)  # scores are fine
    assert torch.equal(metric.compute(), function(scores, target, num_classes=3, top_k=2))


@pytest.mark.parametrize("seed", range(2))
def test_extra_dimensions_with_tied_scores_equal_sklearn_on_argmax_labels(seed):
    """``[N, C, d1(, d2)]`` scores of few distinct values (argmax ties: the first class, as numpy), ``ignore_index``:
    global = sklearn on every position, samplewise = sklearn per sample."""
    rng = np.random.default_rng(seed)
    stats = {"precision": skm.precision_score, "recall": skm.recall_score, "f1": skm.f1_score}
    functions = {"precision": C.multiclass_precision, "recall": C.multiclass_recall, "f1": C.multiclass_f1_score}
    for _ in range(12):
        n, classes = int(rng.integers(1, 5)), int(rng.integers(2, 5))
        dims = tuple(int(d) for d in rng.integers(1, 4, size=rng.integers(1, 3)))
        scores = rng.integers(0, 3, size=(n, classes, *dims)).astype(np.float32)
        target = np.where(rng.random((n, *dims)) < 0.2, -1, rng.integers(0, classes, size=(n, *dims)))
        labels = scores.argmax(axis=1)
        zero_division = int(rng.integers(0, 2))

        def expected(reference, average, p, t):
            p, t = p[t != -1], t[t != -1]
            if average is None:
                return reference(t, p, labels=list(range(classes)), average=None, zero_division=zero_division)
            return reference(t, p, average=average, zero_division=zero_division)

        for stat, reference in stats.items():
            for average in ("micro", "macro", "weighted", None):
                kwargs = dict(num_classes=classes, average=average, ignore_index=-1, zero_division=zero_division)
                got = functions[stat](torch.from_numpy(scores), torch.from_numpy(target), **kwargs)
                if (target != -1).any():
                    want = expected(reference, average, labels.reshape(-1), target.reshape(-1))
                    np.testing.assert_allclose(got.double().numpy(), want, atol=2e-6, err_msg=f"{stat} {average}")
                rows = [i for i in range(n) if (target[i] != -1).any()]
                if not rows:
                    continue
                got = functions[stat](torch.from_numpy(scores), torch.from_numpy(target), multidim_average="samplewise",
                                      **kwargs)
                want = [expected(reference, average, labels[i].reshape(-1), target[i].reshape(-1)) for i in rows]
                np.testing.assert_allclose(got.double().numpy()[rows], np.asarray(want, dtype=np.float64), atol=2e-6,
                                           err_msg=f"{stat} {average} samplewise")


def test_meta_tensors_devices_and_f1_class_counts_are_errors_naming_the_argument():
    """Found by fuzzing the Python API: a ``meta`` tensor (a shape, no values) failed deep inside torch
    (``NotImplementedError`` / "Tensor on device cpu is not on the expected device meta!"), and the F1 modules sized
    their states before torchmetrics validated ``num_classes`` / ``num_labels`` (``RuntimeError`` for -1, an unnamed
    ``TypeError`` for 2.0) where precision and recall raise ``ValueError`` naming it."""
    import gpumetrics.classification as classification
    from gpumetrics import functional as F

    meta = torch.rand(3, device="meta")
    with pytest.raises(ValueError, match="`preds` is a tensor on the meta device"):
        F.binary_f1_score(meta, torch.tensor([0, 1, 1]))
    with pytest.raises(ValueError, match="`target` is a tensor on the meta device"):
        F.multiclass_recall(torch.tensor([0, 1]), torch.tensor([0, 1], device="meta"), num_classes=2)
    module = classification.MultilabelPrecision(num_labels=2)
    with pytest.raises(ValueError, match="`preds` is a tensor on the meta device"):
        module.update(torch.rand(1, 2, device="meta"), torch.tensor([[0, 1]]))
    module.update(torch.tensor([[0, 1]]), torch.tensor([[0, 1]]))
    assert float(module.compute()) == 0.5
    for cls, name in [(classification.MulticlassF1Score, "num_classes"),
                      (classification.MultilabelF1Score, "num_labels"),
                      (classification.MulticlassPrecision, "num_classes")]:
        for bad in (-1, 0, 1, 2.0, None, True):
            with pytest.raises(ValueError, match=f"`{name}` to be an integer larger than 1"):
                cls(**{name: bad})
        with pytest.raises(ValueError, match=f"`{name}` to be an integer larger than 1"):  # F1: torch.zeros' error
            cls(**{name: -1}, validate_args=False)
        # past the bound: torch's allocation error (10**10) or an unnamed overflow TypeError (10**20) before
        for huge in (2**31, 10**10, 10**20):
            for validate_args in (True, False):
                with pytest.raises(ValueError, match=rf"`{name}` .* at most 2\*\*31 - 1 .*, but got {huge}"):
                    cls(**{name: huge}, validate_args=validate_args)
    for huge in (2**31, 10**20):  # the functions likewise (an allocation error or OverflowError before)
        for validate_args in (True, False):
            with pytest.raises(ValueError, match=rf"`num_classes` .* but got {huge}"):
                F.multiclass_f1_score(torch.tensor([0, 1]), torch.tensor([0, 1]), huge, validate_args=validate_args)
            with pytest.raises(ValueError, match=rf"`num_labels` .* but got {huge}"):
                F.multilabel_recall(torch.ones(1, 2), torch.ones(1, 2, dtype=torch.long), huge,
                                    validate_args=validate_args)
    assert classification.MulticlassF1Score(3, average="none")(torch.tensor([0, 1]), torch.tensor([0, 2])).tolist() \
        == [1.0, 0.0, 0.0]
    # torchmetrics compared top_k with 1 first: "'<' not supported" for None
    for cls in (classification.MulticlassPrecision, classification.MulticlassF1Score):
        for top_k in (None, "2", [1], 0, 4):
            with pytest.raises(ValueError, match=r"`top_k` must be an integer in \[1, num_classes=3\]"):
                cls(num_classes=3, top_k=top_k)

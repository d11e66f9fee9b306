"""The room's own stat scores against torchmetrics' classification modules and functions (the test dependency, the
oracle of the counts), every option combination: task × statistic × average × top_k × ignore_index ×
multidim_average × zero_division × validate_args, on labels, probabilities and logits, split into batches of uneven
sizes (one-sample and empty batches included) with classes that occur in one side only or nowhere.

Where the documented rules differ from torchmetrics the oracle is adjusted, not skipped:

* an average whose weights are all zero is the plain mean of the per-class scores (sklearn's ``_nanaverage``;
  torchmetrics: 0) — the expected value is then the mean of torchmetrics' ``average=None`` scores;
* ``samplewise`` keeps one row per sample (torchmetrics squeezes one sample's row away, and its multilabel update
  then fails): the oracle scores each batch with every sample twice and keeps the first copy's rows;
* a batch of zero samples adds nothing (torchmetrics' formatting raises): only our module sees it.

The adjusted oracle is itself checked against scikit-learn wherever sklearn has an equal (global, top-1).
"""

from __future__ import annotations

import inspect
import itertools
import random
import zlib

import pytest
import torch
import torchmetrics.classification as tmc
import torchmetrics.functional.classification as tmf

import gpumetrics.classification as C
from gpumetrics.classification.stat_scores import AVERAGES, MULTIDIM_AVERAGES

STATS = {"precision": "Precision", "recall": "Recall", "f1": "F1Score"}
FUNCTIONS = {"precision": "precision", "recall": "recall", "f1": "f1_score"}
ATOL = 1e-6

#: every option of the nine modules / functions and the values the product below covers; an option added to a
#: signature without a row here fails test_every_option_is_covered
OPTION_VALUES = {
    "average": AVERAGES,
    "top_k": (1, 2),
    "ignore_index": (None, -1, 0),
    "multidim_average": MULTIDIM_AVERAGES,
    "zero_division": (0, 1),
    "validate_args": (True, False),
    "threshold": (0.5, 0.3),
}
STRUCTURAL = {"self", "preds", "target", "num_classes", "num_labels", "kwargs"}


def _combinations(task):
    names = ["ignore_index", "multidim_average", "zero_division", "validate_args"]
    names += {"binary": ["threshold"], "multiclass": ["average", "top_k"], "multilabel": ["average", "threshold"]}[task]
    for values in itertools.product(*(OPTION_VALUES[name] for name in names)):
        yield dict(zip(names, values))


def test_every_option_is_covered():
    for task in ("binary", "multiclass", "multilabel"):
        covered = set().union(*(options.keys() for options in _combinations(task)))
        for stat in STATS:
            for obj in (getattr(C, f"{task.capitalize()}{STATS[stat]}"), getattr(C, f"{task}_{FUNCTIONS[stat]}")):
                options = set(inspect.signature(obj).parameters) - STRUCTURAL
                assert options <= covered, f"{obj.__name__}: no parity coverage for {sorted(options - covered)}"


def test_signatures_equal_torchmetrics():
    """Names, order, kinds and defaults of every argument (the catalog declares the modules' options from them)."""
    for task in ("binary", "multiclass", "multilabel"):
        for stat in STATS:
            for module in (tmc, tmf):
                name = f"{task.capitalize()}{STATS[stat]}" if module is tmc else f"{task}_{FUNCTIONS[stat]}"
                ours, theirs = (inspect.signature(getattr(namespace, name)).parameters for namespace in (C, module))
                assert [(p.name, p.kind, p.default) for p in ours.values()] == \
                    [(p.name, p.kind, p.default) for p in theirs.values()], name


# ------------------------------------------------------------------------------------------------------------ inputs
def _batches(task, rng, generator, options, num_classes):
    """Batches of one input kind: sizes with a 1-sample and possibly an empty batch, classes drawn from a subset."""
    samplewise = options["multidim_average"] == "samplewise"
    extra = (rng.choice([1, 3]),) if samplewise or rng.random() < 0.4 else ()
    sizes = rng.choice([[1], [3, 1], [5, 0, 2], [2, 1, 4], [0, 6]])
    top_k = options.get("top_k", 1)
    kind = rng.choice(["scores", "probs", "logits"] if task == "multiclass" and top_k > 1 else
                      ["labels", "probs", "logits"])
    batches = []
    for n in sizes:
        if task == "multiclass":
            present = sorted(rng.sample(range(num_classes), rng.randint(1, num_classes)))
            target = torch.tensor(present)[torch.randint(len(present), (n, *extra), generator=generator)]
            if kind == "labels":
                preds = torch.randint(num_classes, (n, *extra), generator=generator)
                preds = torch.where(torch.rand(preds.shape, generator=generator) < 0.5, target, preds)
            else:
                preds = torch.randn(n, num_classes, *extra, generator=generator)
                preds = preds.softmax(1) if kind == "probs" else preds * 3
        else:
            shape = (n, num_classes, *extra) if task == "multilabel" else (n, *extra)
            target = (torch.rand(shape, generator=generator) < rng.choice([0.0, 0.3, 0.7])).long()
            if kind == "labels":
                preds = (torch.rand(shape, generator=generator) < 0.5).long()
            elif kind == "probs":
                preds = torch.rand(shape, generator=generator)
            else:
                preds = torch.randn(shape, generator=generator) * 3
                preds.view(-1)[:1] = 4.0  # every batch of logits has a value outside [0, 1] (read as logits)
        ignore_index = options["ignore_index"]
        if ignore_index is not None:
            target = torch.where(torch.rand(target.shape, generator=generator) < 0.25, ignore_index, target)
        batches.append((preds, target))
    return batches


# ------------------------------------------------------------------------------------------------------------ oracle
def _tm_args(task, num_classes, options):
    args = {key: value for key, value in options.items() if key != "threshold" or task != "multiclass"}
    if task == "multiclass":
        args["num_classes"] = num_classes
    elif task == "multilabel":
        args["num_labels"] = num_classes
    return args


def _weights(task, stat, average, top_k, counts):
    """torchmetrics' averaging weights from ``[..., C, 5]`` stat scores (tp, fp, tn, fn, support)."""
    tp, fp, fn = counts[..., 0], counts[..., 1], counts[..., 3]
    if average == "weighted":
        return tp + fn
    if task == "multilabel":
        return torch.ones_like(tp)
    return ((tp + fn > 0) if top_k > 1 and stat != "f1" else (tp + fp + fn > 0)).long()


def _adjusted(task, stat, options, value, per_class, counts):
    """torchmetrics' ``value`` with sklearn's mean where every weight is zero (per sample row when samplewise)."""
    average = options.get("average", "binary")
    if average not in ("macro", "weighted"):
        return value
    weights = _weights(task, stat, average, options.get("top_k", 1), counts)
    return torch.where(weights.sum(-1) == 0, per_class.mean(-1), value)


def _tm_function(task, stat, preds, target, num_classes, options):
    fn = getattr(tmf, f"{task}_{FUNCTIONS[stat]}")
    args = _tm_args(task, num_classes, options)
    value = fn(preds, target, **args)
    if task == "binary" or args.get("average") in ("micro", "none", None):
        return value
    per_class = fn(preds, target, **{**args, "average": None})
    stats_args = {key: value for key, value in args.items() if key != "zero_division"}
    counts = getattr(tmf, f"{task}_stat_scores")(preds, target, **{**stats_args, "average": None})
    return _adjusted(task, stat, options, value, per_class, counts)


def _tm_samplewise(task, stat, preds, target, num_classes, options):
    """Rows of one batch: every sample twice (so that no batch has one sample), the first copy's rows kept."""
    n = preds.shape[0]
    return _tm_function(task, stat, torch.cat([preds, preds]), torch.cat([target, target]), num_classes,
                        options)[:n]


def _tm_module_value(task, stat, batches, num_classes, options):
    args = _tm_args(task, num_classes, options)
    module = getattr(tmc, f"{task.capitalize()}{STATS[stat]}")(**args)
    for preds, target in batches:
        module.update(preds, target)
    value = module.compute()
    if task == "binary" or args.get("average") in ("micro", "none", None):
        return value, module
    per_class = getattr(tmc, f"{task.capitalize()}{STATS[stat]}")(**{**args, "average": None})
    stats_args = {key: value for key, value in args.items() if key != "zero_division"}
    counts = getattr(tmc, f"{task.capitalize()}StatScores")(**{**stats_args, "average": None})
    for preds, target in batches:
        per_class.update(preds, target)
        counts.update(preds, target)
    return _adjusted(task, stat, options, value, per_class.compute(), counts.compute()), module


def _close(got, expected, what):
    assert got.dtype == torch.float32, what
    assert got.shape == expected.shape, f"{what}: shape {tuple(got.shape)} vs {tuple(expected.shape)}"
    torch.testing.assert_close(got, expected.float(), atol=ATOL, rtol=0, msg=what)


@pytest.mark.parametrize("stat", list(STATS))
@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel"])
def test_every_option_combination_equals_torchmetrics(task, stat):
    """Module (several batches), function (each batch and all of them) and the module's integer states."""
    _check_every_combination(task, stat, draw=0)


@pytest.mark.slow
@pytest.mark.parametrize("draw", range(1, 9))
@pytest.mark.parametrize("stat", list(STATS))
@pytest.mark.parametrize("task", ["binary", "multiclass", "multilabel"])
def test_every_option_combination_equals_torchmetrics_more_draws(task, stat, draw):
    _check_every_combination(task, stat, draw)


def _check_every_combination(task, stat, draw):
    ours_module_cls = getattr(C, f"{task.capitalize()}{STATS[stat]}")
    ours_function = getattr(C, f"{task}_{FUNCTIONS[stat]}")
    for index, options in enumerate(_combinations(task)):
        seed = zlib.crc32(f"{task} {stat} {index}{f' {draw}' if draw else ''}".encode())
        rng, generator = random.Random(seed), torch.Generator().manual_seed(seed)
        num_classes = rng.choice([2, 3, 5]) if task != "binary" else None
        batches = _batches(task, rng, generator, options, num_classes)
        kwargs = _tm_args(task, num_classes, options)
        what = f"{task} {stat} {options} seed={seed} shapes={[tuple(p.shape) for p, _ in batches]}"
        scored = [(p, t) for p, t in batches if p.shape[0]]
        samplewise = options["multidim_average"] == "samplewise"
        for preds, target in scored:  # the function on each batch
            expected = (_tm_samplewise if samplewise else _tm_function)(task, stat, preds, target, num_classes, options)
            _close(ours_function(preds, target, **kwargs), expected, f"function {what}")
        if not scored:
            continue
        everything = (torch.cat([p for p, _ in scored]), torch.cat([t for _, t in scored]))
        module = ours_module_cls(**kwargs)
        for preds, target in batches:
            module.update(preds, target)
        if samplewise:  # rows of every batch, in order
            expected = torch.cat([_tm_samplewise(task, stat, p, t, num_classes, options) for p, t in scored])
        else:
            expected, reference = _tm_module_value(task, stat, scored, num_classes, options)
            for name in ("tp", "fp", "tn", "fn"):
                mine, theirs = getattr(module, name), getattr(reference, name)
                assert mine.dtype == theirs.dtype and torch.equal(mine, theirs), f"state {name} {what}"
        _close(module.compute(), expected, f"module {what}")
        # every batch of probabilities lies in [0, 1] and every batch of logits outside: one call reads them alike
        _close(ours_function(*everything, **kwargs), expected, f"function on all {what}")
        if not samplewise and options.get("top_k", 1) == 1:
            reference = _sklearn(task, stat, *everything, num_classes, options)
            if reference is not None:
                torch.testing.assert_close(expected.double(), reference, atol=ATOL, rtol=0, msg=f"sklearn {what}")


def _sklearn(task, stat, preds, target, num_classes, options):
    """sklearn's number on the hard labels (ignored positions filtered out), or None where it has no equal:
    multilabel ``ignore_index`` (sklearn filters whole samples) and zero scored samples (sklearn raises)."""
    import warnings

    from sklearn import metrics as skm

    if task == "multiclass":
        labels = preds.argmax(1) if preds.is_floating_point() else preds
    elif preds.is_floating_point():
        scores = preds.sigmoid() if bool(((preds < 0) | (preds > 1)).any()) else preds
        labels = (scores > options["threshold"]).long()
    else:
        labels = preds
    if task == "multilabel":
        if options["ignore_index"] is not None:
            return None
        labels, target = (t.movedim(1, -1).reshape(-1, num_classes) for t in (labels, target))
    else:
        labels, target = labels.reshape(-1), target.reshape(-1)
        if options["ignore_index"] is not None:
            keep = target != options["ignore_index"]
            labels, target = labels[keep], target[keep]
    if target.shape[0] == 0:
        return None
    average = options.get("average", "binary")
    extra = {"labels": list(range(num_classes))} if average in ("none", None) else {}
    score = {"precision": skm.precision_score, "recall": skm.recall_score, "f1": skm.f1_score}[stat]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # UndefinedMetricWarning is what zero_division is for
        value = score(target.numpy(), labels.numpy(), average=None if average == "none" else average,
                      zero_division=options["zero_division"], **extra)
    return torch.as_tensor(value, dtype=torch.float64)


# ------------------------------------------------------------------------------------------------ module behaviours
def _module_cases():
    g = torch.Generator().manual_seed(0)
    yield "binary", {}, [(torch.rand(n, 3, generator=g), torch.randint(0, 2, (n, 3), generator=g)) for n in (4, 1, 6)]
    yield "multiclass", {"num_classes": 4}, [
        (torch.randn(n, 4, generator=g), torch.randint(0, 4, (n,), generator=g)) for n in (5, 1, 3)]
    yield "multilabel", {"num_labels": 3}, [
        (torch.rand(n, 3, 2, generator=g), torch.randint(0, 2, (n, 3, 2), generator=g)) for n in (2, 1, 4)]


@pytest.mark.parametrize("multidim_average", MULTIDIM_AVERAGES)
@pytest.mark.parametrize("stat", list(STATS))
def test_forward_merge_and_checkpoint_equal_one_pass(stat, multidim_average):
    """``forward`` returns each batch's own value and accumulates; ``merge_state`` of two halves and a
    ``state_dict`` round trip mid-stream equal one pass over every batch."""
    for task, options, batches in _module_cases():
        if task == "multiclass" and multidim_average == "samplewise":
            batches = [(p.unsqueeze(-1), t.unsqueeze(-1)) for p, t in batches]
        kwargs = {**options, "multidim_average": multidim_average,
                  **({} if task == "binary" else {"average": "weighted"})}
        cls, function = getattr(C, f"{task.capitalize()}{STATS[stat]}"), getattr(C, f"{task}_{FUNCTIONS[stat]}")
        whole = cls(**kwargs)
        for preds, target in batches:
            torch.testing.assert_close(whole(preds, target), function(preds, target, **kwargs))
        one_pass = whole.compute()
        first, second = cls(**kwargs), cls(**kwargs)
        first.update(*batches[0])
        for batch in batches[1:]:
            second.update(*batch)
        first.merge_state(second)
        torch.testing.assert_close(first.compute(), one_pass)
        partial = cls(**kwargs)
        partial.update(*batches[0])
        partial.persistent(True)
        restored = cls(**kwargs)
        restored.load_state_dict(partial.state_dict())
        for batch in batches[1:]:
            restored.update(*batch)
        torch.testing.assert_close(restored.compute(), one_pass)
        assert restored.signature() == whole.signature() and "impl:torchmetrics-1.9.0" in whole.signature()


def test_states_and_attributes_as_torchmetrics_modules():
    """The states Lightning, ``MetricCollection`` and old checkpoints see: names, defaults, reductions."""
    import torchmetrics

    for task, options, _ in _module_cases():
        for stat in STATS:
            for extra in ({}, {"multidim_average": "samplewise"}, {"average": "micro"} if task != "binary" else {}):
                ours = getattr(C, f"{task.capitalize()}{STATS[stat]}")(**options, **extra)
                theirs = getattr(tmc, f"{task.capitalize()}{STATS[stat]}")(**options, **extra)
                assert isinstance(ours, torchmetrics.Metric) and not isinstance(ours, type(theirs))
                assert set(ours._defaults) == set(theirs._defaults) == {"tp", "fp", "tn", "fn"}
                for name, default in theirs._defaults.items():
                    mine = ours._defaults[name]
                    assert type(mine) is type(default)
                    if isinstance(default, torch.Tensor):
                        assert mine.dtype == default.dtype and mine.shape == default.shape
                    assert ours._reductions[name].__name__ == theirs._reductions[name].__name__
                for attribute in ("higher_is_better", "is_differentiable", "full_state_update", "plot_lower_bound",
                                  "plot_upper_bound", "plot_legend_name", "multidim_average", "ignore_index",
                                  "validate_args", "zero_division", "threshold", "num_classes", "num_labels",
                                  "top_k", "average", "beta"):
                    assert getattr(ours, attribute, "-") == getattr(theirs, attribute, "-"), attribute


def test_metric_collection_computes_each_module():
    from torchmetrics import MetricCollection

    g = torch.Generator().manual_seed(3)
    preds, target = torch.randn(20, 4, generator=g), torch.randint(0, 4, (20,), generator=g)
    collection = MetricCollection({stat: getattr(C, f"Multiclass{STATS[stat]}")(num_classes=4) for stat in STATS})
    collection.update(preds[:7], target[:7])
    collection.update(preds[7:], target[7:])
    for stat, value in collection.compute().items():
        torch.testing.assert_close(value, getattr(C, f"multiclass_{FUNCTIONS[stat]}")(preds, target, num_classes=4))


@pytest.mark.ddp
def test_samplewise_and_binary_modules_under_ddp_equal_one_process():
    """``cat`` states (samplewise rows, uneven per rank) and binary ``[1]`` sums through the full harness: module =
    function = torchmetrics, forward, merge, checkpoints, pickling and a 2-process gloo run."""
    from tests.helpers.harness import check_metric

    g = torch.Generator().manual_seed(5)
    batches = [(torch.rand(n, 3, 2, generator=g), torch.randint(0, 2, (n, 3, 2), generator=g)) for n in (3, 1, 4, 2)]
    kwargs = {"num_labels": 3, "average": "macro", "multidim_average": "samplewise", "zero_division": 1}
    check_metric(C.MultilabelF1Score, C.multilabel_f1_score,
                 lambda preds, target: tmf.multilabel_f1_score(preds, target, **kwargs), batches,
                 metric_kwargs=kwargs, atol=ATOL)
    batches = [(torch.randn(n, generator=g), torch.randint(0, 2, (n,), generator=g)) for n in (5, 1, 7, 2)]
    for batch in batches:
        batch[0][0] = 3.0  # logits in every batch
    check_metric(C.BinaryRecall, C.binary_recall, lambda preds, target: tmf.binary_recall(preds, target), batches,
                 atol=ATOL)


def test_unchecked_inputs_never_index_out_of_range():
    """With ``validate_args=False`` nothing reads the labels' range: binary / multilabel labels outside {0, 1} count
    wrong as torchmetrics counts them, a batch with a NaN score is read as logits (not every value lies in [0, 1]),
    and multiclass labels outside [0, C) never index a count (a device-side assert on CUDA): such a prediction is
    wrong, such a target not scored."""
    preds, target = torch.tensor([2, 2, -1, 1, 0]), torch.tensor([0, 1, 1, 1, 0])
    scores = torch.tensor([float("nan"), 0.7, 0.2, 0.9, 0.4])
    for stat in STATS:
        for p in (preds, scores):
            ours = getattr(C, f"binary_{FUNCTIONS[stat]}")(p, target, validate_args=False)
            _close(ours, getattr(tmf, f"binary_{FUNCTIONS[stat]}")(p, target, validate_args=False), stat)
    labels, classes = torch.tensor([0, 5, -2, 1, 2]), torch.tensor([0, 1, 2, 7, 2])
    assert C.multiclass_recall(labels, classes, 3, average="none", validate_args=False).tolist() == [1.0, 0.0, 0.5]
    assert C.multiclass_precision(labels, classes, 3, average="none", validate_args=False).tolist() == [1.0, 0.0, 1.0]
    metric = C.MulticlassF1Score(3, average="micro", validate_args=False)
    metric.update(labels, classes)
    assert float(metric.compute()) == pytest.approx(0.5)  # 2 of the 4 scored samples right

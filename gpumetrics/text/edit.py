"""Edit-distance metrics (docs/metrics.md §1): edit distance, CER, WER and 1 − NED (normalised edit similarity).

All four share one step: the Levenshtein distance of every (prediction, reference) pair, computed by
:func:`gpumetrics.kernels.levenshtein.levenshtein_strings` with ``backend``:

* ``"torch"`` — the batched bit-parallel tensor kernel on the metric's device (the module's ``device``, or the
  function's ``device`` argument);
* ``"rapidfuzz"`` — rapidfuzz's C++ ``Levenshtein.distance`` mapped over the pairs on one CPU thread, result moved
  to the device;
* ``"auto"`` (default) — the tensor kernel when the device is not the CPU, rapidfuzz on CPU.

Units: ``"char"`` compares Unicode code points of the raw strings (a combining mark is its own symbol, as in
rapidfuzz, jiwer and torchmetrics); ``"word"`` compares ``str.split()`` tokens (any run of whitespace separates).

Conventions:

* **CER / WER** are pooled: Σ edits / Σ reference length, as jiwer ``cer``/``wer`` and torchmetrics. By default
  CER uses no transform (torchmetrics; jiwer with ``ReduceToListOfListOfChars()`` only) and WER splits on any
  whitespace (torchmetrics, ``str.split()``). ``transform="jiwer"`` reproduces jiwer's default transforms instead:
  CER strips leading/trailing whitespace; WER collapses runs of ≥ 2 whitespace characters, strips and splits on
  spaces, so a lone tab, newline or NBSP stays inside a word. When the pooled reference length is 0 the rate is the
  pooled edit count (jiwer's convention), never NaN.
* **Normalised edit similarity** per sample is ``1 − lev(p, g) / max(|p|, |g|)``, max over the sample's gold
  strings, mean over samples. Preset ``default``: both empty → 1. Preset ``aij2022`` (AIJ-2022 "Text Recognition in
  the Wild"): either string empty → 0 (even both); a missing prediction is passed as ``""`` and so scores 0.
"""

from __future__ import annotations

import re
from typing import Any, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core import (
    REDUCTIONS, Metric, PerSampleScore, as_reference_lists, as_text_list, check_choice, check_device,
    check_same_length, gc_paused, reduce_scores, single_threaded,
)
from gpumetrics.kernels.levenshtein import BACKENDS, levenshtein_strings

UNITS = ("char", "word")
CER_TRANSFORMS = ("none", "jiwer")
WER_TRANSFORMS = ("whitespace", "jiwer")
NED_PRESETS = ("default", "aij2022")

__all__ = [
    "EditDistance",
    "CharErrorRate",
    "WordErrorRate",
    "NormalizedEditSimilarity",
    "edit_distance",
    "char_error_rate",
    "word_error_rate",
    "normalized_edit_similarity",
]


# ------------------------------------------------------------------------------------------------------ shared step
def _pair_distances(
    preds: Sequence[str],
    target: Sequence[str],
    unit: str,
    backend: str,
    device: Optional[torch.device | str],
    lengths: bool = True,
    transform: str = "none",
) -> tuple[Tensor, ...]:
    """Distances, and unless ``lengths=False`` prediction and reference lengths (``LongTensor[B]``, on ``device``).

    ``preds`` and ``target`` are lists of equal length whose items are not checked yet (see :func:`_as_lists`).
    ``transform="jiwer"`` applies jiwer's default ``cer`` (strip) or ``wer`` transform (see :func:`_jiwer_words`).
    """
    device = check_device(device, "device")
    check = None
    if unit == "word":
        _check_items(preds, target)
        split = _jiwer_words if transform == "jiwer" else str.split
        a: Sequence = list(map(split, preds))
        b: Sequence = list(map(split, target))
    elif transform == "jiwer":
        _check_items(preds, target)
        a, b = list(map(str.strip, preds)), list(map(str.strip, target))
    else:
        a, b, check = preds, target, _check_items
    distances = levenshtein_strings(a, b, backend=backend, device=device, check=check)
    if not lengths:
        return (distances,)
    lengths_a = torch.from_numpy(np.fromiter(map(len, a), dtype=np.int64, count=len(a))).to(distances.device)
    lengths_b = torch.from_numpy(np.fromiter(map(len, b), dtype=np.int64, count=len(b))).to(distances.device)
    return distances, lengths_a, lengths_b


_RUNS_OF_WHITESPACE = re.compile(r"\s\s+")


def _jiwer_words(text: str) -> list[str]:
    """jiwer's default ``wer`` transform: runs of ≥ 2 whitespace characters → one space, strip, split on spaces.

    A lone tab, newline, NBSP … between two words is therefore part of one word (``"a\tb"`` is one word), unlike
    ``str.split()``.
    """
    text = _RUNS_OF_WHITESPACE.sub(" ", text).strip()
    return text.split(" ") if text else []


def _as_lists(preds: Any, target: Any) -> tuple[list, list]:
    """Two batches as lists of equal length; a list is taken as is, its items are checked by ``_check_items``."""
    preds = preds if type(preds) is list else as_text_list(preds, "preds")
    target = target if type(target) is list else as_text_list(target, "target")
    check_same_length(preds, "preds", target, "target")
    return preds, target


def _check_items(preds: Sequence, target: Sequence) -> None:
    """TypeError naming the first non-string item."""
    for name, items in (("preds", preds), ("target", target)):
        if items and set(map(type, items)) != {str}:  # the common case is checked at C speed
            for i, item in enumerate(items):
                if not isinstance(item, str):
                    text = repr(item)
                    raise TypeError(
                        f"`{name}[{i}]` must be a string, got {type(item).__name__} "
                        f"{text[:60]}{'…' if len(text) > 60 else ''}"
                    )


def _check_options(unit: Optional[str] = None, backend: Optional[str] = None, reduction: Optional[str] = None) -> None:
    if unit is not None:
        check_choice(unit, "unit", UNITS)
    if backend is not None:
        check_choice(backend, "backend", BACKENDS)
    if reduction is not None:
        check_choice(reduction, "reduction", REDUCTIONS)


# ---------------------------------------------------------------------------------------------------- edit distance
def _edit_distance_update(
    preds: Any, target: Any, unit: str, backend: str, device: Optional[torch.device | str] = None
) -> Tensor:
    """``LongTensor[B]`` Levenshtein distance of every pair."""
    preds, target = _as_lists(preds, target)
    return _pair_distances(preds, target, unit, backend, device, lengths=False)[0]


@single_threaded
@gc_paused
def edit_distance(
    preds: Any,
    target: Any,
    unit: str = "char",
    backend: str = "auto",
    reduction: str = "mean",
    device: Optional[torch.device | str] = None,
) -> Tensor:
    """Levenshtein distance between predictions and references (unit costs), matching rapidfuzz / torchmetrics.

    Args:
        preds: ``B`` predicted strings (or one string).
        target: ``B`` reference strings.
        unit: ``"char"`` (code points) or ``"word"`` (``str.split()`` tokens).
        backend: ``"auto"``, ``"torch"`` or ``"rapidfuzz"`` (see the module docstring).
        reduction: ``"mean"`` (float64 scalar; 0 for an empty batch), ``"sum"`` (int64 scalar) or ``"none"``.
        device: where the result lives and the tensor kernel runs (CPU by default).

    Returns:
        ``Tensor[]`` for ``mean``/``sum``, ``LongTensor[B]`` for ``none``.

    Raises:
        TypeError: ``preds``/``target`` are not strings.
        ValueError: different numbers of samples, or an unknown option.

    Example:
        >>> edit_distance(["kitten", "flaw"], ["sitting", "lawn"], reduction="none")
        tensor([3, 2])
        >>> edit_distance(["a b c"], ["a c"], unit="word", backend="torch")
        tensor(1., dtype=torch.float64)
    """
    _check_options(unit, backend, reduction)
    return reduce_scores(_edit_distance_update(preds, target, unit, backend, device), reduction)


class EditDistance(PerSampleScore):
    """Levenshtein distance accumulated over batches; see :func:`edit_distance`.

    States (:class:`~gpumetrics.core.PerSampleScore`, integer scores): ``score_sum`` (int64 sum of distances),
    ``count`` (pairs), and the per-pair ``scores`` (``LongTensor``) for ``reduction="none"``, which keeps ``[N]``
    even for one pair.

    Args:
        unit: ``"char"`` or ``"word"``.
        backend: ``"auto"``, ``"torch"`` or ``"rapidfuzz"``.
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.
        kwargs: ``torchmetrics.Metric`` options.

    Example:
        >>> metric = EditDistance()
        >>> metric.update(["kitten"], ["sitting"])
        >>> metric.update(["flaw"], ["lawn"])
        >>> metric.compute()
        tensor(2.5000, dtype=torch.float64)
    """

    signature_name = "edit_distance"
    kernel_threads = 1
    higher_is_better = False
    score_dtype = torch.long

    def __init__(self, unit: str = "char", backend: str = "auto", reduction: str = "mean", **kwargs: Any) -> None:
        _check_options(unit, backend)
        super().__init__(reduction=reduction, **kwargs)
        self.unit, self.backend = unit, backend

    def update(self, preds: Any, target: Any) -> None:
        """Add a batch: ``preds``, ``target`` — ``B`` strings each."""
        self._accumulate(_edit_distance_update(preds, target, self.unit, self.backend, self.device))

    def _signature_fields(self) -> dict[str, Any]:
        return {"unit": self.unit, "reduction": self.reduction}


# ------------------------------------------------------------------------------------------------------ CER and WER
def error_rate_pairs(
    preds: Any,
    target: Any,
    unit: str,
    backend: str,
    device: Optional[torch.device | str] = None,
    transform: str = "none",
) -> tuple[Tensor, Tensor]:
    """Per-sample ``(edits, reference length)`` of a batch, ``LongTensor[B]`` each.

    A sample with several references contributes its best reference: the fewest edits, and among those the longest
    reference (the lowest rate). The choice depends only on the references' contents, never on their order.
    """
    if type(target) is list and set(map(type, target)) == {str}:  # one reference per sample (the common case)
        preds, target = _as_lists(preds, target)
        distances, _, target_lengths = _pair_distances(preds, target, unit, backend, device, transform=transform)
        return distances, target_lengths
    preds = preds if type(preds) is list else as_text_list(preds, "preds")
    references = as_reference_lists(target, "target")
    check_same_length(preds, "preds", references, "target")
    _check_items(preds, [])  # before the pairs are flattened, so an error names the sample's own index
    counts = np.fromiter(map(len, references), dtype=np.int64, count=len(references))
    flat_preds = np.repeat(np.array(preds, dtype=object), counts).tolist() if len(preds) else []
    flat_refs = [ref for group in references for ref in group]
    distances, _, ref_lengths = _pair_distances(flat_preds, flat_refs, unit, backend, device, transform=transform)
    if distances.numel() == 0:
        return distances, ref_lengths
    # one key per (sample, reference) ordered by (edits, −length): the per-sample minimum is the best reference
    span = ref_lengths.max() + 1
    keys = distances * span + (span - 1 - ref_lengths)
    sample = torch.from_numpy(np.repeat(np.arange(len(preds)), counts)).to(keys.device)
    best = torch.zeros(len(preds), dtype=torch.long, device=keys.device)
    best = best.scatter_reduce(0, sample, keys, reduce="amin", include_self=False)
    return best // span, span - 1 - best % span


def error_rate_compute(errors: Tensor, ref_length: Tensor) -> Tensor:
    """Σ edits / Σ reference length; the edit count itself when the references are all empty (jiwer). Elementwise:
    per-sample ``[B]`` tensors give per-sample rates."""
    errors, ref_length = errors.double(), ref_length.double()
    return torch.where(ref_length > 0, errors / ref_length.clamp(min=1), errors)


@single_threaded
@gc_paused
def char_error_rate(
    preds: Any,
    target: Any,
    backend: str = "auto",
    device: Optional[torch.device | str] = None,
    transform: str = "none",
) -> Tensor:
    """Character error rate: pooled character edits / pooled reference characters.

    ``transform="none"`` (default) equals torchmetrics ``char_error_rate`` and jiwer ``cer`` with
    ``ReduceToListOfListOfChars()`` as the only transform; ``transform="jiwer"`` equals jiwer's default ``cer``
    (leading and trailing whitespace stripped from every string first).

    Args:
        preds: ``B`` predicted strings.
        target: ``B`` items, each one reference string or a non-empty list of them (the best reference counts:
            fewest edits, then the longest).
        backend: ``"auto"``, ``"torch"`` or ``"rapidfuzz"``.
        device: where the result lives and the tensor kernel runs.
        transform: ``"none"`` or ``"jiwer"``.

    Returns:
        ``Tensor[]`` float64.

    Raises:
        TypeError: non-string inputs.
        ValueError: different numbers of samples, or an unknown option.

    Example:
        >>> char_error_rate(["this is the prediction", "there is an other sample"],
        ...                 ["this is the reference", "there is another one"])
        tensor(0.3415, dtype=torch.float64)
    """
    _check_options(backend=backend)
    check_choice(transform, "transform", CER_TRANSFORMS)
    edits, lengths = error_rate_pairs(preds, target, "char", backend, device, transform)
    return error_rate_compute(edits.sum(), lengths.sum())


@single_threaded
@gc_paused
def word_error_rate(
    preds: Any,
    target: Any,
    backend: str = "auto",
    device: Optional[torch.device | str] = None,
    transform: str = "whitespace",
) -> Tensor:
    """Word error rate: pooled word edits / pooled reference words.

    ``transform="whitespace"`` (default) splits on any run of whitespace (``str.split()``), as torchmetrics
    ``word_error_rate``; ``transform="jiwer"`` applies jiwer's default ``wer`` transform (runs of ≥ 2 whitespace
    characters → one space, strip, split on ``" "``: a lone tab, newline or NBSP stays inside a word) and equals
    jiwer ``wer`` on any text. The two agree on text whose words are separated by spaces or whitespace runs.

    Args:
        preds: ``B`` predicted strings.
        target: ``B`` items, each one reference string or a non-empty list of them (the best reference counts:
            fewest edits, then the longest).
        backend: ``"auto"``, ``"torch"`` or ``"rapidfuzz"``.
        device: where the result lives and the tensor kernel runs.
        transform: ``"whitespace"`` or ``"jiwer"``.

    Returns:
        ``Tensor[]`` float64.

    Raises:
        TypeError: non-string inputs.
        ValueError: different numbers of samples, or an unknown option.

    Example:
        >>> word_error_rate(["this is the prediction", "there is an other sample"],
        ...                 ["this is the reference", "there is another one"])
        tensor(0.5000, dtype=torch.float64)
    """
    _check_options(backend=backend)
    check_choice(transform, "transform", WER_TRANSFORMS)
    edits, lengths = error_rate_pairs(preds, target, "word", backend, device, transform)
    return error_rate_compute(edits.sum(), lengths.sum())


class _ErrorRate(Metric):
    """CER / WER: a corpus ratio (Σ edits / Σ reference length, as jiwer), not a mean of per-sample scores, so it
    keeps its own two int64 sums ``errors`` and ``ref_length`` instead of :class:`~gpumetrics.core.PerSampleScore`."""

    kernel_threads = 1
    unit = "char"
    transforms: tuple[str, ...] = CER_TRANSFORMS

    def __init__(self, backend: str = "auto", transform: Optional[str] = None, **kwargs: Any) -> None:
        _check_options(backend=backend)
        transform = self.transforms[0] if transform is None else transform
        check_choice(transform, "transform", self.transforms)
        super().__init__(**kwargs)
        self.backend, self.transform = backend, transform
        self.add_state("errors", torch.tensor(0, dtype=torch.long), dist_reduce_fx="sum")
        self.add_state("ref_length", torch.tensor(0, dtype=torch.long), dist_reduce_fx="sum")

    def update(self, preds: Any, target: Any) -> None:
        """Add a batch: ``preds`` — ``B`` strings; ``target`` — ``B`` references or lists of references."""
        edits, lengths = error_rate_pairs(preds, target, self.unit, self.backend, self.device, self.transform)
        self.errors += edits.sum()
        self.ref_length += lengths.sum()

    def compute(self) -> Tensor:
        return error_rate_compute(self.errors, self.ref_length)


class CharErrorRate(_ErrorRate):
    """Character error rate accumulated over batches; see :func:`char_error_rate`.

    Args:
        backend: ``"auto"``, ``"torch"`` or ``"rapidfuzz"``.
        transform: ``"none"`` (default) or ``"jiwer"`` (strip, as jiwer's default ``cer``).
        kwargs: ``torchmetrics.Metric`` options.

    Example:
        >>> metric = CharErrorRate()
        >>> metric.update(["abcd"], ["abce"])
        >>> metric.update(["xy"], ["x"])
        >>> metric.compute()
        tensor(0.4000, dtype=torch.float64)
    """

    signature_name = "cer"
    higher_is_better = False
    unit = "char"
    transforms = CER_TRANSFORMS

    def _signature_fields(self) -> dict[str, Any]:
        return {"unit": "codepoint", "transform": self.transform}


class WordErrorRate(_ErrorRate):
    """Word error rate accumulated over batches; see :func:`word_error_rate`.

    Args:
        backend: ``"auto"``, ``"torch"`` or ``"rapidfuzz"``.
        transform: ``"whitespace"`` (default, ``str.split()``) or ``"jiwer"`` (jiwer's default ``wer`` transform).
        kwargs: ``torchmetrics.Metric`` options.

    Example:
        >>> metric = WordErrorRate()
        >>> metric.update(["a b c"], ["a b d"])
        >>> metric.compute()
        tensor(0.3333, dtype=torch.float64)
    """

    signature_name = "wer"
    higher_is_better = False
    unit = "word"
    transforms = WER_TRANSFORMS

    def _signature_fields(self) -> dict[str, Any]:
        return {"tokenizer": self.transform}


# ------------------------------------------------------------------------------------ normalised edit similarity
def _normalized_edit_similarity_update(
    preds: Any, target: Any, preset: str, backend: str, device: Optional[torch.device | str] = None
) -> Tensor:
    """``DoubleTensor[B]``: per sample, the max over its gold strings of ``1 − lev / max(len)``."""
    preds = as_text_list(preds, "preds")
    golds = as_reference_lists(target, "target")
    check_same_length(preds, "preds", golds, "target")
    counts = np.fromiter(map(len, golds), dtype=np.int64, count=len(golds))
    flat_golds = [gold for group in golds for gold in group]
    flat_preds = np.repeat(np.array(preds, dtype=object), counts).tolist() if len(preds) else []
    distances, pred_lengths, gold_lengths = _pair_distances(flat_preds, flat_golds, "char", backend, device)
    longest = torch.maximum(pred_lengths, gold_lengths)
    similarity = 1.0 - distances.double() / longest.clamp(min=1).double()
    if preset == "aij2022":
        similarity = torch.where((pred_lengths == 0) | (gold_lengths == 0), 0.0, similarity)
    else:
        similarity = torch.where(longest == 0, 1.0, similarity)
    sample = torch.from_numpy(np.repeat(np.arange(len(preds)), counts)).to(similarity.device)
    best = torch.zeros(len(preds), dtype=torch.float64, device=similarity.device)
    return best.scatter_reduce(0, sample, similarity, reduce="amax", include_self=False)


@single_threaded
@gc_paused
def normalized_edit_similarity(
    preds: Any,
    target: Any,
    preset: str = "default",
    backend: str = "auto",
    device: Optional[torch.device | str] = None,
    reduction: str = "mean",
) -> Tensor:
    """1 − NED: mean over samples of ``1 − lev(pred, gold) / max(len(pred), len(gold))``, max over gold strings.

    Args:
        preds: ``B`` predicted strings (a missing prediction is ``""``).
        target: ``B`` items, each one gold string or a non-empty list of gold strings.
        preset: ``"default"`` (both empty → 1) or ``"aij2022"`` (either empty → 0).
        backend: ``"auto"``, ``"torch"`` or ``"rapidfuzz"``.
        device: where the result lives and the tensor kernel runs.
        reduction: ``"mean"`` (default), ``"sum"`` or ``"none"`` (per-sample ``DoubleTensor[B]``).

    Returns:
        ``Tensor[]`` float64 in [0, 1] (0 for an empty batch), or ``[B]`` for ``reduction="none"``.

    Raises:
        TypeError: non-string inputs.
        ValueError: different numbers of samples, a sample without gold strings, or an unknown option.

    Example:
        >>> normalized_edit_similarity(["hello", "", ""], [["help", "hello!"], "", "x"])
        tensor(0.6111, dtype=torch.float64)
        >>> normalized_edit_similarity(["hello", "", ""], [["help", "hello!"], "", "x"], preset="aij2022")
        tensor(0.2778, dtype=torch.float64)
    """
    check_choice(preset, "preset", NED_PRESETS)
    _check_options(backend=backend, reduction=reduction)
    return reduce_scores(_normalized_edit_similarity_update(preds, target, preset, backend, device), reduction)


class NormalizedEditSimilarity(PerSampleScore):
    """1 − NED accumulated over batches; see :func:`normalized_edit_similarity`.

    States (:class:`~gpumetrics.core.PerSampleScore`): ``score_sum`` (float64 sum of per-sample scores), ``count``,
    and ``scores`` for ``reduction="none"``.

    Args:
        preset: ``"default"`` or ``"aij2022"``.
        backend: ``"auto"``, ``"torch"`` or ``"rapidfuzz"``.
        reduction: ``"mean"`` (default), ``"sum"`` or ``"none"``.
        kwargs: ``torchmetrics.Metric`` options.

    Example:
        >>> metric = NormalizedEditSimilarity(preset="aij2022")
        >>> metric.update(["hello"], [["help", "hello!"]])
        >>> metric.update([""], [""])
        >>> metric.compute()
        tensor(0.4167, dtype=torch.float64)
    """

    signature_name = "normalized_edit_similarity"
    kernel_threads = 1
    higher_is_better = True

    def __init__(self, preset: str = "default", backend: str = "auto", reduction: str = "mean", **kwargs: Any) -> None:
        check_choice(preset, "preset", NED_PRESETS)
        _check_options(backend=backend)
        super().__init__(reduction=reduction, **kwargs)
        self.preset, self.backend = preset, backend

    def update(self, preds: Any, target: Any) -> None:
        """Add a batch: ``preds`` — ``B`` strings; ``target`` — ``B`` gold strings or lists of gold strings."""
        self._accumulate(_normalized_edit_similarity_update(preds, target, self.preset, self.backend, self.device))

    def _signature_fields(self) -> dict[str, Any]:
        return {"preset": self.preset, "unit": "codepoint"}

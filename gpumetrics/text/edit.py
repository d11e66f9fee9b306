"""Edit-distance metrics (docs/metrics/edit.md): edit distance, CER, WER and 1 − NED (normalised edit similarity).

All four share one step: the Levenshtein distance of every (prediction, reference) pair, computed by
:func:`gpumetrics.kernels.levenshtein_routes.levenshtein_texts` with ``backend``:

* ``"torch"`` — the batched bit-parallel tensor kernel on the metric's device (the module's ``device``, or the
  function's ``device`` argument);
* ``"rapidfuzz"`` — rapidfuzz's C++ ``Levenshtein.distance`` through its pairwise batch API (``process.cpdist``,
  chunks of 2,048 pairs; a band hint for long pairs; see :func:`~gpumetrics.kernels.host.rapidfuzz_distances`),
  result moved to the device;
* ``"auto"`` (default) — rapidfuzz on CPU; on another device the device kernels (on CUDA the fused Triton kernel of
  :mod:`gpumetrics.kernels.levenshtein_triton` when triton is importable), except for long character pairs that
  rapidfuzz on the free cores scores before the device route would (enough pairs for threads and ≥ 2 free cores):
  those strings are on the host already (result uploaded; :func:`~gpumetrics.kernels.host.host_beats_device_route`).

Inputs: ``B`` strings, or integer **token tensors** on any device (the output of greedy / CTC decoding): padded
``Tensor[B, L]`` whose rows end at ``preds_lengths`` / ``target_lengths`` or at their first ``pad_id`` (full width
when neither is given), or flat :class:`~gpumetrics.kernels.ragged.Ragged` ``(values, offsets)``. Tokens are
compared as symbols (ids), never copied off their device (CPU tensors go to rapidfuzz under ``auto``, as
code-point strings; ``backend="torch"`` keeps the tensor kernel); the result lives on their device. ``preds`` and
``target`` may use different layouts. Host syncs per batch of tokens, independent of the batch size and the lengths:
one on the Triton path (the input checks, read at once); the tensor kernel reads the checks' bounds with the
stripped lengths once and runs one ``unique`` per chunk of ``max_elements`` values (one chunk for usual batches);
flat rows add one read (their lengths), a padded side mixed with a flat one one more.

Units: ``"char"`` compares Unicode code points of the raw strings (a combining mark is its own symbol, as in
rapidfuzz, jiwer and torchmetrics); ``"word"`` compares ``str.split()`` tokens (any run of whitespace separates).

Conventions:

* **CER / WER** with ``reduction="mean"`` (default) are pooled: Σ edits / Σ reference length, as jiwer
  ``cer``/``wer`` and torchmetrics (a corpus rate, not the mean of sample rates); ``reduction="none"`` gives each
  sample's own rate (its edits / its reference length; its edit count when that reference is empty). By default
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
    check_same_length, gc_paused, keep_sample_dim, reduce_scores, single_threaded,
)
from gpumetrics.core.checks import check_holds_data, check_integer_tensor
from gpumetrics.core.positions import sample_error
from gpumetrics.core.transfer import upload
from gpumetrics.kernels.levenshtein_routes import BACKENDS, levenshtein_distance, levenshtein_ragged, levenshtein_texts
from gpumetrics.kernels.ragged import Ragged, segment_ids

UNITS = ("char", "word")
CER_TRANSFORMS = ("none", "jiwer")
WER_TRANSFORMS = ("whitespace", "jiwer")
NED_PRESETS = ("default", "aij2022")
RATE_REDUCTIONS = ("mean", "none")  # "mean" is the pooled corpus rate

__all__ = [
    "Ragged",
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
    :func:`~gpumetrics.kernels.levenshtein_routes.levenshtein_texts` does the rest: ``str.split()`` words (on the device
    off the CPU), word ids over both sides.
    """
    device = check_device(device, "device")
    check: Any = _check_items
    if transform == "jiwer":
        _check_items(preds, target)
        check = None
        if unit == "word":
            preds, target, unit = list(map(_jiwer_words, preds)), list(map(_jiwer_words, target)), "tokens"
        else:
            preds, target = list(map(str.strip, preds)), list(map(str.strip, target))
    distances, lengths_a, lengths_b = levenshtein_texts(preds, target, unit=unit, backend=backend, device=device,
                                                        check=check, lengths=lengths)
    return (distances, lengths_a, lengths_b) if lengths else (distances,)


# ----------------------------------------------------------------------------------------------- token tensors in
def _is_tokens(value: Any) -> bool:
    return isinstance(value, (Tensor, Ragged))


def _check_no_lengths(preds_lengths: Optional[Tensor], target_lengths: Optional[Tensor]) -> None:
    """Strings carry their own lengths: row lengths given with them are a mistake, not something to ignore."""
    for name, lengths in (("preds_lengths", preds_lengths), ("target_lengths", target_lengths)):
        if lengths is not None:
            raise ValueError(f"`{name}` is for padded token tensors; `preds` and `target` here are texts")


def _token_input(
    value: Any, lengths: Optional[Tensor], pad_id: Optional[int], name: str, device: Optional[torch.device | str]
) -> tuple[str, Tensor, Tensor]:
    """``("padded", Tensor[B, L], lengths[B])`` or ``("ragged", values[T], offsets[B + 1])`` on the target device
    (the tokens' own device unless ``device`` is given); no host sync."""
    lengths_name = f"{name}_lengths"
    check_holds_data(lengths, lengths_name)
    if isinstance(value, Ragged):
        if lengths is not None:
            raise ValueError(f"`{lengths_name}` is for padded `{name}`; a Ragged `{name}` has its offsets")
        values, offsets = value
        if not isinstance(values, Tensor) or not isinstance(offsets, Tensor):
            raise TypeError(f"`{name}` Ragged fields must be tensors")
        check_holds_data(values, f"{name}.values")
        check_holds_data(offsets, f"{name}.offsets")
        check_integer_tensor(values, f"{name}.values")
        check_integer_tensor(offsets, f"{name}.offsets")
        # the batch size is read from the offsets before the kernel checks them
        if offsets.dim() != 1 or offsets.shape[0] < 1:
            raise ValueError(f"`{name}.offsets` must be a 1-D tensor of B + 1 offsets, got shape "
                             f"{tuple(offsets.shape)}")
        offsets = offsets.long()  # torch lacks arithmetic on uint16 / uint32 / uint64
        if device is not None:
            values, offsets = upload(values, device), upload(offsets, device)
        return "ragged", values, offsets
    check_holds_data(value, name)
    if value.dim() != 2:
        raise ValueError(f"`{name}` token tensor must be 2-D [B, L] (padded) or a Ragged (flat), got shape "
                         f"{tuple(value.shape)}")
    check_integer_tensor(value, name)
    if device is not None:
        value = upload(value, device)
    batch, width = value.shape
    if lengths is not None:
        if not isinstance(lengths, Tensor):
            raise TypeError(f"`{lengths_name}` must be a 1-D integer tensor, got {type(lengths).__name__}")
        if lengths.dim() != 1 or lengths.shape[0] != batch:
            raise ValueError(f"`{lengths_name}` must be a 1-D tensor of {batch} lengths, got shape "
                             f"{tuple(lengths.shape)}")
        check_integer_tensor(lengths, lengths_name)
        return "padded", value, upload(lengths, value.device).long()
    if pad_id is not None:
        # a row ends at its first pad_id (trailing padding), found without a host sync. The comparison is by value:
        # `value == pad_id` would wrap a pad_id outside the dtype's range (-1 == 255 in uint8), so such a pad_id
        # matches nothing
        pad_id = int(pad_id)
        info = torch.iinfo(value.dtype)
        if info.min <= pad_id <= info.max:
            stop = torch.ones(batch, 1, dtype=torch.bool, device=value.device)
            found = torch.cat([value == pad_id, stop], 1).to(torch.uint8).argmax(1)
            return "padded", value, found.long()
    return "padded", value, torch.full((batch,), width, dtype=torch.long, device=value.device)


def _ragged_from_padded(padded: Tensor, lengths: Tensor, name: str) -> tuple[Tensor, Tensor]:
    """Flat values + offsets of the rows of a padded ``Tensor[B, L]`` (one host sync: the total length, read with
    the lengths' bounds, which must lie in ``[0, L]`` as on the all-padded path)."""
    width = padded.shape[1]
    offsets = torch.zeros(lengths.shape[0] + 1, dtype=torch.long, device=padded.device)
    offsets[1:] = lengths.cumsum(0)
    if lengths.numel() == 0:
        return padded.new_zeros(0), offsets
    total, low, high = torch.stack([offsets[-1], lengths.min(), lengths.max()]).tolist()
    if low < 0 or high > width:
        raise ValueError(f"`{name}_lengths` must lie in [0, {width}] (the padded width), got [{low}, {high}]")
    row = segment_ids(lengths, total)
    column = torch.arange(total, device=padded.device) - offsets[row]
    return padded[row, column], offsets


def _token_distances(
    preds: Any,
    target: Any,
    backend: str,
    pad_id: Optional[int],
    preds_lengths: Optional[Tensor],
    target_lengths: Optional[Tensor],
    device: Optional[torch.device | str],
) -> tuple[Tensor, Tensor, Tensor]:
    """``(distances, pred lengths, target lengths)``, ``LongTensor[B]`` each, of token-tensor inputs."""
    if not (_is_tokens(preds) and _is_tokens(target)):
        raise TypeError("`preds` and `target` must both be strings or both be token tensors (Tensor[B, L] or Ragged)")
    if device is not None:
        device = check_device(device, "device")
    kind_a, a, extra_a = _token_input(preds, preds_lengths, pad_id, "preds", device)
    kind_b, b, extra_b = _token_input(target, target_lengths, pad_id, "target", device)
    if a.device != b.device:
        raise ValueError(f"`preds` and `target` must be on the same device, got {a.device} and {b.device}")
    batch_a = a.shape[0] if kind_a == "padded" else extra_a.shape[0] - 1
    batch_b = b.shape[0] if kind_b == "padded" else extra_b.shape[0] - 1
    if batch_a != batch_b:
        raise ValueError(f"`preds` and `target` must have the same number of samples, got {batch_a} and {batch_b}")
    names = ("preds", "target")
    kernel = backend
    if backend == "torch" and a.device.type != "cpu":  # "torch" means the device kernels: Triton on CUDA
        kernel = "auto"
    if kind_a == kind_b == "padded":
        return levenshtein_distance(a, extra_a, b, extra_b, backend=kernel, names=names), extra_a, extra_b
    if kind_a == "padded":
        a, extra_a = _ragged_from_padded(a, extra_a, "preds")
    if kind_b == "padded":
        b, extra_b = _ragged_from_padded(b, extra_b, "target")
    return levenshtein_ragged(a, extra_a, b, extra_b, backend=kernel, names=names), extra_a.diff(), extra_b.diff()


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
                    raise sample_error(
                        TypeError, name, i,
                        f"must be a string, got {type(item).__name__} {text[:60]}{'…' if len(text) > 60 else ''}"
                    )


def _check_options(unit: Optional[str] = None, backend: Optional[str] = None, reduction: Optional[str] = None) -> None:
    if unit is not None:
        check_choice(unit, "unit", UNITS)
    if backend is not None:
        check_choice(backend, "backend", BACKENDS)
    if reduction is not None:
        check_choice(reduction, "reduction", REDUCTIONS)


def _check_pad_id(pad_id: Optional[int]) -> None:
    if pad_id is not None and (isinstance(pad_id, bool) or not isinstance(pad_id, (int, np.integer))):
        raise TypeError(f"`pad_id` must be an int or None, got {type(pad_id).__name__}")


# ---------------------------------------------------------------------------------------------------- edit distance
def _edit_distance_update(
    preds: Any,
    target: Any,
    unit: str,
    backend: str,
    device: Optional[torch.device | str] = None,
    pad_id: Optional[int] = None,
    preds_lengths: Optional[Tensor] = None,
    target_lengths: Optional[Tensor] = None,
) -> Tensor:
    """``LongTensor[B]`` Levenshtein distance of every pair."""
    if _is_tokens(preds) or _is_tokens(target):
        return _token_distances(preds, target, backend, pad_id, preds_lengths, target_lengths, device)[0]
    _check_no_lengths(preds_lengths, target_lengths)
    preds, target = _as_lists(preds, target)
    return _pair_distances(preds, target, unit, backend, device, lengths=False)[0]


@single_threaded
@gc_paused
def edit_distance(
    preds: Any,
    target: Any,
    *,
    unit: str = "char",
    backend: str = "auto",
    pad_id: Optional[int] = None,
    preds_lengths: Optional[Tensor] = None,
    target_lengths: Optional[Tensor] = None,
    reduction: str = "mean",
    device: Optional[torch.device | str] = None,
) -> Tensor:
    """Levenshtein distance between predictions and references (unit costs), matching rapidfuzz / torchmetrics.

    Args:
        preds: ``B`` predicted strings (or one string), or token ids: ``Tensor[B, L]`` (padded) or
            :class:`~gpumetrics.kernels.ragged.Ragged` (flat).
        target: ``B`` reference strings, or token ids in either layout.
        unit: ``"char"`` (code points) or ``"word"`` (``str.split()`` tokens); token tensors are compared as given.
        backend: ``"auto"``, ``"torch"`` or ``"rapidfuzz"`` (see the module docstring; token tensors: ``"rapidfuzz"``
            only on the CPU).
        pad_id: padded token rows end at their first ``pad_id`` (unless their lengths are given).
        preds_lengths: ``LongTensor[B]`` lengths of padded ``preds`` rows (they take precedence over ``pad_id``).
        target_lengths: ``LongTensor[B]`` lengths of padded ``target`` rows.
        reduction: ``"mean"`` (float64 scalar; 0 for an empty batch), ``"sum"`` (int64 scalar) or ``"none"``.
        device: where the result lives and the device kernels run (CPU by default; token tensors: their device).

    Returns:
        ``Tensor[]`` for ``mean``/``sum``, ``LongTensor[B]`` for ``none``.

    Raises:
        TypeError: ``preds``/``target`` are not strings or integer token tensors.
        ValueError: different numbers of samples, or an unknown option.

    Example:
        >>> edit_distance(["kitten", "flaw"], ["sitting", "lawn"], reduction="none")
        tensor([3, 2])
        >>> edit_distance(["a b c"], ["a c"], unit="word", backend="torch")
        tensor(1., dtype=torch.float64)
        >>> ids = torch.tensor([[5, 6, 7, 0], [8, 0, 0, 0]])  # greedy decoder output, 0 = padding
        >>> edit_distance(ids, torch.tensor([[5, 7, 0], [8, 9, 0]]), pad_id=0, reduction="none")
        tensor([1, 1])
    """
    _check_options(unit, backend, reduction)
    _check_pad_id(pad_id)
    distances = _edit_distance_update(preds, target, unit, backend, device, pad_id, preds_lengths, target_lengths)
    return reduce_scores(distances, reduction)


class EditDistance(PerSampleScore):
    """Levenshtein distance accumulated over batches; see :func:`edit_distance`.

    States (:class:`~gpumetrics.core.PerSampleScore`, integer scores): ``score_sum`` (int64 sum of distances),
    ``count`` (pairs), and the per-pair ``scores`` (``LongTensor``) for ``reduction="none"``, which keeps ``[N]``
    even for one pair.

    Args:
        unit: ``"char"`` or ``"word"``.
        backend: ``"auto"``, ``"torch"`` or ``"rapidfuzz"``.
        pad_id: padded token rows end at their first ``pad_id`` (token-tensor inputs).
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.
        kwargs: the ``Metric`` base options (torchmetrics' names: ``sync_on_compute``, ``dist_sync_fn`` …).

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

    def __init__(
        self,
        unit: str = "char",
        backend: str = "auto",
        pad_id: Optional[int] = None,
        reduction: str = "mean",
        **kwargs: Any,
    ) -> None:
        _check_options(unit, backend)
        _check_pad_id(pad_id)
        super().__init__(reduction=reduction, **kwargs)
        self.unit, self.backend, self.pad_id = unit, backend, pad_id

    def update(
        self, preds: Any, target: Any, preds_lengths: Optional[Tensor] = None, target_lengths: Optional[Tensor] = None
    ) -> None:
        """Add a batch: ``B`` strings each, or token ids (``Tensor[B, L]`` with optional lengths, or ``Ragged``)."""
        self._accumulate(_edit_distance_update(preds, target, self.unit, self.backend, self.device,
                                               self.pad_id, preds_lengths, target_lengths))

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
    pad_id: Optional[int] = None,
    preds_lengths: Optional[Tensor] = None,
    target_lengths: Optional[Tensor] = None,
) -> tuple[Tensor, Tensor]:
    """Per-sample ``(edits, reference length)`` of a batch, ``LongTensor[B]`` each.

    A sample with several references contributes its best reference: the fewest edits, and among those the longest
    reference (the lowest rate). The choice depends only on the references' contents, never on their order. Token
    tensors (one reference per sample) are compared as given (``transform`` does not apply to them).
    """
    if _is_tokens(preds) or _is_tokens(target):
        distances, _, lengths = _token_distances(preds, target, backend, pad_id, preds_lengths, target_lengths, device)
        return distances, lengths
    _check_no_lengths(preds_lengths, target_lengths)
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
    sample = upload(np.repeat(np.arange(len(preds)), counts), keys.device)
    best = torch.zeros(len(preds), dtype=torch.long, device=keys.device)
    best = best.scatter_reduce(0, sample, keys, reduce="amin", include_self=False)
    return best // span, span - 1 - best % span


def error_rate_compute(errors: Tensor, ref_length: Tensor) -> Tensor:
    """Σ edits / Σ reference length; the edit count itself when the references are all empty (jiwer). Elementwise:
    per-sample ``[B]`` tensors give per-sample rates."""
    errors, ref_length = errors.double(), ref_length.double()
    return torch.where(ref_length > 0, errors / ref_length.clamp(min=1), errors)


def _error_rate(
    preds: Any,
    target: Any,
    unit: str,
    backend: str,
    transform: str,
    pad_id: Optional[int],
    preds_lengths: Optional[Tensor],
    target_lengths: Optional[Tensor],
    reduction: str,
    device: Optional[torch.device | str],
) -> Tensor:
    """The one body of :func:`char_error_rate` and :func:`word_error_rate` (options checked by the caller)."""
    check_choice(reduction, "reduction", RATE_REDUCTIONS)
    _check_options(backend=backend)
    _check_pad_id(pad_id)
    edits, lengths = error_rate_pairs(preds, target, unit, backend, device, transform, pad_id, preds_lengths,
                                      target_lengths)
    if reduction == "none":
        return error_rate_compute(edits, lengths)
    return error_rate_compute(edits.sum(), lengths.sum())


@single_threaded
@gc_paused
def char_error_rate(
    preds: Any,
    target: Any,
    *,
    backend: str = "auto",
    transform: str = "none",
    pad_id: Optional[int] = None,
    preds_lengths: Optional[Tensor] = None,
    target_lengths: Optional[Tensor] = None,
    reduction: str = "mean",
    device: Optional[torch.device | str] = None,
) -> Tensor:
    """Character error rate: pooled character edits / pooled reference characters.

    ``transform="none"`` (default) equals torchmetrics ``char_error_rate`` and jiwer ``cer`` with
    ``ReduceToListOfListOfChars()`` as the only transform; ``transform="jiwer"`` equals jiwer's default ``cer``
    (leading and trailing whitespace stripped from every string first).

    Args:
        preds: ``B`` predicted strings, or character ids: ``Tensor[B, L]`` (padded) or ``Ragged`` (flat).
        target: ``B`` items, each one reference string or a non-empty list of them (the best reference counts:
            fewest edits, then the longest), or character ids in either layout.
        backend: ``"auto"``, ``"torch"`` or ``"rapidfuzz"``.
        transform: ``"none"`` or ``"jiwer"`` (strings only).
        pad_id: padded token rows end at their first ``pad_id``.
        preds_lengths: ``LongTensor[B]`` lengths of padded ``preds`` rows.
        target_lengths: ``LongTensor[B]`` lengths of padded ``target`` rows.
        reduction: ``"mean"`` (the pooled corpus rate Σ edits / Σ reference length, not a mean of sample rates) or
            ``"none"`` (``DoubleTensor[B]``, each sample's edits / its reference length).
        device: where the result lives and the device kernels run (token tensors: their device).

    Returns:
        ``Tensor[]`` float64, or ``[B]`` for ``reduction="none"``.

    Raises:
        TypeError: non-string, non-integer-tensor inputs.
        ValueError: different numbers of samples, or an unknown option.

    Example:
        >>> char_error_rate(["this is the prediction", "there is an other sample"],
        ...                 ["this is the reference", "there is another one"])
        tensor(0.3415, dtype=torch.float64)
        >>> char_error_rate(["abcd", "xy"], ["abce", "x"], reduction="none")
        tensor([0.2500, 1.0000], dtype=torch.float64)
    """
    check_choice(transform, "transform", CER_TRANSFORMS)
    return _error_rate(preds, target, "char", backend, transform, pad_id, preds_lengths, target_lengths, reduction,
                       device)


@single_threaded
@gc_paused
def word_error_rate(
    preds: Any,
    target: Any,
    *,
    backend: str = "auto",
    transform: str = "whitespace",
    pad_id: Optional[int] = None,
    preds_lengths: Optional[Tensor] = None,
    target_lengths: Optional[Tensor] = None,
    reduction: str = "mean",
    device: Optional[torch.device | str] = None,
) -> Tensor:
    """Word error rate: pooled word edits / pooled reference words.

    ``transform="whitespace"`` (default) splits on any run of whitespace (``str.split()``), as torchmetrics
    ``word_error_rate``; ``transform="jiwer"`` applies jiwer's default ``wer`` transform (runs of ≥ 2 whitespace
    characters → one space, strip, split on ``" "``: a lone tab, newline or NBSP stays inside a word) and equals
    jiwer ``wer`` on any text. The two agree on text whose words are separated by spaces or whitespace runs.

    Args:
        preds: ``B`` predicted strings, or word ids: ``Tensor[B, L]`` (padded) or ``Ragged`` (flat).
        target: ``B`` items, each one reference string or a non-empty list of them (the best reference counts:
            fewest edits, then the longest), or word ids in either layout.
        backend: ``"auto"``, ``"torch"`` or ``"rapidfuzz"``.
        transform: ``"whitespace"`` or ``"jiwer"`` (strings only).
        pad_id: padded token rows end at their first ``pad_id``.
        preds_lengths: ``LongTensor[B]`` lengths of padded ``preds`` rows.
        target_lengths: ``LongTensor[B]`` lengths of padded ``target`` rows.
        reduction: ``"mean"`` (the pooled corpus rate) or ``"none"`` (each sample's own rate).
        device: where the result lives and the device kernels run (token tensors: their device).

    Returns:
        ``Tensor[]`` float64, or ``[B]`` for ``reduction="none"``.

    Raises:
        TypeError: non-string, non-integer-tensor inputs.
        ValueError: different numbers of samples, or an unknown option.

    Example:
        >>> word_error_rate(["this is the prediction", "there is an other sample"],
        ...                 ["this is the reference", "there is another one"])
        tensor(0.5000, dtype=torch.float64)
    """
    check_choice(transform, "transform", WER_TRANSFORMS)
    return _error_rate(preds, target, "word", backend, transform, pad_id, preds_lengths, target_lengths, reduction,
                       device)


class _ErrorRate(Metric):
    """CER / WER: a corpus ratio (Σ edits / Σ reference length, as jiwer), not a mean of per-sample scores, so it
    keeps its own two int64 sums ``errors`` and ``ref_length`` instead of :class:`~gpumetrics.core.PerSampleScore`;
    ``reduction="none"`` adds the per-sample rates ``scores`` (a list state, gathered at compute)."""

    kernel_threads = 1
    unit = "char"
    transforms: tuple[str, ...] = CER_TRANSFORMS

    def __init__(
        self,
        backend: str = "auto",
        transform: Optional[str] = None,
        pad_id: Optional[int] = None,
        reduction: str = "mean",
        **kwargs: Any,
    ) -> None:
        _check_options(backend=backend)
        _check_pad_id(pad_id)
        check_choice(reduction, "reduction", RATE_REDUCTIONS)
        transform = self.transforms[0] if transform is None else transform
        check_choice(transform, "transform", self.transforms)
        super().__init__(**kwargs)
        self.backend, self.transform, self.pad_id, self.reduction = backend, transform, pad_id, reduction
        self.add_state("errors", torch.tensor(0, dtype=torch.long), dist_reduce_fx="sum")
        self.add_state("ref_length", torch.tensor(0, dtype=torch.long), dist_reduce_fx="sum")
        if reduction == "none":
            self.add_state("scores", [], dist_reduce_fx="cat")

    def update(
        self, preds: Any, target: Any, preds_lengths: Optional[Tensor] = None, target_lengths: Optional[Tensor] = None
    ) -> None:
        """Add a batch: ``preds`` — ``B`` strings or token ids; ``target`` — ``B`` references (or lists of them), or
        token ids."""
        edits, lengths = error_rate_pairs(preds, target, self.unit, self.backend, self.device, self.transform,
                                          self.pad_id, preds_lengths, target_lengths)
        self.errors += edits.sum().to(self.errors.device)
        self.ref_length += lengths.sum().to(self.ref_length.device)
        if self.reduction == "none":
            self.scores.append(error_rate_compute(edits, lengths))

    def compute(self) -> Tensor:
        if self.reduction == "none":
            parts = self.scores if isinstance(self.scores, list) else [self.scores]
            if not parts:
                return torch.zeros(0, dtype=torch.float64, device=self.errors.device)
            return torch.cat([p.reshape(-1) for p in parts]).double()
        return error_rate_compute(self.errors, self.ref_length)

    def _finish_compute(self, value: Any) -> Any:
        return keep_sample_dim(value, self.reduction)


class CharErrorRate(_ErrorRate):
    """Character error rate accumulated over batches; see :func:`char_error_rate`.

    Args:
        backend: ``"auto"``, ``"torch"`` or ``"rapidfuzz"``.
        transform: ``"none"`` (default) or ``"jiwer"`` (strip, as jiwer's default ``cer``).
        pad_id: padded token rows end at their first ``pad_id`` (token-tensor inputs).
        reduction: ``"mean"`` (pooled corpus rate, default) or ``"none"`` (per-sample rates).
        kwargs: the ``Metric`` base options (torchmetrics' names: ``sync_on_compute``, ``dist_sync_fn`` …).

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
        fields = {"unit": "codepoint", "transform": self.transform}
        if self.reduction != "mean":
            fields["reduction"] = self.reduction
        return fields


class WordErrorRate(_ErrorRate):
    """Word error rate accumulated over batches; see :func:`word_error_rate`.

    Args:
        backend: ``"auto"``, ``"torch"`` or ``"rapidfuzz"``.
        transform: ``"whitespace"`` (default, ``str.split()``) or ``"jiwer"`` (jiwer's default ``wer`` transform).
        pad_id: padded token rows end at their first ``pad_id`` (token-tensor inputs).
        reduction: ``"mean"`` (pooled corpus rate, default) or ``"none"`` (per-sample rates).
        kwargs: the ``Metric`` base options (torchmetrics' names: ``sync_on_compute``, ``dist_sync_fn`` …).

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
        fields = {"tokenizer": self.transform}
        if self.reduction != "mean":
            fields["reduction"] = self.reduction
        return fields


# ------------------------------------------------------------------------------------ normalised edit similarity
def _normalized_edit_similarity_update(
    preds: Any,
    target: Any,
    preset: str,
    backend: str,
    device: Optional[torch.device | str] = None,
    pad_id: Optional[int] = None,
    preds_lengths: Optional[Tensor] = None,
    target_lengths: Optional[Tensor] = None,
) -> Tensor:
    """``DoubleTensor[B]``: per sample, the max over its gold strings of ``1 − lev / max(len)``."""
    if _is_tokens(preds) or _is_tokens(target):
        distances, pred_lengths, gold_lengths = _token_distances(preds, target, backend, pad_id, preds_lengths,
                                                                 target_lengths, device)
        return _similarity(distances, pred_lengths, gold_lengths, preset)
    _check_no_lengths(preds_lengths, target_lengths)
    preds = as_text_list(preds, "preds")
    golds = as_reference_lists(target, "target")
    check_same_length(preds, "preds", golds, "target")
    counts = np.fromiter(map(len, golds), dtype=np.int64, count=len(golds))
    flat_golds = [gold for group in golds for gold in group]
    flat_preds = np.repeat(np.array(preds, dtype=object), counts).tolist() if len(preds) else []
    distances, pred_lengths, gold_lengths = _pair_distances(flat_preds, flat_golds, "char", backend, device)
    similarity = _similarity(distances, pred_lengths, gold_lengths, preset)
    sample = upload(np.repeat(np.arange(len(preds)), counts), similarity.device)
    best = torch.zeros(len(preds), dtype=torch.float64, device=similarity.device)
    return best.scatter_reduce(0, sample, similarity, reduce="amax", include_self=False)


def _similarity(distances: Tensor, pred_lengths: Tensor, gold_lengths: Tensor, preset: str) -> Tensor:
    longest = torch.maximum(pred_lengths, gold_lengths)
    similarity = 1.0 - distances.double() / longest.clamp(min=1).double()
    if preset == "aij2022":
        return torch.where((pred_lengths == 0) | (gold_lengths == 0), 0.0, similarity)
    return torch.where(longest == 0, 1.0, similarity)


@single_threaded
@gc_paused
def normalized_edit_similarity(
    preds: Any,
    target: Any,
    *,
    preset: str = "default",
    backend: str = "auto",
    pad_id: Optional[int] = None,
    preds_lengths: Optional[Tensor] = None,
    target_lengths: Optional[Tensor] = None,
    reduction: str = "mean",
    device: Optional[torch.device | str] = None,
) -> Tensor:
    """1 − NED: mean over samples of ``1 − lev(pred, gold) / max(len(pred), len(gold))``, max over gold strings.

    Args:
        preds: ``B`` predicted strings (a missing prediction is ``""``), or token ids: ``Tensor[B, L]`` (padded) or
            ``Ragged`` (flat).
        target: ``B`` items, each one gold string or a non-empty list of gold strings, or token ids (one gold each).
        preset: ``"default"`` (both empty → 1) or ``"aij2022"`` (either empty → 0).
        backend: ``"auto"``, ``"torch"`` or ``"rapidfuzz"``.
        pad_id: padded token rows end at their first ``pad_id``.
        preds_lengths: ``LongTensor[B]`` lengths of padded ``preds`` rows.
        target_lengths: ``LongTensor[B]`` lengths of padded ``target`` rows.
        reduction: ``"mean"`` (default), ``"sum"`` or ``"none"`` (per-sample ``DoubleTensor[B]``).
        device: where the result lives and the device kernels run (token tensors: their device).

    Returns:
        ``Tensor[]`` float64 in [0, 1] (0 for an empty batch), or ``[B]`` for ``reduction="none"``.

    Raises:
        TypeError: non-string, non-integer-tensor inputs.
        ValueError: different numbers of samples, a sample without gold strings, or an unknown option.

    Example:
        >>> normalized_edit_similarity(["hello", "", ""], [["help", "hello!"], "", "x"])
        tensor(0.6111, dtype=torch.float64)
        >>> normalized_edit_similarity(["hello", "", ""], [["help", "hello!"], "", "x"], preset="aij2022")
        tensor(0.2778, dtype=torch.float64)
    """
    check_choice(preset, "preset", NED_PRESETS)
    _check_options(backend=backend, reduction=reduction)
    _check_pad_id(pad_id)
    scores = _normalized_edit_similarity_update(preds, target, preset, backend, device, pad_id, preds_lengths,
                                                target_lengths)
    return reduce_scores(scores, reduction)


class NormalizedEditSimilarity(PerSampleScore):
    """1 − NED accumulated over batches; see :func:`normalized_edit_similarity`.

    States (:class:`~gpumetrics.core.PerSampleScore`): ``score_sum`` (float64 sum of per-sample scores), ``count``,
    and ``scores`` for ``reduction="none"``.

    Args:
        preset: ``"default"`` or ``"aij2022"``.
        backend: ``"auto"``, ``"torch"`` or ``"rapidfuzz"``.
        pad_id: padded token rows end at their first ``pad_id`` (token-tensor inputs).
        reduction: ``"mean"`` (default), ``"sum"`` or ``"none"``.
        kwargs: the ``Metric`` base options (torchmetrics' names: ``sync_on_compute``, ``dist_sync_fn`` …).

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

    def __init__(
        self,
        preset: str = "default",
        backend: str = "auto",
        pad_id: Optional[int] = None,
        reduction: str = "mean",
        **kwargs: Any,
    ) -> None:
        check_choice(preset, "preset", NED_PRESETS)
        _check_options(backend=backend)
        _check_pad_id(pad_id)
        super().__init__(reduction=reduction, **kwargs)
        self.preset, self.backend, self.pad_id = preset, backend, pad_id

    def update(
        self, preds: Any, target: Any, preds_lengths: Optional[Tensor] = None, target_lengths: Optional[Tensor] = None
    ) -> None:
        """Add a batch: ``preds`` — ``B`` strings or token ids; ``target`` — ``B`` gold strings or lists of gold
        strings, or token ids."""
        self._accumulate(_normalized_edit_similarity_update(preds, target, self.preset, self.backend, self.device,
                                                            self.pad_id, preds_lengths, target_lengths))

    def _signature_fields(self) -> dict[str, Any]:
        return {"preset": self.preset, "unit": "codepoint"}

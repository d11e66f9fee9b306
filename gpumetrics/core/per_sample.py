"""Per-sample scores: one state set, one reduction rule and one output shape for every metric that scores samples.

A per-sample metric (token F1, exact match, edit distance, 1 − NED, ROUGE, sentence BLEU, CLIP score …) turns a
batch of ``B`` samples into ``scores: Tensor[B]`` (or ``Tensor[B, *score_shape]``, e.g. ROUGE's ``[B, K, 3]``) and
reduces them with ``reduction``:

============  ============================================  =====================================================
reduction     result                                        nothing scored
============  ============================================  =====================================================
``"mean"``    ``score_sum / count``, float64, ``[*S]``      0 (never NaN)
``"sum"``     ``score_sum``, the score dtype, ``[*S]``      0
``"none"``    every score in update order, ``[N, *S]``      an empty ``[0, *S]`` tensor
============  ============================================  =====================================================

``S`` is the metric's ``score_shape`` (``()`` for most). **One-sample rule:** ``"none"`` keeps the sample dimension
even when ``N = 1`` (``tensor([3])``, not ``tensor(3)``): torchmetrics squeezes every one-element result of
``compute``/``forward`` to a 0-d tensor, and :class:`PerSampleScore` undoes that squeeze in one place, so a loop that
indexes or concatenates per-sample results never meets a special case. ``"mean"``/``"sum"`` are always ``[*S]``.
The function :func:`reduce_scores` applies the same rule to one batch, so ``x_score(..., reduction=r)`` equals the
module fed the same samples, for every ``r``, shape and dtype included.

States (all additive, one all-reduce each under DDP): ``score_sum`` (``score_dtype``, float64 unless a metric's
scores are integers, as edit distances are), ``count`` (int64 samples) and, only for ``reduction="none"``, ``scores``
(a ``cat`` state gathered in rank order; ``merge_state`` keeps update order, see :class:`gpumetrics.core.Metric`).

Why a base class and not a mixin: every adopting metric is a plain ``Metric`` whose update ends in
``self._accumulate(scores)``; a metric with a structured output (ROUGE's dict of keys) maps ``super().compute()``
— the reduced ``[..., K, 3]`` tensor — to its structure, and BLEU's corpus mode is one more entry of
``reductions`` that BLEU handles itself before deferring to the base (its corpus states sit next to the base's).
Corpus-level ratios (CER/WER: Σ edits / Σ reference length; CIDEr: document frequency over the corpus) are not
per-sample means and keep their own states.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Optional, Sequence

import torch
from torch import Tensor

from gpumetrics.core.distributed import dim_zero_cat
from gpumetrics.core.checks import check_choice
from gpumetrics.core.metric import Metric
from gpumetrics.core.signature import format_signature

REDUCTIONS = ("mean", "sum", "none")


def mean_score(score_sum: Tensor, count: Tensor) -> Tensor:
    """``score_sum / count`` in float64; 0 (never NaN) where ``count`` is 0. No host synchronisation.

    Example:
        >>> mean_score(torch.tensor(3.0), torch.tensor(2)), mean_score(torch.tensor(0), torch.tensor(0))
        (tensor(1.5000, dtype=torch.float64), tensor(0., dtype=torch.float64))
    """
    score_sum = score_sum.double()
    return torch.where(count > 0, score_sum / count.clamp_min(1), torch.zeros_like(score_sum))


def reduce_scores(scores: Tensor, reduction: str, empty_error: Optional[str] = None) -> Tensor:
    """The functional twin of :class:`PerSampleScore`: reduce one batch of per-sample scores.

    Args:
        scores: ``Tensor[B, *S]`` per-sample scores.
        reduction: ``"mean"`` (float64 ``[*S]``, 0 when ``B = 0``), ``"sum"`` (``[*S]``, dtype kept) or ``"none"``
            (``scores`` itself, ``[B, *S]`` even when ``B = 1``).
        empty_error: a metric that is undefined without samples (CLIP score) passes its message: ``B = 0`` then
            raises ``ValueError(empty_error)`` for every reduction.

    Returns:
        The reduced tensor, as the module's ``compute()`` returns it.

    Raises:
        ValueError: unknown ``reduction`` (the message names the argument), or no sample and ``empty_error``.

    Example:
        >>> scores = torch.tensor([1.0, 0.0, 0.5], dtype=torch.float64)
        >>> reduce_scores(scores, "mean"), reduce_scores(scores, "sum"), reduce_scores(scores[:1], "none")
        (tensor(0.5000, dtype=torch.float64), tensor(1.5000, dtype=torch.float64), tensor([1.], dtype=torch.float64))
        >>> reduce_scores(scores, "max")
        Traceback (most recent call last):
        ...
        ValueError: `reduction` must be one of 'mean', 'sum', 'none'; got 'max'
    """
    check_choice(reduction, "reduction", REDUCTIONS)
    if empty_error is not None and scores.shape[0] == 0:
        raise ValueError(empty_error)
    if reduction == "none":
        return scores
    total = scores.sum(0)
    if reduction == "sum":
        return total
    return mean_score(total, torch.full((), scores.shape[0], dtype=torch.long, device=scores.device))  # no upload


class PerSampleScore(Metric):
    """Base of every module that reduces per-sample scores (see the module docstring for the rule).

    A subclass computes ``scores: Tensor[B, *score_shape]`` in ``update`` and calls ``self._accumulate(scores)``;
    ``compute`` (inherited) returns ``mean``/``sum``/``none`` as :func:`reduce_scores` does on all samples at once.

    Class attributes a subclass may set:
        reductions: accepted ``reduction`` values (default ``("mean", "sum", "none")``; BLEU adds ``"corpus"`` and
            handles it itself).
        score_dtype: dtype of ``score_sum`` and of the ``"sum"``/``"none"`` results (default float64; int64 for
            integer scores such as edit distances). ``"mean"`` is always float64.
        empty_error: when set, ``compute`` with no sample raises ``ValueError(empty_error)`` instead of returning 0
            / an empty tensor (CLIP score).

    Args:
        reduction: one of ``reductions``; checked here, once, with an error naming the argument.
        score_shape: shape of one sample's score, ``()`` by default.
        kwargs: the ``Metric`` base options (torchmetrics' names: ``sync_on_compute``, ``dist_sync_fn`` …).

    Example:
        >>> class Length(PerSampleScore):
        ...     def update(self, texts):
        ...         self._accumulate(torch.tensor([len(t) for t in texts], dtype=torch.float64))
        >>> metric = Length(reduction="none")
        >>> metric.update(["abc"])
        >>> metric.compute()  # [N] even for one sample
        tensor([3.], dtype=torch.float64)
        >>> metric.update(["a", ""])
        >>> metric.compute(), metric.count
        (tensor([3., 1., 0.], dtype=torch.float64), tensor(3))
        >>> Length(reduction="median")
        Traceback (most recent call last):
        ...
        ValueError: `reduction` must be one of 'mean', 'sum', 'none'; got 'median'
    """

    reductions: ClassVar[tuple[str, ...]] = REDUCTIONS
    score_dtype: ClassVar[torch.dtype] = torch.float64
    empty_error: ClassVar[Optional[str]] = None

    score_sum: Tensor
    count: Tensor

    def __init__(self, reduction: str = "mean", score_shape: Sequence[int] = (), **kwargs: Any) -> None:
        check_choice(reduction, "reduction", self.reductions)
        super().__init__(**kwargs)
        self.reduction = reduction
        self.score_shape = tuple(int(n) for n in score_shape)
        self.add_state("score_sum", torch.zeros(self.score_shape, dtype=self.score_dtype), dist_reduce_fx="sum")
        self.add_state("count", torch.tensor(0, dtype=torch.long), dist_reduce_fx="sum")
        if reduction == "none":
            self.add_state("scores", [], dist_reduce_fx="cat")

    def _accumulate(self, scores: Tensor) -> None:
        """Add a batch of per-sample scores ``Tensor[B, *score_shape]`` (no host synchronisation)."""
        scores = scores.to(device=self.score_sum.device, dtype=self.score_dtype)
        self.score_sum += scores.sum(0)
        self.count += scores.shape[0]
        if self.reduction == "none":
            self.scores.append(scores)

    def _all_scores(self) -> Tensor:
        """Every accumulated score in update order, ``Tensor[N, *score_shape]`` (``[0, *score_shape]`` if none)."""
        parts = self.scores if isinstance(self.scores, list) else [self.scores]
        # a DDP gather in which every rank was empty hands back a flat empty tensor: reshape restores the layout
        parts = [p.reshape(-1, *self.score_shape) for p in parts]
        if not parts:
            return torch.zeros((0, *self.score_shape), dtype=self.score_dtype, device=self.score_sum.device)
        return dim_zero_cat(parts).to(self.score_dtype)

    def compute(self) -> Tensor:
        """``"mean"``: float64 ``[*S]`` (0 before any sample); ``"sum"``: ``[*S]``; ``"none"``: ``[N, *S]``."""
        if self.empty_error is not None and int(self.count) == 0:
            raise ValueError(self.empty_error)
        if self.reduction == "none":
            return self._all_scores()
        if self.reduction == "sum":
            return self.score_sum
        return mean_score(self.score_sum, self.count)

    def signature(self) -> str:
        """As :meth:`Metric.signature`, with ``reduction:<r>`` added when it is not ``"mean"`` and the metric does
        not name it itself (a sum or the per-sample scores are not comparable with a mean)."""
        fields = dict(self._signature_fields())
        if "reduction" not in fields and self.reduction != "mean":
            fields["reduction"] = self.reduction
        return format_signature(self.signature_name or type(self).__name__, fields)

    def _finish_compute(self, value: Any) -> Any:
        return keep_sample_dim(value, getattr(self, "reduction", None), self.score_shape)


def keep_sample_dim(value: Any, reduction: Optional[str], score_shape: Sequence[int] = ()) -> Any:
    """The one place of the one-sample rule, undoing torchmetrics' squeeze of a module's ``compute()`` result:
    ``none`` → ``[1, *S]`` (``[1]`` for each entry of a mapping), ``mean``/``sum`` → ``[*S]``; other reductions (BLEU's
    corpus score) are left alone. Modules outside :class:`PerSampleScore` with per-sample output (CIDEr) call it from
    their ``_finish_compute``.

    Example:
        >>> keep_sample_dim(torch.tensor(0.5), "none"), keep_sample_dim(torch.tensor(0.5), "mean")
        (tensor([0.5000]), tensor(0.5000))
    """
    if reduction not in REDUCTIONS:
        return value
    if isinstance(value, Tensor):
        if value.numel() != 1:
            return value
        return value.reshape((1, *score_shape) if reduction == "none" else tuple(score_shape))
    if isinstance(value, Mapping) and reduction == "none":
        return {key: v.reshape(1) if isinstance(v, Tensor) and v.dim() == 0 else v for key, v in value.items()}
    return value

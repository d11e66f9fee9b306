"""The gpumetrics ``Metric`` base: a ``torchmetrics.Metric`` with an all-reduce DDP reducer and a signature."""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Optional, Union

import torchmetrics
from torchmetrics.utilities.data import dim_zero_cat
from torchmetrics.utilities.distributed import gather_all_tensors

from gpumetrics.core.distributed import sync_states
from gpumetrics.core.gcpause import gc_paused
from gpumetrics.core.signature import format_signature


class Metric(torchmetrics.Metric):
    """Base class of every gpumetrics module.

    Behaves as a ``torchmetrics.Metric`` (Lightning logging, ``MetricCollection``, ``reset``, ``state_dict``,
    ``merge_state``) with two additions:

    * **DDP reducer** — states registered with ``dist_reduce_fx="sum"`` (or max/min/mean) are synchronised by one
      ``all_reduce`` each instead of torchmetrics' all-gather; ``"cat"`` states are gathered with uneven lengths and
      ranks that saw no data are allowed. ``compute()`` returns the same value on every rank.
    * ``merge_state`` keeps ``cat`` states in call order: ``a.merge_state(b)`` equals updating with a's batches
      then b's (torchmetrics puts the incoming entries first), so per-sample results keep their order.
    * ``update`` runs with Python's cyclic garbage collector paused (``core.gcpause``): text metrics build many
      small lists per batch, and the collector's scans would otherwise cost more than the building.
    * ``signature()`` — a sacrebleu-style string ``name|key:value|...|version:X`` naming everything that makes two
      numbers comparable (mode, preset, tokenizer, weights …). Subclasses list those in ``_signature_fields``.

    Subclasses set ``signature_name`` and override ``_signature_fields``.
    """

    full_state_update: ClassVar[bool] = False
    is_differentiable: ClassVar[bool] = False
    signature_name: ClassVar[str] = ""

    def _wrap_update(self, update: Callable) -> Callable:
        return super()._wrap_update(gc_paused(update))

    def _sync_dist(self, dist_sync_fn: Callable = gather_all_tensors, process_group: Optional[Any] = None) -> None:
        if dist_sync_fn is not gather_all_tensors:  # a user-supplied sync function keeps torchmetrics' semantics
            super()._sync_dist(dist_sync_fn, process_group)
            return
        states = {name: getattr(self, name) for name in self._reductions}
        synced = sync_states(states, self._reductions, gather_all_tensors, process_group or self.process_group)
        for name, value in synced.items():
            setattr(self, name, value)

    def merge_state(self, incoming_state: Union[dict[str, Any], torchmetrics.Metric]) -> None:
        own_entries = {
            name: list(getattr(self, name))
            for name, reduction_fn in self._reductions.items()
            if reduction_fn is dim_zero_cat and isinstance(getattr(self, name), list)
        }
        super().merge_state(incoming_state)  # validates and reduces every state
        incoming = incoming_state.metric_state if isinstance(incoming_state, torchmetrics.Metric) else incoming_state
        for name, local in own_entries.items():
            other = incoming[name]
            setattr(self, name, local + (list(other) if isinstance(other, list) else [other]))

    def _signature_fields(self) -> dict[str, Any]:
        """Ordered ``key → value`` pairs that identify how this metric's number was produced."""
        return {}

    def signature(self) -> str:
        """A sacrebleu-style signature, e.g. ``token_f1|preset:squad|version:0.1.0``."""
        name = self.signature_name or type(self).__name__
        return format_signature(name, self._signature_fields())

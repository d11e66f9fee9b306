"""How the states of metrics combine: across ranks (``Metric.sync`` / ``unsync``, the DDP reducer or a user's
gather function) and between two metrics or two parts of one stream (``Metric.merge_state``, ``forward`` merging
the kept states back in front of the batch's).

The :class:`~gpumetrics.core.metric.Metric` methods of the same names delegate here, the metric as first argument.
Module functions rather than mixin classes: the methods stay defined on ``Metric`` itself, so its method resolution
order, its ``vars()``, the signatures and docstrings Lightning, ``MetricCollection`` and subclasses see, and every
``super()`` call are those of the one class; where a method called another (``self._sync_dist``,
``self._reduce_states``), the function calls it on the metric, so a subclass's override is still reached. This
module never imports ``core/metric.py``: the checks of the ``Metric`` type stay there.

A metric here is anything with what the base class sets up: ``_reductions`` and ``_defaults`` (state name →
reduction, default), the states as attributes, ``metric_state``, ``_update_count``, ``_computed``, ``_cache``,
``_is_synced``, ``process_group``, ``distributed_available_fn``, ``device``, ``dtype``, ``state_signature()`` and
the methods ``_sync_dist``, ``_sync_by_gather``, ``_reduce_states``, ``_keep_first_entries``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import torch
from torch import Tensor

from gpumetrics.core.distributed import (
    check_same_on_all_ranks, dim_zero_cat, dim_zero_max, dim_zero_mean, dim_zero_min, dim_zero_sum, gather_all_tensors,
    replicated, state_layout, sync_states,
)
from gpumetrics.core.metric_state import map_tensors


def sync(metric: Any, dist_sync_fn: Optional[Callable], process_group: Optional[Any], should_sync: bool,
         distributed_available: Optional[Callable]) -> None:
    """``Metric.sync``: the states replaced by their reduction over the ranks, this rank's own kept in ``_cache``."""
    if metric._is_synced and should_sync:
        raise RuntimeError(f"{type(metric).__name__} is already synchronised: call `unsync()` first")
    available = distributed_available or metric.distributed_available_fn
    if not should_sync or not (callable(available) and available()):
        return
    metric._cache = {name: value if isinstance(value, Tensor) else list(value)
                     for name, value in metric.metric_state.items()}
    metric._sync_dist(dist_sync_fn or gather_all_tensors, process_group=process_group)
    metric._is_synced = True


def unsync(metric: Any, should_unsync: bool) -> None:
    """``Metric.unsync``: this rank's own states (kept by :func:`sync`) put back."""
    if not should_unsync:
        return
    if not metric._is_synced or metric._cache is None:
        raise RuntimeError(f"{type(metric).__name__} is not synchronised: there is nothing to unsync")
    for name, value in metric._cache.items():
        setattr(metric, name, value)
    metric._is_synced = False
    metric._cache = None


def sync_dist(metric: Any, dist_sync_fn: Callable, process_group: Optional[Any]) -> None:
    """``Metric._sync_dist``: every state reduced over the ranks of ``process_group`` (the metric's by default) —
    by the DDP reducer of ``core/distributed.py``, or with a user's ``dist_sync_fn`` by torchmetrics' gather."""
    group = process_group or metric.process_group
    if dist_sync_fn is not gather_all_tensors:  # a user-supplied sync function keeps torchmetrics' semantics
        if torch.distributed.is_available() and torch.distributed.is_initialized():  # its own transport otherwise
            check_same_on_all_ranks(metric.state_signature(), type(metric).__name__, group)
        metric._sync_by_gather(dist_sync_fn, group)
        return
    states = {name: getattr(metric, name) for name in metric._reductions}
    # ranks built with other options would add incomparable states into one number, and ranks whose additive
    # states differ in dtype or shape (set_dtype on one rank) would flatten them into buffers that do not match:
    # both are refused on every rank instead of a mixed number or a wait in mismatched collectives
    layout = state_layout(states, metric._reductions)
    check_same_on_all_ranks(metric.state_signature(), type(metric).__name__, group, layout)
    synced = sync_states(states, metric._reductions, gather_all_tensors, group)
    for name, value in synced.items():
        setattr(metric, name, value)


def sync_by_gather(metric: Any, gather: Callable, group: Optional[Any]) -> None:
    """torchmetrics' synchronisation through ``gather(tensor, group=...) -> [every rank's tensor]``: each state
    gathered (a list state concatenated first), the ranks' values stacked (tensors: ``[ranks, *shape]``) or joined
    (lists), then reduced by the state's reduction."""
    for name, reduction_fn in metric._reductions.items():
        value = getattr(metric, name)
        if isinstance(value, list):
            if reduction_fn is dim_zero_cat and len(value) > 1:
                value = [dim_zero_cat(value)]
            elif reduction_fn is dim_zero_cat and not value:
                value = [torch.tensor([], device=metric.device, dtype=metric.dtype)]
            gathered = [item for part in value for item in gather(part, group=group)]
            if not gathered:
                setattr(metric, name, [])
                continue
            setattr(metric, name, reduction_fn(gathered) if reduction_fn is not None else gathered)
        else:
            stacked = torch.stack(gather(value, group=group))
            setattr(metric, name, reduction_fn(stacked) if reduction_fn is not None else stacked)


def reduce_states(metric: Any, incoming_state: dict[str, Any]) -> None:
    """``Metric._reduce_states``: ``incoming_state`` (state name → tensor or list of tensors) reduced with the
    metric's states, incoming first for ``cat`` states (``forward`` hands the accumulated states here, the batch's
    being the metric's)."""
    for name, reduction_fn in metric._reductions.items():
        if name not in incoming_state:
            raise ValueError(f"the incoming state holds no `{name}` (expected the states {list(metric._defaults)})")
        local, incoming = getattr(metric, name), incoming_state[name]
        if reduction_fn is dim_zero_sum:
            reduced = incoming + local
        elif reduction_fn is dim_zero_mean:
            reduced = ((metric._update_count - 1) * incoming + local).float() / metric._update_count
        elif reduction_fn is dim_zero_max:
            reduced = torch.max(incoming, local)
        elif reduction_fn is dim_zero_min:
            reduced = torch.min(incoming, local)
        elif reduction_fn is dim_zero_cat:
            reduced = torch.cat([incoming, local]) if isinstance(incoming, Tensor) else incoming + local
        elif reduction_fn is None:
            reduced = torch.stack([incoming, local]) if isinstance(incoming, Tensor) else [*incoming, *local]
        elif reduction_fn is replicated:
            reduced = _merge_replicated(name, local, incoming)
        else:
            reduced = reduction_fn(torch.stack([incoming, local]))
        setattr(metric, name, reduced)
    metric._keep_first_entries()


def keep_first_entries(metric: Any) -> None:
    """Each list state registered with ``keep_first=k`` cut to its first ``k`` entries."""
    for name, count in vars(metric).get("_kept_first", {}).items():
        entries = getattr(metric, name)
        if isinstance(entries, list) and len(entries) > count:  # a synchronised state is one tensor: kept whole
            setattr(metric, name, entries[:count])


def merge_states(metric: Any, incoming_state: dict[str, Any], incoming_count: Optional[int]) -> None:
    """The mechanics of ``Metric.merge_state`` once the incoming states are accepted: ``incoming_state`` (state
    name → tensor or list of tensors, on any device) added behind the metric's, as if updated after them; the cached
    value dropped; ``incoming_count`` (the other metric's update count, None for a dict of states) added."""
    # states from another device (a metric built on the CPU, or on another GPU) join this metric's there
    incoming = {name: map_tensors(value, lambda tensor: tensor.to(metric.device))
                for name, value in incoming_state.items()}
    own_entries = {
        name: list(getattr(metric, name))
        for name, reduction_fn in metric._reductions.items()
        if reduction_fn is dim_zero_cat and isinstance(getattr(metric, name), list)
    }
    metric._reduce_states(incoming)  # validates and reduces every state
    metric._computed = None
    if incoming_count is not None:
        # as one pass, the merged metric has seen both metrics' updates
        metric._update_count += incoming_count
    for name, local in own_entries.items():  # call order: this metric's entries, then the incoming ones
        other = incoming[name]
        setattr(metric, name, local + (list(other) if isinstance(other, list) else [other]))
    metric._keep_first_entries()


def _merge_replicated(name: str, local: Tensor, incoming: Tensor) -> Tensor:
    """The value two metrics share for a replicated state: an empty one defers to the other; two must agree."""
    if incoming.numel() == 0:
        return local
    incoming = incoming.to(local.device)
    if local.numel() == 0:
        return incoming.clone()
    if local.shape != incoming.shape or not torch.equal(local, incoming):
        raise ValueError(f"cannot merge metrics whose `{name}` differ (a replicated state must be the same in both)")
    return local

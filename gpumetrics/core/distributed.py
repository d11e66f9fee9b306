"""DDP reduction of metric states: one collective per state, sized independently of the world size.

torchmetrics synchronises every state with an all-gather followed by a local reduction, so the traffic of a sum
state grows with the number of ranks. Here additive states (``sum``/``max``/``min``/``mean``) travel through a
single ``all_reduce`` each; ``cat`` states are gathered with their true, possibly different, lengths — a rank that
saw no data contributes an empty tensor whose trailing shape and dtype it learns from the others.
"""

from __future__ import annotations

import hashlib
from typing import Any, Callable, Optional, Sequence

import torch
import torch.distributed as dist
from torch import Tensor

_REDUCE_OPS: Optional[dict] = None


def reduce_ops() -> dict:
    """torchmetrics reduction functions → the all-reduce op that replaces their gather (see :func:`sync_states`).

    Built on first use, so importing this module does not import torchmetrics (whose package init is slow); a
    metric, which needs torchmetrics anyway, reaches it as ``REDUCE_OPS``.
    """
    global _REDUCE_OPS
    if _REDUCE_OPS is None:
        from torchmetrics.utilities.data import dim_zero_max, dim_zero_mean, dim_zero_min, dim_zero_sum

        _REDUCE_OPS = {
            dim_zero_sum: dist.ReduceOp.SUM,
            dim_zero_max: dist.ReduceOp.MAX,
            dim_zero_min: dist.ReduceOp.MIN,
            dim_zero_mean: dist.ReduceOp.SUM,  # divided by the world size afterwards
        }
    return _REDUCE_OPS


def __getattr__(name: str) -> Any:
    if name == "REDUCE_OPS":
        return reduce_ops()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def replicated(stacked: Tensor) -> Tensor:
    """``dist_reduce_fx`` of a state that every rank holds identically (e.g. statistics loaded from a file).

    Such a state is not communicated under DDP (each rank keeps its own copy) and is saved / restored with the
    others; ``Metric.merge_state`` keeps the non-empty value of the two. Called on ``Tensor[k, ...]`` stacked values
    (torchmetrics' custom-reduction contract), it returns the first.
    """
    return stacked[0]


def all_reduce_state(value: Tensor, reduction_fn: Callable, group: Optional[Any] = None) -> Tensor:
    """Reduce an additive state across ranks with one ``all_reduce``.

    Args:
        value: the local state, any shape; identical shape on every rank.
        reduction_fn: one of torchmetrics' ``dim_zero_sum|max|min|mean``.
        group: process group, default group when None.

    Returns:
        A new tensor, same shape and dtype, identical on every rank.
    """
    from torchmetrics.utilities.data import dim_zero_mean

    op = reduce_ops()[reduction_fn]
    reduced = value.clone()
    if reduced.dtype == torch.bool:  # gloo/nccl cannot reduce bool
        reduced = reduced.to(torch.uint8)
    dist.all_reduce(reduced, op=op, group=group)
    if reduction_fn is dim_zero_mean:
        reduced = reduced / dist.get_world_size(group)
    return reduced.to(value.dtype)


def gather_uneven(local: Optional[Tensor], group: Optional[Any] = None) -> Tensor:
    """Concatenate along dim 0 the tensors of all ranks, whose lengths may differ and may be zero.

    Args:
        local: ``Tensor[n_r, *rest]`` of this rank, or None when this rank holds nothing.
        group: process group, default group when None.

    Returns:
        ``Tensor[sum_r n_r, *rest]`` in rank order, identical on every rank; an empty 1-d tensor when every rank
        is empty.
    """
    meta = None if local is None else (tuple(local.shape), str(local.dtype).replace("torch.", ""))
    metas: list = [None] * dist.get_world_size(group)
    dist.all_gather_object(metas, meta, group=group)
    known = [m for m in metas if m is not None]
    if not known:
        return torch.empty(0)
    rest, dtype_name = known[0][0][1:], known[0][1]
    dtype = getattr(torch, dtype_name)
    for shape, other_dtype in known:
        if shape[1:] != rest or other_dtype != dtype_name:
            raise RuntimeError(f"cat state has different trailing shape/dtype across ranks: {metas}")
    device = local.device if local is not None else _collective_device(group)
    if local is None:
        local = torch.empty((0, *rest), dtype=dtype, device=device)
    lengths = [0 if m is None else m[0][0] for m in metas]
    longest = max(lengths)
    padded = torch.zeros((longest, *rest), dtype=dtype, device=device)
    padded[: local.shape[0]] = local
    buffers = [torch.empty_like(padded) for _ in lengths]
    dist.all_gather(buffers, padded, group=group)
    return torch.cat([buf[:n] for buf, n in zip(buffers, lengths)], dim=0)


def check_same_on_all_ranks(text: str, what: str, group: Optional[Any] = None) -> None:
    """Refuse, on every rank, a ``text`` (a metric's state signature) that is not the same on all ranks.

    Costs one ``all_reduce`` of two int64 (MAX of a digest and of its negation: both come back unchanged only when
    every rank holds the same digest); only when they differ are the texts themselves gathered, for the message.
    Every rank takes the same branch, so a mismatch is an error on all ranks and never a hang.

    Args:
        text: this rank's value.
        what: what the value describes, for the message (e.g. ``"TokenF1"``).
        group: process group, default group when None.

    Raises:
        ValueError: naming each rank's value and the ``key:value`` fields that differ.
    """
    digest = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=7).digest(), "big")
    probe = torch.tensor([digest, -digest], dtype=torch.int64, device=_collective_device(group))
    dist.all_reduce(probe, op=dist.ReduceOp.MAX, group=group)
    if int(probe[0]) == digest and int(probe[1]) == -digest:
        return
    texts: list = [None] * dist.get_world_size(group)
    dist.all_gather_object(texts, text, group=group)
    fields = [set(t.split("|")) for t in texts]
    differing = sorted({part.split(":", 1)[0] for f in fields for part in f - set.intersection(*fields)})
    listed = ", ".join(f"rank {rank} `{t}`" for rank, t in enumerate(texts))
    raise ValueError(f"the ranks hold {what} metrics built with different options ({', '.join(differing)}): "
                     f"{listed}; their states cannot be reduced into one number (build the metric with the same "
                     "options on every rank)")


def _collective_device(group: Optional[Any]) -> torch.device:
    backend = dist.get_backend(group)
    if backend == "nccl":
        return torch.device("cuda", torch.cuda.current_device())
    return torch.device("cpu")


def sync_states(
    states: dict[str, Any],
    reductions: dict[str, Optional[Callable]],
    fallback_sync_fn: Callable,
    group: Optional[Any] = None,
) -> dict[str, Any]:
    """Synchronise a metric's states across ranks.

    Args:
        states: state name → local value (a tensor, or a list of tensors for ``cat`` states).
        reductions: state name → torchmetrics reduction function (or a custom callable / None).
        fallback_sync_fn: all-gather function used for states with a custom reduction.
        group: process group.

    Returns:
        state name → synchronised value.
    """
    from torchmetrics.utilities.data import dim_zero_cat

    synced: dict[str, Any] = {}
    ops = reduce_ops()
    for name, reduction_fn in reductions.items():
        value = states[name]
        if reduction_fn is replicated:
            synced[name] = value
        elif reduction_fn in ops and isinstance(value, Tensor):
            synced[name] = all_reduce_state(value, reduction_fn, group)
        elif reduction_fn is dim_zero_cat or (reduction_fn is None and isinstance(value, list)):
            local = _concat_local(value)
            gathered = gather_uneven(local, group)
            synced[name] = [gathered] if isinstance(value, list) else gathered
        else:
            gathered = fallback_sync_fn(value, group=group)
            stacked = torch.stack(gathered)
            synced[name] = reduction_fn(stacked) if reduction_fn is not None else stacked
    return synced


def _concat_local(value: Any) -> Optional[Tensor]:
    if isinstance(value, Tensor):
        return value if value.ndim > 0 else value.reshape(1)
    tensors: Sequence[Tensor] = [v if v.ndim > 0 else v.reshape(1) for v in value]
    if not tensors:
        return None
    return torch.cat(tensors, dim=0)

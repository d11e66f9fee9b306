"""DDP reduction of metric states: few collectives, sized independently of the world size.

torchmetrics synchronises every state with an all-gather followed by a local reduction, so the traffic of a sum
state grows with the number of ranks, and it issues one collective per state. Here additive states
(``sum``/``max``/``min``/``mean``) travel through ONE ``all_reduce`` per reduction op and dtype (the states
flattened into one buffer: FID's six sum states are two collectives); ``cat`` states are gathered with their true,
possibly different, lengths — one object all-gather of every ``cat`` state's shape, then one all-gather per dtype of
those states flattened; a rank that saw no data contributes nothing, its shapes learnt from the others.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any, Callable, Optional, Sequence

import torch
import torch.distributed as dist
from torch import Tensor

def dim_zero_sum(x: Tensor) -> Tensor:
    """``dist_reduce_fx="sum"``: the sum over dim 0 of the ranks' stacked ``Tensor[k, ...]`` values."""
    return torch.sum(x, dim=0)


def dim_zero_mean(x: Tensor) -> Tensor:
    """``dist_reduce_fx="mean"``: the mean over dim 0."""
    return torch.mean(x, dim=0)


def dim_zero_max(x: Tensor) -> Tensor:
    """``dist_reduce_fx="max"``: the maximum over dim 0."""
    return torch.max(x, dim=0).values


def dim_zero_min(x: Tensor) -> Tensor:
    """``dist_reduce_fx="min"``: the minimum over dim 0."""
    return torch.min(x, dim=0).values


def dim_zero_cat(x: Any) -> Tensor:
    """``dist_reduce_fx="cat"``: a tensor, or a list of tensors (0-d ones as one row each), concatenated along dim 0
    (``Tensor[sum n_i, ...]``); an empty list is an error, as in torchmetrics."""
    if isinstance(x, Tensor):
        return x
    x = [y.unsqueeze(0) if y.numel() == 1 and y.ndim == 0 else y for y in x]
    if not x:
        raise ValueError("No samples to concatenate")
    return torch.cat(x, dim=0)


#: the reductions ``add_state`` accepts by name (torchmetrics' names and meaning)
REDUCTIONS_BY_NAME: dict[str, Callable] = {"sum": dim_zero_sum, "mean": dim_zero_mean, "max": dim_zero_max,
                                           "min": dim_zero_min, "cat": dim_zero_cat}

#: reduction function → the all-reduce op that replaces its gather (see :func:`sync_states`)
REDUCE_OPS: dict = {
    dim_zero_sum: dist.ReduceOp.SUM,
    dim_zero_max: dist.ReduceOp.MAX,
    dim_zero_min: dist.ReduceOp.MIN,
    dim_zero_mean: dist.ReduceOp.SUM,  # divided by the world size afterwards
}


def canonical_reduction(fn: Any) -> Any:
    """``fn``, or ours where ``fn`` is one of torchmetrics' ``dim_zero_*`` functions (a subclass written for
    torchmetrics passes them), recognised by name so that torchmetrics need not be imported."""
    if getattr(fn, "__module__", None) == "torchmetrics.utilities.data":
        return REDUCTIONS_BY_NAME.get(getattr(fn, "__name__", "").removeprefix("dim_zero_"), fn)
    return fn


def distributed_available() -> bool:
    """Whether ``torch.distributed`` is available and initialised (a metric then synchronises in ``compute``)."""
    return dist.is_available() and dist.is_initialized()


def gather_all_tensors(result: Tensor, group: Optional[Any] = None) -> list[Tensor]:
    """Every rank's ``result`` (any shape, which may differ across ranks in size but not in dimensions), in rank
    order: one all-gather of the shapes (none for 0-d values), then one of the values flattened
    (:func:`_all_gather_flat`). torchmetrics' ``gather_all_tensors`` contract (a user's ``dist_sync_fn`` may be
    either)."""
    group = dist.group.WORLD if group is None else group
    world = dist.get_world_size(group)
    if result.ndim == 0:
        shapes = [()] * world
    else:
        local_shape = torch.tensor(result.shape, device=result.device)
        every_shape = [torch.zeros_like(local_shape) for _ in range(world)]
        dist.all_gather(every_shape, local_shape, group=group)
        shapes = [tuple(shape) for shape in torch.stack(every_shape).tolist()]
    buffers = _all_gather_flat([result.reshape(-1)], [math.prod(shape) for shape in shapes], group,
                               dtype=result.dtype, device=result.device)
    return [buffer.view(shape) for buffer, shape in zip(buffers, shapes)]


def _all_gather_flat(pieces: Sequence[Tensor], sizes: Sequence[int], group: Optional[Any], *, dtype: torch.dtype,
                     device: torch.device) -> list[Tensor]:
    """Every rank's 1-d ``pieces`` one after the other (``sizes[r]`` values on rank ``r``, known to all ranks), in
    rank order: ONE all-gather of the values padded to the largest size; each part a view of its rank's buffer."""
    flat = torch.zeros(max(sizes), dtype=dtype, device=device)
    if pieces:
        torch.cat(pieces, out=flat[: sum(piece.numel() for piece in pieces)])
    buffers = [torch.empty_like(flat) for _ in sizes]
    dist.all_gather(buffers, flat, group=group)
    return [buffer[:size] for buffer, size in zip(buffers, sizes)]


def replicated(stacked: Tensor) -> Tensor:
    """``dist_reduce_fx`` of a state that every rank holds identically (e.g. statistics loaded from a file).

    Such a state is not communicated under DDP (each rank keeps its own copy) and is saved / restored with the
    others; ``Metric.merge_state`` keeps the non-empty value of the two. Called on ``Tensor[k, ...]`` stacked values
    (torchmetrics' custom-reduction contract), it returns the first.
    """
    return stacked[0]


def additive_states(states: dict[str, Any], reductions: dict[str, Optional[Callable]]) -> list[str]:
    """The states that travel by ``all_reduce`` (:func:`all_reduce_states`): tensors whose reduction is one of
    :data:`REDUCE_OPS`."""
    return [name for name, fn in reductions.items() if fn in REDUCE_OPS and isinstance(states[name], Tensor)]


def state_layout(states: dict[str, Any], reductions: dict[str, Optional[Callable]]) -> str:
    """The dtype and shape of every additive state (``"total=float64[3],count=int64[]"``): what the ranks' buffers of
    :func:`all_reduce_states` are made of, so they must agree (:func:`check_same_on_all_ranks`)."""
    return ",".join(f"{name}={str(states[name].dtype).replace('torch.', '')}{list(states[name].shape)}"
                    for name in additive_states(states, reductions))


def all_reduce_states(values: dict[str, Tensor], reductions: dict[str, Callable],
                      group: Optional[Any] = None) -> dict[str, Tensor]:
    """Reduce additive states across ranks: one ``all_reduce`` per (op, dtype), its states flattened into one
    buffer (the one copy; ``bool`` travels as ``uint8``, which gloo and NCCL can reduce).

    Args:
        values: state name → local state, any shape; identical shapes and dtypes on every rank, in the same order.
        reductions: state name → one of :func:`dim_zero_sum`, ``_max``, ``_min``, ``_mean``.
        group: process group, default group when None.

    Returns:
        state name → a new tensor, same shape and dtype, identical on every rank (views of the reduced buffers).
    """
    buckets: dict[tuple[Any, torch.dtype], list[str]] = {}
    for name, value in values.items():
        wire = torch.uint8 if value.dtype == torch.bool else value.dtype
        buckets.setdefault((REDUCE_OPS[reductions[name]], wire), []).append(name)
    reduced: dict[str, Tensor] = {}
    for (op, wire), names in buckets.items():
        flat = torch.cat([values[name].reshape(-1).to(wire) for name in names])
        dist.all_reduce(flat, op=op, group=group)
        for name, part in zip(names, flat.split([values[name].numel() for name in names])):
            part = part.view(values[name].shape)
            if reductions[name] is dim_zero_mean:
                part = part / dist.get_world_size(group)
            reduced[name] = part.to(values[name].dtype)
    return reduced


def gather_uneven(locals_: dict[str, Optional[Tensor]], group: Optional[Any] = None) -> dict[str, Tensor]:
    """Concatenate along dim 0 each state's tensors of all ranks, whose lengths may differ and may be zero: one
    object all-gather of every state's shape and dtype, then ONE all-gather per dtype of the states of that dtype,
    each rank's flattened one after the other (padded to the longest rank's total).

    Args:
        locals_: state name → ``Tensor[n_r, *rest]`` of this rank, or None when this rank holds nothing.
        group: process group, default group when None.

    Returns:
        state name → ``Tensor[sum_r n_r, *rest]`` in rank order, identical on every rank; an empty 1-d tensor when
        every rank is empty.
    """
    metas = {name: None if local is None else (tuple(local.shape), str(local.dtype).replace("torch.", ""))
             for name, local in locals_.items()}
    every_rank: list = [None] * dist.get_world_size(group)
    dist.all_gather_object(every_rank, metas, group=group)
    gathered: dict[str, Tensor] = {}
    by_dtype: dict[str, list[tuple[str, tuple[int, ...]]]] = {}  # dtype → its states and their trailing shapes
    for name in locals_:
        known = [rank[name] for rank in every_rank if rank[name] is not None]
        if not known:
            gathered[name] = torch.empty(0)
            continue
        rest, dtype_name = known[0][0][1:], known[0][1]
        if any(shape[1:] != rest or other != dtype_name for shape, other in known):
            raise RuntimeError(f"cat state {name!r} has different trailing shape/dtype across ranks: "
                               f"{[rank[name] for rank in every_rank]}")
        by_dtype.setdefault(dtype_name, []).append((name, rest))
    for dtype_name, states in by_dtype.items():
        gathered.update(_gather_flat(locals_, every_rank, states, getattr(torch, dtype_name), group))
    return {name: gathered[name] for name in locals_}


def _gather_flat(locals_: dict[str, Optional[Tensor]], every_rank: list, states: list[tuple[str, tuple[int, ...]]],
                 dtype: torch.dtype, group: Optional[Any]) -> dict[str, Tensor]:
    """The ``cat`` states of one dtype in one all-gather (see :func:`gather_uneven`)."""
    # rows[r][k], sizes[r][k]: how many rows / values rank r holds of state k
    rows = [[rank[name][0][0] if rank[name] is not None else 0 for name, _ in states] for rank in every_rank]
    sizes = [[n * math.prod(rest) for n, (_, rest) in zip(rank_rows, states)] for rank_rows in rows]
    held = [locals_[name].reshape(-1) for name, _ in states if locals_[name] is not None]
    device = held[0].device if held else _collective_device(group)
    buffers = _all_gather_flat(held, [sum(rank_sizes) for rank_sizes in sizes], group, dtype=dtype, device=device)
    result = {}
    for k, (name, rest) in enumerate(states):
        parts = [buffer[sum(rank_sizes[:k]): sum(rank_sizes[:k + 1])].view(rank_rows[k], *rest)
                 for buffer, rank_sizes, rank_rows in zip(buffers, sizes, rows)]
        result[name] = torch.cat(parts, dim=0)
    return result


def check_same_on_all_ranks(text: str, what: str, group: Optional[Any] = None, layout: str = "") -> None:
    """Refuse, on every rank, a ``text`` (a metric's state signature) or a ``layout`` (its additive states' dtypes
    and shapes) that is not the same on all ranks.

    Costs one ``all_reduce`` of two int64 (MAX of a digest and of its negation: both come back unchanged only when
    every rank holds the same digest); only when they differ are the values themselves gathered, for the message.
    Every rank takes the same branch, so a mismatch is an error on all ranks and never a hang.

    Args:
        text: this rank's value.
        what: what the value describes, for the message (e.g. ``"TokenF1"``).
        group: process group, default group when None.
        layout: this rank's state layout, named in the message only where the texts are the same.

    Raises:
        ValueError: naming each rank's value and the ``key:value`` fields that differ (or each rank's layout).
    """
    digest = int.from_bytes(hashlib.blake2b(f"{text}\0{layout}".encode("utf-8"), digest_size=7).digest(), "big")
    probe = torch.tensor([digest, -digest], dtype=torch.int64, device=_collective_device(group))
    dist.all_reduce(probe, op=dist.ReduceOp.MAX, group=group)
    if int(probe[0]) == digest and int(probe[1]) == -digest:
        return
    values: list = [None] * dist.get_world_size(group)
    dist.all_gather_object(values, (text, layout), group=group)
    texts = [t for t, _ in values]
    if len(set(texts)) == 1:
        listed = ", ".join(f"rank {rank} `{state_layout}`" for rank, (_, state_layout) in enumerate(values))
        raise ValueError(f"the ranks hold {what} metrics whose states differ in dtype or shape: {listed}; they cannot "
                         "be reduced into one number (set_dtype on some ranks only?)")
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
        reductions: state name → reduction function (``dim_zero_*``, a custom callable or None).
        fallback_sync_fn: all-gather function used for states with a custom reduction.
        group: process group.

    Returns:
        state name → synchronised value.
    """
    additive = additive_states(states, reductions)
    concatenated = [name for name, fn in reductions.items()
                    if fn is dim_zero_cat or (fn is None and isinstance(states[name], list))]
    synced = all_reduce_states({name: states[name] for name in additive}, reductions, group) if additive else {}
    if concatenated:
        gathered = gather_uneven({name: _concat_local(states[name]) for name in concatenated}, group)
        synced.update({name: [value] if isinstance(states[name], list) else value for name, value in gathered.items()})
    for name, reduction_fn in reductions.items():
        if name in synced:
            continue
        if reduction_fn is replicated:
            synced[name] = states[name]
        else:
            stacked = torch.stack(fallback_sync_fn(states[name], group=group))
            synced[name] = reduction_fn(stacked) if reduction_fn is not None else stacked
    return {name: synced[name] for name in reductions}


def _concat_local(value: Any) -> Optional[Tensor]:
    if isinstance(value, Tensor):
        return value if value.ndim > 0 else value.reshape(1)
    tensors: Sequence[Tensor] = [v if v.ndim > 0 else v.reshape(1) for v in value]
    if not tensors:
        return None
    return torch.cat(tensors, dim=0)

"""One call that checks a metric against its functional form, its reference tool and itself under DDP.

Usage (every metric test does this)::

    check_metric(
        TokenF1, token_f1, squad_v2_f1_reference,
        batches=[(preds_0, target_0), (preds_1, target_1), ...],
        metric_kwargs={"preset": "squad"},
    )

``batches`` is a list of positional-argument tuples for ``update``; the functional form and the reference receive
the concatenation of all batches (lists are concatenated, tensors ``cat``-ed on dim 0).
"""

from __future__ import annotations

import copy
import io
import pickle
from typing import Any, Callable, Optional, Sequence

import torch
from torch import Tensor

from testkit.ddp import run_ddp_scenarios

Batch = tuple


def concat_batches(batches: Sequence[Batch]) -> Batch:
    """Join a list of argument tuples into one tuple: lists concatenated, tensors ``cat``-ed on dim 0."""
    if not batches:
        raise ValueError("`batches` must hold at least one batch")
    joined = []
    for position in range(len(batches[0])):
        parts = [batch[position] for batch in batches]
        if isinstance(parts[0], Tensor):
            joined.append(torch.cat(parts, dim=0))
        elif isinstance(parts[0], (list, tuple)):
            joined.append([item for part in parts for item in part])
        else:
            raise TypeError(f"cannot concatenate batch argument {position} of type {type(parts[0]).__name__}")
    return tuple(joined)


def to_python(value: Any) -> Any:
    """Tensors → floats / nested lists, dicts and sequences recursively; for comparisons and messages."""
    if isinstance(value, Tensor):
        return value.detach().cpu().double().tolist()
    if isinstance(value, dict):
        return {k: to_python(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_python(v) for v in value]
    return float(value) if isinstance(value, (int, float, bool)) else value


def assert_close(actual: Any, expected: Any, atol: float = 1e-9, rtol: float = 0.0, what: str = "value") -> None:
    """Compare two results (tensor, number, dict or list of them) to ``atol + rtol·|expected|``."""
    actual, expected = to_python(actual), to_python(expected)
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{what}: expected a dict, got {actual!r}"
        assert set(actual) == set(expected), f"{what}: keys {sorted(actual)} != {sorted(expected)}"
        for key in expected:
            assert_close(actual[key], expected[key], atol, rtol, f"{what}[{key!r}]")
        return
    if isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{what}: {actual!r} != {expected!r}"
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_close(a, e, atol, rtol, f"{what}[{i}]")
        return
    assert not isinstance(actual, (list, dict)), f"{what}: expected a number, got {actual!r}"
    if expected != expected:  # NaN only equals NaN
        assert actual != actual, f"{what}: expected NaN, got {actual!r}"
        return
    assert abs(actual - expected) <= atol + rtol * abs(expected), f"{what}: got {actual!r}, expected {expected!r}"


def check_metric(
    metric_cls: type,
    functional: Callable,
    reference: Optional[Callable],
    batches: Sequence[Batch],
    metric_kwargs: Optional[dict] = None,
    atol: float = 1e-9,
    rtol: float = 0.0,
    reference_atol: Optional[float] = None,
    check_forward: bool = True,
    ddp: bool = True,
) -> Any:
    """Check module == functional == reference on ``batches``, then forward, merge_state, state_dict, pickle, DDP.

    The state_dict checks are a full-pass round trip and :func:`check_checkpoint`'s mid-stream restore.

    Args:
        metric_cls: the module class; built as ``metric_cls(**metric_kwargs)``.
        functional: ``functional(*args, **metric_kwargs)`` on the concatenation of all batches.
        reference: ``reference(*args)`` on the concatenation, returning the same structure as ``compute()``;
            None when parity is checked elsewhere.
        batches: positional-argument tuples for ``update``; at least 2 so that splits are meaningful.
        metric_kwargs: options given to both module and functional.
        atol, rtol: tolerance between gpumetrics' own code paths.
        reference_atol: tolerance against the reference (default ``atol``).
        check_forward: check that ``forward`` returns the functional value of each batch.
        ddp: also run the 2-process gloo DDP scenarios.

    Returns:
        The single-process ``compute()`` value.
    """
    kwargs = dict(metric_kwargs or {})
    if len(batches) < 2:
        raise ValueError("check_metric needs at least 2 batches")
    joined = concat_batches(batches)

    expected = functional(*joined, **kwargs)
    if reference is not None:
        ref_tol = atol if reference_atol is None else reference_atol
        assert_close(expected, reference(*joined), ref_tol, rtol, "functional vs reference")

    metric = metric_cls(**kwargs)
    for i, batch in enumerate(batches):
        if check_forward:
            assert_close(metric(*batch), functional(*batch, **kwargs), atol, rtol, f"forward on batch {i}")
        else:
            metric.update(*batch)
    accumulated = metric.compute()
    assert_close(accumulated, expected, atol, rtol, "module vs functional")
    assert isinstance(metric.signature(), str) and metric.signature()

    half = len(batches) // 2
    left, right = metric_cls(**kwargs), metric_cls(**kwargs)
    for batch in batches[:half]:
        left.update(*batch)
    for batch in batches[half:]:
        right.update(*batch)
    left.merge_state(right)
    assert_close(left.compute(), expected, atol, rtol, "merge_state")

    metric.persistent(True)
    restored = metric_cls(**kwargs)
    restored.persistent(True)
    restored.load_state_dict(copy.deepcopy(metric.state_dict()))
    assert_close(restored.compute(), expected, atol, rtol, "state_dict round trip")
    check_checkpoint(lambda: metric_cls(**kwargs), batches, expected, atol, rtol)

    assert_close(pickle.loads(pickle.dumps(metric)).compute(), expected, atol, rtol, "pickle round trip")

    metric.reset()
    for batch in batches:
        metric.update(*batch)
    assert_close(metric.compute(), expected, atol, rtol, "after reset")

    if ddp:
        check_ddp(metric_cls, batches, kwargs, expected, atol, rtol)
    return accumulated


def checkpoint_round_trip(state: dict) -> dict:
    """``state`` through ``torch.save`` / ``torch.load(weights_only=True)``, as a user's checkpoint file."""
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


def check_checkpoint(
    make_metric: Callable[[], Any],
    batches: Sequence[Batch],
    expected: Any,
    atol: float = 1e-9,
    rtol: float = 0.0,
    update: Optional[Callable[[Any, Batch], None]] = None,
) -> None:
    """Update half the batches → ``persistent(True)`` → save → fresh metric → load → update the rest == one pass.

    Args:
        make_metric: builds a fresh metric (same options each call).
        batches: argument tuples; the first ``len // 2`` (at least 1) go before the checkpoint.
        expected: the one-pass ``compute()`` value.
        atol, rtol: tolerance.
        update: ``update(metric, batch)``; default ``metric.update(*batch)``.
    """
    update = update or (lambda metric, batch: metric.update(*batch))
    half = max(1, len(batches) // 2)
    first = make_metric()
    for batch in batches[:half]:
        update(first, batch)
    assert not set(first._defaults) & set(first.state_dict()), "states stay out of state_dict by default"
    first.persistent(True)
    state = first.state_dict()
    for name in first._defaults:  # every registered state is saved, as a tensor or a list of tensors
        value = state[name]
        assert isinstance(value, Tensor) or (isinstance(value, list) and all(isinstance(v, Tensor) for v in value)), (
            f"state {name!r} is a {type(value).__name__}"
        )
    state = checkpoint_round_trip(state)

    # a fresh metric restores the checkpoint whether or not it is itself persistent
    for persistent in (False, True):
        restored = make_metric()
        restored.persistent(persistent)
        restored.load_state_dict(copy.deepcopy(state))
        for name, value in restored.metric_state.items():
            own = first.metric_state[name]
            if isinstance(own, Tensor):
                assert isinstance(value, Tensor) and value.dtype == own.dtype and value.device == own.device, name
        assert restored.update_count == first.update_count
        for batch in batches[half:]:
            update(restored, batch)
        assert_close(restored.compute(), expected, atol, rtol, f"mid-stream checkpoint (persistent={persistent})")


def ddp_splits(n_batches: int) -> dict[str, tuple[list[int], list[int]]]:
    """Named ways of dealing ``n_batches`` to 2 ranks: uneven, and one rank with nothing."""
    indices = list(range(n_batches))
    return {
        "uneven": (indices[:1], indices[1:]),
        "empty_rank": (indices, []),
    }


def check_ddp(
    metric_cls: type,
    batches: Sequence[Batch],
    metric_kwargs: dict,
    expected: Any,
    atol: float = 1e-9,
    rtol: float = 0.0,
) -> None:
    """Run the DDP scenarios in 2 spawned gloo processes; every rank's ``compute()`` must equal ``expected``."""
    results = run_ddp_scenarios(metric_cls, list(batches), metric_kwargs, ddp_splits(len(batches)))
    for scenario, per_rank in results.items():
        for rank, value in enumerate(per_rank):
            assert_close(value, expected, atol, rtol, f"DDP {scenario} rank {rank}")

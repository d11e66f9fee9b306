"""Where a metric's states live: checkpoints (``Metric.state_dict`` / ``load_state_dict``) and devices and dtypes
(``Metric._apply``, the ``nn.Module`` hook behind ``.to`` / ``.cuda`` / ``.half`` …, and ``Metric.set_dtype``).

The :class:`~gpumetrics.core.metric.Metric` methods of the same names delegate here, the metric as first argument.
Module functions rather than mixin classes, for the reasons ``core/metric_sync.py`` gives: the methods stay defined
on ``Metric`` (its method resolution order, ``vars()``, signatures and docstrings unchanged), and the ``super()``
calls stay in them — the method hands its parent's bound method (``super()._apply``, ``super().type`` …) to the
function, which calls it where the method body did. This module never imports ``core/metric.py``: the walk over the
``Metric`` modules of a tree stays there.

A metric here is anything with what the base class sets up: ``_defaults`` / ``_reductions`` / ``_persistent``
(state name → default, reduction, whether ``state_dict`` holds it), the states as attributes, ``_update_count``,
``_computed``, ``_forward_cache``, ``_device`` / ``_dtype`` (``device`` / ``dtype``), ``_dtype_convert``,
``state_signature()`` and the method ``_adopt_state``.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Sequence, Union

import torch
from torch import Tensor

from gpumetrics.core.distributed import REDUCE_OPS

_UPDATE_COUNT = "_update_count"
_SIGNATURE = "_signature"


def add_persistent_states(metric: Any, destination: dict[str, Any], prefix: str, keep_vars: bool,
                          tree: Sequence[Any]) -> dict[str, Any]:
    """``Metric.state_dict`` after ``nn.Module``'s: ``destination`` with copies of the metric's persistent states
    under ``prefix + name``, and, when any metric of ``tree`` (the ``Metric`` modules under this one, itself
    included) is persistent, the update count (a 0-d ``long`` tensor) and the state signature (``uint8[bytes]``)."""
    for name in metric._defaults:
        if not metric._persistent[name]:
            continue
        value = getattr(metric, name)
        if not keep_vars:
            value = value.detach() if isinstance(value, Tensor) else [
                item.detach() if isinstance(item, Tensor) else item for item in value]
        destination[prefix + name] = copy.deepcopy(value)
    if any(flag for m in tree for flag in m._persistent.values()):
        # a 0-d tensor, so that ``torch.load(weights_only=True)`` accepts the checkpoint
        destination[prefix + _UPDATE_COUNT] = torch.tensor(metric._update_count, dtype=torch.long)
        destination[prefix + _SIGNATURE] = _encode_signature(metric.state_signature())
    return destination


def load_from_state_dict(metric: Any, parent_load: Callable, state_dict: dict, prefix: str, local_metadata: dict,
                         missing_keys: list[str], unexpected_keys: list[str], error_msgs: list[str]) -> None:
    """``Metric._load_from_state_dict``: the signature checked, the states under ``prefix`` adopted (a bad one
    reported in ``error_msgs``, a missing persistent one in ``missing_keys``), ``parent_load`` (``nn.Module``'s
    hook) run on the rest, then the update count restored and the cached values dropped."""
    signature = state_dict.pop(prefix + _SIGNATURE, None)
    if signature is not None:
        saved, own = _decode_signature(signature, prefix + _SIGNATURE), metric.state_signature()
        if saved != own:
            raise ValueError(f"cannot load the states of a metric `{saved}` into a metric `{own}`: the "
                             "signatures differ, so the numbers are not comparable (build the metric with the "
                             "options the checkpoint was written with)")
    loaded = False
    for name in metric._defaults:
        key = prefix + name
        if key not in state_dict:
            if metric._persistent.get(name, False):  # reported when ``load_state_dict(strict=True)``
                missing_keys.append(key)
            continue
        try:
            setattr(metric, name, metric._adopt_state(name, state_dict.pop(key)))
            loaded = True
        except (TypeError, ValueError) as error:
            error_msgs.append(f"{key}: {error}")
    count = state_dict.pop(prefix + _UPDATE_COUNT, None)
    parent_load(state_dict, prefix, local_metadata, True, missing_keys, unexpected_keys, error_msgs)
    if count is not None:
        metric._update_count = int(count)
    if loaded or count is not None:
        metric._computed = None
        metric._forward_cache = None


def adopt_state(metric: Any, name: str, value: Any) -> Union[Tensor, list[Tensor]]:
    """``Metric._adopt_state``: a copy of a checkpointed state on the metric's device (tensor states keep their
    current dtype; a fixed-size one its shape)."""
    current = getattr(metric, name)
    if isinstance(value, Tensor):
        if isinstance(current, Tensor):
            if metric._reductions[name] in REDUCE_OPS and value.shape != current.shape:
                raise ValueError(f"expected a tensor of shape {tuple(current.shape)}, got {tuple(value.shape)}")
            return value.detach().to(device=current.device, dtype=current.dtype, copy=True)
        return [value.detach().to(device=metric.device, copy=True)]  # a synchronised ``cat`` state
    if isinstance(value, (list, tuple)) and all(isinstance(v, Tensor) for v in value):
        if isinstance(current, Tensor):
            raise TypeError(f"expected a tensor, got a list of {len(value)} tensors")
        return [v.detach().to(device=metric.device, copy=True) for v in value]
    raise TypeError(f"a metric state must be a tensor or a list of tensors, got {type(value).__name__}")


def apply(metric: Any, parent_apply: Callable, fn: Callable, exclude_state: Sequence[str]) -> torch.nn.Module:
    """``Metric._apply``: ``fn`` guarded so that it changes dtypes only as ``set_dtype`` asks (never float64 or
    integer/bool tensors), run by ``parent_apply`` (``nn.Module``'s hook) over parameters and buffers, then over the
    states (but those named in ``exclude_state``), their defaults and the cached values."""
    probes = (torch.zeros((), dtype=torch.float32, device=metric.device),
              torch.zeros((), dtype=torch.float64, device=metric.device))
    moved = [fn(probe) for probe in probes]
    device = moved[0].device
    if metric._dtype_convert:  # ``set_dtype``: floating tensors follow, float64 and integer/bool ones do not

        def guarded(tensor: Tensor) -> Tensor:
            if tensor.is_floating_point() and tensor.dtype != torch.float64:
                return fn(tensor)
            return tensor.to(device=device)

    elif any(out.dtype != probe.dtype for out, probe in zip(moved, probes)):  # an implicit dtype conversion

        def guarded(tensor: Tensor) -> Tensor:
            return tensor.to(device=device)

    else:  # a device move (``.to(device)``, ``.cuda()``, ``.cpu()``) or another dtype-preserving function
        guarded = fn
    this = parent_apply(guarded)
    for name, default in this._defaults.items():
        if name in exclude_state:
            continue
        this._defaults[name] = guarded(default) if isinstance(default, Tensor) else [guarded(v) for v in default]
        value = getattr(this, name)
        if isinstance(value, Tensor):
            setattr(this, name, guarded(value))
        elif isinstance(value, Sequence):
            setattr(this, name, [guarded(item) for item in value])
        else:
            raise TypeError(f"the state `{name}` must be a tensor or a list of tensors, got {type(value).__name__}")
    probe = guarded(torch.zeros(1, device=metric.device))
    metric._device, metric._dtype = probe.device, probe.dtype
    if this._computed is not None:
        this._computed = map_tensors(this._computed, guarded)
    if this._forward_cache is not None:
        this._forward_cache = map_tensors(this._forward_cache, guarded)
    return this


def set_dtype(metric: Any, parent_type: Callable, dst_type: Union[str, torch.dtype]) -> Any:
    """``Metric.set_dtype``: ``parent_type(dst_type)`` (``nn.Module.type``) with :func:`apply` casting floating
    tensors that are not float64."""
    metric._dtype_convert = True
    try:
        return parent_type(dst_type)
    finally:
        metric._dtype_convert = False


def map_tensors(value: Any, fn: Callable[[Tensor], Tensor]) -> Any:
    """``value`` with ``fn`` applied to every tensor in it, through dicts, lists, tuples and named tuples (the
    containers keep their types; a dict subclass its extra attributes).

    Example:
        >>> map_tensors({"a": [torch.ones(2)], "b": 3}, lambda t: t * 2)
        {'a': [tensor([2., 2.])], 'b': 3}
    """
    if isinstance(value, Tensor):
        return fn(value)
    if isinstance(value, dict):
        mapped = {key: map_tensors(item, fn) for key, item in value.items()}
        return mapped if type(value) is dict else _rebuild_mapping(value, mapped)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return type(value)(*(map_tensors(item, fn) for item in value))
    if isinstance(value, (list, tuple)):
        return type(value)(map_tensors(item, fn) for item in value)
    return value


def _rebuild_mapping(original: dict, mapped: dict) -> dict:
    rebuilt = copy.copy(original)  # keeps the dict subclass and its extra attributes (a defaultdict's factory)
    rebuilt.clear()
    rebuilt.update(mapped)
    return rebuilt


def _encode_signature(signature: str) -> Tensor:
    """A ``uint8`` tensor ``[bytes]`` of the UTF-8 signature: ``torch.load(weights_only=True)`` reads it, DDP never
    reduces it."""
    return torch.tensor(list(signature.encode("utf-8")), dtype=torch.uint8)


def _decode_signature(value: Any, key: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Tensor) and value.dtype == torch.uint8 and value.dim() == 1:
        return bytes(value.tolist()).decode("utf-8", errors="replace")
    raise TypeError(f"{key}: expected a uint8 tensor holding a metric signature, got {type(value).__name__}")

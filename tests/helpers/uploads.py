"""Find blocking host → device copies without a GPU: the CPU plays both sides, ``cpu:0`` stands for the accelerator.

On CUDA every copy of host data to the device that does not go through :mod:`gpumetrics.core.transfer` blocks the
host (``torch.tensor(data, device="cuda")``, ``host.to("cuda")`` from pageable memory, ``cuda.copy_(host)``), and
``torch.cuda.set_sync_debug_mode`` flags it. On the CPU those copies are no-ops, so :class:`UploadTracker` keeps
track of where each tensor *would* live: a ``TorchFunctionMode`` tags every tensor made while it is active as a
**device** tensor (made by a factory given the device ``cpu:0``, moved there by ``.to``, uploaded by ``core.transfer``,
or computed from a device tensor) or a **host** tensor (everything else: ``torch.from_numpy``, factories without a
device, ``.cpu()``). Device tensors answer ``tensor.device`` with ``cpu:0``, so code that reads a device from a
tensor or a metric (``torch.zeros(n, device=x.device)``, ``.to(self.device)``) sees two devices as it would on a GPU.

It records

* ``upload``: host data (a list, an array, a scalar, a host tensor) copied to the device outside ``core.transfer``:
  ``torch.tensor / as_tensor / asarray(..., device=cpu:0)``, ``Tensor.new_tensor`` of a device tensor,
  ``Tensor.to(cpu:0 | device tensor)``, ``Tensor.cuda()``, ``device.copy_(host)``;
* ``mixed``: one op given a device tensor and a host tensor of one or more dimensions (on CUDA an error, or for
  indexing a hidden blocking copy of the index); host 0-d tensors are scalars there and pass.

Use :func:`place_on_device` to point a metric module at ``cpu:0`` (its states and buffers become device tensors);
pass ``device="cpu:0"`` to a functional metric; :func:`on_device` tells whether a result lives on the device.

Limits: ``cpu:0`` is a CPU, so code that branches on ``device.type == "cpu"`` takes its CPU path here (only a GPU run
checks the other); tensors made before the tracker starts count as host tensors unless tagged (metric states are,
by :func:`place_on_device`); ops inside C++ kernels are not seen (they copy nothing from the host).
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten

#: the stand-in for the accelerator; host tensors report plain ``cpu``
DEVICE = torch.device("cpu", 0)
_TAG = "_gpumetrics_on_device"
_TRANSFER = "gpumetrics/core/transfer.py"
_FROM_DATA = {torch.tensor, torch.as_tensor, torch.asarray}
_TO_HOST = {torch.Tensor.cpu, torch.Tensor.numpy, torch.Tensor.pin_memory}


def on_device(tensor: Any) -> bool:
    """Whether ``tensor`` is tagged as living on the (simulated) device."""
    return isinstance(tensor, torch.Tensor) and bool(getattr(tensor, _TAG, False))


def _tag(value: Any, device: bool) -> None:
    for leaf in tree_flatten(value)[0]:
        if isinstance(leaf, torch.Tensor):
            setattr(leaf, _TAG, device)


def _moved(out: Any, source: Any, device: bool) -> Any:
    """Tag ``out`` of a copy to the device (``device``) or the host; a no-op copy (``.to`` of a CPU tensor to
    ``cpu:0`` returns its input) is cloned first, so the input keeps its own tag (on CUDA it would be a new tensor)."""
    if out is source and isinstance(out, torch.Tensor) and on_device(out) != device:
        out = out.clone()
    _tag(out, device)
    return out


def _is_device(device: Any) -> bool:
    if device is None:
        return False
    if isinstance(device, torch.Tensor):
        return on_device(device)
    try:
        return torch.device(device) == DEVICE
    except (RuntimeError, TypeError):
        return False


def _to_target(args: tuple, kwargs: dict) -> Any:
    """The device a ``Tensor.to(...)`` call names (``None`` when it only changes the dtype)."""
    if "device" in kwargs:
        return kwargs["device"]
    for arg in args[1:]:
        if isinstance(arg, torch.Tensor):
            return DEVICE if on_device(arg) else torch.device("cpu")
        if isinstance(arg, (str, torch.device, int)) and not isinstance(arg, bool):
            return arg
    return None


def _where() -> str:
    """The innermost gpumetrics frame of the current stack, ``path:line``."""
    for frame in reversed(traceback.extract_stack()[:-3]):
        if "/gpumetrics/" in frame.filename and "/tests/" not in frame.filename:
            return f"{frame.filename.split('/gpumetrics/', 1)[1]}:{frame.lineno} {frame.line}"
    return "?"


def _in_transfer() -> bool:
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.endswith(_TRANSFER):
            return True
        frame = frame.f_back
    return False


class UploadTracker(TorchFunctionMode):
    """``with UploadTracker() as tracker: ...`` then ``tracker.uploads`` and ``tracker.mixed`` (``[(op, where)]``).

    Example:
        >>> with UploadTracker() as tracker:
        ...     ones = torch.ones(2, device="cpu:0")
        ...     total = ones + torch.tensor([1.0, 2.0], device="cpu:0")  # a blocking copy on CUDA
        >>> tracker.uploads[0][0], on_device(total)
        ('tensor', True)
    """

    def __init__(self) -> None:
        super().__init__()
        self.uploads: list[tuple[str, str]] = []
        self.mixed: list[tuple[str, str]] = []

    def _upload(self, name: str) -> None:
        if not _in_transfer():
            self.uploads.append((name, _where()))

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", str(func))
        if name == "__get__":  # a property: only ``device`` changes, for device tensors
            out = func(*args, **kwargs)
            if isinstance(out, torch.device) and on_device(args[0]) and out.type == "cpu":
                return DEVICE
            if isinstance(out, torch.Tensor) and out is not args[0]:  # .T, .mT, .data …
                setattr(out, _TAG, on_device(args[0]))
            return out
        if func in _FROM_DATA or func is torch.Tensor.new_tensor:
            source = args[1] if func is torch.Tensor.new_tensor else (args[0] if args else kwargs.get("data"))
            target = kwargs.get("device", args[0] if func is torch.Tensor.new_tensor else None)
            if func is torch.as_tensor and target is None and isinstance(source, torch.Tensor):
                target = source
            out = func(*args, **kwargs)
            to_device = _is_device(target)
            if to_device and not on_device(source):
                self._upload(name)
            return _moved(out, source, to_device)
        if func in (torch.Tensor.to, torch.Tensor.cuda):
            source = args[0]
            target = DEVICE if func is torch.Tensor.cuda else _to_target(args, kwargs)
            out = func(*args, **kwargs) if func is torch.Tensor.to else source.clone()
            to_device = on_device(source) if target is None else _is_device(target)
            if to_device and not on_device(source):
                self._upload(name)
            return _moved(out, source, to_device)
        if func is torch.Tensor.copy_:
            target, source = args[0], args[1]
            if on_device(target) and isinstance(source, torch.Tensor) and not on_device(source):
                self._upload(name)
            return func(*args, **kwargs)
        if func in _TO_HOST:
            out = func(*args, **kwargs)
            if func is torch.Tensor.numpy:
                if on_device(args[0]):
                    self.mixed.append(("numpy of a device tensor", _where()))
                return out
            return _moved(out, args[0], False)
        tensors = [leaf for leaf in tree_flatten((args, kwargs))[0] if isinstance(leaf, torch.Tensor)]
        device_in = any(on_device(t) for t in tensors)
        if device_in and any(not on_device(t) and t.dim() > 0 for t in tensors) and not _in_transfer():
            self.mixed.append((name, _where()))
        out = func(*args, **kwargs)
        if "device" in kwargs and kwargs["device"] is not None:
            made_on_device = _is_device(kwargs["device"])
        else:
            made_on_device = device_in
        inputs = {id(t) for t in tensors}
        for leaf in tree_flatten(out)[0]:
            if isinstance(leaf, torch.Tensor) and id(leaf) not in inputs:  # in-place ops keep their tensor's tag
                setattr(leaf, _TAG, made_on_device)
        return out


def place_on_device(metric: Any) -> Any:
    """Point a metric module at :data:`DEVICE`: its states and buffers become device tensors. Returns the metric."""
    metric._device = DEVICE
    for name in getattr(metric, "_defaults", {}):
        _tag(getattr(metric, name), True)
    for buffer in metric.buffers():
        _tag(buffer, True)
    return metric

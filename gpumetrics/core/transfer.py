"""Host → device uploads that do not make the host wait: the one way host-built arrays reach a metric's device.

A plain ``tensor.to("cuda")`` from pageable memory is a synchronising copy (the host waits for every queued kernel,
and ``torch.cuda.set_sync_debug_mode`` flags it). :func:`upload` stages the bytes in pinned memory (torch's caching
host allocator keeps the block alive until the copy has run) and copies without blocking, so tokenising the next
batch on the host overlaps the kernels of this one. On the CPU, or for a tensor already on the device, it is
``tensor.to(device)``. Copies *to* the host stay blocking everywhere: their values are read right after.
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np
import torch

DeviceArg = Union[str, torch.device, None]


def upload(data: Any, device: DeviceArg, dtype: torch.dtype | None = None) -> torch.Tensor:
    """``data`` (a host tensor, a numpy array or a nested list of numbers) as a tensor on ``device``.

    Args:
        data: ``Tensor[...]`` on the CPU (or already on ``device``), ``np.ndarray`` or a (nested) list / tuple.
        device: target device; ``None`` is the CPU.
        dtype: convert to this dtype on the host first (the default keeps the data's dtype).

    Returns:
        ``Tensor[...]`` on ``device``; on a CUDA device the copy is queued on the current stream without a host
        synchronisation (pinned staging).

    Example:
        >>> upload(np.arange(3), "cpu", torch.float64)
        tensor([0., 1., 2.], dtype=torch.float64)
    """
    target = torch.device("cpu") if device is None else torch.device(device)
    host = torch.from_numpy(np.ascontiguousarray(data)) if isinstance(data, np.ndarray) else torch.as_tensor(data)
    if host.device.type != "cpu":
        return host.to(device=target, dtype=dtype)
    if dtype is not None:
        host = host.to(dtype)
    if target.type != "cuda":
        return host.to(target)
    if not host.is_pinned():
        host = host.pin_memory()
    return host.to(target, non_blocking=True)


def upload_all(arrays: list[Any], device: DeviceArg) -> list[torch.Tensor]:
    """Several host arrays of one dtype in ONE upload: concatenated flat on the host, split on the device.

    Args:
        arrays: ``np.ndarray`` or CPU tensors of one dtype, any shapes.
        device: target device.

    Returns:
        The arrays on ``device``, shapes kept, in order (views of one device buffer).

    Example:
        >>> [t.tolist() for t in upload_all([np.arange(3), np.ones((2, 2), dtype=np.int64)], "cpu")]
        [[0, 1, 2], [[1, 1], [1, 1]]]
    """
    tensors = [torch.from_numpy(np.ascontiguousarray(a)) if isinstance(a, np.ndarray) else torch.as_tensor(a)
               for a in arrays]
    if not tensors:
        return []
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) > 1:
        raise ValueError(f"`arrays` must share one dtype, got {sorted(map(str, dtypes))}")
    flat = upload(torch.cat([t.reshape(-1) for t in tensors]), device)
    sizes = [t.numel() for t in tensors]
    return [part.view(t.shape) for part, t in zip(torch.split(flat, sizes), tensors)]

"""Host → device uploads that do not make the host wait: the one way host-built arrays reach a metric's device.

A plain ``tensor.to("cuda")`` from pageable memory is a synchronising copy (the host waits for every queued kernel,
and ``torch.cuda.set_sync_debug_mode`` flags it). :func:`upload` stages the bytes in pinned memory (torch's caching
host allocator keeps the block alive until the copy has run) and copies without blocking, so tokenising the next
batch on the host overlaps the kernels of this one. On the CPU, or for a tensor already on the device, it is
``tensor.to(device)``. Copies *to* the host stay blocking everywhere: their values are read right after.
"""

from __future__ import annotations

from typing import Any, Sequence, Union

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
    """Several host arrays of one dtype in ONE upload: concatenated into one staging buffer (pinned on CUDA, the
    only host copy), split on the device.

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
    target = _target(device)
    if any(t.device.type != "cpu" for t in tensors):  # already on a device: no staging
        flat = torch.cat([t.reshape(-1).to(target) for t in tensors])
    else:
        stage = staging_buffer(sum(t.numel() for t in tensors), tensors[0].dtype, target)
        flat = _send(torch.cat([t.reshape(-1) for t in tensors], out=stage), target)
    return [part.view(t.shape) for part, t in zip(torch.split(flat, [t.numel() for t in tensors]), tensors)]


_SAME_BITS = {np.dtype(np.uint16): torch.int16, np.dtype(np.uint32): torch.int32, np.dtype(np.uint64): torch.int64}


def upload_concatenated(arrays: Sequence[np.ndarray], device: DeviceArg, dtype: Any = None) -> torch.Tensor:
    """Host arrays of any widths concatenated flat into ONE tensor on ``device``, each cast into the result's dtype
    while it is copied into the staging buffer (the only host copy, pinned on CUDA), then copied without blocking.

    Args:
        arrays: numpy arrays, any shapes (flattened, in order).
        device: target device.
        dtype: numpy dtype of the result; their common type by default. ``uint16`` / ``uint32`` / ``uint64`` arrive
            as the signed torch dtype of their width (the same bits: torch has no arithmetic on them), for the caller
            to reinterpret.

    Returns:
        ``Tensor[Σ sizes]`` on ``device``.

    Example:
        >>> upload_concatenated([np.arange(2, dtype=np.uint8), np.array([300], dtype=np.uint16)], "cpu")
        tensor([  0,   1, 300], dtype=torch.int16)
    """
    target = _target(device)
    dtype = np.dtype(dtype if dtype is not None else (np.result_type(*arrays) if len(arrays) else np.uint8))
    signed = np.dtype(f"i{dtype.itemsize}") if dtype in _SAME_BITS else dtype
    stage = staging_buffer(sum(a.size for a in arrays), signed, target)
    # numpy copies the blocks, casting where a block is narrower: a torch copy_ per block opens an OpenMP region per
    # block, whose threads wait on each other for a scheduler slice when other processes hold the cores (245 blocks
    # of text: 1.8 s instead of 45 ms on the loaded 2-core VM)
    host = stage.numpy()
    filled = 0
    for array in arrays:
        flat = array.reshape(-1)
        host[filled:filled + flat.size] = flat.view(signed) if flat.dtype == dtype else flat.astype(dtype).view(signed)
        filled += flat.size
    return _send(stage, target)


def staging_buffer(size: int, dtype: Any, device: DeviceArg) -> torch.Tensor:
    """An empty host buffer to assemble an upload to ``device`` in: pinned for CUDA (torch's caching host allocator:
    no pageable intermediate to page-fault in, no second copy to pin it, reused once its copy has run), numpy's
    memory elsewhere (its large allocations are hugepage-advised, torch's fault in 4 KiB pages: 44 MB in 8 ms vs
    26 ms) — torch's for a dtype numpy lacks (bfloat16). Send it with :func:`upload`.

    Args:
        size: number of items.
        dtype: numpy or torch dtype of the items.
        device: the device the buffer's contents go to.

    Returns:
        ``Tensor[size]`` on the host (its numpy view, where numpy has the dtype, writes into it).

    Example:
        >>> staging_buffer(3, np.int32, "cpu").dtype, staging_buffer(2, torch.bfloat16, "cpu").dtype
        (torch.int32, torch.bfloat16)
    """
    if isinstance(dtype, torch.dtype):
        torch_dtype, numpy_dtype = dtype, _NUMPY_OF.get(dtype)
    else:
        numpy_dtype = np.dtype(dtype)
        torch_dtype = torch.from_numpy(np.empty(0, numpy_dtype)).dtype
    if _target(device).type == "cuda":
        return torch.empty(size, dtype=torch_dtype, pin_memory=True)
    if numpy_dtype is None:
        return torch.empty(size, dtype=torch_dtype)
    return torch.from_numpy(np.empty(size, numpy_dtype))


#: torch dtypes numpy also has (bfloat16 and the 8-bit floats it lacks)
_NUMPY_OF = {torch.from_numpy(np.empty(0, kind)).dtype: np.dtype(kind) for kind in (
    np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64, np.complex64,
    np.complex128, np.uint16, np.uint32, np.uint64)}


def _target(device: DeviceArg) -> torch.device:
    return torch.device("cpu") if device is None else torch.device(device)


def _send(stage: torch.Tensor, target: torch.device) -> torch.Tensor:
    return stage.to(target, non_blocking=target.type == "cuda")

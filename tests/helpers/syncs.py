"""Count the operations that make a CUDA program wait for the GPU (host↔device synchronisations), on any device.

On a GPU these ops block the host until the queued kernels finish: reading a value (``item``, ``bool(t)``,
``int(t)``: ``aten._local_scalar_dense``), ops whose output size depends on values (``nonzero``, ``unique*``,
``masked_select``, ``bincount`` — its output is sized by the largest value, even with ``minlength`` —, boolean-mask
indexing, ``repeat_interleave`` without ``output_size``), and copies to the host
(``tolist`` / ``numpy`` / ``cpu`` of a tensor). :class:`SyncCounter` counts them while it is active, on CPU tensors
too, so a test can bound them without a GPU — except copies from pinned memory: a pinned tensor is a host buffer
made for a device upload (``core.transfer``'s staging), which exists only where a GPU does, and reading it waits for
nothing (the second CUDA run counted the upload's own ``numpy()`` view of its staging buffer as a sync). It
over-counts where a metric runs such an op on a host-side helper tensor on purpose (that costs nothing on a GPU);
budgets are therefore "no more than today, and not growing with the batch", not zero.
"""

from __future__ import annotations

import collections
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_VALUE_SIZED = {"nonzero", "_unique", "_unique2", "unique_dim", "unique_consecutive", "masked_select", "bincount"}
_HOST_COPIES = ("tolist", "numpy", "cpu")


def _has_bool_index(indices: Any) -> bool:
    return any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in (indices or ()))


class SyncCounter(TorchDispatchMode):
    """``with SyncCounter() as counter: ...`` then ``counter.counts`` (op kind → calls) and ``counter.total``.

    Kinds: ``item`` (``_local_scalar_dense``), the value-sized ops by their aten name, ``bool-index`` (indexing or
    index-put with a boolean mask), ``repeat_interleave`` (no ``output_size``), and ``to-host:tolist|numpy|cpu``.
    """

    def __init__(self) -> None:
        super().__init__()
        self.counts: collections.Counter = collections.Counter()
        self._patched: dict[str, Any] = {}

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = func.overloadpacket.__name__
        if name == "_local_scalar_dense":
            self.counts["item"] += 1
        elif name in _VALUE_SIZED:
            self.counts[name] += 1
        elif name in ("index", "index_put", "index_put_", "_index_put_impl_") and _has_bool_index(args[1]):
            self.counts["bool-index"] += 1
        elif func is torch.ops.aten.repeat_interleave.Tensor and kwargs.get("output_size", args[1:2] or None) is None:
            self.counts["repeat_interleave"] += 1  # the repeats → indices step, where output_size saves the sync
        return func(*args, **kwargs)

    def __enter__(self) -> "SyncCounter":
        for method in _HOST_COPIES:
            original = getattr(torch.Tensor, method)
            self._patched[method] = original

            def counting(tensor, *args, _original=original, _kind=f"to-host:{method}", **kwargs):
                if not tensor.is_pinned():
                    self.counts[_kind] += 1
                return _original(tensor, *args, **kwargs)

            setattr(torch.Tensor, method, counting)
        return super().__enter__()

    def __exit__(self, *exc: Any) -> None:
        try:
            super().__exit__(*exc)
        finally:
            for method, original in self._patched.items():
                setattr(torch.Tensor, method, original)
            self._patched.clear()

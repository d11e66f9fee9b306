"""Intra-op threads for small tensor kernels: text metrics run theirs on one CPU thread.

The text metrics' kernels (``unique``, ``sort``, ``bincount``, scatter over 10⁴–10⁶ elements) gain nothing from
torch's intra-op threads on CPU (measured: the same time ±5 % on 1 or 2 threads), but each parallel region ends in a
barrier. When other processes keep the cores busy, every barrier waits for a descheduled thread: BLEU and ROUGE ran
2.5–3.3× slower beside two busy processes on 2 cores, against 1.4–1.5× for the single-threaded reference tools and
for the same kernels on one thread; the edit-distance tensor kernel and the OCR / zero-shot matching loops (many small
ops per step) ran 4–26× slower. So the text and detection-matching metrics (BLEU, ROUGE, CIDEr, QA, edit distance,
CER/WER, 1 − NED, OCR end-to-end, zero-shot F1) set ``Metric.kernel_threads = 1`` and their functional forms use
:func:`single_threaded`; the previous setting is restored on exit. Large dense kernels (FID/KID statistics, paired
IoU) keep torch's threads. rapidfuzz runs on one thread for the same reason, except for large batches on free cores
(see ``kernels/host.py``). On CUDA the setting only touches host-side work.
``torch.set_num_threads`` is process-wide: another Python thread running torch ops meanwhile also runs on one thread.
"""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, Iterator, Optional, TypeVar

import torch

F = TypeVar("F", bound=Callable[..., Any])


@contextlib.contextmanager
def intra_op_threads(count: Optional[int]) -> Iterator[None]:
    """Run the block with at most ``count`` torch intra-op threads (``None``: leave torch's setting).

    Example:
        >>> before = torch.get_num_threads()
        >>> with intra_op_threads(1):
        ...     torch.get_num_threads()
        1
        >>> torch.get_num_threads() == before
        True
    """
    previous = torch.get_num_threads()
    if count is None or previous <= count:
        yield
        return
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def single_threaded(fn: F) -> F:
    """Decorator: run ``fn`` inside ``intra_op_threads(1)``."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with intra_op_threads(1):
            return fn(*args, **kwargs)

    return wrapper  # type: ignore[return-value]

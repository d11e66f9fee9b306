"""How the image reader decodes ahead: its processes, the pieces a chunk of files is split into, how many pieces each
process is handed ahead — within a bound on the decoded pixels in flight (:func:`plan_reading`). Arithmetic only:
:mod:`gpumetrics.image.io` estimates the bytes a file holds decoded (from headers) and runs the plan.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import NamedTuple, Optional

#: fewest files a decoding process is handed at once when a chunk is split between processes: each piece costs a
#: hand-over between processes (a shared-memory tensor, a queue message, a pinned copy)
MIN_PIECE = 16


def pieces_per_chunk(batch_size: int, workers: int) -> int:
    """Pieces a chunk of ``batch_size`` files is split into for ``workers`` decoding processes: one per process,
    of at least :data:`MIN_PIECE` files — so that the processes decode a chunk together and its batch is ready after
    a piece's decoding, not a whole chunk's by one process (8 processes, batch 256: the first batch waited for one
    process to decode 256 files while the network idled, and every chunk of a 2,000-file folder came at once).

    Example:
        >>> [pieces_per_chunk(256, workers) for workers in (0, 1, 2, 8)], pieces_per_chunk(50, 8)
        ([1, 1, 2, 8], 3)
    """
    return max(1, min(workers, batch_size // MIN_PIECE))


#: the default ``max_bytes_in_flight`` at most (:func:`default_max_bytes_in_flight`)
MAX_BYTES_IN_FLIGHT = 2 << 30
def _memory_bytes() -> Optional[int]:
    """This process's memory: the machine's physical memory, or its container's limit (cgroup v2 or v1) when
    lower; None when neither can be read (not on Linux)."""
    sizes = []
    try:
        sizes.append(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        pass
    for limit in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            text = Path(limit).read_text().strip()
        except OSError:
            continue
        if text.isdigit():  # "max": no limit (v1 writes a huge number, which min() passes over)
            sizes.append(int(text))
    return min(sizes) if sizes else None


def default_max_bytes_in_flight(memory: Optional[int] = None) -> int:
    """Decoded pixels the reader holds in flight when no bound is given: an eighth of ``memory`` (default: this
    machine's, or its container's limit), at most :data:`MAX_BYTES_IN_FLIGHT` (2 GiB). An eighth leaves the rest to
    the network, its inputs and the decoding processes' working copies (a process holds up to three copies of the
    piece it stacks). 2 GiB keeps the unbounded depth — two chunks per process — for 256×256 images at batch 256 with
    8 processes (0.9 GB); where it binds, each process still has a piece ahead and keeps decoding: the forward
    takes one batch at a time, and a deeper queue only absorbs jitter.

    Example:
        >>> [default_max_bytes_in_flight(gib << 30) >> 20 for gib in (4, 16, 512)]  # MiB
        [512, 2048, 2048]
    """
    memory = _memory_bytes() if memory is None else memory
    return MAX_BYTES_IN_FLIGHT if memory is None else max(1, min(MAX_BYTES_IN_FLIGHT, memory // 8))


class ReadingPlan(NamedTuple):
    """How :class:`~gpumetrics.image.io.ImageBatches` decodes: ``workers`` processes, each chunk of ``batch_size``
    files split into ``pieces_per_chunk`` pieces of ``ceil(batch_size / pieces_per_chunk)`` files, ``prefetch``
    pieces per process handed out ahead (the DataLoader's ``prefetch_factor``), ``bytes_per_file`` the estimate they
    were chosen from (None: not estimated)."""

    workers: int
    pieces_per_chunk: int
    prefetch: int
    bytes_per_file: Optional[int] = None

    def files_in_flight(self, batch_size: int) -> int:
        """Files decoded or waiting in the processes' pieces at most (the chunk being joined not counted)."""
        return self.workers * self.prefetch * math.ceil(batch_size / self.pieces_per_chunk) if self.workers else 0


def plan_reading(batch_size: int, workers: int, bytes_per_file: Optional[int], max_bytes: int) -> ReadingPlan:
    """The :class:`ReadingPlan` for ``workers`` processes that keeps the decoded pixels in flight — the pieces
    handed out (``files_in_flight``) and the chunk being joined (``batch_size`` files) at ``bytes_per_file``
    each — within ``max_bytes``: the unbounded plan (:func:`pieces_per_chunk`, two chunks per process ahead) when
    it fits; else fewer pieces ahead; else smaller pieces (down to one file); else fewer processes. Never less than
    one piece per process and one process; a chunk alone over ``max_bytes`` leaves the least. The batches are the
    same whatever the plan.

    Example:
        >>> plan_reading(256, 8, 3 * 256 * 256, 2 << 30)  # 256×256 images: as unbounded
        ReadingPlan(workers=8, pieces_per_chunk=8, prefetch=16, bytes_per_file=196608)
        >>> photo = 3 * 4000 * 3000  # 12 megapixels: 36 MB decoded
        >>> plan_reading(256, 8, photo, 32 << 30)  # 9.2 GB a batch, 2 pieces of 32 photos ahead per process
        ReadingPlan(workers=8, pieces_per_chunk=8, prefetch=2, bytes_per_file=36000000)
        >>> plan_reading(50, 8, photo, 2 << 30)  # 50 decoded are 1.8 GB of the 2.1: a photo ahead per process
        ReadingPlan(workers=8, pieces_per_chunk=50, prefetch=1, bytes_per_file=36000000)
        >>> plan_reading(50, 8, photo, 2 << 30).files_in_flight(50)
        8
    """
    per_chunk = pieces_per_chunk(batch_size, workers)
    plan = ReadingPlan(workers, per_chunk, 2 * per_chunk, bytes_per_file)
    if not workers or bytes_per_file is None:
        return plan
    room = max(0, max_bytes - batch_size * bytes_per_file) // bytes_per_file  # files the processes may hold
    if plan.files_in_flight(batch_size) <= room:
        return plan
    prefetch = room // (workers * math.ceil(batch_size / per_chunk))
    if prefetch:
        return plan._replace(prefetch=prefetch)
    for prefetch in (2, 1):  # smaller pieces: two ahead per process keeps each busy while its last one is joined
        files = room // (prefetch * workers)
        if files:
            return plan._replace(pieces_per_chunk=math.ceil(batch_size / files), prefetch=prefetch)
    return ReadingPlan(max(1, room), batch_size, 1, bytes_per_file)  # one file per process, fewer processes

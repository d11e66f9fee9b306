"""Memory regression tests without timings: a snippet runs in a fresh Python whose address space is capped, so an
allocation past the cap fails the test (``MemoryError`` / torch's "can't allocate memory") on any machine."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def limit_address_space(extra_bytes: int) -> None:
    """Cap the calling process at its current virtual size plus ``extra_bytes`` (call it in the child, after the
    imports and the inputs, before the work under test)."""
    with open("/proc/self/status", encoding="ascii") as status:
        size = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmSize"))
    resource.setrlimit(resource.RLIMIT_AS, (size + extra_bytes, size + extra_bytes))


def run_python(script: str, timeout: float = 300) -> str:
    """``script`` (dedented) in a fresh single-threaded Python with the repository on its path; its stdout.

    Raises:
        AssertionError: the child exited non-zero (the tail of its stderr is the message).
    """
    # glibc's malloc raises its mmap threshold after large blocks are freed, and then serves the next ones from the
    # heap, which keeps freed address space: under the cap the test measured the allocator's history, not the live
    # memory (a 30 MB chunk failed in one CI run of 512 MiB of headroom for 256 MiB chunks). A fixed threshold and one
    # arena make every large block an mmap returned on free.
    env = {"PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MALLOC_MMAP_THRESHOLD_": "131072", "MALLOC_ARENA_MAX": "1",
           "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], cwd=ROOT, capture_output=True, text=True,
                          env=env, timeout=timeout)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout

"""Files written so that a reader never sees half of one: a temp file beside the target, then ``os.replace``."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import IO, Iterator, Union


@contextlib.contextmanager
def atomic_write(path: Union[str, Path], mode: str = "w", encoding: str = "utf-8") -> Iterator[IO]:
    """Write ``path`` all at once: the previous file stays intact until the new one is complete on disk.

    Yields a file object of a temporary file in ``path``'s directory (created if needed). On a clean exit the file
    is flushed, fsync-ed and renamed over ``path`` (``os.replace``: atomic on POSIX and Windows); on any exception —
    a full disk, Ctrl-C — the temporary file is removed and ``path`` keeps its previous content.

    Args:
        path: the file to write.
        mode: ``"w"`` (text) or ``"wb"`` (bytes).
        encoding: text encoding for ``mode="w"``.

    Example:
        >>> import tempfile, pathlib
        >>> target = pathlib.Path(tempfile.mkdtemp()) / "report.json"
        >>> with atomic_write(target) as handle:
        ...     _ = handle.write("{}")
        >>> target.read_text()
        '{}'
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"`mode` must be 'w' or 'wb', got {mode!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with open(descriptor, mode, **({"encoding": encoding} if mode == "w" else {})) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise


def cache_dir(name: str) -> Path:
    """A folder for derived data that can be rebuilt (``$GPUMETRICS_HOME/<name>``, else the XDG cache), created.

    Example:
        >>> import os, tempfile
        >>> saved = os.environ.get("GPUMETRICS_HOME")
        >>> os.environ["GPUMETRICS_HOME"] = tempfile.mkdtemp()
        >>> cache_dir("meteor").name
        'meteor'
        >>> _ = os.environ.pop("GPUMETRICS_HOME") if saved is None else os.environ.update(GPUMETRICS_HOME=saved)
    """
    home = os.environ.get("GPUMETRICS_HOME")
    root = Path(home).expanduser() if home else Path(os.environ.get("XDG_CACHE_HOME", "~/.cache")).expanduser() / "gpumetrics"
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder

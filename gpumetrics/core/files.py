"""Files: written so that a reader never sees half of one (a temp file beside the target, then ``os.replace``), the
one reader of ``$GPUMETRICS_HOME`` (:func:`gpumetrics_home`, :func:`cache_dir`) and the one file hasher
(:func:`file_hash`, :func:`file_sha256`)."""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path
from typing import IO, Any, Iterator, Optional, Union

_CHUNK = 1 << 20  # bytes read at a time by the hasher


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
    home = gpumetrics_home()
    root = home if home is not None else Path(os.environ.get("XDG_CACHE_HOME", "~/.cache")).expanduser() / "gpumetrics"
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def gpumetrics_home() -> Optional[Path]:
    """``$GPUMETRICS_HOME`` as a path (``~`` expanded), or None when unset or empty: the one reader of the variable.

    Example:
        >>> import os
        >>> saved = os.environ.pop("GPUMETRICS_HOME", None)
        >>> gpumetrics_home() is None
        True
        >>> _ = saved is not None and os.environ.update(GPUMETRICS_HOME=saved)
    """
    home = os.environ.get("GPUMETRICS_HOME")
    return Path(home).expanduser() if home else None


def file_hash(path: Union[str, Path], algorithm: str = "sha256", **params: Any) -> Any:
    """The ``hashlib`` object of a file's bytes, read in 1 MiB chunks (``params``: e.g. ``digest_size`` of blake2b).

    Example:
        >>> import tempfile, os
        >>> with tempfile.NamedTemporaryFile(delete=False) as f:
        ...     _ = f.write(b"abc")
        >>> file_hash(f.name).hexdigest()[:16], file_hash(f.name, "blake2b", digest_size=32).hexdigest()[:8]
        ('ba7816bf8f01cfea', 'bddd813c')
        >>> os.remove(f.name)
    """
    digest = hashlib.new(algorithm, **params) if params else hashlib.new(algorithm)
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(_CHUNK), b""):
            digest.update(chunk)
    return digest


def file_sha256(path: Union[str, Path]) -> str:
    """Hex sha256 of a file (:func:`file_hash`).

    Example:
        >>> import tempfile, os
        >>> with tempfile.NamedTemporaryFile(delete=False) as f:
        ...     _ = f.write(b"abc")
        >>> file_sha256(f.name)[:16]
        'ba7816bf8f01cfea'
        >>> os.remove(f.name)
    """
    return file_hash(path).hexdigest()

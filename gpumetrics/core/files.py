"""Files: written so that a reader never sees half of one (a temp file beside the target, then ``os.replace``), opened
for reading only where reading ends (:func:`open_input`: no ``/dev/zero``), the one reader of ``$GPUMETRICS_HOME``
(:func:`gpumetrics_home`, :func:`cache_dir`), the one file hasher (:func:`file_hash`, :func:`file_sha256`) and the one
``~`` expander (:func:`expand_user`)."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
from pathlib import Path
from typing import IO, Any, BinaryIO, Iterator, Optional, Union

_CHUNK = 1 << 20  # bytes read at a time by the hasher


@contextlib.contextmanager
def atomic_write(path: Union[str, Path], mode: str = "w", encoding: str = "utf-8") -> Iterator[IO]:
    """Write ``path`` all at once: the previous file stays intact until the new one is complete on disk.

    What ``path`` is decides how it is written:

    - a regular file, or nothing yet: a temporary file in the same directory (the directory is created if needed)
      receives the content and, on a clean exit, is flushed, fsync-ed and renamed over ``path`` (``os.replace``:
      atomic on POSIX and Windows); on any exception — a full disk, Ctrl-C — the temporary file is removed and
      ``path`` keeps its previous content. An overwritten file keeps its permission bits (and, where the process
      may, its owner); a new file gets the umask's mode (``0o666 & ~umask``, e.g. ``0644``), as ``open`` gives.
    - a symbolic link (or a chain of them): followed; the final target is written as above, in the target's
      directory, and the link stays a link. A dangling link creates its target.
    - a character or block device (``/dev/null``, ``/dev/stdout``, a terminal) or a FIFO: written through directly
      (opened, written, flushed) — never replaced by a regular file. There is no atomicity to offer there.
    - a directory: ``IsADirectoryError`` naming ``path``; a socket or another special file: ``ValueError`` naming
      ``path`` and its kind.

    Args:
        path: the file to write.
        mode: ``"w"`` (text) or ``"wb"`` (bytes).
        encoding: text encoding for ``mode="w"``.

    Raises:
        ValueError: ``mode`` is not ``"w"``/``"wb"``, or ``path`` is a socket or another file that cannot be written.
        IsADirectoryError: ``path`` (or the target of the link it is) is a directory.

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
    open_options = {"encoding": encoding} if mode == "w" else {}
    path = Path(path)
    # Follow symbolic links to the file they name; the link itself is left alone.
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        existing = os.stat(target)
    except FileNotFoundError:
        existing = None
    if existing is not None and not stat.S_ISREG(existing.st_mode):
        kind = existing.st_mode
        if stat.S_ISDIR(kind):
            raise IsADirectoryError(errno.EISDIR, f"cannot write a file at {str(path)!r}: it is a directory", str(path))
        if not (stat.S_ISCHR(kind) or stat.S_ISBLK(kind) or stat.S_ISFIFO(kind)):
            what = "a socket" if stat.S_ISSOCK(kind) else f"a special file (mode {oct(kind)})"
            raise ValueError(f"cannot write a file at {str(path)!r}: it is {what}")
        # A device or a FIFO: write through; replacing it would destroy it (``-o /dev/null`` as root).
        with open(target, mode, **open_options) as handle:
            yield handle
            handle.flush()
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temp_name = _create_temporary(target)
    try:
        if existing is not None:  # keep the mode (and, where allowed, the owner) of the file being replaced
            with contextlib.suppress(OSError, NotImplementedError):
                os.chmod(temp_name, stat.S_IMODE(existing.st_mode))
            if hasattr(os, "chown") and (existing.st_uid, existing.st_gid) != (os.geteuid(), os.getegid()):
                with contextlib.suppress(OSError):
                    os.chown(temp_name, existing.st_uid, existing.st_gid)
        with open(descriptor, mode, **open_options) as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp_name, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp_name)
        raise


def open_input(path: Union[str, "os.PathLike[str]"]) -> BinaryIO:
    """Open an input file in binary mode, refusing what reading whole would never end on.

    A regular file, a pipe (a FIFO, ``<(…)``, ``/dev/stdin`` fed by one), a terminal and ``/dev/null`` are opened;
    any other device — ``/dev/zero`` and ``/dev/urandom`` never reach an end of file, so ``read()`` would take all
    memory — and a socket are refused with a ``ValueError`` naming ``path``, before anything is read.

    Raises:
        ValueError: ``path`` is a socket or a device other than a terminal or ``/dev/null``.
        OSError: ``path`` cannot be opened (missing, a directory, permission denied, a symbolic-link loop).

    Example:
        >>> try:
        ...     open_input("/dev/zero")
        ... except ValueError as err:
        ...     print(str(err).split(":")[0])
        /dev/zero is a device (character device), not a file
    """
    with contextlib.suppress(OSError):  # open() names a missing file, a directory or a loop itself
        if stat.S_ISSOCK(os.stat(path).st_mode):  # open() would say "No such device or address"
            raise ValueError(f"{os.fspath(path)} is a socket, not a file")
    handle = open(path, "rb")
    try:
        check_input_stream(handle.fileno(), os.fspath(path))
    except BaseException:
        handle.close()
        raise
    return handle


def check_input_stream(descriptor: int, name: str) -> None:
    """Refuse an open input (``descriptor``: e.g. standard input's) that is a device other than a terminal or
    ``/dev/null``: reading it to its end would never end (``< /dev/zero``). ``name`` names it in the error.

    Raises:
        ValueError: naming ``name`` and the kind of device.
    """
    mode = os.fstat(descriptor)
    if not (stat.S_ISCHR(mode.st_mode) or stat.S_ISBLK(mode.st_mode)) or os.isatty(descriptor):
        return
    with contextlib.suppress(OSError):
        null = os.stat(os.devnull)
        if stat.S_ISCHR(mode.st_mode) and mode.st_rdev == null.st_rdev:
            return
    kind = "character device" if stat.S_ISCHR(mode.st_mode) else "block device"
    raise ValueError(f"{name} is a device ({kind}), not a file: give a file or a pipe (reading a device such as "
                     "/dev/zero to its end would never end)")


def _create_temporary(target: Path) -> "tuple[int, str]":
    """Create ``.<name>.<random>.tmp`` beside ``target`` with mode ``0o666`` — the umask applies, as for ``open``.

    (``tempfile.mkstemp`` would give ``0o600`` whatever the umask.)
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        temp_name = os.path.join(target.parent, f".{target.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(temp_name, flags, 0o666), temp_name
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, f"no free temporary name beside {str(target)!r}")


def expand_user(path: Union[str, "os.PathLike[str]"]) -> Path:
    """``path`` with a leading ``~`` / ``~user`` expanded — as ``Path.expanduser`` but for a user that does not exist
    (``~nobody_here/x``) or no home directory: there ``Path.expanduser`` raises ``RuntimeError`` (no user error,
    so it escaped the command line with a traceback), while this keeps the path as written (``os.path.expanduser``'s
    and the shell's rule), so that it is then a file not found naming it.

    Example:
        >>> str(expand_user("~no_such_user_here/x.png"))
        '~no_such_user_here/x.png'
    """
    return Path(os.path.expanduser(os.fspath(path)))


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
    root = home if home is not None else expand_user(os.environ.get("XDG_CACHE_HOME", "~/.cache")) / "gpumetrics"
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
    return expand_user(home) if home else None


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

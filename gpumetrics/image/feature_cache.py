"""Reference-side FID / KID states cached on disk, so that a second run on the same reference images skips Inception.

An entry holds what one side of a metric accumulates — FID: the float64 ``Σx``, ``Σxxᵀ`` and the count; KID: the
features ``Tensor[n, d]`` — under a key that hashes everything those numbers depend on:

* the image files in the order they are read: each one's path relative to the folder and a blake2b digest of its
  bytes, so changing, adding, removing or renaming a file gives another key (mtimes are not trusted);
* the extractor: class, feature size, resize and speed modes, and a digest of every weight tensor (name, dtype,
  shape, bytes) — so the pinned file, another file, a ``state_dict`` and random weights all differ;
* the metric (its signature name and the side's state names), the batch size (it fixes the float64 summation
  order), the device type, and the versions of gpumetrics, torch and Pillow (decoding and resizing).

Only the built-in Inception (:class:`~gpumetrics.image.inception.FIDInceptionV3`) can be named this way: a custom
feature module is never cached. Entries are written atomically; an unreadable or inconsistent one is ignored with a
warning (and rewritten by the pass that follows). Default folder: :func:`default_cache_dir`.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import torch
from torch import Tensor, nn

from gpumetrics.core.files import atomic_write, cache_dir, expand_user, file_hash
from gpumetrics.core.progress import ProgressFn  # noqa: F401  (re-exported: image_files takes it from here)
from gpumetrics.core.signature import library_version
from gpumetrics.core.warn import warn_caller
from gpumetrics.image.inception import FIDInceptionV3

#: ``progress(phase, done, total)``, as the CLI's bars take it.
CACHE_FORMAT = 1


def default_cache_dir() -> Path:
    """``$GPUMETRICS_HOME/features``, else ``$XDG_CACHE_HOME/gpumetrics/features`` (``~/.cache/…``), created."""
    return cache_dir("features")


def file_digest(path: Union[str, Path]) -> bytes:
    """blake2b (32 bytes) of a file's bytes, read in 1 MiB chunks."""
    return file_hash(path, "blake2b", digest_size=32).digest()


def image_set_digest(
    files: Sequence[Union[str, Path]], root: Union[str, Path], progress: Optional[ProgressFn] = None,
    phase: str = "hashing images",
) -> str:
    """Hex digest of ``files`` (in this order): each one's path relative to ``root`` and its content digest.

    Raises:
        ValueError: a file of ``files`` does not lie under ``root``.
    """
    root = Path(root)
    digest = hashlib.blake2b(digest_size=32)
    if progress is not None:
        progress(phase, 0, len(files))
    for done, path in enumerate(files, start=1):
        try:
            name = Path(path).relative_to(root).as_posix()
        except ValueError:
            raise ValueError(f"`files`: '{path}' does not lie under the folder `root` '{root}'") from None
        encoded = name.encode("utf-8")
        digest.update(len(encoded).to_bytes(8, "little") + encoded + file_digest(path))
        if progress is not None:
            progress(phase, done, len(files))
    return digest.hexdigest()


def extractor_digest(extractor: nn.Module) -> Optional[str]:
    """Hex digest of what a :class:`FIDInceptionV3` computes (options and every weight tensor); None for any
    other module (its code cannot be named, so it is not cached)."""
    if not isinstance(extractor, FIDInceptionV3):
        return None
    digest = hashlib.blake2b(digest_size=32)
    options = {"class": "FIDInceptionV3", "dims": extractor.dims, "resize": extractor.resize,
               "speed": extractor.speed_mode}
    digest.update(json.dumps(options, sort_keys=True).encode())
    for name, tensor in extractor.state_dict().items():
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}".encode())
        digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy())
    return digest.hexdigest()


def reference_key(
    metric: Any, side: str, files: Sequence[Union[str, Path]], root: Union[str, Path], batch_size: int,
    device: torch.device, progress: Optional[ProgressFn] = None, phase: str = "hashing images", decode: str = "pil",
) -> Optional[str]:
    """The cache key of ``metric``'s ``side`` after reading ``files`` (relative to ``root``) in batches of
    ``batch_size`` on ``device`` with the ``decode`` decoder; None when the metric's extractor cannot be named (a
    custom module)."""
    extractor = extractor_digest(metric.extractor)
    if extractor is None:
        return None
    import PIL

    context = {
        "format": CACHE_FORMAT, "metric": metric.signature_name, "states": metric.side_state_names(side),
        "extractor": extractor, "batch_size": batch_size, "device": torch.device(device).type,
        "gpumetrics": library_version(), "torch": torch.__version__, "pillow": PIL.__version__,
    }
    if decode != "pil":  # PIL's keys stay those of earlier versions
        context["decode"] = decode
    digest = hashlib.blake2b(json.dumps(context, sort_keys=True).encode(), digest_size=32)
    digest.update(bytes.fromhex(image_set_digest(files, root, progress, phase)))
    return digest.hexdigest()


class FeatureCache:
    """Cached side states, one file ``<key>.pt`` each, in ``directory`` (default: :func:`default_cache_dir`,
    resolved when first needed).

    Example:
        >>> import tempfile
        >>> cache = FeatureCache(tempfile.mkdtemp())
        >>> cache.store("ab12", {"real_count": torch.tensor(3)})
        >>> cache.load("ab12")
        {'real_count': tensor(3)}
        >>> cache.load("cd34") is None
        True
    """

    def __init__(self, directory: Optional[Union[str, os.PathLike]] = None) -> None:
        if directory is not None and not isinstance(directory, (str, os.PathLike)):
            raise TypeError(f"`directory` must be a path or None, got {type(directory).__name__}")
        self._directory = None if directory is None else expand_user(directory)

    @property
    def directory(self) -> Path:
        if self._directory is None:
            self._directory = default_cache_dir()
        return self._directory

    def path(self, key: str) -> Path:
        """The file of ``key``'s entry."""
        return self.directory / f"{key}.pt"

    def load(self, key: str) -> Optional[dict[str, Tensor]]:
        """The states stored under ``key`` (on the CPU), or None when there is no entry or it cannot be used
        (warning: it is then recomputed and overwritten)."""
        path = self.path(key)
        if not path.is_file():
            return None
        try:
            entry = torch.load(path, map_location="cpu", weights_only=True)
            if not isinstance(entry, dict) or entry.get("format") != CACHE_FORMAT or entry.get("key") != key:
                raise ValueError("not an entry of this key and format")
            states = entry["states"]
            if not isinstance(states, dict) or not all(isinstance(v, Tensor) for v in states.values()):
                raise ValueError("its states are not tensors")
        except Exception as err:  # a truncated zip, a foreign pickle … anything unreadable is recomputed
            warn_unusable(path, err)
            return None
        return states

    def store(self, key: str, states: dict[str, Tensor]) -> None:
        """Write ``states`` under ``key`` at once (a reader never sees half an entry); a write that fails — a
        read-only or full disk — only warns, the scores do not depend on it."""
        entry = {"format": CACHE_FORMAT, "key": key, "states": {k: v.detach().cpu() for k, v in states.items()}}
        try:
            with atomic_write(self.path(key), "wb") as handle:
                torch.save(entry, handle)
        except OSError as err:
            warn_caller(f"feature cache: could not write '{self.path(key)}' ({err}); nothing was cached",
                          UserWarning)


def warn_unusable(path: Path, error: BaseException) -> None:
    """The warning for a cache entry that cannot be used: it is ignored and recomputed."""
    warn_caller(
        f"feature cache: ignoring the unusable entry '{path}' ({type(error).__name__}: {error}); recomputing it",
        UserWarning,
    )

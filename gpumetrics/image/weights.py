"""Registry of pinned model weights (name → URL + sha256) and the one place that resolves a weight file.

Load order for ``resolve_weights(name, path=None)``:

1. an explicit ``path`` given by the user (its hash is checked against the registry entry);
2. ``$GPUMETRICS_HOME/<file name>`` when the variable is set;
3. the torch hub cache ``<torch.hub.get_dir()>/checkpoints/<file name>`` (where pytorch-fid and torchmetrics put
   the same file);
4. a download into ``$GPUMETRICS_HOME`` (or the torch hub cache), only when asked for: ``download=True`` or
   ``$GPUMETRICS_DOWNLOAD=1`` (offline first, as CLIP models);
5. otherwise a ``FileNotFoundError`` that says where to put the file and where to get it.

Hashes: a registry entry carries the full sha256 and size of the published file when they are pinned (the FID
Inception is), and always the hash prefix that the file name itself carries (torch hub's convention,
``pt_inception-2015-12-05-6726825d.pth`` → ``6726825d``). A file whose size or digest does not match is refused with
a ``ValueError``.

Random weights are never a fallback: they are only built when a caller passes ``weights="random"`` explicitly, and
the metric's signature then says ``weights:random``.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Optional, Union

import torch

from gpumetrics.core.files import expand_user
from gpumetrics.core.files import file_sha256, gpumetrics_home  # noqa: F401  (re-exported: ruclip, clip_score)

RANDOM = "random"


@dataclasses.dataclass(frozen=True)
class WeightEntry:
    """One pinned weight file.

    Attributes:
        name: registry key.
        url: where the file is published.
        file_name: name of the file on disk (the same name pytorch-fid / torch hub use).
        sha256_prefix: leading hex digits of the sha256 digest carried by the file name.
        sha256: the full digest when pinned; then the whole digest is checked.
        size_bytes: the file size when pinned; a file of another size is refused before it is hashed.
        description: one line for humans.
    """

    name: str
    url: str
    file_name: str
    sha256_prefix: str
    sha256: Optional[str] = None
    size_bytes: Optional[int] = None
    description: str = ""

    @property
    def tag(self) -> str:
        """Short identity written into signatures: ``name@<hash prefix>``."""
        return f"{self.name}@{(self.sha256 or self.sha256_prefix)[:8]}"


WEIGHTS: dict[str, WeightEntry] = {}


def register_weights(entry: WeightEntry) -> WeightEntry:
    """Add a registry entry; a name can be registered once."""
    if entry.name in WEIGHTS:
        raise ValueError(f"weights {entry.name!r} are already registered")
    WEIGHTS[entry.name] = entry
    return entry


FID_INCEPTION = register_weights(
    WeightEntry(
        name="pt_inception-2015-12-05",
        url="https://github.com/mseitzer/pytorch-fid/releases/download/fid_weights/"
            "pt_inception-2015-12-05-6726825d.pth",
        file_name="pt_inception-2015-12-05-6726825d.pth",
        sha256_prefix="6726825d",
        # the digest that pytorch-fid's file name abbreviates; torch-fidelity publishes the same bytes under
        # another name (weights-inception-2015-12-05-6726825d.pth), so one pin covers both downloads
        sha256="6726825d0af5f729cebd5821db510b11b1cfad8faad88a03f1befd49fb9129b2",
        size_bytes=95_628_359,
        description="TF 2015-12-05 Inception-v3 as ported by pytorch-fid (FID/KID feature extractor)",
    )
)


def torch_hub_checkpoints() -> Path:
    """The torch hub checkpoint directory (``$TORCH_HOME/hub/checkpoints`` by default)."""
    return Path(torch.hub.get_dir()) / "checkpoints"


def candidate_paths(entry: WeightEntry) -> list[Path]:
    """Where ``resolve_weights`` looks for ``entry``'s file, in order (without the explicit path)."""
    places = []
    home = gpumetrics_home()
    if home is not None:
        places.append(home / entry.file_name)
    places.append(torch_hub_checkpoints() / entry.file_name)
    return places


def verify_file(path: Union[str, Path], entry: WeightEntry) -> str:
    """Check a file's sha256 against ``entry``; return the digest.

    Raises:
        ValueError: the size or the digest does not match the pinned size / digest (or its prefix).
    """
    size = os.path.getsize(path)
    if entry.size_bytes is not None and size != entry.size_bytes:
        raise ValueError(
            f"weights file {str(path)!r} has {size:,} bytes, expected {entry.size_bytes:,} for {entry.name!r} "
            f"({entry.url}); the file is truncated, corrupt or is not these weights (its sha256 is not checked)."
        )
    digest = file_sha256(path)
    expected = entry.sha256 or entry.sha256_prefix
    if not digest.startswith(expected):
        raise ValueError(
            f"weights file {str(path)!r} has sha256 {digest}, expected {expected}… for {entry.name!r} "
            f"({entry.url}); the file is corrupt or is not these weights. To load other weights of the same "
            "architecture on purpose, pass them as a state_dict instead."
        )
    return digest


def _not_found(entry: WeightEntry, reason: str) -> FileNotFoundError:
    places = "\n".join(f"  - {p}" for p in candidate_paths(entry))
    return FileNotFoundError(
        f"weights {entry.name!r} not found ({reason}). Download {entry.url}\n"
        f"and put it at one of:\n{places}\n"
        "(set $GPUMETRICS_HOME to choose the first place), or pass its path explicitly (`weights=PATH`)."
    )


def resolve_weights(name: str, path: Optional[Union[str, Path]] = None, download: Optional[bool] = None) -> Path:
    """Find (or download) the file of the registered weights ``name`` and check its hash.

    Args:
        name: a registry key, e.g. ``"pt_inception-2015-12-05"``.
        path: an explicit file; when given nothing else is tried. A file carrying the registry's file name must
            match the pinned hash; a file of another name is taken as the user's own weights (see ``weights_tag``).
        download: allow a download when no local copy exists. Default ``None``: only when ``$GPUMETRICS_DOWNLOAD=1``
            (offline first: a missing file is an immediate ``FileNotFoundError`` saying where to put it).

    Returns:
        Path of the file.

    Raises:
        FileNotFoundError: no local copy and no download (the message says where to put the file).
        ValueError: unknown ``name`` or a hash mismatch.

    Example:
        >>> resolve_weights("pt_inception-2015-12-05", path="/nonexistent/x.pth")
        Traceback (most recent call last):
        ...
        FileNotFoundError: weights file '/nonexistent/x.pth' does not exist
    """
    return _resolve(name, path, download)[0]


def _resolve(
    name: str, path: Optional[Union[str, Path]], download: Optional[bool]
) -> tuple[Path, Optional[str]]:
    """:func:`resolve_weights`, and the file's sha256 when it was checked (else None): hashed once per load."""
    if name not in WEIGHTS:
        raise ValueError(f"unknown weights {name!r}; known: {', '.join(sorted(WEIGHTS))}")
    entry = WEIGHTS[name]
    if path is not None:
        path = expand_user(path)
        if not path.is_file():
            raise FileNotFoundError(f"weights file {str(path)!r} does not exist")
        return path, verify_file(path, entry) if path.name == entry.file_name else None
    for candidate in candidate_paths(entry):
        if candidate.is_file():
            return candidate, verify_file(candidate, entry)
    if download is None:
        download = os.environ.get("GPUMETRICS_DOWNLOAD", "0").lower() in ("1", "true", "yes")
    if not download:
        raise _not_found(entry, "no local copy, and downloading was not asked for "
                                "(`download=True` or $GPUMETRICS_DOWNLOAD=1)")
    target = candidate_paths(entry)[0]
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        torch.hub.download_url_to_file(entry.url, str(target), hash_prefix=None, progress=True)
    except Exception as exc:  # network errors of every kind end in the same actionable message
        if target.exists():
            target.unlink()
        raise _not_found(entry, f"download failed: {exc}") from exc
    try:
        digest = verify_file(target, entry)
    except ValueError:
        target.unlink()
        raise
    return target, digest


def weights_tag(name: str, path: Union[str, Path]) -> str:
    """Identity of a weight file for signatures: the registry tag when the file's hash is the pinned one,
    ``file@<sha256[:8]>`` for any other file (the user's own or random weights saved to disk)."""
    return _tag(WEIGHTS[name], file_sha256(path))


def _tag(entry: WeightEntry, digest: str) -> str:
    if digest.startswith(entry.sha256 or entry.sha256_prefix):
        return entry.tag
    return f"file@{digest[:8]}"


def load_weights(
    name: str, path: Optional[Union[str, Path]] = None, download: Optional[bool] = None
) -> tuple[dict[str, torch.Tensor], str]:
    """``resolve_weights`` then ``torch.load`` (CPU, ``weights_only=True``).

    Returns:
        ``(state_dict, tag)`` where ``tag`` is what the metric's signature records (see ``weights_tag``).
    """
    file, digest = _resolve(name, path, download)  # a pinned file's hash was checked: not hashed again for the tag
    return read_state_dict(file), weights_tag(name, file) if digest is None else _tag(WEIGHTS[name], digest)


def read_state_dict(file: Union[str, Path], what: str = "weights file") -> dict[str, torch.Tensor]:
    """``torch.load(file)`` (CPU, ``weights_only=True``) of a state_dict; a file that is none is a ``ValueError``
    naming ``what`` and the file (``torch.load`` raises pickle, zip and torch errors that are no user error).

    Example:
        >>> import tempfile
        >>> with tempfile.NamedTemporaryFile(suffix=".pth") as f:
        ...     read_state_dict(f.name)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: weights file '...' is not a torch weight file (EOFError: unreadable)
    """
    try:
        state = torch.load(file, map_location="cpu", weights_only=True)
    except Exception as err:  # pickle, zip and torch errors of a file that is not a torch weight file
        raise ValueError(f"{what} {str(file)!r} is not a torch weight file "
                         f"({type(err).__name__}: {str(err).splitlines()[0] if str(err) else 'unreadable'})") from None
    if not isinstance(state, dict):
        raise ValueError(f"{what} {str(file)!r} does not hold a state_dict (got {type(state).__name__})")
    return state

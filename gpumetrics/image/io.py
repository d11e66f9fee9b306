"""Reading image files into uint8 tensors (for the CLI and task configs): folders, path lists, same-size batches.

One pipeline serves the ``fid`` / ``clip-score`` commands, the FID/KID/CLIP tasks and the AIJ image tasks
(:func:`same_size_batches`, :class:`ImageBatches` for several lists): files are decoded by ``workers`` processes of
a torch ``DataLoader`` — each chunk of ``batch_size`` files split into pieces the processes decode together, so a
batch is ready after a piece's decoding — prefetched, pinned when the images go to a CUDA device and copied without
blocking, so decoding overlaps the forward. The decoded pixels — and so every score — are the same whatever the
number of workers (PIL, as pytorch-fid). ``decode="nvjpeg"`` decodes JPEG files on the GPU
(``torchvision.io.decode_jpeg``, nvJPEG): faster, but its pixels are not PIL's (a different IDCT and chroma
upsampling: a few grey levels per pixel, FID about 1 % apart on 5,000 256×256 JPEGs measured on an H100), so the
signature of a run should say so; other formats still go through the workers. A file that cannot be decoded is
data, not a dead worker: each route hands back each bad file with the decoder's reason (:class:`UndecodableImage`),
and the caller raises it or, given an ``undecodable`` list, scores the sample as it sees fit (the AIJ-2022 tasks:
CLIP 0).
"""

from __future__ import annotations

import math
import os
import warnings
from pathlib import Path
from typing import Iterable, Iterator, Optional, Sequence, Union

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core.checks import check_choice, check_int
from gpumetrics.core.positions import at_position
from gpumetrics.core.warn import warn_caller
from gpumetrics.image.reading_plan import default_max_bytes_in_flight, plan_reading

#: pytorch-fid's image extensions.
IMAGE_EXTENSIONS = ("bmp", "jpg", "jpeg", "pgm", "png", "ppm", "tif", "tiff", "webp")
#: how image files become pixels: ``"pil"`` (workers, PIL, pytorch-fid's pixels) or ``"nvjpeg"`` (JPEGs on the GPU)
DECODERS = ("pil", "nvjpeg")
JPEG_EXTENSIONS = (".jpg", ".jpeg")
#: the first bytes of a JPEG file (start-of-image, then a marker): PIL's test too; others never go to nvJPEG
JPEG_SIGNATURE = b"\xff\xd8\xff"


def _named_jpeg(path: Union[str, Path]) -> bool:
    """A file ``decode="nvjpeg"`` hands to the GPU if its bytes start with :data:`JPEG_SIGNATURE` (else PIL)."""
    return str(path).lower().endswith(JPEG_EXTENSIONS)


def _dangling(path: Path) -> bool:
    """A symbolic link to nothing: listed, so that reading it names it (left out, the images were silently fewer)."""
    return path.is_symlink() and not path.exists()


def list_images(folder: Union[str, Path]) -> list[Path]:
    """Image files of a folder (not recursive), sorted by name, as pytorch-fid lists them — but with the extensions in
    any letter case (pytorch-fid's case-sensitive glob skips ``.JPG`` on Linux; docs/metrics/image.md).

    Raises:
        FileNotFoundError: the folder does not exist. NotADirectoryError: it is a file. ValueError: it holds no image.

    Example:
        >>> list_images("/nonexistent")
        Traceback (most recent call last):
        ...
        FileNotFoundError: image folder '/nonexistent' does not exist
    """
    folder = Path(folder)
    if not folder.is_dir():
        if folder.exists():
            raise NotADirectoryError(f"image folder '{folder}' is not a folder")
        raise FileNotFoundError(f"image folder '{folder}' does not exist")
    files = sorted(p for p in folder.iterdir() if p.suffix.lower().lstrip(".") in IMAGE_EXTENSIONS
                   and (p.is_file() or _dangling(p)))
    if not files:
        raise ValueError(f"image folder '{folder}' holds no image ({', '.join(IMAGE_EXTENSIONS)})")
    return files


class UndecodableImage(ValueError):
    """An image file the decoder refuses (truncated, corrupt, another format, a decompression bomb): its ``path`` and
    the decoder's ``reason``. A ``ValueError`` naming the file; it pickles whole, so a decoding process hands it back
    as data."""

    def __init__(self, path: Union[str, Path], reason: str) -> None:
        super().__init__(f"image file '{path}' cannot be decoded: {reason}")
        self.path, self.reason = str(path), reason

    def __reduce__(self) -> tuple:
        return type(self), (self.path, self.reason)


#: errors of a file that are not its content's: they keep their type (a missing file stays a FileNotFoundError)
_NOT_DECODING = (FileNotFoundError, IsADirectoryError, PermissionError, MemoryError)


def _read_rgb(path: Union[str, Path]) -> np.ndarray:
    """``uint8[H, W, 3]``: ``PIL.Image.open(path).convert("RGB")``, as pytorch-fid; errors name the file.

    Raises:
        UndecodableImage: whatever PIL raises on the file's content (``OSError``, ``SyntaxError``, a
            ``DecompressionBombError``, the odd ``struct.error`` / ``EOFError`` of a fuzzed file …).
        FileNotFoundError, IsADirectoryError, PermissionError: as ``open`` raises them.
    """
    from PIL import Image

    try:
        with Image.open(path) as image:
            return np.asarray(image.convert("RGB"))
    except _NOT_DECODING:
        raise
    except Exception as err:  # the content's fault, whatever PIL's plugin raised for it
        reason = (str(err) or type(err).__name__).replace(f" {os.fspath(path)!r}", "")  # named once, by us
        raise UndecodableImage(path, reason) from None


def _batch(arrays: Sequence[np.ndarray]) -> Tensor:
    """``uint8[b, 3, H, W]`` from ``b`` ``uint8[H, W, 3]`` arrays. numpy stacks and transposes: torch's uint8 copies
    of permuted views run single-threaded-slow and, on two threads beside busy processes, 30–50× slower still."""
    return torch.from_numpy(np.ascontiguousarray(np.stack(arrays).transpose(0, 3, 1, 2)))


def read_image(path: Union[str, Path]) -> Tensor:
    """One image file as ``Tensor[3, H, W]`` uint8 RGB (``PIL.Image.open(path).convert("RGB")``, as pytorch-fid).

    Raises:
        ValueError: the file is not an image PIL can decode (truncated, corrupt, another format), naming the file.
    """
    return _batch([_read_rgb(path)])[0]


def default_workers(cores: Optional[int] = None, device: Optional[Union[str, torch.device]] = None) -> int:
    """Decoding processes when none are asked for: the cores this process may use (``cores``, default this
    machine's), less one for the main process, at most 8 — except where the images feed a network on the CPU
    (``device`` ``None`` or a CPU) of a machine with two cores or fewer: there a worker only moves the decoding onto
    a core the forward uses (1,000 JPEGs into a trivial feature on the 2-core CPU: 1.08 s with one worker, 0.93 s in
    the main process), so none. With a CUDA ``device`` the main process mostly waits for the GPU, and one worker on
    two cores (a common cloud notebook) decodes the next batch meanwhile.

    Example:
        >>> [default_workers(cores) for cores in (1, 2, 3, 16, 64)]
        [0, 0, 2, 8, 8]
        >>> [default_workers(cores, "cuda") for cores in (1, 2, 3, 16)]
        [0, 1, 2, 8]
    """
    if cores is None:
        try:
            cores = len(os.sched_getaffinity(0))
        except AttributeError:  # not on Linux
            cores = os.cpu_count() or 1
    on_cpu = device is None or torch.device(device).type == "cpu"
    return 0 if cores <= 1 or (on_cpu and cores <= 2) else min(8, cores - 1)


def check_workers(workers: object, name: str = "workers") -> Optional[int]:
    """``None`` (:func:`default_workers`) or a count ≥ 0."""
    if workers is None:
        return None
    return check_int(workers, name, at_least=0, hint="or None")


#: ``[(index, error)]``: the files of a chunk that could not be decoded or read, with what stopped each
_Failures = list[tuple[int, Exception]]
#: ``[(index, "Category: message")]``: the Python warnings PIL issued while decoding a file
_Notes = list[tuple[int, str]]
#: the JPEG files of a piece: ``(bytes, [(index, start, end)])`` — their bytes end to end in one ``Tensor[n] uint8``
#: (one hand-over between processes: one tensor per file cost the main process ~0.3 ms a file to receive); None: none
_RawJpegs = Optional[tuple[Tensor, list[tuple[int, int, int]]]]
_Chunk = tuple[list[tuple[list[int], Tensor]], _RawJpegs, _Failures, _Notes]

#: files a decoding warning names (the count covers them all)
NAMED_NOTES = 3


def _read_rgb_noting(path: Union[str, Path], index: int, notes: _Notes) -> np.ndarray:
    """:func:`_read_rgb`, the Python warnings PIL issues meanwhile (a ``DecompressionBombWarning``, a bad EXIF or TIFF
    tag …) appended to ``notes`` as ``(index, "Category: message")`` instead of shown: in a worker process they
    would print on its stderr, past the caller's warning filters and records. The caller's filters still apply (a
    warning turned into an error still raises; an ignored one is not noted). A text is noted once per file: PIL
    repeats some (a TIFF's DecompressionBombWarning, at open and at load), and whether the repeat is caught depends
    on the filter in force in the decoding process — a worker's is the caller's at :meth:`ImageBatches.start`, and
    ``gpumetrics fid`` turns on ``"always"`` after that (``--workers 0`` named such a file twice, ``--workers 2``
    once)."""
    with warnings.catch_warnings(record=True) as caught:
        try:
            return _read_rgb(path)
        finally:
            notes.extend((index, text) for text in dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))


#: files whose headers are read (no pixels decoded) to estimate a list's decoded size: evenly spaced …
HEADER_SAMPLE = 32
#: … and the largest on disk among this many, evenly spaced, whose size is read (``os.stat``)
STAT_SAMPLE = 256
LARGEST_SAMPLED = 4


def _evenly_spaced(count: int, most: int) -> list[int]:
    """Up to ``most`` indices of ``range(count)``, first and last included, evenly spaced."""
    if count <= most:
        return list(range(count))
    return sorted({round(i * (count - 1) / (most - 1)) for i in range(most)})


def _decoded_bytes(path: Union[str, Path], raw_jpegs: bool) -> Optional[int]:
    """The bytes the reader holds for ``path`` once read, from its header alone: ``uint8 RGB`` pixels (3·W·H,
    whatever the file's mode: PIL's ``convert("RGB")``), or the file's own bytes for a JPEG decoded on the device.
    None: the header cannot be read (the file is decoded, and reported, as any other)."""
    from PIL import Image

    try:
        if raw_jpegs and _named_jpeg(path):
            with open(path, "rb") as handle:
                if handle.read(len(JPEG_SIGNATURE)) == JPEG_SIGNATURE:
                    return os.fstat(handle.fileno()).st_size
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a DecompressionBombWarning: the decoding notes it, once
            with Image.open(path) as image:
                width, height = image.size
        return 3 * width * height
    except Exception:  # whatever the file's content or absence makes PIL raise: not this estimate's to report
        return None


def decoded_bytes_per_file(lists: Sequence[Sequence[Union[str, Path]]], raw_jpegs: bool = False) -> Optional[int]:
    """The most bytes a file of ``lists`` holds once decoded, estimated from headers only (no pixels decoded): of
    :data:`HEADER_SAMPLE` files of each list, evenly spaced, and of the :data:`LARGEST_SAMPLED` largest on disk
    among :data:`STAT_SAMPLE` evenly spaced. Files whose header cannot be read (truncated, not an image, gone) are
    passed over. ``raw_jpegs``: JPEG files count their bytes on disk (``decode="nvjpeg"``: decoded on the device).

    Returns:
        The largest estimate, or None when no sampled header could be read.
    """
    estimates = []
    for paths in lists:
        picked = set(_evenly_spaced(len(paths), HEADER_SAMPLE))
        sizes = []
        for index in _evenly_spaced(len(paths), STAT_SAMPLE):
            try:
                sizes.append((os.stat(paths[index]).st_size, index))
            except (OSError, ValueError):  # a dangling link, a name the OS refuses: decoded (and named) later
                continue
        picked.update(index for _, index in sorted(sizes, reverse=True)[:LARGEST_SAMPLED])
        estimates += [_decoded_bytes(paths[index], raw_jpegs) for index in sorted(picked)]
    known = [estimate for estimate in estimates if estimate is not None]
    return max(known) if known else None


class _Pieces(torch.utils.data.Dataset):
    """Pieces of the files of several lists, decoded where the loader runs them (a worker process). ``lists[k]``
    is read in chunks of ``batch_size`` files, each chunk split into up to ``per_chunk`` pieces of consecutive
    files; a piece never spans two chunks or two lists. Item ``i`` is ``(i, piece)``, ``piece`` being
    ``(groups, raw, failed, notes)`` — ``groups``: ``[(indices, Tensor[b, 3, H, W] uint8)]`` per image size in order
    of first appearance; ``raw``: the bytes of the JPEGs the main process decodes on the GPU, in one tensor
    (:func:`_jpeg_views` splits it); ``failed``: ``[(index, error)]``, each file that could not be decoded or read (an
    :class:`UndecodableImage` or an ``OSError``), in file order; ``notes``: PIL's Python warnings per file; indices
    are positions in the piece's list. A bad file is data, not an exception: the worker goes on with the piece's other
    files, and the main process decides (raise, or score the sample 0)."""

    def __init__(self, lists: Sequence[Sequence[Union[str, Path]]], batch_size: int, per_chunk: int,
                 raw_jpegs: bool) -> None:
        self.lists, self.raw_jpegs = [list(paths) for paths in lists], raw_jpegs
        #: per piece: (list, chunk of that list, first file, end)
        self.table: list[tuple[int, int, int, int]] = []
        step = math.ceil(batch_size / per_chunk)
        for k, paths in enumerate(self.lists):
            for chunk, start in enumerate(range(0, len(paths), batch_size)):
                stop = min(start + batch_size, len(paths))
                self.table += [(k, chunk, first, min(first + step, stop)) for first in range(start, stop, step)]

    def __len__(self) -> int:
        return len(self.table)

    def __getitem__(self, piece: int) -> tuple[int, Union[_Chunk, Exception]]:
        """The piece, or an error that stopped it whole: returned, not raised, so that a worker process hands it
        back whole — the DataLoader re-raises a worker's exception with the worker's traceback pasted into its
        message."""
        try:
            return piece, self._decode(piece)
        except (ValueError, OSError) as err:
            return piece, err

    def _decode(self, piece: int) -> _Chunk:
        k, _, start, stop = self.table[piece]
        groups: dict[tuple[int, int], list[tuple[int, np.ndarray]]] = {}
        jpegs, spans, failed, notes = [], [], [], []
        end = 0
        for index, path in enumerate(self.lists[k][start:stop], start):
            try:
                named_jpeg = self.raw_jpegs and _named_jpeg(path)
                data = Path(path).read_bytes() if named_jpeg else b""
                if data.startswith(JPEG_SIGNATURE):
                    jpegs.append(data)
                    spans.append((index, end, end + len(data)))
                    end += len(data)
                else:  # not JPEG bytes whatever the name says (a PNG named .jpg, an empty file): PIL decodes it
                    array = _read_rgb_noting(path, index, notes)
                    groups.setdefault(array.shape[:2], []).append((index, array))
            except (ValueError, OSError) as err:
                failed.append((index, err))
        stacked = [([i for i, _ in items], _batch([a for _, a in items])) for items in groups.values()]
        if not jpegs:  # None, not an empty tensor: nothing for the loader to pin
            return stacked, None, failed, notes
        data = torch.frombuffer(bytearray(b"".join(jpegs)), dtype=torch.uint8)  # frombuffer needs a writable buffer
        return stacked, (data, spans), failed, notes


class _LiveOrder(torch.utils.data.Sampler):
    """The pieces in order, less those of the lists in ``skipped`` — read as each piece is handed out (the loader
    draws from its sampler in the main process, as pieces are consumed), so a list skipped after the start (a
    feature-cache hit) stops being decoded."""

    def __init__(self, owners: Sequence[int], skipped: set[int]) -> None:
        self.owners, self.skipped = owners, skipped

    def __len__(self) -> int:
        return len(self.owners)

    def __iter__(self) -> Iterator[int]:
        return (i for i, owner in enumerate(self.owners) if owner not in self.skipped)


def _deaths_as_os_errors(loader: Iterable) -> Iterator:
    """``loader``'s items; a decoding process that died (killed by the OS: out of memory, most often) is an
    ``OSError`` naming the likely cause (torch's ``RuntimeError`` would end a command with a traceback)."""
    items = iter(loader)
    while True:
        try:
            item = next(items)
        except StopIteration:
            return
        except RuntimeError as err:
            if not str(err).startswith("DataLoader worker"):
                raise
            raise OSError(f"an image-decoding process ended unexpectedly ({' '.join(str(err).split())}): out of "
                          "memory? Fewer `workers` (or smaller images) need less") from None
        yield item


def _as_is(chunk: tuple) -> tuple:
    """The DataLoader's collate function: a chunk is already batched (a module-level function, so it pickles)."""
    return chunk


def _decode_jpegs_on(
    device: torch.device, paths: Sequence[Union[str, Path]], raw: list[tuple[int, Tensor]]
) -> tuple[list[tuple[list[int], Tensor]], _Failures]:
    """``raw`` JPEG bytes decoded on ``device``: ``([(indices, Tensor[b, 3, H, W] uint8)] per image size, failed)``.

    The files go to the decoder together; when it refuses the batch, each file is decoded alone, so that
    ``failed`` (``[(index, UndecodableImage)]``) names exactly the files it cannot decode and the others keep
    their pixels. Running out of device memory is not a file's fault and is raised."""
    from torchvision.io import ImageReadMode, decode_jpeg

    if not raw:
        return [], []
    failed: _Failures = []
    try:
        decoded = decode_jpeg([data for _, data in raw], mode=ImageReadMode.RGB, device=device)
        kept = [index for index, _ in raw]
    except torch.cuda.OutOfMemoryError:
        raise
    except (RuntimeError, ValueError):
        kept, decoded = [], []
        for index, data in raw:
            try:
                decoded.append(decode_jpeg(data, mode=ImageReadMode.RGB, device=device))
                kept.append(index)
            except torch.cuda.OutOfMemoryError:
                raise
            except (RuntimeError, ValueError) as err:
                reason = f"decode='nvjpeg': {' '.join(str(err).split())}"
                failed.append((index, UndecodableImage(paths[index], reason)))
    groups: dict[tuple[int, int], list[tuple[int, Tensor]]] = {}
    for index, image in zip(kept, decoded):
        groups.setdefault(tuple(image.shape[1:]), []).append((index, image))
    return [([i for i, _ in items], torch.stack([image for _, image in items])) for items in groups.values()], failed


def check_reading_options(workers: object, decode: object) -> None:
    """The checks of the image-reading options every image-file metric takes (``workers``, ``decode``); raises
    ``ValueError`` naming the option."""
    check_workers(workers)
    check_choice(decode, "decode", DECODERS)


def decode_signature(decode: str) -> dict[str, str]:
    """The signature field of a decoder: nothing for PIL (the parity pixels), ``{"decode": "nvjpeg"}`` otherwise (its
    pixels differ from PIL's, so scores are not comparable)."""
    return {} if decode == "pil" else {"decode": decode}


def same_size_batches(
    paths: Sequence[Union[str, Path]],
    batch_size: int,
    *,
    workers: Optional[int] = 0,
    decode: str = "pil",
    device: Optional[Union[str, torch.device]] = None,
    undecodable: Optional[list[tuple[int, Exception]]] = None,
    max_bytes_in_flight: Optional[int] = None,
) -> Iterator[tuple[list[int], Tensor]]:
    """Read ``paths`` in chunks of ``batch_size`` and yield ``(indices, Tensor[b, 3, H, W] uint8)`` per image size.

    Images of one size (the usual case for generated images) form one batch; mixed sizes are split by size, in
    order of first appearance within the chunk. The batches are the same whatever ``workers`` is.

    Args:
        paths: image files, read in this order.
        batch_size: files per chunk.
        workers: decoding processes (``None``: :func:`default_workers` for ``device``; 0: the calling process).
            More than one chunk is needed for workers to start.
        decode: ``"pil"`` (default, pytorch-fid's pixels) or ``"nvjpeg"`` (JPEG files — by their bytes — decoded on
            ``device``, a CUDA device; other formats as ``"pil"``).
        device: where the batches go (pinned and copied without blocking for CUDA); ``None``: stay on the CPU.
        undecodable: ``None`` (default): the first file that cannot be decoded or read stops the reading (raised).
            A list: such a file is left out of the batches and ``(index, error)`` appended to the list instead
            (an :class:`UndecodableImage` — ``path`` and the decoder's ``reason`` — or the ``OSError`` of a file
            gone or unreadable), in file order, as the batches are yielded.
        max_bytes_in_flight: the most bytes of decoded pixels the processes decode ahead, with the chunk being
            joined (``None``: :func:`~gpumetrics.image.reading_plan.default_max_bytes_in_flight`, an eighth of the
            memory, at most 2 GiB); the batches do not depend on it.

    Raises:
        UndecodableImage: a file that cannot be decoded (naming it; a ``ValueError`` tagged with its index in
            ``paths``, :func:`gpumetrics.core.positions.batch_position`), unless ``undecodable`` is given.
            ValueError: a bad option, ``decode="nvjpeg"`` without a CUDA ``device``.

    Warns:
        UserWarning: when ``batch_size`` decoded files alone are estimated to exceed ``max_bytes_in_flight``.
            Once, after the last batch, when PIL warned while decoding (naming the first files and what
            it said), whichever process decoded them.

    Example:
        >>> import tempfile, pathlib
        >>> from PIL import Image
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> for i, size in enumerate([(8, 6), (8, 6), (5, 5)]):
        ...     Image.new("RGB", size).save(folder / f"{i}.png")
        >>> [(indices, tuple(batch.shape)) for indices, batch in same_size_batches(list_images(folder), 3)]
        [([0, 1], (2, 3, 6, 8)), ([2], (1, 3, 5, 5))]
    """
    with ImageBatches([paths], batch_size, workers=workers, decode=decode, device=device,
                      max_bytes_in_flight=max_bytes_in_flight) as reader:
        yield from reader.batches(0, undecodable)


class ImageBatches:
    """Same-size batches of several lists of image files, decoded by one set of processes: what
    :func:`same_size_batches` does for one list, for the lists of a run (the two folders of ``gpumetrics fid``)
    with the processes started once and the next list's first batches decoded while the network runs the end of
    the previous one. Decoding begins at :meth:`start` (or the first :meth:`batches`): start it before building the
    network, and the first batches are decoded meanwhile.

    Each chunk of ``batch_size`` files of a list is decoded in pieces by up to ``workers`` processes together
    (:func:`~gpumetrics.image.reading_plan.pieces_per_chunk`), then joined — on the device, for a CUDA one — into
    the batches :func:`same_size_batches` documents: the same batches, bit for bit, whatever ``workers`` is. Up to
    two chunks per process are decoded ahead — fewer, in smaller pieces or by fewer processes (:attr:`plan`,
    :func:`~gpumetrics.image.reading_plan.plan_reading`) where that would hold more than ``max_bytes_in_flight`` of
    decoded pixels, as estimated from the headers of a sample of the files before the processes start
    (:func:`decoded_bytes_per_file`).

    Args:
        lists: lists of image files; read in this order, each with :meth:`batches` or passed over with :meth:`skip`.
        batch_size, workers, decode, device, max_bytes_in_flight: as :func:`same_size_batches` (more than one chunk
            in all is needed for workers to start).

    Attributes:
        plan: the :class:`~gpumetrics.image.reading_plan.ReadingPlan` (processes, pieces per chunk, pieces decoded
            ahead per process).

    Raises:
        ValueError: a bad option, ``decode="nvjpeg"`` without a CUDA ``device``.

    Warns:
        UserWarning: once, when ``batch_size`` decoded files alone are estimated to hold more than
            ``max_bytes_in_flight`` (naming the batch size and the estimate).

    Example:
        >>> import tempfile, pathlib
        >>> from PIL import Image
        >>> folders = [pathlib.Path(tempfile.mkdtemp()) for _ in range(2)]
        >>> for folder, size in zip(folders, [(8, 6), (5, 5)]):
        ...     Image.new("RGB", size).save(folder / "0.png")
        >>> with ImageBatches([list_images(folder) for folder in folders], 3) as reader:
        ...     reader.skip(0)
        ...     [(indices, tuple(batch.shape)) for indices, batch in reader.batches(1)]
        [([0], (1, 3, 5, 5))]
    """

    def __init__(
        self,
        lists: Sequence[Sequence[Union[str, Path]]],
        batch_size: int,
        *,
        workers: Optional[int] = 0,
        decode: str = "pil",
        device: Optional[Union[str, torch.device]] = None,
        max_bytes_in_flight: Optional[int] = None,
    ) -> None:
        check_reading_options(workers, decode)
        self.target = torch.device(device) if device is not None else None
        workers = default_workers(device=self.target) if workers is None else workers
        if decode == "nvjpeg" and (self.target is None or self.target.type != "cuda"):
            raise ValueError(f"`decode` 'nvjpeg' decodes on a CUDA device; the images go to {self.target or 'the CPU'}")
        self.decode = decode
        if max_bytes_in_flight is None:
            max_bytes_in_flight = default_max_bytes_in_flight()
        check_int(max_bytes_in_flight, "max_bytes_in_flight", at_least=1, hint="or None")
        if sum(math.ceil(len(paths) / batch_size) for paths in lists) < 2:
            workers = 0  # one chunk: nothing to overlap, and starting processes costs more than it saves
        estimate = decoded_bytes_per_file(lists, decode == "nvjpeg") if workers else None
        self.plan = plan_reading(batch_size, workers, estimate, max_bytes_in_flight)
        if estimate is not None and batch_size * estimate > max_bytes_in_flight:
            warn_caller(f"a batch of {batch_size} images holds about {_size(batch_size * estimate)} decoded (the "
                        f"largest of the files sampled: {_size(estimate)}), more than the "
                        f"{_size(max_bytes_in_flight)} the reader may hold in flight (`max_bytes_in_flight`): one "
                        "process decodes one file ahead; a smaller batch size (--batch-size) needs less memory")
        self._pieces = _Pieces(lists, batch_size, self.plan.pieces_per_chunk, raw_jpegs=decode == "nvjpeg")
        self.workers = min(self.plan.workers, len(self._pieces))  # a process per piece at most: more would sit idle
        self._last_piece: dict[int, int] = {k: i for i, (k, *_) in enumerate(self._pieces.table)}
        self._skipped: set[int] = set()
        self._next_list = 0
        self._pending: Optional[tuple[int, Union[_Chunk, Exception]]] = None
        self._loader: Optional[Iterator] = None
        self._items: Optional[Iterator] = None

    @property
    def lists(self) -> list[list[Union[str, Path]]]:
        """The lists of files, in order."""
        return self._pieces.lists

    def start(self) -> "ImageBatches":
        """Start decoding (the worker processes, with ``workers``); again: nothing."""
        if self._items is None:
            order = _LiveOrder([k for k, *_ in self._pieces.table], self._skipped)
            if self.workers:
                self._loader = iter(torch.utils.data.DataLoader(
                    self._pieces, batch_size=None, sampler=order, num_workers=self.workers,
                    pin_memory=self.target is not None and self.target.type == "cuda",
                    prefetch_factor=self.plan.prefetch, collate_fn=_as_is,
                ))
                self._items = _deaths_as_os_errors(self._loader)
            else:  # in this process: no loader, so no seed drawn (a host read) and nothing to start
                self._items = (self._pieces[i] for i in order)
        return self

    def close(self) -> None:
        """Stop decoding: the worker processes end (also on leaving a ``with`` block)."""
        self._items = self._pending = None
        loader, self._loader = self._loader, None
        shutdown = getattr(loader, "_shutdown_workers", None)
        if shutdown is not None:
            shutdown()

    def __enter__(self) -> "ImageBatches":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _take_list(self, k: int) -> None:
        if k != self._next_list:
            raise ValueError(f"the lists are read in order: list {self._next_list} is next, not {k}")
        self._next_list = k + 1

    def skip(self, k: int) -> None:
        """Pass over list ``k`` (the next one) without reading it: its pieces not yet handed out are not decoded."""
        self._take_list(k)
        self._skipped.add(k)

    def _pieces_of(self, k: int) -> Iterator[tuple[int, Union[_Chunk, Exception]]]:
        """The decoded pieces of list ``k`` in order; those of skipped lists before it are dropped."""
        last = self._last_piece.get(k)
        while last is not None and self._items is not None:
            item, self._pending = self._pending, None
            if item is None:
                item = next(self._items, None)
                if item is None:
                    return
            owner = self._pieces.table[item[0]][0]
            if owner > k:
                self._pending = item
                return
            if owner == k:
                yield item
                if item[0] == last:
                    return

    def batches(self, k: int, undecodable: Optional[list[tuple[int, Exception]]] = None
                ) -> Iterator[tuple[list[int], Tensor]]:
        """``(indices, Tensor[b, 3, H, W] uint8)`` of list ``k`` (the next one), as :func:`same_size_batches`
        yields them for that list alone (``undecodable``, the raised errors and the warning too); indices are
        positions in list ``k``."""
        self._take_list(k)
        self.start()
        paths, table = self._pieces.lists[k], self._pieces.table
        notes: _Notes = []
        pieces: list[_Chunk] = []
        for piece, payload in self._pieces_of(k):
            if isinstance(payload, Exception):
                raise payload
            pieces.append(payload)
            if piece + 1 == len(table):
                self.close()  # the last piece is in: the processes end while the device runs the previous batch
            elif table[piece + 1][:2] == table[piece][:2]:
                continue  # more pieces of this chunk to come
            groups, raw, failed, more_notes = _joined(pieces, self.target)
            pieces = []
            notes += more_notes
            if self.decode == "nvjpeg":
                on_device, refused = _decode_jpegs_on(self.target, paths, raw)
                groups += on_device
                failed = sorted(failed + refused, key=lambda item: item[0])
            if failed:
                if undecodable is None:
                    raise at_position(failed[0][1], failed[0][0])
                undecodable.extend(failed)
            yield from groups
        _warn_decoding_notes(paths, notes)


def _jpeg_views(raw: _RawJpegs) -> list[tuple[int, Tensor]]:
    """``[(index, Tensor[n] uint8)]``: each JPEG file's bytes, a view of the piece's one tensor."""
    if raw is None:
        return []
    data, spans = raw
    return [(index, data[start:end]) for index, start, end in spans]


def _joined(
    pieces: Sequence[_Chunk], target: Optional[torch.device]
) -> tuple[list[tuple[list[int], Tensor]], list[tuple[int, Tensor]], _Failures, _Notes]:
    """The pieces of a chunk as one: groups of one image size joined in order of first appearance (on ``target``
    when given: each piece is copied there without blocking, then joined there), the JPEG files' bytes as
    ``[(index, Tensor[n] uint8)]``, the rest concatenated."""
    sizes: dict[tuple[int, ...], tuple[list[int], list[Tensor]]] = {}
    raw, failed, notes = [], [], []  # raw: [(index, Tensor[n] uint8)] of the JPEG files
    for groups, jpegs, more_failed, more_notes in pieces:
        for indices, images in groups:
            entry = sizes.setdefault(tuple(images.shape[2:]), ([], []))
            entry[0].extend(indices)
            entry[1].append(images if target is None else images.to(target, non_blocking=True))
        raw += _jpeg_views(jpegs)
        failed += more_failed
        notes += more_notes
    joined = [(indices, parts[0] if len(parts) == 1 else torch.cat(parts)) for indices, parts in sizes.values()]
    return joined, raw, failed, notes


def _size(count: int) -> str:
    """Bytes for a message: ``"1.8 GB"``, ``"36 MB"``."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.2g} {unit}" if count < 10 * scale else f"{count / scale:.0f} {unit}"
    return f"{count} bytes"


def _warn_decoding_notes(paths: Sequence[Union[str, Path]], notes: _Notes) -> None:
    """One warning for PIL's warnings while decoding ``paths`` (from this process or a worker): how many files, and
    the first :data:`NAMED_NOTES` with what PIL said."""
    if not notes:
        return
    files = list(dict.fromkeys(index for index, _ in notes))
    named = "; ".join(f"'{paths[index]}': {text}" for index, text in notes if index in files[:NAMED_NOTES])
    more = ", …" if len(files) > NAMED_NOTES else ""
    warn_caller(f"PIL warned while decoding {len(files)} image file(s) ({named}{more})")

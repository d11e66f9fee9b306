"""Strings to flat integer rows without per-string work on the host: code points, and words on the device.

Two encodings of a batch of ``B`` strings, both joined in blocks of ``_ENCODE_BLOCK`` strings and fixed-width
encoded, each block in the narrowest width that holds it (its CPython storage kind: 1, 2 or 4 bytes a symbol):

* :func:`encode_chars_blocks` (:func:`encode_chars_flat`: concatenated) — the code points and the host's
  ``int64[B]`` lengths. For kernels planned on the host (the CPU tensor kernel). The lengths are one ``len`` per
  string, read block by block while the block's strings are in cache.
* :func:`stage_separated` / :func:`stage_pairs_separated` — the code points with a ``0`` after every string and
  nothing else, written block by block straight into the staging buffers of the upload (pinned for CUDA) while
  each joined block is in cache: no block is kept for a later concatenation (keeping them — fresh memory, faulted
  in — and copying them once more cost as much as the joins), and UCS-4 text is copied once, by numpy, from the
  joined string into the buffer. Each block keeps its own width there, so one astral character makes its block, not
  the upload, four bytes a symbol. :func:`upload_staged` sends the bytes and reads them on the device in their
  blocks' widths (a view when all share one). The rows are then found where the values are, by
  :func:`rows_from_separators` (no host sync), and :func:`split_words` tokenises them there as ``str.split()``
  does, so word error rates need no ``split`` on the host either (~1 µs a sentence: most of a CPU WER). Host share
  on the 2-core CPU: ``edit_encode_separated``, ``wer_encode_separated`` (BENCHMARKS.md); the joins are most of it.
  A string holding ``"\\0"`` cannot be told from a separator: staging returns ``None`` and the caller takes the other
  encoding. UTF-8 would send fewer bytes for mixed text but was slower on the host: CPython encodes UCS-4 strings
  to UTF-8 character by character (102 ms for the 23 M symbols of 500,000 short pairs, vs 58 ms for the code
  points, indicative).

For callers that want tensors at once: :func:`encode_chars_ragged` (flat values + offsets on a device),
:func:`encode_chars` and :func:`encode_words` (padded ``[B, L]`` with lengths, padded on the device), all through
:func:`upload_rows` (two uploads).

Word ids by content on the device: every word is hashed from its ``(position, code point)`` items (a 64-bit mix,
summed over the word by one prefix sum), words with equal hashes get one id, and each word is then compared symbol
by symbol with its class's first word, so the ids are exact: a hash collision is reported, never absorbed
(``split_words`` returns a flag; callers fall back to host ids). One host sync reads that flag.
"""

from __future__ import annotations

import sys
import warnings
from typing import Iterator, NamedTuple, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core.checks import check_device
from gpumetrics.core.transfer import staging_buffer, upload, upload_concatenated
from gpumetrics.kernels.ragged import pad_segments

__all__ = ["encode_chars_flat", "encode_chars_blocks", "Staged", "stage_separated", "stage_pairs_separated",
           "upload_staged", "rows_from_separators", "split_words", "upload_code_points", "upload_rows", "encode_chars",
           "encode_chars_ragged", "encode_words", "WHITESPACE"]

_ENCODE_BLOCK = 2048  # strings joined per block: a block stays in cache, one join of a large batch page-faults

# the characters str.split() (and str.isspace) splits on; none lies above U+3000 (test)
WHITESPACE = (*range(0x09, 0x0E), *range(0x1C, 0x21), 0x85, 0xA0, 0x1680, *range(0x2000, 0x200B), 0x2028, 0x2029,
              0x202F, 0x205F, 0x3000)


def encode_chars_flat(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Code points of all strings in one flat host array, and the strings' lengths: no per-sample work.

    :func:`encode_chars_blocks` concatenated into the widest block's dtype (callers that upload pass the blocks to
    :func:`upload_rows` instead: the upload's staging copy is then the only one).

    Args:
        texts: ``B`` strings.

    Returns:
        ``(values, lengths)``: ``uint8|uint16|uint32[T]`` code points (``T`` = total length) and ``int64[B]``.

    Example:
        >>> values, lengths = encode_chars_flat(["ab", "é"])
        >>> values.tolist(), lengths.tolist()
        ([97, 98, 233], [2, 1])
    """
    blocks, lengths = encode_chars_blocks(texts)
    if len(blocks) == 1:
        return blocks[0], lengths
    return (np.concatenate(blocks) if blocks else np.zeros(0, dtype=np.uint8)), lengths


def encode_chars_blocks(texts: Sequence[str]) -> tuple[list[np.ndarray], np.ndarray]:
    """Code points of all strings in blocks, and the strings' lengths: no per-sample Python frame.

    The strings are joined in blocks of ``_ENCODE_BLOCK`` and each block is encoded once in the narrowest fixed-width
    encoding that holds it (its CPython storage kind: ASCII / Latin-1 → ``uint8``, BMP → ``uint16`` via UTF-16 with
    ``surrogatepass``, else ``uint32``). Blocks, not one join: a joined batch of tens of MB is a fresh allocation
    whose page faults cost more than the encoding, while a block stays in cache. The lengths of a block's strings are
    read right after its join, while those string objects are in cache (500,000 strings of 5–40 characters incl.
    astral ones on the 2-core VM: lengths in a pass of their own 46 ms, blocks 30 ms; both in one pass 45 ms; read
    before the join 54 ms).

    Args:
        texts: ``B`` strings.

    Returns:
        ``(blocks, lengths)``: ``uint8|uint16|uint32`` arrays whose concatenation holds the ``T`` code points (each
        block in its own width; none for ``B = 0``) and ``int64[B]`` lengths.

    Example:
        >>> blocks, lengths = encode_chars_blocks(["ab", "é"])
        >>> [block.tolist() for block in blocks], lengths.tolist()
        ([[97, 98, 233]], [2, 1])
    """
    lengths = np.empty(len(texts), dtype=np.int64)
    blocks = []
    for start in range(0, len(texts), _ENCODE_BLOCK):
        strings = texts[start:start + _ENCODE_BLOCK]
        joined = "".join(strings)  # first: the join brings the strings' objects into cache for the lengths
        lengths[start:start + len(strings)] = np.fromiter(map(len, strings), dtype=np.int64, count=len(strings))
        blocks.append(_code_points(joined))
    return blocks, lengths


class Staged(NamedTuple):
    """Separated code points (:func:`stage_separated`) in host buffers, ready for :func:`upload_staged`.

    Attributes:
        buffers: ``uint8`` host tensors (pinned for CUDA) whose concatenation holds the blocks' bytes.
        table: ``int64[3, K]``: each block's first symbol, first byte (in the concatenation) and width (1, 2, 4).
        symbols: ``T + B``, the number of values (code points and separators).
    """

    buffers: list[Tensor]
    table: np.ndarray
    symbols: int


class _Stager:
    """Blocks of separated code points written one after another into host buffers (:func:`staging_buffer`: pinned
    for CUDA), each block in its own width (its CPython storage kind) at an offset aligned to it, so that a block of
    one byte per symbol stays so beside an astral one. A block that does not fit begins a new buffer, sized for the
    ``blocks_left`` still to come at the mean block size so far (at most ``cap`` bytes unless the block is larger).
    """

    def __init__(self, device: torch.device, blocks_left: int, cap: Optional[int] = None):
        self.device, self.blocks_left, self.cap = device, blocks_left, cap
        self.buffers: list[tuple[Tensor, np.ndarray]] = []
        self.used = 0  # bytes of the last buffer
        self.blocks: list[tuple[int, int, int, int]] = []  # (symbols, buffer, byte offset in it, width) per block
        self.total = 0  # bytes of all blocks

    def write(self, joined: str, count: int) -> bool:
        """Stage one block: ``count`` strings joined with ``"\\0"``, and a ``0`` after the last. False (the block
        half-written) when the block holds another ``"\\0"``: its rows could not be told apart."""
        size = len(joined) + 1
        points = _code_points(joined) if joined.isascii() or _storage_kind(joined) < 4 else None
        width = 4 if points is None else points.itemsize
        nbytes = size * width
        at = -(-self.used // width) * width
        if not self.buffers or at + nbytes > self.buffers[-1][1].size:
            self._begin(nbytes)
            at = 0
        host = self.buffers[-1][1]
        if points is None:  # UCS-4: numpy copies the code points (lone surrogates too) straight in, and pads a 0
            np.ndarray((), f"<U{size}", host, at)[()] = joined
            view = host[at:at + nbytes].view(np.uint32)
        else:  # narrow kinds: their encoded bytes (a memcpy-speed encoding), or the UCS-4 copy of a misread kind
            view = host[at:at + nbytes].view(points.dtype)
            view[:-1] = points
            view[-1] = 0
        self.blocks.append((size, len(self.buffers) - 1, at, width))
        self.used = at + nbytes
        self.total += nbytes
        self.blocks_left -= 1
        return size - int(np.count_nonzero(view)) == count

    def _begin(self, nbytes: int) -> None:
        mean = (self.total + nbytes) / (len(self.blocks) + 1)
        size = int(mean * max(self.blocks_left, 1) * 1.0625) + 64  # a margin: the blocks' sizes vary a little
        size = max(nbytes, min(size, self.cap) if self.cap is not None else size)
        buffer = staging_buffer(size, np.uint8, self.device)
        if self.buffers:
            self.buffers[-1] = (self.buffers[-1][0][:self.used], self.buffers[-1][1])
        self.buffers.append((buffer, buffer.numpy()))
        self.used = 0


def _staged(*stagers: _Stager) -> Staged:
    """The stagers' blocks one after another: their buffers (each cut to its used bytes) and one table."""
    buffers, rows, symbols, base = [], [], 0, 0
    for stager in stagers:
        if stager.buffers:
            stager.buffers[-1] = (stager.buffers[-1][0][:stager.used], stager.buffers[-1][1])
        starts = []
        for buffer, _ in stager.buffers:
            starts.append(base)
            base += buffer.shape[0]
            buffers.append(buffer)
        for size, index, at, width in stager.blocks:
            rows.append((symbols, starts[index] + at, width))
            symbols += size
    table = np.array(rows, dtype=np.int64).T.reshape(3, len(rows))
    return Staged(buffers, table, symbols)


def stage_separated(texts: Sequence[str], device: torch.device | str | None = None) -> Optional[Staged]:
    """Code points of all strings, each string followed by a ``0``, staged on the host for ``device`` (pinned buffers
    for CUDA) in blocks of ``_ENCODE_BLOCK`` strings, each block in its own width; ``None`` when a string contains
    ``"\\0"`` (its rows could not be told apart).

    No length is taken on the host: :func:`rows_from_separators` finds the rows where :func:`upload_staged` puts the
    values. Each block is joined and copied into the staging buffer at once (the only copy of UCS-4 text), while it
    is in cache; the ``"\\0"`` check reads it there.

    Example:
        >>> upload_staged(stage_separated(["ab", "", "é"])).tolist()
        [97, 98, 0, 0, 233, 0]
        >>> stage_separated(["a\\0b"]) is None
        True
    """
    device = check_device(device, "device")
    chunks = list(_staged_chunks([texts], sys.maxsize, device))
    if not chunks:
        return _staged(_Stager(device, 0))
    return None if chunks[-1] is None else chunks[0][1]


def stage_pairs_separated(a: Sequence[str], b: Sequence[str], max_symbols: int,
                          device: torch.device | str | None = None) -> Iterator[Optional[tuple[int, Staged]]]:
    """Both sides of ``B`` pairs as :func:`stage_separated`, in chunks of consecutive pairs for a bounded device pass,
    staged one chunk at a time (a generator: the device works on a chunk while the host stages the next). Each chunk
    is ``(n, staged)``: its ``n`` pairs' ``a`` strings then their ``b`` strings, so that rows ``0..n-1`` are the
    ``a`` side and ``n..2n-1`` the ``b`` side. A chunk holds at most ``max_symbols`` values (separators included)
    unless one block of each side alone is larger. At a string containing ``"\\0"`` it yields ``None`` and stops.

    Example:
        >>> [(n, upload_staged(staged).tolist()) for n, staged in stage_pairs_separated(["ab"], ["c"], 100)]
        [(1, [97, 98, 0, 99, 0])]
    """
    return _staged_chunks([a, b], max_symbols, check_device(device, "device"))


def _staged_chunks(sides: Sequence[Sequence[str]], max_symbols: int,
                   device: torch.device) -> Iterator[Optional[tuple[int, Staged]]]:
    """The one staging loop: blocks of ``_ENCODE_BLOCK`` strings of every side (same lengths), joined with
    separators and written by a stager per side, cut into chunks of at most ``max_symbols`` values (a block of every
    side at least); ``(strings per side, staged)`` per chunk, its sides one after another, or ``None`` (then stop) at
    a string containing ``"\\0"``."""
    blocks = -(-len(sides[0]) // _ENCODE_BLOCK)
    stagers: Optional[list[_Stager]] = None
    first = held = 0
    for index in range(blocks):
        start = index * _ENCODE_BLOCK
        strings = [side[start:start + _ENCODE_BLOCK] for side in sides]
        joined = ["\0".join(block) for block in strings]
        size = sum(map(len, joined)) + len(joined)
        if stagers is not None and held + size > max_symbols:
            yield start - first, _staged(*stagers)
            stagers = None
        if stagers is None:
            expected = min(blocks - index, max_symbols // size + 1)  # the blocks this chunk will hold, about
            cap = 4 * max_symbols if max_symbols < sys.maxsize else None
            stagers = [_Stager(device, expected, cap) for _ in sides]
            first, held = start, 0
        held += size
        if not all(stager.write(text, len(block)) for stager, text, block in zip(stagers, joined, strings)):
            yield None
            return
    if stagers is not None:
        yield len(sides[0]) - first, _staged(*stagers)


def upload_staged(staged: Staged, device: torch.device | str | None = None) -> Tensor:
    """Staged code points (:func:`stage_separated`) as ``IntTensor[T + B]`` on ``device``, without a host sync: the
    buffers travel as bytes (one non-blocking copy each, one more for the table when the widths differ) and are
    read there in their blocks' widths.

    Example:
        >>> upload_staged(stage_separated(["a", "😀"])).tolist()
        [97, 0, 128512, 0]
    """
    device = check_device(device, "device")
    if staged.symbols == 0:
        return torch.zeros(0, dtype=torch.int32, device=device)
    parts = [upload(buffer, device) for buffer in staged.buffers]
    data = parts[0] if len(parts) == 1 else torch.cat(parts)
    widths = np.unique(staged.table[2])
    if widths.size == 1:  # one width: the blocks lie back to back (no alignment gaps), a view of the bytes
        width = int(widths[0])
        return data.int() if width == 1 else data.view(torch.int16).int() & 0xFFFF if width == 2 else \
            data.view(torch.int32)
    symbol_starts, byte_starts, block_widths = upload(staged.table, device)
    position = torch.arange(staged.symbols, device=device)
    block = torch.searchsorted(symbol_starts, position, right=True) - 1
    width = block_widths[block]
    at = byte_starts[block] + (position - symbol_starts[block]) * width
    values = data[at].int()
    last = data.shape[0] - 1
    for byte in (1, 2, 3):  # little-endian: UTF-16-LE / numpy's UCS-4
        values |= torch.where(width > byte, data[(at + byte).clamp(max=last)].int() << (8 * byte), 0)
    return values


def _code_points(text: str) -> np.ndarray:
    """The code points of one string in its storage width: ``uint8``, ``uint16`` or ``uint32[len(text)]``
    (a read-only view of the encoded bytes for the narrow kinds)."""
    if text.isascii():
        return np.frombuffer(text.encode("ascii"), dtype=np.uint8)
    kind = _storage_kind(text)
    if kind == 1:
        try:
            return np.frombuffer(text.encode("latin-1"), dtype=np.uint8)
        except UnicodeEncodeError:  # the size arithmetic misread this string: take the wider encodings
            kind = 2
    if kind == 2:
        data = text.encode("utf-16-le", "surrogatepass")
        if len(data) == 2 * len(text):  # no astral character (each would take two code units)
            return np.frombuffer(data, dtype=np.uint16)
    # UCS-4: numpy copies the string's code points into a fixed-width unicode item as they are (lone surrogates
    # included), ~3× faster than the UTF-32 codec (indicative: 9 vs 25 ms for 11 M characters)
    return np.array([text]).view(np.uint32)[: len(text)]


def _compact_header() -> Optional[int]:
    """The bytes of a compact non-ASCII CPython string besides its ``(len + 1) × kind`` character bytes, read off
    fresh strings of each kind and length (72 on CPython 3.11, 56 on 3.12–3.13); ``None`` where the sizes do not
    follow that layout (another interpreter), so that :func:`_storage_kind` answers 4 (always correct). One-character
    strings are not asked: from 3.12 the Latin-1 ones are static singletons whose size reads differently."""
    headers = {sys.getsizeof(char * length) - (length + 1) * kind
               for kind, char in ((1, "\xe9"), (2, "\u4e2d"), (4, "\U0001f600")) for length in (2, 3, 9)}
    return headers.pop() if len(headers) == 1 else None


_COMPACT_HEADER = _compact_header()


def _storage_kind(text: str) -> int:
    """Bytes per character of a non-ASCII string's storage (1, 2 or 4; 4 when it cannot be told)."""
    if _COMPACT_HEADER is None:
        return 4
    kind, rest = divmod(sys.getsizeof(text) - _COMPACT_HEADER, len(text) + 1)
    return kind if rest == 0 and kind in (1, 2) else 4


def upload_code_points(values: np.ndarray | Sequence[np.ndarray], device: torch.device,
                       narrow_on_cpu: bool = False) -> Tensor:
    """Host code points (``uint8|uint16|uint32``) or ids (``int64``), one array or blocks of any widths, as ONE
    tensor on ``device``: they travel in the widest block's narrow dtype (``uint8``, the bits of ``uint16`` /
    ``uint32``; :func:`gpumetrics.core.transfer.upload_concatenated`) and are widened there to ``int32`` (int64
    stays int64). ``narrow_on_cpu``: the caller only reads the result and gathers (widening) itself, so on the CPU
    one array of one-byte text stays a view of the encoded bytes.

    Returns:
        ``IntTensor[T]`` (``LongTensor[T]`` for int64 input; ``uint8`` on the CPU with ``narrow_on_cpu``). On the CPU
        the result may share a (read-only) host buffer only with ``narrow_on_cpu``.
    """
    blocks = [values] if isinstance(values, np.ndarray) else list(values)
    dtype = np.result_type(*blocks) if blocks else np.dtype(np.uint8)
    if device.type == "cpu" and len(blocks) == 1:  # no staging copy: a view, widened (copied) below if needed
        array = blocks[0].view(np.int16) if dtype == np.uint16 else blocks[0].view(np.int32) \
            if dtype == np.uint32 else blocks[0]
        with warnings.catch_warnings():  # a read-only view of the encoded bytes: never written (cloned below)
            warnings.simplefilter("ignore", UserWarning)
            host = torch.from_numpy(array)
    else:
        host = upload_concatenated(blocks, device, dtype)
    if host.dtype == torch.uint8 and narrow_on_cpu and device.type == "cpu":
        return host  # the tensor kernel widens what it gathers: ASCII / Latin-1 text stays one byte per symbol
    flat = host.int() & 0xFFFF if dtype == np.uint16 else host if host.dtype == torch.int64 else host.int()
    if not narrow_on_cpu and device.type == "cpu" and len(blocks) == 1 and not blocks[0].flags.writeable and \
            flat.data_ptr() == host.data_ptr():
        flat = flat.clone()
    return flat


def rows_from_separators(values: Tensor, count: int) -> tuple[Tensor, Tensor]:
    """The rows of separated values (:func:`upload_staged`), found on their device without a host sync.

    Args:
        values: ``Tensor[T + B]`` code points, each row followed by a ``0`` and no other ``0``.
        count: ``B``, the number of rows (the number of zeros).

    Returns:
        ``(starts, lengths)``: ``LongTensor[B]`` each.

    Example:
        >>> rows_from_separators(torch.tensor([97, 98, 0, 0, 233, 0]), 3)
        (tensor([0, 3, 4]), tensor([2, 0, 1]))
    """
    device = values.device
    if count == 0:
        empty = torch.zeros(0, dtype=torch.long, device=device)
        return empty, empty
    seen = torch.cumsum(values == 0, 0)  # separators up to each position
    ends = torch.searchsorted(seen, torch.arange(1, count + 1, device=device))  # the i-th separator's position
    starts = torch.cat([ends.new_zeros(1), ends[:-1] + 1])
    return starts, ends - starts


def _runs(codes: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """Sorted code points as inclusive ``(first, last)`` runs."""
    runs: list[list[int]] = []
    for code in sorted(codes):
        if runs and code == runs[-1][1] + 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return tuple((first, last) for first, last in runs)


_WHITESPACE_RUNS = _runs(WHITESPACE)  # 11 runs


def _is_whitespace(codes: Tensor) -> Tensor:
    """``BoolTensor`` of ``codes`` that ``str.split()`` splits on: compares against the runs of :data:`WHITESPACE`
    on the codes' device (no table to upload, so no blocking copy on a first call)."""
    hit = torch.zeros_like(codes, dtype=torch.bool)
    for first, last in _WHITESPACE_RUNS:
        hit |= (codes == first) if first == last else ((codes >= first) & (codes <= last))
    return hit


# splitmix64's finaliser in int64 arithmetic (products wrap; logical shifts by masking the arithmetic ones)
_MIX_ADD = 0x9E3779B97F4A7C15 - (1 << 64)
_MIX_MUL = (0xBF58476D1CE4E5B9 - (1 << 64), 0x94D049BB133111EB - (1 << 64))


def _mix(x: Tensor) -> Tensor:
    x = x + _MIX_ADD
    x = (x ^ ((x >> 30) & ((1 << 34) - 1))) * _MIX_MUL[0]
    x = (x ^ ((x >> 27) & ((1 << 37) - 1))) * _MIX_MUL[1]
    return x ^ ((x >> 31) & ((1 << 33) - 1))


def split_words(values: Tensor, starts: Tensor, lengths: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """``str.split()`` of every row on the device, each word replaced by an id of its content (equal words, equal
    ids), with no host sync.

    Args:
        values: ``IntTensor[N]`` code points in rows separated by ``0`` (:func:`upload_staged`).
        starts: ``LongTensor[B]`` row starts (:func:`rows_from_separators`).
        lengths: ``LongTensor[B]`` row lengths; each row is followed by its separator.

    Returns:
        ``(ids, word_starts, word_counts, collided)``: ``LongTensor[W']`` word ids in ``[0, N)`` (the words of
        all rows in order; ``W' ≥`` the number of words, the tail unused), ``LongTensor[B]`` each row's first word
        and word count, and a ``BoolTensor[]`` that is true when two different words shared a hash (the ids are
        then not exact: use host ids).

    Example:
        >>> values = torch.tensor([97, 32, 98, 0, 98, 9, 9, 97, 0])
        >>> ids, first, count, collided = split_words(values, torch.tensor([0, 4]), torch.tensor([3, 4]))
        >>> words = ids[:4].tolist()  # a, b | b, a
        >>> words[0] == words[3] != words[1] == words[2], first.tolist(), count.tolist(), bool(collided)
        (True, [0, 2], [2, 2], False)
    """
    device = values.device
    size = values.shape[0]
    if starts.shape[0] == 0 or size == 0:
        empty = torch.zeros(0, dtype=torch.long, device=device)
        return torch.zeros(1, dtype=torch.long, device=device), empty, empty, torch.zeros((), dtype=torch.bool,
                                                                                         device=device)
    codes = values.long()
    in_word = ~_is_whitespace(codes) & (codes != 0)
    edge = torch.ones(1, dtype=torch.bool, device=device)
    first_mask = in_word & ~torch.cat([edge.logical_not(), in_word[:-1]])
    last_mask = in_word & ~torch.cat([in_word[1:], edge.logical_not()])
    words_begun = torch.cumsum(first_mask, 0)  # words begun at or before each position
    words_ended = torch.cumsum(last_mask, 0)
    # W ≤ N / 2 (every word is followed by a space or a separator); slots past the last word copy the last word
    slots = torch.arange((size + 1) // 2, device=device)
    slots = torch.minimum(slots, (words_begun[-1] - 1).clamp(min=0))
    first = torch.searchsorted(words_begun, slots + 1).clamp(max=size - 1)
    last = torch.searchsorted(words_ended, slots + 1).clamp(max=size - 1)
    word_of = (words_begun - 1).clamp(min=0)  # the word of each in-word position
    position = torch.arange(size, device=device) - first[word_of]
    items = torch.where(in_word, _mix((position << 21) | codes), 0)
    running = torch.cumsum(items, 0)  # int64, wraps: differences stay exact modulo 2**64
    hashes = running[last] - running[first] + items[first]
    order = torch.sort(hashes, stable=True).indices
    ids = torch.searchsorted(hashes[order], hashes)  # the first sorted slot of each hash: equal hashes, equal ids
    model = order[ids]  # the word each word is compared with
    length = last - first + 1
    same_length = length == length[model]
    echo = (first[model][word_of] + position).clamp(0, size - 1)
    same_symbols = ~in_word | (codes[echo] == codes)
    collided = ~(same_length.all() & same_symbols.all())
    row_words = words_begun[starts + lengths]  # words begun before each row's separator
    word_starts = torch.cat([row_words.new_zeros(1), row_words[:-1]])
    return ids, word_starts, row_words - word_starts, collided


def upload_rows(
    values: np.ndarray | Sequence[np.ndarray], lengths: np.ndarray, device: torch.device, private: bool = False
) -> tuple[Tensor, Tensor]:
    """Flat host values (one array, or blocks to concatenate) and lengths → ``(values[T], LongTensor[B + 1]
    offsets)`` on ``device``: two uploads, the values in their narrow dtype (:func:`upload_code_points`).
    ``private``: the caller only reads the result, so on the CPU one-byte text may stay a view of the encoded
    (read-only) bytes."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return upload_code_points(values, device, narrow_on_cpu=private), upload(offsets, device)


def encode_chars_ragged(texts: Sequence[str], device: Optional[torch.device | str] = None) -> tuple[Tensor, Tensor]:
    """Code points of a batch of strings, flat with offsets, on ``device`` (the values travel in their narrow host
    dtype and are widened on the device).

    Returns:
        ``(values, offsets)``: ``IntTensor[T]`` code points and ``LongTensor[B + 1]`` offsets (``offsets[0] = 0``).

    Example:
        >>> encode_chars_ragged(["ab", "", "é"])
        (tensor([ 97,  98, 233], dtype=torch.int32), tensor([0, 2, 2, 3]))
    """
    device = check_device(device, "device")
    blocks, lengths = encode_chars_blocks(texts)
    return upload_rows(blocks, lengths, device)


def encode_chars(texts: Sequence[str], device: Optional[torch.device | str] = None) -> tuple[Tensor, Tensor]:
    """Code points of a batch of strings as a padded tensor (flat encoding, padded on the device).

    Args:
        texts: ``B`` strings.
        device: device of the result (CPU by default).

    Returns:
        ``(LongTensor[B, L], LongTensor[B])`` code points padded with 0 (``L`` = longest string) and lengths.

    Example:
        >>> encode_chars(["ab", "é"])
        (tensor([[ 97,  98],
                [233,   0]]), tensor([2, 1]))
    """
    device = check_device(device, "device")
    blocks, lengths = encode_chars_blocks(texts)
    flat, offsets = upload_rows(blocks, lengths, device)
    row_lengths = offsets.diff()
    return pad_segments(flat.long(), row_lengths, 0, int(lengths.max()) if len(lengths) else 0), row_lengths


def encode_words(
    texts: Sequence[Sequence[str]], vocabulary: dict[str, int], device: Optional[torch.device | str] = None
) -> tuple[Tensor, Tensor]:
    """Vocabulary ids of a batch of token lists as a padded tensor; new tokens are added to ``vocabulary``.

    Kept for callers of the kernel layer; the metrics build their word ids with the shared
    :func:`gpumetrics.kernels.vocab.dense_ids` and pass them flat to
    :func:`~gpumetrics.kernels.levenshtein_routes.levenshtein_ragged`.

    Example:
        >>> vocab = {}
        >>> encode_words([["a", "b"], ["b"]], vocab)
        (tensor([[0, 1],
                [1, 0]]), tensor([2, 1]))
    """
    device = check_device(device, "device")
    lengths = np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))
    setdefault = vocabulary.setdefault
    flat = np.fromiter(
        (setdefault(tok, len(vocabulary)) for tokens in texts for tok in tokens),
        dtype=np.int64,
        count=int(lengths.sum()),
    )
    values, offsets = upload_rows(flat, lengths, device)
    row_lengths = offsets.diff()
    return pad_segments(values, row_lengths, 0, int(lengths.max()) if len(lengths) else 0), row_lengths

"""Joining a predictions file and a references file by id, lazily: an index in memory, the texts of one batch.

**Indexed join.** Both files are scanned once (each record decoded, checked and forgotten) into an index of
24 bytes per record: the 64-bit hash of its id, where it starts (a byte offset in a JSON Lines file) and its line.
The index answers everything that must be known before scoring — duplicate ids, prediction ids that no reference has,
references without a prediction — and maps every reference to its prediction record. :meth:`IndexedJoin.batches` then
reads the references in file order, a batch at a time, and each one's prediction by seeking to its offset; neither
file needs to be sorted, and the predictions may come in any order. Memory: the index (24 MB per million records
per file) plus one batch of records.

A ``.json`` file is one JSON document and is read whole (its records stay in memory); JSON Lines files
(``.jsonl`` / ``.ndjson``) are streamed. Record layouts and messages are those of :mod:`gpumetrics.tasks.data`.
"""

from __future__ import annotations

import dataclasses
import json
import os
from array import array
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import torch

from gpumetrics.core import gc_paused
from gpumetrics.tasks.data import (
    PREDICTION_KEY,
    REFERENCES_KEY,
    Batch,
    DataError,
    JoinedData,
    check_text_value,
    read_records,
    record_id_and_value,
)

#: ``progress(label, done, total)`` — ``done``/``total`` in bytes while a file is scanned.
ScanProgress = Callable[[str, int, int], None]
_PROGRESS_EVERY = 1 << 16  # records between two progress calls
_UTF8_BOM = b"\xef\xbb\xbf"
JSON_LINES_SUFFIXES = (".jsonl", ".ndjson")


@dataclasses.dataclass(frozen=True)
class _Index:
    """Per record of a file, in file order: ``hashes`` (of the id), ``locators`` (byte offset or list index), ``lines``."""

    hashes: torch.Tensor
    locators: array
    lines: array


class _RecordFile:
    """A predictions or references file as records addressed by a locator: the byte offset of a JSON Lines record,
    the position of a record of a ``.json`` document (read whole)."""

    def __init__(self, path: Path, value_key: str, textual: bool) -> None:
        self.path = path
        self.value_key = value_key
        self.textual = textual
        self.streamed = path.suffix.lower() in JSON_LINES_SUFFIXES
        self._records: Optional[list] = None
        self._handle = None

    def _checked(self, record_id: str, value: Any, line: int) -> Any:
        if self.textual:
            return check_text_value(self.path, record_id, line, value, is_references=self.value_key == REFERENCES_KEY)
        if self.value_key == REFERENCES_KEY and not isinstance(value, list):
            return [value]
        return value

    def _decode_line(self, raw: bytes, line: int) -> Optional[tuple[str, Any]]:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise DataError(self.path, line, "not valid UTF-8") from None
        if not text.strip():
            return None
        try:
            item = json.loads(text)
        except json.JSONDecodeError as err:
            raise DataError(self.path, line, f"malformed JSON line: {err.msg} (column {err.colno})") from None
        except RecursionError:
            raise DataError(self.path, line, "JSON nested too deeply to read") from None
        record_id, value = record_id_and_value(self.path, line, item, self.value_key)
        return record_id, self._checked(record_id, value, line)

    @gc_paused  # a scan makes one small object per record: the collector's passes would dominate
    def scan(self, progress: Optional[ScanProgress] = None, label: str = "") -> _Index:
        """Decode and check every record once; keep its id hash, locator and line."""
        hashes, locators, lines = array("q"), array("q"), array("q")
        if not self.streamed:
            self._records = read_records(self.path, self.value_key)
            for position, record in enumerate(self._records):
                self._records[position] = dataclasses.replace(record, value=self._checked(record.id, record.value, record.line))
                hashes.append(hash(record.id))
                locators.append(position)
                lines.append(record.line)
            return _Index(torch.frombuffer(hashes, dtype=torch.int64) if hashes else torch.empty(0, dtype=torch.int64), locators, lines)
        try:
            total = os.path.getsize(self.path)
            handle = open(self.path, "rb")
        except FileNotFoundError:
            raise DataError(self.path, None, "file not found") from None
        with handle:
            offset = 0
            for line, raw in enumerate(handle, start=1):
                start, offset = offset, offset + len(raw)
                if line == 1 and raw.startswith(_UTF8_BOM):  # a leading BOM (Windows editors) is not data
                    raw, start = raw[3:], 3
                decoded = self._decode_line(raw, line)
                if decoded is not None:
                    hashes.append(hash(decoded[0]))
                    locators.append(start)
                    lines.append(line)
                if progress is not None and line % _PROGRESS_EVERY == 0:
                    progress(label, offset, total)
        if progress is not None:
            progress(label, total, total)
        return _Index(torch.frombuffer(hashes, dtype=torch.int64) if hashes else torch.empty(0, dtype=torch.int64), locators, lines)

    def read(self, locator: int, line: int) -> tuple[str, Any]:
        """The checked ``(id, value)`` of the record at ``locator`` (starting on ``line``)."""
        if not self.streamed:
            record = self._records[locator]
            return record.id, record.value
        if self._handle is None:
            self._handle = open(self.path, "rb")
        self._handle.seek(locator)
        decoded = self._decode_line(self._handle.readline(), line)
        if decoded is None:
            raise DataError(self.path, line, "the file changed while it was being read")
        return decoded

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None


def _as_array(values: torch.Tensor) -> array:
    """An int64 tensor as a compact ``array("q")``."""
    out = array("q")
    out.frombytes(values.to(torch.int64).contiguous().numpy().tobytes())
    return out


def _first_duplicate(file: _RecordFile, index: _Index) -> None:
    """Raise the DataError of the duplicate id that ``read_records`` meets first (lowest line of a second occurrence)."""
    if index.hashes.numel() < 2:
        return
    sorted_hashes, order = torch.sort(index.hashes, stable=True)
    repeated = torch.nonzero(sorted_hashes[1:] == sorted_hashes[:-1]).flatten()
    if repeated.numel() == 0:
        return
    first_line: dict[str, int] = {}
    worst: Optional[tuple[int, str, int]] = None  # (line of the second occurrence, id, first line)
    candidates = sorted(set(order[repeated].tolist()) | set(order[repeated + 1].tolist()))
    for position in candidates:  # only records whose hash repeats: usually none
        line = index.lines[position]
        record_id, _ = file.read(index.locators[position], line)
        if record_id in first_line and (worst is None or line < worst[0]):
            worst = (line, record_id, first_line[record_id])
        first_line.setdefault(record_id, line)
    if worst is not None:
        raise DataError(file.path, worst[0], f"duplicate id {worst[1]!r} (first seen on line {worst[2]})")


class IndexedJoin:
    """References and their predictions, joined by id, read a batch at a time in the order of the references file.

    Args:
        predictions_path: records ``{"id", "prediction"}`` (``.jsonl``/``.ndjson`` streamed, ``.json`` read whole).
        references_path: records ``{"id", "references": [...]}`` (a single string is one reference).
        empty_prediction: what a reference without a prediction is scored as; when it is a string, predictions must
            be strings and references lists of strings. ``None``: the metric has no empty answer (the runner then
            refuses missing predictions).
        progress: called while the files are scanned (``label``, bytes done, bytes total).

    Attributes:
        missing_ids: the first ``max_listed`` ids of references without a prediction, in file order.
        missing_count: how many references have no prediction.

    Raises:
        DataError: the errors of :func:`~gpumetrics.tasks.data.read_records` (for every record, before any is scored),
            and a prediction whose id no reference has (named with file and line).

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "p.jsonl").write_text('{"id": "b", "prediction": "y"}\\n')
        >>> _ = (d / "r.jsonl").write_text('{"id": "a", "references": ["x"]}\\n{"id": "b", "references": "y"}\\n')
        >>> join = IndexedJoin(d / "p.jsonl", d / "r.jsonl")
        >>> len(join), join.missing_ids, [b.predictions for b in join.batches(8)]
        (2, ['a'], [['', 'y']])
    """

    missing_score: Optional[float] = None  # the records layout scores a missing prediction as the empty prediction
    not_evaluated_count = 0

    def __init__(
        self,
        predictions_path: Path | str,
        references_path: Path | str,
        empty_prediction: Any = "",
        progress: Optional[ScanProgress] = None,
        label: str = "",
        max_listed: int = 100,
    ) -> None:
        textual = isinstance(empty_prediction, str)
        self.empty_prediction = empty_prediction
        self._predictions = _RecordFile(Path(predictions_path), PREDICTION_KEY, textual)
        self._references = _RecordFile(Path(references_path), REFERENCES_KEY, textual)
        self._prediction_index = self._predictions.scan(progress, f"{label}reading predictions".strip())
        self._reference_index = self._references.scan(progress, f"{label}reading references".strip())
        _first_duplicate(self._predictions, self._prediction_index)
        _first_duplicate(self._references, self._reference_index)
        prediction_hashes, reference_hashes = self._prediction_index.hashes, self._reference_index.hashes
        unknown = torch.nonzero(~torch.isin(prediction_hashes, reference_hashes)).flatten()
        if unknown.numel():
            position = int(unknown[0])
            record_id, _ = self._predictions.read(self._prediction_index.locators[position], self._prediction_index.lines[position])
            raise DataError(
                self._predictions.path, self._prediction_index.lines[position],
                f"unknown id {record_id!r}: no record with this id in {self._references.path}",
            )
        sorted_hashes, order = torch.sort(prediction_hashes, stable=True)
        found = torch.searchsorted(sorted_hashes, reference_hashes)
        if sorted_hashes.numel():
            hit = sorted_hashes[found.clamp(max=sorted_hashes.numel() - 1)] == reference_hashes
        else:  # no prediction at all
            hit = torch.zeros_like(reference_hashes, dtype=torch.bool)
        # read once per sample: arrays index in tens of nanoseconds, tensors in microseconds
        self._sorted_hashes, self._order = _as_array(sorted_hashes), _as_array(order)
        #: per reference: the sorted-hash position of its prediction (the first of equal hashes), or -1
        self._match = _as_array(torch.where(hit, found, torch.full_like(found, -1)))
        absent = torch.nonzero(~hit).flatten()
        self.missing_count = int(absent.numel())
        self._max_listed = max_listed
        self.missing_ids = [self._reference_id(int(p)) for p in absent[:max_listed]]

    def _reference_id(self, position: int) -> str:
        return self._references.read(self._reference_index.locators[position], self._reference_index.lines[position])[0]

    @property
    def total(self) -> int:
        """Samples of the task: the references file's records."""
        return self._reference_index.hashes.numel()

    def __len__(self) -> int:
        """Samples the metric is fed: every reference (a missing prediction is the empty prediction)."""
        return self.total

    def _prediction(self, reference_id: str, first: int) -> Any:
        """The prediction of ``reference_id``, whose hash first sits at ``first`` of the sorted hashes (-1: none)."""
        position = first
        while 0 <= position < len(self._sorted_hashes) and (position == first or self._sorted_hashes[position] == self._sorted_hashes[first]):
            record = self._order[position]
            record_id, value = self._predictions.read(self._prediction_index.locators[record], self._prediction_index.lines[record])
            if record_id == reference_id:
                return value
            position += 1  # another id with the same 64-bit hash
        if first >= 0:  # a hash collision hid a missing prediction from the index
            self.missing_count += 1
            if len(self.missing_ids) < self._max_listed:
                self.missing_ids.append(reference_id)
        if self.empty_prediction is None:
            raise DataError(self._predictions.path, None, f"no prediction for id {reference_id!r}")
        return self.empty_prediction

    def batches(self, batch_size: int, start: int = 0, stop: Optional[int] = None) -> Iterator[Batch]:
        """Yield the samples ``start … stop - 1`` (default: all) in batches of at most ``batch_size``."""
        stop = self.total if stop is None else min(stop, self.total)
        reference_index = self._reference_index
        try:
            for begin in range(start, stop, batch_size):
                ids, predictions, references = [], [], []
                for position in range(begin, min(begin + batch_size, stop)):
                    record_id, value = self._references.read(reference_index.locators[position], reference_index.lines[position])
                    ids.append(record_id)
                    references.append(value)
                    predictions.append(self._prediction(record_id, self._match[position]))
                yield Batch(ids, predictions, references)
        finally:
            self._predictions.close()
            self._references.close()

    def materialize(self) -> JoinedData:
        """Every sample in memory, as :class:`~gpumetrics.tasks.data.JoinedData` (small files, tests)."""
        ids, predictions, references = [], [], []
        for batch in self.batches(max(self.total, 1)):
            ids += batch.ids
            predictions += batch.predictions
            references += batch.references
        missing = [i for i, m in zip(ids, self._match) if m < 0]
        return JoinedData(ids=ids, predictions=predictions, references=references, missing=missing)


def join_by_id(
    predictions_path: Path | str,
    references_path: Path | str,
    empty_prediction: Any = "",
) -> JoinedData:
    """Join both files by id, in the order of the references, all in memory (:class:`IndexedJoin`, materialised).

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "p.jsonl").write_text('{"id": "a", "prediction": "x"}\\n')
        >>> _ = (d / "r.json").write_text('[{"id": "a", "references": ["x"]}, {"id": "b", "references": ["y"]}]')
        >>> data = join_by_id(d / "p.jsonl", d / "r.json")
        >>> data.predictions, data.references, data.missing
        (['x', ''], [['x'], ['y']], ['b'])
    """
    return IndexedJoin(predictions_path, references_path, empty_prediction).materialize()

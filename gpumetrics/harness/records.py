"""The harness's one record reader and joiner: every layout a task's two files come in is read here and joined by
id here, and every joined task offers one batch interface (``total``, ``missing_*``, ``batches(size, start,
stop)``), whether it is streamed (:class:`IndexedJoin`) or in memory (:class:`JoinedData`).

**Records.** A predictions file holds records ``{"id": …, "prediction": …}``, a references file ``{"id": …,
"references": […]}`` (a single string is accepted as one reference). Either file may be

* JSON Lines (``.jsonl`` / ``.ndjson``, one record per line, blank lines ignored),
* a JSON array of such records (``.json``), or
* a JSON object mapping id → value (``{"q1": "Paris", …}``, the SQuAD predictions layout; for references the value
  is the list of references).

Every error raises :class:`DataError` naming the file and the 1-based line of the offending record.

**Joins.** :class:`IndexedJoin` joins the two record files lazily; :func:`join_records` joins records already in
memory (the suites' official formats, :func:`read_coco`) with a policy for a reference without prediction;
:func:`read_field_records` reads JSON Lines of fixed fields (``gpumetrics clip-score``'s ``{"image", "caption"}``).

Joining a predictions file and a references file by id, lazily: an index in memory, the texts of one batch.

**Indexed join.** Both files are scanned once (each record decoded, checked and forgotten) into an index of
24 bytes per record: the 64-bit hash of its id, where it starts (a byte offset in a JSON Lines file) and its line.
The index answers everything that must be known before scoring — duplicate ids, prediction ids that no reference has,
references without a prediction — and maps every reference to its prediction record. :meth:`IndexedJoin.batches` then
reads the references in file order, a batch at a time, and each one's prediction by seeking to its offset; neither
file needs to be sorted, and the predictions may come in any order. Memory: the index (24 MB per million records
per file) plus one batch of records.

A ``.json`` file is one JSON document and is read whole (its records stay in memory); JSON Lines files
(``.jsonl`` / ``.ndjson``) are streamed. Record layouts and messages are those of :func:`read_records`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from array import array
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Optional

from gpumetrics.core.files import open_input
from gpumetrics.core.gcpause import gc_paused
from gpumetrics.core.progress import ProgressFn

if TYPE_CHECKING:  # torch is imported where records are indexed, so that listing formats stays light
    import torch

PREDICTION_KEY = "prediction"
REFERENCES_KEY = "references"
_DECODER = json.JSONDecoder()
_WHITESPACE = re.compile(r"[ \t\r\n]*")


class DataError(ValueError):
    """A data file is malformed, or predictions and references do not join; the message names file and line."""

    def __init__(self, path: Path | str, line: Optional[int], message: str) -> None:
        self.path = str(path)
        self.line = line
        where = f"{self.path}:{line}" if line is not None else self.path
        super().__init__(f"{where}: {message}")


@dataclasses.dataclass(frozen=True)
class Record:
    """One record of a data file: ``id`` (as a string), its ``value`` and the line it starts on."""

    id: str
    value: Any
    line: int


@dataclasses.dataclass(frozen=True)
class Batch:
    """Consecutive samples of a task: ``ids[i]``, ``predictions[i]`` and ``references[i]`` (a list) belong together."""

    ids: list[str]
    predictions: list[Any]
    references: list[list[Any]]

    def __len__(self) -> int:
        return len(self.ids)


@dataclasses.dataclass
class JoinedData:
    """References with their predictions, in the order of the references file.

    Attributes:
        ids: sample ids, ``list[str]`` of length N.
        predictions: N predictions; a missing one is the task metric's empty prediction.
        references: N lists of references.
        missing: ids of the references that had no prediction (scored as the empty prediction).
        missing_score: ``None``: ``predictions`` holds the empty prediction for the missing ids; a number: the
            missing ids are left out of ``predictions``/``references``/``ids`` and each counts as this score in the
            task's mean (the AIJ-2022 scripts' "missing prediction → 0"; see :mod:`gpumetrics.suites.formats`).
        not_evaluated: ids left out of the evaluation (``format: coco``: images of the annotations without a result,
            which ``COCOEvalCap`` does not score either).
    """

    ids: list[str]
    predictions: list[Any]
    references: list[list[Any]]
    missing: list[str]
    missing_score: Optional[float] = None
    not_evaluated: list[str] = dataclasses.field(default_factory=list)

    def __len__(self) -> int:
        """Samples the metric is fed (missing ids with a ``missing_score`` are not among them)."""
        return len(self.ids)

    @property
    def total(self) -> int:
        """Samples of the task: the references file's records."""
        return len(self.ids) + (len(self.missing) if self.missing_score is not None else 0)

    @property
    def missing_ids(self) -> list[str]:
        return self.missing

    @property
    def missing_count(self) -> int:
        return len(self.missing)

    @property
    def not_evaluated_count(self) -> int:
        return len(self.not_evaluated)

    def batches(self, batch_size: int, start: int = 0, stop: Optional[int] = None) -> Iterator[Batch]:
        """Yield the samples ``start … stop - 1`` (default: all) in :class:`Batch` es of at most ``batch_size``."""
        stop = len(self.ids) if stop is None else min(stop, len(self.ids))
        for begin in range(start, stop, batch_size):
            end = min(begin + batch_size, stop)
            yield Batch(self.ids[begin:end], self.predictions[begin:end], self.references[begin:end])


#: a JSON escape that may decode to half of a surrogate pair: the cheap test before a decoded record is walked
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _lone_surrogate(value: Any, depth: int = 0) -> Optional[str]:
    """The first string of ``value`` (a decoded JSON value) holding a lone surrogate (``"\\ud800"`` is valid JSON
    but no text: it cannot be written as UTF-8), else ``None``."""
    if isinstance(value, str):
        return value if _SURROGATE.search(value) else None
    if depth > 64:
        return None
    if isinstance(value, dict):
        items: Any = [*value.keys(), *value.values()]
    elif isinstance(value, list):
        items = value
    else:
        return None
    for item in items:
        found = _lone_surrogate(item, depth + 1)
        if found is not None:
            return found
    return None


def check_no_surrogates(path: Path, line: Optional[int], value: Any, raw: Optional[str] = None) -> None:
    """Refuse a decoded record holding a lone surrogate, naming ``path:line`` (issue 28 item 13): such a string is
    scored but can be written in no report. ``raw``: the record's JSON text, checked first for an escape that could
    produce one (the common case costs one regex search)."""
    if raw is not None and _SURROGATE_ESCAPE.search(raw) is None:
        return
    found = _lone_surrogate(value)
    if found is not None:
        shown = found.encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
        raise DataError(path, line, f"a string holds a lone surrogate (\\ud800-\\udfff escape without its pair), "
                                    f"which is not text: {shown[:60]!r}")


def _not_found(path: Path) -> "DataError":
    """The error of a data file that cannot be opened: a directory is said to be one."""
    return DataError(path, None, "is a directory, not a data file" if path.is_dir() else "file not found")


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


_TOO_DEEP = "JSON nested too deeply to read (a record is an object of strings and lists of strings)"


def _skip_ws(text: str, index: int) -> int:
    return _WHITESPACE.match(text, index).end()


def _decode_at(path: Path, text: str, index: int) -> tuple[Any, int]:
    try:
        return _DECODER.raw_decode(text, index)
    except json.JSONDecodeError as err:
        raise DataError(path, err.lineno, f"malformed JSON: {err.msg} (column {err.colno})") from None
    except RecursionError:
        raise DataError(path, _line_of(text, index), _TOO_DEEP) from None
    except ValueError as err:  # an integer over Python's 4300-digit limit
        raise DataError(path, _line_of(text, index), f"unreadable JSON value: {err}") from None


def _iter_json_items(path: Path, text: str) -> Iterator[tuple[Optional[str], Any, int]]:
    """Yield ``(key or None, value, line)`` for each element of a top-level JSON array or object.

    The document is decoded element by element so that each record keeps the line it starts on and duplicate
    keys of an object are seen (``json.loads`` would silently keep the last one).
    """
    position = [0, 1]  # (index, line) of the last lookup: counting newlines incrementally keeps this linear

    def line_at(index: int) -> int:
        if index < position[0]:
            return _line_of(text, index)
        position[1] += text.count("\n", position[0], index)
        position[0] = index
        return position[1]

    surrogates = _SURROGATE_ESCAPE.search(text) is not None  # else no record can hold one
    index = _skip_ws(text, 0)
    if index == len(text):
        return
    opener = text[index]
    if opener not in "[{":
        raise DataError(path, line_at(index), "a .json data file must hold an array of records or an object id → value")
    closer = "]" if opener == "[" else "}"
    index = _skip_ws(text, index + 1)
    if index < len(text) and text[index] == closer:
        return
    while True:
        line = line_at(index)
        key = None
        if opener == "{":
            key, index = _decode_at(path, text, index)
            if not isinstance(key, str):
                raise DataError(path, line, "malformed JSON: expected an object key")
            index = _skip_ws(text, index)
            if index >= len(text) or text[index] != ":":
                raise DataError(path, line_at(index), "malformed JSON: expected ':' after an object key")
            index = _skip_ws(text, index + 1)
        start = index
        value, index = _decode_at(path, text, index)
        if opener == "[":  # a record of an array (an object's keys are ids: a repeated one is a duplicate id)
            refuse_repeated_keys(path, line, text[start:index])
        if surrogates:
            check_no_surrogates(path, line, [key, value])
        yield key, value, line
        index = _skip_ws(text, index)
        if index < len(text) and text[index] == ",":
            index = _skip_ws(text, index + 1)
            continue
        if index < len(text) and text[index] == closer:
            break
        raise DataError(path, line_at(index), f"malformed JSON: expected ',' or '{closer}'")
    index = _skip_ws(text, index + 1)
    if index != len(text):
        raise DataError(path, line_at(index), "malformed JSON: extra data after the top-level value")


def _lone_cr_hint(line: str) -> str:
    """The end of a malformed-line message when the line holds a carriage return that ends no line (classic Mac
    line endings: the whole file reads as one line)."""
    if "\r" in line.rstrip("\r\n"):
        return "; the line holds a carriage return (\\r) not followed by \\n: JSON Lines records end at \\n"
    return ""


#: the keys of a record whose second occurrence JSON would keep silently in place of the first
RECORD_KEYS = ("id", PREDICTION_KEY, REFERENCES_KEY)


def refuse_repeated_keys(path: Path, line: Optional[int], raw: str, keys: tuple[str, ...] = RECORD_KEYS) -> None:
    """Refuse a record naming one of ``keys`` twice (``{"id": "1", "prediction": "draft", "prediction": "final"}``):
    ``json.loads`` keeps the last value silently, so which one was meant is unknown. ``raw``: the record's JSON text;
    only one holding a key's quoted name twice is decoded again (the common record costs a few ``str.count``)."""
    if not any(raw.count(f'"{key}"') > 1 for key in keys):
        return

    def pairs(items: list) -> dict:
        seen = set()
        for key, _ in items:
            if key in seen and key in keys:
                raise DataError(path, line, f"the record names {key!r} twice (JSON would keep the last value "
                                            "silently): remove one")
            seen.add(key)
        return dict(items)

    json.loads(raw, object_pairs_hook=pairs)


def _json_line(path: Path, line_no: int, line: str) -> Any:
    """The JSON value of one JSON Lines record, or a :class:`DataError` naming the line."""
    try:
        value = json.loads(line)
    except json.JSONDecodeError as err:
        raise DataError(path, line_no,
                        f"malformed JSON line: {err.msg} (column {err.colno}){_lone_cr_hint(line)}") from None
    except RecursionError:
        raise DataError(path, line_no, _TOO_DEEP) from None
    except ValueError as err:  # an integer over Python's 4300-digit limit
        raise DataError(path, line_no, f"unreadable JSON value: {err}") from None
    refuse_repeated_keys(path, line_no, line)
    return value


def _iter_jsonl_items(path: Path, text: str) -> Iterator[tuple[Optional[str], Any, int]]:
    # split on "\n" only: str.splitlines() would also cut at U+2028, U+0085 … that JSON allows unescaped in strings
    for line_no, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        value = _json_line(path, line_no, line)
        check_no_surrogates(path, line_no, value, line)
        yield None, value, line_no


def _as_id(value: Any, path: Path, line: int) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise DataError(path, line, f"`id` must be a string or an integer, got {type(value).__name__} {value!r}")
    return str(value)


def record_id_and_value(path: Path, line: int, item: Any, value_key: str) -> tuple[str, Any]:
    """``(id, value)`` of a decoded record ``{"id": …, value_key: …}``; DataError naming ``path:line`` otherwise."""
    if not isinstance(item, dict):
        raise DataError(path, line, f"a record must be a JSON object, got {type(item).__name__}")
    for needed in ("id", value_key):
        if needed not in item:
            raise DataError(path, line, f"record has no {needed!r} key (keys: {', '.join(map(repr, item)) or 'none'})")
    return _as_id(item["id"], path, line), item[value_key]


@gc_paused  # a data file becomes one small object per record: the collector's scans would dominate
def read_records(path: Path | str, value_key: str) -> list[Record]:
    """Read the records of a predictions (``value_key="prediction"``) or references (``"references"``) file.

    Args:
        path: a ``.jsonl``/``.ndjson`` file (one record per line) or a ``.json`` file (array of records, or an
            object id → value).
        value_key: the field holding each record's value.

    Returns:
        ``list[Record]`` in file order; ids are strings (integer ids are written in decimal).

    Raises:
        DataError: the file is missing or malformed, a record is not an object, lacks ``id`` or ``value_key``,
            or an id repeats; the message names the file and line.

    Example:
        >>> import tempfile, os
        >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        ...     _ = f.write('{"id": 1, "prediction": "Paris"}\\n{"id": "q2", "prediction": ""}\\n')
        >>> [(r.id, r.value, r.line) for r in read_records(f.name, "prediction")]
        [('1', 'Paris', 1), ('q2', '', 2)]
        >>> os.remove(f.name)
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")  # a leading BOM (Windows editors) is not data
    except (FileNotFoundError, IsADirectoryError):
        raise _not_found(path) from None
    except UnicodeDecodeError as err:
        raise DataError(path, _line_of(err.object.decode("utf-8", "replace"), err.start), "not valid UTF-8") from None
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        items = _iter_jsonl_items(path, text)
    elif path.suffix.lower() == ".json":
        items = _iter_json_items(path, text)
    else:
        raise DataError(path, None, "unknown data file type; use .json, .jsonl or .ndjson")

    records: list[Record] = []
    first_line: dict[str, int] = {}
    for key, item, line in items:
        if key is not None:  # object layout: id → value
            record_id, value = key, item
        else:
            record_id, value = record_id_and_value(path, line, item, value_key)
        if record_id in first_line:
            raise DataError(path, line, f"duplicate id {record_id!r} (first seen on line {first_line[record_id]})")
        first_line[record_id] = line
        records.append(Record(record_id, value, line))
    return records


def read_id_object(path: Path | str) -> list[Record]:
    """The records of a file in the organisers' layout: one JSON object ``{id: value, …}`` (the AIJ formats).

    Raises:
        DataError: the file is missing, malformed, not a JSON object, or repeats an id (named with its line).

    Example:
        >>> import tempfile, os
        >>> with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        ...     _ = f.write('{"0.png": "a",\\n "1.png": "b"}')
        >>> [(r.id, r.value, r.line) for r in read_id_object(f.name)]
        [('0.png', 'a', 1), ('1.png', 'b', 2)]
        >>> os.remove(f.name)
    """
    path = Path(path)
    try:
        head = path.read_text(encoding="utf-8-sig").lstrip()[:1]
    except (FileNotFoundError, IsADirectoryError):
        raise _not_found(path) from None
    except UnicodeDecodeError:
        head = ""  # read_records names the line
    generic = ("a file of {\"id\", …} records: the suites read the organisers' files (docs/metrics/suites.md); score "
               "generic records with a `metric:` task instead")
    if head and head != "{":
        raise DataError(path, 1, "the official format is one JSON object {id: value, …}, got "
                                 f"{'an array (' + generic + ')' if head == '[' else 'another JSON value'}")
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        raise DataError(path, 1, f"the official format is one JSON object {{id: value, …}}, got JSON Lines — {generic}")
    try:
        return read_records(path, "value")
    except DataError as err:
        if "no 'value' key" not in str(err):
            raise
        raise DataError(path, err.line,
                        f"the official format is one JSON object {{id: value, …}}, got {generic}") from None


def check_text_value(path: Path, record_id: str, line: int, value: Any, is_references: bool) -> Any:
    """A prediction must be a string; references a non-empty list of strings (one string is one reference).

    Returns the value, references as a list. Raises DataError naming ``path:line`` and the id.
    """
    if is_references:
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise DataError(path, line, f"id {record_id!r}: `references` must be a list of strings, got {value!r:.80}")
        if not value:
            raise DataError(path, line, f"id {record_id!r}: `references` is empty; give at least one reference")
    elif not isinstance(value, str):
        raise DataError(path, line, f"id {record_id!r}: `prediction` must be a string, "
                        f"got {type(value).__name__} {value!r:.60}")
    return value


# ---------------------------------------------------------------------------------------------------- indexed join
_PROGRESS_EVERY = 1 << 16  # records between two progress calls
_UTF8_BOM = b"\xef\xbb\xbf"
JSON_LINES_SUFFIXES = (".jsonl", ".ndjson")


@dataclasses.dataclass(frozen=True)
class _Index:
    """Per record of a file, in file order: ``hashes`` (of the id), ``locators`` (byte offset or list index),
    ``lines``."""

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
        item = _json_line(self.path, line, text)
        check_no_surrogates(self.path, line, item, text)
        record_id, value = record_id_and_value(self.path, line, item, self.value_key)
        return record_id, self._checked(record_id, value, line)

    @gc_paused  # a scan makes one small object per record: the collector's passes would dominate
    def scan(self, progress: Optional[ProgressFn] = None, label: str = "") -> _Index:
        """Decode and check every record once; keep its id hash, locator and line."""
        import torch
        hashes, locators, lines = array("q"), array("q"), array("q")
        if not self.streamed:
            self._records = read_records(self.path, self.value_key)
            for position, record in enumerate(self._records):
                self._records[position] = dataclasses.replace(record,
                                                              value=self._checked(record.id, record.value, record.line))
                hashes.append(hash(record.id))
                locators.append(position)
                lines.append(record.line)
            return _Index(torch.frombuffer(hashes, dtype=torch.int64) if hashes else torch.empty(0, dtype=torch.int64),
                          locators, lines)
        try:
            total = os.path.getsize(self.path)
            handle = open(self.path, "rb")
        except (FileNotFoundError, IsADirectoryError):
            raise _not_found(self.path) from None
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
        return _Index(torch.frombuffer(hashes, dtype=torch.int64) if hashes else torch.empty(0, dtype=torch.int64),
                      locators, lines)

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
    import torch
    out = array("q")
    out.frombytes(values.to(torch.int64).contiguous().numpy().tobytes())
    return out


def _first_duplicate(file: _RecordFile, index: _Index) -> None:
    """Raise the DataError of the duplicate id that ``read_records`` meets first (lowest line of a second
    occurrence)."""
    import torch
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
        empty_prediction: what a reference without a prediction is scored as; when it is a string (and ``textual``
            is not given), predictions must be strings and references lists of strings. ``None``: the metric has no
            empty answer (the runner then refuses missing predictions).
        progress: called while the files are scanned (``label``, bytes done, bytes total).
        textual: whether predictions must be strings and references lists of strings (``None``: whether
            ``empty_prediction`` is a string) — for an empty answer ``""`` that names no image file
            (:meth:`~gpumetrics.harness.registry.TaskMetric.empty_answer`) among records that are not text.

    Attributes:
        missing_ids: the first ``max_listed`` ids of references without a prediction, in file order.
        missing_count: how many references have no prediction.

    Raises:
        DataError: the errors of :func:`read_records` (for every record, before any is scored),
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
        progress: Optional[ProgressFn] = None,
        label: str = "",
        max_listed: int = 100,
        textual: Optional[bool] = None,
    ) -> None:
        import torch

        textual = isinstance(empty_prediction, str) if textual is None else textual
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
            record_id, _ = self._predictions.read(self._prediction_index.locators[position],
                                                  self._prediction_index.lines[position])
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
        while 0 <= position < len(self._sorted_hashes) and (
                position == first or self._sorted_hashes[position] == self._sorted_hashes[first]):
            record = self._order[position]
            record_id, value = self._predictions.read(self._prediction_index.locators[record],
                                                      self._prediction_index.lines[record])
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
                    record_id, value = self._references.read(reference_index.locators[position],
                                                             reference_index.lines[position])
                    ids.append(record_id)
                    references.append(value)
                    predictions.append(self._prediction(record_id, self._match[position]))
                yield Batch(ids, predictions, references)
        finally:
            self._predictions.close()
            self._references.close()

    def materialize(self) -> JoinedData:
        """Every sample in memory, as :class:`JoinedData` (small files, tests)."""
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


# ---------------------------------------------------------------------------------------------------- in-memory join
#: what :func:`join_records` does with a reference that has no prediction
MISSING_POLICIES = ("error", "empty", "zero", "skip")


def join_records(
    predictions: Path, references: Path, pred_records: list[Record], ref_records: list[Record],
    pred_value: Callable[[Record], Any], ref_value: Callable[[Record], Any],
    missing: str, empty: Any = "",
) -> JoinedData:
    """Join records already in memory by id, in the order of ``ref_records`` (the suites' official formats, COCO).

    Args:
        predictions, references: the files the records come from (named in errors).
        pred_value, ref_value: a record → the value the metric takes (they check it and raise ``DataError``).
        missing: a reference without prediction: ``"error"`` (DataError naming the ids), ``"empty"`` (the ``empty``
            prediction), ``"zero"`` (left out, scored 0 in the mean: ``missing_score=0``) or ``"skip"`` (left out
            and listed in ``not_evaluated``, as ``COCOEvalCap`` leaves out images without a result).

    Raises:
        DataError: a prediction id that no reference has, or (``"error"``) references without prediction.

    Example:
        >>> refs, preds = [Record("a", "x", 1), Record("b", "y", 2)], [Record("b", "y", 1)]
        >>> data = join_records(Path("p"), Path("r"), preds, refs, lambda r: r.value, lambda r: [r.value], "zero")
        >>> data.ids, data.predictions, data.missing, data.total
        (['b'], ['y'], ['a'], 2)
    """
    if missing not in MISSING_POLICIES:
        raise ValueError(f"missing must be one of {', '.join(MISSING_POLICIES)}, got {missing!r}")
    known = {record.id for record in ref_records}
    for record in pred_records:
        if record.id not in known:
            raise DataError(predictions, record.line, f"id {record.id!r} is not in the gold file {references}")
    by_id = {record.id: record for record in pred_records}
    absent = [record for record in ref_records if record.id not in by_id]
    if absent and missing == "error":
        shown = ", ".join(f"{r.id!r} (line {r.line})" for r in absent[:5]) + (", …" if len(absent) > 5 else "")
        raise DataError(predictions, None, f"{len(absent)} of {len(ref_records)} ids of {references} have no "
                                           f"prediction: {shown}; the official script asserts that every id has one")
    ids, preds, refs = [], [], []
    for record in ref_records:
        if record.id in by_id:
            gold = ref_value(record)
            preds.append(pred_value(by_id[record.id]))
        elif missing in ("zero", "skip"):
            if missing == "zero":
                ref_value(record)  # the gold record is checked all the same
            continue
        else:
            gold = ref_value(record)
            preds.append(empty)
        ids.append(record.id)
        refs.append(gold)
    if missing == "skip":
        return JoinedData(ids=ids, predictions=preds, references=refs, missing=[], not_evaluated=[r.id for r in absent])
    return JoinedData(ids=ids, predictions=preds, references=refs, missing=[r.id for r in absent],
                      missing_score=0.0 if missing == "zero" else None)


def read_field_records(path: Path | str, fields: tuple[str, ...], example: str) -> list[tuple]:
    """The records of a JSON Lines file whose ``fields`` are strings, as tuples in file order (ids need not be
    unique: ``gpumetrics clip-score``'s ``{"image", "caption"}`` records may name one image twice).

    Raises:
        DataError: the file is missing, a socket or a device (``/dev/zero``), a line is not a JSON object or lacks a
            string field (``example`` shows the layout), a field holds a lone surrogate, or the file holds no record.

    Example:
        >>> import tempfile, os
        >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        ...     _ = f.write('{"image": "0.png", "caption": "a dog"}\\n')
        >>> read_field_records(f.name, ("image", "caption"), "")
        [('0.png', 'a dog')]
        >>> os.remove(f.name)
    """
    records = []
    try:
        handle = open_input(path)  # /dev/zero is refused: its one endless line would take all memory
    except (FileNotFoundError, IsADirectoryError):
        raise _not_found(path) from None
    except ValueError as err:
        raise DataError(path, None, str(err).removeprefix(f"{path} ")) from None
    with handle:
        for number, raw in enumerate(handle, start=1):
            if number == 1 and raw.startswith(_UTF8_BOM):  # a leading BOM (Windows editors) is not data
                raw = raw[3:]
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError:
                raise DataError(path, number, "not valid UTF-8") from None
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(path, number, f"not a JSON object: {err.msg}{_lone_cr_hint(line)}") from None
            except (ValueError, RecursionError) as err:  # a 5000-digit integer, nesting too deep
                raise DataError(path, number, f"unreadable JSON value: {type(err).__name__}: {err}") from None
            if not isinstance(record, dict) or not all(isinstance(record.get(field), str) for field in fields):
                raise DataError(path, number, f"expected {example}")
            refuse_repeated_keys(path, number, line, fields)
            values = tuple(record[field] for field in fields)
            check_no_surrogates(path, number, list(values), line)
            records.append(values)
    if not records:
        raise DataError(path, None, "holds no record")
    return records


# ---------------------------------------------------------------------------------------------------- COCO files
COCO_FORMAT_NOTE = (
    "COCO caption files: results `[{\"image_id\": …, \"caption\": \"…\"}, …]`, annotations "
    "`{\"images\": [{\"id\": …}, …], \"annotations\": [{\"image_id\": …, \"caption\": \"…\"}, …]}`"
)


def _read_json_items(path: Path) -> tuple[str, Iterator[tuple[Optional[str], Any, int]]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (FileNotFoundError, IsADirectoryError):
        raise _not_found(path) from None
    except UnicodeDecodeError as err:
        raise DataError(path, _line_of(err.object.decode("utf-8", "replace"), err.start), "not valid UTF-8") from None
    return text, _iter_json_items(path, text)


def _coco_image_id(value: Any, path: Path, line: Optional[int], where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise DataError(path, line, f"{where}: `image_id` must be an integer or a string, "
                        f"got {type(value).__name__} {value!r:.40}")
    return str(value)


def _check_id_kind(kinds: dict[str, tuple[bool, str]], image: str, value: Any, path: Path, line: Optional[int],
                   where: str) -> None:
    """Refuse an annotations file naming one image both as an integer and as a string (``7`` and ``"7"``): COCO
    tells them apart, the reader keys images by text and would merge their captions."""
    is_int = isinstance(value, int)
    seen = kinds.setdefault(image, (is_int, where))
    if seen[0] != is_int:
        raise DataError(path, line, f"{where}: image_id {value!r:.40} and {seen[1]}'s image_id "
                        f"{(int(image) if seen[0] else image)!r:.40} are two images to COCOEvalCap (an integer and a "
                        "string) but the same id here: give every image id one type")


@gc_paused
def read_coco(results_path: Path | str, annotations_path: Path | str) -> JoinedData:
    """Read a COCO caption results file and a ``captions_*.json`` annotations file, as ``COCOEvalCap`` pairs them.

    As pycocoevalcap's example does (``params['image_id'] = cocoRes.getImgIds()``), only the images that have a
    result are evaluated, in the order of the annotations' ``images`` list (of first appearance in ``annotations``
    when the file has no ``images``); each image's references are all its annotation captions, in file order.

    Args:
        results_path: JSON array of ``{"image_id": …, "caption": "…"}`` (other keys ignored), one per image.
        annotations_path: JSON object with ``annotations`` (``{"image_id", "caption"}`` records, several per image)
            and optionally ``images`` (``{"id": …}`` records).

    Returns:
        :class:`JoinedData` with the image ids (as strings), result captions and reference lists; ``missing`` is
        empty (an image without a result is not evaluated, it is not scored as an empty caption: it is listed in
        ``not_evaluated``).

    Raises:
        DataError: naming the file, the line (results) or the ``annotations[k]`` entry, and the image id: a
            malformed file, a caption that is not a string, a result for an image the annotations do not list, a
            second result for one image, an image with a result but no reference caption, no result at all.

    Example:
        >>> import tempfile, os, pathlib, json
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "r.json").write_text(json.dumps([{"image_id": 7, "caption": "a dog"}]))
        >>> _ = (d / "a.json").write_text(json.dumps({"images": [{"id": 3}, {"id": 7}], "annotations": [
        ...     {"image_id": 7, "caption": "a dog runs"}, {"image_id": 3, "caption": "a cat"},
        ...     {"image_id": 7, "caption": "dog"}]}))
        >>> data = read_coco(d / "r.json", d / "a.json")
        >>> data.ids, data.predictions, data.references, data.not_evaluated
        (['7'], ['a dog'], [['a dog runs', 'dog']], ['3'])
    """
    results_path, annotations_path = Path(results_path), Path(annotations_path)
    text, items = _read_json_items(annotations_path)
    sections: dict[str, tuple[Any, int]] = {}
    first = _skip_ws(text, 0)
    if first < len(text) and text[first] != "{":
        raise DataError(annotations_path, _line_of(text, first),
                        f"an annotations file is a JSON object; {COCO_FORMAT_NOTE}")
    for key, value, line in items:
        if key in ("annotations", "images") and key in sections:  # json.load would keep the last one silently
            raise DataError(annotations_path, line, f"a second `{key}` key (the first on line {sections[key][1]})")
        sections[key] = (value, line)
    if "annotations" not in sections or not isinstance(sections["annotations"][0], list):
        raise DataError(annotations_path, None, f"no `annotations` list; {COCO_FORMAT_NOTE}")
    annotations, annotations_line = sections["annotations"]
    references: dict[str, list[str]] = {}
    kinds: dict[str, tuple[bool, str]] = {}
    for index, record in enumerate(annotations):
        where = f"annotations[{index}]"
        if not isinstance(record, dict) or "image_id" not in record or "caption" not in record:
            raise DataError(annotations_path, annotations_line,
                            f"{where} must be an object with `image_id` and `caption`, got {record!r:.80}")
        image = _coco_image_id(record["image_id"], annotations_path, annotations_line, where)
        _check_id_kind(kinds, image, record["image_id"], annotations_path, annotations_line, where)
        if not isinstance(record["caption"], str):
            raise DataError(annotations_path, annotations_line,
                            f"{where} (image_id {image}): `caption` must be a string, "
                            f"got {type(record['caption']).__name__} {record['caption']!r:.40}")
        references.setdefault(image, []).append(record["caption"])
    order = list(references)
    listed: Optional[set[str]] = None
    if "images" in sections:
        images, images_line = sections["images"]
        if not isinstance(images, list):
            raise DataError(annotations_path, images_line,
                            f"`images` must be a list of {{\"id\": …}} records; {COCO_FORMAT_NOTE}")
        order = []
        for index, record in enumerate(images):
            if not isinstance(record, dict) or "id" not in record:
                raise DataError(annotations_path, images_line,
                                f"images[{index}] must be an object with an `id`, got {record!r:.80}")
            order.append(_coco_image_id(record["id"], annotations_path, images_line, f"images[{index}]"))
            _check_id_kind(kinds, order[-1], record["id"], annotations_path, images_line, f"images[{index}]")
        listed = set(order)

    text, items = _read_json_items(results_path)
    first = _skip_ws(text, 0)
    if first < len(text) and text[first] != "[":
        raise DataError(results_path, _line_of(text, first), f"a results file is a JSON array; {COCO_FORMAT_NOTE}")
    results: dict[str, str] = {}
    result_line: dict[str, int] = {}
    for _, record, line in items:
        if not isinstance(record, dict) or "image_id" not in record or "caption" not in record:
            raise DataError(results_path, line,
                            f"a result must be an object with `image_id` and `caption`, got {record!r:.80}")
        image = _coco_image_id(record["image_id"], results_path, line, "result")
        if not isinstance(record["caption"], str):
            raise DataError(results_path, line, f"image_id {image}: `caption` must be a string, got "
                            f"{type(record['caption']).__name__} {record['caption']!r:.40}")
        if (listed is not None and image not in listed) or (listed is None and image not in references):
            raise DataError(results_path, line,
                            f"result for unknown image_id {image}: {annotations_path} does not list it")
        if image not in references:
            raise DataError(results_path, line, f"image_id {image} has no reference caption in {annotations_path}")
        if image in results:
            raise DataError(results_path, line,
                            f"second result for image_id {image} (first on line {result_line[image]}); "
                            "COCOEvalCap scores one caption per image")
        results[image], result_line[image] = record["caption"], line
    if not results:
        raise DataError(results_path, None, "the results file holds no result")
    gold = [Record(image, references.get(image), 0) for image in dict.fromkeys(order)]
    return join_records(results_path, annotations_path, [Record(i, c, result_line[i]) for i, c in results.items()],
                        gold, lambda record: record.value, lambda record: record.value, missing="skip")

"""Prediction and reference files of a task: reading JSON / JSONL records (joining them by id:
:mod:`gpumetrics.tasks.join`).

A predictions file holds records ``{"id": …, "prediction": …}``, a references file ``{"id": …, "references": […]}``
(a single string is accepted as one reference). Either file may be

* JSON Lines (``.jsonl`` / ``.ndjson``, one record per line, blank lines ignored),
* a JSON array of such records (``.json``), or
* a JSON object mapping id → value (``{"q1": "Paris", …}``, the SQuAD predictions layout; for references the value
  is the list of references).

Every error raises :class:`DataError` naming the file and the 1-based line of the offending record.
"""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any, Iterator, Optional

from gpumetrics.core import gc_paused

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
            task's mean (the AIJ-2022 scripts' "missing prediction → 0"; see :mod:`gpumetrics.tasks.formats`).
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
        value, index = _decode_at(path, text, index)
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


def _iter_jsonl_items(path: Path, text: str) -> Iterator[tuple[Optional[str], Any, int]]:
    # split on "\n" only: str.splitlines() would also cut at U+2028, U+0085 … that JSON allows unescaped in strings
    for line_no, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataError(path, line_no, f"malformed JSON line: {err.msg} (column {err.colno})") from None
        except RecursionError:
            raise DataError(path, line_no, _TOO_DEEP) from None
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
    except FileNotFoundError:
        raise DataError(path, None, "file not found") from None
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
    except FileNotFoundError:
        raise DataError(path, None, "file not found") from None
    except UnicodeDecodeError:
        head = ""  # read_records names the line
    if head and head != "{":
        raise DataError(path, 1, "the official format is one JSON object {id: value, …}, got "
                                 f"{'an array' if head == '[' else 'another JSON value'}")
    return read_records(path, "value")


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
        raise DataError(path, line, f"id {record_id!r}: `prediction` must be a string, got {type(value).__name__} {value!r:.60}")
    return value


# ---------------------------------------------------------------------------------------------------- COCO files
COCO_FORMAT_NOTE = (
    "COCO caption files: results `[{\"image_id\": …, \"caption\": \"…\"}, …]`, annotations "
    "`{\"images\": [{\"id\": …}, …], \"annotations\": [{\"image_id\": …, \"caption\": \"…\"}, …]}`"
)


def _read_json_items(path: Path) -> tuple[str, Iterator[tuple[Optional[str], Any, int]]]:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise DataError(path, None, "file not found") from None
    except UnicodeDecodeError as err:
        raise DataError(path, _line_of(err.object.decode("utf-8", "replace"), err.start), "not valid UTF-8") from None
    return text, _iter_json_items(path, text)


def _coco_image_id(value: Any, path: Path, line: Optional[int], where: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise DataError(path, line, f"{where}: `image_id` must be an integer or a string, got {type(value).__name__} {value!r:.40}")
    return str(value)


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
        raise DataError(annotations_path, _line_of(text, first), f"an annotations file is a JSON object; {COCO_FORMAT_NOTE}")
    for key, value, line in items:
        sections[key] = (value, line)
    if "annotations" not in sections or not isinstance(sections["annotations"][0], list):
        raise DataError(annotations_path, None, f"no `annotations` list; {COCO_FORMAT_NOTE}")
    annotations, annotations_line = sections["annotations"]
    references: dict[str, list[str]] = {}
    for index, record in enumerate(annotations):
        where = f"annotations[{index}]"
        if not isinstance(record, dict) or "image_id" not in record or "caption" not in record:
            raise DataError(annotations_path, annotations_line, f"{where} must be an object with `image_id` and `caption`, got {record!r:.80}")
        image = _coco_image_id(record["image_id"], annotations_path, annotations_line, where)
        if not isinstance(record["caption"], str):
            raise DataError(annotations_path, annotations_line, f"{where} (image_id {image}): `caption` must be a string, "
                            f"got {type(record['caption']).__name__} {record['caption']!r:.40}")
        references.setdefault(image, []).append(record["caption"])
    order = list(references)
    listed: Optional[set[str]] = None
    if "images" in sections:
        images, images_line = sections["images"]
        if not isinstance(images, list):
            raise DataError(annotations_path, images_line, f"`images` must be a list of {{\"id\": …}} records; {COCO_FORMAT_NOTE}")
        order = []
        for index, record in enumerate(images):
            if not isinstance(record, dict) or "id" not in record:
                raise DataError(annotations_path, images_line, f"images[{index}] must be an object with an `id`, got {record!r:.80}")
            order.append(_coco_image_id(record["id"], annotations_path, images_line, f"images[{index}]"))
        listed = set(order)

    text, items = _read_json_items(results_path)
    first = _skip_ws(text, 0)
    if first < len(text) and text[first] != "[":
        raise DataError(results_path, _line_of(text, first), f"a results file is a JSON array; {COCO_FORMAT_NOTE}")
    results: dict[str, str] = {}
    result_line: dict[str, int] = {}
    for _, record, line in items:
        if not isinstance(record, dict) or "image_id" not in record or "caption" not in record:
            raise DataError(results_path, line, f"a result must be an object with `image_id` and `caption`, got {record!r:.80}")
        image = _coco_image_id(record["image_id"], results_path, line, "result")
        if not isinstance(record["caption"], str):
            raise DataError(results_path, line, f"image_id {image}: `caption` must be a string, got "
                            f"{type(record['caption']).__name__} {record['caption']!r:.40}")
        if (listed is not None and image not in listed) or (listed is None and image not in references):
            raise DataError(results_path, line, f"result for unknown image_id {image}: {annotations_path} does not list it")
        if image not in references:
            raise DataError(results_path, line, f"image_id {image} has no reference caption in {annotations_path}")
        if image in results:
            raise DataError(results_path, line, f"second result for image_id {image} (first on line {result_line[image]}); "
                            "COCOEvalCap scores one caption per image")
        results[image], result_line[image] = record["caption"], line
    if not results:
        raise DataError(results_path, None, "the results file holds no result")
    ids = [image for image in dict.fromkeys(order) if image in results]
    left_out = [image for image in dict.fromkeys(order) if image not in results]
    return JoinedData(ids=ids, predictions=[results[i] for i in ids], references=[references[i] for i in ids], missing=[],
                      not_evaluated=left_out)

"""The organisers' file formats of the AIJ-2021 / AIJ-2022 tasks, read into the records the task metrics take.

A suite task names its format (``SuiteTask.format``); a config then gives the two official files — the gold file as
``references``, the participant's file as ``predictions`` — and nothing else about their layout. Each reader checks
the files as the official script would use them and raises :class:`~gpumetrics.harness.records.DataError` naming the
file, the line of the record and its id where the script would assert, crash, or silently score a malformed record.

(The ``coco`` layout is the harness's own: :func:`~gpumetrics.harness.records.read_coco`.) The organisers' formats:

=====================  ================================================  ==========================================
format                 files (one JSON object ``{id: value}`` each)      a reference without prediction
=====================  ================================================  ==========================================
``aij2021-htr``        gold ``{id: "text"}``, pred ``{id: "text"}``      scored as ``""`` (as the script)
``aij2021-c2c``        gold ``{id: "code"}``, pred ``{id: "code"}``      DataError (the script stops)
``aij2021-zsod``       gold and pred ``{image: {label: [[x,y,w,h],…]}}``  DataError (the script asserts); a gold
                                                                         label missing from the prediction too
``aij2021-vqa``        gold ``{id: {"answer", "lang", …}}``,             DataError (the script asserts)
                       pred ``{id: "answer"}``
``aij2022-text``       gold ``{id: [{"type": "text", "content":          0 in the mean (their ``get_f1`` /
                       [answers]}]}``, pred ``{id: [{"type": "text",     ``get_exact`` / ``get_NED`` skip it and
                       "content": "…"}, {"type": "image", …}, …]}``      divide by the number of references)
``aij2022-vqa``        as ``aij2022-text``                               DataError (the script asserts)
``aij2022-captioning`` as ``aij2022-text``; option ``inputs``: the       DataError (the script asserts)
                       task's input file ``{id: [{"type": "text"}, {"type": "image", "content": path}]}``
``aij2022-generation`` gold: the input file ``{id: [{"type": "text",     DataError (the script asserts)
                       "content": "… . caption"}]}`` (or ``[…, {"type": "text", "content": caption}]``);
                       pred ``{id: [{"type": "text"}, {"type": "image", "content": "dir/0.png"}]}``
=====================  ================================================  ==========================================

AIJ-2022 predictions: the **first** element of type ``text`` is the answer (the scripts' loop); a prediction with no
text element (only an image where text is expected, or an empty list) is a DataError here — the scripts score it as
``""`` (or, for an empty list, reuse the previous sample's answer or crash). A prediction id the gold file lacks is a
DataError (the scripts assert equal id sets or ignore it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

from gpumetrics.harness.records import DataError, JoinedData, Record, join_records, read_id_object
# (the format registry)
from gpumetrics.harness.registry import FORMATS, Format, bounded_repr, get_format, register_format  # noqa: F401

def _string(path: Path, record: Record, what: str = "value") -> str:
    if not isinstance(record.value, str):
        raise DataError(path, record.line, f"id {record.id!r}: the {what} must be a string, got "
                                           f"{type(record.value).__name__} {record.value!r:.60}")
    return record.value


def _elements(path: Path, record: Record) -> list[dict]:
    """An AIJ-2022 value: a list of ``{"type": …, "content": …}`` elements."""
    value = record.value
    if not isinstance(value, list) or not all(isinstance(e, dict) and "type" in e and "content" in e for e in value):
        raise DataError(path, record.line, f"id {record.id!r}: expected a list of {{\"type\", \"content\"}} elements, "
                                           f"got {value!r:.80}")
    return value


def _first_text(path: Path, record: Record) -> str:
    """The content of the first ``text`` element (the AIJ-2022 scripts' answer)."""
    for element in _elements(path, record):
        if element["type"] == "text":
            if not isinstance(element["content"], str):
                raise DataError(path, record.line, f"id {record.id!r}: the text element's content must be a string, "
                                                   f"got {element['content']!r:.60}")
            return element["content"]
    elements = record.value  # a hostile file's thousands of elements or megabyte types: a few, cut, are named
    types = ", ".join(bounded_repr(e["type"], 40) if not isinstance(e["type"], str) else e["type"][:40]
                      for e in elements[:5]) + (f", … ({len(elements)} elements)" if len(elements) > 5 else "")
    raise DataError(path, record.line, f"id {record.id!r}: no element of type 'text' (element types: "
                                       f"{types or 'none'}); a text answer is expected (the official script scores "
                                       "such a prediction as \"\")")


def _gold_answers(path: Path, record: Record) -> list[str]:
    """``value[0]["content"]``: the list of gold answers of an AIJ-2022 gold record."""
    elements = _elements(path, record)
    if not elements or elements[0]["type"] != "text":
        raise DataError(path, record.line, f"id {record.id!r}: the first element must be of type 'text' holding the "
                                           "list of gold answers")
    answers = elements[0]["content"]
    if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
        raise DataError(path, record.line, f"id {record.id!r}: the gold content must be a non-empty list of strings, "
                                           f"got {answers!r:.80}")
    return answers


def _read_both(predictions: Path, references: Path) -> tuple[list[Record], list[Record]]:
    refs = read_id_object(references)
    if not refs:
        raise DataError(references, None, "the gold file holds no records")
    return read_id_object(predictions), refs


# ---------------------------------------------------------------------------------------------------- AIJ-2021
@register_format("aij2021-htr", "AIJ-2021 HTR: {id: text} files; a missing prediction is \"\"")
def read_aij2021_htr(predictions: Path, references: Path, options: dict) -> tuple[JoinedData, dict]:
    """Read AIJ-2021 HTR files: N predicted strings (a missing one is ``""``) and N ``[gold]``."""
    preds, refs = _read_both(predictions, references)
    data = join_records(predictions, references, preds, refs, lambda r: _string(predictions, r, "prediction"),
                 lambda r: [_string(references, r, "gold text")], missing="empty")
    return data, options


@register_format("aij2021-c2c", "AIJ-2021 Code2code: {id: code} files; every id needs a prediction")
def read_aij2021_c2c(predictions: Path, references: Path, options: dict) -> tuple[JoinedData, dict]:
    """Read AIJ-2021 Code2code files: N predicted and N ``[gold]`` code strings; every id needs a prediction."""
    preds, refs = _read_both(predictions, references)
    data = join_records(predictions, references, preds, refs, lambda r: _string(predictions, r, "prediction"),
                 lambda r: [_string(references, r, "gold code")], missing="error")
    return data, options


def _boxes(path: Path, record: Record, label: str, boxes: Any) -> list[list[float]]:
    """``[[x, y, w, h], …]``; ``[[]]`` means no box (the script's rule for predictions, applied to both files)."""
    from gpumetrics.core.checks import is_finite  # here: `gpumetrics list` reads this module without torch

    if boxes == [[]]:
        return []
    ok = isinstance(boxes, list) and all(
        isinstance(box, list) and len(box) == 4
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) and is_finite(v) for v in box)
        for box in boxes
    )
    if not ok:
        raise DataError(path, record.line, f"id {record.id!r}, label {label!r}: expected a list of [x, y, w, h] "
                                           f"boxes (or [[]] for none), got {boxes!r:.80}")
    return boxes


def _label_boxes(path: Path, record: Record) -> dict[str, list]:
    if not isinstance(record.value, dict):
        raise DataError(path, record.line, f"id {record.id!r}: expected an object label → boxes, got "
                                           f"{type(record.value).__name__}")
    return {label: _boxes(path, record, label, boxes) for label, boxes in record.value.items()}


@register_format("aij2021-zsod", "AIJ-2021 zero-shot detection: {image: {label: [[x, y, w, h], …]}}; the gold labels "
                           "are the queries, each needs a predicted list")
def read_aij2021_zsod(predictions: Path, references: Path, options: dict) -> tuple[JoinedData, dict]:
    """Read AIJ-2021 zero-shot detection files: N dicts label → boxes and N ``[gold dict]``; every image and every
    queried label needs a prediction."""
    preds, refs = _read_both(predictions, references)
    data = join_records(predictions, references, preds, refs, lambda r: _label_boxes(predictions, r),
                 lambda r: [_label_boxes(references, r)], missing="error")
    pred_lines = {record.id: record.line for record in preds}
    for image, pred, (gold,) in zip(data.ids, data.predictions, data.references):
        for label in gold:
            if label not in pred:
                raise DataError(predictions, pred_lines[image], f"id {image!r}: no prediction for the queried label "
                                                                f"{label!r} (give [] when nothing is found)")
    return data, options


def _vqa_gold(path: Path, record: Record) -> dict:
    value = record.value
    if not isinstance(value, dict) or "answer" not in value or "lang" not in value:
        raise DataError(path, record.line, f"id {record.id!r}: expected an object with \"answer\" and \"lang\", got "
                                           f"{value!r:.80}")
    answers = value["answer"] if isinstance(value["answer"], list) else [value["answer"]]
    if not answers or not all(isinstance(a, str) for a in answers):
        raise DataError(path, record.line, f"id {record.id!r}: \"answer\" must be a string or a non-empty list of "
                                           f"strings, got {value['answer']!r:.60}")
    if value["lang"] not in ("en", "ru"):
        raise DataError(path, record.line,
                        f"id {record.id!r}: \"lang\" must be \"en\" or \"ru\", got {value['lang']!r}")
    return {"answers": answers, "lang": value["lang"]}


@register_format("aij2021-vqa", "AIJ-2021 VQA: gold {id: {answer, lang, question_id}}, predictions {id: answer}; every "
                          "id needs a prediction")
def read_aij2021_vqa(predictions: Path, references: Path, options: dict) -> tuple[JoinedData, dict]:
    """Read AIJ-2021 VQA files: N predicted answers and N ``[{"answers": [...], "lang": ...}]``; every id needs a
    prediction."""
    preds, refs = _read_both(predictions, references)
    data = join_records(predictions, references, preds, refs, lambda r: _string(predictions, r, "prediction"),
                 lambda r: [_vqa_gold(references, r)], missing="error")
    return data, options


# ---------------------------------------------------------------------------------------------------- AIJ-2022
@register_format("aij2022-text", "AIJ-2022 TextQA, MathQA, TRitW: {id: [{type, content}, …]}; the first text "
                           "element answers; a missing prediction scores 0")
def read_aij2022_text(predictions: Path, references: Path, options: dict) -> tuple[JoinedData, dict]:
    """Read an AIJ-2022 text task: ``predictions`` (N texts, missing ids left out) and ``references`` (N lists of
    gold answers), ``missing_score=0``; ``options`` come back unchanged.

    Example:
        >>> import json, pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> gold = {"0": [{"type": "text", "content": ["три"]}], "1": [{"type": "text", "content": ["x"]}]}
        >>> pred = {"0": [{"type": "image", "content": "a.png"}, {"type": "text", "content": "3"}]}
        >>> _ = (d / "gt.json").write_text(json.dumps(gold)); _ = (d / "pred.json").write_text(json.dumps(pred))
        >>> data, _ = read_aij2022_text(d / "pred.json", d / "gt.json", {})
        >>> data.predictions, data.references, data.missing, data.total
        (['3'], [['три']], ['1'], 2)
    """
    preds, refs = _read_both(predictions, references)
    data = join_records(predictions, references, preds, refs, lambda r: _first_text(predictions, r),
                 lambda r: _gold_answers(references, r), missing="zero")
    return data, options


@register_format("aij2022-vqa", "AIJ-2022 VisualQA: as aij2022-text, every id needs a prediction")
def read_aij2022_vqa(predictions: Path, references: Path, options: dict) -> tuple[JoinedData, dict]:
    """Read AIJ-2022 VisualQA files as :func:`read_aij2022_text`, but every id needs a prediction."""
    preds, refs = _read_both(predictions, references)
    data = join_records(predictions, references, preds, refs, lambda r: _first_text(predictions, r),
                 lambda r: _gold_answers(references, r), missing="error")
    return data, options


def _image_after_text(path: Path, record: Record, index: int = 1) -> Optional[str]:
    """``value[index]["content"]`` when that element is an image, else None (the scripts' ruCLIP term scores 0; an
    empty path too: they open the image folder itself, which fails)."""
    elements = _elements(path, record)
    if len(elements) > index and elements[index]["type"] == "image" and isinstance(elements[index]["content"], str):
        return elements[index]["content"] or None
    return None


@register_format("aij2022-captioning", "AIJ-2022 ImageCaptioning: gold/pred as aij2022-text; the image of each id is "
                                 "the second element of the `inputs` file", path_options=("inputs",))
def read_aij2022_captioning(predictions: Path, references: Path, options: dict) -> tuple[JoinedData, dict]:
    """Read AIJ-2022 ImageCaptioning files: N predicted captions and N ``{"image": path or None, "answers": [...]}``
    (image from the ``inputs`` file; None when the prediction's first element is not text); sets ``image_root`` (the
    input file's folder) and ``missing_image="zero"``."""
    options = dict(options)
    inputs = options.pop("inputs", None)
    if not inputs:
        raise DataError(references, None, "ImageCaptioning needs the task's input file (option `inputs`, e.g. "
                                          "captioning_input.json): it names each id's image")
    inputs = Path(inputs)
    input_records = {record.id: record for record in read_id_object(inputs)}
    preds, refs = _read_both(predictions, references)
    images: dict[str, Optional[str]] = {}
    for record in refs:
        if record.id not in input_records:
            raise DataError(inputs, None, f"id {record.id!r} of {references} is not in the input file")
        images[record.id] = _image_after_text(inputs, input_records[record.id])

    def prediction(record: Record) -> dict:
        text = _first_text(predictions, record)
        first = _elements(predictions, record)[0]
        # ruCLIP reads the *first* element as the caption: not text → that sample's CLIP term is 0
        image = images[record.id] if first["type"] == "text" else None
        return {"text": text, "image": image}

    data = join_records(predictions, references, preds, refs, prediction, lambda r: _gold_answers(references, r),
                 missing="error")
    data.references = [{"image": p["image"], "answers": golds} for p, golds in zip(data.predictions, data.references)]
    data.predictions = [p["text"] for p in data.predictions]
    options.update(image_root=os.fspath(inputs.parent), missing_image="zero")  # paths are relative to the input file
    return data, options


def _generation_caption(path: Path, record: Record) -> str:
    elements = _elements(path, record)
    if len(elements) == 2 and isinstance(elements[1]["content"], str):
        return elements[1]["content"]
    if len(elements) == 1 and isinstance(elements[0]["content"], str):
        return ". ".join(elements[0]["content"].split(". ")[1:])  # the text after the instruction's first ". "
    raise DataError(path, record.line, f"id {record.id!r}: expected [{{text: 'instruction. caption'}}] or "
                                       f"[…, {{text: caption}}], got {record.value!r:.80}")


@register_format("aij2022-generation", "AIJ-2022 ImageGeneration: gold = the input file (captions), predictions name "
                                 "the generated image as their second element, relative to the predictions file")
def read_aij2022_generation(predictions: Path, references: Path, options: dict) -> tuple[JoinedData, dict]:
    """Read AIJ-2022 ImageGeneration files: N image paths (None without an image element) and N ``[caption]``; sets
    ``image_root`` (the predictions file's folder) and ``missing_image="zero"``."""
    preds, refs = _read_both(predictions, references)

    def image(record: Record) -> Optional[str]:
        content = _image_after_text(predictions, record)
        return None if content is None else "/".join(content.split("/")[-2:])  # the script keeps the last two parts

    data = join_records(predictions, references, preds, refs, image, lambda r: [_generation_caption(references, r)],
                 missing="error")
    options = dict(options)
    options.update(image_root=os.fspath(predictions.parent), missing_image="zero")  # relative to the predictions file
    return data, options

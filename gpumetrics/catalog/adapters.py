"""What the catalog's entries need beyond a factory: update-argument adapters for non-text records, per-sample
scorers and the runner hooks (``safe_cut``, ``prepare``). Metric modules are imported inside the functions, on use."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional

from gpumetrics.core.positions import at_position, convert_each

if TYPE_CHECKING:  # torch is imported in the adapters that build tensors: listing the catalog stays light
    from gpumetrics.core import Metric


# ---------------------------------------------------------------------------------------------------- hooks
def ptb_safe_cut(metric: Metric) -> Optional[Callable[[Any, Any], bool]]:
    """``TaskMetric.safe_cut`` of the metrics that can tokenise a batch as one pycocoevalcap PTB call (BLEU coco,
    CIDEr, ROUGE coco, the COCO table): in such a call a caption's tokens can depend on the next sample's, so the
    runner cuts batches only after samples where that cannot happen (``text.tokenize.ptb.ptb_sample_reads_next``)."""
    if not metric.ptb_reads_next_sample:
        return None
    from gpumetrics.text.tokenize.ptb import ptb_sample_reads_next

    return ptb_sample_reads_next


def missing_image_empty_prediction(options: dict) -> Optional[str]:
    """``TaskMetric.empty_prediction_of`` of the entries that read image files named by predictions: under
    ``missing_image: zero`` a record without a prediction names no image (``""``) and is scored as such a
    prediction is (CLIP 0, or left out of the generated set; counted among the failed images); otherwise there is
    no empty answer and every id needs a prediction."""
    return "" if options.get("missing_image", "error") == "zero" else None


# ---------------------------------------------------------------------------------------------------- per sample
def error_rate_per_sample(cls_path: str) -> Callable[[dict, Any], Callable[..., Any]]:
    """Each sample's own rate: its edits / its best reference's length (the corpus rate pools these)."""

    def build(options: dict, device: Any) -> Callable[..., Any]:
        from gpumetrics.harness.registry import resolve
        from gpumetrics.text.edit import error_rate_compute, error_rate_pairs

        metric = resolve(cls_path)(**options)  # checks the options and resolves the default transform

        def score(preds: list, target: list) -> Any:
            return error_rate_compute(*error_rate_pairs(preds, target, metric.unit, metric.backend, device,
                                                        metric.transform))

        return score

    return build


# ---------------------------------------------------------------------------------------------------- adapters
def single_reference(refs: Any) -> Any:
    """A sample's one reference: ``"references": {…}`` or ``[{…}]``."""
    return refs[0] if isinstance(refs, list) and len(refs) == 1 else refs


def vqa_update_args(predictions: list[Any], references: list[Any]) -> tuple:
    """Records → ``update(preds, target, lang)``: each reference is ``{"answers": [gold, …], "lang": "en" | "ru"}``
    (``"references": {…}`` or ``[{…}]``).

    Raises:
        TypeError: naming the sample (its index in the batch).
    """
    target, langs = [], []
    for index, refs in enumerate(references):
        ref = single_reference(refs)
        if not isinstance(ref, dict) or "answers" not in ref or "lang" not in ref:
            raise at_position(TypeError(f'references {index} must be one object {{"answers": [gold, …], '
                                        f'"lang": "en"|"ru"}}, got {ref!r:.80}'), index)
        target.append(ref["answers"])
        langs.append(ref["lang"])
    return predictions, target, langs


def _box_dict(value: Any, what: str) -> dict:
    import torch

    if not isinstance(value, dict):
        raise TypeError(f"{what} must be a JSON object label → list of [x, y, w, h], got {type(value).__name__}")
    out = {}
    for label, boxes in value.items():
        if isinstance(boxes, list) and not boxes:
            out[label] = torch.zeros(0, 4, dtype=torch.float64)
            continue
        try:
            out[label] = torch.as_tensor(boxes, dtype=torch.float64).reshape(-1, 4)
        except (TypeError, ValueError, RuntimeError, OverflowError):  # Overflow: a JSON integer past float64's range
            raise ValueError(f"{what}[{label!r}] must be a list of [x, y, w, h] boxes, got {boxes!r:.80}") from None
    return out


def zero_shot_update_args(predictions: list[Any], references: list[list[Any]]) -> tuple:
    """Records → ``update(preds, target)``: each prediction is ``{label: [[x, y, w, h], …]}``, each reference
    record holds one such dict (``"references": {…}`` or ``"references": [{…}]``)."""
    preds = convert_each(_box_dict, predictions, "prediction {}".format)
    target = convert_each(_box_dict, map(single_reference, references), "references {}".format)
    return preds, target


def label_update_args(predictions: list[Any], references: list[Any]) -> tuple:
    """Records → ``update(preds: LongTensor[B], target: LongTensor[B])``: each prediction is a class index, each
    reference one class index (``"references": 2`` or ``[2]``).

    Raises:
        TypeError: a label that is not an integer (named by its index in the batch).
    """
    import torch

    target = [single_reference(refs) for refs in references]
    for what, values in (("prediction", predictions), ("references", target)):
        for index, value in enumerate(values):
            if isinstance(value, bool) or not isinstance(value, int):
                raise at_position(TypeError(f"{what} {index} must be an integer class index, got {value!r:.40}"),
                                  index)
    return torch.tensor(predictions, dtype=torch.long), torch.tensor(target, dtype=torch.long)


def _doc_scores(value: Any, what: str) -> dict:
    if not isinstance(value, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                              for v in value.values()):
        raise TypeError(f"{what} must be a JSON object document id → number, got {value!r:.80}")
    try:
        return {doc: float(number) for doc, number in value.items()}
    except OverflowError:  # a JSON integer past float64's range (1 and 400 zeros is valid JSON)
        raise ValueError(f"{what} holds a number too large for a float64, got {value!r:.80}") from None


def ranking_update_args(predictions: list[Any], references: list[Any]) -> tuple:
    """Records of queries → ``update(scores, relevance, mask, doc_ids, qrels)``: each prediction is the run of one
    query ``{doc_id: score}``, each reference its qrels ``{doc_id: relevance label}`` (trec_eval's run and qrels
    files, one query a record). Unjudged retrieved documents have relevance 0; ties break by document id as
    trec_eval does (``doc_ids`` are the docno strings).
    """
    import torch

    runs = convert_each(_doc_scores, predictions, "prediction {}".format)
    judged = convert_each(_doc_scores, map(single_reference, references), "references {}".format)
    width = max([len(run) for run in runs] + [1])
    depth = max([len(q) for q in judged] + [1])
    scores = torch.zeros(len(runs), width, dtype=torch.float64)
    relevance = torch.zeros(len(runs), width, dtype=torch.float64)
    mask = torch.zeros(len(runs), width, dtype=torch.bool)
    qrels = torch.zeros(len(runs), depth, dtype=torch.float64)
    doc_ids = []
    for row, (run, labels) in enumerate(zip(runs, judged)):
        names = list(run)
        scores[row, : len(names)] = torch.tensor([float(run[n]) for n in names], dtype=torch.float64)
        relevance[row, : len(names)] = torch.tensor([float(labels.get(n, 0)) for n in names], dtype=torch.float64)
        mask[row, : len(names)] = True
        qrels[row, : len(labels)] = torch.tensor([float(v) for v in labels.values()], dtype=torch.float64)
        doc_ids.append(names + [""] * (width - len(names)))
    return scores, relevance, mask, doc_ids, qrels


def _text_regions(value: Any, what: str) -> tuple:
    """``[{"points": [x1, y1, …] or [x0, y0, x1, y1], "text": "…"}, …]`` → ``(Tensor[K, 8 | 4], [text, …])``."""
    import torch

    if not isinstance(value, list) or not all(isinstance(r, dict) and "points" in r and isinstance(r.get("text"), str)
                                              for r in value):
        raise TypeError(f'{what} must be a list of {{"points": [...], "text": "..."}} regions, got {value!r:.80}')
    if not value:
        return torch.zeros(0, 8, dtype=torch.float64), []
    try:
        polys = torch.tensor([r["points"] for r in value], dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError, OverflowError):  # Overflow: a JSON integer past float64's range
        raise ValueError(f"{what}: every region's points must be 8 numbers (a quadrilateral) or 4 (xyxy), "
                         "the same for all regions of an image") from None
    return polys.reshape(len(value), -1), [r["text"] for r in value]


def ocr_update_args(predictions: list[Any], references: list[Any]) -> tuple:
    """Records of images → ``update(pred_polys, pred_texts, gt_polys, gt_texts)``: each prediction and each reference
    is the image's list of ``{"points", "text"}`` regions (``"###"`` marks a don't-care ground-truth region)."""
    preds = convert_each(_text_regions, predictions, "prediction {}".format)
    gts = convert_each(_text_regions, (r[0] if isinstance(r, list) and len(r) == 1 and isinstance(r[0], list) else r
                                       for r in references), "references {}".format)
    return [p for p, _ in preds], [t for _, t in preds], [p for p, _ in gts], [t for _, t in gts]


def one_reference_update_args(predictions: list[Any], references: list[list[Any]]) -> tuple:
    """Text records → ``update(preds, target)`` for pairwise metrics (WMD): each sample has exactly one reference.

    Raises:
        TypeError: a sample with several references (named by its index in the batch).
    """
    target = []
    for index, refs in enumerate(references):
        if len(refs) != 1:
            raise at_position(TypeError(f"references {index}: this metric compares a pair of documents; give one "
                                        f"reference, got {len(refs)}"), index)
        target.append(refs[0])
    return predictions, target

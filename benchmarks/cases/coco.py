"""The whole COCO caption table vs pycocoevalcap ``COCOEvalCap.evaluate()`` without SPICE (raw captions, PTB included).

Both sides start from the same raw captions: ``COCOEvalCap`` runs its Java PTB tokenizer twice and the METEOR jar
(JVM start-ups included, as a user pays them) and its Python BLEU, ROUGE-L and CIDEr-D scorers; gpumetrics runs
:func:`~gpumetrics.functional.coco_caption_scores` (Python PTB port, tensor scorers). SPICE is left out of
``COCOEvalCap``'s scorer list (it needs downloaded CoreNLP models; gpumetrics does not compute it).
"""

from __future__ import annotations

import random

from benchmarks.registry import Contenders, register
from gpumetrics.functional import coco_caption_scores
from gpumetrics.text import cider
from gpumetrics.text.coco import COCO_KEYS

_N_REFS = 5
_SUBJECTS = ["A man", "a woman", "Two dogs", "A little girl", "a group of people", "The cat", "A young boy", "A skier",
             "A baseball player", "Some kids", "An elephant", "a horse", "A couple", "The bird", "A chef"]
_VERBS = ["is riding", "sits on", "standing next to", "holds", "is eating", "plays with", "looking at", "walks down",
          "jumps over", "is flying over", "lies on", "throws", "catches", "is cutting", "carries"]
_OBJECTS = ["a horse", "the beach", "a red bus", "a slice of pizza", "the street", "a frisbee", "the snow", "a table",
            "a plate of food", "the grass", "a kite", "a couch", "the train tracks", "a wave", "a wooden bench"]
_TAILS = ["", ".", " in the park.", " near the ocean", " on a sunny day.", " at night", ", while others watch.",
          " in front of a crowd!", " with 2 friends.", " during the game", " outside.", " in the rain"]


def _caption(rng: random.Random) -> str:
    return f"{rng.choice(_SUBJECTS)} {rng.choice(_VERBS)} {rng.choice(_OBJECTS)}{rng.choice(_TAILS)}"


def _data(size: int) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(size)
    return [_caption(rng) for _ in range(size)], [[_caption(rng) for _ in range(_N_REFS)] for _ in range(size)]


class _NoSpice:
    """Replaces Spice in ``COCOEvalCap``'s scorer list (not runnable offline; not part of the comparison)."""

    def compute_score(self, gts, res):
        return float("nan"), [float("nan")] * len(gts)

    def method(self):
        return "SPICE"


def _cocoevalcap(preds: list[str], target: list[list[str]]) -> dict[str, float]:
    import contextlib
    import io

    import pycocoevalcap.eval as coco_eval
    from pycocotools.coco import COCO

    def api(annotations: list[dict]) -> COCO:
        coco = COCO()
        coco.dataset = {"images": [{"id": i} for i in range(len(preds))], "annotations": annotations}
        with contextlib.redirect_stdout(io.StringIO()):
            coco.createIndex()
        return coco

    ground_truth = api([{"image_id": i, "id": i * 10 + k, "caption": c}
                        for i, refs in enumerate(target) for k, c in enumerate(refs)])
    results = api([{"image_id": i, "id": i + 1, "caption": p} for i, p in enumerate(preds)])
    evaluation = coco_eval.COCOEvalCap(ground_truth, results)
    evaluation.params["image_id"] = results.getImgIds()
    spice, coco_eval.Spice = coco_eval.Spice, _NoSpice
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            evaluation.evaluate()
    finally:
        coco_eval.Spice = spice
    return {key: float(evaluation.eval[key]) for key in COCO_KEYS}


@register("coco_caption_table", sizes=(5_000,), quick_sizes=(200,), repeats=3)
def coco_caption_case(size: int, device: str) -> Contenders:
    preds, target = _data(size)

    def ours() -> dict[str, float]:
        cider._token_code.cache_clear()  # repeats must not measure CIDEr's token-code cache hits
        return {key: value.item() for key, value in coco_caption_scores(preds, target, device=device).items()}

    return Contenders(
        ours={"coco_caption_scores (PTB port + 7 keys)": ours},
        anchors={"COCOEvalCap.evaluate() without SPICE (Java PTB, METEOR jar; JVM starts included)":
                 lambda: _cocoevalcap(preds, target)},
        check=lambda ours, anchor: all(abs(ours[key] - anchor[key]) <= 1e-9 for key in COCO_KEYS),
        note=f"raw COCO-like captions, {_N_REFS} references per image; Bleu_1..4, METEOR, ROUGE_L, CIDEr",
    )

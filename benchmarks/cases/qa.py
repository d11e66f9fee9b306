"""Token F1 / exact match vs a straightforward Python implementation of the SQuAD v2.0 formula and torchmetrics."""

from __future__ import annotations

import random

from torchmetrics.functional.text import squad as torchmetrics_squad

from benchmarks.registry import Contenders, register
from gpumetrics.functional import exact_match, token_f1
from gpumetrics.text.tokenize import answers
from testkit import qa_reference
from testkit.text_data import qa_batch


def _cold(fn):
    """Run ``fn`` with empty normalisation caches, so repeats do not measure cache hits."""

    def run():
        answers.squad_tokens.cache_clear()
        answers.aij2022_tokens.cache_clear()
        return fn()

    return run


def _torchmetrics_inputs(preds, target):
    return (
        [{"prediction_text": p, "id": str(i)} for i, p in enumerate(preds)],
        [{"answers": {"answer_start": [0] * len(g), "text": g}, "id": str(i)} for i, g in enumerate(target)],
    )


@register("token_f1_squad", sizes=(10_000, 100_000), quick_sizes=(2_000,))
def token_f1_case(size: int, device: str) -> Contenders:
    preds, target = qa_batch(random.Random(size), size)
    tm_preds, tm_target = _torchmetrics_inputs(preds, target)
    return Contenders(
        ours={"token_f1(preset=squad)": _cold(lambda: token_f1(preds, target, device=device).item())},
        anchors={
            "SQuAD v2.0 formula (Python, Counter)": lambda: qa_reference.squad_f1(preds, target),
            "torchmetrics squad (v1.1)": lambda: torchmetrics_squad(tm_preds, tm_target)["f1"].item(),
        },
        check=lambda ours, anchor: abs(ours - anchor) < 1e-9,
        note="1–4 gold answers per sample; normalisation caches cleared each run",
    )


@register("token_f1_aij2022", sizes=(10_000,), quick_sizes=(1_000,), repeats=3)
def token_f1_aij_case(size: int, device: str) -> Contenders:
    preds, target = qa_batch(random.Random(size), size)
    return Contenders(
        ours={"token_f1(preset=aij2022)": _cold(lambda: token_f1(preds, target, "aij2022", device=device).item())},
        anchors={
            "AIJ-2022 formula (Python, pymorphy3, 2020 dictionary)": lambda: qa_reference.aij2022_f1(preds, target)
        },
        check=lambda ours, anchor: abs(ours - anchor) < 1e-9,
        note="lemma cache of gpumetrics kept warm; anchor parses every word",
    )


@register("exact_match_squad", sizes=(100_000,), quick_sizes=(2_000,))
def exact_match_case(size: int, device: str) -> Contenders:
    preds, target = qa_batch(random.Random(size), size)
    return Contenders(
        ours={"exact_match(preset=squad)": _cold(lambda: exact_match(preds, target, device=device).item())},
        anchors={"SQuAD v2.0 formula (Python)": lambda: qa_reference.squad_exact(preds, target)},
        check=lambda ours, anchor: abs(ours - anchor) < 1e-9,
    )

"""CodeBLEU (mode codebleu-0.7) vs ``codebleu.calc_codebleu`` 0.7.0 on HumanEval-like Python pairs."""

from __future__ import annotations

import logging
import random

from benchmarks.registry import Contenders, register
from gpumetrics.functional import codebleu_score
from gpumetrics.text.codebleu import clear_caches
from testkit.codebleu_data import edit_program, humaneval_solutions

_KEYS = ("codebleu", "ngram_match_score", "weighted_ngram_match_score", "syntax_match_score", "dataflow_match_score")


def _pairs(size: int) -> tuple[list[str], list[str]]:
    """``size`` (candidate, reference) pairs: HumanEval canonical solutions cycled, each reference lightly edited
    (so repeats are different strings) and each candidate a random edit of its reference."""
    rng = random.Random(size)
    solutions = humaneval_solutions()
    target, preds = [], []
    for i in range(size):
        code = solutions[i % len(solutions)]
        reference = code if i < len(solutions) else code.replace("    ", " " * (4 + i // len(solutions) % 4))
        target.append(reference)
        preds.append(edit_program(reference, rng))
    return preds, target


def _cold(fn):
    """Each repeat starts without our per-string caches (parse trees, subtrees, data-flow edges), as a new process."""

    def run():
        clear_caches()
        return fn()

    return run


@register("codebleu", sizes=(100, 5_000), quick_sizes=(100,), repeats=3)
def codebleu_case(size: int, device: str) -> Contenders:
    from codebleu import calc_codebleu

    logging.getLogger().setLevel(logging.ERROR)
    preds, target = _pairs(size)

    def ours():
        result = codebleu_score(preds, target, language="python", device=device)
        return {key: float(result[key]) for key in _KEYS}

    return Contenders(
        ours={"codebleu_score (parse cache cleared)": _cold(ours)},
        anchors={"codebleu.calc_codebleu": lambda: calc_codebleu(target, preds, "python")},
        check=lambda ours, anchor: all(abs(ours[key] - anchor[key]) < 1e-9 for key in _KEYS),
        note="Python; HumanEval canonical solutions (cycled, re-indented) vs random edits (renames, swapped / deleted "
             "lines, syntax errors, empty programs, comments); tree-sitter parsing included on both sides",
    )

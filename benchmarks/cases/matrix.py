"""Data matrix: each text metric against its reference tool on text of every shape (issue 11, item 6).

Axes: vocabulary 25 / 3k / 100k words (Zipf frequencies), 5 / 25 / 200 tokens per text, 1 / 5 references per sample,
Latin / Cyrillic / CJK script. Metrics and anchors: BLEU vs sacrebleu (13a), ROUGE-1/2/L vs rouge-score, CIDEr-D vs
pycocoevalcap ``Cider``, token F1 vs the SQuAD v2.0 formula, CER / WER vs jiwer, edit distance (``backend="auto"``)
vs the rapidfuzz ``Levenshtein.distance`` loop it wraps. Goal: ratio ≥ 3× (edit distance ≥ 1×).

The full product is 54 shapes; for the single-reference metrics (CER, WER, edit distance) only its 27 one-reference
shapes apply: 297 cells, about an hour on 2 cores (``--matrix full``). ``--matrix`` runs the core cells: the base shape
(3k words, 25 tokens, 1 reference, Latin), every other level of every axis varied alone, and two corners — the
smallest kernel (25 words, 5 tokens, 1 reference, Latin: fixed costs dominate) and the largest (100k words,
200 tokens, 5 references, CJK: rare n-grams, long texts, wide characters) — 67 cells covering every level of every
axis. Each cell holds about ``TOKEN_BUDGET`` tokens (predictions plus references), so the anchor runs in about a
second whatever the shape.

Words are separated by spaces in every script (CJK words are 1–3 Han characters, as pre-segmented text), so the
script axis changes the characters, not the segmentation; texts of Latin and Cyrillic start with a capital and end
with ``.`` (CJK: ``。``). Predictions and references are independent edits (10 % substitutions, 5 % deletions,
5 % insertions) of one hidden text. ROUGE on Latin uses rouge-score's own tokenizer on both sides; rouge-score's
tokenizer drops every non-ASCII letter, so on Cyrillic / CJK gpumetrics runs ``tokenize="unicode"`` and rouge-score
is given the same rule as a custom tokenizer (both see the same tokens; CJK characters one by one).
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import random
from functools import lru_cache
from typing import Callable

from benchmarks.registry import Contenders, register

logging.getLogger("sacrebleu").setLevel(logging.ERROR)

VOCABULARIES = {"25": 25, "3k": 3_000, "100k": 100_000}
LENGTHS = (5, 25, 200)
REFERENCES = (1, 5)
SCRIPTS = ("latin", "cyrillic", "cjk")
TOKEN_BUDGET = 200_000
QUICK_TOKEN_BUDGET = 1_200
_LETTERS = {"latin": "abcdefghijklmnopqrstuvwxyz", "cyrillic": "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"}


@dataclasses.dataclass(frozen=True)
class Shape:
    vocab: str
    tokens: int
    refs: int
    script: str

    @property
    def name(self) -> str:
        return f"v{self.vocab}_t{self.tokens}_r{self.refs}_{self.script}"

    def pairs(self, budget: int) -> int:
        return max(2, budget // (self.tokens * (1 + self.refs)))


BASE = Shape("3k", 25, 1, "latin")


def core_shapes() -> list[Shape]:
    shapes = [BASE]
    shapes += [dataclasses.replace(BASE, vocab=v) for v in VOCABULARIES if v != BASE.vocab]
    shapes += [dataclasses.replace(BASE, tokens=t) for t in LENGTHS if t != BASE.tokens]
    shapes += [dataclasses.replace(BASE, refs=r) for r in REFERENCES if r != BASE.refs]
    shapes += [dataclasses.replace(BASE, script=s) for s in SCRIPTS if s != BASE.script]
    return shapes + [Shape("25", 5, 1, "latin"), Shape("100k", 200, 5, "cjk")]


@lru_cache(maxsize=None)
def vocabulary(size: int, script: str) -> tuple[list[str], list[float]]:
    """``size`` distinct words of ``script`` and their cumulative Zipf weights (rank r weighs 1 / (r + 1))."""
    rng = random.Random(f"{script}-{size}")
    seen: set[str] = set()
    words: list[str] = []
    while len(words) < size:
        if script == "cjk":
            word = "".join(chr(rng.randint(0x4E00, 0x9FFF)) for _ in range(rng.randint(1, 3)))
        else:
            word = "".join(rng.choices(_LETTERS[script], k=rng.randint(1, 9)))
        if word not in seen:
            seen.add(word)
            words.append(word)
    return words, list(itertools.accumulate(1.0 / (rank + 1) for rank in range(size)))


def corpus(shape: Shape, pairs: int, seed: int = 0) -> tuple[list[str], list[list[str]]]:
    """``pairs`` predictions and, per prediction, ``shape.refs`` references (edits of one hidden text each)."""
    rng = random.Random(f"{shape.name}-{pairs}-{seed}")
    words, cumulative = vocabulary(VOCABULARIES[shape.vocab], shape.script)
    end = "。" if shape.script == "cjk" else "."

    def draw(k: int) -> list[str]:
        return rng.choices(words, cum_weights=cumulative, k=k)

    def text(hidden: list[str]) -> str:
        out: list[str] = []
        for word in hidden:
            roll = rng.random()
            if roll < 0.05:
                continue
            out.append(draw(1)[0] if roll < 0.15 else word)
            if roll > 0.95:
                out.append(draw(1)[0])
        out = out or draw(1)
        if shape.script != "cjk":
            out[0] = out[0].capitalize()
        return " ".join(out) + end

    preds, target = [], []
    low, high = max(1, shape.tokens * 3 // 5), shape.tokens * 7 // 5
    for _ in range(pairs):
        hidden = draw(rng.randint(low, high))
        preds.append(text(hidden))
        target.append([text(hidden) for _ in range(shape.refs)])
    return preds, target


def _close(ours: float, anchor: float) -> bool:
    return abs(ours - anchor) <= 1e-9


def _bleu(preds: list[str], target: list[list[str]], shape: Shape, device: str) -> Contenders:
    from sacrebleu.metrics.bleu import BLEU

    from gpumetrics.functional import bleu_score

    streams = [list(stream) for stream in zip(*target)]
    return Contenders(
        ours={"bleu_score (13a)": lambda: float(bleu_score(preds, target, device=device))},
        anchors={"sacrebleu corpus_score (13a)": lambda: BLEU(tokenize="13a").corpus_score(preds, streams).score / 100},
        check=_close,
    )


_ROUGE_KEYS = ("rouge1", "rouge2", "rougeL")


class _UnicodeRougeTokenizer:
    """rouge-score ``Tokenizer`` with gpumetrics' ``"unicode"`` rule, so both sides see the same tokens."""

    def tokenize(self, text: str) -> list[str]:
        from gpumetrics.text.tokenize import get_tokenizer

        return get_tokenizer("unicode").tokenize(text)


def _rouge(preds: list[str], target: list[list[str]], shape: Shape, device: str) -> Contenders:
    from rouge_score import rouge_scorer

    from gpumetrics.functional import rouge_score

    tokenizer = "rouge-score" if shape.script == "latin" else "unicode"
    single = [refs[0] for refs in target] if shape.refs == 1 else target

    def ours() -> list[float]:
        scores = rouge_score(preds, single, rouge_keys=_ROUGE_KEYS, tokenize=tokenizer, device=device)
        return [float(scores[f"{k}_{s}"]) for k in _ROUGE_KEYS for s in ("precision", "recall", "fmeasure")]

    def anchor() -> list[float]:
        scorer = rouge_scorer.RougeScorer(list(_ROUGE_KEYS), tokenizer=None if shape.script == "latin"
                                          else _UnicodeRougeTokenizer())
        totals = [0.0] * (3 * len(_ROUGE_KEYS))
        for pred, refs in zip(preds, target):
            scores = scorer.score(refs[0], pred) if len(refs) == 1 else scorer.score_multi(refs, pred)
            for i, key in enumerate(_ROUGE_KEYS):
                totals[3 * i] += scores[key].precision
                totals[3 * i + 1] += scores[key].recall
                totals[3 * i + 2] += scores[key].fmeasure
        return [t / len(preds) for t in totals]

    suffix = "" if shape.script == "latin" else ", unicode tokenizer"
    return Contenders(
        ours={f"rouge_score (1, 2, L{suffix})": ours},
        anchors={f"rouge-score RougeScorer{suffix}": anchor},
        check=lambda a, b: all(_close(x, y) for x, y in zip(a, b)),
    )


def _cider(preds: list[str], target: list[list[str]], shape: Shape, device: str) -> Contenders:
    from pycocoevalcap.cider.cider import Cider

    from gpumetrics.functional import cider_score
    from gpumetrics.text import cider

    gts = {i: list(refs) for i, refs in enumerate(target)}
    res = {i: [pred] for i, pred in enumerate(preds)}

    def ours() -> float:
        cider._token_code.cache_clear()  # repeats must not measure cache hits
        return cider_score(preds, target, tokenize="none", device=device).item()

    return Contenders(
        ours={"cider_score (CIDEr-D, tokenize=none)": ours},
        anchors={"pycocoevalcap Cider": lambda: float(Cider().compute_score(gts, res)[0])},
        check=_close,
    )


def _token_f1(preds: list[str], target: list[list[str]], shape: Shape, device: str) -> Contenders:
    from gpumetrics.functional import token_f1
    from gpumetrics.text.tokenize import answers
    from testkit import qa_reference

    def ours() -> float:
        answers.squad_tokens.cache_clear()
        return token_f1(preds, target, device=device).item()

    return Contenders(
        ours={"token_f1 (squad)": ours},
        anchors={"SQuAD v2.0 formula (Python, Counter)": lambda: qa_reference.squad_f1(preds, target)},
        check=_close,
    )


def _cer(preds: list[str], target: list[list[str]], shape: Shape, device: str) -> Contenders:
    import jiwer

    from gpumetrics.functional import char_error_rate

    refs = [r[0] for r in target]
    chars = jiwer.ReduceToListOfListOfChars()
    return Contenders(
        ours={"char_error_rate (auto)": lambda: char_error_rate(preds, refs, device=device).item()},
        anchors={"jiwer cer (chars only)": lambda: jiwer.cer(refs, preds, reference_transform=chars,
                                                             hypothesis_transform=chars)},
        check=_close,
    )


def _wer(preds: list[str], target: list[list[str]], shape: Shape, device: str) -> Contenders:
    import jiwer

    from gpumetrics.functional import word_error_rate

    refs = [r[0] for r in target]
    return Contenders(
        ours={"word_error_rate (auto)": lambda: word_error_rate(preds, refs, device=device).item()},
        anchors={"jiwer wer": lambda: jiwer.wer(refs, preds)},
        check=_close,
    )


def _edit_distance(preds: list[str], target: list[list[str]], shape: Shape, device: str) -> Contenders:
    from rapidfuzz.distance import Levenshtein

    from gpumetrics.functional import edit_distance

    refs = [r[0] for r in target]

    def anchor() -> list[int]:
        distance = Levenshtein.distance
        return [distance(p, t) for p, t in zip(preds, refs)]

    return Contenders(
        ours={"edit_distance (auto)": lambda: edit_distance(preds, refs, reduction="none", device=device)},
        anchors={"rapidfuzz Levenshtein.distance loop": anchor},
        check=lambda ours, anchor: ours.tolist() == anchor,
    )


# metric → (contenders builder, goal ratio, takes several references, repeats)
METRICS: dict[str, tuple[Callable[..., Contenders], float, bool, int]] = {
    "bleu": (_bleu, 3.0, True, 3),
    "rouge": (_rouge, 3.0, True, 3),
    "cider_d": (_cider, 3.0, True, 3),
    "token_f1": (_token_f1, 3.0, True, 3),
    "cer": (_cer, 3.0, False, 5),
    "wer": (_wer, 3.0, False, 5),
    "edit_distance": (_edit_distance, 1.0, False, 7),
}


def _setup_for(metric: str, shape: Shape) -> Callable[[int, str], Contenders]:
    build = METRICS[metric][0]

    def setup(size: int, device: str) -> Contenders:
        preds, target = corpus(shape, size)
        contenders = build(preds, target, shape, device)
        contenders.note = f"{shape.name}, {size:,} pairs"
        return contenders

    return setup


def _register_all() -> None:
    core = set(core_shapes())
    for metric, (_, goal, multi_ref, repeats) in METRICS.items():
        core_here = core if multi_ref else {dataclasses.replace(s, refs=1) for s in core}
        for vocab, tokens, refs, script in itertools.product(VOCABULARIES, LENGTHS, REFERENCES, SCRIPTS):
            shape = Shape(vocab, tokens, refs, script)
            if refs > 1 and not multi_ref:
                continue
            register(
                f"matrix_{metric}_{shape.name}", sizes=(shape.pairs(TOKEN_BUDGET),),
                quick_sizes=(shape.pairs(QUICK_TOKEN_BUDGET),), unit="pairs", repeats=repeats, group="matrix",
                params={"metric": metric, **dataclasses.asdict(shape), "core": shape in core_here}, goal=goal,
            )(_setup_for(metric, shape))


_register_all()

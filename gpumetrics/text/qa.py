"""Question-answering and string metrics (docs/metrics/qa.md): token F1, exact match, string accuracy, VQA accuracy.

Presets:

* ``squad`` — the official SQuAD v2.0 evaluation script: lowercase, ASCII punctuation removed, articles
  ``a|an|the`` removed, whitespace split. Gold answers that normalise to nothing are dropped unless every gold
  answer does (then the gold is ``""``). Empty vs empty scores 1, empty vs non-empty 0. Max over gold answers.
* ``aij2022`` — the AIJ-2022 TextQA/MathQA scripts: lowercase, ASCII punctuation removed (``-`` kept for exact
  match), no article removal, each token lemmatised as the scripts' pymorphy2 with their dictionary
  (:mod:`~gpumetrics.text.tokenize.russian_lemmas`) and number words mapped to digits (``три`` → ``3``). When the best
  score is ≤ 0.5 (F1) or 0 (EM) and the *raw* prediction contains one of ``a b c d e`` (lower case), the prediction is
  replaced by the first such letter and rescored (multiple-choice answers such as "Ответ: b"); the rescored value is
  final.
* ``raw`` (exact match only) — plain string equality, as string accuracy.

VQA accuracy (AIJ-2021 ``vqaEval.py``) compares the *normalised* prediction
(:func:`~gpumetrics.text.tokenize.answers.vqa_eval_answer`, per question language) with the raw gold answers.

Tokenisation is Python (cached per distinct string); counting is tensor work on the metric's device: tokens become
ids, common-token counts come from one ``unique``/``bincount`` over all (sample, gold) pairs, the max over gold
answers from one ``scatter_reduce``.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core import (
    REDUCTIONS, PerSampleScore, as_reference_lists, as_text_list, check_choice, check_device, check_same_length,
    gc_paused, reduce_scores, single_threaded,
)
from gpumetrics.core.positions import sample_error
from gpumetrics.core.transfer import upload, upload_all
from gpumetrics.kernels.multiset import multiset_intersection_size
from gpumetrics.kernels.ragged import expand_segments, segment_ids
from gpumetrics.text.tokenize import dense_ids, encode_token_lists, get_tokenizer
from gpumetrics.text.tokenize.answers import VQA_LANGUAGES, Tokens, choice_letter, squad_tokens, vqa_eval_answer

F1_PRESETS = ("squad", "aij2022")
EXACT_MATCH_PRESETS = ("squad", "aij2022", "raw")

_AIJ_F1_FALLBACK_BELOW = 0.5  # the fallback applies when F1 <= this


# ---------------------------------------------------------------------------------------------------- normalisation
def _squad_gold_tokens(golds: Sequence[str]) -> list[Tokens]:
    """SQuAD v2 keeps only gold answers that normalise to something, or ``""`` when none does."""
    tokens = [squad_tokens(gold) for gold in golds]
    kept = [t for t in tokens if t]
    return kept or [()]


# ---------------------------------------------------------------------------------------------------- tensor scoring
def _f1_from_counts(common: Tensor, pred_len: Tensor, gold_len: Tensor) -> Tensor:
    """Token F1 per pair (float64) with SQuAD's empty rule: empty vs empty → 1, empty vs non-empty → 0.

    Computed as the scripts do, ``(2 * P * R) / (P + R)`` with ``P = common / |pred|``, ``R = common / |gold|``,
    not as the algebraically equal ``2 * common / (|pred| + |gold|)``: the two round differently in the last bit
    (4 common of 5 and 11 tokens: 0.5000000000000001 vs 0.5), which flips AIJ-2022's ``F1 <= 0.5`` fallback.
    """
    common, pred_len, gold_len = common.double(), pred_len.double(), gold_len.double()
    precision = common / pred_len.clamp_min(1.0)
    recall = common / gold_len.clamp_min(1.0)
    f1 = (2.0 * precision * recall) / (precision + recall).clamp_min(torch.finfo(torch.float64).tiny)
    f1 = torch.where(common > 0, f1, torch.zeros_like(f1))
    either_empty = (pred_len == 0) | (gold_len == 0)
    return torch.where(either_empty, (pred_len == gold_len).double(), f1)


def best_token_f1(pred_tokens: Sequence[Tokens], gold_tokens: Sequence[Sequence[Tokens]],
                  device: torch.device) -> Tensor:
    """Max over gold answers of token F1, for every sample, as tensor work.

    Args:
        pred_tokens: ``B`` token tuples.
        gold_tokens: ``B`` non-empty lists of token tuples.
        device: where the counting runs.

    Returns:
        ``DoubleTensor[B]``.
    """
    flat_golds = [tokens for golds in gold_tokens for tokens in golds]
    host = encode_token_lists([*pred_tokens, *flat_golds])  # one vocabulary for predictions and gold answers
    n_preds, n_pairs = len(pred_tokens), len(flat_golds)
    lengths = np.asarray(host.lengths, dtype=np.int64)
    golds_per_sample = np.fromiter(map(len, gold_tokens), dtype=np.int64, count=n_preds)
    pair_sample_host = np.repeat(np.arange(n_preds, dtype=np.int64), golds_per_sample)
    n_pred_tokens = int(lengths[:n_preds].sum())
    parts = (np.asarray(host.ids, dtype=np.int64), lengths, pair_sample_host)
    ids, lengths_t, pair_sample = upload_all(list(parts), device)  # one host-to-device copy, sizes known on the host
    pred_ids, gold_ids = ids[:n_pred_tokens], ids[n_pred_tokens:]
    pred_len, gold_len = lengths_t[:n_preds], lengths_t[n_preds:]

    left_ids, left_pairs = expand_segments(pred_ids, pred_len, pair_sample,
                                           int(lengths[:n_preds][pair_sample_host].sum()))
    right_pairs = segment_ids(gold_len, gold_ids.numel())
    common = multiset_intersection_size(left_ids, left_pairs, gold_ids, right_pairs, n_pairs,
                                        id_bound=max(host.vocab_size, 1))
    f1 = _f1_from_counts(common, pred_len[pair_sample], gold_len)
    best = torch.full((len(pred_tokens),), float("-inf"), dtype=torch.float64, device=device)
    return best.scatter_reduce(0, pair_sample, f1, reduce="amax")


def best_exact_match(pred_keys: Sequence[Any], gold_keys: Sequence[Sequence[Any]], device: torch.device) -> Tensor:
    """1.0 where a sample's key equals any of its gold keys (keys: strings or token tuples).

    Returns:
        ``DoubleTensor[B]``.
    """
    host_ids = np.asarray(dense_ids([*pred_keys, *(key for golds in gold_keys for key in golds)])[0], dtype=np.int64)
    golds_per_sample = np.fromiter(map(len, gold_keys), dtype=np.int64, count=len(gold_keys))
    pair_sample_host = np.repeat(np.arange(len(gold_keys), dtype=np.int64), golds_per_sample)
    ids, pair_sample = upload_all([host_ids, pair_sample_host], device)  # one host-to-device copy
    pred_ids, gold_ids = ids[: len(pred_keys)], ids[len(pred_keys):]
    hits = (pred_ids[pair_sample] == gold_ids).double()
    best = torch.zeros(len(pred_keys), dtype=torch.float64, device=device)
    return best.scatter_reduce(0, pair_sample, hits, reduce="amax")


def _rescore_with_choice_letter(
    scores: Tensor,
    preds: Sequence[str],
    gold_keys: Sequence[Sequence[Any]],
    needs_fallback: Tensor,
    letter_key: Callable[[str], Any],
    scorer: Callable[[Sequence[Any], Sequence[Sequence[Any]], torch.device], Tensor],
) -> Tensor:
    """AIJ fallback: where ``needs_fallback`` and a choice letter exists, rescore with the letter as prediction."""
    candidates = torch.nonzero(needs_fallback).flatten().tolist()
    letters = {i: choice_letter(preds[i]) for i in candidates}
    rescored = [i for i in candidates if letters[i] is not None]
    if not rescored:
        return scores
    new_scores = scorer([letter_key(letters[i]) for i in rescored], [gold_keys[i] for i in rescored], scores.device)
    scores = scores.clone()
    scores[upload(np.asarray(rescored, dtype=np.int64), scores.device)] = new_scores
    return scores


# ---------------------------------------------------------------------------------------------------- shared update
def _check_pairs(preds: Any, target: Any) -> tuple[list[str], list[list[str]]]:
    pred_list = as_text_list(preds, "preds")
    gold_lists = as_reference_lists(target, "target")
    check_same_length(pred_list, "preds", gold_lists, "target")
    return pred_list, gold_lists


def _token_f1_update(preds: Any, target: Any, preset: str, device: torch.device) -> Tensor:
    """Per-sample token F1 (max over gold answers): ``DoubleTensor[B]``."""
    pred_list, gold_lists = _check_pairs(preds, target)
    tokens = get_tokenizer(preset).tokenize  # "squad" or "aij2022" (hyphens dropped)
    if preset == "squad":
        return best_token_f1([tokens(p) for p in pred_list], [_squad_gold_tokens(g) for g in gold_lists], device)
    gold_tokens = [[tokens(g) for g in golds] for golds in gold_lists]
    scores = best_token_f1([tokens(p) for p in pred_list], gold_tokens, device)
    return _rescore_with_choice_letter(
        scores, pred_list, gold_tokens, scores <= _AIJ_F1_FALLBACK_BELOW, tokens, best_token_f1
    )


def _exact_match_update(preds: Any, target: Any, preset: str, device: torch.device) -> Tensor:
    """Per-sample exact match (max over gold answers): ``DoubleTensor[B]`` of 0/1."""
    pred_list, gold_lists = _check_pairs(preds, target)
    if preset == "raw":
        return best_exact_match(pred_list, gold_lists, device)
    if preset == "squad":
        return best_exact_match([squad_tokens(p) for p in pred_list], [_squad_gold_tokens(g) for g in gold_lists],
                                device)
    key = get_tokenizer("aij2022", keep_hyphen=True).tokenize
    gold_keys = [[key(g) for g in golds] for golds in gold_lists]
    scores = best_exact_match([key(p) for p in pred_list], gold_keys, device)
    return _rescore_with_choice_letter(scores, pred_list, gold_keys, scores == 0, key, best_exact_match)


def _languages(lang: Any, n: int) -> list[str]:
    """``lang`` as ``n`` language codes: one code for every sample or a sequence of ``n`` codes."""
    langs = [lang] * n if isinstance(lang, str) else as_text_list(lang, "lang")
    check_same_length(langs, "lang", range(n), "preds")
    for index, code in enumerate(langs):
        if code not in VQA_LANGUAGES:
            raise sample_error(ValueError, "lang", index, f"must be one of {', '.join(VQA_LANGUAGES)}, got {code!r}")
    return langs


def _vqa_accuracy_update(preds: Any, target: Any, lang: Any, device: torch.device) -> Tensor:
    """Per-question VQA accuracy (1 when the normalised prediction equals a raw gold answer): ``DoubleTensor[B]``."""
    pred_list, gold_lists = _check_pairs(preds, target)
    langs = _languages(lang, len(pred_list))
    return best_exact_match([vqa_eval_answer(p, code) for p, code in zip(pred_list, langs)], gold_lists, device)


def _default_device(device: Optional[torch.device | str]) -> torch.device:
    return check_device(device, "device")


# ---------------------------------------------------------------------------------------------------- public API
@gc_paused
@single_threaded
def token_f1(
    preds: str | Sequence[str],
    target: str | Sequence[str | Sequence[str]],
    preset: str = "squad",
    reduction: str = "mean",
    device: Optional[torch.device | str] = None,
) -> Tensor:
    """Token-level F1 between predicted and gold answers, max over gold answers (docs/metrics/qa.md).

    Args:
        preds: ``B`` predicted answers.
        target: ``B`` gold answers, each a string or a list of strings.
        preset: ``"squad"`` (SQuAD v2.0 script) or ``"aij2022"`` (lemmas + choice-letter fallback).
        reduction: ``"mean"`` → scalar, ``"sum"`` → scalar, ``"none"`` → ``DoubleTensor[B]``.
        device: where counting runs (default CPU).

    Returns:
        ``DoubleTensor[]`` in [0, 1] (or ``[B]`` for ``reduction="none"``).

    Raises:
        TypeError: ``preds``/``target`` are not strings / lists of strings.
        ValueError: length mismatch, a sample without gold answers, unknown ``preset``/``reduction``.

    Example:
        >>> token_f1(["the cat sat", ""], [["a cat sat down", "dog"], [""]])
        tensor(0.9000, dtype=torch.float64)
    """
    check_choice(preset, "preset", F1_PRESETS)
    check_choice(reduction, "reduction", REDUCTIONS)
    return reduce_scores(_token_f1_update(preds, target, preset, _default_device(device)), reduction)


@gc_paused
@single_threaded
def exact_match(
    preds: str | Sequence[str],
    target: str | Sequence[str | Sequence[str]],
    preset: str = "squad",
    reduction: str = "mean",
    device: Optional[torch.device | str] = None,
) -> Tensor:
    """Exact match of normalised answers, max over gold answers (docs/metrics/qa.md, MathQA).

    Args:
        preds: ``B`` predicted answers.
        target: ``B`` gold answers, each a string or a list of strings.
        preset: ``"squad"``, ``"aij2022"`` (lemmas, ``-`` kept, choice-letter fallback) or ``"raw"`` (strings).
        reduction: ``"mean"``, ``"sum"`` or ``"none"`` (``DoubleTensor[B]`` of 0/1).
        device: where counting runs (default CPU).

    Returns:
        ``DoubleTensor[]`` in [0, 1] (or ``[B]``).

    Example:
        >>> exact_match(["The Answer.", "b"], ["answer", "c"])
        tensor(0.5000, dtype=torch.float64)
    """
    check_choice(preset, "preset", EXACT_MATCH_PRESETS)
    check_choice(reduction, "reduction", REDUCTIONS)
    return reduce_scores(_exact_match_update(preds, target, preset, _default_device(device)), reduction)


@gc_paused
@single_threaded
def string_accuracy(
    preds: str | Sequence[str],
    target: str | Sequence[str | Sequence[str]],
    reduction: str = "mean",
    device: Optional[torch.device | str] = None,
) -> Tensor:
    """Share of predictions equal, as raw strings, to (one of) their gold strings (docs/metrics/qa.md, HTR).

    Args:
        preds: ``B`` predicted strings.
        target: ``B`` gold strings (or lists of accepted strings).
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.
        device: where counting runs (default CPU).

    Returns:
        ``DoubleTensor[]`` in [0, 1] (or ``[B]``).

    Example:
        >>> string_accuracy(["Привет", "мир "], ["Привет", "мир"])
        tensor(0.5000, dtype=torch.float64)
    """
    check_choice(reduction, "reduction", REDUCTIONS)
    return reduce_scores(_exact_match_update(preds, target, "raw", _default_device(device)), reduction)


@gc_paused
@single_threaded
def vqa_accuracy(
    preds: str | Sequence[str],
    target: str | Sequence[str | Sequence[str]],
    lang: str | Sequence[str] = "en",
    reduction: str = "mean",
    device: Optional[torch.device | str] = None,
) -> Tensor:
    """AIJ-2021 VQA accuracy (the official ``vqaEval.py``): share of questions whose normalised prediction equals
    one of its gold answers as written (docs/metrics/qa.md).

    Args:
        preds: ``B`` predicted answers.
        target: ``B`` gold answers, each a string or a list of strings (compared raw, not normalised).
        lang: ``"en"`` or ``"ru"`` for every question, or ``B`` such codes (how the prediction is normalised).
        reduction: ``"mean"``, ``"sum"`` or ``"none"`` (``DoubleTensor[B]`` of 0/1).
        device: where counting runs (default CPU).

    Returns:
        ``DoubleTensor[]`` in [0, 1] (or ``[B]``). The script prints the mean rounded to 3 decimals; this is the
        unrounded mean.

    Raises:
        TypeError: non-string answers or languages. ValueError: length mismatch, an unknown language code.

    Example:
        >>> vqa_accuracy(["Two.", "Три", "a dog"], ["2", "3", "a dog"], ["en", "ru", "en"], reduction="none")
        tensor([1., 1., 0.], dtype=torch.float64)
    """
    check_choice(reduction, "reduction", REDUCTIONS)
    return reduce_scores(_vqa_accuracy_update(preds, target, lang, _default_device(device)), reduction)


class _PresetScore(PerSampleScore):
    """Shared room of the QA modules: a named preset on :class:`~gpumetrics.core.PerSampleScore` (states
    ``score_sum`` float64, ``count``, and ``scores`` for ``reduction="none"``).

    Subclasses set ``presets`` (the first is the default) and ``per_sample`` — the ``_x_update`` their function
    shares: ``(preds, target, preset, device) -> DoubleTensor[B]``.
    """

    higher_is_better = True
    is_differentiable = False
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0
    presets: tuple[str, ...] = ()
    per_sample: Callable[[Any, Any, str, torch.device], Tensor]

    def __init__(self, preset: Optional[str] = None, reduction: str = "mean", **kwargs: Any) -> None:
        preset = self.presets[0] if preset is None else preset
        check_choice(preset, "preset", self.presets)
        super().__init__(reduction=reduction, **kwargs)
        self.preset = preset

    def update(self, preds: str | Sequence[str], target: str | Sequence[str | Sequence[str]]) -> None:
        """Add a batch: ``preds`` — ``B`` strings; ``target`` — ``B`` strings or lists of strings."""
        self._accumulate(type(self).per_sample(preds, target, self.preset, self.device))

    def compute(self) -> Tensor:
        """Mean per-sample score ``DoubleTensor[]`` (0.0 before any sample), their sum, or ``DoubleTensor[N]``."""
        return super().compute()

    def _signature_fields(self) -> dict[str, Any]:
        return {"preset": self.preset}


class TokenF1(_PresetScore):
    """Token F1 accumulated over batches; see :func:`token_f1`.

    Host syncs: 0 per update with ``preset="squad"`` (2 with ``"aij2022"``: the samples its answer-letter rule
    rescores), independent of the batch.

    Args:
        preset: ``"squad"`` (default) or ``"aij2022"``.
        reduction: ``"mean"`` (default), ``"sum"`` or ``"none"`` (``DoubleTensor[N]``), as :func:`token_f1`.
        kwargs: the ``Metric`` base options (torchmetrics' names: ``sync_on_compute``, ``dist_sync_fn`` …).

    Example:
        >>> metric = TokenF1()
        >>> metric.update(["the cat sat"], [["a cat sat down", "dog"]])
        >>> metric.update([""], [""])
        >>> metric.compute()
        tensor(0.9000, dtype=torch.float64)
        >>> metric.signature().rsplit("|", 1)[0]
        'token_f1|preset:squad'
    """

    signature_name = "token_f1"
    kernel_threads = 1
    presets = F1_PRESETS
    per_sample = staticmethod(_token_f1_update)


class ExactMatch(_PresetScore):
    """Exact match accumulated over batches; see :func:`exact_match`.

    Host syncs: 0 per update (2 with ``preset="aij2022"``: the samples its answer-letter rule rescores),
    independent of the batch.

    Args:
        preset: ``"squad"`` (default), ``"aij2022"`` or ``"raw"``.
        reduction: ``"mean"`` (default), ``"sum"`` or ``"none"`` (``DoubleTensor[N]`` of 0/1).
        kwargs: the ``Metric`` base options (torchmetrics' names: ``sync_on_compute``, ``dist_sync_fn`` …).

    Example:
        >>> metric = ExactMatch(preset="aij2022")
        >>> metric.update(["Ответ: b", "42"], ["b", "42"])
        >>> metric.compute()
        tensor(1., dtype=torch.float64)
    """

    signature_name = "exact_match"
    kernel_threads = 1
    presets = EXACT_MATCH_PRESETS
    per_sample = staticmethod(_exact_match_update)


class StringAccuracy(_PresetScore):
    """Raw string accuracy accumulated over batches; see :func:`string_accuracy`.

    Args:
        preset: only ``"raw"``.
        reduction: ``"mean"`` (default), ``"sum"`` or ``"none"`` (``DoubleTensor[N]`` of 0/1).
        kwargs: the ``Metric`` base options (torchmetrics' names: ``sync_on_compute``, ``dist_sync_fn`` …).

    Example:
        >>> metric = StringAccuracy()
        >>> metric.update(["abc", "abd"], ["abc", "abc"])
        >>> metric.compute()
        tensor(0.5000, dtype=torch.float64)
    """

    signature_name = "string_accuracy"
    kernel_threads = 1
    presets = ("raw",)
    per_sample = staticmethod(_exact_match_update)


class VQAAccuracy(_PresetScore):
    """AIJ-2021 VQA accuracy accumulated over batches; see :func:`vqa_accuracy`.

    Args:
        preset: only ``"aij2021"`` (the official ``vqaEval.py``).
        reduction: ``"mean"`` (default), ``"sum"`` or ``"none"`` (``DoubleTensor[N]`` of 0/1).
        kwargs: the ``Metric`` base options (torchmetrics' names: ``sync_on_compute``, ``dist_sync_fn`` …).

    Example:
        >>> metric = VQAAccuracy()
        >>> metric.update(["Two.", "да"], ["2", "да"], lang=["en", "ru"])
        >>> metric.update(["The cat"], ["the cat"], lang="en")
        >>> metric.compute()
        tensor(0.6667, dtype=torch.float64)
    """

    signature_name = "vqa_accuracy"
    kernel_threads = 1
    presets = ("aij2021",)

    def update(  # type: ignore[override]
        self, preds: str | Sequence[str], target: str | Sequence[str | Sequence[str]], lang: str | Sequence[str] = "en"
    ) -> None:
        """Add a batch: ``preds`` — ``B`` strings; ``target`` — ``B`` strings or lists; ``lang`` — a code or ``B``."""
        self._accumulate(_vqa_accuracy_update(preds, target, lang, self.device))

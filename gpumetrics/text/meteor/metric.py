"""METEOR as a function and a module, one ``mode`` per reference convention (docs/metrics/meteor.md).

============================  ==========================================================  ========================
mode                          equal to                                                    ``reduction="corpus"``
============================  ==========================================================  ========================
``"meteor-1.5"`` (default)    pycocoevalcap's ``Meteor().compute_score`` (the 1.5 jar,     the jar's score of the
                              ``-l en -norm``; ``language="ru"``: Russian, see below)      summed statistics
``"nltk"``                    ``nltk.translate.meteor_score.meteor_score`` per sentence   mean of sentence scores
``"aij2022-caption"``         the AIJ-2022 ImageCaptioning script                         mean (the task score)
``"aij2022-vqa"``             the AIJ-2022 VisualQA script                                mean (the task score)
============================  ==========================================================  ========================

``reduction="none"`` gives the ``B`` sentence scores, ``"mean"`` / ``"sum"`` their mean / sum.

``language="ru"`` (``meteor-1.5`` only) uses the jar's Russian parameters (α 0.75, β 1.40, γ 0.70, δ 0.50, weights
1.0 / 0.5), modules exact + stem (Snowball Russian) and the jar's **Russian** function-word list. The jar itself,
run as ``-l ru -norm -m "exact stem"``, keeps the *English* function-word list (its configuration sets the word
file before reading ``-l``) and needs ``-m`` because it has no Russian paraphrase table; our numbers equal the jar
given ``-s function/russian.words`` as well.
"""

from __future__ import annotations

from typing import Any, Optional

import torch
from torch import Tensor

from gpumetrics.core import (
    PerSampleScore, as_reference_lists, as_text_list, check_choice, check_device, check_same_length, gc_paused,
    reduce_scores, single_threaded,
)
from gpumetrics.core.per_sample import mean_score
from gpumetrics.text.meteor import jar

MODES = ("meteor-1.5", "nltk", "aij2022-caption", "aij2022-vqa")
LANGUAGES = ("en", "ru")
METEOR_REDUCTIONS = ("corpus", "mean", "sum", "none")


class _METEORConfig:
    """Checked options of one METEOR set-up (built once per function call or module)."""

    def __init__(
        self, mode: Any, language: Any, reduction: Any, alpha: Any, beta: Any, gamma: Any, stemmer: Any, synonyms: Any,
        memory_budget: Any = None,
    ) -> None:
        check_choice(mode, "mode", MODES)
        check_choice(language, "language", LANGUAGES)
        check_choice(reduction, "reduction", METEOR_REDUCTIONS)
        self.mode, self.language, self.reduction = mode, language, reduction
        if mode != "meteor-1.5" and language != "en":
            raise ValueError(f"`language` applies to mode='meteor-1.5' only; mode {mode!r} fixes its language")
        nltk_options = {"alpha": alpha, "beta": beta, "gamma": gamma, "stemmer": stemmer}
        given = [name for name, value in nltk_options.items() if value is not None]
        if given and mode != "nltk":
            raise ValueError(f"{', '.join(f'`{n}`' for n in given)}: options of mode='nltk' only (mode is {mode!r})")
        if synonyms is not None and mode == "meteor-1.5":
            raise ValueError("`synonyms`: METEOR 1.5 uses the jar's WordNet; providers are for the NLTK-style modes")
        self.options = {name: value for name, value in nltk_options.items() if value is not None}
        if memory_budget is not None and mode != "meteor-1.5":
            raise ValueError(f"`memory_budget`: an option of mode='meteor-1.5' only (mode is {mode!r})")
        self.memory_budget = jar.check_memory_budget(memory_budget)
        if mode != "meteor-1.5":
            from gpumetrics.text.meteor.synonyms import as_synonym_provider

            self.synonyms = None if synonyms is None else as_synonym_provider(synonyms)
            if mode == "nltk":
                from gpumetrics.text.meteor.nltk_style import check_parameter

                for name in ("alpha", "beta", "gamma"):
                    if name in self.options:
                        check_parameter(self.options[name], name)

    @property
    def corpus_statistics(self) -> bool:
        """The corpus score is the jar's score of summed statistics (otherwise: the mean of sentence scores)."""
        return self.mode == "meteor-1.5" and self.reduction == "corpus"

    def signature_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {"mode": self.mode}
        if self.mode == "meteor-1.5":
            fields.update(lang=self.language, norm="yes",
                          tok=f"meteor-1.5-norm{'' if self.language == 'en' else '-ru'}")
        else:
            fields["synonyms"] = "default" if self.synonyms is None else type(self.synonyms).__name__
        if self.mode == "nltk":
            fields.update({name: value for name, value in self.options.items() if name != "stemmer"})
            if "stemmer" in self.options:
                fields["stemmer"] = "custom"
        fields["reduction"] = self.reduction
        return fields


def _meteor_update(preds: Any, target: Any, config: _METEORConfig, device: torch.device) -> tuple[Tensor, Tensor]:
    """Sentence scores ``float64[B]`` and (``meteor-1.5``) the jar's statistics ``float64[B, 23]`` (else ``[B, 0]``)."""
    if config.mode == "meteor-1.5":
        hypotheses = as_text_list(preds, "preds")
        references = as_reference_lists(target, "target")
        check_same_length(hypotheses, "preds", references, "target")
        return tuple(reversed(jar.sentence_statistics(hypotheses, references, config.language, device,
                                                      config.memory_budget)))
    if config.mode == "nltk":
        from gpumetrics.text.meteor.nltk_style import nltk_meteor_scores

        scores = nltk_meteor_scores(preds, target, synonyms=config.synonyms, device=device, **config.options)
    else:
        from gpumetrics.text.meteor import aij2022

        score = aij2022.aij2022_caption_scores if config.mode == "aij2022-caption" else aij2022.aij2022_vqa_scores
        scores = score(preds, target, synonyms=config.synonyms, device=device)
    return scores, scores.new_zeros(scores.shape[0], 0)


def _meteor_compute(statistics: Tensor, language: str) -> Tensor:
    """The jar's corpus score ``float64[]`` of summed statistics ``float64[23]``."""
    return jar.scores_from_statistics(statistics.view(1, -1), language)[0]


@gc_paused
@single_threaded
def meteor_score(
    preds: Any,
    target: Any,
    mode: str = "meteor-1.5",
    language: str = "en",
    reduction: str = "corpus",
    alpha: Optional[float] = None,
    beta: Optional[float] = None,
    gamma: Optional[float] = None,
    stemmer: Any = None,
    synonyms: Any = None,
    memory_budget: Optional[int] = None,
    device: torch.device | str | None = None,
) -> Tensor:
    """METEOR of hypotheses against their references, in [0, 1] (see the module docstring for the modes).

    Args:
        preds: ``B`` hypothesis strings (``mode="nltk"`` also takes ``B`` token lists).
        target: ``B`` items, each the reference string(s) of the corresponding hypothesis (1 or more; token lists
            with token hypotheses in ``nltk`` mode).
        mode: ``"meteor-1.5"``, ``"nltk"``, ``"aij2022-caption"`` or ``"aij2022-vqa"``.
        language: ``"en"`` or ``"ru"`` (``meteor-1.5`` only).
        reduction: ``"corpus"`` (the reference tool's corpus number), ``"mean"``, ``"sum"`` or ``"none"`` (``[B]``).
        alpha, beta, gamma: ``nltk`` mode only: NLTK's parameters (defaults 0.9, 3.0, 0.5).
        stemmer: ``nltk`` mode only: ``stem(word)`` object or callable (default NLTK's Porter stemmer).
        synonyms: NLTK-style modes only: a :class:`~gpumetrics.text.meteor.synonyms.SynonymProvider`, a mapping
            ``word → synonyms`` or a TSV path; default WordNet (``nltk``) / RuWordNet (``aij2022-*``).
        memory_budget: ``meteor-1.5`` only: bytes of working memory for candidate matching and alignment
            (default 2 GiB, the heap pycocoevalcap gives the jar). A batch over it is scored in groups of pairs
            that fit (same scores); one (hypothesis, reference) pair must fit alone — its candidate matches grow
            with the product of the two lengths, about 400 bytes each — else ``ValueError``.
        device: where the result lives. ``meteor-1.5``: matching and alignment are host work (numpy); the pair
            statistics reach ``device`` in one non-blocking upload and are scored there (no host synchronisation).

    Returns:
        ``DoubleTensor[]``, or ``DoubleTensor[B]`` for ``reduction="none"``.

    Raises:
        TypeError: malformed ``preds`` / ``target`` / options (the message names the argument).
        ValueError: different numbers of hypotheses and references, a sample without reference (``meteor-1.5``,
            ``nltk``), unknown or inapplicable options, a (hypothesis, reference) pair that needs more than
            ``memory_budget`` (the message names it and the budget it needs).

    Example:
        >>> preds = ["a man is riding a horse on the beach ."]
        >>> target = [["a man rides a horse along the beach", "man riding horse"]]
        >>> round(meteor_score(preds, target).item(), 6)
        0.48282
    """
    config = _METEORConfig(mode, language, reduction, alpha, beta, gamma, stemmer, synonyms, memory_budget)
    scores, statistics = _meteor_update(preds, target, config, check_device(device, "device"))
    if config.corpus_statistics:
        return _meteor_compute(jar.corpus_contribution(statistics), language)
    return reduce_scores(scores, "mean" if reduction == "corpus" else reduction)


class METEORScore(PerSampleScore):
    """METEOR accumulated over batches (see :func:`meteor_score` for the modes and options).

    States: for ``mode="meteor-1.5"`` with ``reduction="corpus"``, the jar's 23 statistics summed as its ``EVAL``
    sums them (``float64[23]``, one all-reduce under DDP); otherwise the sentence scores through
    :class:`~gpumetrics.core.PerSampleScore` (``score_sum``, ``count``, and ``scores`` for ``"none"``). The
    paraphrase table and the WordNet data are loaded once per process and shared by every instance. An ``update``
    of ``meteor-1.5`` matches and aligns on the host and uploads the pair statistics once: on CUDA it makes no host
    synchronisation.

    Example:
        >>> metric = METEORScore()
        >>> metric.update(["a man is riding a horse on the beach ."], [["a man rides a horse along the beach"]])
        >>> metric.update(["A cat sits on a mat."], [["A cat sits on a mat."]])
        >>> round(metric.compute().item(), 6)  # pycocoevalcap: 0.5593600292454061 (mean of segments: 0.741)
        0.55936
        >>> metric.signature()[:39]
        'meteor|mode:meteor-1.5|lang:en|norm:yes'
    """

    signature_name = "meteor"
    kernel_threads = 1
    reductions = METEOR_REDUCTIONS
    higher_is_better = True
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    def __init__(
        self,
        mode: str = "meteor-1.5",
        language: str = "en",
        reduction: str = "corpus",
        alpha: Optional[float] = None,
        beta: Optional[float] = None,
        gamma: Optional[float] = None,
        stemmer: Any = None,
        synonyms: Any = None,
        memory_budget: Optional[int] = None,
        **kwargs: Any,
    ) -> None:
        self.config = _METEORConfig(mode, language, reduction, alpha, beta, gamma, stemmer, synonyms, memory_budget)
        super().__init__(reduction=reduction, **kwargs)
        self.add_state("statistics", torch.zeros(jar.STATS, dtype=torch.float64), dist_reduce_fx="sum")

    def update(self, preds: Any, target: Any) -> None:
        """Add a batch: ``preds`` — ``B`` strings; ``target`` — ``B`` strings or lists of reference strings."""
        scores, statistics = _meteor_update(preds, target, self.config, self.device)
        if self.config.corpus_statistics:
            self.statistics += jar.corpus_contribution(statistics)
        self._accumulate(scores)

    def compute(self) -> Tensor:
        """The corpus score ``DoubleTensor[]`` (``none``: ``DoubleTensor[N]``); 0 before data."""
        if self.config.corpus_statistics:
            return _meteor_compute(self.statistics, self.config.language)
        if self.reduction == "corpus":
            return mean_score(self.score_sum, self.count)
        return super().compute()

    def _signature_fields(self) -> dict[str, Any]:
        return self.config.signature_fields()

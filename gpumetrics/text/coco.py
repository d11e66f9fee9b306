"""The COCO caption evaluation in one process: pycocoevalcap's ``COCOEvalCap`` table (docs/metrics/coco.md).

``coco_caption_scores(preds, target)`` returns the keys ``COCOEvalCap.evaluate()`` prints, with its values:

===========  ==============================================================================================
key          computed as (each equal to pycocoevalcap's scorer on the same tokenised strings)
===========  ==============================================================================================
``Bleu_n``   :func:`~gpumetrics.text.bleu.bleu_score` ``mode="coco"`` (pycocoevalcap ``Bleu(4)``; corpus
             value from summed statistics, per image its ``bleu_list``), n = 1..4
``METEOR``   :func:`~gpumetrics.text.meteor.meteor_score` ``mode="meteor-1.5"`` (the jar pycocoevalcap runs;
             corpus value from summed statistics)
``ROUGE_L``  :func:`~gpumetrics.text.rouge.rouge_score` ``mode="coco"`` (best precision and best recall over
             the references, β = 1.2; corpus value = mean over images)
``CIDEr``    :func:`~gpumetrics.text.cider.cider_score` ``mode="cider-d"`` (document frequency over the
             references of the evaluated images; corpus value = mean over images)
===========  ==============================================================================================

Tokenisation (``tokenize="ptb"``, default) is done once, as ``COCOEvalCap`` does it: the references of all images
in one pycocoevalcap ``PTBTokenizer`` call, the results in another (:func:`~gpumetrics.text.tokenize.ptb.
coco_ptb_strings`, a Java-free port); each scorer then reads those strings its own way (BLEU and CIDEr split on any
whitespace, ROUGE-L on ``" "``, METEOR through the jar's ``-norm``), all from one shared encoding: the ``" "``-split
pieces of every caption (:func:`~gpumetrics.text.tokenize.base.encode_split`), re-split per distinct piece for BLEU
and CIDEr only where a piece is empty or holds other whitespace (a no-break space), and given to METEOR as they are
where a caption is plain lower-case ASCII (:func:`~gpumetrics.text.meteor.jar.words_of_pieces`; other captions are
normalised). ``tokenize="none"`` takes the strings as already tokenised (pycocoevalcap's scorers called directly).
SPICE is not computed: it needs the Stanford CoreNLP models and a Java scene-graph parser (pycocoevalcap downloads
them on first use), so it cannot run offline.

``target[i]`` holds the reference captions of image ``i`` (any number ≥ 1, varying). ``COCOEvalCap`` scores the images
of the results file only (``params['image_id'] = cocoRes.getImgIds()``); pass exactly those images here (the CLI's
``format: coco`` reader does). No image gives 0 for every key (``COCOEvalCap`` would print NaN or fail).

The module accumulates additive statistics in one float64 state (BLEU matches / n-grams / lengths, METEOR's 23 jar
statistics, the ROUGE-L sum and the image count: one all-reduce under DDP) and, for CIDEr, the token codes of every
caption, gathered once at ``compute`` as :class:`~gpumetrics.text.cider.CIDErScore` does (document frequency is a
corpus statistic). With ``tokenize="ptb"`` each ``update`` is one tokenizer call per side, as for ``CIDErScore``.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core import (
    Metric, as_reference_lists, as_text_list, check_choice, check_device, check_same_length, gc_paused,
    keep_sample_dim, single_threaded,
)
from gpumetrics.text.bleu import coco_bleu_scores, coco_bleu_statistics
from gpumetrics.text.cider import CIDER_STATES, cat_state, cider_from_codes, cider_token_codes
from gpumetrics.text.meteor import jar
from gpumetrics.text.rouge import COCO_BETA, coco_rouge_l
from gpumetrics.text.tokenize.base import encode_split, whitespace_words
from gpumetrics.text.tokenize.ptb import coco_ptb_strings

COCO_KEYS = ("Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "METEOR", "ROUGE_L", "CIDEr")
COCO_TOKENIZERS = ("ptb", "none")
COCO_REDUCTIONS = ("corpus", "none")
_ORDERS = 4
# layout of the module's one additive state
_MATCHES, _TOTALS = slice(0, _ORDERS), slice(_ORDERS, 2 * _ORDERS)
_HYP_LEN, _REF_LEN = 2 * _ORDERS, 2 * _ORDERS + 1
_METEOR = slice(2 * _ORDERS + 2, 2 * _ORDERS + 2 + jar.STATS)
_ROUGE, _COUNT = 2 * _ORDERS + 2 + jar.STATS, 2 * _ORDERS + 3 + jar.STATS
_SUMS = _COUNT + 1


def _check_options(tokenize: Any, reduction: Any) -> None:
    check_choice(tokenize, "tokenize", COCO_TOKENIZERS)
    check_choice(reduction, "reduction", COCO_REDUCTIONS)


def _coco_caption_update(preds: Any, target: Any, tokenize: str, device: torch.device) -> dict[str, Any]:
    """Check and tokenise a batch of ``B`` images, then every scorer's statistics.

    Returns:
        ``sums: DoubleTensor[S]`` (the additive statistics of the batch, layout ``_SUMS``), ``per_image:
        DoubleTensor[B, 6]`` (Bleu_1..4, METEOR, ROUGE_L of each image) and ``cider``: the CIDEr token-code tuple
        of :func:`~gpumetrics.text.cider.cider_token_codes`.
    """
    hyps = as_text_list(preds, "preds")
    refs = as_reference_lists(target, "target")
    check_same_length(hyps, "preds", refs, "target")
    if tokenize == "ptb":
        hyps, refs = coco_ptb_strings(hyps, refs)
    # every scorer reads the tokenised strings as pycocoevalcap's does (whitespace, " ", the jar's -norm), from one
    # shared encoding of the captions, then of the references
    lines = hyps + [ref for group in refs for ref in group]
    host_ref_counts = np.fromiter(map(len, refs), dtype=np.int64, count=len(refs))
    pieces = encode_split(lines, " ")
    words = whitespace_words(pieces)
    bleu = coco_bleu_statistics(words, host_ref_counts, device, _ORDERS)
    meteor_words = jar.words_of_pieces(pieces, lines, host_ref_counts, "en")
    sentences = (jar.encode(hyps, refs, "en") if meteor_words is None
                 else jar.sentences(meteor_words, host_ref_counts, "en"))
    meteor_stats, meteor_scores = jar.best_reference_statistics(sentences, "en", device=device)
    rouge = coco_rouge_l(pieces, host_ref_counts, device)[:, 2]
    cider = cider_token_codes(words, host_ref_counts, device)

    matches, totals = bleu["matches"].double(), bleu["totals"].double()
    hyp_len, ref_len = bleu["hyp_len"].double(), bleu["ref_len"].double()
    sums = torch.cat([
        matches.sum(0), totals.sum(0), hyp_len.sum().reshape(1), ref_len.sum().reshape(1),
        jar.corpus_contribution(meteor_stats).reshape(-1), rouge.sum().reshape(1),
        torch.full((1,), float(len(hyps)), dtype=torch.float64, device=device),
    ])
    per_image = torch.cat([coco_bleu_scores(matches, totals, hyp_len, ref_len), meteor_scores[:, None], rouge[:, None]],
                          dim=1)
    return {"sums": sums, "per_image": per_image, "cider": cider}


def _coco_caption_compute(sums: Tensor, cider: Sequence[Tensor], per_image: Optional[Tensor]) -> dict[str, Tensor]:
    """The table from the summed statistics and the corpus's CIDEr token codes.

    Args:
        sums: ``DoubleTensor[S]`` additive statistics of all images.
        cider: ``hyp_codes, hyp_lengths, ref_codes, ref_lengths, ref_counts, long_codes, long_checks`` of all images.
        per_image: ``DoubleTensor[N, 6]`` for per-image values, ``None`` for the corpus values.

    Returns:
        ``COCO_KEYS`` → ``DoubleTensor[]`` (corpus) or ``DoubleTensor[N]`` (per image).
    """
    per_image_cider = cider_from_codes(cider, mode="cider-d", n_gram=4, sigma=6.0, reduction="none")
    if per_image is not None:
        columns = torch.cat([per_image, per_image_cider[:, None].to(per_image)], dim=1)
        return {key: columns[:, i] for i, key in enumerate(COCO_KEYS)}
    bleu = coco_bleu_scores(sums[None, _MATCHES], sums[None, _TOTALS], sums[_HYP_LEN].reshape(1),
                            sums[_REF_LEN].reshape(1))[0]
    count = sums[_COUNT]
    images = per_image_cider.numel()
    cider_mean = per_image_cider.sum() / images if images else torch.zeros((), dtype=torch.float64, device=sums.device)
    values = [
        *(torch.where(count > 0, b, 0.0) for b in bleu),  # no image: 0 (pycocoevalcap's formula also gives 0)
        jar.scores_from_statistics(sums[_METEOR].reshape(1, -1), "en")[0],
        torch.where(count > 0, sums[_ROUGE] / count.clamp_min(1), 0.0),
        cider_mean.to(sums),
    ]
    return dict(zip(COCO_KEYS, values))


@gc_paused
@single_threaded
def coco_caption_scores(
    preds: str | Sequence[str],
    target: str | Sequence[str | Sequence[str]],
    tokenize: str = "ptb",
    reduction: str = "corpus",
    device: Optional[torch.device | str] = None,
) -> dict[str, Tensor]:
    """The ``COCOEvalCap`` table (without SPICE) of ``B`` images' captions against their references.

    Args:
        preds: ``B`` result captions, one per image.
        target: ``B`` items, each the reference caption(s) of the image (a string or a non-empty list).
        tokenize: ``"ptb"`` (``COCOEvalCap``'s PTB tokenisation, references and results as two calls) or ``"none"``
            (strings already tokenised: pycocoevalcap's scorers called directly).
        reduction: ``"corpus"`` (the values ``COCOEvalCap`` prints, its ``eval``) or ``"none"`` (per image, its
            ``imgToEval``: ``DoubleTensor[B]`` per key).
        device: where counting runs and the results live (default CPU).

    Returns:
        ``dict`` ``Bleu_1``, ``Bleu_2``, ``Bleu_3``, ``Bleu_4``, ``METEOR``, ``ROUGE_L``, ``CIDEr`` →
        ``DoubleTensor[]`` (or ``[B]``). No image: 0 for every key (``[0]`` tensors for ``"none"``).

    Raises:
        TypeError: ``preds`` / ``target`` are not strings / lists of strings.
        ValueError: different numbers of captions and reference sets, an image without reference, an unknown option.

    Example:
        >>> preds = ["A man is riding a horse on the beach.", "Two dogs play in the snow."]
        >>> target = [["A man is riding a horse along the beach.", "A person on a horse at the sea."],
        ...           ["Two dogs are playing in the snow.", "Dogs running through snow."]]
        >>> scores = coco_caption_scores(preds, target)
        >>> {key: round(value.item(), 4) for key, value in scores.items()}  # doctest: +NORMALIZE_WHITESPACE
        {'Bleu_1': 0.8731, 'Bleu_2': 0.752, 'Bleu_3': 0.6218, 'Bleu_4': 0.5233, 'METEOR': 0.9343, 'ROUGE_L': 0.8238,
         'CIDEr': 3.3631}
    """
    _check_options(tokenize, reduction)
    device = check_device(device, "device")
    batch = _coco_caption_update(preds, target, tokenize, device)
    return _coco_caption_compute(batch["sums"], batch["cider"], batch["per_image"] if reduction == "none" else None)


class COCOCaptionScores(Metric):
    """The ``COCOEvalCap`` table accumulated over batches and ranks; see :func:`coco_caption_scores`.

    States: ``sums`` (float64: BLEU clipped matches and n-grams per order, hypothesis and closest-reference lengths,
    METEOR's 23 summed jar statistics, the ROUGE-L sum and the image count — one all-reduce under DDP), CIDEr's
    token-code states (``cat``, gathered once at ``compute`` as in :class:`~gpumetrics.text.cider.CIDErScore`) and,
    for ``reduction="none"``, ``per_image`` (``cat``, float64 ``[N, 6]``, rank order under DDP).

    Args:
        tokenize: ``"ptb"`` or ``"none"``.
        reduction: ``"corpus"`` or ``"none"``.
        kwargs: the ``Metric`` base options (torchmetrics' names: ``sync_on_compute``, ``dist_sync_fn`` …).

    Example:
        >>> metric = COCOCaptionScores()
        >>> metric.update(["A man is riding a horse on the beach."],
        ...               [["A man is riding a horse along the beach.", "A person on a horse at the sea."]])
        >>> metric.update(["Two dogs play in the snow."],
        ...               [["Two dogs are playing in the snow.", "Dogs running through snow."]])
        >>> round(metric.compute()["Bleu_4"].item(), 4)
        0.5233
        >>> metric.signature()[:70]
        'coco_caption|tok:ptb|bleu:coco|meteor:meteor-1.5|rouge:coco-beta1.2|ci'
    """

    signature_name = "coco_caption"
    kernel_threads = 1
    higher_is_better = True

    def __init__(self, tokenize: str = "ptb", reduction: str = "corpus", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        _check_options(tokenize, reduction)
        self.tokenize, self.reduction = tokenize, reduction
        self.add_state("sums", torch.zeros(_SUMS, dtype=torch.float64), dist_reduce_fx="sum")
        for name in CIDER_STATES:
            self.add_state(name, default=[], dist_reduce_fx="cat")
        if reduction == "none":
            self.add_state("per_image", default=[], dist_reduce_fx="cat")

    @property
    def ptb_reads_next_sample(self) -> bool:
        return self.tokenize == "ptb"

    def update(self, preds: str | Sequence[str], target: str | Sequence[str | Sequence[str]]) -> None:
        """Add ``B`` images: ``preds`` — ``B`` captions; ``target`` — ``B`` reference captions or lists of them."""
        batch = _coco_caption_update(preds, target, self.tokenize, self.device)
        self.sums += batch["sums"]
        for name, value in zip(CIDER_STATES, batch["cider"]):
            getattr(self, name).append(value)
        if self.reduction == "none":
            self.per_image.append(batch["per_image"])

    def compute(self) -> dict[str, Tensor]:
        """``COCO_KEYS`` → ``DoubleTensor[]`` (``"none"``: ``DoubleTensor[N]``); 0 (empty tensors) before data."""
        cider = [cat_state(getattr(self, name), self.device) for name in CIDER_STATES]
        per_image = None
        if self.reduction == "none":
            per_image = cat_state(self.per_image, self.device, torch.float64).reshape(-1, 6)
        return _coco_caption_compute(self.sums, cider, per_image)

    def _finish_compute(self, value: Any) -> Any:
        return keep_sample_dim(value, self.reduction)  # "none" keeps [N] even for one image

    def _signature_fields(self) -> dict[str, Any]:
        return {
            "tok": self.tokenize,
            "bleu": "coco",
            "meteor": "meteor-1.5",
            "rouge": f"coco-beta{COCO_BETA}",
            "cider": "cider-d",
            "reduction": self.reduction,
        }

"""BLEU (docs/metrics/ngram.md) in two named modes, corpus or sentence level, counted on tensors.

* ``mode="sacrebleu"`` equals ``sacrebleu.corpus_bleu(preds, refs, smooth_method, smooth_value, lowercase,
  tokenize, use_effective_order).score / 100`` (sacrebleu 2.x) for the tokenisers ``13a``, ``intl``, ``char``,
  ``zh``, ``none`` and the smoothings ``exp`` (default), ``floor``, ``add-k``, ``none``; ``weights`` may only be
  uniform (``len(weights)`` is sacrebleu's ``max_ngram_order``). Sentence level equals
  ``BLEU(..., effective_order=effective_order).sentence_score(pred, refs).score / 100`` (sacrebleu's
  ``sentence_bleu`` turns ``effective_order`` on by default; here it is your choice).
* ``mode="nltk"`` equals ``nltk.translate.bleu_score.corpus_bleu(refs_tokens, preds_tokens, weights,
  SmoothingFunction().methodK)`` for any ``weights`` and ``smooth="method0".."method7"``, the tokens being those of
  the ``tokenize`` option (default ``"none"``: whitespace split, i.e. pass pre-tokenised text joined by spaces).
  Sentence level equals ``sentence_bleu``. NLTK's corpus-level smoothing methods 5, 6 and 7 read the *last*
  sample's hypothesis and references (a quirk of its loop); that is reproduced, the last sample being the last one
  given to ``update`` (under DDP: of the highest rank that saw data — set ``smooth`` to another method if the order
  of samples across ranks is arbitrary). **Method 6** works where NLTK's does: a sentence (or corpus) without any
  unigram match scores 0 before any smoothing, whatever the weights; otherwise NLTK asserts a non-zero trigram
  precision (``AssertionError``), and with fewer than 3 ``weights`` it reads a trigram precision that is not there
  (``IndexError``). Those refusals are a :class:`Method6Error` (a ``ValueError``); at sentence level
  (``reduction="none"``, ``"mean"``, ``"sum"``) it names the refused sentences (``preds[i]``, and for the module
  their index among all samples it received), so they can be left out.
* ``mode="coco"`` equals pycocoevalcap's ``Bleu(n).compute_score(gts, res)`` (its ``bleu_scorer``, as ``COCOEvalCap``
  prints ``Bleu_n``), ``n = len(weights)`` (uniform weights only; ``Bleu_k`` for k < n is the same number as the
  ``k``-th value of ``Bleu(n)``): every order's precision is ``(matches + 1e-15) / (n-grams + 1e-9)`` — never 0, so
  no smoothing option —, BLEU-n is the n-th root of the product of the precisions of orders 1..n, the brevity
  penalty ``exp(1 − r/c)`` applies when ``(c + 1e-15) / (r + 1e-9) < 1`` with r the closest reference length (ties
  to the shorter); the corpus score uses the summed statistics, sentence level (``reduction="none"``) equals its
  per-image list. ``tokenize="ptb"`` (default) first tokenises as ``COCOEvalCap`` does (pycocoevalcap's PTB
  tokenizer: predictions in one call, references in another, :func:`~gpumetrics.text.tokenize.ptb.
  coco_tokenized_captions`); ``tokenize="none"`` splits on whitespace as the scorer does on pre-tokenised text.

``target[i]`` holds the references of ``preds[i]`` (a string or a list; their number may differ per sample; an
empty reference string is a reference of length 0). The closest reference length breaks ties to the shorter one in
both modes. An empty hypothesis contributes no n-gram and length 0 (score 0, never NaN).

Counting: tokens → ids → exact n-gram ids → clipped matches against the per-sample maximum reference counts with one
sort (:mod:`gpumetrics.kernels.ngrams`). States are sums of matches / totals / lengths (DDP = one all-reduce each);
sentence level (``reduction="mean"|"sum"|"none"``) is :class:`~gpumetrics.core.PerSampleScore`'s reduction of the
per-sample scores (``"none"`` keeps them, gathered at ``compute``).
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any, Callable, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core.distributed import dim_zero_cat
from gpumetrics.core import (
    PerSampleScore, as_reference_lists, as_text_list, check_choice, check_device, check_same_length, gc_paused,
    reduce_scores, single_threaded,
)
from gpumetrics.core.checks import check_bool, check_real, is_finite
from gpumetrics.core.chunks import map_row_chunks, rows_per_chunk
from gpumetrics.core.positions import at_position
from gpumetrics.core.transfer import upload, upload_all
from gpumetrics.kernels.ngrams import TokenBatch, clipped_ngram_matches, ngram_totals
from gpumetrics.text.tokenize import SacreBleuTokenizer
from gpumetrics.text.tokenize.ptb import coco_ptb_strings

BLEU_MODES = ("sacrebleu", "nltk", "coco")
COCO_TOKENIZERS = ("ptb", "none")
_COCO_TINY, _COCO_SMALL = 1e-15, 1e-9  # pycocoevalcap bleu_scorer: added to matches / to n-gram counts
SACREBLEU_SMOOTHING = ("exp", "floor", "add-k", "none")
NLTK_SMOOTHING = tuple(f"method{k}" for k in range(8))
BLEU_REDUCTIONS = ("corpus", "mean", "sum", "none")
_SACREBLEU_SMOOTH_DEFAULTS = {"floor": 0.1, "add-k": 1.0}
# nltk SmoothingFunction() defaults (Chen & Cherry 2014): epsilon (method1), alpha (method6), k (method4).
_NLTK_EPSILON, _NLTK_ALPHA, _NLTK_K = 0.1, 5.0, 5.0
_SACREBLEU_LOG_ZERO = -9999999999.0  # sacrebleu's my_log(0)


@dataclasses.dataclass(frozen=True)
class _BLEUConfig:
    mode: str
    tokenizer: SacreBleuTokenizer  # with its `lowercase` option
    smooth: str
    smooth_value: Optional[float]
    weights: tuple[float, ...]
    effective_order: bool
    reduction: str
    coco_ptb: bool = False  # mode "coco", tokenize "ptb": texts go through pycocoevalcap's PTB tokenizer first

    @property
    def max_order(self) -> int:
        return len(self.weights)

    @property
    def counted_orders(self) -> int:
        """Orders to count: NLTK's method5/7 also read the 5-gram precision of the last sample."""
        if self.mode == "nltk" and self.smooth in ("method5", "method7"):
            return max(self.max_order, 5)
        return self.max_order


def _bleu_config(
    mode: str,
    tokenize: Optional[str],
    smooth: Optional[str],
    smooth_value: Optional[float],
    weights: Optional[Sequence[float]],
    lowercase: bool,
    effective_order: bool,
    reduction: str,
) -> _BLEUConfig:
    check_choice(mode, "mode", BLEU_MODES)
    check_choice(reduction, "reduction", BLEU_REDUCTIONS)
    if mode == "coco":
        tokenize = "ptb" if tokenize is None else tokenize
        check_choice(tokenize, "tokenize", COCO_TOKENIZERS)
        for name, value, default in (("smooth", smooth, None), ("smooth_value", smooth_value, None),
                                     ("lowercase", lowercase, False), ("effective_order", effective_order, False)):
            if value != default:
                raise ValueError(f"`{name}` is not an option of mode='coco' (pycocoevalcap's Bleu has none), "
                                 f"got {value!r}")
        coco_ptb = tokenize == "ptb"
        tokenize = "none"  # after the PTB tokenizer: pycocoevalcap splits its strings on whitespace
    tokenize = ("13a" if mode == "sacrebleu" else "none") if tokenize is None else tokenize
    tokenizer = SacreBleuTokenizer(tokenize, lowercase)  # checks `tokenize` and `lowercase`
    check_bool(effective_order, "effective_order")
    if weights is None:
        weights = (0.25, 0.25, 0.25, 0.25)
    if isinstance(weights, (str, bytes)) or not isinstance(weights, Sequence):
        raise TypeError(f"`weights` must be a sequence of floats, got {type(weights).__name__}")
    weights = tuple(weights)
    if not weights or not all(isinstance(w, (int, float)) and not isinstance(w, bool) for w in weights):
        raise ValueError(f"`weights` must be a non-empty sequence of numbers, got {weights!r}")
    if any(not is_finite(w) or w < 0 for w in weights):
        raise ValueError(f"`weights` must be finite and non-negative, got {weights!r}")
    weights = tuple(float(w) for w in weights)
    if mode == "coco":
        n = len(weights)
        if any(abs(w - 1.0 / n) > 1e-12 for w in weights):
            raise ValueError(f"`weights` must be uniform (1/n each) in mode='coco', got {weights!r}")
        return _BLEUConfig(mode, tokenizer, "coco", None, weights, False, reduction, coco_ptb)
    if mode == "sacrebleu":
        smooth = "exp" if smooth is None else smooth
        check_choice(smooth, "smooth", SACREBLEU_SMOOTHING)
        n = len(weights)
        if any(abs(w - 1.0 / n) > 1e-12 for w in weights):
            raise ValueError(
                f"`weights` must be uniform (1/n each) in mode='sacrebleu', got {weights!r}; use mode='nltk' for others"
            )
        if smooth_value is None:
            smooth_value = _SACREBLEU_SMOOTH_DEFAULTS.get(smooth)
        elif smooth not in _SACREBLEU_SMOOTH_DEFAULTS:
            raise ValueError(f"`smooth_value` only applies to smooth='floor' or 'add-k', got smooth={smooth!r}")
        else:
            check_real(smooth_value, "smooth_value", at_least=0)
    else:
        smooth = "method0" if smooth is None else smooth
        check_choice(smooth, "smooth", NLTK_SMOOTHING)
        if smooth_value is not None:
            raise ValueError("`smooth_value` is not used in mode='nltk' (SmoothingFunction defaults apply)")
        if effective_order:
            raise ValueError("`effective_order` exists only in mode='sacrebleu'")
    return _BLEUConfig(mode, tokenizer, smooth, smooth_value, weights, effective_order, reduction)


# ---------------------------------------------------------------------------------------------------- statistics
def _bleu_update(
    preds: Any, target: Any, config: _BLEUConfig, device: torch.device | str | None = None
) -> dict[str, Tensor]:
    """Per-sample sufficient statistics of a batch.

    Returns:
        ``matches: LongTensor[B, K]`` clipped n-gram matches, ``totals: LongTensor[B, K]`` hypothesis n-grams,
        ``hyp_len: LongTensor[B]``, ``ref_len: LongTensor[B]`` (closest reference length, ties to the shorter),
        with K = ``config.counted_orders``.
    """
    preds = as_text_list(preds, "preds")
    target = as_reference_lists(target, "target")
    check_same_length(preds, "preds", target, "target")
    if config.coco_ptb:
        preds, target = coco_ptb_strings(preds, target)
    n_refs = np.fromiter(map(len, target), dtype=np.int64, count=len(target))
    # Lines grouped by sample (the hypothesis, then its references), tokenised in one call (one shared memo).
    lines = []
    for hyp, refs in zip(preds, target):
        lines.append(hyp)
        lines.extend(refs)
    batch = config.tokenizer.encode(lines)
    per_sample = n_refs + 1
    sample = np.repeat(np.arange(len(target), dtype=np.int64), per_sample)
    hyp_lines = np.cumsum(per_sample) - per_sample
    is_hyp = np.zeros(len(lines), dtype=bool)
    is_hyp[hyp_lines] = True
    return _bleu_statistics(batch, sample, is_hyp, hyp_lines, config.counted_orders, device)


def _bleu_statistics(
    batch: TokenBatch, sample: np.ndarray, is_hyp: np.ndarray, hyp_lines: np.ndarray, orders: int,
    device: torch.device | str | None,
) -> dict[str, Tensor]:
    """:func:`_bleu_update`'s statistics of ``S`` tokenised lines in any order, all given on the host (``batch``
    from a tokenizer; ``sample: int64[S]`` the sample of each line, ``is_hyp: bool[S]`` its hypothesis lines, the
    rest references; ``hyp_lines: int64[B]`` the hypothesis line of each sample): the layout is worked out there
    and goes to ``device`` in one copy, so the count costs only the kernel's host synchronisations.
    """
    lengths = np.asarray(batch.lengths, dtype=np.int64)
    ref_lines = np.flatnonzero(~is_hyp)
    span = int(lengths.max()) + 1 if lengths.size else 1  # lengths are host data: no device read
    parts = (np.asarray(batch.ids, dtype=np.int64), lengths, sample, is_hyp.astype(np.int64), hyp_lines, ref_lines)
    ids, lengths, sample_t, is_hyp_t, hyp_lines_t, ref_lines_t = upload_all(list(parts), device)  # one copy
    is_hyp_t = is_hyp_t.bool()
    size = hyp_lines.size
    matches = clipped_ngram_matches(batch._replace(ids=ids, lengths=lengths), sample_t, is_hyp_t, size, orders)
    hyp_len = lengths.index_select(0, hyp_lines_t)
    totals = ngram_totals(hyp_len, orders)
    # Closest reference length, ties to the shorter: minimise |r - h| * span + r.
    ref_lengths = lengths.index_select(0, ref_lines_t)
    ref_sample = sample_t.index_select(0, ref_lines_t)
    key = (ref_lengths - hyp_len.index_select(0, ref_sample)).abs() * span + ref_lengths
    best = torch.full((size,), torch.iinfo(torch.long).max, dtype=torch.long, device=ids.device)
    best = best.scatter_reduce(0, ref_sample, key, reduce="amin")
    return {"matches": matches, "totals": totals, "hyp_len": hyp_len, "ref_len": best % span}


# ---------------------------------------------------------------------------------------------------- scores
def _sacrebleu_scores(
    matches: Tensor, totals: Tensor, hyp_len: Tensor, ref_len: Tensor, config: _BLEUConfig
) -> Tensor:
    """sacrebleu's ``compute_bleu`` for R rows of statistics at once, divided by 100.

    Args:
        matches, totals: ``DoubleTensor[R, N]``; hyp_len, ref_len: ``DoubleTensor[R]``.

    Returns:
        ``DoubleTensor[R]`` in [0, 1].
    """
    correct, total = matches.clone(), totals.clone()
    order = correct.shape[1]
    any_match = (correct > 0).any(dim=1)
    if config.smooth == "add-k":
        correct[:, 1:] += config.smooth_value
        total[:, 1:] += config.smooth_value
    active = torch.cumprod((total > 0).to(torch.long), dim=1).bool()  # sacrebleu stops at the first empty order
    zero = (correct == 0) & active
    safe_total = torch.where(active, total, torch.ones_like(total))
    precision = 100.0 * correct / safe_total
    if config.smooth == "exp":
        doubling = torch.pow(2.0, torch.cumsum(zero.to(torch.float64), dim=1))
        precision = torch.where(zero, 100.0 / (doubling * safe_total), precision)
    elif config.smooth == "floor":
        precision = torch.where(zero, 100.0 * config.smooth_value / safe_total, precision)
    precision = torch.where(active, precision, torch.zeros_like(precision))
    log_p = torch.where(precision > 0, torch.log(precision.clamp_min(1e-300)), _SACREBLEU_LOG_ZERO)
    if config.effective_order:
        eff = active.sum(dim=1).clamp_min(1)
        used = torch.arange(order, device=matches.device)[None, :] < eff[:, None]
        log_mean = torch.where(used, log_p, 0.0).sum(dim=1) / eff
    else:
        log_mean = log_p.sum(dim=1) / order
    ratio = torch.where(hyp_len > 0, ref_len / hyp_len.clamp_min(1), 0.0)
    bp = torch.where(hyp_len < ref_len, torch.where(hyp_len > 0, torch.exp(1.0 - ratio), 0.0), 1.0)
    score = bp * torch.exp(log_mean) / 100.0
    return torch.where(any_match, score, torch.zeros_like(score))


def coco_bleu_scores(matches: Tensor, totals: Tensor, hyp_len: Tensor, ref_len: Tensor) -> Tensor:
    """pycocoevalcap's ``bleu_scorer`` for R rows of statistics at once: BLEU-1 … BLEU-N (cumulative).

    Args:
        matches, totals: ``DoubleTensor[R, N]`` clipped matches and hypothesis n-grams per order; hyp_len, ref_len:
            ``DoubleTensor[R]`` hypothesis and (closest) reference lengths.

    Returns:
        ``DoubleTensor[R, N]``: column k-1 is BLEU-k (the same operations in the same order as the scorer, so the
        doubles agree to the last bits).

    Example:
        >>> stats = torch.tensor([[3.0, 1.0, 4.0, 3.0, 4.0, 5.0]], dtype=torch.float64)  # matches, n-grams, c, r
        >>> coco_bleu_scores(stats[:, 0:2], stats[:, 2:4], stats[:, 4], stats[:, 5])  # c < r: brevity penalty
        tensor([[0.5841, 0.3894]], dtype=torch.float64)
    """
    product = torch.ones_like(hyp_len)
    columns = []
    for k in range(matches.shape[1]):  # orders, not samples
        product = product * ((matches[:, k] + _COCO_TINY) / (totals[:, k] + _COCO_SMALL))
        columns.append(torch.pow(product, 1.0 / (k + 1)))
    bleu = torch.stack(columns, dim=1) if columns else matches.new_zeros(matches.shape)
    ratio = (hyp_len + _COCO_TINY) / (ref_len + _COCO_SMALL)
    short = ratio < 1
    penalty = torch.exp(1.0 - 1.0 / torch.where(short, ratio, 1.0))
    return torch.where(short[:, None], bleu * penalty[:, None], bleu)


def coco_bleu_statistics(
    words: TokenBatch, ref_counts: np.ndarray | Tensor, device: torch.device | str | None = None, max_order: int = 4
) -> dict[str, Tensor]:
    """Per-sample statistics of pycocoevalcap's ``Bleu`` on already tokenised captions, for callers that combine
    them themselves (the COCO caption table); :func:`coco_bleu_scores` turns them into scores.

    Args:
        words: the whitespace-split words of ``B`` captions, then of their references (sample after sample), on
            the host.
        ref_counts: ``int64[B]`` references of each sample, on the host (a tensor is read: one host sync on a GPU).
        device: where counting runs.
        max_order: N.

    Returns:
        ``matches: LongTensor[B, N]``, ``totals: LongTensor[B, N]``, ``hyp_len: LongTensor[B]``, ``ref_len:
        LongTensor[B]`` (closest reference length, ties to the shorter).

    Example:
        >>> from gpumetrics.text.tokenize.base import encode_split
        >>> words = encode_split(["a cat sat", "a cat", "the cat sat down"])
        >>> coco_bleu_statistics(words, np.array([2]), max_order=2)["matches"]
        tensor([[3, 2]])
    """
    device = check_device(device, "device")
    if isinstance(ref_counts, Tensor):
        ref_counts = ref_counts.cpu().numpy()  # pass the host counts to spare this read
    ref_counts = np.asarray(ref_counts, dtype=np.int64).reshape(-1)
    size = ref_counts.size
    samples = np.arange(size, dtype=np.int64)
    sample = np.concatenate((samples, np.repeat(samples, ref_counts)))
    is_hyp = np.zeros(sample.size, dtype=bool)
    is_hyp[:size] = True
    return _bleu_statistics(words, sample, is_hyp, samples, max_order, device)


def _nltk_scores(
    matches: Tensor,
    denominators: Tensor,
    hyp_len: Tensor,
    ref_len: Tensor,
    last: Tensor,
    config: _BLEUConfig,
) -> Tensor:
    """NLTK's ``corpus_bleu`` for R rows of statistics at once.

    Args:
        matches: ``DoubleTensor[R, K]`` clipped matches; denominators: ``DoubleTensor[R, K]`` sums over samples of
            ``max(1, hypothesis n-grams)`` (NLTK's ``modified_precision`` denominators); hyp_len, ref_len:
            ``DoubleTensor[R]``; last: ``DoubleTensor[R, 3]`` = (hypothesis length, 5-gram matches, 5-gram
            denominator) of the last sample, read by smoothing methods 5, 6 and 7.

    Returns:
        ``DoubleTensor[R]``.
    """
    order = config.max_order
    num, den = matches[:, :order], denominators[:, :order]
    p = num / den
    zero = num == 0
    smooth = config.smooth
    if smooth == "method0":
        p = torch.where(zero, sys.float_info.min, p)
    elif smooth == "method1":
        p = torch.where(zero, (num + _NLTK_EPSILON) / den, p)
    elif smooth == "method2":
        p = torch.cat([p[:, :1], (num[:, 1:] + 1.0) / (den[:, 1:] + 1.0)], dim=1)
    elif smooth == "method3":
        k = torch.cumsum(zero.to(torch.float64), dim=1)
        p = torch.where(zero, 1.0 / (torch.pow(2.0, k) * den), p)
    if smooth in ("method4", "method7"):
        hit = zero & (hyp_len[:, None] > 1)
        k = torch.cumsum(hit.to(torch.float64), dim=1)
        log_len = torch.log(hyp_len.clamp_min(2.0))[:, None]
        p = torch.where(hit, 1.0 / (torch.pow(2.0, k) * _NLTK_K / log_len) / den, p)
    if smooth in ("method5", "method7"):
        p5 = last[:, 1] / last[:, 2].clamp_min(1.0)
        following = torch.cat([p[:, 1:], p5[:, None]], dim=1)  # the unsmoothed p_{n+1}, then the last 5-gram p
        previous = p[:, 0] + 1.0
        columns = []
        for i in range(order):
            previous = (previous + p[:, i] + following[:, i]) / 3.0
            columns.append(previous)
        p = torch.stack(columns, dim=1)
    if smooth == "method6":
        columns = [p[:, i] for i in range(min(2, order))]  # fewer than 3 orders: only rows scored 0 come here
        for i in range(2, order):
            pi0 = torch.where(columns[i - 2] == 0, 0.0, columns[i - 1] ** 2 / columns[i - 2].clamp_min(1e-300))
            ngrams_in_last = (last[:, 0] - i).clamp_min(0.0)
            columns.append((num[:, i] + _NLTK_ALPHA * pi0) / (ngrams_in_last + _NLTK_ALPHA))
        p = torch.stack(columns, dim=1)
    weights = upload(np.asarray(config.weights, dtype=np.float64), matches.device)
    log_sum = torch.where(p > 0, weights * torch.log(p.clamp_min(1e-320)), 0.0).sum(dim=1)
    ratio = ref_len / hyp_len.clamp_min(1.0)
    bp = torch.where(hyp_len > ref_len, 1.0, torch.where(hyp_len == 0, 0.0, torch.exp(1.0 - ratio)))
    score = bp * torch.exp(log_sum)
    return torch.where(num[:, 0] == 0, torch.zeros_like(score), score)


class Method6Error(ValueError):
    """NLTK's smoothing method 6 refuses a sentence (or the corpus) where BLEU would need it.

    ``SmoothingFunction().method6`` runs only when a unigram matches (NLTK returns 0 before smoothing otherwise); it
    then asserts a non-zero trigram precision (``AssertionError``), and with fewer than 3 ``weights`` it has no
    trigram precision to read (``IndexError``). ``sentences`` holds the indices of the refused samples in the batch
    (empty when the refused row is the corpus); the first of them is also its batch position
    (:func:`gpumetrics.core.positions.batch_position`).
    """

    def __init__(self, message: str, sentences: Sequence[int] = (), refused: int = 0) -> None:
        super().__init__(message)
        self.sentences = tuple(sentences)
        self.refused = refused


def _method6_reason(config: _BLEUConfig) -> str:
    if config.max_order < 3:
        return (f"with {config.max_order} weight(s) NLTK's SmoothingFunction().method6 reads a trigram precision that "
                "is not there (IndexError) as soon as a unigram matches")
    return "NLTK's SmoothingFunction().method6 asserts a non-zero trigram precision (AssertionError)"


def _check_method6(matches: Tensor, config: _BLEUConfig, sentences: bool) -> None:
    """Refuse, as NLTK does, rows that reach method 6's smoothing and that it cannot smooth (see :class:`Method6Error`).

    Rows without unigram match are scored 0 before any smoothing, as in NLTK. ``sentences``: the rows are samples
    (the error names them) rather than the corpus. One host sync.
    """
    if config.mode != "nltk" or config.smooth != "method6":
        return
    refused = matches[:, 0] > 0  # rows that reach the smoothing (NLTK returns 0 before it otherwise)
    if config.max_order >= 3:
        refused = refused & (matches[:, 2] == 0)
    if not bool(refused.any()):
        return
    reason = _method6_reason(config)
    if not sentences:
        raise Method6Error(f"smooth='method6' cannot score this corpus: {reason}; it returns 0 only when no unigram "
                           "matches. Choose another `smooth`.")
    indices = refused.nonzero().flatten()
    count = int(indices.numel())
    first = indices[:5].tolist()
    listed = ", ".join(f"preds[{i}]" for i in first) + (f" and {count - len(first)} more" if count > len(first) else "")
    raise at_position(Method6Error(
        f"smooth='method6' cannot score {listed} ({count} of {matches.shape[0]} sentences): {reason}; it returns 0 "
        "only when no unigram matches. Choose another `smooth`, or leave these sentences out.", first, count), first[0])


def _scores(
    matches: Tensor, totals: Tensor, hyp_len: Tensor, ref_len: Tensor, last: Tensor, config: _BLEUConfig,
    sentences: bool = False,
) -> Tensor:
    """Scores of R rows of summed statistics; ``totals`` are raw n-gram counts for sacrebleu, NLTK denominators.

    ``sentences``: the rows are samples (sentence level), not a corpus — for the errors of NLTK's method 6.
    """
    matches, totals = matches.double(), totals.double()
    hyp_len, ref_len = hyp_len.double(), ref_len.double()
    if config.mode == "coco":
        orders = config.max_order
        return coco_bleu_scores(matches[:, :orders], totals[:, :orders], hyp_len, ref_len)[:, -1]
    if config.mode == "sacrebleu":
        return _sacrebleu_scores(matches[:, : config.max_order], totals[:, : config.max_order], hyp_len, ref_len,
                                 config)
    _check_method6(matches, config, sentences)
    return _nltk_scores(matches, totals, hyp_len, ref_len, last.double(), config)


def _sentence_scores(stats: dict[str, Tensor], config: _BLEUConfig) -> Tensor:
    """Per-sample BLEU, ``DoubleTensor[B]``."""
    totals = stats["totals"] if config.mode != "nltk" else stats["totals"].clamp_min(1)
    five = min(4, totals.shape[1] - 1)  # the 5-gram column read by NLTK's methods 5 and 7
    last = torch.stack([stats["hyp_len"], stats["matches"][:, five], totals[:, five]], dim=1)
    return _scores(stats["matches"], totals, stats["hyp_len"], stats["ref_len"], last, config, sentences=True)


def _bleu_compute(
    matches: Tensor, totals: Tensor, hyp_len: Tensor, ref_len: Tensor, last: Tensor, config: _BLEUConfig
) -> Tensor:
    """Corpus BLEU from summed statistics (``matches``, ``totals``: ``[K]``; lengths: ``[]``; last: ``[3]``)."""
    return _scores(matches[None], totals[None], hyp_len[None], ref_len[None], last[None], config)[0]


def _corpus_statistics(stats: dict[str, Tensor], config: _BLEUConfig) -> dict[str, Tensor]:
    """Batch sums of the per-sample statistics (what the module accumulates)."""
    totals = stats["totals"] if config.mode != "nltk" else stats["totals"].clamp_min(1)
    if stats["hyp_len"].numel():
        five = min(4, totals.shape[1] - 1)
        last = torch.stack([stats["hyp_len"][-1], stats["matches"][-1, five], totals[-1, five]]).double()[None]
    else:
        last = torch.zeros(0, 3, dtype=torch.float64, device=totals.device)
    return {
        "matches": stats["matches"].sum(0).double(),
        "totals": totals.sum(0).double(),
        "hyp_len": stats["hyp_len"].sum().double(),
        "ref_len": stats["ref_len"].sum().double(),
        "last": last,
    }


def _last_row(last: Tensor) -> Tensor:
    return last[-1] if last.numel() else torch.zeros(3, dtype=torch.float64, device=last.device)


@gc_paused
@single_threaded
def bleu_score(
    preds: str | Sequence[str],
    target: str | Sequence[str | Sequence[str]],
    mode: str = "sacrebleu",
    tokenize: Optional[str] = None,
    smooth: Optional[str] = None,
    smooth_value: Optional[float] = None,
    weights: Optional[Sequence[float]] = None,
    lowercase: bool = False,
    effective_order: bool = False,
    reduction: str = "corpus",
    device: torch.device | str | None = None,
) -> Tensor:
    """BLEU of hypotheses against their references, in [0, 1].

    Args:
        preds: ``B`` hypothesis strings.
        target: ``B`` items, each the reference string(s) of the corresponding hypothesis (1 or more, any number).
        mode: ``"sacrebleu"`` (sacrebleu 2.x ``corpus_bleu``), ``"nltk"`` (NLTK ``corpus_bleu``) or ``"coco"``
            (pycocoevalcap ``Bleu``, as ``COCOEvalCap`` prints it; BLEU-n with n = ``len(weights)``).
        tokenize: ``"13a"``, ``"intl"``, ``"char"``, ``"zh"`` or ``"none"`` (whitespace); default ``"13a"`` for
            sacrebleu, ``"none"`` for NLTK. ``mode="coco"``: ``"ptb"`` (default, pycocoevalcap's PTB tokenizer)
            or ``"none"`` (whitespace, the scorer on pre-tokenised text).
        smooth: sacrebleu: ``"exp"`` (default), ``"floor"``, ``"add-k"``, ``"none"``; NLTK: ``"method0"`` (default)
            … ``"method7"``.
        smooth_value: sacrebleu's value for ``floor`` (default 0.1) and ``add-k`` (default 1).
        weights: n-gram weights, default ``(0.25,) * 4``; their number is the maximum n-gram order. Any non-negative
            weights for NLTK; uniform only for sacrebleu.
        lowercase: lowercase before tokenising.
        effective_order: sacrebleu only: leave out orders without any n-gram (recommended at sentence level).
        reduction: ``"corpus"`` — one corpus BLEU; ``"mean"`` — mean sentence BLEU (0 for no sample); ``"sum"`` —
            their sum; ``"none"`` — sentence BLEU per sample (``[B]``, also for one sample).
        device: device of the counting tensors and of the result.

    Returns:
        ``DoubleTensor[]`` (``corpus``, ``mean``, ``sum``) or ``DoubleTensor[B]`` (``none``).

    Raises:
        TypeError: ``preds`` / ``target`` are not strings / sequences of strings.
        ValueError: different numbers of hypotheses and references, a sample without reference, unknown options.
        Method6Error: (a ``ValueError``) ``smooth="method6"`` where NLTK raises: a unigram matches but no trigram
            does, or fewer than 3 ``weights`` and a unigram matches; at sentence level it names the sentences.

    Example:
        >>> preds = ["the cat sat on the mat", "a dog barked"]
        >>> target = [["the cat sat on a mat", "a cat sat on the mat"], ["the dog barked loudly"]]
        >>> round(bleu_score(preds, target).item(), 6)
        0.764706
        >>> bleu_score(preds, target, mode="nltk", weights=(0.5, 0.5), smooth="method1", reduction="none")
        tensor([0.9129, 0.4137], dtype=torch.float64)
        >>> round(bleu_score(["A cat sat on the mat."], [["The cat sat on the mat."]], mode="coco").item(), 6)
        0.759836
    """
    config = _bleu_config(mode, tokenize, smooth, smooth_value, weights, lowercase, effective_order, reduction)
    stats = _bleu_update(preds, target, config, check_device(device, "device"))
    if reduction != "corpus":
        return reduce_scores(_sentence_scores(stats, config), reduction)
    sums = _corpus_statistics(stats, config)
    return _bleu_compute(sums["matches"], sums["totals"], sums["hyp_len"], sums["ref_len"], _last_row(sums["last"]),
                         config)


def corpus_bleu_value_function(
    preds: str | Sequence[str],
    target: str | Sequence[str | Sequence[str]],
    tokenize: Optional[str] = None,
    smooth: Optional[str] = None,
    smooth_value: Optional[float] = None,
    weights: Optional[Sequence[float]] = None,
    lowercase: bool = False,
    effective_order: bool = False,
    device: torch.device | str | None = None,
) -> tuple[Callable[[Tensor], Tensor], int]:
    """Corpus BLEU (sacrebleu mode) of any subsets of a corpus, as a batched value function (Shapley attribution).

    Each segment's sufficient statistics are counted once; ``value_fn(coalitions: BoolTensor[C, B])`` sums them per
    coalition with one matrix product and applies sacrebleu's formula to the C rows: ``DoubleTensor[C]``, the corpus
    BLEU of the segments in each coalition (0 for the empty one).

    Args:
        preds, target: as in :func:`bleu_score`.
        tokenize, smooth, smooth_value, weights, lowercase, effective_order, device: ``mode="sacrebleu"`` options of
            :func:`bleu_score`.

    Returns:
        ``(value_fn, B)``.

    Example:
        >>> preds = ["the cat sat on the mat today", "a dog barked at the postman"]
        >>> target = ["the cat sat on the mat", "a dog barked at the old postman"]
        >>> value_fn, n = corpus_bleu_value_function(preds, target)
        >>> coalitions = torch.tensor([[True, True], [True, False], [False, False]])
        >>> [round(v, 6) for v in value_fn(coalitions).tolist()], round(bleu_score(preds, target).item(), 6)
        ([0.804829, 0.809107, 0.0], 0.804829)
    """
    config = _bleu_config("sacrebleu", tokenize, smooth, smooth_value, weights, lowercase, effective_order, "corpus")
    device = check_device(device, "device")
    stats = _bleu_update(preds, target, config, device)
    orders = config.max_order
    table = torch.cat([stats["matches"][:, :orders], stats["totals"][:, :orders], stats["hyp_len"][:, None],
                       stats["ref_len"][:, None]], 1).double()  # [B, 2·orders + 2]
    last = torch.zeros(3, dtype=torch.float64, device=device)

    chunk = rows_per_chunk(8 * (table.shape[0] + table.shape[1]))  # a float64 coalition row and its sums

    def value_fn(coalitions: Tensor) -> Tensor:
        # integer sums, exact in float64 whatever the chunking
        sums = map_row_chunks(lambda rows: upload(rows, table.device, torch.float64) @ table, coalitions, chunk)
        return _scores(sums[:, :orders], sums[:, orders:2 * orders], sums[:, -2], sums[:, -1],
                       last.expand(sums.shape[0], 3), config)

    return value_fn, table.shape[0]


class BLEUScore(PerSampleScore):
    """BLEU accumulated over batches (see :func:`bleu_score` for the options and the reference tools).

    States: clipped matches and n-gram totals per order, hypothesis and closest-reference lengths (float64 sums, one
    all-reduce each under DDP) and the last sample's statistics for NLTK's smoothing methods 5–7 for
    ``reduction="corpus"``; sentence level (``"mean"``, ``"sum"``, ``"none"``) accumulates sentence BLEU through
    :class:`~gpumetrics.core.PerSampleScore` (``score_sum``, ``count``, and ``scores`` for ``"none"``).

    Host syncs: at most N−1 per update (N = the counted n-gram orders; 3 for BLEU-4, fewer when no n-gram of an
    order is left to extend), independent of the batch, in every mode: the pruned positions of each order above
    the first (:func:`~gpumetrics.kernels.ngrams.clipped_ngram_matches`); ``smooth="method6"`` adds one. The line
    layout is worked out on the host and goes to the device in one copy.

    Example:
        >>> metric = BLEUScore()
        >>> metric.update(["the cat sat on the mat"], [["the cat sat on a mat", "a cat sat on the mat"]])
        >>> metric.update(["a dog barked"], [["the dog barked loudly"]])
        >>> round(metric.compute().item(), 6)
        0.764706
        >>> metric.signature()[:49]
        'bleu|mode:sacrebleu|tok:13a|smooth:exp|order:4|ca'
    """

    signature_name = "bleu"
    kernel_threads = 1
    reductions = BLEU_REDUCTIONS
    higher_is_better = True
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    def __init__(
        self,
        mode: str = "sacrebleu",
        tokenize: Optional[str] = None,
        smooth: Optional[str] = None,
        smooth_value: Optional[float] = None,
        weights: Optional[Sequence[float]] = None,
        lowercase: bool = False,
        effective_order: bool = False,
        reduction: str = "corpus",
        **kwargs: Any,
    ) -> None:
        self.config = _bleu_config(mode, tokenize, smooth, smooth_value, weights, lowercase, effective_order,
                                   reduction)
        super().__init__(reduction=reduction, **kwargs)
        orders = self.config.counted_orders
        zeros = torch.zeros(orders, dtype=torch.float64)
        self.add_state("matches", zeros.clone(), dist_reduce_fx="sum")
        self.add_state("totals", zeros.clone(), dist_reduce_fx="sum")
        self.add_state("hyp_len", torch.tensor(0.0, dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("ref_len", torch.tensor(0.0, dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("last", [], dist_reduce_fx="cat")

    @property
    def ptb_reads_next_sample(self) -> bool:
        return self.config.coco_ptb

    def update(self, preds: str | Sequence[str], target: str | Sequence[str | Sequence[str]]) -> None:
        """Add a batch: ``preds`` — ``B`` strings; ``target`` — ``B`` strings or lists of reference strings."""
        stats = _bleu_update(preds, target, self.config, self.device)
        if self.config.reduction == "corpus":
            sums = _corpus_statistics(stats, self.config)
            self.matches += sums["matches"]
            self.totals += sums["totals"]
            self.hyp_len += sums["hyp_len"]
            self.ref_len += sums["ref_len"]
            if sums["last"].numel():
                self.last.append(sums["last"])
            return
        try:
            scores = _sentence_scores(stats, self.config)
        except Method6Error as error:  # name the samples among all this metric received, too
            seen = int(self.count)
            where = ", ".join(str(seen + i) for i in error.sentences)
            raise Method6Error(f"{error} In this metric's (this process's) samples: {where}"
                               f"{' …' if error.refused > len(error.sentences) else ''}.",
                               [seen + i for i in error.sentences], error.refused) from None
        self._accumulate(scores)

    def compute(self) -> Tensor:
        """Corpus BLEU ``DoubleTensor[]`` (``mean``/``sum``: of sentence BLEU; ``none``: ``DoubleTensor[N]``); 0 before
        data."""
        if self.config.reduction != "corpus":
            return super().compute()
        last = dim_zero_cat(self.last) if isinstance(self.last, list) and self.last else self.last
        last = last if isinstance(last, Tensor) else torch.zeros(0, 3, dtype=torch.float64, device=self.device)
        return _bleu_compute(self.matches, self.totals, self.hyp_len, self.ref_len, _last_row(last.reshape(-1, 3)),
                             self.config)

    def _signature_fields(self) -> dict[str, Any]:
        config = self.config
        smooth = config.smooth if config.smooth_value is None else f"{config.smooth}[{config.smooth_value:.2f}]"
        uniform = all(w == config.weights[0] for w in config.weights)
        tokenizer = config.tokenizer.signature()
        return {
            "mode": config.mode,
            "tok": "ptb" if config.coco_ptb else tokenizer["tok"],
            "smooth": smooth,
            "order": config.max_order,
            "weights": None if uniform and abs(sum(config.weights) - 1) < 1e-12 else ",".join(map(str, config.weights)),
            "case": None if config.mode == "coco" else tokenizer["case"],
            "eff": config.effective_order if config.mode == "sacrebleu" else None,
            "reduction": config.reduction,
        }

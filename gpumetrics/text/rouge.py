"""ROUGE-N, ROUGE-L, ROUGE-Lsum (google-research ``rouge-score``) and ROUGE-W (Lin 2004) on tensors
(docs/metrics/ngram.md).

Parity: with ``tokenize="rouge-score"`` every ``rouge1``…``rouge9``, ``rougeL`` and ``rougeLsum`` score equals
``rouge_score.rouge_scorer.RougeScorer(keys, use_stemmer).score_multi(refs, pred)`` (``split_summaries=False``:
ROUGE-Lsum sentences are the non-empty lines), averaged over samples. With several references each key takes the
reference of highest F-measure (first one on ties), as ``score_multi`` does.

``rougeW`` is the weighted-LCS ROUGE of Lin (2004) §3.3 with ``f(k) = k**rouge_w_weight`` (1.2 by default):
``R = (WLCS / f(len_ref)) ** (1/w)``, ``P = (WLCS / f(len_pred)) ** (1/w)``, ``F = 2PR / (P + R)``.

``mode="coco"`` equals pycocoevalcap's ``Rouge().compute_score(gts, res)`` (the ``ROUGE_L`` of ``COCOEvalCap``): only
the key ``rougeL``; words are the caption split on single spaces (``" "``, so an empty caption is one empty word,
which matches an empty reference); the LCS of the caption with *each* reference gives a precision (LCS / caption
words) and a recall (LCS / reference words); the best precision and the best recall are taken **separately** over
the references — possibly from two different references — and combined as ``F = (1 + β²)·P·R / (R + β²·P)`` with
β = 1.2 (0 when P or R is 0). ``rougeL_precision`` / ``rougeL_recall`` are those two maxima, ``rougeL_fmeasure`` the
combined score (the per-image value; the corpus score is its mean). ``tokenize="ptb"`` (default) first tokenises
as ``COCOEvalCap`` does (pycocoevalcap's PTB tokenizer, predictions and references as two calls), ``"none"``
splits the given strings as they are. Same LCS kernel as ROUGE-L (:func:`gpumetrics.kernels.lcs.lcs_length`).

Only tokenisation is Python (:class:`gpumetrics.text.tokenize.RougeTokenizer`); n-gram overlaps (sort-ranked ids of
:func:`~gpumetrics.kernels.ngrams.ngram_ids` + multiset intersections), LCS (bit-parallel), the backtracked LCS
unions of ROUGE-Lsum and the weighted LCS are tensor work over all (sample, reference) pairs at once, on the
metric's device — except ROUGE-L's LCS lengths on the CPU, which rapidfuzz's C++ ``LCSseq`` computes from the host
ids when it is installed (:func:`~gpumetrics.kernels.host.lcs_length_rapidfuzz`; the same integers, 3–9× faster on
long texts). Sizes (tokens, lines, pairs, widths) are host data from the tokenizer: an update makes no host
synchronisation.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core import (
    REDUCTIONS, PerSampleScore, as_reference_lists, as_text_list, check_choice, check_device, check_same_length,
    gc_paused, reduce_scores, single_threaded,
)
from gpumetrics.core.checks import check_real
from gpumetrics.core.transfer import upload, upload_all
from gpumetrics.kernels.host import lcs_length_rapidfuzz
from gpumetrics.kernels.lcs import lcs_backtrack_mask, lcs_length, weighted_lcs
from gpumetrics.kernels.multiset import multiset_intersection_size
from gpumetrics.kernels.ngrams import TokenBatch, ngram_ids, ngram_totals
from gpumetrics.kernels.ragged import (
    bucket_indices, expand_segments, pad_rows, pad_segments, segment_ids, size_buckets,
)
from gpumetrics.text.tokenize import RougeTokenizer
from gpumetrics.text.tokenize.rouge import ROUGE_TOKENIZERS
from gpumetrics.text.tokenize.base import encode_split
from gpumetrics.text.tokenize.ptb import coco_ptb_strings

DEFAULT_ROUGE_KEYS = ("rouge1", "rouge2", "rougeL", "rougeLsum")
ROUGE_MODES = ("rouge-score", "coco")
COCO_TOKENIZERS = ("ptb", "none")
COCO_BETA = 1.2  # pycocoevalcap Rouge's β
_ROUGE_N = re.compile(r"rouge([1-9])$")
_STATS = ("precision", "recall", "fmeasure")
_CPU_CHUNK_SAMPLES = 2048
_DEVICE_CHUNK_SAMPLES = 1 << 16
_PAD_SLACK_CELLS = 1 << 22  # (token, token) cells one padded block of pairs may waste before pairs are bucketed


# ---------------------------------------------------------------------------------------------------- options
def _check_keys(rouge_keys: Any) -> tuple[str, ...]:
    keys = (rouge_keys,) if isinstance(rouge_keys, str) else rouge_keys
    if not isinstance(keys, (tuple, list)) or not keys:
        raise ValueError(f"`rouge_keys` must be a non-empty tuple of ROUGE keys, got {rouge_keys!r}")
    for key in keys:
        if not isinstance(key, str) or not (_ROUGE_N.match(key) or key in ("rougeL", "rougeLsum", "rougeW")):
            raise ValueError(
                f"`rouge_keys` entries must be 'rouge1'…'rouge9', 'rougeL', 'rougeLsum' or 'rougeW'; got {key!r}"
            )
    if len(set(keys)) != len(keys):
        raise ValueError(f"`rouge_keys` holds a key twice: {keys!r}")
    return tuple(keys)


class COCOWords:
    """``mode="coco"``'s words: pycocoevalcap ``Rouge`` splits each (PTB-tokenised) caption on ``" "``.

    Args:
        ptb: tokenise with pycocoevalcap's PTB tokenizer first (predictions and references as two calls).
    """

    def __init__(self, ptb: bool) -> None:
        self.ptb = ptb

    def encode(self, texts: Sequence[str]) -> TokenBatch:
        """The words ``text.split(" ")`` of each text (``""`` is one empty word) as a host batch."""
        return encode_split(texts, " ")

    def signature(self) -> dict[str, Any]:
        return {"tokenizer": "ptb" if self.ptb else "none"}


def _check_options(
    rouge_keys: Any, tokenize: Any, use_stemmer: Any, rouge_w_weight: Any, reduction: Any, mode: Any = "rouge-score"
) -> tuple[tuple[str, ...], RougeTokenizer | COCOWords]:
    check_choice(mode, "mode", ROUGE_MODES)
    if mode == "coco":
        keys = ("rougeL",) if rouge_keys is None else _check_keys(rouge_keys)
        if keys != ("rougeL",):
            raise ValueError(f"`rouge_keys` must be ('rougeL',) in mode='coco' (pycocoevalcap's ROUGE_L), "
                             f"got {rouge_keys!r}")
        tokenize = "ptb" if tokenize is None else tokenize
        check_choice(tokenize, "tokenize", COCO_TOKENIZERS)
        if use_stemmer is not False:
            raise ValueError(f"`use_stemmer` is not an option of mode='coco', got {use_stemmer!r}")
        check_choice(reduction, "reduction", REDUCTIONS)
        return keys, COCOWords(tokenize == "ptb")
    keys = _check_keys(DEFAULT_ROUGE_KEYS if rouge_keys is None else rouge_keys)
    tokenize = "rouge-score" if tokenize is None else tokenize
    check_choice(tokenize, "tokenize", ROUGE_TOKENIZERS)
    tokens = RougeTokenizer(tokenize, use_stemmer)  # checks use_stemmer
    check_real(rouge_w_weight, "rouge_w_weight", above=1)
    check_choice(reduction, "reduction", REDUCTIONS)
    return keys, tokens


def result_names(rouge_keys: Sequence[str]) -> list[str]:
    """Output keys in order: ``{key}_precision``, ``{key}_recall``, ``{key}_fmeasure`` per ROUGE key.

    Example:
        >>> result_names(["rougeL"])
        ['rougeL_precision', 'rougeL_recall', 'rougeL_fmeasure']
    """
    return [f"{key}_{stat}" for key in rouge_keys for stat in _STATS]


def _f_measure(precision: Tensor, recall: Tensor) -> Tensor:
    """rouge-score's ``2PR / (P + R)``, 0 when ``P + R = 0`` (same operation order: bit-identical doubles)."""
    total = precision + recall
    return torch.where(total > 0, 2.0 * precision * recall / torch.where(total > 0, total, 1.0), 0.0)


def _scores(hits: Tensor, pred_count: Tensor, target_count: Tensor) -> Tensor:
    """``DoubleTensor[P, 3]`` precision, recall, F from overlap and sizes; 0 (never NaN) on empty sides."""
    hits = hits.double()
    precision = hits / pred_count.clamp_min(1).double()
    recall = hits / target_count.clamp_min(1).double()
    return torch.stack([precision, recall, _f_measure(precision, recall)], 1)


def _best_per_sample(scores: Tensor, pair_sample: Tensor, n_samples: int) -> Tensor:
    """For every sample and key, the (P, R, F) of its pair of highest F, first pair on ties (``np.argmax``).

    Args:
        scores: ``DoubleTensor[P, K, 3]``.
        pair_sample: ``LongTensor[P]`` sample of each pair (non-decreasing).

    Returns:
        ``DoubleTensor[n_samples, K, 3]``.
    """
    n_pairs, n_keys = scores.shape[0], scores.shape[1]
    if n_pairs == n_samples:  # one reference per sample
        return scores
    device = scores.device
    fmeasure = scores[:, :, 2]
    index = pair_sample.unsqueeze(1).expand(n_pairs, n_keys)
    best_f = torch.full((n_samples, n_keys), float("-inf"), dtype=torch.float64, device=device)
    best_f = best_f.scatter_reduce(0, index, fmeasure, reduce="amax")
    pair_ids = torch.arange(n_pairs, device=device).unsqueeze(1).expand(n_pairs, n_keys)
    candidate = torch.where(fmeasure == best_f[pair_sample], pair_ids, n_pairs)
    first = torch.full((n_samples, n_keys), n_pairs, dtype=torch.long, device=device)
    first = first.scatter_reduce(0, index, candidate, reduce="amin")
    return scores[first, torch.arange(n_keys, device=device).unsqueeze(0)]


# ---------------------------------------------------------------------------------------------------- shared update
def _rouge_update(
    preds: Any,
    target: Any,
    rouge_keys: Sequence[str],
    tokenizer: RougeTokenizer | COCOWords,
    rouge_w_weight: float,
    device: torch.device,
) -> Tensor:
    """Per-sample ROUGE scores: ``DoubleTensor[B, K, 3]`` (precision, recall, F per key, best reference; ``coco``:
    best precision, best recall, their β-combination).

    Samples are scored in chunks (independent of each other): on CPU a chunk of ~2k samples keeps the working set
    in cache, which is faster than one pass over a large batch; on CUDA chunks are large.
    """
    pred_list = as_text_list(preds, "preds")
    target_lists = as_reference_lists(target, "target")
    check_same_length(pred_list, "preds", target_lists, "target")
    n_samples, n_keys = len(pred_list), len(rouge_keys)
    if n_samples == 0:
        return torch.zeros(0, n_keys, 3, dtype=torch.float64, device=device)
    chunk = _CPU_CHUNK_SAMPLES if device.type == "cpu" else _DEVICE_CHUNK_SAMPLES
    if isinstance(tokenizer, COCOWords):
        if tokenizer.ptb:
            pred_list, target_lists = coco_ptb_strings(pred_list, target_lists)
        words = tokenizer.encode(pred_list + [ref for refs in target_lists for ref in refs])
        ref_counts = np.fromiter(map(len, target_lists), dtype=np.int64, count=n_samples)
        return _coco_rouge_l(words, ref_counts, device).unsqueeze(1)
    parts = [
        _rouge_chunk(pred_list[start : start + chunk], target_lists[start : start + chunk], rouge_keys, tokenizer,
                     rouge_w_weight, device)
        for start in range(0, n_samples, chunk)
    ]
    return parts[0] if len(parts) == 1 else torch.cat(parts)


def _rouge_chunk(
    pred_list: list[str],
    target_lists: list[list[str]],
    rouge_keys: Sequence[str],
    tokenizer: RougeTokenizer,
    rouge_w_weight: float,
    device: torch.device,
) -> Tensor:
    """:func:`_rouge_update` of validated inputs, in one pass: ``DoubleTensor[B, K, 3]``.

    Every size (tokens, n-grams, lines, line pairs, padded widths) is worked out on the host from the tokenizer's
    host output, and the host arrays go to the device in one copy: the kernels never read a size back.
    """
    n_samples = len(pred_list)
    flat_targets = [ref for refs in target_lists for ref in refs]
    n_pairs = len(flat_targets)
    refs_host = np.fromiter(map(len, target_lists), dtype=np.int64, count=n_samples)
    pair_sample_host = np.repeat(np.arange(n_samples, dtype=np.int64), refs_host)

    tokens, line_lengths, lines_per_text = tokenizer.encode_with_lines(pred_list + flat_targets)
    text_lengths = np.asarray(tokens.lengths, dtype=np.int64)  # host int64[N]: sizes read without a device sync
    pred_lengths_host, target_lengths_host = text_lengths[:n_samples], text_lengths[n_samples:]
    vocab = max(tokens.vocab_size, 1)
    host = {"ids": np.asarray(tokens.ids, dtype=np.int64), "lengths": text_lengths, "pair_sample": pair_sample_host}
    if "rougeLsum" in rouge_keys:
        summary = _summary_layout(line_lengths, lines_per_text, n_samples, pair_sample_host)
        host.update({name: value for name, value in summary.items() if isinstance(value, np.ndarray)})
    names = list(host)
    on_device = dict(zip(names, upload_all([host[name] for name in names], device)))  # one host-to-device copy
    ids, text_len, pair_sample = on_device["ids"], on_device["lengths"], on_device["pair_sample"]
    batch = tokens._replace(ids=ids, lengths=text_len, vocab_size=vocab)
    n_pred_tokens = int(pred_lengths_host.sum())
    pred_flat, target_flat = ids[:n_pred_tokens], ids[n_pred_tokens:]
    pred_len, target_len = text_len[:n_samples], text_len[n_samples:]
    pair_pred_len = pred_len.index_select(0, pair_sample)
    pair_pred_tokens = int(pred_lengths_host[pair_sample_host].sum())

    host_hits = _host_lcs(host["ids"], text_lengths, n_samples, pair_sample_host, device) \
        if "rougeL" in rouge_keys else None
    needs_padded = ("rougeL" in rouge_keys and host_hits is None) or "rougeW" in rouge_keys
    if needs_padded:
        blocks = _padded_pairs(pred_flat, pred_len, target_flat, target_len, pair_sample,
                               pred_lengths_host[pair_sample_host], target_lengths_host)

    results = []
    for key in rouge_keys:
        match = _ROUGE_N.match(key)
        if match:
            n = int(match.group(1))
            gram_counts = np.clip(text_lengths - (n - 1), 0, None)  # host lengths
            grams, bound = ngram_ids(batch, n, int(gram_counts.sum()))  # predictions first, then the references
            counts = ngram_totals(text_len, n)[:, n - 1]
            pred_counts, target_counts = counts[:n_samples], counts[n_samples:]
            n_pred_grams = int(gram_counts[:n_samples].sum())
            pred_grams, target_grams = grams[:n_pred_grams], grams[n_pred_grams:]
            left, left_pair = expand_segments(pred_grams, pred_counts, pair_sample,
                                              int(gram_counts[:n_samples][pair_sample_host].sum()))
            target_pair = segment_ids(target_counts, target_grams.numel())
            hits = multiset_intersection_size(left, left_pair, target_grams, target_pair, n_pairs, id_bound=bound)
            results.append(_scores(hits, pred_counts.index_select(0, pair_sample), target_counts))
        elif key == "rougeL":
            hits = host_hits if host_hits is not None else \
                _over_blocks(blocks, lcs_length, torch.zeros(n_pairs, dtype=torch.long, device=device))
            results.append(_scores(hits, pair_pred_len, target_len))
        elif key == "rougeW":
            _check_weight_range(rouge_w_weight, int(text_lengths.max(initial=0)))
            results.append(_over_blocks(blocks, lambda *padded: _rouge_w(*padded, rouge_w_weight),
                                        torch.zeros(n_pairs, 3, dtype=torch.float64, device=device)))
        else:  # rougeLsum
            hits = _summary_lcs_hits(pred_flat, target_flat, pred_len, pair_sample, pair_pred_tokens, vocab,
                                     summary, on_device)
            results.append(_scores(hits, pair_pred_len, target_len))
    return _best_per_sample(torch.stack(results, 1), pair_sample, n_samples)


def _padded_pairs(
    pred_flat: Tensor, pred_len: Tensor, target_flat: Tensor, target_len: Tensor, pair_sample: Tensor,
    pair_pred_host: np.ndarray, target_host: np.ndarray,
) -> list[tuple[Optional[Tensor], Tensor, Tensor, Tensor, Tensor]]:
    """The ``P`` (reference, prediction) pairs as right-padded blocks for the pair kernels: ``(pairs, target
    [p, Wt], target lengths [p], prediction [p, Wp], prediction lengths [p])`` (padding -2 / -1).

    One block of every pair (``pairs`` None) unless padding all pairs to the longest texts wastes more than their own
    token cells (:func:`~gpumetrics.kernels.ragged.size_buckets`): one text of 10^4 tokens among 1,000 of 10 made
    every pair a 10^4-wide row and every LCS a 10^4 × 10^4 table. Then ``pairs: LongTensor[p]`` are the pairs of a
    bucket of similar lengths, and pairs with an empty side are in no block (their LCS is 0).

    Args:
        pred_flat, target_flat: ``LongTensor[Tp]`` / ``[Tt]`` token ids of the predictions / references.
        pred_len: ``LongTensor[B]``; target_len: ``LongTensor[P]``; pair_sample: ``LongTensor[P]``.
        pair_pred_host, target_host: host ``int64[P]`` prediction / reference lengths of every pair.
    """
    buckets = size_buckets(target_host, pair_pred_host, _PAD_SLACK_CELLS)
    pair_pred_len = pred_len.index_select(0, pair_sample)
    if buckets is None:
        widths = int(pair_pred_host.max(initial=0)), int(target_host.max(initial=0))
        pred_padded = pad_segments(pred_flat, pred_len, -1, widths[0]).index_select(0, pair_sample)
        return [(None, pad_segments(target_flat, target_len, -2, widths[1]), target_len, pred_padded, pair_pred_len)]
    return [(pairs, *pad_rows(target_flat, target_len, pairs, target_host[bucket], -2),
             *pad_rows(pred_flat, pred_len, pair_sample[pairs], pair_pred_host[bucket], -1))
            for bucket, pairs in bucket_indices(buckets, pred_flat.device)]


def _over_blocks(blocks: list, kernel: Callable[..., Tensor], out: Tensor) -> Tensor:
    """``kernel(target, target_len, pred, pred_len)`` of every block of :func:`_padded_pairs`, written at its pairs
    into ``out`` (``Tensor[P, ...]`` zeros: pairs in no block keep 0)."""
    if len(blocks) == 1 and blocks[0][0] is None:
        return kernel(*blocks[0][1:])
    for pairs, *padded in blocks:
        out[pairs] = kernel(*padded).to(out.dtype)
    return out


def _host_lcs(
    ids: np.ndarray, lengths: np.ndarray, n_samples: int, pair_sample: np.ndarray, device: torch.device
) -> Optional[Tensor]:
    """``LongTensor[P]`` LCS of every (reference, its prediction) pair by rapidfuzz's C++ kernel when the metric runs
    on the CPU (``None`` elsewhere, or without rapidfuzz: the tensor kernel runs). Rows: the ``n_samples``
    predictions, then the ``P`` references; ``pair_sample: int64[P]`` (host)."""
    if device.type != "cpu":
        return None
    n_pairs = pair_sample.size
    hits = lcs_length_rapidfuzz(ids, lengths, n_samples + np.arange(n_pairs, dtype=np.int64), pair_sample)
    return None if hits is None else upload(hits, device)


def _coco_rouge_chunk(words: TokenBatch, refs_per_sample: np.ndarray, device: torch.device) -> Tensor:
    """pycocoevalcap ``Rouge`` of ``B`` captions against their references: ``DoubleTensor[B, 3]`` (best precision,
    best recall, ``(1 + β²)PR / (R + β²P)``), every (caption, reference) LCS at once.

    ``words`` (host) holds the ``B`` captions' words, then their references' (sample after sample);
    ``refs_per_sample: int64[B]`` (host). The three host arrays go to ``device`` in one copy."""
    n_samples = refs_per_sample.size
    host_lengths = np.asarray(words.lengths, dtype=np.int64)
    pair_sample_host = np.repeat(np.arange(n_samples, dtype=np.int64), refs_per_sample)
    host_ids = np.asarray(words.ids, dtype=np.int64)
    ids, lengths, pair_sample = upload_all([host_ids, host_lengths, pair_sample_host], device)
    n_pred_tokens = int(host_lengths[:n_samples].sum())
    pred_len, target_len = lengths[:n_samples], lengths[n_samples:]
    pair_pred_len = pred_len[pair_sample]
    hits = _host_lcs(host_ids, host_lengths, n_samples, pair_sample_host, device)
    if hits is None:
        blocks = _padded_pairs(ids[:n_pred_tokens], pred_len, ids[n_pred_tokens:], target_len, pair_sample,
                               host_lengths[:n_samples][pair_sample_host], host_lengths[n_samples:])
        hits = _over_blocks(blocks, lcs_length, torch.zeros(pair_sample.numel(), dtype=torch.long, device=device))
    hits = hits.double()
    precision = hits / pair_pred_len.clamp_min(1).double()
    recall = hits / target_len.clamp_min(1).double()
    zeros = torch.zeros(n_samples, dtype=torch.float64, device=device)
    best_p = zeros.scatter_reduce(0, pair_sample, precision, reduce="amax")
    best_r = zeros.scatter_reduce(0, pair_sample, recall, reduce="amax")
    beta2 = COCO_BETA**2
    both = (best_p != 0) & (best_r != 0)
    combined = (1 + beta2) * best_p * best_r / torch.where(both, best_r + beta2 * best_p, 1.0)
    return torch.stack([best_p, best_r, torch.where(both, combined, 0.0)], 1)


def _coco_rouge_l(words: TokenBatch, ref_counts: np.ndarray, device: torch.device) -> Tensor:
    """:func:`_coco_rouge_chunk` in chunks of samples (see :func:`_rouge_update`): ``DoubleTensor[B, 3]``."""
    n_samples = ref_counts.size
    chunk = _CPU_CHUNK_SAMPLES if device.type == "cpu" else _DEVICE_CHUNK_SAMPLES
    if n_samples <= chunk:
        return _coco_rouge_chunk(words, ref_counts, device)
    line_start = np.concatenate(([0], np.cumsum(words.lengths)))
    ref_start = n_samples + np.concatenate(([0], np.cumsum(ref_counts)))
    parts = []
    for start in range(0, n_samples, chunk):
        end = min(start + chunk, n_samples)
        lines = np.r_[start:end, ref_start[start] : ref_start[end]]
        tokens = np.r_[line_start[start] : line_start[end], line_start[ref_start[start]] : line_start[ref_start[end]]]
        part = words._replace(ids=words.ids[tokens], lengths=words.lengths[lines])
        parts.append(_coco_rouge_chunk(part, ref_counts[start:end], device))
    return torch.cat(parts)


def coco_rouge_l(words: TokenBatch, ref_counts: np.ndarray, device: torch.device | str | None = None) -> Tensor:
    """pycocoevalcap ``Rouge`` per sample (the ``mode="coco"`` scores of :func:`rouge_score` with ``reduction="none"``)
    on already tokenised captions.

    Args:
        words: the ``" "``-split words (:meth:`COCOWords.encode`) of ``B`` captions, then of their references
            (sample after sample), on the host.
        ref_counts: ``int64[B]`` references of each sample (host).
        device: where the LCS runs.

    Returns:
        ``DoubleTensor[B, 3]``: best precision, best recall, ``(1 + β²)PR / (R + β²P)`` (β = 1.2).

    Example:
        >>> coco_rouge_l(COCOWords(ptb=False).encode(["a cat", "a cat", "a black cat on a mat"]), np.array([2]))
        tensor([[1., 1., 1.]], dtype=torch.float64)
    """
    return _coco_rouge_l(words, np.asarray(ref_counts, dtype=np.int64), check_device(device, "device"))


def _check_weight_range(weight: float, longest: int) -> None:
    """ROUGE-W divides by ``f(len) = len**weight`` in float64: refuse a weight for which that overflows (the score
    would be NaN) rather than return it; ``longest``: the longest text of the batch, in tokens (host int)."""
    try:
        float(max(longest, 1)) ** weight
    except OverflowError:
        raise ValueError(f"`rouge_w_weight={weight!r}` overflows float64 on a text of {longest:,} tokens "
                         f"({longest}**{weight!r} > 1.8e308): use a smaller weight") from None


def _rouge_w(target: Tensor, target_len: Tensor, pred: Tensor, pred_len: Tensor, weight: float) -> Tensor:
    wlcs = weighted_lcs(target, target_len, pred, pred_len, weight)
    empty = (target_len == 0) | (pred_len == 0)
    recall = (wlcs / target_len.clamp_min(1).double() ** weight) ** (1.0 / weight)
    precision = (wlcs / pred_len.clamp_min(1).double() ** weight) ** (1.0 / weight)
    recall, precision = torch.where(empty, 0.0, recall), torch.where(empty, 0.0, precision)
    return torch.stack([precision, recall, _f_measure(precision, recall)], 1)


def _summary_layout(
    line_lengths: np.ndarray, lines_per_text: np.ndarray, n_samples: int, pair_sample: np.ndarray
) -> dict[str, Any]:
    """ROUGE-Lsum's line layout, on the host: the non-empty lines (empty ones take no part) and every (target line,
    prediction line) combination of each pair.

    Returns:
        host arrays ``pred_line_len`` / ``target_line_len`` (tokens of the non-empty lines, predictions' then the
        references'), ``target_line_pair`` (the pair of each reference line), ``combo_target`` / ``combo_pred``
        (line indices of each combination) and their lengths ``combo_target_len`` / ``combo_pred_len``; ints
        ``pred_width`` / ``target_width`` (the longest line of each side).
    """
    line_lengths = np.asarray(line_lengths, dtype=np.int64)
    text_of_line = np.repeat(np.arange(lines_per_text.size, dtype=np.int64), lines_per_text)
    keep = line_lengths > 0
    kept = np.bincount(text_of_line[keep], minlength=lines_per_text.size).astype(np.int64)
    sent_len = line_lengths[keep]
    pred_n, target_n = kept[:n_samples], kept[n_samples:]
    n_pred_lines = int(pred_n.sum())
    pred_line_len, target_line_len = sent_len[:n_pred_lines], sent_len[n_pred_lines:]
    pred_starts, target_starts = np.cumsum(pred_n) - pred_n, np.cumsum(target_n) - target_n
    # every (target line, prediction line) combination of each pair, pair-major, then target line, then pred line
    pair_pred_n = pred_n[pair_sample]
    per_pair = target_n * pair_pred_n
    combo_pair = np.repeat(np.arange(per_pair.size, dtype=np.int64), per_pair)
    local = np.arange(combo_pair.size, dtype=np.int64) - (np.cumsum(per_pair) - per_pair)[combo_pair]
    width = np.maximum(pair_pred_n[combo_pair], 1)
    combo_target = target_starts[combo_pair] + local // width
    combo_pred = pred_starts[pair_sample[combo_pair]] + local % width
    return {
        "pred_line_len": pred_line_len, "target_line_len": target_line_len,
        "target_line_pair": np.repeat(np.arange(target_n.size, dtype=np.int64), target_n),
        "combo_target": combo_target, "combo_pred": combo_pred,
        "combo_target_len": target_line_len[combo_target], "combo_pred_len": pred_line_len[combo_pred],
        "pred_width": int(pred_line_len.max(initial=0)), "target_width": int(target_line_len.max(initial=0)),
    }


def _summary_lcs_hits(
    pred_flat: Tensor,
    target_flat: Tensor,
    pred_len: Tensor,
    pair_sample: Tensor,
    pair_pred_tokens: int,
    vocab: int,
    layout: dict[str, Any],
    on_device: dict[str, Tensor],
) -> Tensor:
    """ROUGE-Lsum hits of every pair: ``Σ_t min(#t in the union LCS of the target lines, #t in the prediction)``.

    The union LCS of a target line is the union, over prediction lines, of the positions rouge-score's LCS
    read-out picks; rouge-score's sequential double-count guard equals this clipped count.

    Args:
        pred_flat: ``LongTensor[Tp]`` prediction tokens (one entry per pair for ``target_flat``).
        pred_len: ``LongTensor[B]`` tokens per prediction.
        pair_sample: ``LongTensor[P]`` sample of each pair.
        pair_pred_tokens: ``Σ pred_len[pair_sample]`` (host).
        vocab: a bound of the token ids.
        layout: :func:`_summary_layout` (host); on_device: its arrays on the device.
    """
    device = pred_flat.device
    n_pairs = pair_sample.numel()
    target_line_len, pred_line_len = on_device["target_line_len"], on_device["pred_line_len"]
    combo_target, combo_pred = on_device["combo_target"], on_device["combo_pred"]
    combo_target_host, combo_pred_host = layout["combo_target_len"], layout["combo_pred_len"]
    n_target = target_flat.numel()
    target_line_start = torch.cumsum(target_line_len, 0) - target_line_len
    # how many combinations pick each target token (slot n_target: padding), in target_flat's order
    union = torch.zeros(n_target + 1, dtype=torch.long, device=device)
    buckets = size_buckets(combo_target_host, combo_pred_host, _PAD_SLACK_CELLS)
    if buckets is None:  # every combination padded to the longest lines
        target_padded = pad_segments(target_flat, target_line_len, -2, layout["target_width"])
        pred_padded = pad_segments(pred_flat, pred_line_len, -1, layout["pred_width"])
        blocks = [(combo_target, target_padded.index_select(0, combo_target), on_device["combo_target_len"],
                   pred_padded.index_select(0, combo_pred), on_device["combo_pred_len"],
                   (combo_target_host, combo_pred_host))]
    else:  # one long line among many short ones: combinations of similar line lengths padded together
        blocks = [(combo_target[combos],
                   *pad_rows(target_flat, target_line_len, combo_target[combos], combo_target_host[bucket], -2),
                   *pad_rows(pred_flat, pred_line_len, combo_pred[combos], combo_pred_host[bucket], -1),
                   (combo_target_host[bucket], combo_pred_host[bucket]))
                  for bucket, combos in bucket_indices(buckets, device)]
    for lines, target_padded, target_lengths, pred_padded, pred_lengths, host_lengths in blocks:
        picked = lcs_backtrack_mask(target_padded, target_lengths, pred_padded, pred_lengths, host_lengths=host_lengths)
        column = torch.arange(picked.shape[1], device=device)
        token = torch.where(column < target_lengths[:, None], target_line_start[lines][:, None] + column, n_target)
        union.index_add_(0, token.reshape(-1), picked.reshape(-1).long())
    # the union flag of every target token; tokens outside the union get the id `vocab`, which no prediction token has
    token_line = segment_ids(target_line_len, n_target)
    union_ids = torch.where(union[:n_target] > 0, target_flat, vocab)
    union_pair = on_device["target_line_pair"].index_select(0, token_line)
    pred_ids, pred_pair = expand_segments(pred_flat, pred_len, pair_sample, pair_pred_tokens)
    return multiset_intersection_size(union_ids, union_pair, pred_ids, pred_pair, n_pairs, id_bound=vocab + 1)


def _rouge_compute(reduced: Tensor, rouge_keys: Sequence[str]) -> dict[str, Tensor]:
    """Reduced scores ``DoubleTensor[..., K, 3]`` (``[K, 3]`` mean or sum, ``[N, K, 3]`` per sample) → one entry per
    result name, ``DoubleTensor[...]`` each."""
    flat = reduced.reshape(*reduced.shape[:-2], len(rouge_keys) * len(_STATS))
    return {name: flat[..., i] for i, name in enumerate(result_names(rouge_keys))}


# ---------------------------------------------------------------------------------------------------- public API
@gc_paused
@single_threaded
def rouge_score(
    preds: str | Sequence[str],
    target: str | Sequence[str | Sequence[str]],
    *,
    mode: str = "rouge-score",
    rouge_keys: Optional[str | Sequence[str]] = None,
    use_stemmer: bool = False,
    tokenize: Optional[str] = None,
    rouge_w_weight: float = 1.2,
    reduction: str = "mean",
    device: Optional[torch.device | str] = None,
) -> dict[str, Tensor]:
    """ROUGE scores of predictions against one or several references (docs/metrics/ngram.md).

    Args:
        preds: ``B`` predicted texts.
        target: ``B`` references, each a string or a list of strings (the best-F reference counts, per key).
        mode: ``"rouge-score"`` (google-research rouge-score; best-F reference per key) or ``"coco"``
            (pycocoevalcap ``Rouge``: best precision and best recall over the references, F with β = 1.2).
        rouge_keys: any of ``"rouge1"``…``"rouge9"``, ``"rougeL"``, ``"rougeLsum"`` (lines split on ``"\\n"``),
            ``"rougeW"``; default ``("rouge1", "rouge2", "rougeL", "rougeLsum")`` (``mode="coco"``: ``("rougeL",)``,
            the only key it has).
        use_stemmer: Porter-stem ASCII tokens longer than 3 characters (rouge-score's ``use_stemmer``).
        tokenize: ``"rouge-score"`` (default; ASCII ``[a-z0-9]`` tokens, exactly rouge-score) or ``"unicode"``
            (letters of every script; CJK characters one by one), see :class:`gpumetrics.text.tokenize.RougeTokenizer`;
            ``mode="coco"``: ``"ptb"`` (default, pycocoevalcap's PTB tokenizer first) or ``"none"`` (split on
            ``" "`` as given).
        rouge_w_weight: exponent of ROUGE-W's weighting ``f(k) = k**w``.
        reduction: ``"mean"`` (average over samples → scalars), ``"sum"`` (sum over samples) or ``"none"``
            (``DoubleTensor[B]`` per key).
        device: where counting runs (default CPU).

    Returns:
        ``dict`` ``{key}_precision``, ``{key}_recall``, ``{key}_fmeasure`` → ``DoubleTensor[]`` (or ``[B]``).
        Empty predictions or references score 0.

    Raises:
        TypeError: ``preds``/``target`` are not strings / lists of strings, ``use_stemmer`` not a bool.
        ValueError: length mismatch, a sample without reference, unknown key / ``tokenize`` / reduction.

    Example:
        >>> scores = rouge_score(["The cat and the dog."], ["The cat is on the mat."], rouge_keys=("rouge1", "rougeL"))
        >>> {k: round(v.item(), 4) for k, v in scores.items()}  # doctest: +NORMALIZE_WHITESPACE
        {'rouge1_precision': 0.6, 'rouge1_recall': 0.5, 'rouge1_fmeasure': 0.5455,
         'rougeL_precision': 0.6, 'rougeL_recall': 0.5, 'rougeL_fmeasure': 0.5455}
        >>> coco = rouge_score(["A cat on the mat."], [["The cat is on the mat.", "a cat"]], mode="coco")
        >>> {k: round(v.item(), 4) for k, v in coco.items()}  # P from the first reference, R from "a cat"
        {'rougeL_precision': 0.8, 'rougeL_recall': 1.0, 'rougeL_fmeasure': 0.9071}
    """
    keys, tokens = _check_options(rouge_keys, tokenize, use_stemmer, rouge_w_weight, reduction, mode)
    device = check_device(device, "device")
    scores = _rouge_update(preds, target, keys, tokens, float(rouge_w_weight), device)
    return _rouge_compute(reduce_scores(scores, reduction), keys)


class ROUGEScore(PerSampleScore):
    """ROUGE accumulated over batches; see :func:`rouge_score`.

    States (:class:`~gpumetrics.core.PerSampleScore` with ``score_shape=(K, 3)``): ``score_sum``, the float64 sum
    over samples of (precision, recall, F) per key, and the sample ``count`` (DDP: one all-reduce each); with
    ``reduction="none"`` also the per-sample ``scores`` (gathered in rank order). Every key is reduced the same way.

    Host syncs: 0 per update (both modes, every key), independent of the batch: every size comes from the host
    tokenizer's output, which goes to the device in one copy.

    Args:
        mode: ``"rouge-score"`` or ``"coco"`` (pycocoevalcap ``Rouge``), as in :func:`rouge_score`.
        rouge_keys: ROUGE keys, as in :func:`rouge_score`.
        use_stemmer: Porter stemming of ASCII tokens longer than 3 characters.
        tokenize: ``"rouge-score"`` or ``"unicode"`` (``mode="coco"``: ``"ptb"`` or ``"none"``).
        rouge_w_weight: ROUGE-W exponent.
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.
        kwargs: the ``Metric`` base options (torchmetrics' names: ``sync_on_compute``, ``dist_sync_fn`` …).

    Example:
        >>> metric = ROUGEScore(rouge_keys=("rouge2",))
        >>> metric.update(["The cat and the dog."], [["The cat is on the mat.", "a dog"]])
        >>> metric.update([""], ["nothing matches"])
        >>> {k: round(v.item(), 4) for k, v in metric.compute().items()}
        {'rouge2_precision': 0.125, 'rouge2_recall': 0.1, 'rouge2_fmeasure': 0.1111}
        >>> metric.signature().rsplit("|", 1)[0]
        'rouge|keys:rouge2|tokenizer:rouge-score|stemmer:no'
    """

    higher_is_better = True
    is_differentiable = False
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0
    signature_name = "rouge"
    kernel_threads = 1

    def __init__(
        self,
        *,
        mode: str = "rouge-score",
        rouge_keys: Optional[str | Sequence[str]] = None,
        use_stemmer: bool = False,
        tokenize: Optional[str] = None,
        rouge_w_weight: float = 1.2,
        reduction: str = "mean",
        **kwargs: Any,
    ) -> None:
        self.rouge_keys, self.tokenizer = _check_options(
            rouge_keys, tokenize, use_stemmer, rouge_w_weight, reduction, mode
        )
        self.mode = mode
        super().__init__(reduction=reduction, score_shape=(len(self.rouge_keys), len(_STATS)), **kwargs)
        self.rouge_w_weight = float(rouge_w_weight)

    @property
    def ptb_reads_next_sample(self) -> bool:
        return isinstance(self.tokenizer, COCOWords) and self.tokenizer.ptb

    def update(self, preds: str | Sequence[str], target: str | Sequence[str | Sequence[str]]) -> None:
        """Add a batch: ``preds`` — ``B`` strings; ``target`` — ``B`` strings or lists of strings."""
        scores = _rouge_update(preds, target, self.rouge_keys, self.tokenizer, self.rouge_w_weight, self.device)
        self._accumulate(scores)

    def compute(self) -> dict[str, Tensor]:
        """Mean or summed scores (``DoubleTensor[]`` each; 0 before any sample), or per-sample ``DoubleTensor[N]``
        with ``reduction="none"`` (``[1]`` for one sample, see :mod:`gpumetrics.core.per_sample`)."""
        return _rouge_compute(super().compute(), self.rouge_keys)

    def _signature_fields(self) -> dict[str, Any]:
        if self.mode == "coco":
            return {"mode": "coco", "keys": "rougeL", **self.tokenizer.signature(), "beta": COCO_BETA}
        fields: dict[str, Any] = {"keys": ",".join(self.rouge_keys), **self.tokenizer.signature()}
        if "rougeW" in self.rouge_keys:
            fields["w"] = self.rouge_w_weight
        return fields

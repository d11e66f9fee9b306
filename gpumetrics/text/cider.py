"""CIDEr-D (pycocoevalcap ``Cider``) and CIDEr (Vedantam et al. 2015) on tensors (docs/metrics/ngram.md).

Parity: ``mode="cider-d"`` with ``tokenize="none"`` equals ``pycocoevalcap.cider.Cider().compute_score(gts, res)``
(both the corpus score and the per-image scores) on pre-tokenised, whitespace-separated text, quirks included:

* the document frequency of an n-gram is the number of *samples* (images) whose references contain it, over the
  whole evaluated corpus; ``idf = log(N_samples) − log(max(1, df))`` (an n-gram absent from every reference gets
  ``log N``);
* hypothesis TF-IDF values are clipped by the reference ones (``min(v_hyp, v_ref) · v_ref``);
* the Gaussian length penalty ``exp(−δ²/(2σ²))``, σ = 6, uses pycocoevalcap's "length", which is the number of
  *bigrams* of a sentence (``max(0, words − 1)``), not its number of words;
* a cosine with a zero norm is left undivided (it is then 0); n-gram orders are averaged, references averaged and the
  result multiplied by 10.

``mode="cider"`` is the original formula of Vedantam, Zitnick & Parikh (CVPR 2015, eq. 1-4): for each order n the
cosine similarity of the TF-IDF vectors of the candidate and of each reference, averaged over the references, then
averaged over n = 1..4 (uniform weights); no clipping, no length penalty, no ×10. TF normalisation cancels in the
cosine; the IDF is the same as above (``max(1, df)`` keeps n-grams absent from every reference finite). A zero
vector has cosine 0.

Tokenisation (``tokenize="ptb"``) is Python (:class:`gpumetrics.text.tokenize.PTBTokenizer`, a port of the PTB
tokenizer pycocoevalcap runs in Java). Everything else is tensor work on the metric's device: tokens become int64
codes (the UTF-8 bytes themselves for tokens of ≤ 7 bytes, a 63-bit BLAKE2b hash for longer ones, with a second
independent 64-bit hash kept to *detect* a collision), n-grams get exact dense ids from the shared n-gram ladder
(:mod:`gpumetrics.kernels.ngrams`: ``rank(n-gram) = rank(rank((n−1)-gram) · V + next token)``, no hashing), and
term/document frequencies, norms and clipped dot products are ``unique`` / ``bincount`` / ``index_add`` /
``searchsorted`` over all sentences at once.

Document frequency is a corpus statistic that cannot be summed, so the module keeps the token codes of every
sentence (``cat`` states) and gathers them once at ``compute`` (every rank then scores the whole corpus). With
``reduction="none"`` under DDP the per-sample scores come in rank order.
"""

from __future__ import annotations

import functools
import hashlib
import math
from typing import Any, Callable, NamedTuple, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core import (
    REDUCTIONS, Metric, as_reference_lists, as_text_list, check_choice, check_device, check_same_length, gc_paused,
    keep_sample_dim, reduce_scores, single_threaded,
)
from gpumetrics.core.checks import check_int, check_real
from gpumetrics.core.chunks import map_row_chunks, rows_per_chunk
from gpumetrics.core.transfer import upload, upload_all
from gpumetrics.kernels.ngrams import TokenBatch, dense_rank, ngram_ids
from gpumetrics.kernels.ragged import offsets_in_segment, segment_ids, segment_starts
from gpumetrics.text.tokenize import PTBTokenizer, Tokenizer, get_tokenizer

MODES = ("cider-d", "cider")
TOKENIZERS = ("ptb", "none")
#: the module's ``cat`` states, in the order :func:`_cider_update` returns them (shared with ``COCOCaptionScores``)
CIDER_STATES = ("hyp_codes", "hyp_lengths", "ref_codes", "ref_lengths", "ref_counts", "long_codes", "long_checks")


def cat_state(value: Tensor | list[Tensor], device: torch.device, dtype: torch.dtype = torch.long) -> Tensor:
    """A ``cat`` state as one tensor: the appended tensors (or the synchronised tensor) concatenated along dim 0;
    an empty ``dtype`` tensor before any update.

    Example:
        >>> (cat_state([torch.tensor([1, 2]), torch.tensor([3])], torch.device("cpu")),
        ...  cat_state([], torch.device("cpu")))
        (tensor([1, 2, 3]), tensor([], dtype=torch.int64))
    """
    if isinstance(value, Tensor):
        return value.to(dtype)
    if not value:
        return torch.zeros(0, dtype=dtype, device=device)
    return torch.cat([v.reshape(-1, *v.shape[1:]) if v.dim() else v.reshape(1) for v in value]).to(dtype)


# ---------------------------------------------------------------------------------------------------- options
def _check_options(mode: Any, tokenize: Any, reduction: Any, n_gram: Any, sigma: Any) -> Tokenizer:
    """Check the options; return the tokenizer (``"none"``: whitespace split, sacrebleu's ``none``)."""
    check_choice(mode, "mode", MODES)
    check_choice(tokenize, "tokenize", TOKENIZERS)
    check_choice(reduction, "reduction", REDUCTIONS)
    check_int(n_gram, "n_gram", at_least=1, at_most=16)
    check_real(sigma, "sigma", above=0)
    if not 0 < 2.0 * float(sigma) * float(sigma) < math.inf:  # 1e-200: 2σ² = 0, CIDEr-D NaN; 1e200: OverflowError
        raise ValueError(f"`sigma` must have a positive finite 2·sigma² in float64 (about 1e-154 to 1e154), "
                         f"got {sigma!r}")
    return get_tokenizer(tokenize)


# ---------------------------------------------------------------------------------------------- token codes
_SHORT_BYTES = 7  # tokens of ≤ 7 UTF-8 bytes are packed exactly: bytes in bits 0..55, length in bits 56..58


@functools.lru_cache(maxsize=1 << 20)
def _token_code(token: str) -> tuple[int, int]:
    """``(code, check)`` of one token: exact packing (check 0) or two independent 64-bit BLAKE2b hashes.

    Packed codes are ≥ 2**56, hashed codes negative, so the two families never meet.
    """
    data = token.encode("utf-8", "surrogatepass")
    if len(data) <= _SHORT_BYTES:
        return int.from_bytes(data, "little") | (len(data) << 56), 0
    digest = hashlib.blake2b(data, digest_size=16, person=b"gpumetrics-cider").digest()
    return -1 - (int.from_bytes(digest[:8], "little") >> 1), int.from_bytes(digest[8:], "little", signed=True)


def _encode(batch: TokenBatch) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Token codes of a tokenizer's host batch of S sentences, on the host (the caller uploads them in one copy).

    Returns:
        ``codes: int64[T]`` (all tokens, sentence after sentence), ``lengths: int64[S]``, ``long_codes: int64[K]``
        and ``long_checks: int64[K]`` of the distinct hashed tokens.
    """
    pairs = [_token_code(token) for token in batch.vocabulary]
    vocab_codes = np.array([code for code, _ in pairs], dtype=np.int64)
    codes = vocab_codes[np.asarray(batch.ids, dtype=np.int64)]
    hashed = [pair for pair in pairs if pair[0] < 0]
    long_codes = np.array([c for c, _ in hashed], dtype=np.int64)
    long_checks = np.array([k for _, k in hashed], dtype=np.int64)
    return codes, np.asarray(batch.lengths, dtype=np.int64), long_codes, long_checks


def _check_no_collision(long_codes: Tensor, long_checks: Tensor) -> None:
    """Raise if two different long tokens share a 63-bit code (their second hashes differ)."""
    if long_codes.numel() < 2:
        return
    # sorted by (code, check): a code with two different checks shows as neighbours (one read of the answer)
    perm = torch.argsort(long_checks, stable=True)
    perm = perm.index_select(0, torch.argsort(long_codes.index_select(0, perm), stable=True))
    codes, checks = long_codes.index_select(0, perm), long_checks.index_select(0, perm)
    if bool(((codes[1:] == codes[:-1]) & (checks[1:] != checks[:-1])).any()):
        raise RuntimeError(
            "CIDEr: two different tokens longer than 7 bytes share a 63-bit hash code; scores would be wrong. "
            "Please report this (astronomically unlikely) event."
        )


# -------------------------------------------------------------------------------------------- tensor kernels
def _bits(n: int) -> int:
    """Bits needed to hold values in ``[0, n)``."""
    return max(int(n - 1).bit_length(), 1)


class _Entries(NamedTuple):
    """The sorted (sample, n-gram, slot) entries of a corpus (see :func:`_count_entries`); ``E`` entries."""

    tf: Tensor  # LongTensor[E] occurrences of the entry's n-gram in its sentence
    slot: Tensor  # LongTensor[E] 0 = the candidate, j = its j-th reference
    gram: Tensor  # LongTensor[E] corpus n-gram id
    sample: Tensor  # LongTensor[E]
    is_ref: Tensor  # BoolTensor[E]
    closes: Tensor  # BoolTensor[E] last entry of its (sample, n-gram) run
    sentence: Tensor  # LongTensor[E] candidates 0..B-1, then references B..B+R-1
    order: Tensor  # LongTensor[E] n-gram order - 1
    n_grams: int
    lengths: Tensor  # LongTensor[B + R] words per sentence
    sample_of_ref: Tensor  # LongTensor[R]


def _count_entries(hyp_codes: Tensor, hyp_lengths: Tensor, ref_codes: Tensor, ref_lengths: Tensor, ref_counts: Tensor,
                   n_gram: int) -> _Entries:
    """One sort counts every n-gram: each occurrence gets the key ``(sample, n-gram, slot)`` packed into int64; runs
    of equal keys are term frequencies, and each ``(sample, n-gram)`` run has the candidate's entry first."""
    device = hyp_lengths.device
    n_samples, n_refs = hyp_lengths.numel(), ref_lengths.numel()
    lengths = torch.cat([hyp_lengths, ref_lengths])
    codes = torch.cat([hyp_codes, ref_codes])
    sample_of_ref = segment_ids(ref_counts, n_refs)
    first_ref = segment_starts(ref_counts)
    slot_of_ref = offsets_in_segment(ref_counts, sample_of_ref) + 1
    sample_of_sentence = torch.cat([torch.arange(n_samples, device=device), sample_of_ref])
    slot_of_sentence = torch.cat([torch.zeros(n_samples, dtype=torch.long, device=device), slot_of_ref])
    # one read of the sizes the layout needs: the largest reference set and the n-grams of every order
    counts = (lengths.unsqueeze(1) - torch.arange(n_gram, device=device)).clamp_min(0).sum(0)
    max_refs, *counts = torch.cat([ref_counts.max().reshape(1), counts]).tolist()
    # rank-independent token codes → dense ids of this (gathered) corpus, < T
    ids = dense_rank(codes)
    batch = TokenBatch(ids, lengths, max(ids.numel(), 1))
    occ_sentence, occ_gram, orders, n_grams = [], [], [], 0
    for n in range(1, n_gram + 1):  # ids of order n occupy [Σ_{m<n} bound_m, Σ_{m≤n} bound_m)
        gram, bound = ngram_ids(batch, n, counts[n - 1])
        occ_sentence.append(segment_ids((lengths - (n - 1)).clamp_min(0), counts[n - 1]))
        occ_gram.append(gram + n_grams)
        orders.append(torch.full((bound,), n - 1, dtype=torch.long, device=device))
        n_grams += bound
    occ_sentence, occ_gram, order_of_gram = torch.cat(occ_sentence), torch.cat(occ_gram), torch.cat(orders)
    slot_bits, gram_bits = _bits(max_refs + 1), _bits(max(n_grams, 1))
    if _bits(n_samples) + gram_bits + slot_bits > 63:
        raise RuntimeError(f"CIDEr: corpus too large to pack (samples={n_samples}, n-gram ids={n_grams})")
    prefix = (sample_of_sentence << (gram_bits + slot_bits)) | slot_of_sentence
    key = torch.sort(prefix.index_select(0, occ_sentence) | (occ_gram << slot_bits)).values
    # runs of equal keys are the entries: entry e sits in slot e, the slots past the last entry are dead (key -1,
    # tf 0, slot 0, n-gram 0, sample 0) — every size is the number of occurrences, never read back
    size = key.numel()
    opens = torch.ones(size, dtype=torch.bool, device=device)
    opens[1:] = key[1:] != key[:-1]
    run = torch.cumsum(opens, 0) - 1
    tf = torch.zeros(size, dtype=torch.long, device=device).index_add_(0, run, torch.ones_like(run))
    entry = torch.full((size,), -1, dtype=torch.long, device=device).scatter_(0, run, key)
    live = entry >= 0
    slot = torch.where(live, entry & ((1 << slot_bits) - 1), 0)
    group = entry >> slot_bits  # sample · 2^gram_bits + n-gram; -1 when dead
    gram = torch.where(live, group & ((1 << gram_bits) - 1), 0)
    sample = torch.where(live, group >> gram_bits, 0)
    is_ref = slot > 0
    closes = torch.ones_like(is_ref)
    closes[:-1] = group[1:] != group[:-1]
    sentence = torch.where(is_ref, n_samples + first_ref.index_select(0, sample) + slot - 1, sample)
    return _Entries(tf, slot, gram, sample, is_ref, closes, sentence, order_of_gram.index_select(0, gram), n_grams,
                    lengths, sample_of_ref)


def _cider_compute(
    hyp_codes: Tensor,
    hyp_lengths: Tensor,
    ref_codes: Tensor,
    ref_lengths: Tensor,
    ref_counts: Tensor,
    mode: str = "cider-d",
    n_gram: int = 4,
    sigma: float = 6.0,
    reduction: str = "mean",
) -> Tensor:
    """Scores from the token codes of a whole corpus (``B`` samples, ``R`` references in sample order).

    One sort does the counting: every n-gram occurrence gets the key ``(sample, n-gram, slot)`` (slot 0 = the
    candidate, j = its j-th reference), packed into int64. After sorting, runs of equal keys are term frequencies,
    runs of equal ``(sample, n-gram)`` put the candidate's entry first, right before the references' entries it is
    compared with, and distinct ``(sample, n-gram)`` runs holding a reference give the document frequency.
    n-gram ids are sort ranks (:func:`~gpumetrics.kernels.ngrams.ngram_ids`) and entries fill the first slots of
    arrays as long as the occurrences (the rest dead: tf 0), so no size is read back but the corpus sizes (one
    read) and the collision check (one).

    Args:
        hyp_codes: ``LongTensor[T_h]``, hyp_lengths: ``LongTensor[B]``.
        ref_codes: ``LongTensor[T_r]``, ref_lengths: ``LongTensor[R]``, ref_counts: ``LongTensor[B]`` (sum ``R``).

    Returns:
        ``DoubleTensor[]`` (mean / sum) or ``DoubleTensor[B]`` (none).
    """
    device = hyp_lengths.device
    n_samples, n_refs = hyp_lengths.numel(), ref_lengths.numel()
    per_sample = torch.zeros(n_samples, dtype=torch.float64, device=device)
    if n_samples and hyp_codes.numel() + ref_codes.numel():
        counted = _count_entries(hyp_codes, hyp_lengths, ref_codes, ref_lengths, ref_counts, n_gram)
        tf, slot, gram, is_ref, closes = counted.tf, counted.slot, counted.gram, counted.is_ref, counted.closes
        sentence, order, lengths = counted.sentence, counted.order, counted.lengths
        sample_of_ref = counted.sample_of_ref

        # document frequency: (sample, n-gram) runs that hold a reference entry, i.e. whose last entry is one
        df = torch.zeros(counted.n_grams, dtype=torch.float64, device=device).index_add_(
            0, gram, (closes & is_ref).to(torch.float64))
        idf = math.log(float(n_samples)) - torch.log(torch.clamp(df, min=1.0))
        value = tf.to(torch.float64) * idf.index_select(0, gram)

        norm = torch.zeros(lengths.numel() * n_gram, dtype=torch.float64, device=device)
        norm = norm.index_add_(0, sentence * n_gram + order, value * value).sqrt_().view(-1, n_gram)

        # the candidate's entry, when present, opens its (sample, n-gram) run
        position = torch.arange(tf.numel(), device=device)
        opens = torch.ones_like(is_ref)
        opens[1:] = closes[:-1]
        run_start = torch.cummax(torch.where(opens, position, 0), dim=0).values
        hyp_value = torch.where(slot.index_select(0, run_start) == 0, value.index_select(0, run_start), 0.0)
        product = (torch.minimum(hyp_value, value) if mode == "cider-d" else hyp_value) * value
        product = torch.where(is_ref, product, 0.0)  # candidate entries add 0 (to slot 0), no masked copies
        ref_slot = torch.where(is_ref, (sentence - n_samples) * n_gram + order, 0)
        dot = torch.zeros(n_refs * n_gram, dtype=torch.float64, device=device)
        dot = dot.index_add_(0, ref_slot, product).view(-1, n_gram)

        hyp_norm, ref_norm = norm[:n_samples][sample_of_ref], norm[n_samples:]
        nonzero = (hyp_norm != 0) & (ref_norm != 0)
        fallback = torch.zeros_like(dot) if mode == "cider" else dot  # pycocoevalcap leaves it undivided (= 0)
        cosine = torch.where(nonzero, dot / torch.where(nonzero, hyp_norm * ref_norm, 1.0), fallback)
        if mode == "cider-d":
            # pycocoevalcap's "length" counts bigrams (the n-gram index 1 of its loop), so max(0, words − 1)
            bigrams = (lengths - 1).clamp_(min=0) if n_gram >= 2 else torch.zeros_like(lengths)
            delta = (bigrams[:n_samples][sample_of_ref] - bigrams[n_samples:]).to(torch.float64)
            cosine = cosine * torch.exp(-(delta * delta) / (2.0 * float(sigma) ** 2)).unsqueeze(1)
        summed = torch.zeros(n_samples, n_gram, dtype=torch.float64, device=device).index_add_(0, sample_of_ref, cosine)
        per_sample = summed.mean(dim=1) / ref_counts.to(torch.float64)
        if mode == "cider-d":
            per_sample = per_sample * 10.0
    return reduce_scores(per_sample, reduction)


def corpus_cider_value_function(
    preds: str | Sequence[str],
    target: str | Sequence[str | Sequence[str]],
    tokenize: str = "ptb",
    n_gram: int = 4,
    sigma: float = 6.0,
    device: torch.device | str | None = None,
) -> tuple[Callable[[Tensor], Tensor], int]:
    """CIDEr-D (pycocoevalcap) of any subsets of a corpus, as a batched value function (Shapley attribution).

    pycocoevalcap computes document frequencies over whatever corpus it is given, so the CIDEr-D of a subset S uses
    the IDF of S's references. n-grams are counted once (the sort of :func:`_cider_compute`); for
    ``coalitions: BoolTensor[C, B]`` the document frequencies are one scatter over the (sample, n-gram) presence
    list and every TF-IDF norm, clipped dot product and length penalty is a ``[C, n-gram entries]`` operation, on
    chunks of coalitions of at most ``core.chunks.WORKING_BYTES`` (256 MiB) of working memory. ``value_fn`` returns
    ``DoubleTensor[C]``, the mean CIDEr-D over each coalition's samples (0 for the empty one).

    Args:
        preds, target: as in :func:`cider_score`.
        tokenize, n_gram, sigma, device: as in :func:`cider_score` (``mode="cider-d"``).

    Returns:
        ``(value_fn, B)``.

    Example:
        >>> preds, target = ["a cat sits", "a dog runs"], [["a cat sits down"], ["the dog runs"]]
        >>> value_fn, n = corpus_cider_value_function(preds, target, tokenize="none")
        >>> values = value_fn(torch.tensor([[True, True], [True, False]]))
        >>> round(values[0].item(), 6) == round(cider_score(preds, target, tokenize="none").item(), 6), values[1].item()
        (True, 0.0)
    """
    tokenizer = _check_options("cider-d", tokenize, "mean", n_gram, sigma)
    device = check_device(device, "device")
    hyp_codes, hyp_lengths, ref_codes, ref_lengths, ref_counts, _, _ = _cider_update(preds, target, tokenizer, device)
    n_samples, n_refs = hyp_lengths.numel(), ref_lengths.numel()
    counted = _count_entries(hyp_codes, hyp_lengths, ref_codes, ref_lengths, ref_counts, n_gram)
    tf, slot, gram, sample, is_ref = counted.tf, counted.slot, counted.gram, counted.sample, counted.is_ref
    closes, sentence, n_grams = counted.closes, counted.sentence, counted.n_grams
    lengths, sample_of_ref = counted.lengths, counted.sample_of_ref
    presence = closes & is_ref  # (sample, n-gram) holds a reference: counts once in df
    present_sample, present_gram = sample[presence], gram[presence]
    norm_slot = sentence * n_gram + counted.order
    position = torch.arange(tf.numel(), device=device)
    opens = torch.ones_like(is_ref)
    opens[1:] = closes[:-1]
    run_start = torch.cummax(torch.where(opens, position, 0), dim=0).values
    has_hyp = slot[run_start] == 0
    ref_slot = torch.where(is_ref, (sentence - n_samples) * n_gram + counted.order, 0)
    tf = tf.double()
    bigrams = (lengths - 1).clamp(min=0) if n_gram >= 2 else torch.zeros_like(lengths)
    delta = (bigrams[:n_samples][sample_of_ref] - bigrams[n_samples:]).double()
    penalty = torch.exp(-(delta * delta) / (2.0 * float(sigma) ** 2))

    # float64 cells one coalition takes (df and idf per n-gram, ~6 per entry, norms, dots and cosines per sentence)
    per_coalition = 8 * (2 * max(n_grams, 1) + 6 * tf.numel() + (lengths.numel() + 6 * n_refs + n_samples) * n_gram
                         + 2 * n_samples)
    chunk = rows_per_chunk(per_coalition)

    def value_fn(coalitions: Tensor) -> Tensor:
        return map_row_chunks(coalition_values, coalitions, chunk)

    def coalition_values(coalitions: Tensor) -> Tensor:
        c = coalitions.shape[0]
        members = upload(coalitions, device, torch.float64)  # coalitions drawn on the host go up without a wait
        size = members.sum(1)
        df = torch.zeros(c, max(n_grams, 1), dtype=torch.float64, device=device)
        df.index_add_(1, present_gram, members[:, present_sample])
        idf = torch.log(size.clamp_min(1))[:, None] - torch.log(df.clamp_min(1.0))  # [C, G]
        value = tf * idf[:, gram]  # [C, E]
        norm = torch.zeros(c, lengths.numel() * n_gram, dtype=torch.float64, device=device)
        norm = norm.index_add_(1, norm_slot, value * value).sqrt_().view(c, -1, n_gram)
        hyp_value = torch.where(has_hyp, value[:, run_start], 0.0)
        product = torch.where(is_ref, torch.minimum(hyp_value, value) * value, 0.0)
        dot = torch.zeros(c, n_refs * n_gram, dtype=torch.float64, device=device)
        dot = dot.index_add_(1, ref_slot, product).view(c, -1, n_gram)
        hyp_norm, ref_norm = norm[:, :n_samples][:, sample_of_ref], norm[:, n_samples:]
        nonzero = (hyp_norm != 0) & (ref_norm != 0)
        cosine = torch.where(nonzero, dot / torch.where(nonzero, hyp_norm * ref_norm, 1.0), dot)
        cosine = cosine * penalty[None, :, None]
        summed = torch.zeros(c, n_samples, n_gram, dtype=torch.float64, device=device).index_add_(1, sample_of_ref,
                                                                                                   cosine)
        per_sample = summed.mean(2) / ref_counts.double() * 10.0  # [C, B], each within its coalition's corpus
        return (per_sample * members).sum(1) / size.clamp_min(1)

    return value_fn, n_samples


# ------------------------------------------------------------------------------------------------ update
def _cider_update(
    preds: Any, target: Any, tokenizer: Tokenizer, device: torch.device
) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor, Tensor, Tensor]:
    """Check and tokenise a batch; return its token codes.

    Returns:
        ``hyp_codes, hyp_lengths, ref_codes, ref_lengths, ref_counts, long_codes, long_checks`` (see
        :func:`_cider_compute`; the last two list the hashed tokens, for collision detection).
    """
    pred_list = as_text_list(preds, "preds")
    target_lists = as_reference_lists(target, "target")
    check_same_length(pred_list, "preds", target_lists, "target")
    references = [ref for refs in target_lists for ref in refs]
    # predictions and references are two tokenizer calls, as pycocoevalcap makes two PTBTokenizer calls
    hyp_codes, hyp_lengths, hyp_long, hyp_checks = _encode(tokenizer.encode(pred_list))
    ref_codes, ref_lengths, ref_long, ref_checks = _encode(tokenizer.encode(references))
    ref_counts = np.fromiter(map(len, target_lists), dtype=np.int64, count=len(target_lists))
    host = (hyp_codes, hyp_lengths, ref_codes, ref_lengths, ref_counts, np.concatenate([hyp_long, ref_long]),
            np.concatenate([hyp_checks, ref_checks]))
    return tuple(upload_all(list(host), device))  # one host-to-device copy


def cider_token_codes(
    words: TokenBatch, ref_counts: Tensor, device: torch.device | str | None = None
) -> tuple[Tensor, ...]:
    """The token codes of a batch that :class:`CIDErScore` keeps (its ``CIDER_STATES``, in order), for callers that
    tokenise and gather a corpus themselves (the COCO caption table); :func:`cider_from_codes` scores them.

    Args:
        words: the whitespace-split words of ``B`` captions, then of their references (sample after sample), on the
            host.
        ref_counts: ``int64[B]`` references of each sample: host data (goes to ``device`` in the same copy as the
            codes) or a tensor.
        device: where the codes go.

    Example:
        >>> from gpumetrics.text.tokenize.base import encode_split
        >>> codes = cider_token_codes(encode_split(["a dog", "a dog", "dogs"]), torch.tensor([2]))
        >>> [c.tolist() for c in codes[1:2] + codes[3:5]]  # hyp_lengths, ref_lengths, ref_counts
        [[2], [2, 1], [2]]
    """
    device = check_device(device, "device")
    codes, lengths, long_codes, long_checks = _encode(words)
    if isinstance(ref_counts, Tensor) and ref_counts.device.type != "cpu":  # already on a device: stays there
        counts, on_device = np.zeros(0, dtype=np.int64), upload(ref_counts, device, torch.long)
    else:
        counts, on_device = np.asarray(ref_counts, dtype=np.int64).reshape(-1), None
    samples = counts.size if on_device is None else on_device.numel()
    hyp_tokens = int(lengths[:samples].sum())
    out = upload_all([codes[:hyp_tokens], lengths[:samples], codes[hyp_tokens:], lengths[samples:], counts,
                      long_codes, long_checks], device)  # one host-to-device copy
    if on_device is not None:
        out[4] = on_device
    return tuple(out)


def cider_from_codes(
    codes: Sequence[Tensor], *, mode: str = "cider-d", n_gram: int = 4, sigma: float = 6.0, reduction: str = "mean"
) -> Tensor:
    """Scores of a corpus from its token codes (``CIDER_STATES`` order), after the collision check.

    Example:
        >>> from gpumetrics.text.tokenize.base import encode_split
        >>> codes = cider_token_codes(encode_split(["a dog", "a dog", "dogs"]), torch.tensor([2]))
        >>> cider_from_codes(codes, reduction="none")
        tensor([0.], dtype=torch.float64)
    """
    _check_options(mode, "none", reduction, n_gram, sigma)
    _check_no_collision(codes[5], codes[6])
    return _cider_compute(*codes[:5], mode, n_gram, float(sigma), reduction)


# ------------------------------------------------------------------------------------------------ public API
@gc_paused
@single_threaded
def cider_score(
    preds: str | Sequence[str],
    target: str | Sequence[str | Sequence[str]],
    *,
    mode: str = "cider-d",
    tokenize: str = "ptb",
    n_gram: int = 4,
    sigma: float = 6.0,
    reduction: str = "mean",
    device: Optional[torch.device | str] = None,
) -> Tensor:
    """CIDEr-D (pycocoevalcap) or CIDEr (Vedantam et al. 2015) of captions against their references.

    The document frequency is taken over the references of the ``B`` samples given (as pycocoevalcap does for the
    images of one evaluation), so scores depend on the whole corpus, not on each sample alone.

    Args:
        preds: ``B`` candidate captions.
        target: ``B`` reference sets, each a string or a non-empty list of strings.
        mode: ``"cider-d"`` (pycocoevalcap ``Cider``: clipping, length penalty, ×10) or ``"cider"`` (the
            original formula, on a 0..1-ish scale).
        tokenize: ``"ptb"`` (pycocoevalcap's PTB tokenizer, lowercase, punctuation removed) or ``"none"``
            (the text is already tokenised: split on whitespace, as ``Cider.compute_score`` does).
        n_gram: highest n-gram order. Parity holds at 4: pycocoevalcap's ``Cider(n=...)`` always counts 1..4-grams
            (its ``cook_*`` helpers ignore ``n``), so other values there crash (n < 4) or dilute the mean (n > 4).
        sigma: standard deviation of the CIDEr-D length penalty.
        reduction: ``"mean"`` (corpus score, pycocoevalcap's first return value), ``"sum"`` or ``"none"``
            (``DoubleTensor[B]`` per-sample scores, pycocoevalcap's second return value).
        device: where counting runs (default CPU).

    Returns:
        ``DoubleTensor[]`` or ``DoubleTensor[B]``. An empty candidate scores 0; no samples give 0.

    Raises:
        TypeError: ``preds``/``target`` are not strings / lists of strings.
        ValueError: length mismatch, a sample without reference, an unknown option.
        RuntimeError: two different long tokens share a hash code (detected; never silently wrong).

    Example:
        >>> preds = ["a cat sits on the mat", "a dog runs in the park"]
        >>> target = [["a cat is sitting on the mat", "there is a cat on the mat"], ["a dog is running in a park"]]
        >>> round(cider_score(preds, target, tokenize="none").item(), 6)
        2.9891
        >>> [round(s, 6) for s in cider_score(preds, target, mode="cider", reduction="none").tolist()]
        [0.392832, 0.213349]
    """
    tokenizer = _check_options(mode, tokenize, reduction, n_gram, sigma)
    device = check_device(device, "device")
    hyp_codes, hyp_lengths, ref_codes, ref_lengths, ref_counts, long_codes, long_checks = _cider_update(
        preds, target, tokenizer, device
    )
    _check_no_collision(long_codes, long_checks)
    return _cider_compute(
        hyp_codes, hyp_lengths, ref_codes, ref_lengths, ref_counts, mode, n_gram, float(sigma), reduction
    )


class CIDErScore(Metric):
    """CIDEr-D (pycocoevalcap) or CIDEr (Vedantam et al. 2015), accumulated over batches; see :func:`cider_score`.

    States are the int64 token codes of every candidate and reference (``cat``), gathered once at ``compute``:
    document frequency is a corpus statistic, so the score of N ranks equals the single-process score.

    Host syncs: 0 per update (the token codes are host data, copied once), 2 per ``compute`` (the collision check of
    hashed long tokens, and one read of the corpus sizes: the largest reference set and the n-grams per order),
    independent of the corpus size.

    With ``tokenize="ptb"`` each ``update`` is tokenised as one pycocoevalcap call: the Java lexer lets a caption
    see the start of the next one (a final ``"… a."`` loses its period before ``"The …"``), which a module cannot
    know across batch boundaries; only captions ending in a one-letter word + period are concerned.

    Args:
        mode: ``"cider-d"`` or ``"cider"``.
        tokenize: ``"ptb"`` or ``"none"``.
        n_gram: highest n-gram order.
        sigma: CIDEr-D length-penalty standard deviation.
        reduction: ``"mean"``, ``"sum"`` or ``"none"``.
        kwargs: the ``Metric`` base options (torchmetrics' names: ``sync_on_compute``, ``dist_sync_fn`` …).

    Example:
        >>> metric = CIDErScore(tokenize="ptb")
        >>> metric.update(["A cat sits on the mat."], [["A cat is sitting on the mat.", "There is a cat on the mat."]])
        >>> metric.update(["A dog runs in the park!"], [["A dog is running in a park."]])
        >>> round(metric.compute().item(), 6)
        2.9891
        >>> metric.signature()[:45]
        'cider|mode:cider-d|tok:ptb|n:4|sigma:6.0|idf:'
    """

    signature_name = "cider"
    kernel_threads = 1
    higher_is_better = True

    def __init__(
        self,
        *,
        mode: str = "cider-d",
        tokenize: str = "ptb",
        n_gram: int = 4,
        sigma: float = 6.0,
        reduction: str = "mean",
        **kwargs: Any,
    ) -> None:
        if "variant" in kwargs:  # torchmetrics would not name the new option
            raise TypeError(f"{type(self).__name__} got an unexpected keyword argument 'variant': the option is now "
                            "`mode`")
        super().__init__(**kwargs)
        self.tokenizer = _check_options(mode, tokenize, reduction, n_gram, sigma)
        self.mode, self.reduction = mode, reduction
        self.n_gram, self.sigma = n_gram, float(sigma)
        for name in CIDER_STATES:
            self.add_state(name, default=[], dist_reduce_fx="cat")

    @property
    def ptb_reads_next_sample(self) -> bool:
        return isinstance(self.tokenizer, PTBTokenizer)

    def update(self, preds: str | Sequence[str], target: str | Sequence[str | Sequence[str]]) -> None:
        """Add ``B`` candidates and their reference sets (see :func:`cider_score`)."""
        values = _cider_update(preds, target, self.tokenizer, self.device)
        for name, value in zip(CIDER_STATES, values):
            getattr(self, name).append(value)

    def _state(self, name: str) -> Tensor:
        return cat_state(getattr(self, name), self.device)

    def compute(self) -> Tensor:
        """Corpus score (``DoubleTensor[]``) or per-sample scores (``DoubleTensor[B]``), as ``reduction`` says."""
        _check_no_collision(self._state("long_codes"), self._state("long_checks"))
        return _cider_compute(
            self._state("hyp_codes"),
            self._state("hyp_lengths"),
            self._state("ref_codes"),
            self._state("ref_lengths"),
            self._state("ref_counts"),
            self.mode,
            self.n_gram,
            self.sigma,
            self.reduction,
        )

    def _finish_compute(self, value: Any) -> Any:
        return keep_sample_dim(value, self.reduction)  # reduction="none" keeps [N] even for one sample

    def _signature_fields(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "tok": self.tokenizer.name,
            "n": self.n_gram,
            "sigma": self.sigma if self.mode == "cider-d" else None,
            "idf": "corpus",
        }

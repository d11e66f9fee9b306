"""Ranking metrics — P@k, R@k, Hit@k, MRR, AP / MAP, R-precision, DCG / NDCG — with trec_eval and ranx conventions.

All queries of a batch are scored at once: one padded ``[Q, D]`` ranking per batch (or flat torchmetrics-style
``(scores, relevance, query_ids)`` triples, grouped and padded on the device), one stable sort per batch (up to three
with ``doc_ids`` or a ``mask``), then cumulative sums along the document axis. No loop over queries, one host
synchronisation per batch (the input checks; two more to group flat inputs; one more for ranx's tie order on queries
of 16 or more documents, whose tied queries numba sorts on the CPU). Flat queries of very different lengths are padded
in groups of similar length (one long query among many short ones is not a ``[Q, longest]`` block), each extra group
checked in its own synchronisation.

Conventions (every one a named option; the defaults are trec_eval's):

* **Relevant** means ``relevance >= relevance_level`` (trec_eval's ``-l``, default 1; ranx counts the same for integer
  labels). NDCG gains are the graded labels themselves: every positive label counts as a gain, also one below
  ``relevance_level`` (trec_eval's rule; ranx drops labels below its level, which differs only for levels above 1).
  Negative labels (TREC's -1 / -2 judgments: judged, not relevant) are accepted with gain 0, as both tools score
  them.
* **Ties** (equal scores) — ``"trec_eval"``: by document id, *descending* (trec_eval compares docnos as strings; pass
  ``doc_ids`` that order as your docnos do — without them the column position is the id; trec_eval also stores each
  score as a C ``float``, so float64 scores are compared rounded to float32 — two doubles that round to the same
  float32, or both past 3.4e38, are tied); ``"ranx"``: ranx's own
  order for a ``ranx.Run`` built from a dict, a file or a DataFrame (documents in column / input order, as the run's
  dict holds them); ``"ranx_comparable"``: a ``Run`` passed through ``make_comparable`` (``evaluate(...,
  make_comparable=True)`` sorts the sorted run a second time, which moves tied documents again); ``"ranx_dict"``: a
  plain ``{query: {doc: score}}`` dict handed to ``ranx.evaluate`` (``np.argsort(scores)[::-1]``: short tied groups
  come out in reverse input order); ``"optimistic"`` / ``"pessimistic"``: relevant (higher graded) documents first /
  last; ``"average"``: the expected value over every order of the tied documents (sklearn ``ndcg_score`` and
  torchmetrics' NDCG; defined for the metrics linear in the ranking: DCG, NDCG, precision, recall, R-precision, hits).
  ranx sorts with numba's ``np.argsort``, numba's quicksort (an insertion sort for up to 15 documents, then
  median-of-three partitioning that reorders tied documents): a query of at most 15 documents, or without equal
  scores, is a stable sort here too; a query of 16 or more documents with equal scores is sorted on the CPU by
  numba's own ``np.argsort`` (compiled once per process; numba is installed wherever ranx is) or, without numba, by a
  Python port of the same algorithm — only those queries, and one extra host synchronisation per batch.
* **Cut-offs** — ``@k`` looks at the first ``k`` ranked documents; P@k divides by ``k`` even when fewer were retrieved
  (both tools); AP@k divides by the number of relevant documents, not by ``min(k, R)`` (trec_eval ``map_cut``, ranx).
  Without ``@k`` a metric uses the whole list; ``precision`` without ``k`` divides by the list length (ranx).
* **Ideal DCG** is computed from *all* judged documents of the query, cut at ``k``. A padded row may not contain every
  relevant document (the retriever missed some): pass ``qrels`` — the labels of all judged documents of each query —
  and recall, AP, R-precision and the ideal DCG use it, as trec_eval and ranx do with their qrels files.
* **Gain** — ``"linear"`` (rel; trec_eval ``ndcg``, ranx ``ndcg``, sklearn, torchmetrics) or ``"exponential"``
  (2^rel − 1; ranx ``ndcg_burges``, the Burges et al. formulation). The names ``ndcg_burges`` / ``dcg_burges`` always
  use the exponential gain.
* **Queries with no relevant document** — ``empty="zero"`` (every metric 0 for that query, counted in the mean: what
  trec_eval, ranx, sklearn and torchmetrics' default ``empty_target_action="neg"`` do), ``"one"``, ``"skip"`` (left
  out of the mean) or ``"error"``. A query whose run is empty but which has relevant documents (in ``qrels``) scores 0,
  as ranx's ``make_comparable`` and trec_eval's ``-c`` do.
"""

from __future__ import annotations

import math
import re
from typing import Any, Optional, Sequence, Union

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core import Metric, check_choice
from gpumetrics.core.checks import check_holds_data, check_real, describe_value, is_sequence
from gpumetrics.core.transfer import upload
from gpumetrics.kernels.ragged import offsets_in_segment, size_buckets

__all__ = ["RankingMetrics", "ranking_metrics", "TIES", "GAINS", "EMPTY", "METRIC_NAMES"]

TIES = ("trec_eval", "ranx", "ranx_comparable", "ranx_dict", "optimistic", "pessimistic", "average")
GAINS = ("linear", "exponential")
EMPTY = ("zero", "one", "skip", "error")
REDUCTIONS = ("mean", "none")

#: metric name (ranx spelling) → whether it takes ``@k``
METRIC_NAMES = {
    "precision": True, "recall": True, "f1": True, "hits": True, "hit_rate": True, "mrr": True, "map": True,
    "ndcg": True, "ndcg_burges": True, "dcg": True, "dcg_burges": True, "r_precision": False,
}
_ALIASES = {"p": "precision", "r": "recall", "hit": "hit_rate", "success": "hit_rate", "ap": "map",
            "rprec": "r_precision", "recip_rank": "mrr"}
_GAIN_METRICS = {"ndcg", "dcg", "ndcg_burges", "dcg_burges"}
_LINEAR = {"precision", "recall", "hits", "ndcg", "ndcg_burges", "dcg", "dcg_burges", "r_precision"}
_NAME = re.compile(r"^([a-z][a-z0-9_]*)(?:@(\d+))?$")


def _parse_metrics(metrics: Any, ties: str) -> list[tuple[str, str, Optional[int]]]:
    """``["ndcg@10", "map"]`` → ``[("ndcg@10", "ndcg", 10), ("map", "map", None)]``; errors name ``metrics``."""
    if isinstance(metrics, str):
        metrics = [metrics]
    if not is_sequence(metrics) or not metrics:
        raise TypeError(f"`metrics` must be a metric name or a non-empty list of names, got {describe_value(metrics)}")
    parsed = []
    for name in metrics:
        match = _NAME.match(name.lower().replace("-", "_")) if isinstance(name, str) else None
        base = _ALIASES.get(match.group(1), match.group(1)) if match else None
        if base not in METRIC_NAMES:
            known = ", ".join(METRIC_NAMES)
            raise ValueError(f"`metrics` holds {name!r}; expected one of {known}, optionally with @k (e.g. 'ndcg@10')")
        k = int(match.group(2)) if match.group(2) is not None else None
        if k is not None and (k < 1 or not METRIC_NAMES[base]):
            raise ValueError(f"`metrics` holds {name!r}: " + ("k must be ≥ 1" if k < 1 else f"{base} takes no @k"))
        if ties == "average" and base not in _LINEAR:
            raise ValueError(f"`metrics` holds {name!r}, which ties='average' does not define (only "
                             f"{', '.join(sorted(_LINEAR))}: the metrics linear in the ranking)")
        parsed.append((name, base, k))
    return parsed


def _check_options(ties: Any, gain: Any, empty: Any, relevance_level: Any) -> None:
    check_choice(ties, "ties", TIES)
    check_choice(gain, "gain", GAINS)
    check_choice(empty, "empty", EMPTY)
    check_real(relevance_level, "relevance_level", above=0)  # NaN or inf: nothing was relevant, every score 0


def _as_tensor(value: Any, name: str, device: Optional[torch.device] = None) -> Tensor:
    """``value`` as a tensor, on ``device`` when given (host data goes up through ``core.transfer.upload``)."""
    tensor = value if isinstance(value, Tensor) else None
    if tensor is None and is_sequence(value):
        try:  # host data, read once by numpy: Python floats stay doubles (torch's default float32 would merge ties)
            value = np.asarray(value)
        except ValueError:  # ragged nesting
            pass
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        tensor = torch.from_numpy(np.ascontiguousarray(value, dtype=np.int64 if value.dtype.kind == "u" else None))
    if tensor is None:
        raise TypeError(f"`{name}` must be a tensor (or a numeric numpy array, or a nested list of numbers), got "
                        f"{describe_value(value)}")
    if tensor.is_complex():  # ranks and labels are real: `.double()` would drop the imaginary part
        raise TypeError(f"`{name}` must hold real numbers, got dtype {tensor.dtype}")
    check_holds_data(tensor, name)
    return tensor if device is None or tensor.device == device else upload(tensor, device)


_PAD_SLACK_CELLS = 1 << 20  # padding a group of flat queries may waste beyond its own cells (one group below this)


def _width_groups(counts: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int, int]]]:
    """Queries of ``counts`` (host ``int64[Q]`` documents per query, each ≥ 1) in groups padded one after the other:
    all at once, or the buckets of :func:`~gpumetrics.kernels.ragged.size_buckets` (queries whose lengths share a
    power-of-two octave) when one ``[Q, longest]`` block would waste more than their documents plus
    ``_PAD_SLACK_CELLS``: one query of 10^6 documents among 1,000 of 10 is not padded into a ``[1001, 10^6]`` block.

    Returns:
        ``(perm, groups)``: ``perm: int64[Q]`` the queries group after group (ascending inside a group; the identity
        when one group holds them all) and ``groups``: ``(first, end, width)`` slices of ``perm`` and their widths.
    """
    buckets = size_buckets(counts, np.ones_like(counts), _PAD_SLACK_CELLS)
    if buckets is None:
        return np.arange(counts.size, dtype=np.int64), [(0, counts.size, int(counts.max(initial=0)))]
    ends = np.cumsum([bucket.size for bucket in buckets])
    groups = [(int(end - bucket.size), int(end), int(counts[bucket].max())) for bucket, end in zip(buckets, ends)]
    return np.concatenate(buckets).astype(np.int64), groups


def _flat_to_padded(
    scores: Tensor, relevance: Tensor, query_ids: Tensor, doc_ids: Optional[Tensor]
) -> list[tuple[Optional[Tensor], Tensor, Tensor, Tensor, Optional[Tensor]]]:
    """Group flat ``[N]`` triples by query (queries in sorted id order, documents in input order) into padded
    ``[q, D]`` blocks of queries of similar length (:func:`_width_groups`; one block in the usual case).

    Returns:
        ``(queries, scores, relevance, mask, doc_ids)`` per block; ``queries: LongTensor[q]`` the positions of its
        rows among the sorted query ids (``None`` for a single block holding every query in order).
    """
    if query_ids.dim() != 1 or query_ids.shape != scores.shape or query_ids.is_floating_point():
        raise ValueError(f"`query_ids` must be an integer tensor of shape {tuple(scores.shape)} like `scores`, got "
                         f"{query_ids.dtype} {tuple(query_ids.shape)}")
    device = scores.device
    _, inverse, counts = torch.unique(query_ids, return_inverse=True, return_counts=True)
    counts_host = np.array(counts.tolist(), dtype=np.int64)  # one host sync: the padded widths
    perm_host, groups = _width_groups(counts_host)
    if len(groups) == 1:
        rank, counts_ranked, queries = inverse, counts, None
    else:
        perm = upload(perm_host, device)
        rank = torch.empty_like(perm).scatter_(0, perm, torch.arange(perm.numel(), device=device))[inverse]
        counts_ranked, queries = counts[perm], perm
    order = torch.sort(rank, stable=True).indices
    row = rank[order]
    col = offsets_in_segment(counts_ranked, row)
    entry_start = np.concatenate(([0], np.cumsum(counts_host[perm_host])))
    blocks = []
    for first, end, width in groups:
        part = slice(int(entry_start[first]), int(entry_start[end]))
        cells = (order[part], row[part] - first, col[part], (end - first, width))
        mask = _scatter_rows(torch.ones(scores.shape, dtype=torch.bool, device=device), cells, False)
        blocks.append((None if queries is None else queries[first:end], _scatter_rows(scores, cells, 0),
                       _scatter_rows(relevance, cells, 0), mask,
                       None if doc_ids is None else _scatter_rows(doc_ids, cells, 0)))
    return blocks


def _scatter_rows(values: Tensor, cells: tuple[Tensor, Tensor, Tensor, tuple[int, int]], fill: float) -> Tensor:
    """``values[index]`` written at ``(row, col)`` of a ``shape`` block filled with ``fill``;
    ``cells = (index, row, col, shape)``."""
    index, row, col, shape = cells
    out = values.new_full(shape, fill)
    out[row, col] = values[index]
    return out


def _holds_strings(value: Any) -> bool:
    first = value
    while is_sequence(first) and len(first):
        first = first[0]
    return isinstance(first, str)


def _string_ids(doc_ids: Sequence) -> list:
    """Docnos (``[N]`` or ``[Q][D]`` strings) → their ranks in trec_eval's ``strcmp`` order (code-point order)."""
    nested = is_sequence(doc_ids[0])
    rows = [list(row) for row in doc_ids] if nested else [list(doc_ids)]
    rank = {docno: i for i, docno in enumerate(sorted({docno for row in rows for docno in row}))}
    ranks = [[rank[docno] for docno in row] for row in rows]
    return ranks if nested else ranks[0]


_Block = tuple[Optional[Tensor], Tensor, Tensor, Optional[Tensor], Optional[Tensor], Optional[Tensor]]


def _prepare(
    scores: Any, relevance: Any, mask: Any, query_ids: Any, doc_ids: Any, qrels: Any
) -> tuple[list[_Block], int]:
    """Checked padded ``(queries, scores, relevance, mask, doc_ids, qrels)`` blocks and the number of queries; shapes
    only (values are checked in one sync per block). Padded input is one block (``queries`` None); flat input is
    grouped by :func:`_flat_to_padded`."""
    scores = _as_tensor(scores, "scores")
    device = scores.device
    relevance = _as_tensor(relevance, "relevance", device)
    if not scores.is_floating_point():
        scores = scores.double()
    if relevance.dtype == torch.bool:
        relevance = relevance.long()
    if doc_ids is not None:
        if isinstance(doc_ids, (str, bytes)):  # "" failed inside (IndexError), "abc" read as three docnos
            raise TypeError(f"`doc_ids` must be a tensor of ids or lists of docno strings, got "
                            f"{describe_value(doc_ids)}")
        if isinstance(doc_ids, np.ndarray) and doc_ids.dtype.kind in "UO":  # docnos
            doc_ids = doc_ids.tolist()
        doc_ids = _string_ids(doc_ids) if _holds_strings(doc_ids) else doc_ids
        doc_ids = _as_tensor(doc_ids, "doc_ids", device)
        if doc_ids.numel() == 0:  # ``[]`` (no docno for no query) reads as float
            doc_ids = doc_ids.long()
        if doc_ids.is_floating_point() or doc_ids.dtype == torch.bool:
            raise TypeError(f"`doc_ids` must hold integer ids, got dtype {doc_ids.dtype}")
        if doc_ids.shape != scores.shape:
            raise ValueError(f"`doc_ids` must have the shape of `scores` {tuple(scores.shape)}, "
                             f"got {tuple(doc_ids.shape)}")
    if relevance.shape != scores.shape:
        raise ValueError(f"`relevance` must have the shape of `scores` {tuple(scores.shape)}, "
                         f"got {tuple(relevance.shape)}")
    if query_ids is not None:
        if mask is not None:
            raise ValueError("`mask` is for padded [Q, D] inputs; flat inputs with `query_ids` need none")
        if qrels is not None:
            raise ValueError("`qrels` is for padded [Q, D] inputs; with flat inputs every judged document is a row")
        if scores.dim() != 1:
            raise ValueError(f"with `query_ids`, `scores` must be flat [N], got shape {tuple(scores.shape)}")
        query_ids = _as_tensor(query_ids, "query_ids", device)
        blocks = _flat_to_padded(scores, relevance, query_ids, doc_ids)
        return [(*block, None) for block in blocks], sum(block[1].shape[0] for block in blocks)
    else:
        if scores.dim() == 1:
            scores, relevance = scores[None], relevance[None]
            doc_ids = None if doc_ids is None else doc_ids[None]
            mask = None if mask is None else _as_tensor(mask, "mask", device)[None]
        if scores.dim() != 2:
            raise ValueError(f"`scores` must be [Q, D] (or flat [N] with `query_ids`), got shape {tuple(scores.shape)}")
        if mask is not None:
            mask = _as_tensor(mask, "mask", device)
            if mask.dtype != torch.bool or mask.shape != scores.shape:
                raise ValueError(f"`mask` must be a bool tensor of shape {tuple(scores.shape)}, got {mask.dtype} "
                                 f"{tuple(mask.shape)}")
    if qrels is not None:
        qrels = _as_tensor(qrels, "qrels", device)
        if qrels.dim() == 1 and scores.shape[0] == 1:
            qrels = qrels[None]
        if qrels.dim() != 2 or qrels.shape[0] != scores.shape[0]:
            raise ValueError(f"`qrels` must be [Q, J] with Q = {scores.shape[0]} queries, got {tuple(qrels.shape)}")
        if qrels.dtype == torch.bool:
            qrels = qrels.long()
    return [(None, scores, relevance, mask, doc_ids, qrels)], scores.shape[0]


def _check_values(scores: Tensor, labels: Tensor, mask: Optional[Tensor], qrels: Optional[Tensor],
                  empty_query: Tensor, empty: str) -> None:
    """One host synchronisation for every value check of a batch (``labels``: padding already zeroed)."""
    nan_scores = torch.isnan(scores)
    checks = [((nan_scores if mask is None else nan_scores.logical_and(mask)).any(), "`scores` holds NaN")]
    for name, values in (("relevance", labels), ("qrels", qrels)):
        if values is not None and values.numel() and values.is_floating_point():
            # an infinite gain makes nDCG inf / inf = NaN; trec_eval and ranx read integer labels
            checks.append((torch.isfinite(values).logical_not().any(), f"`{name}` holds NaN or an infinite label"))
    if empty == "error" and empty_query.numel():
        checks.append((empty_query.any(), "`relevance` has a query with no relevant document and empty='error' "
                                          "(choose empty='zero', 'one' or 'skip' to score such queries)"))
    for flag, (_, message) in zip(torch.stack([flag for flag, _ in checks]).tolist(), checks):
        if flag:
            raise ValueError(message)


def _rank(scores: Tensor, labels: Tensor, mask: Optional[Tensor], doc_ids: Optional[Tensor], ties: str) -> Tensor:
    """``LongTensor[Q, D]``: column of the document at each rank (ranked documents first, padding last).

    Stable sorts from the last tie-break key to the first; the usual cases take a single sort (trec_eval without
    ``doc_ids`` sorts the reversed row; ranx sorts the row as it is)."""
    q, d = scores.shape
    if ties == "trec_eval" and scores.dtype == torch.float64:
        scores = scores.float()  # trec_eval holds every score as a C float: doubles equal in float32 are tied
    if ties == "trec_eval" and doc_ids is None:
        # ids are the column positions, larger first: sort the reversed row, then map positions back
        order = (d - 1) - torch.sort(scores.flip(1), dim=1, descending=True, stable=True).indices
    elif ties.startswith("ranx") or ties == "average":
        order = torch.sort(scores, dim=1, descending=True, stable=True).indices
    else:
        if ties == "trec_eval":
            order = torch.sort(doc_ids, dim=1, descending=True, stable=True).indices
        else:
            order = torch.sort(labels, dim=1, descending=ties == "optimistic", stable=True).indices
        key = scores.gather(1, order)
        order = order.gather(1, torch.sort(key, dim=1, descending=True, stable=True).indices)
    if mask is not None:
        ranked = mask.gather(1, order)
        order = order.gather(1, torch.sort(ranked.to(torch.uint8), dim=1, descending=True, stable=True).indices)
    return _ranx_order(scores, mask, order, ties) if ties.startswith("ranx") else order



# ranx's tie order ------------------------------------------------------------------------------------------------
# ranx's ``Run`` orders each query's documents with ``np.argsort(-scores)`` compiled by numba (ranx
# ``data_structures/run.py`` → ``sort_dict_by_value``), whose default kind is numba's own quicksort
# (``numba/misc/quicksort.py``): an insertion sort (stable) for slices of up to SMALL_QUICKSORT + 1 = 16 elements, and
# above that a median-of-three partition that moves tied elements. The permutation depends only on the comparisons,
# so it is deterministic: queries of at most 15 ranked documents, or without equal scores, come out as a stable
# descending sort, and only queries of 16 or more documents with a tie need numba's exact permutation.

_SMALL_QUICKSORT = 15  # numba.misc.quicksort.SMALL_QUICKSORT: slices with high - low < 15 are insertion-sorted


def _quicksort_argsort(values: Sequence[float]) -> list[int]:
    """numba's ``np.argsort(values)`` (kind ``"quicksort"``) in plain Python: the same pivots, swaps and insertion sort.

    A port of ``numba/misc/quicksort.py`` (``run_quicksort1`` with ``is_argsort=True``, numba 0.5x–0.6x, BSD-2); used
    when numba is not installed, and tested against numba's own ``np.argsort`` on random tied arrays."""
    a = list(values)
    r = list(range(len(a)))
    if len(a) < 2:
        return r

    def insertion_sort(low: int, high: int) -> None:
        for i in range(low + 1, high + 1):
            k = r[i]
            v = a[k]
            j = i
            while j > low and v < a[r[j - 1]]:
                r[j] = r[j - 1]
                j -= 1
            r[j] = k

    def partition(low: int, high: int) -> int:
        mid = (low + high) >> 1
        if a[r[mid]] < a[r[low]]:
            r[low], r[mid] = r[mid], r[low]
        if a[r[high]] < a[r[mid]]:
            r[high], r[mid] = r[mid], r[high]
        if a[r[mid]] < a[r[low]]:
            r[low], r[mid] = r[mid], r[low]
        pivot = a[r[mid]]
        r[high], r[mid] = r[mid], r[high]
        i, j = low, high - 1
        while True:
            while i < high and a[r[i]] < pivot:
                i += 1
            while j >= low and pivot < a[r[j]]:
                j -= 1
            if i >= j:
                break
            r[i], r[j] = r[j], r[i]
            i += 1
            j -= 1
        r[i], r[high] = r[high], r[i]
        return i

    stack = [(0, len(a) - 1)]
    while stack:
        low, high = stack.pop()
        while high - low >= _SMALL_QUICKSORT:
            i = partition(low, high)
            if high - i > i - low:  # push the larger side, go on with the smaller one
                if high > i:
                    stack.append((i + 1, high))
                high = i - 1
            else:
                if i > low:
                    stack.append((low, i - 1))
                low = i + 1
        insertion_sort(low, high)
    return r


def _numba_argsort_rows() -> Any:
    """numba's compiled row-wise ``np.argsort`` (:mod:`gpumetrics.retrieval.numba_order`), or None without numba."""
    try:
        from gpumetrics.retrieval.numba_order import argsort_rows
    except ImportError:
        return None
    return argsort_rows


def _argsort_rows(values: Tensor, lengths: Tensor) -> Tensor:
    """numba's ``np.argsort`` of each row's first ``lengths[r]`` values (``DoubleTensor[R, D]`` on the CPU); positions
    past the length map to themselves. Compiled numba when installed, else the Python port (these rows only)."""
    r, d = values.shape
    kernel = _numba_argsort_rows()
    if kernel is not None:
        perm = torch.from_numpy(kernel(values.numpy(), lengths.numpy()))
    else:
        perm = torch.zeros(r, d, dtype=torch.long)
        for i, (row, n) in enumerate(zip(values.tolist(), lengths.tolist())):  # the tied long rows only
            perm[i, :n] = torch.tensor(_quicksort_argsort(row[:n]), dtype=torch.long)
    position = torch.arange(d)
    return torch.where(position[None, :] >= lengths[:, None], position.expand(r, d), perm)


def _reverse_prefix(order: Tensor, lengths: Tensor) -> Tensor:
    """Reverse the first ``lengths[r]`` entries of every row of ``order``."""
    position = torch.arange(order.shape[1], device=order.device).expand_as(order)
    source = torch.where(position < lengths[:, None], lengths[:, None] - 1 - position, position)
    return order.gather(1, source)


def _ranx_order(scores: Tensor, mask: Optional[Tensor], order: Tensor, ties: str) -> Tensor:
    """ranx's order of every query (``order``: the stable descending sort, ranked columns first).

    ``"ranx"``: numba's ``np.argsort`` of the negated scores (a ``ranx.Run`` built from a dict, file or DataFrame);
    ``"ranx_comparable"``: that sort applied twice (``make_comparable`` sorts the sorted run again);
    ``"ranx_dict"``: ``np.argsort(scores)[::-1]`` (a plain dict handed to ``ranx.evaluate``). Queries of at most 15
    ranked documents are an insertion sort (stable): no host work. Rows of 16 or more ranked documents holding equal
    scores are re-sorted on the CPU exactly as numba does (documents in column order, as ranx's dict holds them);
    one host synchronisation finds them, and only they travel."""
    q, d = scores.shape
    device = scores.device
    lengths = torch.full((q,), d, dtype=torch.long, device=device) if mask is None else mask.sum(1)
    if ties == "ranx_dict":  # stable ascending, reversed: ties in reverse column order
        order = torch.sort(scores, dim=1, stable=True).indices
        if mask is not None:
            ranked = mask.gather(1, order)
            order = order.gather(1, torch.sort(ranked.to(torch.uint8), dim=1, descending=True, stable=True).indices)
        order = _reverse_prefix(order, lengths)
    if d <= _SMALL_QUICKSORT:
        return order
    sorted_scores = scores.gather(1, order)
    same = sorted_scores[:, 1:] == sorted_scores[:, :-1]
    if mask is not None:
        same &= mask.gather(1, order)[:, 1:]  # both neighbours ranked (ranked columns come first)
    rows = (same.any(1) & (lengths > _SMALL_QUICKSORT)).nonzero()[:, 0]
    if not rows.numel():
        return order
    # the ranked columns of each such row in column order (what ranx's dict holds), then its padding
    if mask is None:
        columns = torch.arange(d, device=device).expand(rows.numel(), d)
    else:
        columns = torch.sort((~mask[rows]).to(torch.uint8), dim=1, stable=True).indices
    values = scores[rows].gather(1, columns).double().cpu()  # ranx holds float64 scores
    sizes = lengths[rows].cpu()
    if ties == "ranx_dict":
        perm = _reverse_prefix(_argsort_rows(values, sizes), sizes)
    else:
        perm = _argsort_rows(-values, sizes)  # ranx: np.argsort([-v for v in values])
        if ties == "ranx_comparable":
            perm = perm.gather(1, _argsort_rows(-values.gather(1, perm), sizes))
    order = order.clone()
    order[rows] = columns.gather(1, upload(perm, device))
    return order


def _tie_average(values: Tensor, sorted_scores: Tensor, ranked: Optional[Tensor]) -> Tensor:
    """Replace every ranked value by the mean over its tie group (equal consecutive scores)."""
    q, d = values.shape
    if d == 0:
        return values
    if ranked is None:
        ranked = torch.ones_like(values, dtype=torch.bool)
    new_group = torch.ones_like(ranked)
    new_group[:, 1:] = sorted_scores[:, 1:] != sorted_scores[:, :-1]
    group = torch.cumsum(new_group.long(), 1) - 1 + torch.arange(q, device=values.device)[:, None] * d
    group = group.reshape(-1)
    zeros = torch.zeros(q * d, dtype=values.dtype, device=values.device)
    total = zeros.index_add(0, group, values.reshape(-1))
    count = zeros.index_add(0, group, ranked.reshape(-1).to(values.dtype))
    return torch.where(ranked, (total / count.clamp_min(1))[group].reshape(q, d), values.new_zeros(()))


def _gain(labels: Tensor, exponential: bool) -> Tensor:
    labels = labels.double().clamp_min(0)
    return torch.pow(2.0, labels) - 1 if exponential else labels


def _at(cumulative: Tensor, k: Tensor) -> Tensor:
    """``cumulative[:, k - 1]`` with k clamped into ``1..D`` (0 when ``k`` is 0 or D is 0)."""
    q, d = cumulative.shape
    if d == 0:
        return cumulative.new_zeros(q)
    index = (k.clamp(1, d) - 1).reshape(q, 1)
    return torch.where(k > 0, cumulative.gather(1, index)[:, 0], cumulative.new_zeros(()))


def _ranking_update(
    scores: Any, relevance: Any, metrics: Sequence[tuple[str, str, Optional[int]]], mask: Any = None,
    query_ids: Any = None, doc_ids: Any = None, qrels: Any = None, ties: str = "trec_eval", gain: str = "linear",
    empty: str = "zero", relevance_level: float = 1,
) -> tuple[Tensor, Tensor]:
    """Per-query values ``DoubleTensor[M, Q]`` and ``BoolTensor[M, Q]`` (the query counts in that metric's mean).

    Only what the asked metrics need is computed: columns past the largest cut-off are not read unless a metric
    takes the whole list, and the ideal DCG takes the top k of the judged labels (``topk``), not a full sort."""
    blocks, n_queries = _prepare(scores, relevance, mask, query_ids, doc_ids, qrels)
    options = (metrics, ties, gain, empty, relevance_level)
    if len(blocks) == 1:
        return _block_update(*blocks[0][1:], *options)
    values = torch.zeros(len(metrics), n_queries, dtype=torch.float64, device=blocks[0][1].device)
    counted = torch.zeros(len(metrics), n_queries, dtype=torch.bool, device=values.device)
    for queries, *block in blocks:
        values[:, queries], counted[:, queries] = _block_update(*block, *options)
    return values, counted


def _block_update(
    scores: Tensor, relevance: Tensor, mask: Optional[Tensor], doc_ids: Optional[Tensor], qrels: Optional[Tensor],
    metrics: Sequence[tuple[str, str, Optional[int]]], ties: str, gain: str, empty: str, relevance_level: float,
) -> tuple[Tensor, Tensor]:
    """:func:`_ranking_update` of one padded ``[Q, D]`` block of checked tensors."""
    q, d = scores.shape
    device = scores.device
    labels = relevance if mask is None else relevance.masked_fill(~mask, 0)
    judged = labels if qrels is None else qrels
    num_relevant = (judged >= relevance_level).sum(1)
    bases = {base for _, base, _ in metrics}
    # DCG / NDCG: a query is empty when no label is positive (trec_eval's rule, which differs for levels above 1)
    no_gain = (judged.amax(1) <= 0) if bases & _GAIN_METRICS and judged.shape[1] else None
    if no_gain is None and bases & _GAIN_METRICS:
        no_gain = torch.ones(q, dtype=torch.bool, device=device)
    empty_query = torch.stack([no_gain if base in _GAIN_METRICS else num_relevant == 0 for _, base, _ in metrics])
    _check_values(scores, labels, mask, qrels, empty_query, empty)

    # a metric that reads the whole list, or tie groups that may reach past the largest cut-off
    whole = ties == "average" or any(k is None or base == "r_precision" for _, base, k in metrics)
    width = d if whole else min(d, max(k for _, _, k in metrics))
    order = _rank(scores, labels, mask, doc_ids, ties)[:, :width]
    ranked = None if mask is None else mask.gather(1, order)
    list_length = torch.full((q,), float(d), dtype=torch.float64, device=device) if mask is None \
        else mask.sum(1).double()
    sorted_labels = labels.gather(1, order)
    hit = sorted_labels >= relevance_level
    if ranked is not None:
        hit &= ranked
    hit = hit.double()
    gains = {}
    for exponential in {base.endswith("_burges") or gain == "exponential" for base in bases & _GAIN_METRICS}:
        gains[exponential] = _gain(sorted_labels, exponential)
        if ranked is not None:
            gains[exponential] = gains[exponential] * ranked
    if ties == "average":
        sorted_scores = scores.gather(1, order)
        hit = _tie_average(hit, sorted_scores, ranked)
        gains = {e: _tie_average(g, sorted_scores, ranked) for e, g in gains.items()}

    position = torch.arange(1, width + 1, device=device, dtype=torch.float64)
    need_cumulative = bases & {"precision", "f1", "recall", "hits", "hit_rate", "r_precision", "map"}
    cumulative_hits = torch.cumsum(hit, 1) if need_cumulative else None
    safe_relevant = num_relevant.clamp_min(1).double()
    ideal_cache: dict = {}
    results = []
    for name, base, k in metrics:
        cut = width if k is None else min(k, width)
        if base in ("precision", "f1", "recall", "hits", "hit_rate"):
            hits = cumulative_hits[:, cut - 1] if cut else hit.new_zeros(q)
            denominator = list_length if k is None else torch.full_like(hits, float(k))
            precision = hits / denominator.clamp_min(1)
            recall = hits / safe_relevant
            value = {"precision": precision, "recall": recall, "hits": hits, "hit_rate": (hits > 0).double(),
                     "f1": 2 * precision * recall / (precision + recall).masked_fill(precision + recall == 0, 1)}[base]
        elif base == "r_precision":
            value = _at(cumulative_hits, num_relevant) / safe_relevant
        elif base == "mrr":
            if cut:
                first = hit[:, :cut].argmax(1)  # first maximum: the first relevant document, if any
                value = hit[:, :cut].gather(1, first[:, None])[:, 0] / (first + 1).double()
            else:
                value = hit.new_zeros(q)
        elif base == "map":
            value = (hit[:, :cut] * cumulative_hits[:, :cut] / position[:cut]).sum(1) / safe_relevant
        else:
            exponential = base.endswith("_burges") or gain == "exponential"
            discount = 1.0 / torch.log2(position[:cut] + 1)
            dcg = (gains[exponential][:, :cut] * discount).sum(1)
            if base.startswith("dcg"):
                value = dcg
            else:
                ideal = _ideal_dcg(judged, exponential, k, ideal_cache)
                value = torch.where(ideal > 0, dcg / ideal.clamp_min(1e-300), dcg.new_zeros(()))
        results.append(value)
    values = torch.stack(results)
    values = values.masked_fill(empty_query, 1.0 if empty == "one" else 0.0)
    counted = ~empty_query if empty == "skip" else torch.ones_like(empty_query)
    return values, counted


def _ideal_dcg(judged: Tensor, exponential: bool, k: Optional[int], cache: dict) -> Tensor:
    """Ideal DCG@k of every query from all its judged labels (``topk`` of the largest k, or a full sort)."""
    j = judged.shape[1]
    top = j if k is None else min(k, j)
    key = (exponential, top)
    if key not in cache:
        if j == 0:
            cache[key] = judged.new_zeros(judged.shape[0], dtype=torch.float64)
        else:
            best = (torch.topk(judged, top, dim=1).values if top < j
                    else torch.sort(judged, dim=1, descending=True).values)
            discount = 1.0 / torch.log2(torch.arange(2, top + 2, device=judged.device, dtype=torch.float64))
            cache[key] = (_gain(best, exponential) * discount).sum(1)
    return cache[key]


def _ranking_compute(sums: Tensor, count: Tensor, names: Sequence[str]) -> dict[str, Tensor]:
    mean = torch.where(count > 0, sums / count.clamp_min(1), torch.zeros_like(sums))
    return {name: mean[i] for i, name in enumerate(names)}


def ranking_metrics(
    scores: Any,
    relevance: Any,
    *,
    metrics: Union[str, Sequence[str]] = ("ndcg@10", "map", "mrr"),
    mask: Any = None,
    query_ids: Any = None,
    doc_ids: Any = None,
    qrels: Any = None,
    ties: str = "trec_eval",
    gain: str = "linear",
    empty: str = "zero",
    relevance_level: float = 1,
    reduction: str = "mean",
) -> dict[str, Tensor]:
    """Ranking metrics of Q queries at once: means over queries, keyed by the ranx-style names asked for.

    Args:
        scores: ``Tensor[Q, D]`` retrieval scores (higher ranks first), or flat ``Tensor[N]`` with ``query_ids``
            (a 1-D tensor without ``query_ids`` is one query).
        relevance: ``Tensor[Q, D]`` (or ``[N]``) graded labels ≥ 0 of the scored documents (bool or 0/1 for binary).
        metrics: names such as ``"ndcg@10"``, ``"ndcg_burges@5"``, ``"dcg@3"``, ``"map"``, ``"map@100"``, ``"mrr"``,
            ``"mrr@10"``, ``"precision@5"``, ``"recall@10"``, ``"f1@5"``, ``"hits@5"``, ``"hit_rate@1"``,
            ``"r_precision"`` (aliases: ``p@k``, ``r@k``, ``hit@k``, ``success@k``, ``ap``, ``rprec``, ``recip_rank``).
        mask: ``BoolTensor[Q, D]``, True where a column holds a ranked document (padding False; its values are ignored).
        query_ids: ``LongTensor[N]`` query of every flat entry (torchmetrics' ``indexes``); queries come out in sorted
            id order, each query's documents in input order.
        doc_ids: ``LongTensor[Q, D]`` (or ``[N]``) document ids for ``ties="trec_eval"`` (larger id first among equal
            scores), or the docno strings themselves (``list[list[str]]``, compared as trec_eval's ``strcmp``); the
            column position when omitted.
        qrels: ``Tensor[Q, J]`` labels of *every* judged document of each query, retrieved or not (0-padded): the
            number of relevant documents (recall, AP, R-precision, empty queries) and the ideal DCG come from it.
        ties: ``"trec_eval"``, ``"ranx"``, ``"ranx_comparable"``, ``"ranx_dict"``, ``"optimistic"``,
            ``"pessimistic"`` or ``"average"`` (module docstring).
        gain: NDCG / DCG gain, ``"linear"`` or ``"exponential"`` (2^rel − 1).
        empty: queries with no relevant document score ``"zero"``, ``"one"``, are ``"skip"``-ped, or ``"error"``.
        relevance_level: a document is relevant when its label is ≥ this (trec_eval's ``-l``).
        reduction: ``"mean"`` over queries, or ``"none"``: ``DoubleTensor[Q]`` per metric (skipped queries NaN).

    Returns:
        ``dict[str, DoubleTensor[]]`` (``[Q]`` for ``reduction="none"``), keyed by the names in ``metrics``.

    Raises:
        ValueError: unknown metric name or option, shapes that do not match, NaN scores or labels, or an
            empty query with ``empty="error"``.
        TypeError: an input is not a tensor.

    Example:
        >>> scores = torch.tensor([[0.9, 0.8, 0.7, 0.1], [0.5, 0.5, 0.2, 0.0]])
        >>> relevance = torch.tensor([[0, 2, 1, 0], [1, 0, 0, 0]])
        >>> out = ranking_metrics(scores, relevance, metrics=["ndcg@3", "map", "mrr", "precision@2"])
        >>> {name: round(value.item(), 4) for name, value in out.items()}
        {'ndcg@3': 0.6503, 'map': 0.5417, 'mrr': 0.5, 'precision@2': 0.5}
    """
    _check_options(ties, gain, empty, relevance_level)
    check_choice(reduction, "reduction", REDUCTIONS)
    parsed = _parse_metrics(metrics, ties)
    values, counted = _ranking_update(scores, relevance, parsed, mask, query_ids, doc_ids, qrels, ties, gain, empty,
                                      relevance_level)
    names = [name for name, _, _ in parsed]
    if reduction == "none":
        values = values.masked_fill(~counted, math.nan)
        return {name: values[i] for i, name in enumerate(names)}
    return _ranking_compute((values * counted).sum(1), counted.sum(1).double(), names)


class RankingMetrics(Metric):
    """Ranking metrics accumulated over batches of queries; see :func:`ranking_metrics` for every option.

    States are additive: ``sums: DoubleTensor[M]`` (per-query values summed) and ``count: DoubleTensor[M]`` (queries
    counted per metric: ``empty="skip"`` leaves out different queries for NDCG and for binary metrics when
    ``relevance_level`` is above 1), one all-reduce each under DDP. Every query must arrive whole in one ``update`` (its
    documents in one row, or all its flat entries in one call): metrics of a query split across two updates are not
    defined.

    Args:
        metrics: metric names (``"ndcg@10"``, ``"map"``, ``"mrr"`` …).
        ties, gain, empty, relevance_level: as in :func:`ranking_metrics`.
        kwargs: the ``Metric`` base options (torchmetrics' names: ``sync_on_compute``, ``dist_sync_fn`` …).

    Example:
        >>> metric = RankingMetrics(["ndcg@3", "mrr"])
        >>> metric.update(torch.tensor([[0.9, 0.8, 0.7, 0.1]]), torch.tensor([[0, 2, 1, 0]]))
        >>> metric.update(torch.tensor([[0.5, 0.5, 0.2, 0.0]]), torch.tensor([[1, 0, 0, 0]]))
        >>> {name: round(value.item(), 4) for name, value in metric.compute().items()}
        {'ndcg@3': 0.6503, 'mrr': 0.5}
        >>> metric.signature()[:50]
        'ranking|metrics:ndcg@3,mrr|ties:trec_eval|gain:lin'
    """

    signature_name = "ranking"
    higher_is_better = True
    kernel_threads = 1  # sorts and cumulative sums of [Q, D] (core/threads.py)

    def __init__(
        self,
        metrics: Union[str, Sequence[str]] = ("ndcg@10", "map", "mrr"),
        *,
        ties: str = "trec_eval",
        gain: str = "linear",
        empty: str = "zero",
        relevance_level: float = 1,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        _check_options(ties, gain, empty, relevance_level)
        self.parsed = _parse_metrics(metrics, ties)
        self.names = [name for name, _, _ in self.parsed]
        self.ties, self.gain, self.empty, self.relevance_level = ties, gain, empty, relevance_level
        self.add_state("sums", default=torch.zeros(len(self.parsed), dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("count", default=torch.zeros(len(self.parsed), dtype=torch.float64), dist_reduce_fx="sum")

    def update(self, scores: Any, relevance: Any, mask: Any = None, doc_ids: Any = None, qrels: Any = None,
               query_ids: Any = None) -> None:
        """Add Q whole queries: padded ``[Q, D]`` (+ ``mask``) or flat ``[N]`` with ``query_ids``."""
        scores = _as_tensor(scores, "scores", self.device)  # host inputs go up without a host wait
        values, counted = _ranking_update(scores, relevance, self.parsed, mask, query_ids, doc_ids, qrels, self.ties,
                                          self.gain, self.empty, self.relevance_level)
        self.sums += (values * counted).sum(1).to(self.sums)
        self.count += counted.sum(1).to(self.count)

    def compute(self) -> dict[str, Tensor]:
        """``dict[str, DoubleTensor[]]``: the mean over counted queries (0 when none was)."""
        return _ranking_compute(self.sums, self.count, self.names)

    def _signature_fields(self) -> dict[str, Any]:
        return {"metrics": ",".join(self.names), "ties": self.ties, "gain": self.gain, "empty": self.empty,
                "level": self.relevance_level}

"""Word Mover's Distance (Kusner et al. 2015) with gensim's ``KeyedVectors.wmdistance`` conventions.

WMD(d₁, d₂) is the earth mover's distance between the normalised bags of words of two documents, moving mass between
words at the Euclidean distance of their embeddings. Conventions (gensim 4's, each stated by us):

* documents are token lists (a string is split on whitespace, nothing else: no lower-casing); out-of-vocabulary
  tokens and, when given, ``stop_words`` are dropped first (gensim has no stop-word list: off by default);
* a bag of words weighs each distinct word by count / number of remaining tokens;
* word vectors are L2-normalised (``normalize=True``, gensim's ``norm=True``) in float32, as gensim's
  ``get_vector(norm=True)`` does (in a ``KeyedVectors``' own dtype when it was built with float64 or float16), and
  distances are computed in float64 between them; a ``KeyedVectors`` key is looked up in its ``key_to_index``;
* a document left with no word gives ``inf``; two documents made of one and the same word give 0; when every
  distance between their words is (numerically, Σ < 1e-8) zero gensim returns ``inf`` too (POT's solver stalls on an
  all-zero cost), and so do we;
* ``method="emd"`` solves each pair exactly with POT's ``ot.emd2`` (float64; what gensim calls) on the host, where
  the whole pair is worked out (word distances included: nothing goes to the device but the distances);
  ``method="sinkhorn"`` solves all pairs at once on the device with entropic regularisation ``reg`` (log-domain
  Sinkhorn), once converged an upper bound of the EMD whose gap shrinks with ``reg`` (docs/metrics/wmd.md gives
  measured gaps); a pair whose plan is still far off its marginals after ``max_iter`` warns (its cost can be far
  below the EMD: :func:`~gpumetrics.kernels.transport.sinkhorn_batch`).

Bags of words, padding and the pairs with an empty side or one shared word are host (numpy) work on the tokens;
the Sinkhorn inputs go to the device in one :func:`~gpumetrics.core.transfer.upload_all` (no host wait on CUDA).

Embeddings: a ``{word: vector}`` mapping, a gensim ``KeyedVectors`` (or a model holding ``.wv``), a word2vec / fastText
``.vec`` text file (header ``count dim``), a GloVe text file (no header) or a binary word2vec file (read by gensim).
:func:`load_embeddings` reads one once into a :class:`WordEmbeddings` that every call can reuse. Text files are read
as gensim's ``load_word2vec_format`` reads them: UTF-8 with ``unicode_errors`` (``"strict"``: a ``ValueError`` naming
the file and line; ``"ignore"`` / ``"replace"``), a duplicate word keeps its first vector, and the header's word count
is read. Vectors are checked once, when loaded: a NaN, infinite or beyond-float32 component (``1e200``) is a
``ValueError`` naming the words — it would make distances 0 (exact) or NaN (Sinkhorn) — and with ``normalize=True`` a
document word whose vector has norm 0 is one too (its unit vector is NaN).
"""

from __future__ import annotations

import math
import os
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core import PerSampleScore, check_choice, check_device, check_same_length, reduce_scores
from gpumetrics.core.checks import check_bool, check_positive_int, check_real, describe_value, is_sequence
from gpumetrics.core.positions import sample_error
from gpumetrics.core.transfer import upload, upload_all
from gpumetrics.kernels.alignment import ragged_offsets, ragged_starts
from gpumetrics.kernels.ragged import size_buckets
from gpumetrics.kernels.transport import emd_host, sinkhorn_batch

__all__ = ["WordEmbeddings", "WordMoversDistance", "load_embeddings", "word_movers_distance", "WMD_METHODS",
           "UNICODE_ERRORS"]

WMD_METHODS = ("emd", "sinkhorn")


UNICODE_ERRORS = ("strict", "ignore", "replace")


def _listed(words: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(repr(w) for w in words[:limit])
    return shown + (f" and {len(words) - limit} more" if len(words) > limit else "")


class WordEmbeddings:
    """A vocabulary and its vectors: ``index: dict[str, int]``, ``vectors: FloatTensor[V, dim]`` (as loaded) and
    ``normed: FloatTensor[V, dim]`` (L2-normalised in float32 exactly as gensim's ``fill_norms``).

    Every component must be finite in float32 (checked once, here): a NaN, an infinity or a value beyond float32's
    range (±3.4e38, e.g. ``1e200``) raises ``ValueError`` naming the words, where it would otherwise turn distances
    into 0 or NaN. A vector whose float32 norm is 0 or overflows cannot be normalised: scoring a document holding
    such a word with ``normalize=True`` raises ``ValueError`` (:meth:`check_normalizable`).
    A word listed twice keeps its first vector (gensim's rule for vector files), unless ``index`` says which row
    each word reads (a gensim ``KeyedVectors``' ``key_to_index``: ``add_vectors`` with a key twice in one call lists
    both rows and looks the key up in the last one).

    ``dtype``: float32 (default, what gensim loads) or the floating dtype of a gensim ``KeyedVectors`` built with
    another one (``KeyedVectors(dim, dtype=np.float64)``): gensim normalises in that dtype, and so do we.
    """

    def __init__(self, words: Sequence[str], vectors: np.ndarray, norms: Optional[np.ndarray] = None, *,
                 index: Optional[Mapping[str, int]] = None, dtype: Any = np.float32) -> None:
        with np.errstate(over="ignore", invalid="ignore"):
            vectors = np.asarray(vectors, dtype=dtype)
        if vectors.ndim != 2 or vectors.shape[0] != len(words):
            raise ValueError(f"`embeddings` must hold one vector per word, got {len(words)} words and vectors of shape "
                             f"{vectors.shape}")
        finite = np.isfinite(vectors).all(1)
        if not finite.all():
            bad = [words[i] for i in np.flatnonzero(~finite)]
            raise ValueError(f"`embeddings` holds vectors with NaN, infinite or out-of-float32-range (|x| > 3.4e38) "
                             f"components for {len(bad)} word(s): {_listed(bad)}; distances from them would be 0 or "
                             "NaN, not a number to trust")
        self.index: dict[str, int] = {}
        if index is not None:  # a KeyedVectors' own look-up (its rows for a key listed twice: the last)
            self.index = {word: int(row) for word, row in index.items()}
        for i, word in enumerate(words if index is None else ()):
            self.index.setdefault(word, i)  # a duplicate keeps its first vector (gensim ignores later ones)
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            if norms is None:
                norms = np.linalg.norm(vectors, axis=1)  # float32, as gensim's KeyedVectors.fill_norms
            norms = np.asarray(norms, dtype=vectors.dtype)
            normed = vectors / norms[:, None]
        self._host = {False: vectors, True: np.ascontiguousarray(normed, dtype=vectors.dtype)}  # read by update
        self.vectors = torch.from_numpy(self._host[False])  # the same memory as tensors
        self.normed = torch.from_numpy(self._host[True])
        usable = np.isfinite(normed).all(1) & np.isfinite(norms) & (norms > 0)
        self._no_unit = frozenset(np.flatnonzero(~usable).tolist())
        self._words = list(words)

    def __len__(self) -> int:
        return len(self.index)

    def __contains__(self, word: str) -> bool:
        return word in self.index

    def rows(self, ids: np.ndarray, normalize: bool) -> np.ndarray:
        """``float32[*ids.shape, dim]``: the (L2-normalised when ``normalize``) vectors of ``ids`` (host, ≥ 0)."""
        return self._host[normalize][ids]

    def check_normalizable(self, ids: Any) -> None:
        """``ValueError`` naming the words of ``ids: int64[T]`` (host array or CPU tensor) whose vector has no unit
        length; free (no tensor work) when every vector of the table has one."""
        if not self._no_unit:
            return
        bad = sorted(self._no_unit.intersection(ids.tolist()))
        if bad:
            words = [self._words[i] for i in bad]
            many = len(words) > 1
            raise ValueError(f"`embeddings`: the vector{'s' if many else ''} of {_listed(words)} "
                             f"{'have' if many else 'has'}"
                             f" norm 0 (or a {self._host[False].dtype} norm that overflows, ≥ "
                             f"{float(np.finfo(self._host[False].dtype).max):.3g}) and cannot be L2-normalised; pass "
                             "normalize=False or drop the word (stop_words)")


def _read_text_vectors(path: str, unicode_errors: str = "strict") -> WordEmbeddings:
    """word2vec / fastText text (header ``count dim``) or GloVe text (no header), parsed as gensim's
    ``load_word2vec_format``: each line's bytes right-stripped, decoded as UTF-8 with ``unicode_errors``, split on
    single spaces; the first field is the word."""
    words, rows = [], []
    seen: set = set()
    expected, count, first_line = None, None, 0
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            try:
                line = raw.rstrip().decode("utf-8", errors=unicode_errors)
            except UnicodeDecodeError as error:
                raise ValueError(
                    f"`embeddings` file {path!r}, line {number}: byte {raw[error.start:error.start + 1]!r} at column "
                    f"{error.start + 1} is not UTF-8 ({error.reason}); pass unicode_errors='ignore' or 'replace' to "
                    "read it as gensim's load_word2vec_format(unicode_errors=...) does") from None
            parts = line.split(" ")
            if number == 1 and len(parts) == 2 and all(part.isdigit() for part in parts):
                count, expected, first_line = int(parts[0]), int(parts[1]), number
                continue
            if len(parts) < 2:
                continue
            if count is not None and len(words) >= count:
                break  # gensim reads the number of words the header announces
            try:
                row = [float(x) for x in parts[1:]]
            except ValueError:
                raise ValueError(f"`embeddings` file {path!r}, line {number}: the vector of {parts[0]!r} holds a value "
                                 "that is not a number") from None
            if expected is None:
                expected, first_line = len(row), number
            if len(row) != expected:
                raise ValueError(f"`embeddings` file {path!r}, line {number}: the vector of {parts[0]!r} has "
                                 f"{len(row)} values, expected {expected} (as on line {first_line})")
            words.append(parts[0])
            if parts[0] in seen:
                rows.append(None)  # gensim keeps the first vector of a duplicate word
                continue
            seen.add(parts[0])
            rows.append(row)
    if not seen:
        raise ValueError(f"`embeddings` file {path!r} is not word2vec/GloVe text (one word and its vector per line)")
    if count is not None and len(words) < count:
        raise ValueError(f"`embeddings` file {path!r}: the header announces {count} words, the file holds {len(words)}")
    keep = [i for i, row in enumerate(rows) if row is not None]
    return WordEmbeddings([words[i] for i in keep], np.asarray([rows[i] for i in keep], dtype=np.float64))


def load_embeddings(source: Any, unicode_errors: str = "strict") -> WordEmbeddings:
    """Read word vectors once: a ``{word: vector}`` mapping, gensim ``KeyedVectors`` (or an object with ``.wv``), or a
    path to a word2vec / fastText ``.vec`` or GloVe text file, or a binary word2vec file (``.bin``, via gensim).

    Args:
        source: the vectors (see above), or a :class:`WordEmbeddings` (returned as is).
        unicode_errors: how a file's bytes that are not UTF-8 are decoded — ``"strict"`` (a ``ValueError`` naming the
            file and line), ``"ignore"`` or ``"replace"`` (gensim's ``load_word2vec_format(unicode_errors=...)``).

    Raises:
        ValueError: a missing or malformed file (the message names the file and line: bytes that are not UTF-8,
            vectors of different lengths, values that are not numbers), or vectors with NaN / infinite / beyond
            float32 components (the message names the words).
        TypeError: ``source`` of an unknown kind.

    Example:
        >>> table = load_embeddings({"cat": [1.0, 0.0], "dog": [0.0, 2.0]})
        >>> len(table), table.normed[1].tolist()
        (2, [0.0, 1.0])
    """
    check_choice(unicode_errors, "unicode_errors", UNICODE_ERRORS)
    if isinstance(source, WordEmbeddings):
        return source
    if hasattr(source, "wv") and not hasattr(source, "key_to_index"):
        source = source.wv
    if hasattr(source, "key_to_index") and hasattr(source, "vectors"):  # gensim KeyedVectors: its own norms
        source.fill_norms()
        vectors = np.asarray(source.vectors)
        dtype = vectors.dtype if vectors.dtype in (np.float16, np.float32, np.float64) else np.float32
        return WordEmbeddings(list(source.index_to_key), vectors, source.norms, index=source.key_to_index,
                              dtype=dtype)
    if isinstance(source, Mapping):
        words = list(source)
        if not words or not all(isinstance(w, str) for w in words):
            raise ValueError("`embeddings` mapping must be a non-empty {word: vector} dict with string keys")
        rows = [np.asarray(source[w], dtype=np.float64).reshape(-1) for w in words]
        sizes = {row.shape[0] for row in rows}
        if len(sizes) != 1:
            first = rows[0].shape[0]
            odd, size = next((w, row.shape[0]) for w, row in zip(words, rows) if row.shape[0] != first)
            raise ValueError(f"`embeddings` vectors must all have one length: {words[0]!r} has {first} values, "
                             f"{odd!r} has {size}")
        return WordEmbeddings(words, np.stack(rows))
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        if not os.path.exists(path):
            raise ValueError(f"`embeddings` file {path!r} does not exist")
        if os.path.isdir(path):
            raise ValueError(f"`embeddings` path {path!r} is a directory, not a vector file")
        if path.endswith(".bin"):
            from gensim.models import KeyedVectors

            try:
                vectors = KeyedVectors.load_word2vec_format(path, binary=True, unicode_errors=unicode_errors)
            except UnicodeDecodeError as error:
                raise ValueError(f"`embeddings` file {path!r}: a word is not UTF-8 ({error}); pass "
                                 "unicode_errors='ignore' or 'replace' (gensim's load_word2vec_format "
                                 "option)") from None
            return load_embeddings(vectors)
        return _read_text_vectors(path, unicode_errors)
    raise TypeError(f"`embeddings` must be a {{word: vector}} dict, gensim KeyedVectors or a path to a vector file, "
                    f"got {describe_value(source)}")


def _as_documents(value: Any, name: str) -> list[list[str]]:
    if isinstance(value, str) or not is_sequence(value):
        raise TypeError(f"`{name}` must be a sequence of documents (strings or token lists), "
                        f"got {describe_value(value)}")
    docs = []
    for i, doc in enumerate(value):
        if isinstance(doc, str):
            docs.append(doc.split())
        elif is_sequence(doc) and all(isinstance(t, str) for t in doc):
            docs.append(list(doc))
        else:
            raise sample_error(TypeError, name, i, f"must be a string or a list of string tokens, got "
                                                   f"{describe_value(doc)}")
    return docs


def _bags(docs: list[list[str]], table: WordEmbeddings, stop: frozenset) -> tuple[np.ndarray, ...]:
    """Normalised bags of words of ``B`` documents, flat, on the host: ``(words, weights, lengths, tokens)``.

    ``words: int64[T]`` distinct in-vocabulary words of each document (sorted ids), ``weights: float64[T]``
    count / tokens kept, ``lengths: int64[B]`` distinct words per document, ``tokens: int64[B]`` kept tokens.
    """
    index, rows = table.index, max(table.vectors.shape[0], 1)
    ids = [[index[t] for t in doc if t in index and t not in stop] for doc in docs]
    tokens = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    flat = np.fromiter((i for doc in ids for i in doc), dtype=np.int64, count=int(tokens.sum()))
    owner = np.repeat(np.arange(len(docs), dtype=np.int64), tokens)
    key, counts = np.unique(owner * rows + flat, return_counts=True)  # sorted: document, then word id
    doc_of = key // rows
    weights = counts.astype(np.float64) / tokens[doc_of].astype(np.float64)
    return key % rows, weights, np.bincount(doc_of, minlength=len(docs)).astype(np.int64), tokens


def _pad(values: np.ndarray, lengths: np.ndarray, fill: float, width: int) -> np.ndarray:
    """Host ``[B, width]`` with each document's ``values`` left-aligned, ``fill`` elsewhere."""
    out = np.full((lengths.size, width), fill, dtype=values.dtype)
    starts = np.cumsum(lengths) - lengths
    out[np.repeat(np.arange(lengths.size), lengths), np.arange(values.size) - np.repeat(starts, lengths)] = values
    return out


def _check_options(method: Any, reg: Any, normalize: Any, stop_words: Any, max_iter: Any = 1000,
                   tol: Any = 1e-6) -> frozenset:
    check_choice(method, "method", WMD_METHODS)
    check_real(reg, "reg", above=0)
    # Sinkhorn's: max_iter=0 returned the cost of the unscaled kernel (1.7e-58 for a distance of 0.67), 2.5 an
    # unnamed TypeError from range(); checked for both methods, as reg is
    check_positive_int(max_iter, "max_iter")
    check_real(tol, "tol", at_least=0)
    check_bool(normalize, "normalize")
    if stop_words is not None and (isinstance(stop_words, (str, bytes)) or not isinstance(stop_words, Iterable)):
        raise TypeError(f"`stop_words` must be a collection of tokens, got {describe_value(stop_words)}")
    return frozenset(stop_words or ())


def word_movers_distance(
    preds: Sequence[Union[str, Sequence[str]]],
    target: Sequence[Union[str, Sequence[str]]],
    *,
    embeddings: Any,
    method: str = "emd",
    stop_words: Optional[Iterable[str]] = None,
    normalize: bool = True,
    reg: float = 0.01,
    max_iter: int = 1000,
    tol: float = 1e-6,
    unicode_errors: str = "strict",
    reduction: str = "mean",
    device: torch.device | str | None = None,
) -> Tensor:
    """Word Mover's Distance of every (prediction, target) pair, with gensim ``wmdistance``'s conventions.

    Args:
        preds: B documents (strings, split on whitespace, or token lists).
        target: B documents.
        embeddings: a ``{word: vector}`` dict, gensim ``KeyedVectors``, a vector file path, or a
            :class:`WordEmbeddings`.
        method: ``"emd"`` (exact, POT ``ot.emd2`` in float64 per pair) or ``"sinkhorn"`` (entropic, batched on
            ``device``).
        stop_words: tokens to drop before scoring (none by default, as gensim).
        normalize: L2-normalise the word vectors first (gensim's ``norm=True``).
        reg: Sinkhorn's entropic regularisation (same units as the distances, which lie in [0, 2] when normalised).
        max_iter: Sinkhorn's iteration limit.
        tol: Sinkhorn stops when no marginal weight is off by more than this.
        unicode_errors: for an ``embeddings`` file: ``"strict"`` (bytes that are not UTF-8 raise ``ValueError``
            naming the file and line), ``"ignore"`` or ``"replace"``, as gensim's ``load_word2vec_format``.
        reduction: ``"mean"`` (default, as every per-sample metric), ``"sum"`` or ``"none"`` (per pair).
        device: device of the result and of Sinkhorn's work (the exact EMD runs on the host: POT is a CPU solver);
            CPU by default.

    Returns:
        ``DoubleTensor[]`` on ``device`` for ``"mean"``/``"sum"``, ``DoubleTensor[B]`` for ``"none"``; a distance is
        ``inf`` where a document has no in-vocabulary word (and then the mean is ``inf``).

    Raises:
        TypeError: documents are not strings / token lists, ``embeddings`` of an unknown kind.
        ValueError: different numbers of documents, unknown ``method``, ``reg`` ≤ 0; an ``embeddings`` file that is
            not UTF-8 (with ``unicode_errors="strict"``) or holds vectors of different lengths (file and line named);
            vectors with NaN, infinite or beyond-float32 components; with ``normalize=True``, a document word whose
            vector has norm 0.

    Example:
        >>> vectors = {"cat": [1.0, 0.0], "kitten": [0.9, 0.1], "dog": [0.0, 1.0], "sat": [0.5, 0.5]}
        >>> distances = word_movers_distance(["cat sat", "dog"], ["kitten sat", "cat cat"], embeddings=vectors,
        ...                                  reduction="none")
        >>> [round(d, 4) for d in distances.tolist()]
        [0.0553, 1.4142]
        >>> round(word_movers_distance(["cat sat", "dog"], ["kitten sat", "cat cat"], embeddings=vectors).item(), 4)
        0.7348
    """
    stop = _check_options(method, reg, normalize, stop_words, max_iter, tol)
    check_choice(reduction, "reduction", ("mean", "sum", "none"))
    device = check_device(device, "device")
    scores = _wmd_update(preds, target, load_embeddings(embeddings, unicode_errors), method, stop, normalize,
                         float(reg), max_iter, tol, device)
    return reduce_scores(scores, reduction)


def _wmd_update(preds: Any, target: Any, table: WordEmbeddings, method: str, stop: frozenset, normalize: bool,
                reg: float, max_iter: int, tol: float, device: torch.device) -> Tensor:
    """Per-pair distances ``DoubleTensor[B]`` (the pair shared by the function and the module)."""
    preds, target = _as_documents(preds, "preds"), _as_documents(target, "target")
    check_same_length(preds, "preds", target, "target")
    size = len(preds)
    if size == 0:
        return torch.zeros(0, dtype=torch.float64, device=device)

    words_p, weights_p, lengths_p, tokens_p = _bags(preds, table, stop)
    words_t, weights_t, lengths_t, tokens_t = _bags(target, table, stop)
    if normalize:
        table.check_normalizable(np.concatenate([words_p, words_t]))
    p_side, t_side = (words_p, weights_p, lengths_p, tokens_p), (words_t, weights_t, lengths_t, tokens_t)
    buckets = _length_buckets(lengths_p, lengths_t, table.vectors.shape[1])
    if buckets is None:
        return _wmd_block(p_side, t_side, table, method, normalize, reg, max_iter, tol, device)
    out = torch.full((size,), math.inf, dtype=torch.float64, device=device)  # a pair in no bucket has an empty side
    for bucket in buckets:
        out[upload(bucket, device)] = _wmd_block(_take(p_side, bucket), _take(t_side, bucket), table, method,
                                                 normalize, reg, max_iter, tol, device)
    return out


_PAD_BUDGET_BYTES = 1 << 28  # what one padded block of pairs may take (or 4x the pairs' own) before pairs are bucketed


def _length_buckets(lengths_p: np.ndarray, lengths_t: np.ndarray, dim: int) -> Optional[list[np.ndarray]]:
    """Pairs in buckets of similar document lengths (:func:`~gpumetrics.kernels.ragged.size_buckets`), or None when
    one block padded to the longest documents (``[B, Wp + Wt, dim]`` vectors, ``[B, Wp, Wt]`` costs) takes at most
    4x what the pairs' own words take, or ``_PAD_BUDGET_BYTES``: one document of 1,000 words among 300 short pairs
    made 301 costs of 1,000 × 1,000 and 301 × 2,000 word vectors."""
    width_p, width_t = int(lengths_p.max(initial=0)), int(lengths_t.max(initial=0))
    padded = lengths_p.size * ((width_p + width_t) * dim + width_p * width_t)
    own = int(((lengths_p + lengths_t) * dim + lengths_p * lengths_t).sum())
    if 8 * padded <= max(4 * 8 * own, _PAD_BUDGET_BYTES):
        return None
    return size_buckets(lengths_p, lengths_t, slack=0)


def _take(side: tuple[np.ndarray, ...], pairs: np.ndarray) -> tuple[np.ndarray, ...]:
    """The bags ``(words, weights, lengths, tokens)`` of the documents ``pairs`` (host ``int64[p]``)."""
    words, weights, lengths, tokens = side
    kept = lengths[pairs]
    flat = np.repeat(ragged_starts(lengths)[pairs], kept) + ragged_offsets(kept)
    return words[flat], weights[flat], kept, tokens[pairs]


def _wmd_block(p_side: tuple[np.ndarray, ...], t_side: tuple[np.ndarray, ...], table: WordEmbeddings, method: str,
               normalize: bool, reg: float, max_iter: int, tol: float, device: torch.device) -> Tensor:
    """Distances ``DoubleTensor[B]`` of the pairs of two sides' bags (:func:`_bags`), padded to their longest."""
    (words_p, weights_p, lengths_p, tokens_p), (words_t, weights_t, lengths_t, tokens_t) = p_side, t_side
    # the layout on the host: padded ids and weights, the pairs with an empty side or one shared word
    width_p, width_t = max(int(lengths_p.max(initial=0)), 1), max(int(lengths_t.max(initial=0)), 1)
    ids_p, ids_t = _pad(words_p, lengths_p, -1, width_p), _pad(words_t, lengths_t, -1, width_t)
    a, b = _pad(weights_p, lengths_p, 0.0, width_p), _pad(weights_t, lengths_t, 0.0, width_t)
    empty = (tokens_p == 0) | (tokens_t == 0)
    union = np.concatenate([ids_p, ids_t], 1)
    single = ((union == union[:, :1]) | (union < 0)).all(1) & ~empty  # one and the same word on both sides: 0 (gensim)
    rows_p, rows_t = table.rows(np.maximum(ids_p, 0), normalize), table.rows(np.maximum(ids_t, 0), normalize)
    if method == "emd":  # POT solves on the CPU: the whole pair stays on the host, the distances go up once
        out = _emd_host(rows_p, rows_t, a, b, empty, single)
        return upload(out, device)
    base = np.where(empty, math.inf, 0.0)
    skip = (empty | single).astype(np.float64)
    a_d, b_d, rows_p_d, rows_t_d, base_d, skip_d = upload_all(
        [a, b, rows_p.astype(np.float64), rows_t.astype(np.float64), base, skip], device)  # one host-to-device copy
    valid = (a_d > 0)[:, :, None] & (b_d > 0)[:, None, :]  # the word slots (weights are > 0 exactly there)
    # exact differences (no |x|² + |y|² − 2xy expansion), float64, as scipy's cdist
    cost = torch.cdist(rows_p_d, rows_t_d, compute_mode="donot_use_mm_for_euclid_dist") * valid
    solve = skip_d == 0
    all_zero = (cost.sum((1, 2)).abs() < 1e-8) & solve  # gensim: inf (POT stalls on an all-zero cost)
    out = torch.where(all_zero, math.inf, base_d)
    rows = (solve & ~all_zero).nonzero()[:, 0]  # the pairs to solve (one host sync)
    if rows.numel():
        out[rows] = sinkhorn_batch(a_d[rows], b_d[rows], cost[rows], reg=reg, max_iter=max_iter, tol=tol).double()
    return out


def _emd_host(rows_p: np.ndarray, rows_t: np.ndarray, a: np.ndarray, b: np.ndarray, empty: np.ndarray,
              single: np.ndarray) -> np.ndarray:
    """Exact WMD of every pair on the host: ``float64[B]`` (``inf`` for an empty side or an all-zero cost)."""
    # exact differences (no |x|² + |y|² − 2xy expansion), float64, as scipy's cdist
    cost = torch.cdist(torch.from_numpy(rows_p).double(), torch.from_numpy(rows_t).double(),
                       compute_mode="donot_use_mm_for_euclid_dist").numpy()
    cost = cost * ((a > 0)[:, :, None] & (b > 0)[:, None, :])
    all_zero = (np.abs(cost.sum((1, 2))) < 1e-8) & ~empty & ~single  # gensim: inf (POT stalls on an all-zero cost)
    out = np.where(empty | all_zero, math.inf, 0.0)
    rows = np.flatnonzero(~(empty | single | all_zero))
    if rows.size:
        out[rows] = emd_host(a[rows], b[rows], cost[rows])
    return out


class WordMoversDistance(PerSampleScore):
    """Word Mover's Distance of (prediction, target) pairs accumulated over batches; see :func:`word_movers_distance`.

    The embedding table is read once when the module is built (it is configuration, not state); states are
    :class:`PerSampleScore`'s (sum and count, plus the distances for ``reduction="none"``). A pair with an empty
    document is ``inf`` and makes the mean ``inf``, as averaging gensim's distances would.

    Args:
        embeddings: as in :func:`word_movers_distance`.
        method, stop_words, normalize, reg, max_iter, tol, unicode_errors: as in :func:`word_movers_distance`.
        reduction: ``"mean"`` (default, as the function), ``"sum"`` or ``"none"``.
        kwargs: the ``Metric`` base options (torchmetrics' names: ``sync_on_compute``, ``dist_sync_fn`` …).

    Example:
        >>> metric = WordMoversDistance({"cat": [1.0, 0.0], "kitten": [0.9, 0.1], "dog": [0.0, 1.0]})
        >>> metric.update(["cat"], ["kitten"])
        >>> metric.update(["dog"], ["cat"])
        >>> round(metric.compute().item(), 4)
        0.7624
    """

    signature_name = "wmd"
    higher_is_better = False
    kernel_threads = 1  # small per-pair tensors (core/threads.py)

    def __init__(self, embeddings: Any, method: str = "emd", *, stop_words: Optional[Iterable[str]] = None,
                 normalize: bool = True, reg: float = 0.01, max_iter: int = 1000, tol: float = 1e-6,
                 unicode_errors: str = "strict", reduction: str = "mean", **kwargs: Any) -> None:
        super().__init__(reduction, **kwargs)
        self.stop = _check_options(method, reg, normalize, stop_words, max_iter, tol)
        self.table = load_embeddings(embeddings, unicode_errors)
        self.method, self.normalize, self.reg, self.max_iter, self.tol = method, normalize, float(reg), max_iter, tol

    def update(self, preds: Sequence[Union[str, Sequence[str]]], target: Sequence[Union[str, Sequence[str]]]) -> None:
        """Add B pairs of documents."""
        self._accumulate(_wmd_update(preds, target, self.table, self.method, self.stop, self.normalize, self.reg,
                                     self.max_iter, self.tol, self.device))

    def _signature_fields(self) -> dict[str, Any]:
        sinkhorn = self.method == "sinkhorn"  # an unconverged plan's cost depends on max_iter and tol too
        return {"method": self.method, "reg": self.reg if sinkhorn else None,
                "iter": self.max_iter if sinkhorn else None, "tol": self.tol if sinkhorn else None,
                "norm": self.normalize, "stop": len(self.stop) or None, "vocab": len(self.table),
                "dim": int(self.table.vectors.shape[1])}

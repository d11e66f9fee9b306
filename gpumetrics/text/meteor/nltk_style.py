"""METEOR as NLTK computes it (``nltk.translate.meteor_score``, NLTK 3.x), and the aligner the AIJ-2022 modes reuse.

**Reference:** ``nltk.translate.meteor_score.meteor_score(references, hypothesis)`` of NLTK 3.10.4, equal to 1e-9.

**Alignment** (one hypothesis against one reference, tokens lower-cased first), three greedy stages, each on the
words the stages before left unaligned:

1. *exact*: hypothesis words from the **last** to the first; each takes the **last** unaligned reference word equal
   to it;
2. *stem*: the same on stems (Porter by default, any ``stem(word)`` object allowed); from here on both word lists
   hold stems — NLTK's quirk, kept;
3. *synonym*: hypothesis stems from the last to the first; each takes the last unaligned reference stem that is in
   ``synonyms.synonyms(stem)`` (WordNet lemma names by default, see :mod:`.synonyms`).

**Score:** ``m`` aligned words, ``t``/``r`` hypothesis/reference lengths, ``P = m/t``, ``R = m/r``,
``Fmean = P·R / (α·P + (1−α)·R)``, ``chunks`` = runs of alignments adjacent in both sentences (alignments sorted by
hypothesis position), ``score = Fmean · (1 − γ·(chunks/m)^β)``; **0** when ``t``, ``r`` or ``m`` is 0 (or the
``Fmean`` denominator is 0), as NLTK's ``ZeroDivisionError`` branch. Several references: the **max**.

**Inputs:** pre-tokenised token lists (``hypotheses[i]: list[str]``, ``references[i]: list[list[str]]``), or
strings split on whitespace (``hypotheses[i]: str``, ``references[i]: str | list[str]``); the kind of
``hypotheses`` decides. No other tokenisation is applied (NLTK applies none either).

**Speed:** the greedy alignment is sequential per pair and stays Python (dictionary look-ups, no ``O(t·r)`` scans);
stems and synonym sets are cached per distinct word, identical pairs are aligned once; the formula and the max over
references are tensor work.
"""

from __future__ import annotations

import functools
from itertools import chain
from typing import Any, Callable, Iterable, Optional, Sequence

import torch
from torch import Tensor

from gpumetrics.core import check_device, check_same_length
from gpumetrics.core.checks import check_real, describe_value, is_sequence
from gpumetrics.core.positions import convert_each
from gpumetrics.core.transfer import upload
from gpumetrics.text.meteor.synonyms import SynonymProvider, WordNetSynonyms, as_synonym_provider

__all__ = [
    "nltk_meteor_scores", "align_words", "count_chunks", "pair_statistics", "meteor_from_statistics",
    "best_per_sample", "cached_stemmer", "porter_stem",
]

Tokens = tuple[str, ...]
Items = list[tuple[int, str]]  # (position in the sentence, word or stem), positions ascending
Stem = Callable[[str], str]

_CACHE_SIZE = 1 << 18


# ---------------------------------------------------------------------------------------------------- stemmers
@functools.lru_cache(maxsize=1)
def _porter() -> Any:
    from nltk.stem.porter import PorterStemmer

    return PorterStemmer()  # NLTK_EXTENSIONS mode, NLTK's meteor default


@functools.lru_cache(maxsize=_CACHE_SIZE)
def porter_stem(word: str) -> str:
    """NLTK's ``PorterStemmer().stem(word)`` (cached).

    Example:
        >>> porter_stem("running"), porter_stem("generously")
        ('run', 'gener')
    """
    return _porter().stem(word)


def cached_stemmer(stemmer: Any, name: str = "stemmer") -> Stem:
    """A cached ``word → stem`` function from ``None`` (Porter), an object with ``stem(word)`` or a callable.

    Raises:
        TypeError: ``stemmer`` is none of these.

    Example:
        >>> cached_stemmer(None)("cats"), cached_stemmer(str.upper)("cats")
        ('cat', 'CATS')
    """
    if stemmer is None:
        return porter_stem
    stem = getattr(stemmer, "stem", stemmer)
    if not callable(stem):
        raise TypeError(f"`{name}` must have a stem(word) method or be a callable, got {describe_value(stemmer)}")
    return functools.lru_cache(maxsize=_CACHE_SIZE)(stem)


# ---------------------------------------------------------------------------------------------------- alignment
def _positions_by_word(items: Items) -> dict[str, list[int]]:
    positions: dict[str, list[int]] = {}
    for position, word in items:
        positions.setdefault(word, []).append(position)
    return positions


def _left_over(positions: dict[str, list[int]]) -> Items:
    return sorted((position, word) for word, remaining in positions.items() for position in remaining)


def _match_equal(hyp: Items, ref: Items) -> tuple[list[tuple[int, int]], Items, Items]:
    """Stages 1–2: last hypothesis word first, each to the last unaligned equal reference word."""
    positions = _positions_by_word(ref)
    matches, hyp_left = [], []
    for position, word in reversed(hyp):
        candidates = positions.get(word)
        if candidates:
            matches.append((position, candidates.pop()))
        else:
            hyp_left.append((position, word))
    return matches, hyp_left[::-1], _left_over(positions)


def _match_synonyms(hyp: Items, ref: Items, synonyms: SynonymProvider) -> list[tuple[int, int]]:
    """Stage 3: last hypothesis stem first, each to the last unaligned reference stem among its synonyms."""
    positions = _positions_by_word(ref)
    matches = []
    for position, word in reversed(hyp):
        best_word, best_position = None, -1
        for candidate in synonyms.synonyms(word) & positions.keys():
            remaining = positions[candidate]
            if remaining and remaining[-1] > best_position:
                best_word, best_position = candidate, remaining[-1]
        if best_word is not None:
            matches.append((position, positions[best_word].pop()))
    return matches


def _stemmed(items: Items, stem: Stem) -> Items:
    return [(position, stem(word)) for position, word in items]


def align_words(hyp: Tokens, ref: Tokens, stem: Stem, synonyms: SynonymProvider) -> list[tuple[int, int]]:
    """NLTK's greedy exact → stem → synonym alignment of two lower-cased token tuples.

    Args:
        hyp: ``t`` hypothesis tokens, lower-cased.
        ref: ``r`` reference tokens, lower-cased.
        stem: ``word → stem`` (see :func:`cached_stemmer`).
        synonyms: the synonym provider (asked about stems).

    Returns:
        ``(hypothesis position, reference position)`` pairs sorted by hypothesis position, as NLTK's
        ``align_words(...)[0]``.

    Example:
        >>> from gpumetrics.text.meteor.synonyms import DictSynonyms
        >>> align_words(("the", "cats", "sat"), ("a", "cat", "sat"), porter_stem, DictSynonyms({"the": ["a"]}))
        [(0, 0), (1, 1), (2, 2)]
    """
    exact, hyp_left, ref_left = _match_equal(list(enumerate(hyp)), list(enumerate(ref)))
    if not hyp_left or not ref_left:
        return sorted(exact)
    stemmed, hyp_left, ref_left = _match_equal(_stemmed(hyp_left, stem), _stemmed(ref_left, stem))
    synonym = _match_synonyms(hyp_left, ref_left, synonyms) if hyp_left and ref_left else []
    return sorted(exact + stemmed + synonym)


def count_chunks(matches: Sequence[tuple[int, int]]) -> int:
    """Runs of alignments adjacent in both sentences (``matches`` sorted by hypothesis position); 1 when empty.

    Example:
        >>> count_chunks([(0, 0), (1, 1), (3, 2)])
        2
    """
    breaks = sum(1 for (h0, r0), (h1, r1) in zip(matches, matches[1:]) if h1 != h0 + 1 or r1 != r0 + 1)
    return 1 + breaks


def pair_statistics(
    hyps: Sequence[Tokens], refs: Sequence[Tokens], stem: Stem, synonyms: SynonymProvider
) -> tuple[list[int], list[int]]:
    """Aligned-word and chunk counts of ``P`` (hypothesis, reference) pairs; identical pairs are aligned once.

    Returns:
        ``(matches, chunks)``, two ``list[int]`` of length ``P``.
    """
    seen: dict[tuple[Tokens, Tokens], tuple[int, int]] = {}
    matches, chunks = [], []
    for pair in zip(hyps, refs):
        counts = seen.get(pair)
        if counts is None:
            aligned = align_words(pair[0], pair[1], stem, synonyms)
            counts = seen[pair] = (len(aligned), count_chunks(aligned))
        matches.append(counts[0])
        chunks.append(counts[1])
    return matches, chunks


# ---------------------------------------------------------------------------------------------------- tensor scoring
def meteor_from_statistics(
    matches: Tensor, chunks: Tensor, hyp_len: Tensor, ref_len: Tensor, alpha: float, beta: float, gamma: float
) -> Tensor:
    """NLTK's sentence METEOR from per-pair counts, with its zero cases.

    Args:
        matches, chunks, hyp_len, ref_len: ``Tensor[P]`` counts (any numeric dtype, one device).
        alpha, beta, gamma: the METEOR parameters.

    Returns:
        ``DoubleTensor[P]``: ``Fmean·(1 − γ·(chunks/m)^β)``, 0 where ``t``, ``r`` or ``m`` or the Fmean denominator
        is 0.

    Example:
        >>> t = torch.tensor
        >>> meteor_from_statistics(t([3, 0]), t([1, 1]), t([3, 2]), t([4, 2]), 0.9, 3.0, 0.5)
        tensor([0.7550, 0.0000], dtype=torch.float64)
    """
    matches, chunks, hyp_len, ref_len = (value.double() for value in (matches, chunks, hyp_len, ref_len))
    undefined = (matches == 0) | (hyp_len == 0) | (ref_len == 0)
    one = torch.ones_like(matches)
    precision = matches / torch.where(undefined, one, hyp_len)  # same operations, same order as NLTK, in float64
    recall = matches / torch.where(undefined, one, ref_len)
    denominator = alpha * precision + (1 - alpha) * recall
    undefined |= denominator == 0
    fmean = (precision * recall) / torch.where(undefined, one, denominator)
    penalty = gamma * (chunks / torch.where(undefined, one, matches)) ** beta
    return torch.where(undefined, torch.zeros_like(fmean), (1 - penalty) * fmean)


def best_per_sample(pair_scores: Tensor, pair_sample: Tensor, n_samples: int, floor: Optional[float] = None) -> Tensor:
    """Max of the pair scores of each sample (``scatter_reduce``).

    Args:
        pair_scores: ``DoubleTensor[P]``.
        pair_sample: ``LongTensor[P]``, the sample of each pair.
        n_samples: ``B``.
        floor: the max starts from this value (the AIJ scripts start from 0 and ignore NaN); ``None``: a plain max.

    Returns:
        ``DoubleTensor[B]``.
    """
    if floor is not None:
        pair_scores = torch.where(pair_scores.isnan(), torch.full_like(pair_scores, floor), pair_scores)
    start = float("-inf") if floor is None else floor
    best = torch.full((n_samples,), start, dtype=torch.float64, device=pair_scores.device)
    return best.scatter_reduce(0, pair_sample, pair_scores, reduce="amax")


def meteor_pair_scores(
    hyps: Sequence[Tokens],
    refs: Sequence[Tokens],
    *,
    stem: Stem,
    synonyms: SynonymProvider,
    alpha: float,
    beta: float,
    gamma: float,
    device: torch.device,
) -> Tensor:
    """NLTK-style METEOR of ``P`` lower-cased (hypothesis, reference) token pairs: ``DoubleTensor[P]``."""
    matches, chunks = pair_statistics(hyps, refs, stem, synonyms)
    counts = upload(torch.tensor(
        [matches, chunks, [len(hyp) for hyp in hyps], [len(ref) for ref in refs]], dtype=torch.float64
    ).reshape(4, len(hyps)), device)
    return meteor_from_statistics(*counts, alpha=alpha, beta=beta, gamma=gamma)


# ---------------------------------------------------------------------------------------------------- inputs
def check_parameter(value: Any, name: str) -> float:
    """A finite real METEOR parameter as float, or ``TypeError``/``ValueError`` naming it."""
    return check_real(value, name)


def _as_tokens(value: Any, name: str) -> Tokens:
    if not is_sequence(value):
        raise TypeError(f"`{name}` must be a list of string tokens, got {describe_value(value)}")
    tokens = tuple(value)
    for k, token in enumerate(tokens):
        if not isinstance(token, str):
            raise TypeError(f"`{name}[{k}]` must be a string token, got {describe_value(token)}")
    return tokens


def _lowered(tokens: Iterable[str]) -> Tokens:
    return tuple(map(str.lower, tokens))


def as_token_batch(hypotheses: Any, references: Any) -> tuple[list[Tokens], list[list[Tokens]]]:
    """Lower-cased token tuples of a batch given as token lists or as whitespace-separated strings.

    Args:
        hypotheses: ``B`` strings (or one string), or ``B`` token lists.
        references: with string hypotheses, ``B`` items each a string or a non-empty list of strings; with token
            hypotheses, ``B`` non-empty lists of token lists.

    Returns:
        ``(hyps, refs)``: ``B`` token tuples and ``B`` lists of token tuples.

    Raises:
        TypeError: an item has the wrong type (the message names it, e.g. ``references[2][0]``, and the error is
            tagged with the sample's position, :mod:`gpumetrics.core.positions`).
        ValueError: the batch sizes differ or a sample has no reference.
    """
    if isinstance(hypotheses, str):
        hypotheses = [hypotheses]
    if not is_sequence(hypotheses):
        raise TypeError(f"`hypotheses` must be a list of strings or of token lists, got {describe_value(hypotheses)}")
    hypotheses = list(hypotheses)
    strings = all(isinstance(hyp, str) for hyp in hypotheses)
    if isinstance(references, str):
        references = [references]
    if not is_sequence(references):
        raise TypeError(f"`references` must be a list with one item per hypothesis, got {describe_value(references)}")
    references = list(references)
    check_same_length(hypotheses, "hypotheses", references, "references")
    if strings:
        return [_lowered(hyp.split()) for hyp in hypotheses], convert_each(_string_references, references,
                                                                           "references[{}]".format)
    hyps = convert_each(lambda hyp, name: _lowered(_as_tokens(hyp, name)), hypotheses, "hypotheses[{}]".format)
    return hyps, convert_each(_token_references, references, "references[{}]".format)


def _string_references(refs: Any, name: str) -> list[Tokens]:
    if isinstance(refs, str):
        return [_lowered(refs.split())]
    if not is_sequence(refs):
        raise TypeError(f"`{name}` must be a string or a list of strings (as hypotheses), got {describe_value(refs)}")
    out = []
    for j, ref in enumerate(refs):
        if not isinstance(ref, str):
            raise TypeError(f"`{name}[{j}]` must be a string (hypotheses are strings), got {describe_value(ref)}")
        out.append(_lowered(ref.split()))
    if not out:
        raise ValueError(f"`{name}` holds no reference; every hypothesis needs at least one")
    return out


def _token_references(refs: Any, name: str) -> list[Tokens]:
    if not is_sequence(refs):
        raise TypeError(f"`{name}` must be a list of token lists (hypotheses are token lists), "
                        f"got {describe_value(refs)}")
    out = [_lowered(_as_tokens(ref, f"{name}[{j}]")) for j, ref in enumerate(refs)]
    if not out:
        raise ValueError(f"`{name}` holds no reference; every hypothesis needs at least one")
    return out


def flatten_pairs(
    hyps: Sequence[Tokens], refs: Sequence[Sequence[Tokens]]
) -> tuple[list[Tokens], list[Tokens], list[int]]:
    """One (hypothesis, reference) pair per reference: ``(pair_hyps, pair_refs, pair_sample)``."""
    pair_sample = [i for i, sample_refs in enumerate(refs) for _ in sample_refs]
    return [hyps[i] for i in pair_sample], list(chain.from_iterable(refs)), pair_sample


# ---------------------------------------------------------------------------------------------------- public function
def nltk_meteor_scores(
    hypotheses: Any,
    references: Any,
    *,
    alpha: float = 0.9,
    beta: float = 3.0,
    gamma: float = 0.5,
    stemmer: Any = None,
    synonyms: Any = None,
    device: Any = None,
) -> Tensor:
    """Sentence METEOR of every hypothesis, max over its references, as ``nltk.translate.meteor_score``.

    Args:
        hypotheses: ``B`` token lists (``list[str]``) or ``B`` strings split on whitespace.
        references: ``B`` non-empty lists of references: token lists with token hypotheses; strings (or one string
            per sample) with string hypotheses. Tokens are lower-cased, as NLTK's ``preprocess=str.lower``.
        alpha: precision/recall weight α of ``Fmean = P·R / (α·P + (1−α)·R)``.
        beta: fragmentation exponent β.
        gamma: fragmentation penalty weight γ.
        stemmer: ``None`` (NLTK's ``PorterStemmer()``), an object with ``stem(word)`` (any NLTK stemmer) or a
            callable ``word → stem``.
        synonyms: ``None`` (:class:`~gpumetrics.text.meteor.synonyms.WordNetSynonyms`, which needs NLTK's WordNet
            corpus on disk), a :class:`~gpumetrics.text.meteor.synonyms.SynonymProvider`, a mapping
            ``word → synonyms`` or the path of a TSV file.
        device: where the scoring runs (default the CPU).

    Returns:
        ``DoubleTensor[B]``.

    Raises:
        TypeError: a malformed input or parameter (the message names it).
        ValueError: batch sizes differ, a sample has no reference, a parameter is not finite.
        FileNotFoundError: ``synonyms=None`` and NLTK's WordNet corpus is not installed.

    Example:
        >>> from gpumetrics.text.meteor.synonyms import NoSynonyms
        >>> nltk_meteor_scores(["the cat sat on the mat"], [["a cat sat on a mat", "the cat is here"]],
        ...                    synonyms=NoSynonyms())
        tensor([0.6250], dtype=torch.float64)
    """
    alpha, beta, gamma = check_parameter(alpha, "alpha"), check_parameter(beta, "beta"), check_parameter(gamma, "gamma")
    device = check_device(device)
    stem = cached_stemmer(stemmer)
    provider = WordNetSynonyms() if synonyms is None else as_synonym_provider(synonyms)
    hyps, refs = as_token_batch(hypotheses, references)
    pair_hyps, pair_refs, pair_sample = flatten_pairs(hyps, refs)
    scores = meteor_pair_scores(
        pair_hyps, pair_refs, stem=stem, synonyms=provider, alpha=alpha, beta=beta, gamma=gamma, device=device
    )
    return best_per_sample(scores, upload(torch.tensor(pair_sample, dtype=torch.long), device), len(hyps))

"""``mode="meteor-1.5"``: the METEOR 1.5 jar as pycocoevalcap runs it (``-l en -norm``, task ``rank``), on tensors.

Per (hypothesis, reference) pair — all pairs of a batch at once:

1. words: the jar's ``-norm`` normaliser and lower-casing (:class:`~gpumetrics.text.tokenize.meteor.MeteorTokenizer`);
   a word's identity is Java's 32-bit ``String.hashCode`` (two different words with one hash match "exactly", as in
   the jar); identical word sequences use the exact matcher only;
2. candidate matches, in the jar's order at every reference position: exact (equal words), stem (equal Snowball
   stems, different words), synonym (a shared WordNet synset, different words), paraphrase (phrase pairs of the
   table, the reference's phrases first, then the hypothesis's) — all pairs of words at once from one Cartesian
   product per pair; paraphrases from one walk of the table's trie per sentence and two sorted joins;
3. the alignment: :func:`gpumetrics.kernels.alignment.beam_align` (fixed one-to-one matches, beam 40, the jar's
   ranking and its integer/distance quirks);
4. statistics (the jar's 23 numbers: lengths, function words, per-stage content/function matches on each side,
   chunks, matched words) and the score ``Fmean · (1 − γ·frag^β)``; the best reference is the first one with the
   highest score;
5. the corpus score (pycocoevalcap's number) from the **sums** of the statistics, where a segment that matched
   completely in one chunk adds no chunk — as the jar's ``EVAL`` does.

Where it runs: steps 1–3 and the pair statistics are **host work in numpy** — the matchers' joins have sizes that
depend on values and the beam search is a loop over reference positions on short arrays, so on a GPU every step
would be a host synchronisation and a few-µs kernel launch per operation. The ``float64[P, 23]`` pair statistics
(and each pair's sample) reach the metric's device in ONE :func:`~gpumetrics.core.transfer.upload_all` (pinned,
non-blocking on CUDA); the scores, the best reference and the corpus sums are computed there (no host
synchronisation: an ``update`` on CUDA waits for nothing but the tokeniser).

pycocoevalcap's wrapper removes ``|||`` from a hypothesis and collapses double spaces; a reference containing
``|||`` reaches the jar as several references. Both are reproduced. Where the wrapper breaks (a newline in a caption
ends its protocol line and hangs it), this implementation treats the newline as a space.
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Any, NamedTuple, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core.checks import check_int
from gpumetrics.core.positions import at_position
from gpumetrics.core.transfer import DeviceArg, upload_all
from gpumetrics.kernels.alignment import Matches, beam_align, ragged_ids, ragged_offsets, ragged_starts
from gpumetrics.kernels.ngrams import TokenBatch
from gpumetrics.text.meteor import tables
from gpumetrics.text.tokenize import get_tokenizer
from gpumetrics.text.tokenize.base import dense_ids, encode_token_lists

#: per language: (alpha, beta, gamma, delta), module weights (scoring), modules
PARAMETERS = {
    "en": ((0.85, 0.20, 0.60, 0.75), (1.0, 0.6, 0.8, 0.6), ("exact", "stem", "synonym", "paraphrase")),
    "ru": ((0.75, 1.40, 0.70, 0.50), (1.0, 0.5), ("exact", "stem")),
}
_SEARCH_WEIGHTS = {"exact": 1.0, "stem": 0.5, "synonym": 0.5, "paraphrase": 0.5}
MAX_MODULES = 4
STATS = 4 + 4 * MAX_MODULES + 3  # the jar's statistics line
_CHUNKS, _TEST_WORDS, _REF_WORDS = 20, 21, 22
BEAM = 40


class Sentences(NamedTuple):
    """Words of hypotheses (line 1) and references (line 2) as vocabulary ids, and the per-word facts (host arrays)."""

    hyp_words: np.ndarray  # int64[T1] vocabulary ids, hypotheses concatenated
    hyp_lengths: np.ndarray  # int64[B]
    ref_words: np.ndarray  # int64[T2], references concatenated (reference p belongs to pair p)
    ref_lengths: np.ndarray  # int64[P]
    owner: np.ndarray  # int64[P] hypothesis of each pair
    word_hash: np.ndarray  # int64[V] Java hash of each vocabulary word
    stem_hash: np.ndarray  # int64[V]
    function: np.ndarray  # bool[V]
    table_id: np.ndarray  # int64[V] paraphrase-table id (-1: none)
    synonym_keys: np.ndarray  # int64[K] sorted a·V + b for vocabulary words a ≠ b sharing a synset


def split_references(target: Sequence[Sequence[str]]) -> list[list[str]]:
    """References as the jar receives them from pycocoevalcap: ``|||`` inside a reference separates references."""
    return [[part for reference in references for part in reference.split("|||")] for references in target]


def clean_hypothesis(text: str) -> str:
    """pycocoevalcap's hypothesis cleaning: ``|||`` removed, then double spaces collapsed once."""
    return text.replace("|||", "").replace("  ", " ")


@functools.lru_cache(maxsize=2)
def _word_table(language: str) -> tables.WordTable:
    return tables.WordTable(language)


def encode(preds: Sequence[str], target: Sequence[Sequence[str]], language: str) -> Sentences:
    """Tokenise, build the batch vocabulary and look up every per-word fact (host work, once per distinct word)."""
    tokenizer = get_tokenizer("meteor-1.5", language=language)
    references = split_references(target)
    hyp_tokens = tokenizer.tokenize_batch([clean_hypothesis(text) for text in preds])
    ref_tokens = tokenizer.tokenize_batch([text for refs in references for text in refs])
    ref_counts = np.fromiter(map(len, references), dtype=np.int64, count=len(references))
    return sentences(encode_token_lists(hyp_tokens + ref_tokens), ref_counts, language)


_PLAIN_PIECE = re.compile("[a-z0-9]*")  # a piece that the -norm and lower-casing leave as it is


def words_of_pieces(
    pieces: TokenBatch, lines: Sequence[str], ref_counts: np.ndarray, language: str
) -> Optional[TokenBatch]:
    """The jar's words of ``B`` hypotheses then their references, from the ``" "``-split ``pieces`` of those
    ``lines`` (one shared vocabulary): a line of lower-case ASCII letters, digits and spaces normalises to its
    non-empty pieces, only the other lines are normalised. ``None`` where a reference holds ``|||`` (more
    references reach the jar): then :func:`encode` the strings."""
    samples = ref_counts.size
    if any("|||" in line for line in lines[samples:]):
        return None
    vocabulary = pieces.vocabulary
    plain = np.fromiter((_PLAIN_PIECE.fullmatch(piece) is not None for piece in vocabulary), dtype=bool,
                        count=len(vocabulary))
    ids, lengths = pieces.ids, pieces.lengths
    line_of_piece = np.repeat(np.arange(lengths.size), lengths)
    plain_line = np.bincount(line_of_piece, weights=~plain[ids], minlength=lengths.size) == 0
    other = np.flatnonzero(~plain_line)
    empty = vocabulary.index("") if "" in vocabulary else -1
    kept = plain_line[line_of_piece] & (ids != empty)
    kept_length = np.bincount(line_of_piece[kept], minlength=lengths.size)
    tokenizer = get_tokenizer("meteor-1.5", language=language)
    other_tokens = tokenizer.tokenize_batch(
        [clean_hypothesis(lines[line]) if line < samples else lines[line] for line in other.tolist()]
    )
    # the pieces' vocabulary keeps its ids (its entries are distinct), new words follow by first appearance
    extended_ids, extended = dense_ids([*vocabulary, *itertools.chain.from_iterable(other_tokens)])
    other_ids = extended_ids[len(vocabulary) :]
    other_length = np.zeros(lengths.size, dtype=np.int64)
    other_length[other] = np.fromiter(map(len, other_tokens), dtype=np.int64, count=other.size)
    # line l takes its plain pieces (pool[: kept]) or its normalised words (pool[kept :]), lines in order
    pool = np.concatenate((ids[kept], other_ids))
    source_start = np.where(plain_line, np.cumsum(kept_length) - kept_length,
                            int(kept.sum()) + np.cumsum(other_length) - other_length)
    length = np.where(plain_line, kept_length, other_length)
    ends = np.cumsum(length)
    words = pool[np.repeat(source_start - (ends - length), length) + np.arange(int(ends[-1]) if ends.size else 0)]
    # the facts of :func:`sentences` are looked up for the words that occur only
    used = np.bincount(words, minlength=len(extended)) > 0
    renumber = np.cumsum(used) - 1
    vocabulary = list(itertools.compress(extended, used))
    return TokenBatch(renumber[words], length, len(vocabulary), vocabulary)


def sentences(words: TokenBatch, ref_counts: np.ndarray, language: str) -> Sentences:
    """:class:`Sentences` of the jar's words (host batch) of ``B`` hypotheses, then of their references (sample after
    sample, ``ref_counts: int64[B]`` each)."""
    vocabulary = words.vocabulary
    samples = ref_counts.size
    table = _word_table(language)
    function = tables.function_words(language)
    modules = PARAMETERS[language][2]
    table_id = tables.paraphrase_table().ids(vocabulary) if "paraphrase" in modules else np.full(len(vocabulary), -1)
    synonym_keys = _synonym_keys(vocabulary) if "synonym" in modules else np.zeros(0, dtype=np.int64)
    ids, lengths = np.asarray(words.ids, dtype=np.int64), np.asarray(words.lengths, dtype=np.int64)
    hyp_tokens = int(lengths[:samples].sum())
    hashes = np.asarray(table.hashes(vocabulary), dtype=np.int64)
    return Sentences(
        hyp_words=ids[:hyp_tokens],
        hyp_lengths=lengths[:samples],
        ref_words=ids[hyp_tokens:],
        ref_lengths=lengths[samples:],
        owner=ragged_ids(np.asarray(ref_counts, dtype=np.int64)),
        word_hash=hashes,
        stem_hash=np.asarray(table.stem_hashes(vocabulary), dtype=np.int64) if "stem" in modules else hashes,
        function=np.fromiter((word in function for word in vocabulary), dtype=bool, count=len(vocabulary)),
        table_id=np.asarray(table_id, dtype=np.int64),
        synonym_keys=synonym_keys,
    )


def _synonym_keys(vocabulary: Sequence[str]) -> np.ndarray:
    """Sorted ``a · V + b`` for every ordered pair of distinct vocabulary words that share a synset."""
    table = tables.synonym_table()
    sets = [table.synsets(word) for word in vocabulary]
    counts = np.fromiter(map(len, sets), dtype=np.int64, count=len(sets))
    if counts.sum() == 0:
        return np.zeros(0, dtype=np.int64)
    word = ragged_ids(counts)
    synset = np.fromiter((s for group in sets for s in group), dtype=np.int64, count=int(counts.sum()))
    order = np.argsort(synset, kind="stable")
    word, synset = word[order], synset[order]
    _, group_sizes = np.unique(synset, return_counts=True)
    # every (a, b) inside each synset group: the per-group Cartesian product
    per_group = group_sizes * group_sizes
    group = ragged_ids(per_group)
    local = ragged_offsets(per_group, group)
    a, b = local // group_sizes[group], local % group_sizes[group]
    first = ragged_starts(group_sizes)
    left, right = word[first[group] + a], word[first[group] + b]
    keep = left != right
    return np.unique(left[keep] * len(vocabulary) + right[keep])


# ---------------------------------------------------------------------------------------------------- matchers
class _Candidates(NamedTuple):
    """Candidate matches before ordering; ``order`` holds the jar's order keys (most significant first)."""

    pair: np.ndarray
    start: np.ndarray
    length: np.ndarray
    match_start: np.ndarray
    match_length: np.ndarray
    module: np.ndarray
    order: tuple[np.ndarray, ...]


def _lexsort(keys: Sequence[np.ndarray]) -> np.ndarray:
    """Stable order by ``keys[0]``, then ``keys[1]`` … (non-negative ``int64``): adjacent keys packed into one
    ``int64`` while their ranges fit in 62 bits, then one stable sort per packed key."""
    packed: list[np.ndarray] = []  # least significant first
    current, span = None, 1
    for key in reversed(keys):
        top = int(key.max()) + 1 if key.size else 1
        if current is not None and span * top < 1 << 62:
            current, span = key * span + current, span * top
        else:
            if current is not None:
                packed.append(current)
            current, span = key, top
    packed.append(current)
    if len(packed) == 1:
        return np.argsort(packed[0], kind="stable")
    return np.lexsort(packed)


def _equal_keys(key1: np.ndarray, key2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every ``(k1, k2)`` with ``key1[k1] == key2[k2]`` (a sort join: both sides sorted, one searchsorted)."""
    order1, order2 = np.argsort(key1, kind="stable"), np.argsort(key2, kind="stable")
    sorted1, sorted2 = key1[order1], key2[order2]
    first = np.searchsorted(sorted2, sorted1)
    count = np.searchsorted(sorted2, sorted1, side="right") - first
    query = ragged_ids(count)
    k = ragged_offsets(count, query)
    return order1[query], order2[first[query] + k]


def _dense_classes(values: np.ndarray) -> tuple[np.ndarray, int]:
    uniques, classes = np.unique(values, return_inverse=True)
    return classes.reshape(-1), uniques.size


class _Occurrences(NamedTuple):
    """The words of each pair's two lines, one row per word: ``(pair, position, vocabulary id)`` each side."""

    pair1: np.ndarray
    position1: np.ndarray
    word1: np.ndarray
    pair2: np.ndarray
    position2: np.ndarray
    word2: np.ndarray


def _occurrences_by_pair(s: Sentences) -> _Occurrences:
    len1 = s.hyp_lengths[s.owner]
    pair1 = ragged_ids(len1)
    position1 = ragged_offsets(len1, pair1)
    word1 = s.hyp_words[ragged_starts(s.hyp_lengths)[s.owner][pair1] + position1]
    pair2 = ragged_ids(s.ref_lengths)
    position2 = ragged_offsets(s.ref_lengths, pair2)
    return _Occurrences(pair1, position1, word1, pair2, position2, s.ref_words)


def _word_matches(s: Sentences, modules: Sequence[str], identical: np.ndarray) -> _Candidates:
    """Exact, stem and synonym candidates of every pair (each word of line 1 against each word of line 2).

    Exact and stem matches share one sort join on ``(pair, stem class)`` (equal words have equal stems); words
    whose Java hashes collide with different stems get a second join on ``(pair, hash class)``. Synonyms: each
    line-1 word is expanded to its synonyms in the batch vocabulary, then one sort join on ``(pair, word)`` with
    line 2 — memory linear in the partners and the matches, not in line 1 × line 2.
    """
    o = _occurrences_by_pair(s)
    stem_class, stem_classes = _dense_classes(s.stem_hash)
    hash_class, hash_classes = _dense_classes(s.word_hash)
    r1, r2 = _equal_keys(o.pair1 * stem_classes + stem_class[o.word1], o.pair2 * stem_classes + stem_class[o.word2])
    lowest = np.full(hash_classes, stem_classes, dtype=np.int64)
    np.minimum.at(lowest, hash_class, stem_class)
    mixed = np.zeros(hash_classes, dtype=bool)
    mixed[hash_class[stem_class != lowest[hash_class]]] = True
    if mixed.any():  # different words with one Java hash and different stems: still an exact match
        word_mixed = mixed[hash_class]
        k1 = np.flatnonzero(word_mixed[o.word1])
        k2 = np.flatnonzero(word_mixed[o.word2])
        e1, e2 = _equal_keys(o.pair1[k1] * hash_classes + hash_class[o.word1[k1]],
                             o.pair2[k2] * hash_classes + hash_class[o.word2[k2]])
        extra = stem_class[o.word1[k1[e1]]] != stem_class[o.word2[k2[e2]]]
        r1, r2 = np.concatenate((r1, k1[e1][extra])), np.concatenate((r2, k2[e2][extra]))
    pair, i, j = o.pair1[r1], o.position1[r1], o.position2[r2]
    same = s.word_hash[o.word1[r1]] == s.word_hash[o.word2[r2]]
    found = [(modules.index("exact"), pair, i, j, same)]
    if "stem" in modules:
        found.append((modules.index("stem"), pair, i, j, ~same & ~identical[pair]))
    if "synonym" in modules and s.synonym_keys.size:
        # every line-1 word expanded to its synonym partners b (the keys are sorted: grouped by a), then one sort
        # join of (pair, b) with the line-2 words: linear in the partners and the matches, never line 1 × line 2
        vocab = s.word_hash.size
        partners = np.bincount(s.synonym_keys // vocab, minlength=vocab)
        first_partner = ragged_starts(partners)
        k1 = np.flatnonzero(partners[o.word1])
        fanout = partners[o.word1[k1]]
        source = ragged_ids(fanout)
        q1 = k1[source]
        b = s.synonym_keys[first_partner[o.word1[q1]] + ragged_offsets(fanout, source)] % vocab
        e1, r2 = _equal_keys(o.pair1[q1] * vocab + b, o.pair2 * vocab + o.word2)
        r1 = q1[e1]
        pair_s, a, b = o.pair1[r1], o.word1[r1], o.word2[r2]
        synonym = (s.word_hash[a] != s.word_hash[b]) & ~identical[pair_s]
        found.append((modules.index("synonym"), pair_s, o.position1[r1], o.position2[r2], synonym))
    parts = []
    for module, pair, i, j, keep in found:
        index = np.flatnonzero(keep)
        ones = np.ones(index.size, dtype=np.int64)
        zeros = np.zeros(index.size, dtype=np.int64)
        parts.append(_Candidates(pair[index], j[index], ones, i[index], ones, ones * module, (i[index], zeros, zeros)))
    return _concat(parts)


class _Grams(NamedTuple):
    """Every word sequence of the sentences that is a node of the paraphrase trie (phrase or phrase prefix)."""

    sentence: np.ndarray
    position: np.ndarray
    length: np.ndarray
    node: np.ndarray


def _trie_walk(words: np.ndarray, lengths: np.ndarray, trie: tables.ParaphraseTrie) -> _Grams:
    """Walk the trie from every word position of every sentence (one vectorised step per phrase length).

    ``words`` are paraphrase-table ids (-1: a word outside the table, which ends every walk through it).
    """
    sentence = ragged_ids(lengths)
    starts = ragged_starts(lengths)
    end = (starts + lengths)[sentence]
    start = np.flatnonzero(words >= 0)
    node = trie.root_child[words[start]]
    hit = node > 0
    start, node = start[hit], node[hit]
    end = end[start]
    found = [(start, 1, node)]
    for length in range(2, tables.MAX_PHRASE + 1):
        inside = start + length - 1 < end
        start, node, end = start[inside], node[inside], end[inside]
        word = words[start + length - 1]
        key = node * trie.vocabulary_size + word
        index = np.minimum(np.searchsorted(trie.edge_keys, key), trie.edge_keys.size - 1)
        hit = (word >= 0) & (trie.edge_keys[index] == key)
        start, node, end = start[hit], index[hit] + 1, end[hit]
        if start.size == 0:
            break
        found.append((start, length, node))
    start = np.concatenate([f[0] for f in found])
    node = np.concatenate([f[2] for f in found])
    length = np.concatenate([np.full(f[0].size, f[1], dtype=np.int64) for f in found])
    owner = sentence[start]
    return _Grams(owner, start - starts[owner], length, node)


def _emitted(grams: _Grams, trie: tables.ParaphraseTrie, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (gram, table entry) whose reference-side phrase is the gram and whose paraphrase is ``wanted``.

    Entries are expanded and filtered once per distinct node, then handed to every gram of that node.
    Returns ``(gram index, entry)`` in gram order, entries of one gram in file order (the jar's trie order).
    """
    nodes, inverse = np.unique(grams.node, return_inverse=True)
    inverse = inverse.reshape(-1)
    first = trie.emit_first[nodes]
    counts = trie.emit_first[nodes + 1] - first
    owner = ragged_ids(counts)
    entry = first[owner] + ragged_offsets(counts, owner)
    keep = wanted[trie.emit_node[entry]]
    owner, entry = owner[keep], entry[keep]
    kept = np.bincount(owner, minlength=nodes.size)
    per_gram = kept[inverse]
    gram = ragged_ids(per_gram)
    k = ragged_offsets(per_gram, gram)
    return gram, entry[ragged_starts(kept)[inverse[gram]] + k]


def _occurrences(queries: np.ndarray, grams_key: np.ndarray,
                 grams_position: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each query key, every gram with that key: ``(query index, gram position)`` (``grams_key`` sorted)."""
    first = np.searchsorted(grams_key, queries)
    found = np.searchsorted(grams_key, queries, side="right") - first
    query = ragged_ids(found)
    k = ragged_offsets(found, query)
    return query, grams_position[first[query] + k]


def _sorted_grams(grams: _Grams, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Gram keys ``sentence · N + node`` sorted (positions ascending within a key) and their positions."""
    key = grams.sentence * nodes + grams.node
    order = _lexsort((key, grams.position))
    return key[order], grams.position[order]


def _paraphrase_matches(s: Sentences, identical: np.ndarray, module: int) -> _Candidates:
    """Paraphrase candidates of both directions, with the jar's order keys.

    Direction 1 (appended first by the jar): a reference phrase at ``j`` (its trie paths by length, then entry)
    whose paraphrase occurs in the hypothesis at ``i`` (every ``i``); direction 2: a hypothesis phrase at ``i``
    whose paraphrase occurs in the reference at ``j``, ordered by ``i``, then length, then entry. Entries whose
    paraphrase occurs in no sentence of the other side are dropped before any per-pair work.
    """
    trie = tables.paraphrase_table().trie
    nodes, entries = trie.depth.size, trie.emit_node.size
    hyp_grams = _trie_walk(s.table_id[s.hyp_words], s.hyp_lengths, trie)
    ref_grams = _trie_walk(s.table_id[s.ref_words], s.ref_lengths, trie)
    in_hyps = np.zeros(nodes, dtype=bool)
    in_hyps[hyp_grams.node] = True
    in_refs = np.zeros(nodes, dtype=bool)
    in_refs[ref_grams.node] = True

    gram, entry = _emitted(ref_grams, trie, in_hyps)  # a reference is its pair
    hyp_key, hyp_position = _sorted_grams(hyp_grams, nodes)
    query, i = _occurrences(s.owner[ref_grams.sentence[gram]] * nodes + trie.emit_node[entry], hyp_key, hyp_position)
    gram, entry = gram[query], entry[query]
    length = ref_grams.length[gram]
    rank = length * entries + entry
    first = _Candidates(
        ref_grams.sentence[gram], ref_grams.position[gram], length, i, trie.emit_length[entry],
        np.full(i.size, module, dtype=np.int64), (np.zeros(i.size, dtype=np.int64), rank, i),
    )

    gram, entry = _emitted(hyp_grams, trie, in_refs)  # a hypothesis: repeat for each of its pairs
    refs_per_hyp = np.bincount(s.owner, minlength=s.hyp_lengths.size)
    per_emit = refs_per_hyp[hyp_grams.sentence[gram]]
    emit = ragged_ids(per_emit)
    pair = ragged_starts(refs_per_hyp)[hyp_grams.sentence[gram[emit]]] + ragged_offsets(per_emit, emit)
    ref_key, ref_position = _sorted_grams(ref_grams, nodes)
    query, j = _occurrences(pair * nodes + trie.emit_node[entry[emit]], ref_key, ref_position)
    gram, entry, pair = gram[emit[query]], entry[emit[query]], pair[query]
    length = hyp_grams.length[gram]
    position = hyp_grams.position[gram]
    second = _Candidates(
        pair, j, trie.emit_length[entry], position, length, np.full(j.size, module, dtype=np.int64),
        (np.ones(j.size, dtype=np.int64), position, length * entries + entry),
    )
    both = _concat((first, second))
    keep = np.flatnonzero(~identical[both.pair])
    return _Candidates(*(x[keep] for x in both[:-1]), tuple(x[keep] for x in both.order))


def _concat(parts: Sequence[_Candidates]) -> _Candidates:
    fields = [np.concatenate([getattr(part, name) for part in parts]).astype(np.int64, copy=False)
              for name in _Candidates._fields[:-1]]
    order = tuple(np.concatenate([part.order[k] for part in parts]).astype(np.int64, copy=False) for k in range(3))
    return _Candidates(*fields, order)


# ---------------------------------------------------------------------------------------------------- statistics
def _identical(s: Sentences) -> np.ndarray:
    """``bool[P]``: the hypothesis and the reference have the same word hashes (the jar's shortcut)."""
    len1 = s.hyp_lengths[s.owner]
    pair = ragged_ids(s.ref_lengths)
    k = ragged_offsets(s.ref_lengths, pair)
    inside = k < len1[pair]
    hyp_position = np.minimum(ragged_starts(s.hyp_lengths)[s.owner][pair] + k, max(s.hyp_words.size - 1, 0))
    differs = ~inside
    if s.hyp_words.size:
        differs |= s.word_hash[s.hyp_words[hyp_position]] != s.word_hash[s.ref_words]
    mismatches = np.bincount(pair[differs], minlength=s.owner.size)
    return (len1 == s.ref_lengths) & (mismatches == 0)


def candidate_matches(s: Sentences, modules: Sequence[str]) -> tuple[Matches, np.ndarray]:
    """Every candidate of every pair in the jar's order, and each one's module index."""
    identical = _identical(s)
    parts = [_word_matches(s, modules, identical)]
    if "paraphrase" in modules:
        parts.append(_paraphrase_matches(s, identical, modules.index("paraphrase")))
    c = _concat(parts)
    order = _lexsort((c.pair, c.start, c.module, *c.order))
    weights = np.array([_SEARCH_WEIGHTS[name] for name in modules], dtype=np.float64)
    c = _Candidates(*(x[order] for x in c[:-1]), ())
    w = weights[c.module]
    weight_sum = np.floor(c.match_length * w).astype(np.int64) + np.floor(c.length * w).astype(np.int64)
    return Matches(c.pair, c.start, c.length, c.match_start, c.match_length, weight_sum), c.module


#: default ``memory_budget`` of METEOR 1.5 (bytes): the working memory of candidate generation and alignment
DEFAULT_MEMORY_BUDGET = 2 << 30  # the heap pycocoevalcap gives the jar (-Xmx2G)
#: bytes per exact/stem candidate match through generation and alignment (measured ≈ 380 on CPU, long pairs)
BYTES_PER_CANDIDATE = 400
#: bytes per word of a pair's two lines (occurrences, trie walk, paraphrase joins, statistics)
BYTES_PER_WORD = 400


def check_memory_budget(memory_budget: Any) -> int:
    """``memory_budget`` as a positive ``int`` of bytes (``None``: :data:`DEFAULT_MEMORY_BUDGET`)."""
    if memory_budget is None:
        return DEFAULT_MEMORY_BUDGET
    if isinstance(memory_budget, np.integer):
        memory_budget = int(memory_budget)
    # the value is shown: YAML (a config, `--opt`) reads 1e9 as the text '1e9'
    return check_int(memory_budget, "memory_budget", at_least=1, hint="a number of bytes")


def pair_bytes(s: Sentences) -> np.ndarray:
    """``int64[P]``: the working memory one pair needs, estimated before any candidate is built.

    Its exact and stem candidates (every line-1 word × every line-2 word of its stem class: counted by one sort
    join, not built), :data:`BYTES_PER_CANDIDATE` each, plus :data:`BYTES_PER_WORD` per word of both lines and the
    beam's bitsets and back-pointers. Synonym and paraphrase candidates are not counted (they are few beside the
    exact ones on long texts, where the estimate matters).
    """
    o = _occurrences_by_pair(s)
    stem_class, classes = _dense_classes(s.stem_hash)
    key1 = o.pair1 * classes + stem_class[o.word1]
    key2 = np.sort(o.pair2 * classes + stem_class[o.word2])
    count = np.searchsorted(key2, key1, side="right") - np.searchsorted(key2, key1)
    candidates = np.zeros(s.owner.size, dtype=np.int64)
    np.add.at(candidates, o.pair1, count)
    len1, len2 = s.hyp_lengths[s.owner], s.ref_lengths
    words = (len1 + 63) // 64 + (len2 + 63) // 64
    return candidates * BYTES_PER_CANDIDATE + (len1 + len2) * BYTES_PER_WORD + BEAM * (24 * words + 16 * len2) + 4096


def _pair_range(s: Sentences, first: int, end: int) -> Sentences:
    """The pairs ``[first, end)`` (their hypotheses renumbered from 0); the vocabulary and its facts are shared."""
    owner = s.owner[first:end]
    low, high = int(owner[0]), int(owner[-1]) + 1
    hyp_start, ref_start = ragged_starts(s.hyp_lengths), ragged_starts(s.ref_lengths)
    hyp_end = int(hyp_start[high - 1] + s.hyp_lengths[high - 1])
    ref_end = int(ref_start[end - 1] + s.ref_lengths[end - 1])
    return s._replace(
        hyp_words=s.hyp_words[int(hyp_start[low]) : hyp_end], hyp_lengths=s.hyp_lengths[low:high],
        ref_words=s.ref_words[int(ref_start[first]) : ref_end], ref_lengths=s.ref_lengths[first:end],
        owner=owner - low,
    )


def pair_statistics(s: Sentences, language: str, memory_budget: Optional[int] = None) -> np.ndarray:
    """The jar's 23 statistics of every (hypothesis, reference) pair: ``float64[P, 23]`` (host array).

    Pairs are aligned independently, so a batch whose estimated working memory (:func:`pair_bytes`) exceeds
    ``memory_budget`` (bytes, default :data:`DEFAULT_MEMORY_BUDGET`) is scored in consecutive groups of pairs that
    fit it, with the same statistics. One pair must fit on its own (its candidate matches are aligned at once, as
    the jar holds them at once): a pair over the budget is a ``ValueError`` naming it and the budget it needs.
    """
    budget = check_memory_budget(memory_budget)
    pairs = s.owner.size
    if pairs == 0:
        return _pair_statistics(s, language)
    need = pair_bytes(s)
    if int(need.sum()) <= budget:
        return _pair_statistics(s, language)
    worst = int(need.argmax())
    if need[worst] > budget:
        sample = int(s.owner[worst])
        reference = worst - int(np.searchsorted(s.owner, s.owner[worst]))
        raise at_position(ValueError(
            f"METEOR 1.5: sample {sample} with its reference {reference} ({int(s.hyp_lengths[sample])} and "
            f"{int(s.ref_lengths[worst])} words) needs about {need[worst] / 2**20:,.0f} MiB to align, over "
            f"`memory_budget`={budget} bytes ({budget / 2**20:,.0f} MiB); pass memory_budget={int(need[worst])} "
            "or more (its exact and stem candidate matches grow with the product of the two lengths)"
        ), sample)
    ends = np.cumsum(need)
    groups, first = [], 0
    while first < pairs:
        end = max(int(np.searchsorted(ends, (ends[first - 1] if first else 0) + budget, side="right")), first + 1)
        groups.append(_pair_statistics(_pair_range(s, first, end), language))
        first = end
    return np.concatenate(groups)


def _pair_statistics(s: Sentences, language: str) -> np.ndarray:
    """:func:`pair_statistics` of one group of pairs, all at once."""
    modules = PARAMETERS[language][2]
    matches, module = candidate_matches(s, modules)
    len1 = s.hyp_lengths[s.owner]
    alignment = beam_align(matches, len1, s.ref_lengths, BEAM)
    pairs = s.owner.size
    hyp_function = s.function[s.hyp_words].astype(np.int64)
    ref_function = s.function[s.ref_words].astype(np.int64)
    cum1 = np.concatenate(([0], np.cumsum(hyp_function)))
    cum2 = np.concatenate(([0], np.cumsum(ref_function)))
    hyp_start, ref_start = ragged_starts(s.hyp_lengths), ragged_starts(s.ref_lengths)
    chosen = np.flatnonzero(alignment.chosen)
    pair, mod = matches.pair[chosen], module[chosen]
    first1 = hyp_start[s.owner[pair]] + matches.match_start[chosen]
    first2 = ref_start[pair] + matches.start[chosen]
    function1 = cum1[first1 + matches.match_length[chosen]] - cum1[first1]
    function2 = cum2[first2 + matches.length[chosen]] - cum2[first2]
    content1, content2 = matches.match_length[chosen] - function1, matches.length[chosen] - function2
    # every per-stage count in one pass (integer sums: exact in float64)
    cell = pair * STATS + 4 + 4 * mod
    index = np.concatenate([cell + column for column in range(4)]
                           + [pair * STATS + _TEST_WORDS, pair * STATS + _REF_WORDS])
    values = np.concatenate((content1, content2, function1, function2, matches.match_length[chosen],
                             matches.length[chosen]))
    stats = (np.bincount(index, weights=values, minlength=pairs * STATS)
             .astype(np.float64, copy=False).reshape(pairs, STATS))
    stats[:, 0] = len1
    stats[:, 1] = s.ref_lengths
    stats[:, 2] = (cum1[hyp_start + s.hyp_lengths] - cum1[hyp_start])[s.owner]
    stats[:, 3] = cum2[ref_start + s.ref_lengths] - cum2[ref_start]
    stats[:, _CHUNKS] = alignment.chunks
    return stats


def scores_from_statistics(stats: Tensor, language: str) -> Tensor:
    """The jar's ``computeMetrics``: ``float64[N]`` scores of ``float64[N, 23]`` statistics, its operation order."""
    (alpha, beta, gamma, delta), weights, _ = PARAMETERS[language]
    test_length, ref_length, test_function, ref_function = stats[:, 0], stats[:, 1], stats[:, 2], stats[:, 3]
    stage = stats[:, 4 : 4 + 4 * MAX_MODULES].view(-1, MAX_MODULES, 4)
    test_weighted_length = delta * (test_length - test_function) + (1.0 - delta) * test_function
    ref_weighted_length = delta * (ref_length - ref_function) + (1.0 - delta) * ref_function
    test_matches = torch.zeros_like(test_length)
    ref_matches = torch.zeros_like(test_length)
    for i, weight in enumerate(weights):
        test_matches = test_matches + stage[:, i, 0] * weight * delta
    for i, weight in enumerate(weights):
        ref_matches = ref_matches + stage[:, i, 1] * weight * delta
    for i, weight in enumerate(weights):
        test_matches = test_matches + stage[:, i, 2] * weight * (1.0 - delta)
    for i, weight in enumerate(weights):
        ref_matches = ref_matches + stage[:, i, 3] * weight * (1.0 - delta)
    precision = test_matches / test_weighted_length
    recall = ref_matches / ref_weighted_length
    # scalar / tensor is reciprocal-then-multiply in torch (two roundings); the jar divides once, and a one-ulp
    # difference can swap two references of equal score (and their statistics): divide tensor by tensor
    one, weight_p, weight_r = (torch.full_like(precision, value) for value in (1.0, 1.0 - alpha, alpha))
    f_mean = one / ((weight_p / precision) + (weight_r / recall))
    test_total = stage[:, :, 0].sum(1) + stage[:, :, 2].sum(1)
    ref_total = stage[:, :, 1].sum(1) + stage[:, :, 3].sum(1)
    chunks = stats[:, _CHUNKS]
    perfect = (test_total == test_length) & (ref_total == ref_length) & (chunks == 1)
    fragmentation = torch.where(perfect, 0.0, chunks / ((stats[:, _TEST_WORDS] + stats[:, _REF_WORDS]) / 2))
    score = f_mean * (1.0 - gamma * torch.pow(fragmentation, beta))
    return torch.where(torch.isnan(score), 0.0, score).clamp_min(0.0)


def perfect_segments(stats: Tensor) -> Tensor:
    """``BoolTensor[N]``: every word of both sides matched, in one chunk (the jar's corpus sum skips its chunk)."""
    stage = stats[:, 4 : 4 + 4 * MAX_MODULES].view(-1, MAX_MODULES, 4)
    test_total = stage[:, :, 0].sum(1) + stage[:, :, 2].sum(1)
    ref_total = stage[:, :, 1].sum(1) + stage[:, :, 3].sum(1)
    return (test_total == stats[:, 0]) & (ref_total == stats[:, 1]) & (stats[:, _CHUNKS] == 1)


def corpus_contribution(stats: Tensor) -> Tensor:
    """``float64[23]``: the statistics summed as the jar's ``EVAL`` adds them (no chunk from perfect segments)."""
    counted = stats.clone()
    counted[:, _CHUNKS] = torch.where(perfect_segments(stats), 0.0, stats[:, _CHUNKS])
    return counted.sum(0)


def sentence_statistics(
    preds: Sequence[str], target: Sequence[Sequence[str]], language: str, device: DeviceArg,
    memory_budget: Optional[int] = None,
) -> tuple[Tensor, Tensor]:
    """Per hypothesis: the statistics of its best reference ``float64[B, 23]`` and its score ``float64[B]``, on
    ``device`` (``memory_budget``: see :func:`pair_statistics`)."""
    return best_reference_statistics(encode(preds, target, language), language, memory_budget, device)


def best_reference_statistics(
    s: Sentences, language: str, memory_budget: Optional[int] = None, device: DeviceArg = None
) -> tuple[Tensor, Tensor]:
    """:func:`sentence_statistics` of encoded sentences: the pair statistics are computed on the host, uploaded
    once (with each pair's sample), and scored and reduced to the best reference on ``device`` (no host
    synchronisation there)."""
    stats, owner = upload_all([pair_statistics(s, language, memory_budget), s.owner.astype(np.float64)], device)
    owner = owner.long()
    device = stats.device
    scores = scores_from_statistics(stats, language)
    samples = s.hyp_lengths.size
    best_score = (torch.full((samples,), -1.0, dtype=torch.float64, device=device)
                  .scatter_reduce(0, owner, scores, "amax"))
    is_best = scores == best_score[owner]
    candidates = torch.where(is_best, torch.arange(scores.numel(), device=device), scores.numel())
    best = (torch.full((samples,), scores.numel(), dtype=torch.long, device=device)
            .scatter_reduce(0, owner, candidates, "amin"))
    return stats[best], scores[best]

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

from gpumetrics.kernels.alignment import Matches, beam_align
from gpumetrics.kernels.ngrams import TokenBatch
from gpumetrics.kernels.ragged import offsets_in_segment, segment_ids, segment_products, segment_starts
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
    """Words of hypotheses (line 1) and references (line 2) as vocabulary ids, and the per-word facts."""

    hyp_words: Tensor  # int64[T1] vocabulary ids, hypotheses concatenated
    hyp_lengths: Tensor  # int64[B]
    ref_words: Tensor  # int64[T2], references concatenated (reference p belongs to pair p)
    ref_lengths: Tensor  # int64[P]
    owner: Tensor  # int64[P] hypothesis of each pair
    word_hash: Tensor  # int64[V] Java hash of each vocabulary word
    stem_hash: Tensor  # int64[V]
    function: Tensor  # bool[V]
    table_id: Tensor  # int64[V] paraphrase-table id (-1: none)
    synonym_keys: Tensor  # int64[K] sorted a·V + b for vocabulary words a ≠ b sharing a synset


def split_references(target: Sequence[Sequence[str]]) -> list[list[str]]:
    """References as the jar receives them from pycocoevalcap: ``|||`` inside a reference separates references."""
    return [[part for reference in references for part in reference.split("|||")] for references in target]


def clean_hypothesis(text: str) -> str:
    """pycocoevalcap's hypothesis cleaning: ``|||`` removed, then double spaces collapsed once."""
    return text.replace("|||", "").replace("  ", " ")


@functools.lru_cache(maxsize=2)
def _word_table(language: str) -> tables.WordTable:
    return tables.WordTable(language)


def encode(preds: Sequence[str], target: Sequence[Sequence[str]], language: str, device: torch.device) -> Sentences:
    """Tokenise, build the batch vocabulary and look up every per-word fact (host work, once per distinct word)."""
    tokenizer = get_tokenizer("meteor-1.5", language=language)
    references = split_references(target)
    hyp_tokens = tokenizer.tokenize_batch([clean_hypothesis(text) for text in preds])
    ref_tokens = tokenizer.tokenize_batch([text for refs in references for text in refs])
    ref_counts = np.fromiter(map(len, references), dtype=np.int64, count=len(references))
    return sentences(encode_token_lists(hyp_tokens + ref_tokens), ref_counts, language, device)


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


def sentences(words: TokenBatch, ref_counts: np.ndarray, language: str, device: torch.device) -> Sentences:
    """:class:`Sentences` of the jar's words (host batch) of ``B`` hypotheses, then of their references (sample after
    sample, ``ref_counts: int64[B]`` each)."""
    vocabulary = words.vocabulary
    samples = ref_counts.size
    table = _word_table(language)
    function = tables.function_words(language)
    modules = PARAMETERS[language][2]
    table_id = tables.paraphrase_table().ids(vocabulary) if "paraphrase" in modules else np.full(len(vocabulary), -1)
    synonym_keys = _synonym_keys(vocabulary) if "synonym" in modules else np.zeros(0, dtype=np.int64)
    hyp_tokens = int(words.lengths[:samples].sum())

    def tensor(values, dtype=torch.long) -> Tensor:
        return torch.as_tensor(np.asarray(values), dtype=dtype).to(device)

    return Sentences(
        hyp_words=tensor(words.ids[:hyp_tokens]),
        hyp_lengths=tensor(words.lengths[:samples]),
        ref_words=tensor(words.ids[hyp_tokens:]),
        ref_lengths=tensor(words.lengths[samples:]),
        owner=tensor(np.repeat(np.arange(samples), ref_counts)),
        word_hash=tensor(table.hashes(vocabulary)),
        stem_hash=tensor(table.stem_hashes(vocabulary)) if "stem" in modules else tensor(table.hashes(vocabulary)),
        function=tensor([word in function for word in vocabulary], torch.bool),
        table_id=tensor(table_id),
        synonym_keys=tensor(synonym_keys),
    )


def _synonym_keys(vocabulary: Sequence[str]) -> np.ndarray:
    """Sorted ``a · V + b`` for every ordered pair of distinct vocabulary words that share a synset."""
    table = tables.synonym_table()
    sets = [table.synsets(word) for word in vocabulary]
    counts = np.fromiter(map(len, sets), dtype=np.int64, count=len(sets))
    if counts.sum() == 0:
        return np.zeros(0, dtype=np.int64)
    word = np.repeat(np.arange(len(sets)), counts)
    synset = np.fromiter((s for group in sets for s in group), dtype=np.int64, count=int(counts.sum()))
    order = np.argsort(synset, kind="stable")
    word, synset = word[order], synset[order]
    _, group_sizes = np.unique(synset, return_counts=True)
    group, a, b = (x.numpy() for x in segment_products(torch.from_numpy(group_sizes), torch.from_numpy(group_sizes)))
    first = np.cumsum(group_sizes) - group_sizes
    left, right = word[first[group] + a], word[first[group] + b]
    keep = left != right
    return np.unique(left[keep] * len(vocabulary) + right[keep])


# ---------------------------------------------------------------------------------------------------- matchers
class _Candidates(NamedTuple):
    """Candidate matches before ordering; ``order`` holds the jar's order keys (most significant first)."""

    pair: Tensor
    start: Tensor
    length: Tensor
    match_start: Tensor
    match_length: Tensor
    module: Tensor
    order: tuple[Tensor, ...]


def _lexsort(keys: Sequence[Tensor]) -> Tensor:
    """Stable order by ``keys[0]``, then ``keys[1]`` …: successive stable sorts from the least significant key."""
    order = torch.arange(keys[0].numel(), device=keys[0].device)
    for key in reversed(keys):
        order = order.index_select(0, torch.sort(key.index_select(0, order), stable=True).indices)
    return order


def _equal_keys(key1: Tensor, key2: Tensor) -> tuple[Tensor, Tensor]:
    """Every ``(k1, k2)`` with ``key1[k1] == key2[k2]`` (a sort join: both sides sorted, one searchsorted)."""
    sorted1, order1 = torch.sort(key1)
    sorted2, order2 = torch.sort(key2)
    first = torch.searchsorted(sorted2, sorted1)
    count = torch.searchsorted(sorted2, sorted1, right=True) - first
    query = segment_ids(count)
    k = offsets_in_segment(count, query)
    return order1[query], order2[first[query] + k]


def _dense_classes(values: Tensor) -> tuple[Tensor, int]:
    uniques, classes = torch.unique(values, return_inverse=True)
    return classes, uniques.numel()


class _Occurrences(NamedTuple):
    """The words of each pair's two lines, one row per word: ``(pair, position, vocabulary id)`` each side."""

    pair1: Tensor
    position1: Tensor
    word1: Tensor
    pair2: Tensor
    position2: Tensor
    word2: Tensor


def _occurrences_by_pair(s: Sentences) -> _Occurrences:
    len1 = s.hyp_lengths[s.owner]
    pair1 = segment_ids(len1)
    position1 = offsets_in_segment(len1, pair1)
    word1 = s.hyp_words.index_select(0, segment_starts(s.hyp_lengths)[s.owner].index_select(0, pair1) + position1)
    pair2 = segment_ids(s.ref_lengths, s.ref_words.numel())
    position2 = offsets_in_segment(s.ref_lengths, pair2)
    return _Occurrences(pair1, position1, word1, pair2, position2, s.ref_words)


def _word_matches(s: Sentences, modules: Sequence[str], identical: Tensor) -> _Candidates:
    """Exact, stem and synonym candidates of every pair (each word of line 1 against each word of line 2).

    Exact and stem matches share one sort join on ``(pair, stem class)`` (equal words have equal stems); words
    whose Java hashes collide with different stems get a second join on ``(pair, hash class)``. Synonyms: each
    line-1 word is expanded to its synonyms in the batch vocabulary, then one sort join on ``(pair, word)`` with
    line 2 — memory linear in the partners and the matches, not in line 1 × line 2.
    """
    o = _occurrences_by_pair(s)
    stem_class, stem_classes = _dense_classes(s.stem_hash)
    hash_class, hash_classes = _dense_classes(s.word_hash)
    r1, r2 = _equal_keys(o.pair1 * stem_classes + stem_class.index_select(0, o.word1),
                         o.pair2 * stem_classes + stem_class.index_select(0, o.word2))
    lowest = torch.full((hash_classes,), stem_classes, device=stem_class.device).scatter_reduce(0, hash_class, stem_class, "amin")
    mixed = torch.zeros(hash_classes, dtype=torch.bool, device=stem_class.device).index_fill_(
        0, hash_class[stem_class != lowest[hash_class]], True
    )
    if bool(mixed.any()):  # different words with one Java hash and different stems: still an exact match
        word_mixed = mixed[hash_class]
        k1 = torch.nonzero(word_mixed[o.word1]).squeeze(1)
        k2 = torch.nonzero(word_mixed[o.word2]).squeeze(1)
        e1, e2 = _equal_keys(o.pair1[k1] * hash_classes + hash_class[o.word1[k1]], o.pair2[k2] * hash_classes + hash_class[o.word2[k2]])
        extra = stem_class[o.word1[k1[e1]]] != stem_class[o.word2[k2[e2]]]
        r1, r2 = torch.cat((r1, k1[e1][extra])), torch.cat((r2, k2[e2][extra]))
    pair, i, j = o.pair1[r1], o.position1[r1], o.position2[r2]
    same = s.word_hash[o.word1[r1]] == s.word_hash[o.word2[r2]]
    found = [(modules.index("exact"), pair, i, j, same)]
    if "stem" in modules:
        found.append((modules.index("stem"), pair, i, j, ~same & ~identical[pair]))
    if "synonym" in modules and s.synonym_keys.numel():
        # every line-1 word expanded to its synonym partners b (the keys are sorted: grouped by a), then one sort
        # join of (pair, b) with the line-2 words: linear in the partners and the matches, never line 1 × line 2
        vocab = s.word_hash.numel()
        partners = torch.bincount(torch.div(s.synonym_keys, vocab, rounding_mode="floor"), minlength=vocab)
        first_partner = segment_starts(partners)
        k1 = torch.nonzero(partners.index_select(0, o.word1)).squeeze(1)
        fanout = partners.index_select(0, o.word1.index_select(0, k1))
        source = segment_ids(fanout)
        q1 = k1.index_select(0, source)
        b = s.synonym_keys.index_select(
            0, first_partner.index_select(0, o.word1.index_select(0, q1)) + offsets_in_segment(fanout, source)
        ) % vocab
        e1, r2 = _equal_keys(o.pair1.index_select(0, q1) * vocab + b, o.pair2 * vocab + o.word2)
        r1 = q1.index_select(0, e1)
        pair_s, a, b = o.pair1[r1], o.word1[r1], o.word2[r2]
        synonym = (s.word_hash[a] != s.word_hash[b]) & ~identical[pair_s]
        found.append((modules.index("synonym"), pair_s, o.position1[r1], o.position2[r2], synonym))
    parts = []
    for module, pair, i, j, keep in found:
        index = torch.nonzero(keep).squeeze(1)
        ones = torch.ones_like(index)
        zeros = torch.zeros_like(index)
        parts.append(_Candidates(pair[index], j[index], ones, i[index], ones, ones * module, (i[index], zeros, zeros)))
    return _concat(parts)


class _Grams(NamedTuple):
    """Every word sequence of the sentences that is a node of the paraphrase trie (phrase or phrase prefix)."""

    sentence: Tensor
    position: Tensor
    length: Tensor
    node: Tensor


def _trie_walk(words: Tensor, lengths: Tensor, trie: tables.ParaphraseTrie) -> _Grams:
    """Walk the trie from every word position of every sentence (one vectorised step per phrase length).

    ``words`` are paraphrase-table ids (-1: a word outside the table, which ends every walk through it).
    """
    sentence = segment_ids(lengths, words.numel())
    end = (segment_starts(lengths) + lengths)[sentence]
    start = torch.nonzero(words >= 0).squeeze(1)
    node = trie.root_child.index_select(0, words.index_select(0, start))
    hit = node > 0
    start, node = start[hit], node[hit]
    end = end.index_select(0, start)
    found = [(start, 1, node)]
    for length in range(2, int(trie.depth.max()) + 1):
        inside = start + length - 1 < end
        start, node, end = start[inside], node[inside], end[inside]
        word = words.index_select(0, start + length - 1)
        key = node * trie.vocabulary_size + word
        index = torch.searchsorted(trie.edge_keys, key).clamp_max(trie.edge_keys.numel() - 1)
        hit = (word >= 0) & (trie.edge_keys[index] == key)
        start, node, end = start[hit], index[hit] + 1, end[hit]
        if start.numel() == 0:
            break
        found.append((start, length, node))
    start = torch.cat([f[0] for f in found])
    node = torch.cat([f[2] for f in found])
    length = torch.cat([torch.full_like(f[0], f[1]) for f in found])
    owner = sentence.index_select(0, start)
    return _Grams(owner, start - segment_starts(lengths).index_select(0, owner), length, node)


def _emitted(grams: _Grams, trie: tables.ParaphraseTrie, wanted: Tensor) -> tuple[Tensor, Tensor]:
    """Every (gram, table entry) whose reference-side phrase is the gram and whose paraphrase is ``wanted``.

    Entries are expanded and filtered once per distinct node, then handed to every gram of that node.
    Returns ``(gram index, entry)`` in gram order, entries of one gram in file order (the jar's trie order).
    """
    nodes, inverse = torch.unique(grams.node, return_inverse=True)
    first = trie.emit_first[nodes]
    counts = trie.emit_first[nodes + 1] - first
    owner = segment_ids(counts)
    entry = first[owner] + offsets_in_segment(counts, owner)
    keep = wanted[trie.emit_node[entry]]
    owner, entry = owner[keep], entry[keep]
    kept = torch.bincount(owner, minlength=nodes.numel())
    per_gram = kept.index_select(0, inverse)
    gram = segment_ids(per_gram)
    k = offsets_in_segment(per_gram, gram)
    return gram, entry[segment_starts(kept)[inverse[gram]] + k]


def _occurrences(queries: Tensor, grams_key: Tensor, grams_position: Tensor) -> tuple[Tensor, Tensor]:
    """For each query key, every gram with that key: ``(query index, gram position)`` (``grams_key`` sorted)."""
    first = torch.searchsorted(grams_key, queries)
    found = torch.searchsorted(grams_key, queries, right=True) - first
    query = segment_ids(found)
    k = offsets_in_segment(found, query)
    return query, grams_position[first[query] + k]


def _sorted_grams(grams: _Grams, nodes: int) -> tuple[Tensor, Tensor]:
    """Gram keys ``sentence · N + node`` sorted (positions ascending within a key) and their positions."""
    key = grams.sentence * nodes + grams.node
    order = _lexsort((key, grams.position))
    return key.index_select(0, order), grams.position.index_select(0, order)


def _paraphrase_matches(s: Sentences, identical: Tensor, module: int, device: torch.device) -> _Candidates:
    """Paraphrase candidates of both directions, with the jar's order keys.

    Direction 1 (appended first by the jar): a reference phrase at ``j`` (its trie paths by length, then entry)
    whose paraphrase occurs in the hypothesis at ``i`` (every ``i``); direction 2: a hypothesis phrase at ``i``
    whose paraphrase occurs in the reference at ``j``, ordered by ``i``, then length, then entry. Entries whose
    paraphrase occurs in no sentence of the other side are dropped before any per-pair work.
    """
    trie = tables.paraphrase_table().trie(device)
    nodes, entries = trie.depth.numel(), trie.emit_node.numel()
    hyp_grams = _trie_walk(s.table_id[s.hyp_words], s.hyp_lengths, trie)
    ref_grams = _trie_walk(s.table_id[s.ref_words], s.ref_lengths, trie)
    in_hyps = torch.zeros(nodes, dtype=torch.bool, device=device).index_fill_(0, hyp_grams.node, True)
    in_refs = torch.zeros(nodes, dtype=torch.bool, device=device).index_fill_(0, ref_grams.node, True)

    gram, entry = _emitted(ref_grams, trie, in_hyps)  # a reference is its pair
    hyp_key, hyp_position = _sorted_grams(hyp_grams, nodes)
    query, i = _occurrences(s.owner[ref_grams.sentence[gram]] * nodes + trie.emit_node[entry], hyp_key, hyp_position)
    gram, entry = gram[query], entry[query]
    length = ref_grams.length[gram]
    rank = length * entries + entry
    first = _Candidates(
        ref_grams.sentence[gram], ref_grams.position[gram], length, i, trie.emit_length[entry],
        torch.full_like(i, module), (torch.zeros_like(i), rank, i),
    )

    gram, entry = _emitted(hyp_grams, trie, in_refs)  # a hypothesis: repeat for each of its pairs
    refs_per_hyp = torch.bincount(s.owner, minlength=s.hyp_lengths.numel())
    per_emit = refs_per_hyp[hyp_grams.sentence[gram]]
    emit = segment_ids(per_emit)
    pair = segment_starts(refs_per_hyp)[hyp_grams.sentence[gram[emit]]] + (
        offsets_in_segment(per_emit, emit)
    )
    ref_key, ref_position = _sorted_grams(ref_grams, nodes)
    query, j = _occurrences(pair * nodes + trie.emit_node[entry[emit]], ref_key, ref_position)
    gram, entry, pair = gram[emit[query]], entry[emit[query]], pair[query]
    length = hyp_grams.length[gram]
    position = hyp_grams.position[gram]
    second = _Candidates(
        pair, j, trie.emit_length[entry], position, length, torch.full_like(j, module),
        (torch.ones_like(j), position, length * entries + entry),
    )
    both = _concat((first, second))
    keep = torch.nonzero(~identical[both.pair]).squeeze(1)
    return _Candidates(*(x[keep] for x in both[:-1]), tuple(x[keep] for x in both.order))


def _concat(parts: Sequence[_Candidates]) -> _Candidates:
    fields = [torch.cat([getattr(part, name) for part in parts]) for name in _Candidates._fields[:-1]]
    order = tuple(torch.cat([part.order[k] for part in parts]) for k in range(3))
    return _Candidates(*fields, order)


# ---------------------------------------------------------------------------------------------------- statistics
def _identical(s: Sentences) -> Tensor:
    """``BoolTensor[P]``: the hypothesis and the reference have the same word hashes (the jar's shortcut)."""
    len1 = s.hyp_lengths[s.owner]
    pair = segment_ids(s.ref_lengths, s.ref_words.numel())
    k = offsets_in_segment(s.ref_lengths, pair)
    inside = k < len1[pair]
    hyp_position = segment_starts(s.hyp_lengths)[s.owner].index_select(0, pair) + k
    hyp_position = hyp_position.clamp_max(max(s.hyp_words.numel() - 1, 0))
    differs = ~inside
    if s.hyp_words.numel():
        hyp_hash = s.word_hash.index_select(0, s.hyp_words.index_select(0, hyp_position))
        differs = differs | (hyp_hash != s.word_hash.index_select(0, s.ref_words))
    mismatches = torch.zeros_like(len1).index_add_(0, pair, differs.long())
    return (len1 == s.ref_lengths) & (mismatches == 0)


def candidate_matches(s: Sentences, modules: Sequence[str]) -> tuple[Matches, Tensor]:
    """Every candidate of every pair in the jar's order, and each one's module index."""
    identical = _identical(s)
    parts = [_word_matches(s, modules, identical)]
    if "paraphrase" in modules:
        parts.append(_paraphrase_matches(s, identical, modules.index("paraphrase"), s.hyp_words.device))
    c = _concat(parts)
    order = _lexsort((c.pair, c.start, c.module, *c.order))
    weights = torch.tensor([_SEARCH_WEIGHTS[name] for name in modules], dtype=torch.float64, device=c.pair.device)
    c = _Candidates(*(x.index_select(0, order) for x in c[:-1]), ())
    w = weights[c.module]
    weight_sum = torch.floor(c.match_length * w).long() + torch.floor(c.length * w).long()
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
    if isinstance(memory_budget, bool) or not isinstance(memory_budget, (int, np.integer)):
        raise TypeError(f"`memory_budget` must be an int number of bytes, got {type(memory_budget).__name__}")
    if memory_budget <= 0:
        raise ValueError(f"`memory_budget` must be a positive number of bytes, got {memory_budget}")
    return int(memory_budget)


def pair_bytes(s: Sentences) -> Tensor:
    """``LongTensor[P]``: the working memory one pair needs, estimated before any candidate is built.

    Its exact and stem candidates (every line-1 word × every line-2 word of its stem class: counted by one sort
    join, not built), :data:`BYTES_PER_CANDIDATE` each, plus :data:`BYTES_PER_WORD` per word of both lines and the
    beam's bitsets and back-pointers. Synonym and paraphrase candidates are not counted (they are few beside the
    exact ones on long texts, where the estimate matters).
    """
    o = _occurrences_by_pair(s)
    stem_class, classes = _dense_classes(s.stem_hash)
    key1 = o.pair1 * classes + stem_class.index_select(0, o.word1)
    key2 = torch.sort(o.pair2 * classes + stem_class.index_select(0, o.word2)).values
    count = torch.searchsorted(key2, key1, right=True) - torch.searchsorted(key2, key1)
    candidates = torch.zeros_like(s.ref_lengths).index_add_(0, o.pair1, count)
    len1, len2 = s.hyp_lengths.index_select(0, s.owner), s.ref_lengths
    words = torch.div(len1 + 63, 64, rounding_mode="floor") + torch.div(len2 + 63, 64, rounding_mode="floor")
    return candidates * BYTES_PER_CANDIDATE + (len1 + len2) * BYTES_PER_WORD + BEAM * (24 * words + 16 * len2) + 4096


def _pair_range(s: Sentences, first: int, end: int) -> Sentences:
    """The pairs ``[first, end)`` (their hypotheses renumbered from 0); the vocabulary and its facts are shared."""
    owner = s.owner[first:end]
    low, high = int(owner[0]), int(owner[-1]) + 1
    hyp_start, ref_start = segment_starts(s.hyp_lengths), segment_starts(s.ref_lengths)
    hyp_end = int(hyp_start[high - 1] + s.hyp_lengths[high - 1])
    ref_end = int(ref_start[end - 1] + s.ref_lengths[end - 1])
    return s._replace(
        hyp_words=s.hyp_words[int(hyp_start[low]) : hyp_end], hyp_lengths=s.hyp_lengths[low:high],
        ref_words=s.ref_words[int(ref_start[first]) : ref_end], ref_lengths=s.ref_lengths[first:end],
        owner=owner - low,
    )


def pair_statistics(s: Sentences, language: str, memory_budget: Optional[int] = None) -> Tensor:
    """The jar's 23 statistics of every (hypothesis, reference) pair: ``float64[P, 23]``.

    Pairs are aligned independently, so a batch whose estimated working memory (:func:`pair_bytes`) exceeds
    ``memory_budget`` (bytes, default :data:`DEFAULT_MEMORY_BUDGET`) is scored in consecutive groups of pairs that
    fit it, with the same statistics. One pair must fit on its own (its candidate matches are aligned at once, as
    the jar holds them at once): a pair over the budget is a ``ValueError`` naming it and the budget it needs.
    """
    budget = check_memory_budget(memory_budget)
    pairs = s.owner.numel()
    if pairs == 0:
        return _pair_statistics(s, language)
    need = pair_bytes(s)
    if int(need.sum()) <= budget:
        return _pair_statistics(s, language)
    need = need.cpu().numpy()
    worst = int(need.argmax())
    if need[worst] > budget:
        sample = int(s.owner[worst])
        reference = worst - int(torch.searchsorted(s.owner, s.owner[worst]))
        raise ValueError(
            f"METEOR 1.5: sample {sample} with its reference {reference} ({int(s.hyp_lengths[sample])} and "
            f"{int(s.ref_lengths[worst])} words) needs about {need[worst] / 2**20:,.0f} MiB to align, over "
            f"`memory_budget`={budget} bytes ({budget / 2**20:,.0f} MiB); pass memory_budget={int(need[worst])} "
            "or more (its exact and stem candidate matches grow with the product of the two lengths)"
        )
    ends = np.cumsum(need)
    groups, first = [], 0
    while first < pairs:
        end = max(int(np.searchsorted(ends, (ends[first - 1] if first else 0) + budget, side="right")), first + 1)
        groups.append(_pair_statistics(_pair_range(s, first, end), language))
        first = end
    return torch.cat(groups)


def _pair_statistics(s: Sentences, language: str) -> Tensor:
    """:func:`pair_statistics` of one group of pairs, all at once."""
    modules = PARAMETERS[language][2]
    matches, module = candidate_matches(s, modules)
    len1 = s.hyp_lengths[s.owner]
    alignment = beam_align(matches, len1, s.ref_lengths, BEAM)
    pairs = s.owner.numel()
    device = s.owner.device
    stats = torch.zeros(pairs, STATS, dtype=torch.float64, device=device)
    hyp_function = s.function[s.hyp_words].long()
    ref_function = s.function[s.ref_words].long()
    hyp_start, ref_start = segment_starts(s.hyp_lengths), segment_starts(s.ref_lengths)
    stats[:, 0] = len1.double()
    stats[:, 1] = s.ref_lengths.double()
    hyp_function_count = torch.zeros_like(s.hyp_lengths).index_add_(0, segment_ids(s.hyp_lengths, s.hyp_words.numel()), hyp_function)
    stats[:, 2] = hyp_function_count[s.owner].double()
    stats[:, 3] = torch.zeros_like(s.ref_lengths).index_add_(0, segment_ids(s.ref_lengths, s.ref_words.numel()), ref_function).double()

    chosen = torch.nonzero(alignment.chosen).squeeze(1)
    pair, mod = matches.pair[chosen], module[chosen]
    cum1 = torch.cat((hyp_function.new_zeros(1), torch.cumsum(hyp_function, 0)))
    cum2 = torch.cat((ref_function.new_zeros(1), torch.cumsum(ref_function, 0)))
    first1 = hyp_start[s.owner[pair]] + matches.match_start[chosen]
    first2 = ref_start[pair] + matches.start[chosen]
    function1 = cum1[first1 + matches.match_length[chosen]] - cum1[first1]
    function2 = cum2[first2 + matches.length[chosen]] - cum2[first2]
    content1, content2 = matches.match_length[chosen] - function1, matches.length[chosen] - function2
    flat = stats.view(-1)
    for column, values in enumerate((content1, content2, function1, function2)):
        flat.index_add_(0, pair * STATS + 4 + 4 * mod + column, values.double())
    stats[:, _CHUNKS] = alignment.chunks.double()
    stats[:, _TEST_WORDS].index_add_(0, pair, matches.match_length[chosen].double())
    stats[:, _REF_WORDS].index_add_(0, pair, matches.length[chosen].double())
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
    preds: Sequence[str], target: Sequence[Sequence[str]], language: str, device: torch.device,
    memory_budget: Optional[int] = None,
) -> tuple[Tensor, Tensor]:
    """Per hypothesis: the statistics of its best reference ``float64[B, 23]`` and its score ``float64[B]``
    (``memory_budget``: see :func:`pair_statistics`)."""
    return best_reference_statistics(encode(preds, target, language, device), language, memory_budget)


def best_reference_statistics(s: Sentences, language: str, memory_budget: Optional[int] = None) -> tuple[Tensor, Tensor]:
    """:func:`sentence_statistics` of encoded sentences."""
    device = s.owner.device
    stats = pair_statistics(s, language, memory_budget)
    scores = scores_from_statistics(stats, language)
    samples = s.hyp_lengths.numel()
    best_score = torch.full((samples,), -1.0, dtype=torch.float64, device=device).scatter_reduce(0, s.owner, scores, "amax")
    is_best = scores == best_score[s.owner]
    candidates = torch.where(is_best, torch.arange(scores.numel(), device=device), scores.numel())
    best = torch.full((samples,), scores.numel(), dtype=torch.long, device=device).scatter_reduce(0, s.owner, candidates, "amin")
    return stats[best], scores[best]

"""The METEOR 1.5 jar's data, read from the installed pycocoevalcap: function words, stems, synonyms, paraphrases.

Nothing is downloaded. The jar (a zip) holds ``function/<language>.words``, ``synonym/english.{synsets,exceptions}``
and the normaliser's prefix lists; the English paraphrase table ``data/paraphrase-en.gz`` (61.8 MB, 5.27 M entries)
lies beside it. Each table is loaded once per process and shared by every metric instance.

The paraphrase table is parsed once (≈ 20 s) into a trie stored as arrays in the cache folder
(``$GPUMETRICS_HOME/meteor`` or ``~/.cache/gpumetrics/meteor``); later processes load the arrays (≈ 0.1 s):

* ``vocabulary``: the table's words (a word outside it never takes part in a paraphrase, as in the jar);
* trie nodes: node 0 is the root, node ``n`` (``n ≥ 1``) is reached from its parent by one word; ``edge_keys[n-1] =
  parent · V + word`` is sorted, so the child of ``(parent, word)`` is ``searchsorted(edge_keys, key) + 1``; every
  phrase of the table (either side) is a node, ``depth[n]`` is its length in words;
* emissions: the entries whose reference-side phrase is node ``n`` are ``emit_first[n] : emit_first[n+1]`` in file
  order, each giving its paraphrase-side node (``emit_node``) and length (``emit_length``) — the jar's trie paths
  ``[length, entry]`` in the order it reports them.
"""

from __future__ import annotations

import functools
import gzip
import io
import itertools
import zipfile
from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np

from gpumetrics.core.files import atomic_write, cache_dir
from gpumetrics.core.warn import warn_caller
from gpumetrics.text.tokenize.base import dense_ids
from gpumetrics.text.tokenize.meteor import meteor_jar

_CACHE_FORMAT = 1
MAX_PHRASE = 7  # the longest phrase of paraphrase-en.gz; the loader checks it
_LANGUAGE_NAMES = {"en": "english", "ru": "russian"}


def language_name(language: str) -> str:
    """The jar's file name of a language code (``"en"`` → ``"english"``)."""
    return _LANGUAGE_NAMES[language]


def _jar_member(member: str) -> str:
    with zipfile.ZipFile(meteor_jar()) as jar:
        return jar.read(member).decode("utf-8")


@functools.lru_cache(maxsize=4)
def function_words(language: str = "en") -> frozenset[str]:
    """The jar's ``function/<language>.words`` (compared with lower-cased words, as the jar does)."""
    return frozenset(_jar_member(f"function/{language_name(language)}.words").split("\n")) - {""}


def java_string_hash(word: str) -> int:
    """Java's ``String.hashCode()`` (32-bit, over UTF-16 code units): the jar's word identity.

    Example:
        >>> java_string_hash("a"), java_string_hash("Aa") == java_string_hash("BB")
        (97, True)
    """
    value = 0
    data = word.encode("utf-16-be", "surrogatepass")
    for high, low in zip(data[0::2], data[1::2]):
        value = (31 * value + (high << 8 | low)) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


class WordTable:
    """Per-word facts the matchers need, computed once per distinct word and kept for the process.

    ``hashes(words)`` (Java hash), ``stem_hashes(words)`` (Java hash of the Snowball stem) and
    ``synsets(words)`` (the jar's synonym sets: the word's own ∪ those of its base forms) for a list of distinct
    words of a batch.
    """

    def __init__(self, language: str) -> None:
        self.language = language
        self._hash: dict[str, int] = {}
        self._stem_hash: dict[str, int] = {}
        self._stem = snowball_stemmer(language)

    def hashes(self, words: Sequence[str]) -> np.ndarray:
        cache = self._hash
        for word in words:
            if word not in cache:
                cache[word] = java_string_hash(word)
        return np.fromiter(map(cache.__getitem__, words), dtype=np.int64, count=len(words))

    def stem_hashes(self, words: Sequence[str]) -> np.ndarray:
        cache = self._stem_hash
        for word in words:
            if word not in cache:
                cache[word] = java_string_hash(self._stem(word))
        return np.fromiter(map(cache.__getitem__, words), dtype=np.int64, count=len(words))


def snowball_stemmer(language: str):
    """The jar's Snowball stemmer as a ``word -> stem`` function (PyPI ``snowballstemmer`` 2.x equals the jar's).

    snowballstemmer 3.x changed the English ``-logist`` rule (141 of 60,000 WordNet words stem differently from
    the jar); with it installed the metric warns once and runs, so numbers may differ on those words. The jar's
    Russian stemmer predates Snowball's ``ё → е`` prelude and treats ``ё`` as a consonant: ``ё`` is swapped for a
    private-use character for the call, which reproduces it (535 of 535 inflected forms equal the jar's); the stem
    is then cut from the word itself (Russian Snowball only removes suffixes), so a word that contains that
    character already keeps it.
    """
    import snowballstemmer

    major = int(str(getattr(snowballstemmer, "__version__", "2")).split(".")[0])
    if major >= 3 and language == "en":
        warn_caller(
            "snowballstemmer>=3 stems some English words differently from METEOR 1.5's jar (e.g. 'biologist'); "
            "install snowballstemmer<3 for exact parity",
        )
    stemmer = snowballstemmer.stemmer(language_name(language))
    if language != "ru":
        return stemmer.stemWord

    def stem_keeping_yo(word: str) -> str:
        return word[: len(stemmer.stemWord(word.replace("ё", "\ue000")))]

    return stem_keeping_yo


class SynonymTable:
    """The jar's English WordNet synonym sets (``synonym/english.synsets`` / ``.exceptions``), as the jar reads them.

    ``synsets(word)`` is the jar's ``getSynSets(word) ∪ getStemSynSets(word)``: the word's own sets, plus the sets of
    its base forms from the exception list, or else of the first WordNet-3 suffix rewrite that is a known word
    (``"ss"`` endings and words of ≤ 2 characters map to themselves; ``"ful"`` words find none).
    The relation file is not read: the jar does not load it either.
    """

    _NOUN_VERB_ADJ_SUFFIXES = (
        ("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"),
        ("ies", "y"), ("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"),
        ("ing", ""), ("er", ""), ("est", ""), ("er", "e"), ("est", "e"),
    )

    def __init__(self) -> None:
        lines = _jar_member("synonym/english.synsets").split("\n")
        self._sets = {word: tuple(int(x) for x in sets.split()) for word, sets in zip(lines[0::2], lines[1::2])}
        lines = _jar_member("synonym/english.exceptions").split("\n")
        bases: dict[str, list[str]] = {}
        for base, forms in zip(lines[0::2], lines[1::2]):
            for form in forms.split():
                bases.setdefault(form, []).append(base)
        self._bases = bases
        self._union: dict[str, tuple[int, ...]] = {}

    def _morph(self, word: str) -> str:
        if word.endswith("ss") or len(word) <= 2:
            return word
        for suffix, ending in self._NOUN_VERB_ADJ_SUFFIXES:
            if word.endswith(suffix):
                candidate = word[: len(word) - len(suffix)] + ending
                if candidate in self._sets:
                    return candidate
        return ""

    def synsets(self, word: str) -> tuple[int, ...]:
        known = self._union.get(word)
        if known is None:
            sets = set(self._sets.get(word, ()))
            bases = self._bases.get(word)
            for base in bases if bases is not None else (self._morph(word),):
                sets.update(self._sets.get(base, ()))
            known = self._union[word] = tuple(sorted(sets))
        return known


@functools.lru_cache(maxsize=1)
def synonym_table() -> SynonymTable:
    """The English synonym table, loaded once per process."""
    return SynonymTable()


class ParaphraseTrie(NamedTuple):
    """The paraphrase table as host arrays (see the module docstring): the matchers walk it in numpy."""

    vocabulary_size: int
    root_child: np.ndarray  # int64[V] the node of each one-word phrase (-1: none), edge_keys' first level as a table
    edge_keys: np.ndarray  # int64[N-1]
    depth: np.ndarray  # int64[N]
    emit_first: np.ndarray  # int64[N+1]
    emit_node: np.ndarray  # int64[E]
    emit_length: np.ndarray  # int64[E]


class ParaphraseTable:
    """The English paraphrase table: the vocabulary (word → table id) and the trie (host arrays, shared)."""

    def __init__(self, vocabulary: list[str], trie: ParaphraseTrie) -> None:
        self.word_id = {word: index for index, word in enumerate(vocabulary)}
        self.trie = trie

    def ids(self, words: Sequence[str]) -> np.ndarray:
        """Table ids of ``words`` (-1: not in the table)."""
        get = self.word_id.get
        return np.fromiter((get(word, -1) for word in words), dtype=np.int64, count=len(words))


def paraphrase_file() -> Path:
    path = meteor_jar().parent / "data" / "paraphrase-en.gz"
    if not path.is_file():
        raise FileNotFoundError(f"METEOR 1.5's paraphrase table is missing: {path} (reinstall pycocoevalcap)")
    return path


@functools.lru_cache(maxsize=1)
def paraphrase_table() -> ParaphraseTable:
    """The English paraphrase table, from the cache folder or parsed once from pycocoevalcap's file."""
    source = paraphrase_file()
    stat = source.stat()
    cached = cache_dir("meteor") / f"paraphrase-en-v{_CACHE_FORMAT}-{stat.st_size}-{int(stat.st_mtime)}.npz"
    if not cached.is_file():
        arrays = _build_trie(source)
        with atomic_write(cached, "wb") as handle:
            np.savez(handle, **arrays)
    with np.load(cached) as arrays:
        vocabulary = bytes(arrays["vocabulary"]).decode("utf-8").split("\n")
        edge_keys, depth, emit_first, emit_node, emit_length = (
            arrays[name].astype(np.int64) for name in ParaphraseTrie._fields[2:]
        )
    first_level = int((depth == 1).sum())
    root_child = np.full(len(vocabulary), -1, dtype=np.int64)
    root_child[edge_keys[:first_level]] = np.arange(1, first_level + 1)
    trie = ParaphraseTrie(len(vocabulary), root_child, edge_keys, depth, emit_first, emit_node, emit_length)
    return ParaphraseTable(vocabulary, trie)


def _build_trie(source: Path) -> dict[str, np.ndarray]:
    """Parse ``paraphrase-en.gz`` (entries of three lines: probability, reference phrase, paraphrase)."""
    with gzip.open(source, "rb") as raw:
        lines = io.TextIOWrapper(raw, encoding="utf-8", newline="\n").read().split("\n")
    entries = len(lines) // 3
    phrase_ids, phrases = dense_ids(lines[1 : 3 * entries : 3] + lines[2 : 3 * entries : 3])
    del lines
    token_lists = [phrase.split(" ") for phrase in phrases]  # single-space separated (checked: no other whitespace)
    lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=len(token_lists))
    if lengths.min(initial=1) < 1 or lengths.max(initial=0) > MAX_PHRASE:
        raise ValueError(f"{source}: phrases must have 1..{MAX_PHRASE} words")
    word_ids, vocabulary = dense_ids(list(itertools.chain.from_iterable(token_lists)))
    del token_lists
    vocab = len(vocabulary)
    words = np.full((len(phrases), MAX_PHRASE), -1, dtype=np.int64)
    rows = np.repeat(np.arange(len(phrases)), lengths)
    words[rows, np.arange(rows.size) - np.repeat(np.cumsum(lengths) - lengths, lengths)] = word_ids

    node = np.zeros(len(phrases), dtype=np.int64)  # the node of each phrase's prefix so far
    edge_keys, depth, next_node = [], [np.zeros(1, dtype=np.int64)], 1
    for level in range(MAX_PHRASE):
        longer = np.nonzero(lengths > level)[0]
        keys = node[longer] * vocab + words[longer, level]
        uniques, inverse = np.unique(keys, return_inverse=True)  # sorted; parents of deeper levels are larger
        node[longer] = next_node + inverse
        edge_keys.append(uniques)
        depth.append(np.full(uniques.size, level + 1, dtype=np.int64))
        next_node += uniques.size
    ref_node, para_node = node[phrase_ids[:entries]], node[phrase_ids[entries:]]
    order = np.argsort(ref_node, kind="stable")
    emit_first = np.zeros(next_node + 1, dtype=np.int64)
    emit_first[1:] = np.cumsum(np.bincount(ref_node, minlength=next_node))
    return {
        "vocabulary": np.frombuffer("\n".join(vocabulary).encode("utf-8"), dtype=np.uint8),
        "edge_keys": np.concatenate(edge_keys),
        "depth": np.concatenate(depth).astype(np.int8),
        "emit_first": emit_first,
        "emit_node": para_node[order].astype(np.int32),
        "emit_length": lengths[phrase_ids[entries:]][order].astype(np.int8),
    }

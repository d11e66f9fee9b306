"""Synonym providers of the NLTK-style METEOR modes (``nltk``, ``aij2022-caption``, ``aij2022-vqa``).

The NLTK-style aligner's third stage asks, for each still unaligned hypothesis word, for the set of words it may be
aligned with; a provider answers that question, once per distinct word (answers are cached per provider object).

* ``WordNetSynonyms`` (mode ``nltk``): lemma names of every WordNet synset of the word, names with ``_`` dropped;
* ``RuWordNetSynonyms`` (modes ``aij2022-*``): titles of the hypernym synsets of the word's RuWordNet senses and names
  of the senses derived from them, lower-cased, as the AIJ-2022 scripts compute them;
* ``TSVSynonyms(path)``: the synonyms listed for the word in a ``word<TAB>synonym[<TAB>synonym…]`` file;
* ``DictSynonyms(mapping)``: ``mapping[word]`` (tests, small custom lists);
* ``NoSynonyms()``: nothing, the synonym stage aligns no word.

Conventions:

* The word asked for is what the aligner holds at the synonym stage. In NLTK and in the AIJ-2022 scripts that is the
  *stem* of the lower-cased token (the stem stage hands its stemmed word lists on), so a provider is asked about
  ``"dog"`` for ``"dogs"`` and about ``"кошк"`` for ``"кошки"``; this quirk is kept on purpose.
* The word itself need not be in its synonym set: after the exact and stem stages no unaligned reference word can
  equal it, so NLTK's ``| {word}`` changes nothing.
* Nothing is downloaded. A provider whose data is missing raises ``ImportError`` (package absent) or
  ``FileNotFoundError`` (data file absent) with the command that installs it.
"""

from __future__ import annotations

import os
import sqlite3
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any, Iterable, Mapping, Optional, Union

__all__ = [
    "SynonymProvider", "WordNetSynonyms", "RuWordNetSynonyms", "TSVSynonyms", "DictSynonyms", "NoSynonyms",
    "as_synonym_provider",
]

PathLike = Union[str, "os.PathLike[str]"]
_EMPTY: frozenset[str] = frozenset()


class SynonymProvider(ABC):
    """The words a word may be aligned with at the synonym stage, cached per distinct word.

    Subclasses implement :meth:`lookup`; callers use :meth:`synonyms`, which caches its answers.
    """

    name: str = "synonyms"

    def __init__(self) -> None:
        self._cache: dict[str, frozenset[str]] = {}

    def synonyms(self, word: str) -> frozenset[str]:
        """The synonym set of ``word`` (cached).

        Example:
            >>> DictSynonyms({"cat": ["feline"]}).synonyms("cat")
            frozenset({'feline'})
        """
        found = self._cache.get(word)
        if found is None:
            found = self._cache[word] = frozenset(self.lookup(word))
        return found

    @abstractmethod
    def lookup(self, word: str) -> Iterable[str]:
        """The synonyms of ``word``, uncached."""

    def signature(self) -> dict[str, Any]:
        """Fields that tell two numbers comparable: ``{"syn": name}``."""
        return {"syn": self.name}

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.name}>"


class NoSynonyms(SynonymProvider):
    """No synonyms: the synonym stage aligns nothing.

    Example:
        >>> NoSynonyms().synonyms("cat")
        frozenset()
    """

    name = "none"

    def lookup(self, word: str) -> Iterable[str]:
        return _EMPTY


class DictSynonyms(SynonymProvider):
    """Synonyms from a mapping ``word → iterable of synonyms`` (words missing from it have none).

    Args:
        mapping: ``Mapping[str, Iterable[str]]``.

    Raises:
        TypeError: ``mapping`` is not a mapping of strings to iterables of strings.

    Example:
        >>> DictSynonyms({"big": ("large", "huge")}).synonyms("big") == {"large", "huge"}
        True
    """

    name = "dict"

    def __init__(self, mapping: Mapping[str, Iterable[str]]) -> None:
        super().__init__()
        if not isinstance(mapping, Mapping):
            raise TypeError(
                f"`mapping` must be a mapping of words to iterables of synonyms, got {type(mapping).__name__}"
            )
        self._mapping: dict[str, frozenset[str]] = {}
        for word, synonyms in mapping.items():
            if not isinstance(word, str) or isinstance(synonyms, str):
                raise TypeError(f"`mapping` must map a string to an iterable of strings, got {word!r}: {synonyms!r}")
            synonym_set = frozenset(synonyms)
            if not all(isinstance(synonym, str) for synonym in synonym_set):
                raise TypeError(f"`mapping[{word!r}]` must hold strings only, got {sorted(map(repr, synonym_set))}")
            self._mapping[word] = synonym_set

    def lookup(self, word: str) -> Iterable[str]:
        return self._mapping.get(word, _EMPTY)


class TSVSynonyms(DictSynonyms):
    """Synonyms from a UTF-8 text file, one ``word<TAB>synonym[<TAB>synonym…]`` per line (blank lines skipped).

    Lines naming the same word add up; the relation is taken as written (``a<TAB>b`` does not make ``a`` a synonym
    of ``b``).

    Args:
        path: the file.

    Raises:
        FileNotFoundError: no file at ``path``.
        ValueError: a non-blank line has no tab.
    """

    name = "tsv"

    def __init__(self, path: PathLike) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(
                f"`path`: no synonym file at {str(self.path)!r}; expected a UTF-8 file of 'word<TAB>synonym' lines"
            )
        super().__init__(_read_tsv(self.path))

    def signature(self) -> dict[str, Any]:
        return {"syn": f"{self.name}:{self.path.name}"}


def _read_tsv(path: Path) -> dict[str, set[str]]:
    mapping: dict[str, set[str]] = {}
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            word, tab, rest = line.partition("\t")
            if not tab:
                raise ValueError(f"`path` {str(path)!r} line {number}: expected 'word<TAB>synonym', got {line[:60]!r}")
            mapping.setdefault(word, set()).update(synonym for synonym in rest.split("\t") if synonym)
    return mapping


class WordNetSynonyms(SynonymProvider):
    """NLTK's WordNet synonyms: the lemma names of all synsets of the word, names holding ``_`` dropped.

    This is the set ``nltk.translate.meteor_score`` builds for every hypothesis word (``wordnet.synsets(word)``
    applies WordNet's own morphology, so ``"dogs"`` finds the synsets of ``"dog"``).

    Args:
        wordnet: an object with NLTK's ``synsets(word)`` → synsets with ``lemmas()`` → lemmas with ``name()``;
            default ``nltk.corpus.wordnet``, which needs the corpus on disk.

    Raises:
        ImportError: NLTK is not installed.
        FileNotFoundError: NLTK's WordNet corpus is not on disk (raised at construction, nothing is downloaded).
    """

    name = "wordnet"

    def __init__(self, wordnet: Any = None) -> None:
        super().__init__()
        self._wordnet = _nltk_wordnet() if wordnet is None else wordnet
        if not callable(getattr(self._wordnet, "synsets", None)):
            raise TypeError(f"`wordnet` must have a synsets(word) method like nltk.corpus.wordnet, got {wordnet!r}")

    def lookup(self, word: str) -> Iterable[str]:
        return {
            lemma.name()
            for synset in self._wordnet.synsets(word)
            for lemma in synset.lemmas()
            if "_" not in lemma.name()
        }


def _nltk_wordnet() -> Any:
    try:
        from nltk.corpus import wordnet
    except ImportError as error:  # pragma: no cover - nltk is in the text extra
        raise ImportError("WordNetSynonyms needs NLTK: pip install 'gpumetrics[text]'") from error
    try:
        wordnet.ensure_loaded()
    except LookupError:
        raise FileNotFoundError(
            "NLTK's WordNet corpus is not installed; install it once with `python -m nltk.downloader wordnet` "
            "(or unpack it under one of nltk.data.path), or pass another `synonyms` provider"
        ) from None
    return wordnet


class RuWordNetSynonyms(SynonymProvider):
    """RuWordNet "synonyms" as the AIJ-2022 METEOR scripts compute them.

    For the senses whose lemma is ``word.upper().strip()``: the titles of the hypernym synsets of each sense's synset
    and the names of the senses derived from each sense, all lower-cased. A word with no sense has no synonyms.

    Args:
        source: ``None`` (the database installed with the ``ruwordnet`` package: ``ruwordnet-2021.db``, else
            ``ruwordnet.db`` in its ``static`` folder), a path to a RuWordNet SQLite database, or an object with the
            ``ruwordnet.RuWordNet`` API (``get_senses(word)`` → senses with ``.synset.hypernyms[*].title`` and
            ``.derivations[*].name``), e.g. ``ruwordnet.RuWordNet()`` itself.

    Raises:
        ImportError: ``source`` is None and the ``ruwordnet`` package is not installed.
        FileNotFoundError: the database file is missing.
    """

    name = "ruwordnet"

    _HYPERNYM_TITLES = (
        "SELECT hypernym.title FROM sense JOIN hypernym_relation AS relation ON relation.hyponym_id = sense.synset_id "
        "JOIN synset AS hypernym ON hypernym.id = relation.hypernym_id WHERE sense.lemma = ?"
    )
    _DERIVATION_NAMES = (
        "SELECT derived.name FROM sense JOIN derivation_relation AS relation ON relation.source_id = sense.id "
        "JOIN sense AS derived ON derived.id = relation.derivative_id WHERE sense.lemma = ?"
    )

    def __init__(self, source: Union[None, PathLike, Any] = None) -> None:
        super().__init__()
        self._database: Optional[sqlite3.Connection] = None
        self._wordnet: Any = None
        if source is None or isinstance(source, (str, os.PathLike)):
            self.path = _ruwordnet_database(source)
            uri = f"{self.path.resolve().as_uri()}?mode=ro"
            self._database = sqlite3.connect(uri, uri=True, check_same_thread=False)
        elif callable(getattr(source, "get_senses", None)):
            self._wordnet = source
        else:
            raise TypeError(
                f"`source` must be None, a path to a RuWordNet database or an object with get_senses(word), "
                f"got {type(source).__name__}"
            )

    def lookup(self, word: str) -> Iterable[str]:
        if self._wordnet is not None:
            return _senses_synonyms(self._wordnet.get_senses(word))
        key = (word.upper().strip(),)
        rows = [*self._database.execute(self._HYPERNYM_TITLES, key)]
        rows += self._database.execute(self._DERIVATION_NAMES, key)
        return {text.lower() for (text,) in rows if text is not None}


def _senses_synonyms(senses: Iterable[Any]) -> set[str]:
    """Hypernym titles and derivation names of RuWordNet ``Sense`` objects, lower-cased."""
    senses = list(senses)
    titles = {hypernym.title.lower() for sense in senses for hypernym in sense.synset.hypernyms}
    return titles | {derived.name.lower() for sense in senses for derived in sense.derivations}


def _ruwordnet_database(path: Optional[PathLike]) -> Path:
    if path is not None:
        found = Path(path)
        if not found.is_file():
            raise FileNotFoundError(f"`source`: no RuWordNet database at {str(found)!r}")
        return found
    try:
        import ruwordnet  # noqa: F401  (only its install folder is used)
    except ImportError as error:
        raise ImportError(
            "RuWordNetSynonyms needs the RuWordNet database: `pip install ruwordnet && ruwordnet download`, "
            "or pass `source=` the path of a RuWordNet SQLite file"
        ) from error
    static = Path(ruwordnet.__file__).parent / "static"
    for name in ("ruwordnet-2021.db", "ruwordnet.db"):
        if (static / name).is_file():
            return static / name
    raise FileNotFoundError(
        f"the ruwordnet package has no database in {str(static)!r}; run `ruwordnet download` once "
        "(or pass `source=` the path of a RuWordNet SQLite file)"
    )


def default_ruwordnet(name: str = "synonyms") -> RuWordNetSynonyms:
    """The AIJ-2022 organisers' provider for an option ``name`` left null: the installed RuWordNet database. Its
    absence is a missing-data error naming the option (a ``FileNotFoundError``, which the command line prints as one
    line), not a missing-package ``ImportError`` (a traceback there).

    Raises:
        FileNotFoundError: the ``ruwordnet`` package or its database is not installed.
    """
    try:
        return RuWordNetSynonyms()
    except ImportError as error:
        raise FileNotFoundError(
            f"`{name}` is null, i.e. the RuWordNet database, which is not installed: {error}; or set `{name}` "
            "to a 'word<TAB>synonym' TSV file or a mapping"
        ) from error


def as_synonym_provider(value: Any, name: str = "synonyms") -> SynonymProvider:
    """A provider from a provider, a mapping (:class:`DictSynonyms`) or a path (:class:`TSVSynonyms`).

    Raises:
        TypeError: ``value`` is none of these.

    Example:
        >>> as_synonym_provider({"a": ["b"]}).synonyms("a")
        frozenset({'b'})
    """
    if isinstance(value, SynonymProvider):
        return value
    if isinstance(value, Mapping):
        return DictSynonyms(value)
    if isinstance(value, (str, os.PathLike)):
        return TSVSynonyms(value)
    raise TypeError(
        f"`{name}` must be a SynonymProvider, a mapping word → synonyms or the path of a TSV file, "
        f"got {type(value).__name__}"
    )

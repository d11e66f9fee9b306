"""Answer normalisers of the QA metrics (gpumetrics/text/qa.py) as tokenizers: SQuAD v2.0 and AIJ-2022.

* ``squad`` — the official SQuAD v2.0 evaluation script's ``normalize_answer(text).split()``: lowercase, ASCII
  punctuation removed, articles ``a|an|the`` removed, whitespace split.
* ``aij2022`` — the AIJ-2022 TextQA/MathQA scripts: lowercase, ASCII punctuation removed (``-`` kept with
  ``keep_hyphen``, as their exact match does), no article removal, each token lemmatised with pymorphy3's Russian
  dictionary.

Tokens are tuples (hashable: exact match compares them whole), cached per distinct string.
"""

from __future__ import annotations

import functools
import re
import string
from typing import Any, Callable, Optional

from gpumetrics.text.tokenize.base import Tokenizer

_DROP_PUNCTUATION = str.maketrans("", "", string.punctuation)
_DROP_PUNCTUATION_KEEP_HYPHEN = str.maketrans("", "", string.punctuation.replace("-", ""))
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_CHOICE_LETTER = re.compile(r"[a-e]")
_CACHE_SIZE = 1 << 18

Tokens = tuple[str, ...]


@functools.lru_cache(maxsize=_CACHE_SIZE)
def squad_tokens(text: str) -> Tokens:
    """SQuAD v2.0 ``normalize_answer(text).split()``.

    Example:
        >>> squad_tokens("The Eiffel-Tower, in Paris!")
        ('eiffeltower', 'in', 'paris')
    """
    return tuple(_ARTICLES.sub(" ", text.lower().translate(_DROP_PUNCTUATION)).split())


@functools.lru_cache(maxsize=1)
def _morph_analyzer() -> Any:
    try:
        import pymorphy3
    except ImportError as error:  # pragma: no cover - exercised only without the text extra
        raise ImportError("preset 'aij2022' needs pymorphy3: pip install 'gpumetrics[text]'") from error
    return pymorphy3.MorphAnalyzer(lang="ru")


@functools.lru_cache(maxsize=_CACHE_SIZE)
def russian_lemma(token: str) -> str:
    """pymorphy3's most probable normal form of one lowercase token (cached).

    A token holding a character that UTF-8 cannot encode (a lone surrogate such as ``"\\ud800"``) cannot be in the
    dictionary, whose keys are UTF-8 bytes; it is returned unchanged, as pymorphy3 returns tokens it has no analysis
    for (latin words, numbers), so the text is scored token by token like any other instead of raising.

    Example:
        >>> russian_lemma("кошки"), russian_lemma("кошки\\udc00")
        ('кошка', 'кошки\\udc00')
    """
    try:
        return _morph_analyzer().parse(token)[0].normal_form
    except UnicodeEncodeError:  # the dictionary encodes keys as UTF-8; lone surrogates cannot be
        return token


@functools.lru_cache(maxsize=_CACHE_SIZE)
def aij2022_tokens(text: str, keep_hyphen: bool = False) -> Tokens:
    """AIJ-2022 normalisation: lowercase, ASCII punctuation removed (``-`` kept if asked), lemmas.

    Example:
        >>> aij2022_tokens("Кошки, бежали!")
        ('кошка', 'бежать')
    """
    table = _DROP_PUNCTUATION_KEEP_HYPHEN if keep_hyphen else _DROP_PUNCTUATION
    return tuple(russian_lemma(token) for token in text.lower().translate(table).split())


def choice_letter(text: str) -> Optional[str]:
    """The first latin letter ``a``–``e`` of the lowercased text, or None (AIJ multiple-choice fallback).

    Example:
        >>> choice_letter("Ответ: B) 12"), choice_letter("12")
        ('b', None)
    """
    found = _CHOICE_LETTER.search(text.lower())
    return found.group(0) if found else None



class SquadNormalizer(Tokenizer):
    """SQuAD v2.0 answer normalisation as a tokenizer (:func:`squad_tokens`).

    Example:
        >>> SquadNormalizer().tokenize("The Eiffel-Tower, in Paris!")
        ('eiffeltower', 'in', 'paris')
    """

    name = "squad"
    tokenize = staticmethod(squad_tokens)  # the cached function itself: no call layer in the QA metrics' loop


class Aij2022Normalizer(Tokenizer):
    """AIJ-2022 answer normalisation as a tokenizer (:func:`aij2022_tokens`): lemmas, ``-`` kept if asked.

    Args:
        keep_hyphen: keep ``-`` (the AIJ-2022 exact match does; its token F1 does not).

    Example:
        >>> Aij2022Normalizer(keep_hyphen=True).tokenize("Кошки-мышки, бежали!")
        ('кошка-мышка', 'бежать')
    """

    name = "aij2022"

    def __init__(self, keep_hyphen: bool = False) -> None:
        if not isinstance(keep_hyphen, bool):
            raise TypeError(f"`keep_hyphen` must be a bool, got {type(keep_hyphen).__name__}")
        self.keep_hyphen = keep_hyphen
        # the cached function itself (no call layer in the QA metrics' loop), with the arguments qa.py always used
        self.tokenize: Callable[[str], Tokens] = (
            functools.partial(aij2022_tokens, keep_hyphen=True) if keep_hyphen else aij2022_tokens
        )

    def signature(self) -> dict[str, Any]:
        """``{"tok": "aij2022", "hyphen": "kept" | "dropped"}``."""
        return {"tok": self.name, "hyphen": "kept" if self.keep_hyphen else "dropped"}

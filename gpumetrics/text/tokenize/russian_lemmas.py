"""Russian lemmas as the AIJ-2021/2022 scripts compute them: pymorphy's most probable normal form, read from the
organisers' dictionary, and their number-word table.

The organisers ran pymorphy2 0.9.1 with its Russian dictionary of 2020 (``pymorphy2-dicts-ru==2.4.417127.4579844``,
OpenCorpora revision 417127). pymorphy2 no longer imports on Python ≥ 3.11, so the lemmas come from its successor
pymorphy3 reading **that** dictionary: pymorphy3's own (2022, revision 417150) gives another lemma for 81 of the
3,064,812 word forms and for some out-of-dictionary guesses (``каковы`` → ``каковой`` where the scripts say
``каков``). The 2020 files differ from pymorphy3's in one record layout — a prediction suffix's count is an unsigned
16-bit integer there (``>HHH``), 32-bit in pymorphy3's (``>IHH``) — so those four files are re-read with the older
layout after pymorphy3 has loaded the rest. The tests compare every lemma against pymorphy2 0.9.1 itself.
"""

from __future__ import annotations

import functools
import os
from typing import Any

__all__ = [
    "ORGANISERS_DICTIONARY", "RUSSIAN_NUMBER_WORDS", "organisers_morph_analyzer", "russian_lemma",
    "russian_number_lemma",
]

_CACHE_SIZE = 1 << 18

#: The pip requirement of the dictionary the AIJ scripts lemmatised with (part of the ``text`` extra).
ORGANISERS_DICTIONARY = "pymorphy2-dicts-ru==2.4.417127.4579844"
_DICTIONARY_VERSION = ORGANISERS_DICTIONARY.split("==")[1]
_PREDICTION_SUFFIX_RECORD = ">HHH"  # count, paradigm id, form index (pymorphy2's dictionaries of format 2.4)


@functools.lru_cache(maxsize=1)
def organisers_morph_analyzer() -> Any:
    """pymorphy3's ``MorphAnalyzer`` over the organisers' dictionary (loaded once, ~1 s)."""
    try:
        import pymorphy3
        import pymorphy2_dicts_ru
        from pymorphy3.dawg import RecordDAWG
    except ImportError as error:  # pragma: no cover - exercised only without the text extra
        raise ImportError(
            f"Russian lemmas need pymorphy3 and the AIJ organisers' dictionary: pip install pymorphy3 "
            f"'{ORGANISERS_DICTIONARY}' (both come with 'gpumetrics[text]')"
        ) from error
    if pymorphy2_dicts_ru.__version__ != _DICTIONARY_VERSION:
        raise ImportError(
            f"Russian lemmas need the AIJ organisers' dictionary {ORGANISERS_DICTIONARY}, found pymorphy2-dicts-ru "
            f"{pymorphy2_dicts_ru.__version__}: pip install '{ORGANISERS_DICTIONARY}'"
        )
    path = pymorphy2_dicts_ru.get_path()
    analyzer = pymorphy3.MorphAnalyzer(path=path, lang="ru")
    suffixes = analyzer.dictionary.prediction_suffixes_dawgs  # parsing looks them up here on every guess
    for prefix_id in range(len(suffixes)):
        suffixes[prefix_id] = RecordDAWG(_PREDICTION_SUFFIX_RECORD).load(
            os.path.join(path, f"prediction-suffixes-{prefix_id}.dawg")
        )
    return analyzer


@functools.lru_cache(maxsize=_CACHE_SIZE)
def russian_lemma(token: str) -> str:
    """The most probable normal form of one lowercase token, as the AIJ scripts' pymorphy2 gives it (cached).

    Two kinds of token make pymorphy (the organisers' pymorphy2 and pymorphy3 alike) raise instead of analysing
    them; both are returned unchanged, as tokens without an analysis are (latin words, numbers), so the text is
    scored token by token like any other instead of raising:

    * a character that UTF-8 cannot encode (a lone surrogate such as ``"\\ud800"``): the dictionary's keys are UTF-8
      bytes (``UnicodeEncodeError``);
    * a letter without a Unicode character name in :mod:`unicodedata` (the 6,145 Tangut ideographs U+17000–U+187F7
      and U+18D00–U+18D08 on CPython 3.10–3.13): for a word it does not know, its Latin-script check calls
      ``unicodedata.name`` on the letters up to the first non-Latin one (``ValueError: no such name``; a word such
      as ``"кошки"`` + Tangut passes, ``"a"`` + Tangut does not).

    Example:
        >>> russian_lemma("кошки"), russian_lemma("каковы"), russian_lemma("кошки\\udc00")
        ('кошка', 'каков', 'кошки\\udc00')
        >>> russian_lemma("a\\U00017000") == "a\\U00017000"  # a Tangut ideograph
        True
    """
    try:
        return organisers_morph_analyzer().parse(token)[0].normal_form
    except UnicodeEncodeError:  # the dictionary encodes keys as UTF-8; lone surrogates cannot be
        return token
    except ValueError as error:  # unicodedata.name of a letter that has no name (Tangut)
        if str(error) != "no such name":
            raise
        return token


#: The AIJ organisers' map of Russian number words (as pymorphy lemmas) to digits, applied to every lemma by the
#: AIJ-2022 TextQA / MathQA / VQA scripts and the AIJ-2021 VQA script (``manualMap_ru``).
RUSSIAN_NUMBER_WORDS = {
    "ноль": "0", "нисколько": "0", "никакой": "0", "один": "1", "два": "2", "три": "3", "четыре": "4", "пять": "5",
    "шесть": "6", "семь": "7", "восемь": "8", "девять": "9", "десять": "10",
}


def russian_number_lemma(token: str) -> str:
    """:func:`russian_lemma` of ``token`` mapped by :data:`RUSSIAN_NUMBER_WORDS` (``"трёх"`` → ``"3"``).

    Example:
        >>> russian_number_lemma("трёх"), russian_number_lemma("кошки"), russian_number_lemma("никакого")
        ('3', 'кошка', '0')
    """
    lemma = russian_lemma(token)
    return RUSSIAN_NUMBER_WORDS.get(lemma, lemma)

"""Answer normalisers of the QA metrics (gpumetrics/text/qa.py) as tokenizers: SQuAD v2.0 and AIJ-2022.

* ``squad`` — the official SQuAD v2.0 evaluation script's ``normalize_answer(text).split()``: lowercase, ASCII
  punctuation removed, articles ``a|an|the`` removed, whitespace split.
* ``aij2022`` — the AIJ-2022 TextQA/MathQA scripts: lowercase, ASCII punctuation removed (``-`` kept with
  ``keep_hyphen``, as their exact match does), no article removal, each token lemmatised and mapped by the
  organisers' number-word table (:func:`~.russian_lemmas.russian_number_lemma`: their pymorphy dictionary).
* :func:`vqa_eval_answer` — the AIJ-2021 VQA script's (``vqaEval.py``) normalisation of a predicted answer: VQA
  punctuation rules, then per language English number words / articles / contractions or Russian lemmas + the
  number-word table.

Tokens are tuples (hashable: exact match compares them whole), cached per distinct string.
"""

from __future__ import annotations

import functools
import re
import string
from typing import Any, Callable, Optional

from gpumetrics.core.checks import check_bool
from gpumetrics.text.tokenize.base import Tokenizer
from gpumetrics.text.tokenize.russian_lemmas import russian_number_lemma

_DROP_PUNCTUATION = str.maketrans("", "", string.punctuation)
_DROP_PUNCTUATION_KEEP_HYPHEN = str.maketrans("", "", string.punctuation.replace("-", ""))
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_CHOICE_LETTER = re.compile(r"[abcde]")
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


@functools.lru_cache(maxsize=_CACHE_SIZE)
def aij2022_tokens(text: str, keep_hyphen: bool = False) -> Tokens:
    """AIJ-2022 normalisation: lowercase, ASCII punctuation removed (``-`` kept if asked), lemmas, number words as
    digits (:func:`russian_number_lemma`).

    Example:
        >>> aij2022_tokens("Кошки, бежали!"), aij2022_tokens("три кошки")
        (('кошка', 'бежать'), ('3', 'кошка'))
    """
    table = _DROP_PUNCTUATION_KEEP_HYPHEN if keep_hyphen else _DROP_PUNCTUATION
    return tuple(russian_number_lemma(token) for token in text.lower().translate(table).split())


def choice_letter(text: str) -> Optional[str]:
    """The first character of the *raw* text matching ``[abcde]``, or None (the AIJ-2022 multiple-choice fallback:
    their ``re.search('[abcde]', prediction)`` — an upper-case ``B`` is not a choice letter).

    Example:
        >>> choice_letter("Ответ: b) 12"), choice_letter("Ответ: B) 12"), choice_letter("12")
        ('b', None, None)
    """
    found = _CHOICE_LETTER.search(text)
    return found.group(0) if found else None


# ---------------------------------------------------------------------------------------------------- AIJ-2021 VQA
#: ``vqaEval.py``'s punctuation characters, in its order.
_VQA_PUNCTUATION = (";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-", ">", "<", "@", "`", ",",
                    "?", "!")
_VQA_DIGIT_COMMA_DIGIT = re.compile(r"\d,\d")
_VQA_PERIOD = re.compile(r"\.(?!\d)")  # their "(?!<=\d)(\.)(?!\d)": the first look-ahead never fails before a "."
_VQA_PERIOD_LIMIT = 32  # they pass re.UNICODE (= 32) as `count`: at most 32 periods go
_VQA_ENGLISH_NUMBERS = {
    "none": "0", "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10",
}
_VQA_ARTICLES = frozenset(("a", "an", "the"))
#: The VQA evaluation's contraction table (word without apostrophe → with), as ``vqaEval.py`` ships it; keys with
#: an upper-case letter never match (the words are lower-cased first) and are kept for fidelity.
_VQA_CONTRACTIONS = dict(pair.split("=") for pair in (
    "aint=ain't arent=aren't cant=can't couldve=could've couldnt=couldn't couldn'tve=couldn't've "
    "couldnt've=couldn't've didnt=didn't doesnt=doesn't dont=don't hadnt=hadn't hadnt've=hadn't've "
    "hadn'tve=hadn't've hasnt=hasn't havent=haven't hed=he'd hed've=he'd've he'dve=he'd've hes=he's howd=how'd "
    "howll=how'll hows=how's Id've=I'd've I'dve=I'd've Im=I'm Ive=I've isnt=isn't itd=it'd itd've=it'd've "
    "it'dve=it'd've itll=it'll let's=let's maam=ma'am mightnt=mightn't mightnt've=mightn't've "
    "mightn'tve=mightn't've mightve=might've mustnt=mustn't mustve=must've neednt=needn't notve=not've "
    "oclock=o'clock oughtnt=oughtn't ow's'at='ow's'at 'ows'at='ow's'at 'ow'sat='ow's'at shant=shan't "
    "shed've=she'd've she'dve=she'd've she's=she's shouldve=should've shouldnt=shouldn't shouldnt've=shouldn't've "
    "shouldn'tve=shouldn't've somebody'd=somebodyd somebodyd've=somebody'd've somebody'dve=somebody'd've "
    "somebodyll=somebody'll somebodys=somebody's someoned=someone'd someoned've=someone'd've "
    "someone'dve=someone'd've someonell=someone'll someones=someone's somethingd=something'd "
    "somethingd've=something'd've something'dve=something'd've somethingll=something'll thats=that's "
    "thered=there'd thered've=there'd've there'dve=there'd've therere=there're theres=there's theyd=they'd "
    "theyd've=they'd've they'dve=they'd've theyll=they'll theyre=they're theyve=they've twas='twas wasnt=wasn't "
    "wed've=we'd've we'dve=we'd've weve=we've werent=weren't whatll=what'll whatre=what're whats=what's "
    "whatve=what've whens=when's whered=where'd wheres=where's whereve=where've whod=who'd whod've=who'd've "
    "who'dve=who'd've wholl=who'll whos=who's whove=who've whyll=why'll whyre=why're whys=why's wont=won't "
    "wouldve=would've wouldnt=wouldn't wouldnt've=wouldn't've wouldn'tve=wouldn't've yall=y'all "
    "yall'll=y'all'll y'allll=y'all'll yall'd've=y'all'd've y'alld've=y'all'd've y'all'dve=y'all'd've "
    "youd=you'd youd've=you'd've you'dve=you'd've youll=you'll youre=you're youve=you've"
).split())
VQA_LANGUAGES = ("en", "ru")


def _vqa_punctuation(text: str) -> str:
    """VQA punctuation rules: a mark touching a space — or any mark when the text holds digit,digit — is deleted,
    otherwise replaced by a space (both decided on the input text); then periods not followed by a digit go."""
    out = text
    digit_comma = _VQA_DIGIT_COMMA_DIGIT.search(text) is not None
    for mark in _VQA_PUNCTUATION:
        glued = digit_comma or (mark + " " in text) or (" " + mark in text)
        out = out.replace(mark, "" if glued else " ")
    return _VQA_PERIOD.sub("", out, count=_VQA_PERIOD_LIMIT)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def vqa_eval_answer(text: str, lang: str) -> str:
    """The AIJ-2021 VQA script's normal form of a *predicted* answer (gold answers are compared raw).

    Newlines and tabs become spaces, the text is stripped, VQA punctuation rules applied, lower-cased and split;
    ``lang="ru"``: each word's lemma through the number-word table (:func:`~.russian_lemmas.russian_number_lemma`);
    any other language (the script's ``else``): English number words ``none|zero|one…ten`` → digits, articles
    dropped, contractions restored. Words are joined by one space.

    Args:
        text: the predicted answer.
        lang: the question's language, ``"ru"`` or ``"en"``.

    Example:
        >>> vqa_eval_answer("Three dogs.", "en"), vqa_eval_answer("Две кошки!", "ru"), vqa_eval_answer("dont", "en")
        ('3 dogs', '2 кошка', "don't")
    """
    words = _vqa_punctuation(text.replace("\n", " ").replace("\t", " ").strip()).lower().split()
    if lang == "ru":
        return " ".join(russian_number_lemma(word) for word in words)
    kept = [_VQA_ENGLISH_NUMBERS.get(word, word) for word in words]
    return " ".join(_VQA_CONTRACTIONS.get(word, word) for word in kept if word not in _VQA_ARTICLES)



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
        check_bool(keep_hyphen, "keep_hyphen")
        self.keep_hyphen = keep_hyphen
        # the cached function itself (no call layer in the QA metrics' loop), with the arguments qa.py always used
        self.tokenize: Callable[[str], Tokens] = (
            functools.partial(aij2022_tokens, keep_hyphen=True) if keep_hyphen else aij2022_tokens
        )

    def signature(self) -> dict[str, Any]:
        """``{"tok": "aij2022", "hyphen": "kept" | "dropped"}``."""
        return {"tok": self.name, "hyphen": "kept" if self.keep_hyphen else "dropped"}

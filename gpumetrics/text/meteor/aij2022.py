"""METEOR of the AIJ-2022 (Fusion Brain 2) captioning and VQA tasks, as the official scripts compute it.

**Reference:** ``ai-forever/fbc2_aij2022`` (commit a08bb14), ``evaluation/captioning/metrics/{calc_meteor,rumeteor,
utils}.py`` and ``evaluation/vqa/metric/{calc_meteor,rumeteor}.py``. Their ``rumeteor.py`` is a copy of NLTK's
METEOR; it is scored here by the one aligner of :mod:`.nltk_style` with these parameters:

| | ``aij2022-caption`` | ``aij2022-vqa`` |
|---|---|---|
| stemmer | NLTK Snowball Russian | NLTK Porter (their choice, on Russian text) |
| synonyms | RuWordNet: hypernym titles + derivation names of the word's senses | the same |
| α, β, γ | 0.9, 3, 0.5 | 0.9, 3, **0** |

**Caption preprocessing** (prediction and each gold caption alike, unless said): strip; delete ``,.!?:;%)]}([``
(``{`` survives — their quirk); ``" x "`` → ``"x"`` and ``' x '`` → ``'x'``; ``' s``/`` 's`` → ``'s``; strip;
prediction only: ``@@UNKNOWN@@`` → ``<unk>``; razdel tokens joined by spaces; lower-case; prediction only: English
number words → digits (``wordtodigits.convert``, reproduced by :func:`words_to_digits`); NLTK ``word_tokenize``.

**VQA preprocessing:** ASCII punctuation deleted and lower-case; pymorphy's normal form of the **whole answer** as one
word (``"кошки бежали"`` → ``"кошки бежать"``); an answer whose normal form is ``ноль|нисколько|никакой|один|…|
десять`` becomes its digits; prediction only: :func:`words_to_digits`; NLTK ``word_tokenize``.

**Numbers (VQA):** when a gold answer is one token and ``str.isnumeric``, the pair scores ``min(a, b)/max(a, b)``
(1 when both are 0) with the first number of the prediction, 0 when it has none. The scripts find that number with
NLTK's POS tagger (first token tagged ``CD`` that ``float()`` parses); the tagger's data is not needed here: a
token counts as a number when it starts with a digit (``str.isdigit``, the tagger's own ``!DIGITS`` cue) and
``float()`` parses it. A tagger could disagree on odd tokens only; digit strings are ``CD`` for both.

**Per sample:** the max over gold answers, starting from 0 (a NaN never wins); the task score is the **mean** of the
per-sample scores (``aij2022_*_scores(...).mean()``); a sample with no gold answer scores 0, as in the scripts.
``word_tokenize`` runs without NLTK's punkt data: both pipelines delete ``.``, ``?`` and ``!`` first, so punkt would
see one sentence.
"""

from __future__ import annotations

import functools
import re
import string
from typing import Any, Callable, Optional

import torch
from torch import Tensor

from gpumetrics.core import as_reference_lists, as_text_list, check_device, check_same_length
from gpumetrics.core.transfer import upload
from gpumetrics.text.meteor.nltk_style import (
    Tokens, best_per_sample, cached_stemmer, flatten_pairs, meteor_pair_scores, porter_stem,
)
from gpumetrics.text.meteor.synonyms import SynonymProvider, as_synonym_provider, default_ruwordnet
from gpumetrics.text.tokenize.russian_lemmas import russian_number_lemma

__all__ = ["aij2022_caption_scores", "aij2022_vqa_scores", "words_to_digits", "caption_tokens", "vqa_tokens"]

_CACHE_SIZE = 1 << 18

# ---------------------------------------------------------------------------------------------------- words → digits
_UNITS = {
    word: value for value, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
        "seventeen eighteen nineteen".split()
    )
}
_TENS = {word: 10 * (k + 2) for k, word in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1000000}
_NUMBER_WORDS = frozenset(_UNITS) | frozenset(_TENS) | frozenset(_SCALES)
_SENTENCE_MARKS = (".", "?", "!")


@functools.lru_cache(maxsize=_CACHE_SIZE)
def words_to_digits(text: str) -> str:
    """English number words → digits, as ``wordtodigits.convert`` 1.0.2 (their quirks included).

    Whitespace runs become one space; ``.?!`` are split off words and glued back to the word before; ``and``
    between number words disappears (even after a non-number: ``"cats and one"`` → ``"cats 1"``); ``point`` before
    a number word starts decimals, which are unit words only.

    Example:
        >>> words_to_digits("Two hundred and five cats saw one point five dogs!")
        '205 cats saw 1.5 dogs!'
    """
    for mark in _SENTENCE_MARKS:
        text = text.replace(mark, f" {mark} ")
    words = text.split() + [""]  # the empty sentinel flushes a number that ends the text
    out: list[str] = []
    pending = total = 0  # the group below a thousand / million, and the sum of scaled groups
    in_number = in_decimals = False
    for k, word in enumerate(words):
        lower = word.lower()
        if lower in _NUMBER_WORDS and not in_decimals:
            in_number = True
            if lower == "hundred":
                pending *= 100
            elif lower in _SCALES:
                total, pending = total + pending * _SCALES[lower], 0
            else:
                pending += _UNITS[lower] if lower in _UNITS else _TENS[lower]
        elif lower in _UNITS and in_decimals:
            out.append(str(_UNITS[lower]))
        elif word == "and" and words[k + 1] in _NUMBER_WORDS:
            continue
        elif lower == "point" and words[k + 1] in _NUMBER_WORDS:
            total += pending
            in_decimals, in_number = True, False
            out.append(f" {total}.")
        else:
            in_decimals = False
            separator = "" if word in _SENTENCE_MARKS else " "
            out.append(f" {total + pending}{separator}{word}" if in_number else f"{separator}{word}")
            in_number = False
            total = pending = 0
    return "".join(out)[1:-1]


# ---------------------------------------------------------------------------------------------------- tokenisers
@functools.lru_cache(maxsize=1)
def _treebank() -> Callable[[str], list[str]]:
    from nltk.tokenize import NLTKWordTokenizer  # the word tokenizer of nltk.word_tokenize; no data files

    return NLTKWordTokenizer().tokenize


@functools.lru_cache(maxsize=1)
def _razdel() -> Callable[[str], Any]:
    try:
        import razdel
    except ImportError as error:
        raise ImportError("mode 'aij2022-caption' needs razdel: pip install razdel") from error
    return razdel.tokenize


def _word_tokenize(text: str) -> Tokens:
    """``nltk.word_tokenize`` of a text holding no ``.?!``, lower-cased as NLTK's METEOR does."""
    return tuple(token.lower() for token in _treebank()(text))


# ---------------------------------------------------------------------------------------------------- captioning
_CAPTION_DELETED = str.maketrans("", "", ",.!?:;%)]}([")
_SPACED_QUOTES = (re.compile(r'"\s[^"]+\s"'), re.compile(r"'\s[^']+\s'"))


def _caption_detokenize(text: str) -> str:
    """Their ``punct_detokenize``: punctuation deleted, inner spaces of quotes removed."""
    text = text.strip().translate(_CAPTION_DELETED)
    for pattern in _SPACED_QUOTES:
        for quoted in pattern.findall(text):
            text = text.replace(quoted, quoted[0] + quoted[2:-2] + quoted[-1])
    return text.replace("' s", "'s").replace(" 's", "'s").strip()


@functools.lru_cache(maxsize=_CACHE_SIZE)
def caption_tokens(text: str, is_prediction: bool) -> Tokens:
    """The tokens the AIJ-2022 captioning script scores for a prediction or a gold caption.

    Example:
        >>> caption_tokens("Две кошки (и one dog), сидят!", True)
        ('две', 'кошки', 'и', '1', 'dog', 'сидят')
    """
    text = _caption_detokenize(text.strip())
    if is_prediction:
        text = text.replace("@@UNKNOWN@@", "<unk>")
    text = " ".join(token.text for token in _razdel()(text)).lower()
    return _word_tokenize(words_to_digits(text) if is_prediction else text)


# ---------------------------------------------------------------------------------------------------- VQA
_ASCII_PUNCTUATION = str.maketrans("", "", string.punctuation)


def _vqa_answer(text: str) -> str:
    """Their ``get_lemma(remove_punc(text))``: the normal form of the whole answer, Russian numbers as digits."""
    return russian_number_lemma(text.translate(_ASCII_PUNCTUATION).lower())


@functools.lru_cache(maxsize=_CACHE_SIZE)
def vqa_tokens(text: str, is_prediction: bool) -> Tokens:
    """The tokens the AIJ-2022 VQA script scores for a predicted or a gold answer.

    Example:
        >>> vqa_tokens("Кошки бежали!", False), vqa_tokens("Two", True), vqa_tokens("Двух", True)
        (('кошки', 'бежать'), ('2',), ('2',))
    """
    answer = _vqa_answer(text)
    return _word_tokenize(words_to_digits(answer) if is_prediction else answer)


def _first_number(tokens: Tokens) -> Optional[float]:
    """The first token that starts with a digit and that ``float()`` parses (the scripts' ``CD`` + ``float``)."""
    for token in tokens:
        if token[:1].isdigit():
            try:
                return float(token)
            except ValueError:
                continue
    return None


def _numeric_score(prediction: Tokens, gold_number: str) -> float:
    """``min/max`` of the prediction's first number and the gold number (1 for 0 vs 0); 0 without a number."""
    number = _first_number(prediction)
    try:
        gold = float(gold_number)
    except ValueError:  # str.isnumeric accepts "½", float() does not: the script finds no usable pair
        return 0.0
    if number is None:
        return 0.0
    if number == 0 and gold == 0:
        return 1.0
    return min(number, gold) / max(number, gold)  # numbers are non-negative here: '-' was deleted


def _is_numeric_gold(tokens: Tokens) -> bool:
    return len(tokens) == 1 and tokens[0].isnumeric()


# ---------------------------------------------------------------------------------------------------- shared scoring
def _check_inputs(preds: Any, target: Any) -> tuple[list[str], list[list[str]]]:
    pred_list = as_text_list(preds, "preds")
    gold_lists = as_reference_lists(target, "target", allow_empty=True)
    check_same_length(pred_list, "preds", gold_lists, "target")
    return pred_list, gold_lists


def _provider(synonyms: Any) -> SynonymProvider:
    return default_ruwordnet("synonyms") if synonyms is None else as_synonym_provider(synonyms)


def _tokenised_pairs(
    preds: Any, target: Any, tokenize: Callable[[str, bool], Tokens]
) -> tuple[int, list[Tokens], list[Tokens], list[int]]:
    pred_list, gold_lists = _check_inputs(preds, target)
    hyps = [tokenize(pred, True) for pred in pred_list]
    golds = [[tokenize(gold, False) for gold in sample_golds] for sample_golds in gold_lists]
    return (len(pred_list), *flatten_pairs(hyps, golds))


def aij2022_caption_scores(preds: Any, target: Any, *, synonyms: Any = None, device: Any = None) -> Tensor:
    """Per-caption METEOR of the AIJ-2022 captioning task (its task score is the mean).

    Args:
        preds: ``B`` predicted captions (or one string).
        target: ``B`` gold captions, each a string or a list of strings (max over them; none → 0).
        synonyms: ``None`` (:class:`~gpumetrics.text.meteor.synonyms.RuWordNetSynonyms`, the installed RuWordNet
            database), a provider, a mapping ``word → synonyms`` or a TSV path.
        device: where the scoring runs (default the CPU).

    Returns:
        ``DoubleTensor[B]``.

    Raises:
        TypeError: ``preds``/``target``/``synonyms`` malformed (the message names it).
        ValueError: ``preds`` and ``target`` differ in length.
        FileNotFoundError: ``synonyms=None`` and RuWordNet is not installed.
        ImportError: razdel missing.

    Example:
        >>> from gpumetrics.text.meteor.synonyms import NoSynonyms
        >>> aij2022_caption_scores(["Кошка сидит на окне."], [["кошка сидит на окне", "кот спит"]],
        ...                        synonyms=NoSynonyms())
        tensor([0.9922], dtype=torch.float64)
    """
    device = check_device(device)
    provider = _provider(synonyms)
    n_samples, pair_hyps, pair_golds, pair_sample = _tokenised_pairs(preds, target, caption_tokens)
    scores = meteor_pair_scores(
        pair_hyps, pair_golds, stem=_snowball_russian_stem(), synonyms=provider, alpha=0.9, beta=3.0, gamma=0.5,
        device=device,
    )
    return best_per_sample(scores, upload(torch.tensor(pair_sample, dtype=torch.long), device), n_samples, floor=0.0)


@functools.lru_cache(maxsize=1)
def _snowball_russian_stem() -> Callable[[str], str]:
    from nltk.stem.snowball import SnowballStemmer

    return cached_stemmer(SnowballStemmer("russian"))


def aij2022_vqa_scores(preds: Any, target: Any, *, synonyms: Any = None, device: Any = None) -> Tensor:
    """Per-question METEOR of the AIJ-2022 VQA task (its task score is the mean).

    Args:
        preds: ``B`` predicted answers (or one string).
        target: ``B`` gold answers, each a string or a list of strings (max over them; none → 0).
        synonyms: as :func:`aij2022_caption_scores`.
        device: where the scoring runs (default the CPU).

    Returns:
        ``DoubleTensor[B]``.

    Raises:
        TypeError: ``preds``/``target``/``synonyms`` malformed (the message names it).
        ValueError: ``preds`` and ``target`` differ in length.
        FileNotFoundError: ``synonyms=None`` and RuWordNet is not installed.

    Example:
        >>> from gpumetrics.text.meteor.synonyms import NoSynonyms
        >>> aij2022_vqa_scores(["three cats", "Два", "кошка"], ["4", ["2", "два"], "кошки"],
        ...                    synonyms=NoSynonyms())
        tensor([0.7500, 1.0000, 1.0000], dtype=torch.float64)
    """
    device = check_device(device)
    provider = _provider(synonyms)
    n_samples, pair_hyps, pair_golds, pair_sample = _tokenised_pairs(preds, target, vqa_tokens)
    numeric = [k for k, gold in enumerate(pair_golds) if _is_numeric_gold(gold)]
    scores = meteor_pair_scores(
        pair_hyps, pair_golds, stem=porter_stem, synonyms=provider, alpha=0.9, beta=3.0, gamma=0.0, device=device
    )
    if numeric:
        numeric_scores = [_numeric_score(pair_hyps[k], pair_golds[k][0]) for k in numeric]
        numeric_index = upload(torch.tensor(numeric), device)
        scores[numeric_index] = upload(torch.tensor(numeric_scores, dtype=torch.float64), device)
    return best_per_sample(scores, upload(torch.tensor(pair_sample, dtype=torch.long), device), n_samples, floor=0.0)

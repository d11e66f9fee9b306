"""Tokenizers of the text metrics as objects, chosen once by name: ``get_tokenizer("13a", lowercase=True)``.

One module per family of reference tools — :mod:`.sacrebleu` (13a, intl, char, zh, none), :mod:`.rouge`
(rouge-score, unicode), :mod:`.ptb` (pycocoevalcap's PTB tokenizer), :mod:`.meteor` (METEOR 1.5's ``-norm``),
:mod:`.answers` (SQuAD / AIJ-2022 answer normalisers, lemmas from :mod:`.russian_lemmas`) — each reproducing its tool
exactly (the tests compare against the tool itself). Every tokenizer exposes ``name``, ``tokenize(line)``,
``tokenize_batch(lines)``, ``encode(lines) -> TokenBatch`` (dense ``int64`` ids by first appearance + tokens per
line, built by the one vocabulary builder :func:`~.base.dense_ids`) and ``signature()``, its part of a metric
signature. Apart from these, :mod:`.yttm` reads YouTokenToMe BPE model files
(ruCLIP's ``bpe.model``) and encodes text to youtokentome's ids (a model vocabulary, not a metric tokenizer).

Example:
    >>> tokenizer = get_tokenizer("13a", lowercase=True)
    >>> tokenizer.tokenize("Hello, World!"), tokenizer.signature()
    (['hello', ',', 'world', '!'], {'tok': '13a', 'case': 'lc'})
    >>> batch = tokenizer.encode(["a b", "", "b"])
    >>> batch.ids.tolist(), batch.lengths.tolist(), batch.vocab_size
    ([0, 1, 1], [2, 0, 1], 2)
"""

from __future__ import annotations

import functools
from typing import Any, Callable

from gpumetrics.kernels.ngrams import TokenBatch
from gpumetrics.text.tokenize.answers import Aij2022Normalizer, SquadNormalizer
from gpumetrics.text.tokenize.base import Tokenizer, dense_ids, encode_token_lists, encode_tokens
from gpumetrics.text.tokenize.meteor import MeteorTokenizer
from gpumetrics.text.tokenize.ptb import PTBTokenizer
from gpumetrics.text.tokenize.rouge import ROUGE_TOKENIZERS, RougeTokenizer
from gpumetrics.text.tokenize.sacrebleu import SACREBLEU_TOKENIZERS, SacreBleuTokenizer

# name → (factory, the keyword options it takes)
_REGISTRY: dict[str, tuple[Callable[..., Tokenizer], tuple[str, ...]]] = {
    **{name: (functools.partial(SacreBleuTokenizer, name), ("lowercase",)) for name in SACREBLEU_TOKENIZERS},
    **{name: (functools.partial(RougeTokenizer, name), ("use_stemmer",)) for name in ROUGE_TOKENIZERS},
    "ptb": (PTBTokenizer, ()),
    "meteor-1.5": (MeteorTokenizer, ("language",)),
    "squad": (SquadNormalizer, ()),
    "aij2022": (Aij2022Normalizer, ("keep_hyphen",)),
}
TOKENIZERS = tuple(_REGISTRY)


def get_tokenizer(name: str, **options: Any) -> Tokenizer:
    """The tokenizer called ``name`` with ``options`` (checked here, once); equal requests share one object.

    Args:
        name: one of ``TOKENIZERS``: ``"13a"``, ``"intl"``, ``"char"``, ``"zh"``, ``"none"`` (sacrebleu; option
            ``lowercase``), ``"rouge-score"``, ``"unicode"`` (option ``use_stemmer``), ``"ptb"``, ``"meteor-1.5"``
            (option ``language``), ``"squad"``, ``"aij2022"`` (option ``keep_hyphen``).
        options: the tokenizer's keyword options.

    Raises:
        ValueError: unknown ``name``.
        TypeError: an option the tokenizer does not take, or a value of the wrong type.

    Example:
        >>> get_tokenizer("rouge-score", use_stemmer=True).signature()
        {'tokenizer': 'rouge-score', 'stemmer': 'porter'}
        >>> get_tokenizer("13a") is get_tokenizer("13a", lowercase=False)
        True
        >>> get_tokenizer("moses")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: `name` must be one of '13a', 'intl', 'char', 'zh', 'none', 'rouge-score', ... got 'moses'
    """
    if not isinstance(name, str) or name not in _REGISTRY:
        raise ValueError(f"`name` must be one of {', '.join(map(repr, TOKENIZERS))}; got {name!r}")
    factory, accepted = _REGISTRY[name]
    unknown = [option for option in options if option not in accepted]
    if unknown:
        takes = f"only {', '.join(map(repr, accepted))}" if accepted else "no options"
        raise TypeError(f"tokenizer {name!r} takes {takes}; got {', '.join(map(repr, unknown))}")
    request = (name, tuple((option, type(value), value) for option, value in sorted(options.items())))
    try:
        return _REQUESTS[request]  # a request seen before: already checked
    except KeyError:
        pass
    except TypeError:  # an unhashable option value: the tokenizer's own check names it
        return factory(**options)
    tokenizer = factory(**options)  # checks the option values
    # requests that differ only in spelling out a default share one object
    tokenizer = _REQUESTS[request] = _INSTANCES.setdefault((name, tuple(tokenizer.signature().items())), tokenizer)
    return tokenizer


_REQUESTS: dict[tuple, Tokenizer] = {}
_INSTANCES: dict[tuple, Tokenizer] = {}


__all__ = [
    "TOKENIZERS", "get_tokenizer", "Tokenizer", "TokenBatch", "dense_ids", "encode_tokens", "encode_token_lists",
    "SacreBleuTokenizer", "RougeTokenizer", "PTBTokenizer", "MeteorTokenizer", "SquadNormalizer", "Aij2022Normalizer",
]

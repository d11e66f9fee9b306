"""open_clip's CLIP BPE ids for a batch of captions without its per-caption Python work: the same ``LongTensor``.

open_clip's ``SimpleTokenizer.__call__`` spends about 120 µs per caption on the host (``ftfy.fix_text``, HTML
unescaping, a byte-to-unicode join and a BPE cache lookup per word, one small tensor per row): 31 ms for 256 captions
on a 2-core CPU, more than a GPU spends encoding them in bf16, so ``CLIPScore.update`` waited on it.
:class:`BatchCLIPTokenizer` gives the same ids (tested against the tokenizer on fuzzed captions) by

* cleaning only where cleaning can change something: a caption of printable ASCII and ``\\t \\n \\f \\r`` without
  ``&`` is left unchanged by ``ftfy.fix_text`` and ``html.unescape`` (ftfy deletes the other ASCII controls, ``\\v``
  included, and unescapes entities), so its clean form is ``" ".join(caption.split()).lower()``; any other caption
  goes through the tokenizer's own ``clean_fn``;
* splitting the whole batch into words with one ``findall`` of the tokenizer's pattern over the captions joined by
  ``"\\n<end_of_text>\\n"`` (no word spans whitespace, and the special token is the pattern's first alternative);
* mapping each distinct word once to its ids (the tokenizer's own ``bpe`` and vocabulary), then the batch's words
  at once, and laying the rows out with numpy.

Tokenizers it cannot reproduce exactly (open_clip's ``HFTokenizer``, a ``clean`` other than ``"lower"``, a reduction
mask, a caption holding the end-of-text token's text) are called as they are.
"""

from __future__ import annotations

import itertools
import re
from typing import Any, Sequence

import numpy as np
import torch
from torch import Tensor

#: printable ASCII and the whitespace ftfy keeps, without ``&``: text that ftfy and ``html.unescape`` leave alone
_NEEDS_CLEANING = re.compile(r"[^\t\n\x0c\r\x20-\x25\x27-\x7e]")
_EOT_TEXT = "<end_of_text>"
_SEPARATOR = f"\n{_EOT_TEXT}\n"
#: distinct words remembered (ids per word); past it the table starts afresh, so hostile streams stay bounded
MAX_WORDS = 1 << 20


class BatchCLIPTokenizer:
    """``tokenizer(captions) -> LongTensor[B, context_length]`` as open_clip's ``SimpleTokenizer`` returns it (ids
    after ``<start_of_text>``, ``<end_of_text>`` last, zero padding; a caption past the context keeps its first
    ``context_length - 1`` ids and ends with ``<end_of_text>``).

    Args:
        tokenizer: what ``open_clip.get_tokenizer(model_name)`` returned.
    """

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.exact = _reproducible(tokenizer)
        self._word_ids: dict[str, tuple[int, ...]] = {}
        if self.exact:
            self.sot, self.eot = int(tokenizer.sot_token_id), int(tokenizer.eot_token_id)
            self.context_length = int(tokenizer.context_length)

    def __call__(self, captions: Sequence[str]) -> Tensor:
        captions = [captions] if isinstance(captions, str) else list(captions)
        if not self.exact or not captions:
            return self.tokenizer(captions)
        clean = self.tokenizer.clean_fn
        cleaned = [" ".join(c.split()).lower() if _NEEDS_CLEANING.search(c) is None else clean(c) for c in captions]
        if any(_EOT_TEXT in c for c in cleaned):  # the separator would be ambiguous
            return self.tokenizer(captions)
        words = self.tokenizer.pat.findall(_SEPARATOR.join(cleaned))
        table = self._table(words)
        # the separator stands for "<end_of_text> <start_of_text>": the stream is every row's ids back to back
        flat = np.fromiter(
            itertools.chain((self.sot,), itertools.chain.from_iterable(map(table.__getitem__, words)), (self.eot,)),
            dtype=np.int64,
        )
        return _rows(flat, self.eot, len(captions), self.context_length)

    def _table(self, words: list[str]) -> dict[str, tuple[int, ...]]:
        """The ids of every word of ``words`` (and the separator), computing the unseen ones."""
        table = self._word_ids
        unseen = set(words).difference(table)
        if len(table) + len(unseen) > MAX_WORDS:
            table.clear()
            unseen = set(words)
        if not table:
            table[_EOT_TEXT] = (self.eot, self.sot)
        unseen.discard(_EOT_TEXT)
        tokenizer = self.tokenizer
        byte_encoder, encoder = tokenizer.byte_encoder, tokenizer.encoder
        for word in unseen:
            symbols = "".join(byte_encoder[b] for b in word.encode("utf-8"))
            table[word] = tuple(encoder[piece] for piece in tokenizer.bpe(symbols).split(" "))
        return table


def _reproducible(tokenizer: Any) -> bool:
    """Whether ``tokenizer`` is open_clip's ``SimpleTokenizer`` with the defaults this module reproduces."""
    try:
        from open_clip import tokenizer as oc
    except ImportError:
        return False
    return (
        type(tokenizer) is oc.SimpleTokenizer
        and getattr(tokenizer, "clean_fn", None) is oc._clean_lower
        and getattr(tokenizer, "reduction_fn", None) is None
        and bool(getattr(tokenizer, "context_length", None))
        and tokenizer.encoder.get(_EOT_TEXT) == tokenizer.eot_token_id
        # the installed ftfy leaves plain text alone (every character the shortcut takes, in and between words)
        and all(oc._clean_lower(probe) == " ".join(probe.split()).lower() for probe in _PLAIN_PROBES)
    )


_PLAIN = "\t\n\x0c\r" + "".join(chr(i) for i in range(0x20, 0x7F) if chr(i) != "&")
_PLAIN_PROBES = (_PLAIN, " ".join(_PLAIN), "".join(f"Ab{c}Cd" for c in _PLAIN), _PLAIN[::-1])


def _rows(flat: np.ndarray, eot: int, count: int, context: int) -> Tensor:
    """``flat: int64[T]`` (``count`` rows back to back, each ending with its first ``eot``) as ``LongTensor[count,
    context]``, zero-padded; a row longer than ``context`` keeps its first ``context - 1`` ids and ``eot``."""
    ends = np.flatnonzero(flat == eot) + 1
    starts = np.concatenate(([0], ends[:-1]))
    lengths = ends - starts
    row = np.repeat(np.arange(count), lengths)
    column = np.arange(flat.size) - np.repeat(starts, lengths)
    kept = column < context
    result = np.zeros((count, context), dtype=np.int64)
    result[row[kept], column[kept]] = flat[kept]
    result[lengths > context, context - 1] = eot
    return torch.from_numpy(result)

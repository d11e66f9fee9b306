"""The tokenizer interface and the one vocabulary builder every tokenizer uses.

A :class:`Tokenizer` is built once, by name (:func:`gpumetrics.text.tokenize.get_tokenizer`), with its options
checked at construction. It turns lines into a :class:`~gpumetrics.kernels.ngrams.TokenBatch` — flat ``int64`` ids
by first appearance plus the number of tokens of each line, on the host — with :meth:`Tokenizer.encode`; the
metric moves it to its device (``batch.to(device)``) and counts on tensors.
"""

from __future__ import annotations

import itertools
from typing import Any, Hashable, Sequence

import numpy as np

from gpumetrics.kernels.ngrams import TokenBatch


def dense_ids(items: Sequence[Hashable]) -> tuple[np.ndarray, list]:
    """Dense ids of hashable items (tokens, token tuples, strings) by first appearance: the one vocabulary builder.

    Args:
        items: ``T`` hashable items.

    Returns:
        ``(ids, vocabulary)``: ``int64[T]`` ids in ``[0, V)`` (equal items, equal ids) and the ``V`` distinct items
        in id order.

    Example:
        >>> ids, vocabulary = dense_ids(["b", "a", "b"])
        >>> ids.tolist(), vocabulary
        ([0, 1, 0], ['b', 'a'])
    """
    vocabulary = {item: index for index, item in enumerate(dict.fromkeys(items))}
    ids = np.fromiter(map(vocabulary.__getitem__, items), dtype=np.int64, count=len(items))
    return ids, list(vocabulary)


def encode_tokens(tokens: Sequence[str], lengths: Sequence[int] | np.ndarray) -> TokenBatch:
    """A :class:`TokenBatch` of a flat token list split into lines of ``lengths`` tokens (on the host).

    Args:
        tokens: ``T`` tokens, lines concatenated.
        lengths: ``S`` line lengths summing to ``T``.

    Raises:
        ValueError: the lengths do not add up to the number of tokens, or one is negative.

    Example:
        >>> batch = encode_tokens(["a", "b", "a", "c"], [3, 1])
        >>> batch.ids.tolist(), batch.lengths.tolist(), batch.vocab_size, batch.vocabulary
        ([0, 1, 0, 2], [3, 1], 3, ['a', 'b', 'c'])
    """
    lengths = np.asarray(lengths, dtype=np.int64).reshape(-1)
    if int(lengths.sum()) != len(tokens) or bool((lengths < 0).any()):
        raise ValueError(f"`lengths` must be non-negative and sum to len(tokens)={len(tokens)}")
    ids, vocabulary = dense_ids(tokens)
    return TokenBatch(ids, lengths, len(vocabulary), vocabulary)


def encode_token_lists(token_lists: Sequence[Sequence[str]]) -> TokenBatch:
    """:func:`encode_tokens` of one token list per line.

    Example:
        >>> encode_token_lists([["x", "y"], [], ["y"]]).ids.tolist()
        [0, 1, 1]
    """
    return encode_tokens(list(itertools.chain.from_iterable(token_lists)), [len(tokens) for tokens in token_lists])


class Tokenizer:
    """A tokenizer chosen by name, its options fixed at construction.

    Subclasses set ``name`` and implement :meth:`tokenize`; they override :meth:`tokenize_batch` where lines are not
    independent or a batch is faster than a loop, and :meth:`encode` where ids come faster than through token
    strings.
    """

    name: str = ""

    def tokenize(self, line: str) -> Sequence[str]:
        """Tokens of one line (for single lines and debugging; metrics call :meth:`encode`)."""
        raise NotImplementedError

    def tokenize_batch(self, lines: Sequence[str]) -> list[Sequence[str]]:
        """Tokens of each line, in order; each distinct line is tokenised once and equal lines share one token list
        (read it, do not change it)."""
        distinct: dict[str, Sequence[str]] = dict.fromkeys(lines)  # type: ignore[assignment]
        for line in distinct:
            distinct[line] = self.tokenize(line)
        return [distinct[line] for line in lines]

    def encode(self, lines: Sequence[str]) -> TokenBatch:
        """The tokens of ``S`` lines as a host :class:`TokenBatch`: ``ids: int64[T]`` (equal tokens, equal ids),
        ``lengths: int64[S]`` tokens per line, ``vocabulary``: the token of each id."""
        return encode_token_lists(self.tokenize_batch(lines))

    def signature(self) -> dict[str, Any]:
        """This tokenizer's part of a metric signature, e.g. ``{"tok": "13a", "case": "mixed"}``."""
        return {"tok": self.name}

    def __repr__(self) -> str:
        options = ", ".join(f"{key}={value!r}" for key, value in self.signature().items())
        return f"{type(self).__name__}({options})"

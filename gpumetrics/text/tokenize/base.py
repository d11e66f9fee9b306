"""The tokenizer interface and the one vocabulary builder every tokenizer uses.

A :class:`Tokenizer` is built once, by name (:func:`gpumetrics.text.tokenize.get_tokenizer`), with its options
checked at construction. It turns lines into a :class:`~gpumetrics.kernels.ngrams.TokenBatch` — flat ``int64`` ids
by first appearance plus the number of tokens of each line, on the host — with :meth:`Tokenizer.encode`; the
metric moves it to its device (``batch.to(device)``) and counts on tensors.
"""

from __future__ import annotations

import itertools
import re
from typing import Any, Callable, Sequence

import numpy as np

from gpumetrics.kernels.ngrams import TokenBatch
from gpumetrics.kernels.vocab import dense_ids


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


def encode_split(lines: Sequence[str], separator: str = " ") -> TokenBatch:
    """:func:`encode_tokens` of ``line.split(separator)`` for every line (``""`` is one empty token), with one join
    and one split of the whole batch instead of one split per line.

    Example:
        >>> batch = encode_split(["a b", "", "b  a"])
        >>> batch.ids.tolist(), batch.lengths.tolist(), batch.vocabulary
        ([0, 1, 2, 1, 2, 0], [2, 1, 3], ['a', 'b', ''])
    """
    if not lines:
        return encode_tokens([], [])
    # a line holds one more piece than separators, so the joined split is the per-line splits concatenated
    lengths = np.fromiter(map(str.count, lines, itertools.repeat(separator)), dtype=np.int64, count=len(lines)) + 1
    return encode_tokens(separator.join(lines).split(separator), lengths)


def retokenize(batch: TokenBatch, split: Callable[[str], Sequence[str]]) -> TokenBatch:
    """Each token of ``batch`` replaced by the tokens ``split`` gives its vocabulary entry (0, 1 or more), with array
    operations over the corpus: ``split`` runs once per distinct token, not once per occurrence.

    Example:
        >>> batch = retokenize(encode_split(["a-b c", "c"]), lambda token: token.split("-"))
        >>> batch.ids.tolist(), batch.lengths.tolist(), batch.vocabulary
        ([0, 1, 2, 2], [3, 1], ['a', 'b', 'c'])
    """
    pieces = [split(token) for token in batch.vocabulary]
    sizes = np.fromiter(map(len, pieces), dtype=np.int64, count=len(pieces))
    piece_ids, vocabulary = dense_ids(list(itertools.chain.from_iterable(pieces)))
    ids = np.asarray(batch.ids, dtype=np.int64)
    token_sizes = sizes[ids]
    ends = np.cumsum(token_sizes)
    starts = ends - token_sizes
    # piece k of token t sits at piece_ids[first piece of t's entry + k]
    total = int(ends[-1]) if ends.size else 0
    source = np.repeat((np.cumsum(sizes) - sizes)[ids] - starts, token_sizes) + np.arange(total)
    line_bounds = np.concatenate(([0], np.cumsum(batch.lengths, dtype=np.int64)))
    lengths = np.diff(np.concatenate(([0], ends))[line_bounds])
    return TokenBatch(piece_ids[source], lengths, len(vocabulary), vocabulary)


_WHITESPACE = re.compile(r"\s")  # exactly the characters str.split() splits on


def whitespace_words(pieces: TokenBatch) -> TokenBatch:
    """The words ``line.split()`` of each line from its ``line.split(" ")`` pieces (:func:`encode_split`): the same
    batch unless a piece is empty or holds other whitespace (a no-break space, a tab), which is split once per
    distinct piece.

    Example:
        >>> whitespace_words(encode_split(["a  b\xa0c"])).vocabulary
        ['a', 'b', 'c']
    """
    if "" in pieces.vocabulary or _WHITESPACE.search("".join(pieces.vocabulary)):
        return retokenize(pieces, str.split)
    return pieces


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

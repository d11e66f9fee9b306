"""YouTokenToMe BPE (``bpe.model``) read and applied without the ``youtokentome`` package (no wheel for Python ≥ 3.11).

ruCLIP ships its tokenizer as a YouTokenToMe model; this module reads that file and encodes text to the same ids as
``youtokentome.BPE(path).encode(texts, output_type=yttm.OutputType.ID)`` — dropout-free encoding only
(``dropout_prob=0``, the value ruCLIP uses), no ``bos``/``eos``/``reverse`` flags (callers add their own ids).

The model file (``BPEState::dump``) is plain text, whitespace-separated integers::

    <n_chars> <n_rules>
    <code point> <id>          × n_chars   (the alphabet, U+2581 "▁" marks a word start)
    <left id> <right id> <id>  × n_rules   (merge rules, in the order they were learnt = their priority)
    <unk id> <pad id> <bos id> <eos id>    (-1 for an absent special token)

Encoding, as YouTokenToMe's ``BaseEncoder::encode_sentence`` defines it:

1. trailing whitespace is dropped; the text splits into words at whitespace (C ``isspace`` on code points < 256 —
   space, ``\\t \\n \\v \\f \\r`` — and U+2581 itself; NBSP, U+0085, U+2028 … are *not* whitespace);
2. each word becomes ``[▁] + its characters``; a run of consecutive characters outside the alphabet becomes one
   unknown token (written as the ``unk`` id; no rule merges across it);
3. repeatedly the adjacent pair with the lowest rule index is merged (ties: the leftmost pair) until no pair has a
   rule; the ids of the word's tokens follow each other, words in order.
"""

from __future__ import annotations

import functools
import heapq
import os
from pathlib import Path
from typing import Sequence, Union

SPACE_MARK = "\u2581"
# C ``isspace`` for code points < 256 (the "C" and UTF-8 locales agree: 9-13 and 32) plus the word-start mark
_SPACES = frozenset("\t\n\v\f\r " + SPACE_MARK)


class YTTMFormatError(ValueError):
    """A ``bpe.model`` file that is not a YouTokenToMe model."""


class YTTMBPE:
    """A YouTokenToMe BPE model: ``encode(texts) -> list[list[int]]`` equal to youtokentome's dropout-free ids.

    Args:
        path: a YouTokenToMe ``bpe.model`` file.
        cache_size: words whose ids are memoised (an LRU per instance); 0 disables it.

    Attributes:
        char_ids: ``{character: id}`` of the alphabet.
        rules: ``{(left id, right id): (priority, merged id)}``.
        unk_id, pad_id, bos_id, eos_id: the special ids of the file (-1 when absent).
        vocab_size: alphabet + rules + special tokens (youtokentome's ``vocab_size()``).

    Raises:
        FileNotFoundError: ``path`` is not a file.
        YTTMFormatError: the file is not a YouTokenToMe model (a ``ValueError``).

    Example:
        >>> import tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "bpe.model")
        >>> # alphabet ▁=4 a=5 b=6; rules a+b→7, ▁+7→8; special ids unk=1 pad=0 bos=2 eos=3
        >>> _ = open(path, "w").write("3 2\\n9601 4\\n97 5\\n98 6\\n5 6 7\\n4 7 8\\n1 0 2 3\\n")
        >>> YTTMBPE(path).encode(["ab ba  a?b", ""])
        [[8, 4, 6, 5, 4, 5, 1, 6], []]
    """

    def __init__(self, path: Union[str, os.PathLike], cache_size: int = 65536) -> None:
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"YouTokenToMe model file {str(path)!r} does not exist")
        try:
            numbers = [int(token) for token in path.read_bytes().split()]
        except ValueError as error:
            raise YTTMFormatError(f"{str(path)!r} is not a YouTokenToMe BPE model (non-integer field: "
                                  f"{error})") from None
        if len(numbers) < 2:
            raise YTTMFormatError(f"{str(path)!r} is not a YouTokenToMe BPE model (no header)")
        n_chars, n_rules = numbers[0], numbers[1]
        expected = 2 + 2 * n_chars + 3 * n_rules + 4
        if n_chars < 0 or n_rules < 0 or len(numbers) != expected:
            raise YTTMFormatError(
                f"{str(path)!r} is not a YouTokenToMe BPE model: the header announces {n_chars} characters and "
                f"{n_rules} rules ({expected} integers), the file holds {len(numbers)} integers"
            )
        alphabet = numbers[2 : 2 + 2 * n_chars]
        try:
            self.char_ids = {chr(alphabet[i]): alphabet[i + 1] for i in range(0, len(alphabet), 2)}
        except (ValueError, OverflowError) as error:
            raise YTTMFormatError(f"{str(path)!r}: a code point of the alphabet is out of range ({error})") from None
        if SPACE_MARK not in self.char_ids:
            raise YTTMFormatError(f"{str(path)!r}: the alphabet lacks the word-start mark U+2581")
        start = 2 + 2 * n_chars
        self.rules: dict[tuple[int, int], tuple[int, int]] = {}
        for index in range(n_rules):
            left, right, merged = numbers[start + 3 * index : start + 3 * index + 3]
            self.rules[(left, right)] = (index, merged)  # a repeated pair: the later rule wins, as in youtokentome
        self.unk_id, self.pad_id, self.bos_id, self.eos_id = numbers[-4:]
        self.vocab_size = n_chars + n_rules + sum(i != -1 for i in numbers[-4:])
        self.path = str(path)
        self._word_start = self.char_ids[SPACE_MARK]
        self._encode_word = (functools.lru_cache(maxsize=cache_size)(self._merge_word) if cache_size
                             else self._merge_word)

    def __repr__(self) -> str:
        return f"YTTMBPE({self.path!r}, vocab_size={self.vocab_size})"

    @staticmethod
    def words(text: str) -> list[str]:
        """The words of ``text`` as youtokentome splits it (whitespace as its C ``isspace``, and U+2581)."""
        words, current = [], []
        for char in text:
            if char in _SPACES:
                if current:
                    words.append("".join(current))
                    current = []
            else:
                current.append(char)
        if current:
            words.append("".join(current))
        return words

    def _symbols(self, word: str) -> list[int]:
        """``[▁ id] + character ids``; a run of unknown characters is one negative id (distinct per run)."""
        symbols, unknown = [self._word_start], 0
        previous_known = True
        for char in word:
            known = self.char_ids.get(char)
            if known is not None:
                symbols.append(known)
            elif previous_known:  # a new run of characters outside the alphabet
                unknown -= 1
                symbols.append(unknown)
            previous_known = known is not None
        return symbols

    def _merge_word(self, word: str) -> tuple[int, ...]:
        symbols = self._symbols(word)
        size = len(symbols)
        following = list(range(1, size)) + [-1]
        preceding = list(range(-1, size - 1))
        rules = self.rules
        heap = []  # (rule priority, position of the left symbol): lowest rule first, then leftmost
        for position in range(size - 1):
            rule = rules.get((symbols[position], symbols[position + 1]))
            if rule is not None:
                heap.append((rule[0], position))
        heapq.heapify(heap)
        alive = [True] * size
        while heap:
            priority, left = heapq.heappop(heap)
            right = following[left]
            if not alive[left] or right == -1:
                continue
            rule = rules.get((symbols[left], symbols[right]))
            if rule is None or rule[0] != priority:  # stale: one side has been merged since
                continue
            symbols[left] = rule[1]
            alive[right] = False
            after = following[right]
            following[left] = after
            if after != -1:
                preceding[after] = left
                rule = rules.get((symbols[left], symbols[after]))
                if rule is not None:
                    heapq.heappush(heap, (rule[0], left))
            before = preceding[left]
            if before != -1:
                rule = rules.get((symbols[before], symbols[left]))
                if rule is not None:
                    heapq.heappush(heap, (rule[0], before))
        unk = self.unk_id
        return tuple(unk if symbols[i] < 0 else symbols[i] for i in range(size) if alive[i])

    def encode_one(self, text: str) -> list[int]:
        """Ids of one text (no bos/eos)."""
        if not isinstance(text, str):
            raise TypeError(f"`text` must be a string, got {type(text).__name__}")
        ids: list[int] = []
        for word in self.words(text):
            ids.extend(self._encode_word(word))
        return ids

    def encode(self, texts: Sequence[str]) -> list[list[int]]:
        """Ids of each text: ``youtokentome.BPE.encode(texts, output_type=ID)`` (no bos/eos, no dropout).

        Raises:
            TypeError: ``texts`` is a single string or holds a non-string.
        """
        if isinstance(texts, str):
            raise TypeError("`texts` must be a sequence of strings, got one string (wrap it in a list)")
        return [self.encode_one(text) for text in texts]

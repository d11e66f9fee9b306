"""ROUGE tokenizers (google-research ``rouge-score``, and a Unicode variant) — used by gpumetrics/text/rouge.py."""

from __future__ import annotations

import functools
import re
import sys
import unicodedata
from typing import Any, Sequence

import numpy as np

from gpumetrics.core import check_bool, check_choice
from gpumetrics.kernels.ngrams import TokenBatch
from gpumetrics.text.tokenize.base import Tokenizer, dense_ids

ROUGE_TOKENIZERS = ("rouge-score", "unicode")

# rouge-score lowercases, replaces every run of [^a-z0-9] by a space and splits: the tokens are exactly the maximal
# runs of [a-z0-9] of the lowercased text (one findall instead of sub + split + filter).
_ROUGE_SCORE_TOKEN = re.compile(r"[a-z0-9]+")
_ROUGE_VALID_TOKEN = re.compile(r"^[a-z0-9]+$")
# Scripts written without spaces between words: every character is a token in the `unicode` tokeniser.
_NO_SPACE_SCRIPTS = (
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK unified / extension A / compatibility ideographs
    "\U00020000-\U0002fa1f"  # CJK extensions B-F and compatibility supplement
)


@functools.lru_cache(maxsize=1)
def _unicode_token_pattern() -> re.Pattern:
    """Runs of letters, digits and combining marks (Python's ``\\w`` omits marks, which would split ``हिन्दी``)."""
    ranges: list[tuple[int, int]] = []
    for code in range(sys.maxunicode + 1):
        if unicodedata.category(chr(code))[0] == "M":
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
    marks = "".join(f"{chr(a)}-{chr(b)}" if a != b else chr(a) for a, b in ranges)
    return re.compile(f"[{_NO_SPACE_SCRIPTS}]|(?:[^\\W_{_NO_SPACE_SCRIPTS}]|[{marks}])+")


@functools.lru_cache(maxsize=1)
def _porter() -> object:
    from nltk.stem import porter  # rouge-score's stemmer: NLTK's PorterStemmer in its default (NLTK_EXTENSIONS) mode

    return porter.PorterStemmer()


@functools.lru_cache(maxsize=1 << 18)
def rouge_stem(token: str) -> str:
    """rouge-score's stemming rule: Porter stem of ASCII tokens longer than 3 characters, others unchanged.

    Example:
        >>> rouge_stem("running"), rouge_stem("cats"), rouge_stem("ran"), rouge_stem("кошки")
        ('run', 'cat', 'ran', 'кошки')
    """
    if len(token) <= 3 or not _ROUGE_VALID_TOKEN.match(token):
        return token
    return _porter().stem(token)


_ALNUM_CODES = np.zeros(256, dtype=np.uint8)  # byte → base-37 digit 1..36 for [a-z0-9], 0 otherwise
_ALNUM_CODES[np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", dtype=np.uint8)] = np.arange(1, 37)
_ALNUM_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789"
_PACKED_CHARS = 12  # 37**12 < 2**63: tokens of up to 12 characters pack exactly into an int64
_PACKED_LIMIT = 37**_PACKED_CHARS
_POWERS_37 = np.int64(37) ** np.arange(_PACKED_CHARS, dtype=np.int64)


def _unpack_token(value: int) -> str:
    chars = []
    while value:
        value, digit = divmod(value, 37)
        chars.append(_ALNUM_CHARS[digit - 1])
    return "".join(chars)  # little-endian: the first character is the lowest digit


def _rouge_score_corpus_codes(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str], np.ndarray]:
    """rouge-score tokens of all texts without a Python step per token.

    The lowercased texts are joined with NUL and scanned as UTF-8 bytes: every non-ASCII character is a separator
    for rouge-score, so a token is a run of ``[a-z0-9]`` bytes. Tokens of up to 12 characters are packed exactly as
    ``Σ_k digit(char_k) · 37**k`` with digits 1..36 (injective: the highest non-zero digit gives the length); longer
    ones get ids ``37**12 + k`` through a dict.

    Returns:
        ``(codes: int64[T], text_of_token: int64[T], line_of_token: int64[T], long_tokens, lines_per_text)``, with
        lines numbered over the whole corpus.
    """
    joined = "\x00".join(texts)
    if joined.count("\x00") != len(texts) - 1:  # NUL is a separator for rouge-score anyway
        joined = "\x00".join(text.replace("\x00", " ") for text in texts)
    data = joined.lower().encode("utf-8", "surrogatepass")  # lone surrogates: non-ASCII bytes, i.e. separators
    raw = np.frombuffer(data, dtype=np.uint8)
    digits = _ALNUM_CODES[raw]
    edges = np.diff((digits > 0).view(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
    lengths = ends - starts
    text_ends = np.flatnonzero(raw == 0)
    token_text = np.searchsorted(text_ends, starts)
    token_line = np.searchsorted(np.flatnonzero((raw == 0) | (raw == 10)), starts)
    newlines = np.flatnonzero(raw == 10)
    lines_per_text = np.bincount(np.searchsorted(text_ends, newlines), minlength=len(texts)).astype(np.int64) + 1

    codes = digits[starts].astype(np.int64)
    padded = np.concatenate([digits, np.zeros(_PACKED_CHARS, dtype=np.uint8)])
    for k in range(1, min(int(lengths.max()) if lengths.size else 0, _PACKED_CHARS)):  # Horner over positions
        digit = padded[starts + k].astype(np.int64)
        digit[lengths <= k] = 0
        codes += digit * _POWERS_37[k]
    long_tokens: list[str] = []
    long = np.flatnonzero(lengths > _PACKED_CHARS)
    if long.size:
        long_ids, long_tokens = dense_ids([data[starts[t] : ends[t]].decode("ascii") for t in long.tolist()])
        codes[long] = _PACKED_LIMIT + long_ids
    return codes, token_text, token_line, long_tokens, lines_per_text




def _rouge_score_tokens(text: str) -> list[str]:
    return _ROUGE_SCORE_TOKEN.findall(text.lower())


def _unicode_tokens(text: str) -> list[str]:
    return _unicode_token_pattern().findall(unicodedata.normalize("NFKC", text).lower())


class RougeTokenizer(Tokenizer):
    """Tokens of a text as ROUGE compares them.

    * ``"rouge-score"`` — google-research rouge-score's ``DefaultTokenizer``: lowercase, tokens are the runs of
      ``[a-z0-9]`` (everything else, including every non-ASCII letter, is a separator). Equal to
      ``rouge_score.tokenizers.DefaultTokenizer(use_stemmer).tokenize(text)``.
    * ``"unicode"`` — lowercase (after NFKC), tokens are runs of Unicode letters, digits and combining marks; every
      Han / Hiragana / Katakana character is a token of its own. On ASCII text it equals ``"rouge-score"``.

    With ``use_stemmer`` ASCII tokens longer than 3 characters are Porter-stemmed (:func:`rouge_stem`), as
    rouge-score does.

    Args:
        name: ``"rouge-score"`` or ``"unicode"``.
        use_stemmer: apply :func:`rouge_stem`.

    Raises:
        ValueError: unknown ``name``.
        TypeError: ``use_stemmer`` is not a bool.

    Example:
        >>> RougeTokenizer().tokenize("The cat's 2 hats, Кот!")
        ['the', 'cat', 's', '2', 'hats']
        >>> RougeTokenizer("unicode", use_stemmer=True).tokenize("The cat's 2 hats, Кот! 猫が")
        ['the', 'cat', 's', '2', 'hat', 'кот', '猫', 'が']
    """

    def __init__(self, name: str = "rouge-score", use_stemmer: bool = False) -> None:
        check_choice(name, "tokenizer", ROUGE_TOKENIZERS)
        check_bool(use_stemmer, "use_stemmer")
        self.name, self.use_stemmer = name, use_stemmer
        self._packed = name == "rouge-score"  # ASCII tokens: the packed byte scan, and rouge-score's validity filter
        self._raw_tokens = _rouge_score_tokens if self._packed else _unicode_tokens

    def tokenize(self, line: str) -> list[str]:
        """Tokens of one text (its line breaks are separators like any other)."""
        tokens = self._raw_tokens(line)
        if self.use_stemmer:
            tokens = [rouge_stem(token) for token in tokens]
            if self._packed:  # rouge-score's final validity filter, applied after stemming
                tokens = [token for token in tokens if _ROUGE_VALID_TOKEN.match(token)]
        return tokens

    def encode(self, lines: Sequence[str]) -> TokenBatch:
        """Ids of the tokens of each text (see :meth:`encode_with_lines`)."""
        return self.encode_with_lines(lines)[0]

    def encode_with_lines(self, texts: Sequence[str]) -> tuple[TokenBatch, np.ndarray, np.ndarray]:
        """The tokens of N texts as ids, with their line (``"\\n"``-separated) layout, for ROUGE-Lsum.

        For ``"rouge-score"`` the scan is vectorised over bytes (see :func:`_rouge_score_corpus_codes`) and stemming
        is applied once per distinct token; its batch keeps no ``vocabulary`` unless stemming built one.
        ``"unicode"`` tokenises line by line.

        Returns:
            ``(batch, line_lengths, lines_per_text)``: ``batch.lengths: int64[N]`` tokens per text;
            ``line_lengths: int64[L]`` tokens per line, lines of all texts in order (empty lines included);
            ``lines_per_text: int64[N]`` (``text.count("\\n") + 1``, so ``L`` is their sum).

        Example:
            >>> batch, line_lengths, lines_per_text = RougeTokenizer(use_stemmer=True).encode_with_lines(
            ...     ["The cat\\nthe DOG", "", "dogs"])
            >>> batch.ids.tolist(), batch.lengths.tolist(), line_lengths.tolist(), batch.vocabulary
            ([0, 2, 0, 1, 1], [4, 0, 1], [2, 2, 0, 1], ['the', 'dog', 'cat'])
        """
        n_texts = len(texts)
        vocabulary = None
        if self._packed:
            codes, token_text, token_line, long_tokens, lines_per_text = _rouge_score_corpus_codes(texts)
            distinct, ids = np.unique(codes, return_inverse=True)
            ids = ids.reshape(-1).astype(np.int64)
            if self.use_stemmer:
                words = [_unpack_token(c) if c < _PACKED_LIMIT else long_tokens[c - _PACKED_LIMIT]
                         for c in distinct.tolist()]
                stems = [rouge_stem(word) for word in words]
                remap, vocabulary = dense_ids(stems)
                valid = np.array([_ROUGE_VALID_TOKEN.match(stem) is not None for stem in stems], dtype=bool)
                if not valid.all():  # rouge-score drops tokens whose stem is not [a-z0-9]+
                    keep = valid[ids]
                    ids, token_text, token_line = ids[keep], token_text[keep], token_line[keep]
                ids = remap[ids]
                vocab_size = len(vocabulary)
            else:
                vocab_size = int(distinct.size)
            text_lengths = np.bincount(token_text, minlength=n_texts).astype(np.int64)
            line_lengths = np.bincount(token_line, minlength=int(lines_per_text.sum())).astype(np.int64)
        else:
            lines_per_text = np.array([text.count("\n") + 1 for text in texts], dtype=np.int64)
            token_lists = [self.tokenize(piece) for text in texts for piece in text.split("\n")]
            line_lengths = np.fromiter(map(len, token_lists), dtype=np.int64, count=len(token_lists))
            ids, vocabulary = dense_ids([token for tokens in token_lists for token in tokens])
            text_of_line = np.repeat(np.arange(n_texts), lines_per_text)
            text_lengths = np.bincount(text_of_line, weights=line_lengths, minlength=n_texts).astype(np.int64)
            vocab_size = len(vocabulary)
        return TokenBatch(ids, text_lengths, vocab_size, vocabulary), line_lengths, lines_per_text

    def signature(self) -> dict[str, Any]:
        """``{"tokenizer": name, "stemmer": "porter" | "no"}``."""
        return {"tokenizer": self.name, "stemmer": "porter" if self.use_stemmer else "no"}

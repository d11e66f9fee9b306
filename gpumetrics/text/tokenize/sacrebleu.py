"""sacrebleu's tokenizers (13a, intl, char, zh, none) as BLEU sees them — used by gpumetrics/text/bleu.py.

Independent re-implementations of sacrebleu 2.x's tokenisers, written from their documented rules (mteval-v13a,
mteval-v14 international, per-character, Chinese-character splitting) and compared token by token with sacrebleu
itself in tests/text/test_bleu.py. The speed comes from memoisation, not from different rules: every rule is
local — a match never needs more than the characters of one whitespace-separated chunk plus whether whitespace
(or nothing, at a line edge) surrounds it — so each distinct chunk is tokenised once per batch, with its context,
and a corpus costs one regex pass per distinct chunk instead of one per character.
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Any, Callable, Sequence

import numpy as np

from gpumetrics.core import check_bool, check_choice
from gpumetrics.kernels.ngrams import TokenBatch
from gpumetrics.text.tokenize.base import Tokenizer, dense_ids, encode_token_lists, retokenize

SACREBLEU_TOKENIZERS = ("13a", "intl", "char", "zh", "none")

# mteval-v13a: ASCII punctuation and symbols other than . , - and ' are always split off (a per-character mapping).
_MTEVAL_TRANSLATION = {ord(char): f" {char} " for char in "{|}~[\\]^_` !\"#$%&()*+:;<=>?@/"}
_MTEVAL_CONTEXT_RULES = (
    (re.compile(r"([^0-9])([\.,])"), r"\1 \2 "),  # period and comma unless preceded by a digit
    (re.compile(r"([\.,])([^0-9])"), r" \1 \2"),  # period and comma unless followed by a digit
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),  # dash preceded by a digit
)
_THIRTEEN_A_ENTITIES = (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"))

# Ranges that sacrebleu's `zh` tokeniser treats as Chinese characters, as code points. sacrebleu writes two of its
# supplementary-plane bounds as '\u20000'..'\u2a6d6' and '\u2f800'..'\u2fa1d', which Python reads as two-character
# strings; compared with one character they select U+2001..U+2A6D and U+2F81..U+2FA1 (general punctuation, currency,
# arrows, maths, dingbats …). We reproduce what sacrebleu does, not what its comment intended.
_ZH_RANGES = (
    (0x3400, 0x4DB5), (0x4E00, 0x9FA5), (0x9FA6, 0x9FBB), (0xF900, 0xFA2D), (0xFA30, 0xFA6A), (0xFA70, 0xFAD9),
    (0x2001, 0x2A6D), (0x2F81, 0x2FA1), (0xFF00, 0xFFEF), (0x2E80, 0x2EFF), (0x3000, 0x303F), (0x31C0, 0x31EF),
    (0x2F00, 0x2FDF), (0x2FF0, 0x2FFF), (0x3100, 0x312F), (0x31A0, 0x31BF), (0xFE10, 0xFE1F), (0xFE30, 0xFE4F),
    (0x2600, 0x26FF), (0x2700, 0x27BF), (0x3200, 0x32FF), (0x3300, 0x33FF),
)


def is_sacrebleu_chinese_char(char: str) -> bool:
    """Whether sacrebleu's ``zh`` tokeniser splits ``char`` off as a Chinese character.

    Example:
        >>> is_sacrebleu_chinese_char("猫"), is_sacrebleu_chinese_char("a"), is_sacrebleu_chinese_char("€")
        (True, False, True)
    """
    code = ord(char)
    return any(start <= code <= end for start, end in _ZH_RANGES)


@functools.lru_cache(maxsize=1)
def _zh_translation() -> dict[int, str]:
    table = {code: f" {chr(code)} " for start, end in _ZH_RANGES for code in range(start, end + 1)}
    table.update(_MTEVAL_TRANSLATION)  # applied in one pass: the Chinese ranges hold no ASCII
    return table


@functools.lru_cache(maxsize=1)
def _intl_rules() -> tuple[tuple[object, str], ...]:
    import regex  # Unicode property classes (\p{P}); a dependency of the `text` extra

    return (
        (regex.compile(r"(\P{N})(\p{P})"), r"\1 \2 "),  # punctuation preceded by a non-digit
        (regex.compile(r"(\p{P})(\P{N})"), r" \1 \2"),  # punctuation followed by a non-digit
        (regex.compile(r"(\p{S})"), r" \1 "),  # symbols
    )


def _apply(text: str, rules: Sequence[tuple[object, str]]) -> str:
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


def _tokenize_chunks(lines: list[str], rule, edges_are_spaced: bool) -> list[list[str]]:
    """Tokens of each line, where ``rule(text) -> str`` is the tokeniser's rewrite of a whole line.

    ``rule`` is called once per distinct (chunk, left context, right context): the chunk padded with a space on each
    side that has whitespace next to it in the line. With ``edges_are_spaced`` every chunk has whitespace on both
    sides (mteval-v13a pads the line with spaces).
    """

    @functools.lru_cache(maxsize=None)
    def interior(chunk: str) -> tuple[str, ...]:
        return tuple(rule(f" {chunk} ").split())

    @functools.lru_cache(maxsize=None)
    def edge(chunk: str, left: bool, right: bool) -> tuple[str, ...]:
        return tuple(rule(f"{' ' if left else ''}{chunk}{' ' if right else ''}").split())

    chain = itertools.chain.from_iterable
    if edges_are_spaced:
        return [list(chain(map(interior, line.split()))) for line in lines]
    return _tokenize_edge_chunks(lines, interior, edge)


def _tokenize_chunks_flat(lines: list[str], rule, preprocess) -> tuple[list[str], list[int]]:
    """:func:`_tokenize_chunks` with whitespace around every chunk, returned flat: (tokens, tokens per line).

    All lines are joined with a separator chunk that occurs in no line, each distinct chunk is rewritten once, and
    the rewritten text is split once: a handful of C-level passes, no Python step per line, chunk or token.
    ``preprocess(text)`` rewrites the joined text first; it must act on each line independently.
    """
    if not lines:
        return [], []
    separator = _line_separator(lines)
    if separator is None:  # every candidate control character occurs in the input: line by line
        lines = [preprocess(line) for line in lines]
        token_lists = _tokenize_chunks(lines, rule, edges_are_spaced=True)
        return list(itertools.chain.from_iterable(token_lists)), list(map(len, token_lists))
    chunks = preprocess(f" {separator} ".join(lines) + f" {separator}").split()
    rewritten = {chunk: rule(f" {chunk} ") for chunk in dict.fromkeys(chunks)}  # the separator maps to itself
    tokens = " ".join(map(rewritten.__getitem__, chunks)).split()
    ends = np.flatnonzero(np.fromiter(map(separator.__eq__, tokens), dtype=bool, count=len(tokens)))
    lengths = np.diff(ends, prepend=-1) - 1
    return list(filter(separator.__ne__, tokens)), lengths.tolist()


# Control characters that are neither whitespace, punctuation, symbols nor digits: line separators for the joined
# text (one that occurs in no line is chosen per call).
SEPARATOR_CANDIDATES = tuple(chr(code) for code in (*range(0x01, 0x09), *range(0x0E, 0x1C), 0x00))


def _line_separator(lines: list[str]) -> str | None:
    """A separator candidate that occurs in no line, or None when every one does."""
    return next((c for c in SEPARATOR_CANDIDATES if all(c not in line for line in lines)), None)


def _tokenize_edge_chunks(lines: list[str], interior, edge) -> list[list[str]]:
    chain = itertools.chain.from_iterable
    out = []
    for line in lines:
        chunks = line.split()
        if len(chunks) <= 1:
            out.append(list(edge(chunks[0], line[0].isspace(), line[-1].isspace())) if chunks else [])
            continue
        tokens = list(edge(chunks[0], line[0].isspace(), True))
        tokens.extend(chain(map(interior, chunks[1:-1])))
        tokens.extend(edge(chunks[-1], True, line[-1].isspace()))
        out.append(tokens)
    return out


def _thirteen_a_line(line: str) -> str:
    # mteval-v13a's language-independent part, in sacrebleu's order; no pattern can span a line separator.
    line = line.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
    if "&" in line:
        for entity, char in _THIRTEEN_A_ENTITIES:
            line = line.replace(entity, char)
    return line


def _mteval_context(text: str) -> str:
    # the context rules need a period, comma or dash; most chunks have none
    if "." in text or "," in text or "-" in text:
        return _apply(text, _MTEVAL_CONTEXT_RULES)
    return text


def _thirteen_a_rule(text: str) -> str:
    return _mteval_context(text.translate(_MTEVAL_TRANSLATION))


def _zh_rule(text: str) -> str:
    return _mteval_context(text.translate(_zh_translation()))


def _intl_rule(text: str) -> str:
    return _apply(text, _intl_rules())




def _encode_chunks_flat(lines: list[str], separator: str, rule: Callable[[str], str],
                        preprocess: Callable[[str], str]) -> TokenBatch:
    """:func:`_tokenize_chunks_flat` straight to ids: the corpus' whitespace chunks are numbered, then each distinct
    chunk is rewritten once and its tokens spliced in with array operations (:func:`retokenize`)."""
    text = preprocess(f" {separator} ".join(lines) + f" {separator}")
    chunk_ids, chunks = dense_ids(text.split())
    line_ends = np.flatnonzero(chunk_ids == chunks.index(separator)) + 1  # a line's chunks end with a separator
    by_line = TokenBatch(chunk_ids, np.diff(line_ends, prepend=0), len(chunks), chunks)
    return retokenize(by_line, lambda chunk: () if chunk == separator else rule(f" {chunk} ").split())


def _unchanged(text: str) -> str:
    return text


#: tokenizers whose tokens never cross a whitespace chunk: (rule rewriting a spaced chunk, line preprocessing), so
#: :func:`_encode_chunks_flat` can number each distinct chunk once
_CHUNK_RULES = {"13a": (_thirteen_a_rule, _thirteen_a_line), "none": (_unchanged, _unchanged)}


def _thirteen_a_lists(lines: list[str]) -> list[list[str]]:
    tokens, lengths = _tokenize_chunks_flat(lines, _thirteen_a_rule, _thirteen_a_line)
    it = iter(tokens)
    return [list(itertools.islice(it, n)) for n in lengths]


def _intl_lists(lines: list[str]) -> list[list[str]]:
    return _tokenize_chunks(lines, _intl_rule, edges_are_spaced=False)


def _zh_lists(lines: list[str]) -> list[list[str]]:
    return _tokenize_chunks([line.strip() for line in lines], _zh_rule, edges_are_spaced=False)


def _char_lists(lines: list[str]) -> list[list[str]]:
    return [list("".join(line.split())) for line in lines]


def _whitespace_lists(lines: list[str]) -> list[list[str]]:
    return [line.split() for line in lines]


_TOKEN_LISTS: dict[str, Callable[[list[str]], list[list[str]]]] = {
    "13a": _thirteen_a_lists, "intl": _intl_lists, "char": _char_lists, "zh": _zh_lists, "none": _whitespace_lists,
}


class SacreBleuTokenizer(Tokenizer):
    """Tokens of each line exactly as sacrebleu's BLEU sees them: ``tokenizer(line.lower()?.rstrip()).split()``.

    * ``"13a"`` — mteval-v13a (sacrebleu's default): unescapes ``&quot; &amp; &lt; &gt;``, drops ``<skipped>``,
      splits ASCII punctuation off, and ``.`` ``,`` unless between digits, ``-`` after a digit.
    * ``"intl"`` — mteval-v14 international: splits Unicode punctuation unless next to a digit, and every symbol.
    * ``"char"`` — every non-whitespace character is a token.
    * ``"zh"`` — every character of sacrebleu's Chinese ranges is a token, the rest as ``13a`` without unescaping.
    * ``"none"`` — whitespace split.

    Args:
        name: one of ``SACREBLEU_TOKENIZERS``.
        lowercase: lowercase before tokenising (sacrebleu's ``lowercase=True``).

    Raises:
        ValueError: unknown ``name``.
        TypeError: ``lowercase`` is not a bool.

    Example:
        >>> SacreBleuTokenizer("13a").tokenize_batch(["Hello, world! It costs $3.50.", "Ёж-2 (кот)"])
        [['Hello', ',', 'world', '!', 'It', 'costs', '$', '3.50', '.'], ['Ёж-2', '(', 'кот', ')']]
        >>> SacreBleuTokenizer("zh").tokenize("我爱猫。OK")
        ['我', '爱', '猫', '。', 'OK']
        >>> batch = SacreBleuTokenizer("13a").encode(["a, b", "", "b a."])
        >>> batch.ids.tolist(), batch.lengths.tolist(), batch.vocabulary
        ([0, 1, 2, 2, 0, 3], [3, 0, 3], ['a', ',', 'b', '.'])
    """

    def __init__(self, name: str = "13a", lowercase: bool = False) -> None:
        check_choice(name, "tokenize", SACREBLEU_TOKENIZERS)
        check_bool(lowercase, "lowercase")
        self.name, self.lowercase = name, lowercase
        self._token_lists = _TOKEN_LISTS[name]

    def _prepare(self, lines: Sequence[str]) -> list[str]:
        return [line.lower().rstrip() for line in lines] if self.lowercase else [line.rstrip() for line in lines]

    def tokenize(self, line: str) -> list[str]:
        """Tokens of one line.

        Example:
            >>> SacreBleuTokenizer("13a").tokenize("It's 1,000.5 km-long!")
            ["It's", '1,000.5', 'km-long', '!']
        """
        return self._token_lists(self._prepare([line]))[0]

    def tokenize_batch(self, lines: Sequence[str]) -> list[list[str]]:
        """Tokens of each line (each distinct chunk of the batch is rewritten once)."""
        return self._token_lists(self._prepare(lines))

    def encode(self, lines: Sequence[str]) -> TokenBatch:
        """Ids of the tokens of each line; for ``13a`` assigned per distinct whitespace chunk, with no Python step
        per token (see :class:`Tokenizer.encode` for the fields)."""
        lines = self._prepare(lines)
        if self.name in _CHUNK_RULES and lines:
            separator = _line_separator(lines)
            if separator is not None:
                return _encode_chunks_flat(lines, separator, *_CHUNK_RULES[self.name])
        return encode_token_lists(self._token_lists(lines))

    def signature(self) -> dict[str, Any]:
        """``{"tok": name, "case": "lc" | "mixed"}``, as sacrebleu writes them."""
        return {"tok": self.name, "case": "lc" if self.lowercase else "mixed"}

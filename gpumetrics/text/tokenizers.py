"""Tokenisers shared by the text metrics, one clearly delimited section per family of reference tools.

Each section reproduces one reference tool's tokenisation exactly (the tests compare against the tool itself).
"""

from __future__ import annotations

import functools
import itertools
import re
import sys
import unicodedata
from typing import Sequence

from gpumetrics.text import ptb_tables


# ==================================================================================================================
# ROUGE tokenisers (google-research `rouge-score`) — used by gpumetrics/text/rouge.py
# ==================================================================================================================
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
_NO_SPACE_CHAR = re.compile(f"[{_NO_SPACE_SCRIPTS}]")


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


def rouge_tokenize(text: str, tokenizer: str = "rouge-score", use_stemmer: bool = False) -> list[str]:
    """Tokens of one text as ROUGE compares them.

    * ``"rouge-score"`` — google-research rouge-score's ``DefaultTokenizer``: lowercase, tokens are the runs of
      ``[a-z0-9]`` (everything else, including every non-ASCII letter, is a separator). Equal to
      ``rouge_score.tokenizers.DefaultTokenizer(use_stemmer).tokenize(text)``.
    * ``"unicode"`` — lowercase (after NFKC), tokens are runs of Unicode letters, digits and combining marks; every
      Han / Hiragana / Katakana character is a token of its own. On ASCII text it equals ``"rouge-score"``.

    With ``use_stemmer`` ASCII tokens longer than 3 characters are Porter-stemmed, as rouge-score does.

    Args:
        text: the text.
        tokenizer: ``"rouge-score"`` or ``"unicode"``.
        use_stemmer: apply :func:`rouge_stem`.

    Returns:
        ``list[str]`` tokens.

    Example:
        >>> rouge_tokenize("The cat's 2 hats, Кот!")
        ['the', 'cat', 's', '2', 'hats']
        >>> rouge_tokenize("The cat's 2 hats, Кот! 猫が", tokenizer="unicode", use_stemmer=True)
        ['the', 'cat', 's', '2', 'hat', 'кот', '猫', 'が']
    """
    if tokenizer == "rouge-score":
        tokens = _ROUGE_SCORE_TOKEN.findall(text.lower())
    elif tokenizer == "unicode":
        tokens = _unicode_token_pattern().findall(unicodedata.normalize("NFKC", text).lower())
    else:
        raise ValueError(f"`tokenizer` must be one of {', '.join(repr(t) for t in ROUGE_TOKENIZERS)}; got {tokenizer!r}")
    if use_stemmer:
        tokens = [rouge_stem(token) for token in tokens]
        if tokenizer == "rouge-score":  # rouge-score's final validity filter, applied after stemming
            tokens = [token for token in tokens if _ROUGE_VALID_TOKEN.match(token)]
    return tokens


from typing import NamedTuple  # noqa: E402  (ROUGE-section imports kept here, out of the shared header)

import numpy as np  # noqa: E402

_ALNUM_CODES = np.zeros(256, dtype=np.uint8)  # byte → base-37 digit 1..36 for [a-z0-9], 0 otherwise
_ALNUM_CODES[np.frombuffer(b"abcdefghijklmnopqrstuvwxyz0123456789", dtype=np.uint8)] = np.arange(1, 37)
_ALNUM_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789"
_PACKED_CHARS = 12  # 37**12 < 2**63: tokens of up to 12 characters pack exactly into an int64
_PACKED_LIMIT = 37**_PACKED_CHARS
_POWERS_37 = np.int64(37) ** np.arange(_PACKED_CHARS, dtype=np.int64)


class RougeCorpusTokens(NamedTuple):
    """Tokens of many texts as dense ids, with text and line (``"\\n"``-separated) boundaries.

    Attributes:
        ids: ``int64[T]`` token ids in ``[0, vocab_size)``, all texts concatenated in order.
        text_lengths: ``int64[n_texts]`` tokens per text.
        line_lengths: ``int64[n_lines]`` tokens per line, lines of all texts in order (empty lines included).
        lines_per_text: ``int64[n_texts]`` lines per text (``text.count("\\n") + 1``).
        vocab_size: number of distinct ids.
    """

    ids: np.ndarray
    text_lengths: np.ndarray
    line_lengths: np.ndarray
    lines_per_text: np.ndarray
    vocab_size: int


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
        index: dict[str, int] = {}
        for t in long.tolist():
            word = data[starts[t] : ends[t]].decode("ascii")
            codes[t] = _PACKED_LIMIT + index.setdefault(word, len(index))
        long_tokens = list(index)
    return codes, token_text, token_line, long_tokens, lines_per_text


def rouge_tokenize_corpus(
    texts: Sequence[str], tokenizer: str = "rouge-score", use_stemmer: bool = False
) -> RougeCorpusTokens:
    """:func:`rouge_tokenize` of every text, as dense ids with text and line boundaries (the metric's fast path).

    For ``"rouge-score"`` the scan is vectorised over bytes (see :func:`_rouge_score_corpus_codes`); stemming is
    applied once per distinct token. ``"unicode"`` tokenises text by text.

    Args:
        texts: ``N`` texts.
        tokenizer: ``"rouge-score"`` or ``"unicode"``.
        use_stemmer: rouge-score's Porter stemming of tokens longer than 3 characters.

    Returns:
        :class:`RougeCorpusTokens`; equal ids mean equal tokens.

    Example:
        >>> corpus = rouge_tokenize_corpus(["The cat\\nthe DOG", "", "dogs"], use_stemmer=True)
        >>> corpus.ids.tolist(), corpus.text_lengths.tolist(), corpus.line_lengths.tolist(), corpus.vocab_size
        ([0, 2, 0, 1, 1], [4, 0, 1], [2, 2, 0, 1], 3)
    """
    n_texts = len(texts)
    if tokenizer == "rouge-score":
        codes, token_text, token_line, long_tokens, lines_per_text = _rouge_score_corpus_codes(texts)
        distinct, ids = np.unique(codes, return_inverse=True)
        ids = ids.reshape(-1).astype(np.int64)
        if use_stemmer:
            words = [_unpack_token(c) if c < _PACKED_LIMIT else long_tokens[c - _PACKED_LIMIT] for c in distinct.tolist()]
            stems = [rouge_stem(word) for word in words]
            stem_ids: dict[str, int] = {}
            remap = np.array([stem_ids.setdefault(stem, len(stem_ids)) for stem in stems], dtype=np.int64)
            valid = np.array([_ROUGE_VALID_TOKEN.match(stem) is not None for stem in stems], dtype=bool)
            if not valid.all():  # rouge-score drops tokens whose stem is not [a-z0-9]+
                keep = valid[ids]
                ids, token_text, token_line = ids[keep], token_text[keep], token_line[keep]
            ids = remap[ids]
            vocab_size = len(stem_ids)
        else:
            vocab_size = int(distinct.size)
    else:
        check_tokens = rouge_tokenize  # validates `tokenizer`
        index: dict[str, int] = {}
        id_list: list[int] = []
        text_list: list[int] = []
        line_list: list[int] = []
        line = 0
        for t, text in enumerate(texts):
            for piece in text.split("\n"):
                tokens = check_tokens(piece, tokenizer, use_stemmer)
                id_list.extend(index.setdefault(token, len(index)) for token in tokens)
                text_list.extend([t] * len(tokens))
                line_list.extend([line] * len(tokens))
                line += 1
        ids = np.array(id_list, dtype=np.int64)
        token_text = np.array(text_list, dtype=np.int64)
        token_line = np.array(line_list, dtype=np.int64)
        vocab_size = len(index)
        lines_per_text = np.array([text.count("\n") + 1 for text in texts], dtype=np.int64)
    return RougeCorpusTokens(
        ids=ids.astype(np.int64, copy=False),
        text_lengths=np.bincount(token_text, minlength=n_texts).astype(np.int64),
        line_lengths=np.bincount(token_line, minlength=int(lines_per_text.sum())).astype(np.int64),
        lines_per_text=lines_per_text,
        vocab_size=vocab_size,
    )


# ================================================================================================ end of ROUGE section


# ==================================================================================================================
# PTB tokeniser as pycocoevalcap applies it — used by gpumetrics/text/cider.py
# ==================================================================================================================
# pycocoevalcap runs Stanford CoreNLP 3.4.1's `PTBTokenizer -preserveLines -lowerCase` (Java) on every caption and
# drops the tokens of its punctuation list. This is an independent Python port of the behaviour that matters after
# that removal, written from black-box probes of the Java tool and from the rules and word lists of its lexer
# (CoreNLP 3.4.1 PTBLexer.flex), re-expressed as Python regexes: the JFlex longest match is emulated where it
# matters (the `longest` rules at a word or number start). tests/text/test_ptb_tokenizer.py compares them.
# The Java tool lowercases *after* tokenising, so the case-sensitive rules (abbreviations) look at the original text;
# its "-LRB-" style bracket tokens come out lowercased and therefore survive pycocoevalcap's (upper-case) list.
PTB_PUNCTUATIONS = frozenset(
    ["''", "'", "``", "`", "-LRB-", "-RRB-", "-LCB-", "-RCB-", ".", "?", "!", ",", ":", "-", "--", "...", ";"]
)

# Abbreviations whose period stays on the word: the word lists of the Java lexer's (case-insensitive) ABBREV1 and
# ABBREV2 rules, in lower case. ABBREV1 words also split their period off before one glued letter ("Inc.s" → "Inc."
# "s": the rule's two characters of trailing context outmatch the longer word "Inc.s"); ABBREV2 ones do not.
_PTB_ABBREV1 = frozenset(
    """jan feb mar apr jun jul aug sep sept oct nov dec mon tue tues wed thu thurs fri ala ariz calif colo conn ct dak
    fla ga ind kan kans ky md mich minn mo mont neb nev okla penn tenn va vt wis wisc wyo inc co cos corp pty ptys pte
    ptes ppty pptys ppte pptes ltd plc rt bancorp bhd assn univ intl sys tel est ext sq jr sr bros ed.d ph.d blvd rd
    esq etc al seq bldg""".split()
)
_PTB_ABBREV2 = frozenset(
    """mr mrs ms dr drs prof profs sen sens rep reps atty attys lt col gen messrs gov govs adm rev maj sgt cpl pvt capt
    st ste ave pres lieut hon brig cmdr comdr pfc spc supt supts det mt ft adj adv asst assoc ens insp mlle mme msgr
    sfc vs alex wm jos cie a.k.a cf treas ph invt elec natl mfg mtg dept""".split()
)
_PTB_ABBREVIATIONS = _PTB_ABBREV1 | _PTB_ABBREV2
# Words whose following period stays attached only before a number ("Fig. 3", "pp.5"; "fig." alone loses it).
_PTB_BEFORE_NUMBER = frozenset("no nos ca fig figs prop art bldg pp op".split())
# Abbreviations whose first letter must be a capital (the rest in any case): "Wash." but "wash."
_PTB_CAPITALISED_ABBREVIATIONS = frozenset("Az Ark Del Ill La Mass Miss Ore Pa Tex Wash".split())
_PTB_SPLIT_BEFORE_LETTER = _PTB_ABBREV1
# A one-letter word's period is split off (sentence end) when one of these capitalised words follows (probed).
_PTB_SENTENCE_STARTS = frozenset(
    """The A An He She It In But We They This That There These At As So If When While After Then Now Her Their Our
    You What However Many Some One Such Since Yet Here Last Other More Once Earlier According About Additionally
    Mr. Ms.""".split()
)
_PTB_SPLIT_WORDS = {"cannot": ("can", "not"), "gonna": ("gon", "na"), "gotta": ("got", "ta"),
                    "wanna": ("wan", "na"), "gimme": ("gim", "me"), "lemme": ("lem", "me")}
_PTB_CONTRACTIONS = ("n't", "'s", "'re", "'ve", "'ll", "'d", "'m")
_PTB_BRACKETS = {"(": "-LRB-", ")": "-RRB-", "[": "-LSB-", "]": "-RSB-", "{": "-LCB-", "}": "-RCB-"}
# Characters the Java tool rewrites (quotes become PTB quotes, which the punctuation list removes).
_PTB_CHAR_MAP = {
    "€": "$", "\x80": "$", "¤": "$", "₠": "$", "£": "#", "¢": "cents",  # currency signs, one token each
    "½": "1/2", "¼": "1/4", "¾": "3/4", "⅓": "1/3", "⅔": "2/3",
    "—": "--", "–": "--", "―": "--", "…": "...", "\u058a": "-", "\u2010": "-", "\u2011": "-",
    '"': "''", "“": "``", "”": "''", "«": "``", "»": "''", "‹": "`", "›": "'", "‘": "`", "’": "'", "‛": "`",
    "\x91": "`", "\x92": "'", "\x93": "``", "\x94": "''",  # cp1252 quotes read as Unicode code points
}
# The Java tool's quote rewriting (its "latexQuotes"), for quote tokens and for the quote in "’s", "n‘t".
# Two adjacent quote characters of this set are one token, each character rewritten ("‘“" → "```").
_PTB_LATEX_QUOTES = str.maketrans({"‘": "`", "‹": "`", "‛": "`", "’": "'", "›": "'", "“": "``", "«": "``", "”": "''",
                                   "»": "''", "\x91": "`", "\x92": "'", "\x93": "``", "\x94": "''"})
# The lexer's apostrophes (APOS), and the characters it also accepts inside a word (APOSETCETERA).
_PTB_APOS = "'’\x92"
_PTB_APOS_ETC = "'’\x92`‘\x91‛"
_PTB_REDAUX = re.compile(f"[{re.escape(_PTB_APOS)}](?i:[msd]|re|ve|ll)")
_PTB_NT = re.compile(f"[Nn][{re.escape(_PTB_APOS_ETC)}][Tt]")
_PTB_ASCII_SPACE = frozenset(("", " ", "\t", "\n", "\r", "\f"))
_PTB_SIMPLE = re.compile(r"[A-Za-z0-9]+(?:,? [A-Za-z0-9]+)*[.,!?]?")
_PTB_WORD = re.compile(r"[A-Za-z0-9]+")
# Characters deleted by the Java tool are spaces for the port's lexer: still a token boundary (U+201B and the cp1252
# quotes U+0091-U+0094 alone are quotes that the punctuation list removes; the lexer's apostrophe rules read them).
_PTB_TRANSLATION = str.maketrans(
    {code: " " for code in ptb_tables.DELETED if code not in (0x201B, 0x91, 0x92, 0x93, 0x94)}
)
_PTB_ENTITIES = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": "''", "&nbsp;": ""}
# URLs and e-mail addresses run over Unicode spaces (CIDEr's whitespace split cuts the token there later) and over
# the Java tool's deleted characters (spaces for the port's lexer), so they are re-read from the original text.
_PTB_URL = r"(?i:https?)://[^ \t\n\r\f()<>{}|\"]*[^ \t\n\r\f()<>{}|\".,!?-]"
_PTB_EMAIL = (
    '(?:<|(?i:&lt;))?[A-Za-z0-9][^ \t\n\r\f"<>|(){}\xa0]*@'
    '(?:[^ \t\n\r\f"<>|(){}.\xa0]+\\.)*[^ \t\n\r\f"<>|(){}.\xa0]+>?'
)
# A web address without a scheme; a path needs 2+ characters ("x.org/a" → "x.org" "/" "a"); the Java class's ",-_"
# range bars digits and capitals from the domain.
_PTB_LIKELY_URL = (
    r'(?:www\.(?:[^ \t\n\r\f"`<>|.!?(){},]+\.)+[a-zA-Z]{2,4}|(?:[^ \t\n\r\f"`\'<>|.!?(){}$\x2c-\x5f]+\.)+'
    r'(?:com|net|org|edu))(?:/[^ \t\n\r\f"<>|()]+[^ \t\n\r\f"<>|.!?(){},-])?'
)
# An SGML/XML tag as the Java lexer's SGML rule reads one: <!...> / <?...>, a name with attributes (quoted values may
# hold spaces; the Java tool turns them into NBSP, which CIDEr's whitespace split undoes), or a closing tag.
_PTB_SGML = (
    r"<(?:[!?][A-Za-z-][^>\r\n]*"
    r"|[A-Za-z][A-Za-z0-9_:.-]*(?: +[A-Za-z][A-Za-z0-9_:.-]*(?: *= *(?:'[^']*'|\"[^\"]*\"))?)* */?"
    r"|/[A-Za-z][A-Za-z0-9_:.-]*) *>"
)


@functools.lru_cache(maxsize=1)
def _ptb_patterns() -> tuple[re.Pattern, re.Pattern, tuple[tuple[re.Pattern, str, int], ...], dict[str, re.Pattern]]:
    def char_class(codes: Sequence[int]) -> str:
        ranges: list[tuple[int, int]] = []
        for code in codes:
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1] = (ranges[-1][0], code)
            else:
                ranges.append((code, code))
        return "".join(re.escape(chr(a)) + (f"-{re.escape(chr(b))}" if a != b else "") for a, b in ranges)

    # the Java lexer sees UTF-16 units: supplementary characters are untokenisable; its word characters are
    # Python's \w and combining marks, corrected by the probed tables, and the soft hyphen (a letter for the Java
    # lexer, dropped from word and number tokens afterwards: "so\u00adft" → "soft", "No.\u00ad!" → "No.")
    # (and the vulgar fractions, one token each: "a½b" → "a" "1/2" "b")
    not_word = char_class(sorted(ptb_tables.NOT_WORD | {0xBC, 0xBD, 0xBE, 0x2153, 0x2154}))
    extra = char_class(sorted(
        code for code in range(0x10000)
        if (unicodedata.category(chr(code))[0] == "M" or code in ptb_tables.WORD_EXTRA or code == 0xAD)
        and code not in ptb_tables.NOT_WORD and not 0xD800 <= code <= 0xDFFF
    ))
    alnum = f"(?:[^\\W_\U00010000-\U0010ffff{not_word}]|[{extra}])"
    letter = f"(?:[^\\W\\d_\U00010000-\U0010ffff{not_word}]|[{extra}])"
    etc, apos, hyphen = re.escape(_PTB_APOS_ETC), re.escape(_PTB_APOS), "[-\u058a\u2010\u2011]"
    # the apostrophe rules use Java's [:letter:] / [:digit:], without combining marks ("O'e\u0301x" → "O" "éx")
    jalnum = f"[^\\W_\U00010000-\U0010ffff{not_word}]"
    jletter = f"[^\\W\\d_\U00010000-\U0010ffff{not_word}]"
    clitic = f"(?i:re|ve|ll)(?!{jletter})"
    # Joiners kept inside a word: - / _ between word characters; . ! ? between ASCII letters.
    joiner = f"(?:[-/_\u058a\u2010\u2011](?={alnum})|(?<=[A-Za-z])[.!?](?=[A-Za-z]))"
    word = f"(?:{alnum}+(?:{joiner}{alnum}+)*)"
    token = re.compile(
        "|".join(
            [
                # URL and e-mail run over Unicode spaces other than these (the token is split there later)
                f"(?P<url>{_PTB_URL})",
                f"(?P<email>{_PTB_EMAIL})",
                # S&P-500, S&Ls; capitals joined by & + (&amp; read as &): "AT&T", "A+B"
                r"(?P<amp>(?i:S(?:&|&amp;)(?:P-500|Ls))|[A-Z]+(?:(?:(?i:&amp;)|[+&])[A-Z]+)+)",
                # bracket names, phone numbers starting with ( or +
                r"(?P<tbspec>-(?i:RRB|LRB|RCB|LCB|RSB|LSB)-)",
                r"(?P<phone>\([0-9]{2,3}\)[ \xa0]?[0-9]{3,4}[- \xa0]?[0-9]{3,5}"
                r"|\+\+?(?:(?:[0-9]{2,4}[- \xa0])?[0-9]{2,4}[- \xa0][0-9]{3,4}[- \xa0]?[0-9]{3,5}"
                r"|(?:[0-9]{2,4}\.)?[0-9]{2,4}\.[0-9]{3,4}\.[0-9]{3,5}))",
                r"(?P<entity>&(?i:amp|lt|gt|quot|nbsp);)",
                f"(?P<tag>{_PTB_SGML})",
                "(?P<quotes>[`‘’“”«»‹›„‚‛‟\x91-\x94]{2})",
                # Asian emoticons: "^_^", "(x.x)", "(^-^)"; one starting with x unless a word goes on ("x_xa")
                r"(?P<asian>\([-^x=~<>'][_.]?[-^x=~<>']\)|\([\^x=~<>']-[\^x=~<>'`]\)|[-^=~<>']_[-^x=~<>']"
                r"|x_[-^x=~<>'](?![^\W_]|[-_\u058a\u2010\u2011][^\W_]))",
                r"(?P<number>[-+]?[.,:\xad\u066b\u066c]?\d+(?:[.,:\xad\u066b\u066c]\d+)*)",
                # emoticons (probed): [<>] eyes [nose] mouth, one token unless a word character follows
                r"(?P<smiley>(?:[<>]?[:;=][-'*o]?[()@DOP\[\\\]p|{]|:3)(?=[^A-Za-z0-9]))",  # not at the input's end
                # after a curly apostrophe these split off even before letters ("’sun" → "'s" "un")
                # ASCII 'n is a token before a space or the end only ("'n#" → "'" "n")
                r"(?P<lead>['’\x92](?i:em|cause|till?)|[’\x92](?i:n[’\x92]?)"
                r"|'(?i:n(?:['’\x92]|(?=[\s\xa0]|\Z))|t(?=is|was)))",
                # '90s anywhere, '90 only before a space or line end (the Java rule's trailing context)
                r"(?P<year>['’\x92](?:[2-9]0[sS]|\d\d(?=[ \t\n\r\f\v\x85\xa0\u2000-\u200a\u2028\u2029\u3000])))",
                # also after a space ("x 's y"), in any case ("IT'S")
                r"(?P<clitic>[’\x92](?i:re|ve|ll|s|d|m)|'(?i:s|re|ve|ll|d|m)(?![A-Za-z]))",
                # Twitter names are ASCII with _ and digits; runs of # @ _ are one token
                # a web address starting with a symbol ("*www.x.org", "·x.com"); at a word start the longest
                # rule decides
                f"(?P<likely>(?!{alnum})(?=\\S){_PTB_LIKELY_URL})",
                f"(?P<handle>@[A-Za-z_][A-Za-z_0-9]*|#{letter}+)",
                r"(?P<hashes>##+|@@+|__+)",
                # words that keep their apostrophe: [DdOoLl]' + 2 characters (o'clock, L'Amour, o'neil-smith), one
                # capital (not I, Y) or n + ' + 2 letters (J'aime, B'Gosh, n'ts), qu'il, c'mon, ma'am, ne'er; a
                # bare clitic after one letter is split ("D'll" → "D" "'ll": the Java rule for it comes first)
                f"(?P<apos>(?:[DdOoLl][{etc}](?!{clitic}){jalnum}{jalnum}+"
                f"(?:[-_\u058a\u2010\u2011](?:[DdOoLl][{etc}]{jalnum})?{jalnum}+)*"
                f"|[A-HJ-XZn][{etc}](?!{clitic}){jletter}{jletter}+"
                f"|[Qq]u['’\x92]{letter}{alnum}*|[Cc]'(?i:mon)|[Mm][Aa]['’\x92][Aa][Mm]{letter}*"
                f"|[NnEeOo]e?['’\x92]er{letter}*|(?i:nor'easter|s'mores|ev'ry|li'l|nat'l|cont'd\\.)"
                f"|(?i:cap[{apos}]n|c[{apos}]est)"
                f"|(?:(?i:dunkin|somethin)[{apos}](?![Tt])|(?i:ol)[{apos}])(?!(?i:re|ve|ll|[msd]))))",
                # l' d' j' before anything, y' before a letter, not before a clitic: a token ("j'" "ai", "y'" "all")
                f"(?P<apos2>(?:[LlDdJj][{apos}]|[Yy][{apos}](?={jletter}))(?!(?i:re|ve|ll|[msd])))",
                # the word before n't cannot end in n ("Mann't" → "Mann" "'" "t")
                f"(?P<nt>[A-Za-z\xad]*[A-MO-Za-mo-z]\xad*[Nn][{etc}][Tt]{jletter}*)",
                f"(?P<word>{word})",
                r"(?P<dots>\.{3,}|…)",
                r"(?P<duck><<|>>)",
                r"(?P<dashes>--+)",
                r"(?P<stars>\*+)",
                r"(?P<bang>[!?]+)",
                r"(?P<other>[^\s\u200b\U00010000-\U0010ffff])",
            ]
        )
    )
    acronym = re.compile(r"(?:[A-Za-z]\.)*[A-Za-z]")  # a. / u.s / e.g (then followed by a period)
    # The Java lexer takes the longest of these at a word or number start (JFlex longest match).
    plain = jalnum  # no combining marks: "สวัสดีX-ray" → "สวัสดีx" "ray"
    # Each entry: (pattern, kind, length of the Java rule's trailing context, which counts in the longest match).
    longest = tuple((re.compile(pattern), kind, context) for pattern, kind, context in (
        (r"[-+]?[.,:\xad\u066b\u066c]?\d+(?:[.,:\xad\u066b\u066c]\d+)*", "number", 0),
        (f"{letter}{alnum}*(?:[.!?]{letter}{alnum}*)*", "word", 0),  # word with inner . ! ?
        (f"{plain}+(?:(?:{hyphen}|_){plain}+)*", "word", 0),  # hyphenated / underscored
        # ... with [DdOoLl]' parts ("black_O'Malley")
        (f"(?:[DdOoLl][{etc}](?!{clitic}){jalnum})?{jalnum}+"
         f"(?:[-_\u058a\u2010\u2011](?:[DdOoLl][{etc}]{jalnum})?{jalnum}+)*", "thing", 0),
        # 1.5-inch, a,b-c, pro-a.m. (ASCII only)
        (f"[A-Za-z0-9][A-Za-z0-9.,\xad]*(?:{hyphen}(?:[A-Za-z](?:\\.[A-Za-z])+\\.|[A-Za-z0-9\xad]+))+", "word", 0),
        # slashes: ASCII, at most two
        ("[A-Za-z0-9]+(?:-[A-Za-z]+){0,2}(?:/[A-Za-z0-9]+(?:-[A-Za-z]+){0,2}){1,2}", "thing", 0),
        (r"\d+-\d+/\d+", "number", 0),  # fraction 2-1/2
        # 2+ letters ending in a vowel, apostrophe, vowel or capital, not a clitic: "therey'all", "YOU'LLriding"
        (f"{jletter}+[aeiouyAEIOUY][{etc}](?!(?i:s|re|ve|ll|d|m)(?![A-Za-z]))[aeiouA-Z]{jletter}*", "thing", 0),
        # web address without a scheme; a path needs 2+ characters ("x.org/a" → "x.org" "/" "a")
        # (runs over Unicode spaces like the URL rule; the Java class's ",-_" range bars digits and capitals)
        (_PTB_LIKELY_URL, "thing", 0),
        (r"[A-Z]+\$", "thing", 0),  # currency prefix "US$" (ASCII capitals only)
        (r"(?i:pro-|anti-)", "thing", 0),  # "pro- and anti-abortion"
        # fraction (a whole part after a space stays: CIDEr's whitespace split cuts it), phone number
        (r"(?:\d{1,4}[- \xa0])?\d{1,4}(?:\\?/|\u2044)\d{1,4}", "number", 0),
        (r"(?:[0-9]{2,4}[- \xa0])?[0-9]{2,4}[- \xa0][0-9]{3,4}[- \xa0]?[0-9]{3,5}"
         r"|(?:[0-9]{2,4}\.)?[0-9]{2,4}\.[0-9]{3,4}\.[0-9]{3,5}", "thing", 0),
        (r"(?i:c\+\+|[cf]#)", "thing", 0),
        # file name with a known extension ("3.x", "a.jpg"), then a space, line end or . ? ! ,
        (f"{alnum}+(?:\\.{alnum}+)*\\.(?i:bat|bmp|c|class|cgi|cpp|dll|doc|docx|exe|gif|gz|h|htm|html|jar|java|jpeg|jpg"
         f"|mov|mp3|pdf|php|pl|png|ppt|ps|py|sql|tar|txt|wav|x|xml|zip)(?=[\\s.?!,])", "thing", 1),
    ))
    raw = {"url": re.compile(_PTB_URL), "email": re.compile(_PTB_EMAIL), "likely": re.compile(_PTB_LIKELY_URL)}
    return token, acronym, longest, raw


def _ptb_split_word(word: str, out: list[str]) -> None:
    """Split contractions and fused words off one word token (``don't`` → ``do n't``; ``gonna`` → ``gon na``)."""
    lowered = word.lower()
    if lowered in _PTB_SPLIT_WORDS:
        first, _ = _PTB_SPLIT_WORDS[lowered]
        out.append(word[: len(first)])
        out.append(word[len(first):])
        return
    if lowered.startswith("y'") or lowered.startswith("y’"):  # y'all → y' all
        out.append(word[:2].replace("’", "'"))
        word, lowered = word[2:], lowered[2:]
    if "'" not in word and "’" not in word:
        out.append(word)
        return
    if "'n'" in lowered:  # rock'n'roll → rock 'n' roll
        head, _, tail = word.partition(word[lowered.index("'n'"): lowered.index("'n'") + 3])
        _ptb_split_word(head, out)
        out.append("'n'")
        _ptb_split_word(tail, out)
        return
    suffixes: list[str] = []
    normalised = lowered.replace("’", "'")
    while True:
        for suffix in _PTB_CONTRACTIONS:
            if normalised.endswith(suffix) and len(normalised) > len(suffix):
                cut = len(word) - len(suffix)
                suffixes.append(word[cut:].replace("’", "'"))
                word, normalised = word[:cut], normalised[:cut]
                break
        else:
            break
    out.append(word)
    out.extend(reversed(suffixes))


def ptb_tokenize(text: str, following: str = "") -> list[str]:
    """Tokens of one caption as pycocoevalcap's ``PTBTokenizer`` gives them (lowercased, punctuation removed).

    A Python port of Stanford CoreNLP 3.4.1 ``PTBTokenizer -preserveLines -lowerCase`` followed by pycocoevalcap's
    removal of ``PTB_PUNCTUATIONS``: contractions are split (``don't`` → ``do n't``, ``cannot`` → ``can not``),
    punctuation is separated from words except in known abbreviations (``mr.``, ``etc.``), acronyms (``u.s.``),
    numbers (``1,000``, ``3.14``) and URLs; brackets become ``-lrb-`` … (which pycocoevalcap keeps, its list being
    upper-case), ``€``/``£`` become ``$``/``#``, and characters outside the BMP (emoji) are dropped as the Java tool
    does. ``tests/text/test_ptb_tokenizer.py`` compares it with the Java tool (CoreNLP's own tokenizer test inputs,
    seeded random captions, every BMP character).

    Args:
        text: one caption.
        following: the caption that follows in pycocoevalcap's one-caption-per-line input. The Java lexer looks
            past the line end: a final one-letter word + period (``"... of a."``) loses its period when the next
            line starts with a sentence-start word (``The``, ``A``, ``There`` …). Empty: the end of the input (no
            line break after it; a blank next caption is followed by its own line break: ``"\\nThe x"``).

    Returns:
        ``list[str]`` of tokens.

    Example:
        >>> ptb_tokenize("A man's dog doesn't like cats (or birds), Mr. Smith.")
        ['a', 'man', "'s", 'dog', 'does', "n't", 'like', 'cats', '-lrb-', 'or', 'birds', '-rrb-', 'mr.', 'smith']
    """
    if _PTB_SIMPLE.fullmatch(text):  # fast path: ASCII words, single spaces, commas, one final . , ! or ?
        words = _PTB_WORD.findall(text)
        last = words[-1]
        if not (text[-1] == "." and (len(last) == 1 or last.lower() in _PTB_ABBREVIATIONS
                                     or last.lower() in _PTB_BEFORE_NUMBER
                                     or last[:1] + last[1:].lower() in _PTB_CAPITALISED_ABBREVIATIONS)):
            lowered = [word.lower() for word in words]
            if _PTB_SPLIT_WORDS.keys().isdisjoint(lowered):
                return lowered
    token_re, acronym_re, longest_res, raw_res = _ptb_patterns()
    # pycocoevalcap ends every caption but the last with a line break, which the rules' trailing contexts can see
    line_end = "\n" if following else ""
    original = text + line_end
    text = original.translate(_PTB_TRANSLATION)
    rewritten = text != original
    tokens: list[str] = []
    position = 0
    while True:
        match = token_re.search(text, position)
        if match is None:
            break
        position = match.end()
        kind = match.lastgroup
        value = match.group()
        if kind == "word" and not rewritten and value.isascii() and value.isalnum() and value[0].isalpha() and (
            text[position: position + 1] in _PTB_ASCII_SPACE
        ):  # a plain word before a space (or the end): no longer rule can match, the word rule wins the tie
            kind, end = "word", position
        elif kind in ("word", "number"):
            start = match.start()
            longest, kind, end = max(  # ties: word, then thing, then number
                (m.end() + context, rule_kind, m.end())
                for m, rule_kind, context in ((p.match(text, start), k, c) for p, k, c in longest_res) if m
            )
            value, position = text[start:end], end
            if "\xad" in value and kind != "thing":  # words, numbers, hyphenated words drop their soft hyphens
                value = value.replace("\xad", "")
            raw = _ptb_reread(original, start, raw_res["likely"]) if rewritten else None
            if raw and (raw[1], "thing") >= (longest, kind):  # the web address read over deleted characters wins
                tokens.append(raw[0])
                position = raw[1]
                continue
            # "dog.," keeps its period (not a number with . , : or a sign: "12:55.;" → "12:55" ".")
            if text[end: end + 1] == "." and text[end + 1: end + 2] in (",", ";", ":") and (
                kind != "number" or value.isdigit()
            ):
                tokens.append(value + ".")
                position = end + 1
                continue
            if kind == "word" and value[-2:-1] == "." and value[-1].isascii() and not _PTB_REDAUX.match(text, end) and (
                value[:-2].lower() in _PTB_SPLIT_BEFORE_LETTER
                or value[:1] + value[1:-2].lower() in _PTB_CAPITALISED_ABBREVIATIONS
            ):  # "Inc.s" → "Inc." "s", but "etc.I'm" → "etc.I" "'m" (the word + clitic is the longer match)
                value, end, position = value[:-1], end - 1, end - 1
                tokens.append(value)
                continue
        if kind == "word":
            if text.startswith(".", end) and (
                (acronym_re.fullmatch(value) and not (len(value) == 1 and _sentence_start_follows(text, end + 1, following)))
                or value.lower() in _PTB_ABBREVIATIONS
                or value[:1] + value[1:].lower() in _PTB_CAPITALISED_ABBREVIATIONS
                or (value.lower() in _PTB_BEFORE_NUMBER and (  # the line break is the space before the next caption
                    re.match(r"\. ?\d", text[end: end + 3])
                    or (text[end + 1:] == line_end and following[:1].isdigit())))
            ):
                tokens.append(value + ".")
                position = end + 1
            else:
                _ptb_split_word(value, tokens)
        elif kind == "nt":
            cut = _PTB_NT.search(value).start()
            tokens.append(value[:cut].replace("\xad", ""))
            # "n't" has its quote rewritten ("n‘t" → "n`t"); a longer tail ("n'ts") is a word kept as it is
            tokens.append(value[cut:].translate(_PTB_LATEX_QUOTES) if len(value) - cut == 3 else value[cut:])
        elif kind in ("url", "email", "likely"):
            raw = _ptb_reread(original, match.start(), raw_res[kind]) if rewritten else None
            if raw:
                value, position = raw
            tokens.append(value)
        elif kind == "amp":
            tokens.append(re.sub("(?i:&amp;)", "&", value))
        elif kind in ("number", "thing", "tag", "year", "handle", "lead", "apos", "apos2", "tbspec"):
            tokens.append(value)
        elif kind in ("clitic", "quotes"):
            tokens.append(value.translate(_PTB_LATEX_QUOTES))
        elif kind == "entity":
            tokens.append(_PTB_ENTITIES[value.lower()])
        elif kind in ("smiley", "asian", "phone"):
            tokens.append(value.replace("(", "-LRB-").replace(")", "-RRB-"))
        elif kind == "other":
            tokens.append(_PTB_BRACKETS.get(value) or _PTB_CHAR_MAP.get(value, value))
        elif kind == "dots":
            tokens.append("...")
        elif kind == "dashes" and len(value) <= 4:
            tokens.append("--")  # probed: runs of 2-4 hyphens are one "--", longer runs stay as they are
        else:  # dashes, bang, stars, hashes, << >>: punctuation runs kept whole
            tokens.append(value)
    # pycocoevalcap filters whole tokens, then CIDEr splits its string on any whitespace
    lower = _ptb_lower if "Σ" in text else str.lower
    return [piece for token in map(lower, tokens) if token not in PTB_PUNCTUATIONS for piece in token.split()]


# Java's final-sigma rule looks for a cased letter after the Σ up to the next boundary of java.text.BreakIterator's
# word instance: letters (not CJK) join over - ' " . (and _), digits over , ' " . ("ΣΟΦΟΣ1990s" → "σοφοσ1990s"
# where Python writes "σοφος1990s"; "ΑΣ1-Β" → "ας1-β").
_PTB_JAVA_WORD_REST = re.compile(
    r"(?:[^\W\d\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|\d"
    r"|[-\u00ad\u2010-\u2015\u2027'\".](?<=[^\W\d].)(?=[^\W\d])"
    r"|[,'\".\u066b](?<=\d.)(?=\d))*"
)


def _ptb_lower(token: str) -> str:
    """``token.lower()`` with the Java tool's choice between final ``ς`` and ``σ``."""
    lowered = []
    for index, char in enumerate(token):
        if char == "Σ" and token[: index + 1].lower().endswith("ς"):  # Python: a final sigma
            rest = _PTB_JAVA_WORD_REST.match(token, index + 1).group()
            lowered.append("σ" if any(c.islower() or c.isupper() for c in rest) else "ς")
        else:
            lowered.append(char.lower())
    return "".join(lowered)


def _ptb_reread(original: str, start: int, pattern: re.Pattern) -> tuple[str, int] | None:
    """Match a URL / e-mail ``pattern`` at ``start`` on the original text, where the Java tool's deleted characters
    are still there (its URL and e-mail rules run over them: "a@b\u0378c.com" is one token). Returns the token and
    where lexing goes on (deletion keeps every position), or None where the pattern does not match there."""
    match = pattern.match(original, start)
    return None if match is None else (match.group(), match.end())


def _sentence_start_follows(text: str, start: int, following: str) -> bool:
    """Whether whitespace then a sentence-start word follow ``text[start:]`` (continuing into the next line)."""
    rest = text[start:]
    if not rest.strip():
        rest = " " + following  # the line break, then the next caption
    match = re.match(rf"\s+(M(?i:[rs])\.|[A-Za-z]+|{_PTB_SGML})(?!\S)", rest)
    word = match and match.group(1)  # first letter as listed, the rest in any case ("THE", "MR.")
    return bool(word and (word[0] + word[1:].lower() in _PTB_SENTENCE_STARTS or word[0] == "<"))


def ptb_tokenize_batch(texts: Sequence[str]) -> list[list[str]]:
    """:func:`ptb_tokenize` of each text, in order, as pycocoevalcap tokenises one list of captions (one per line;
    each caption sees the start of the next one; newlines inside a caption count as spaces).

    Example:
        >>> ptb_tokenize_batch(["Two dogs.", "A CAT, sleeping!"])
        [['two', 'dogs'], ['a', 'cat', 'sleeping']]
    """
    texts = list(texts)
    # what the Java lexer sees after each caption's line break: the next caption, or for a blank one, its line break
    # and what follows (bounded: only the start of the next words matters)
    following = [""] * len(texts)
    for i in range(len(texts) - 2, -1, -1):
        after = texts[i + 1]
        following[i] = after if after.strip() else (after + "\n" + following[i + 1])[:64]
    return [ptb_tokenize(text, after) for text, after in zip(texts, following)]


# ================================================================================================== end of PTB section


# ==================================================================================================================
# sacrebleu tokenisers (13a, intl, char, zh, none) — used by gpumetrics/text/bleu.py
# ==================================================================================================================
# Independent re-implementations of sacrebleu 2.x's tokenisers, written from their documented rules (mteval-v13a,
# mteval-v14 international, per-character, Chinese-character splitting) and compared token by token with sacrebleu
# itself in tests/text/test_bleu.py. The speed comes from memoisation, not from different rules: every rule is
# local — a match never needs more than the characters of one whitespace-separated chunk plus whether whitespace
# (or nothing, at a line edge) surrounds it — so each distinct chunk is tokenised once per batch, with its context,
# and a corpus costs one regex pass per distinct chunk instead of one per character.
SACREBLEU_TOKENIZERS = ("13a", "intl", "char", "zh", "none")

import numpy as np  # noqa: E402  (also imported by the ROUGE section; kept here so this section stands alone)

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


def _tokenize_chunks_flat(lines: list[str], rule, preprocess=None) -> tuple[list[str], list[int]]:
    """:func:`_tokenize_chunks` with whitespace around every chunk, returned flat: (tokens, tokens per line).

    All lines are joined with a separator chunk that occurs in no line, each distinct chunk is rewritten once, and
    the rewritten text is split once: a handful of C-level passes, no Python step per line, chunk or token.
    ``preprocess(text)`` (optional) rewrites the joined text first; it must act on each line independently.
    """
    if not lines:
        return [], []
    separator = next((c for c in _SEPARATOR_CANDIDATES if all(c not in line for line in lines)), None)
    if separator is None:  # every candidate control character occurs in the input: line by line
        if preprocess is not None:
            lines = [preprocess(line) for line in lines]
        token_lists = _tokenize_chunks(lines, rule, edges_are_spaced=True)
        return list(itertools.chain.from_iterable(token_lists)), list(map(len, token_lists))
    text = f" {separator} ".join(lines) + f" {separator}"
    if preprocess is not None:
        text = preprocess(text)
    chunks = text.split()
    rewritten = {chunk: rule(f" {chunk} ") for chunk in dict.fromkeys(chunks)}  # the separator maps to itself
    tokens = " ".join(map(rewritten.__getitem__, chunks)).split()
    ends = np.flatnonzero(np.fromiter(map(separator.__eq__, tokens), dtype=bool, count=len(tokens)))
    lengths = np.diff(ends, prepend=-1) - 1
    return list(filter(separator.__ne__, tokens)), lengths.tolist()


# Control characters that are neither whitespace, punctuation, symbols nor digits: line separators for the joined
# text (one that occurs in no line is chosen per call).
_SEPARATOR_CANDIDATES = tuple(chr(code) for code in (*range(0x01, 0x09), *range(0x0E, 0x1C), 0x00))


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


def sacrebleu_tokenize_batch(lines: Sequence[str], tokenize: str = "13a", lowercase: bool = False) -> list[list[str]]:
    """Tokens of each line exactly as sacrebleu's BLEU sees them: ``tokenizer(line.lower()?.rstrip()).split()``.

    * ``"13a"`` — mteval-v13a (sacrebleu's default): unescapes ``&quot; &amp; &lt; &gt;``, drops ``<skipped>``,
      splits ASCII punctuation off, and ``.`` ``,`` unless between digits, ``-`` after a digit.
    * ``"intl"`` — mteval-v14 international: splits Unicode punctuation unless next to a digit, and every symbol.
    * ``"char"`` — every non-whitespace character is a token.
    * ``"zh"`` — every character of sacrebleu's Chinese ranges is a token, the rest as ``13a`` without unescaping.
    * ``"none"`` — whitespace split.

    Args:
        lines: ``Sequence[str]`` of B lines.
        tokenize: one of ``SACREBLEU_TOKENIZERS``.
        lowercase: lowercase before tokenising (sacrebleu's ``lowercase=True``).

    Returns:
        ``list[list[str]]``, B token lists.

    Raises:
        ValueError: unknown ``tokenize``.

    Example:
        >>> sacrebleu_tokenize_batch(["Hello, world! It costs $3.50.", "Ёж-2 (кот)"])
        [['Hello', ',', 'world', '!', 'It', 'costs', '$', '3.50', '.'], ['Ёж-2', '(', 'кот', ')']]
        >>> sacrebleu_tokenize_batch(["我爱猫。OK"], tokenize="zh")
        [['我', '爱', '猫', '。', 'OK']]
    """
    if tokenize == "13a":
        tokens, lengths = sacrebleu_tokenize_flat(lines, tokenize, lowercase)
        it = iter(tokens)
        return [list(itertools.islice(it, n)) for n in lengths]
    return _sacrebleu_token_lists(lines, tokenize, lowercase)


def sacrebleu_tokenize_flat(lines: Sequence[str], tokenize: str = "13a", lowercase: bool = False
                            ) -> tuple[list[str], list[int]]:
    """:func:`sacrebleu_tokenize_batch` as one flat token list and the number of tokens of each line.

    Example:
        >>> sacrebleu_tokenize_flat(["a, b", "", "c."])
        (['a', ',', 'b', 'c', '.'], [3, 0, 2])
    """
    if tokenize == "13a":
        lines = [line.lower().rstrip() for line in lines] if lowercase else [line.rstrip() for line in lines]
        return _tokenize_chunks_flat(lines, _thirteen_a_rule, _thirteen_a_line)
    token_lists = _sacrebleu_token_lists(lines, tokenize, lowercase)
    return list(itertools.chain.from_iterable(token_lists)), list(map(len, token_lists))


def sacrebleu_encode_flat(lines: Sequence[str], tokenize: str = "13a", lowercase: bool = False
                          ) -> tuple[np.ndarray, list[int], int]:
    """:func:`sacrebleu_tokenize_flat` with the tokens already mapped to dense integer ids.

    For ``13a`` the ids are assigned per distinct whitespace chunk (each chunk is rewritten and its tokens numbered
    once) and the corpus' id sequence is gathered from the chunks with array operations: no Python step per token.

    Returns:
        ``(ids, lengths, vocab_size)``: ``int64[T]`` ids in ``[0, V)`` (equal tokens, equal ids), the number of tokens
        of each line, and V.

    Example:
        >>> ids, lengths, vocab = sacrebleu_encode_flat(["a, b", "", "b a."])
        >>> ids.tolist(), lengths, vocab
        ([0, 1, 2, 2, 0, 3], [3, 0, 3], 4)
    """
    if tokenize == "13a" and lines:
        lines = [line.lower().rstrip() for line in lines] if lowercase else [line.rstrip() for line in lines]
        separator = next((c for c in _SEPARATOR_CANDIDATES if all(c not in line for line in lines)), None)
        if separator is not None:
            return _encode_chunks_flat(lines, separator, _thirteen_a_rule, _thirteen_a_line)
    tokens, lengths = sacrebleu_tokenize_flat(lines, tokenize, lowercase)
    vocabulary = {token: index for index, token in enumerate(dict.fromkeys(tokens))}
    ids = np.fromiter(map(vocabulary.__getitem__, tokens), dtype=np.int64, count=len(tokens))
    return ids, lengths, len(vocabulary)


def _encode_chunks_flat(lines: list[str], separator: str, rule, preprocess) -> tuple[np.ndarray, list[int], int]:
    text = preprocess(f" {separator} ".join(lines) + f" {separator}")
    chunks = text.split()
    distinct = dict.fromkeys(chunks)
    chunk_index = dict(zip(distinct, range(len(distinct))))
    vocabulary: dict[str, int] = {}
    flat: list[int] = []
    sizes = np.zeros(len(distinct), dtype=np.int64)
    for index, chunk in enumerate(distinct):
        if chunk == separator:  # marks a line end, holds no token
            continue
        before = len(flat)
        for token in rule(f" {chunk} ").split():
            flat.append(vocabulary.setdefault(token, len(vocabulary)))
        sizes[index] = len(flat) - before
    flat_ids = np.asarray(flat, dtype=np.int64)
    offsets = np.cumsum(sizes) - sizes
    chunk_ids = np.fromiter(map(chunk_index.__getitem__, chunks), dtype=np.int64, count=len(chunks))
    chunk_sizes = sizes[chunk_ids]
    ends = np.cumsum(chunk_sizes)
    total = int(ends[-1]) if ends.size else 0
    # token t of the corpus is token (t - first token of its chunk) of its distinct chunk
    source = np.repeat(offsets[chunk_ids] - (ends - chunk_sizes), chunk_sizes) + np.arange(total, dtype=np.int64)
    line_ends = ends[chunk_ids == chunk_index[separator]]
    lengths = np.diff(line_ends, prepend=0)
    return flat_ids[source], lengths.tolist(), len(vocabulary)


def _sacrebleu_token_lists(lines: Sequence[str], tokenize: str, lowercase: bool) -> list[list[str]]:
    if tokenize not in SACREBLEU_TOKENIZERS:
        raise ValueError(f"`tokenize` must be one of {', '.join(map(repr, SACREBLEU_TOKENIZERS))}; got {tokenize!r}")
    lines = [line.lower().rstrip() for line in lines] if lowercase else [line.rstrip() for line in lines]
    if tokenize == "none":
        return [line.split() for line in lines]
    if tokenize == "char":
        return [list("".join(line.split())) for line in lines]
    if tokenize == "13a":
        lines = [_thirteen_a_line(line) if ("&" in line or "\n" in line or "<" in line) else line for line in lines]
        return _tokenize_chunks(lines, _thirteen_a_rule, edges_are_spaced=True)
    if tokenize == "zh":
        return _tokenize_chunks([line.strip() for line in lines], _zh_rule, edges_are_spaced=False)
    return _tokenize_chunks(lines, _intl_rule, edges_are_spaced=False)


def sacrebleu_tokenize(line: str, tokenize: str = "13a", lowercase: bool = False) -> list[str]:
    """Tokens of one line as sacrebleu's BLEU sees them (see :func:`sacrebleu_tokenize_batch`).

    Example:
        >>> sacrebleu_tokenize("It's 1,000.5 km-long!", tokenize="13a")
        ["It's", '1,000.5', 'km-long', '!']
    """
    return sacrebleu_tokenize_batch([line], tokenize, lowercase)[0]


# ========================================================================================= end of sacrebleu section

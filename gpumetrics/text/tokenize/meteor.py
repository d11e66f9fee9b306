"""METEOR 1.5's ``-norm`` normaliser for English, as the jar inside pycocoevalcap applies it (issue 12).

pycocoevalcap runs ``meteor-1.5.jar … -l en -norm``: each segment is normalised (punctuation split off, multi-dot
runs and commas between non-digits isolated, quotes and dashes unified, English contractions split as ``'s``,
abbreviations kept whole by the jar's non-breaking-prefix list, Unicode spaces collapsed), then lower-cased, then
split into words. The rules below are written from the jar's behaviour (docs/design/meteor-1.5.md); the tests
compare :func:`meteor_normalize` with the jar's own normaliser on random text. The prefix list is read from the
jar of the installed pycocoevalcap (a zip), never downloaded.

Java details that matter: ``\\s`` and ``\\p{Digit}`` / ``\\p{Lower}`` are ASCII-only classes, the final ``trim()``
drops every character ≤ U+0020 at both ends, and words are split on Java's ``StringTokenizer`` delimiters
(space, tab, newline, carriage return, form feed — not vertical tab).
"""

from __future__ import annotations

import functools
import importlib.util
import re
import zipfile
from pathlib import Path

from gpumetrics.text.tokenize.base import Tokenizer

_ALPHA = (
    "A-Za-z\u0160\u017d\u0161\u017e\u0178\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u017e"
    "\u0400-\u04ff\u0500-\u0527\ua640-\ua66e\ua67e-\ua697\u1d00-\u1d7f"
)
_ALNUM = "0-9" + _ALPHA
_JAVA_SPACE = " \t\n\x0b\f\r"  # Java's \s
_TOKEN_DELIMITERS = re.compile("[ \t\n\r\f]+")  # java.util.StringTokenizer's defaults

_SEPARATE_OTHER = re.compile(f"([^{_ALNUM}{_JAVA_SPACE}.'`,\\-\u2018\u2019])")
_MULTI_DOT = re.compile(r"\.(\.+)")
_MULTI_DOT_NEXT = re.compile(r"DOTMULTI\.([^.])")
_COMMA = (re.compile(r"([^0-9]),([^0-9])"), re.compile(r"([0-9]),([^0-9])"), re.compile(r"([^0-9]),([0-9])"))
_SINGLE_QUOTES = re.compile("[`\u2018\u2019]")
_DOUBLE_QUOTES = re.compile("[\u201c\u201d]|''")
_DASH_BETWEEN = re.compile(f"([{_ALNUM}.])-([{_ALNUM}])")
# replacements are functions, not "\\1" templates: Python expands a template per match, ~10x slower
def _spaced(match: re.Match) -> str:
    return f" {match.group(1)} "


def _apart(match: re.Match) -> str:
    return f"{match.group(1)} ' {match.group(2)}"


def _attached(match: re.Match) -> str:
    return f"{match.group(1)} '{match.group(2)}"


_CONTRACTIONS = (
    (re.compile(f"([^{_ALPHA}])'([^{_ALPHA}])"), _apart),
    (re.compile(f"([^{_ALPHA}0-9])'([{_ALPHA}])"), _apart),
    (re.compile(f"([{_ALPHA}])'([^{_ALPHA}])"), _apart),
    (re.compile(f"([{_ALPHA}])'([{_ALPHA}])"), _attached),
    (re.compile(r"([0-9])'(s)"), _attached),
)
_HAS_ALPHA = re.compile(f"[{_ALPHA}]")
_STARTS_LOWER = re.compile("[a-z]")
_STARTS_DIGITS = re.compile("[0-9]")
_UNICODE_SPACES = re.compile("[ \u2000-\u200a\u202f\u205f\u3000\u00a0]+")

_ANY, _NUMERIC_ONLY = "any", "numeric-only"


def meteor_jar() -> Path:
    """The ``meteor-1.5.jar`` of the installed pycocoevalcap (METEOR's data files are read from it)."""
    spec = importlib.util.find_spec("pycocoevalcap")
    folders = list(spec.submodule_search_locations or []) if spec else []  # a namespace package: no __init__
    jars = [Path(folder) / "meteor" / "meteor-1.5.jar" for folder in folders]
    jar = next((path for path in jars if path.is_file()), None)
    if jar is None:
        raise FileNotFoundError(
            "METEOR 1.5 reads its data (function words, prefixes, synonyms) from pycocoevalcap's meteor-1.5.jar: "
            "pip install pycocoevalcap"
        )
    return jar


@functools.lru_cache(maxsize=4)
def nonbreaking_prefixes(language: str = "english") -> dict[str, str]:
    """The jar's ``nonbreaking/<language>.prefixes``: prefix → ``"any"`` or ``"numeric-only"``."""
    with zipfile.ZipFile(meteor_jar()) as jar:
        text = jar.read(f"nonbreaking/{language}.prefixes").decode("utf-8")
    prefixes: dict[str, str] = {}
    for line in text.split("\n"):
        fields = _TOKEN_DELIMITERS.split(line.strip(" \t\n\r\f"))
        if not fields[0] or fields[0].startswith("#"):
            continue
        kind = _NUMERIC_ONLY if len(fields) > 1 and fields[1] == "#NUMERIC_ONLY#" else _ANY
        prefixes[fields[0]] = kind
    return prefixes


_AT_MOST_SPACE = "".join(map(chr, range(0x21)))  # what Java's String.trim() removes at both ends
_PERIOD_ENDED_WORD = re.compile(r"[^ \t\n\r\f]\.(?:[ \t\n\r\f]|$)")  # a word of 2+ characters ending in "."


def _java_trim(text: str) -> str:
    return text.strip(_AT_MOST_SPACE)


def _split_words(text: str) -> list[str]:
    """``java.util.StringTokenizer``'s words (delimiters space, tab, newline, CR, form feed)."""
    if "\t" in text or "\n" in text or "\r" in text or "\f" in text:
        return [word for word in _TOKEN_DELIMITERS.split(text) if word]
    return [word for word in text.split(" ") if word]


def _words_with_periods(words: list[str], prefixes: dict[str, str]) -> str:
    """A word ending in ``.`` keeps it when it is an abbreviation (a known prefix, a dotted word with letters, a
    word before a lower-case word, or a numeric-only prefix before a number); otherwise the period is split off."""
    out = []
    for index, word in enumerate(words):
        following = words[index + 1] if index + 1 < len(words) else None
        if len(word) > 1 and word.endswith("."):
            prefix = word[:-1]
            kind = prefixes.get(prefix)
            if "." in prefix and _HAS_ALPHA.search(prefix):
                word = word.replace(".", "")
            elif kind == _ANY or (following is not None and _STARTS_LOWER.match(following)):
                pass
            elif kind == _NUMERIC_ONLY and following is not None and _STARTS_DIGITS.match(following):
                pass
            else:
                word = prefix + " ."
        out.append(word)
    return " ".join(out) + " " if out else ""


_LANGUAGES = {"en": "english", "ru": "russian"}


def meteor_normalize(line: str, language: str = "en") -> str:
    """The jar's ``-norm`` normalisation of one segment, punctuation kept (before lower-casing).

    ``language="en"`` splits English contractions to the right (``man 's``); ``"ru"`` (any non-English, non-French
    language of the jar) splits every apostrophe off on both sides, and reads ``nonbreaking/russian.prefixes``.

    Example:
        >>> meteor_normalize("It's the U.S.A. -- e.g. Mr. Smith's 3,000 cats...")
        "It 's the USA - eg Mr. Smith 's 3,000 cats ..."
    """
    # each rewrite is skipped when its pattern cannot match (same result, most captions skip most of them)
    text = _SEPARATE_OTHER.sub(_spaced, f" {line} ")
    if ".." in text:
        text = _MULTI_DOT.sub(lambda match: f" DOTMULTI{match.group(1)}", text)
    while "DOTMULTI." in text:
        text = _MULTI_DOT_NEXT.sub(lambda match: f"DOTDOTMULTI {match.group(1)}", text)
        text = text.replace("DOTMULTI.", "DOTDOTMULTI")
    if "," in text:
        for comma in _COMMA:
            text = comma.sub(lambda match: f"{match.group(1)} , {match.group(2)}", text)
    if not text.isascii() or "`" in text:
        text = _SINGLE_QUOTES.sub("'", text)
    if not text.isascii() or "''" in text:
        text = _DOUBLE_QUOTES.sub(' " ', text)
    if "-" in text or "\u2013" in text:
        text = text.replace("\u2013", "-").replace("--", "-")
        text = _DASH_BETWEEN.sub(lambda match: f"{match.group(1)} {match.group(2)}", text)
    if "'" in text:
        if language == "en":
            for pattern, replacement in _CONTRACTIONS:
                text = pattern.sub(replacement, text)
        else:
            text = text.replace("'", " ' ")
    words = _split_words(text)
    if _PERIOD_ENDED_WORD.search(text):
        text = _words_with_periods(words, nonbreaking_prefixes(_LANGUAGES[language]))
    else:
        text = " ".join(words) + " " if words else ""
    while "DOTDOTMULTI" in text:
        text = text.replace("DOTDOTMULTI", "DOTMULTI.")
    text = text.replace("DOTMULTI", ".")
    if not text.isascii():  # ASCII text has no Unicode spaces and, after the join above, no double spaces
        text = _UNICODE_SPACES.sub(" ", text)
    return _java_trim(text)


class MeteorTokenizer(Tokenizer):
    """METEOR 1.5 ``-l <language> -norm`` words: :func:`meteor_normalize`, lower-cased, split as the jar splits.

    Args:
        language: ``"en"`` (default) or ``"ru"``.

    Example:
        >>> MeteorTokenizer().tokenize("A man's hat.")
        ['a', 'man', "'s", 'hat', '.']
    """

    name = "meteor-1.5"

    def __init__(self, language: str = "en") -> None:
        if language not in _LANGUAGES:
            raise ValueError(f"`language` must be one of {', '.join(map(repr, _LANGUAGES))}; got {language!r}")
        self.language = language

    def tokenize(self, line: str) -> list[str]:
        # a normalised line is words joined by single spaces (its words hold no StringTokenizer delimiter)
        return [word for word in meteor_normalize(line, self.language).lower().split(" ") if word]

    def signature(self) -> dict[str, str]:
        return {"tok": "meteor-1.5-norm"} if self.language == "en" else {"tok": f"meteor-1.5-norm-{self.language}"}

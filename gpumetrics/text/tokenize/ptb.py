"""The PTB tokenizer as pycocoevalcap applies it — used by gpumetrics/text/cider.py.

pycocoevalcap runs Stanford CoreNLP 3.4.1's `PTBTokenizer -preserveLines -lowerCase` (Java) on every caption and
drops the tokens of its punctuation list. This is an independent Python port of the behaviour that matters after
that removal, written from black-box probes of the Java tool and from the rules and word lists of its lexer
(CoreNLP 3.4.1 PTBLexer.flex), re-expressed as Python regexes: the JFlex longest match is emulated where it
matters (the `longest` rules at a word or number start, FULLURL / EMAIL / LIKELYURL against whatever token starts
where they start). tests/text/test_ptb_tokenizer.py compares them on probes, CoreNLP's own tokenizer test inputs,
random captions and every BMP character; tests/text/test_ptb_real_corpus.py on 39,120 lines of real text and 12,999
lines of the lexer's rule families (0 differences).
The Java tool lowercases *after* tokenising, so the case-sensitive rules (abbreviations) look at the original text;
its "-LRB-" style bracket tokens come out lowercased and therefore survive pycocoevalcap's (upper-case) list.
The lexer is %caseless for its literal strings only (ASCII: "'ſ" is no "'s"; its character classes are as written).
Entities that it reads as one character ("&eacute;" a letter, "&#8230;" a token, "&mdash;" a dash, "&apos;" an
apostrophe) are lexed as one stand-in character of the same class and written back into the token.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Any, Callable, Optional, Sequence

from gpumetrics.text.tokenize import ptb_tables
from gpumetrics.text.tokenize.base import Tokenizer

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
    "\u2aff": "'",  # the stand-in of "&apos;" (see _PTB_ENTITY_CHARS)
}
# The Java tool's quote rewriting (its "latexQuotes"), for quote tokens and for the quote in "’s", "n‘t".
# Two adjacent quote characters of this set are one token, each character rewritten ("‘“" → "```").
_PTB_LATEX_QUOTES = str.maketrans({"‘": "`", "‹": "`", "‛": "`", "’": "'", "›": "'", "“": "``", "«": "``", "”": "''",
                                   "»": "''", "\x91": "`", "\x92": "'", "\x93": "``", "\x94": "''",
                                   "\u2aff": "'"})
# The lexer's apostrophes (APOS), and the characters it also accepts inside a word (APOSETCETERA).
_PTB_APOS = "'’\x92\u2afe\u2aff"  # (U+2AFE, U+2AFF: the stand-ins of "&APOS;", "&apos;", APOS of the lexer)
_PTB_APOS_ETC = "'’\x92\u2afe\u2aff`‘\x91‛"
# %caseless makes the lexer's literal strings caseless (Unicode: "ſ&Ls" is "S&Ls"), not its character classes
# ("[msdMSD]": "'ſ" is no clitic)
_PTB_REDAUX = re.compile(f"[{re.escape(_PTB_APOS)}](?:[msdMSD]|(?i:re|ve|ll))")
_PTB_NT = re.compile(f"[Nn][{re.escape(_PTB_APOS_ETC)}][Tt]")
_PTB_INSENTP = frozenset(",;:\u3001")  # a period before these stays on a word (the lexer's INSENTP)
_PTB_ASCII_SPACE = frozenset(("", " ", "\t", "\n", "\r", "\f"))
_PTB_SIMPLE = re.compile(r"[A-Za-z0-9]+(?:,? [A-Za-z0-9]+)*[.,!?]?")
_PTB_WORD = re.compile(r"[A-Za-z0-9]+")
# Characters deleted by the Java tool are spaces for the port's lexer: still a token boundary (U+201B and the cp1252
# quotes U+0091-U+0094 alone are quotes that the punctuation list removes; the lexer's apostrophe rules read them).
_PTB_TRANSLATION = str.maketrans(
    {code: " " for code in ptb_tables.DELETED if code not in (0x201B, 0x91, 0x92, 0x93, 0x94)}
)
_PTB_ENTITIES = {"&amp;": "&", "&lt;": "<", "&gt;": ">", "&quot;": "''", "&nbsp;": ""}
# Entities that the Java lexer reads as one character (%caseless): SPLET "&eacute;" is a letter of its words
# ("caf&eacute;s"), SPPUNC "&#8230;" / "&odq;" a token of its own, SPMDASH "&mdash;" a dash ("--"), APOS "&apos;" an
# apostrophe (rewritten to "'" where the quote rules rewrite quotes). The port lexes them as one stand-in character
# of the same class and writes the entity back into the token (lowercased, as the Java tool writes it).
# THINGA joins capitals over an entity's "&" where WORD is shorter: "AT&T&Uuml;" → "AT&T&U" "uml", "K&MD;" → "K&MD"
_PTB_THINGA_ENTITY = re.compile(r"&([A-Z]+)([A-Za-z]*)(.*)")
# the lexer's SPACENL: no Python-only whitespace ("\x1c" … "\x1f", U+1680, U+202F, U+205F) nor deleted characters
_PTB_SPACENL = "[ \t\n\r\f\x0b\x85\xa0\u2000-\u200a\u2028\u2029\u3000]"
# ASCII 'n is a token before these only (nor before a deleted character, a space for the port's lexer)
_PTB_N_AFTER = frozenset(("", " ", "\t", "\n", "\r", "\f", "\x0b", "\xa0"))  # "": the end of the input
_PTB_YEAR_AFTER = frozenset(" \t\n\r\f\x0b\x85\xa0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
                             "\u200a\u2028\u2029\u3000")  # TBSPEC2's trailing context: the lexer's spaces ('90 y)
_PTB_FILENAME_AFTER = frozenset(" \t\n\r\f\x0b\x85\xa0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
                                "\u200a\u2028\u2029\u3000.?!,")  # FILENAME/({SPACENL}|[.?!,])
_PTB_SPLET_STAND_INS = "\ua000-\ua014"  # 21 Yi syllables (15 SPLET entities, lowercased)
# a decimal digit as the Java lexer sees one: it reads UTF-16 units, so the 290 supplementary digits (Osmanya,
# Brahmi, mathematical digits "\U0001d7d9" …) are untokenisable characters it deletes, not [:digit:]s
_PTB_DIGIT = r"[^\D\U00010000-\U0010ffff]"


def _java_digits(pattern: str) -> str:
    """``pattern`` with each ``\\d`` read as the Java lexer's digit (:data:`_PTB_DIGIT`)."""
    return pattern.replace(r"\d", _PTB_DIGIT)


# the lexer's NUMBER; the Arabic separators U+066B, U+066C are deleted characters everywhere else ("1٬000" is one
# token, "a٬b" is "a" "b"), so a number is re-read from the original text over them (not over the digits the Java
# tool deletes: "1٬0\ua9f0" is "1٬0")
_PTB_NUMBER = r"[-+]?[.,:\xad\u066b\u066c]?\d+(?:[.,:\xad\u066b\u066c]\d+)*"
_PTB_NUMBER_SEPARATORS = frozenset("\u066b\u066c")
_PTB_SIGNED_SEPARATOR = re.compile("[-+][\u066b\u066c]")


def _ptb_separated_number(original: str, start: int, position: int, number: re.Pattern) -> Optional[re.Match]:
    """The NUMBER that starts with a separator (only NUMBER reads one) where the lexer found a token at ``start``
    after skipping ``original[position:start]``: "x ٬5" → "٬5", "x -٬5" → "-٬5"; None if there is none."""
    found = None
    if start > position and original[start - 1] in _PTB_NUMBER_SEPARATORS:
        found = number.match(original, start - 1)
    if found is None and _PTB_SIGNED_SEPARATOR.match(original, start):
        found = number.match(original, start)
    return found


_PTB_ENTITY_CHARS = re.compile(
    "&(?:(?P<letter>[aeiouAEIOU](?i:acute|grave|uml))|(?P<symbol>(?i:HT|TL|UR|LR|QC|QL|QR|odq|cdq)|#[0-9]+)"
    "|(?P<dash>(?i:MD|mdash|ndash))|(?P<apostrophe>apos)|(?P<raw_apostrophe>(?i:apos)));"
)
# URLs and e-mail addresses run over Unicode spaces (CIDEr's whitespace split cuts the token there later) and over
# the Java tool's deleted characters (spaces for the port's lexer), so they are re-read from the original text.
# (Its body needs 2+ characters: an entity's stand-in is 2+, a supplementary character 2 UTF-16 units: "http://😀.")
_PTB_STAND_IN_RANGES = re.compile("[\u2a00-\u2aff\ua000-\ua014]")  # (where the stand-ins are chosen)
_PTB_URL = (r"(?i:https?)://(?:[^ \t\n\r\f()<>{}|\"]+[^ \t\n\r\f()<>{}|\".,!?-]"
            r"|[^ \t\n\r\f()<>{}|\"]*[\u2a00-\u2aff\ua000-\ua014\U00010000-\U0010ffff])")
_PTB_EMAIL = (
    '(?:<|(?i:&lt;))?[A-Za-z0-9][^ \t\n\r\f"<>|(){}\xa0]*@'
    '(?:[^ \t\n\r\f"<>|(){}.\xa0]+\\.)*[^ \t\n\r\f"<>|(){}.\xa0]+>?'
)
# A web address without a scheme; a path needs 2+ characters ("x.org/a" → "x.org" "/" "a"); the Java class's ",-_"
# range bars digits and capitals from the domain (_PTB_URL_CHAR; _PTB_WWW_CHAR after "www.").
_PTB_URL_CHAR = r'[^ \t\n\r\f"`\'<>|.!?(){}$\x2c-\x5f\u2a00-\u2aff\ua000-\ua014]'
_PTB_WWW_CHAR = r'[^ \t\n\r\f"<>|.!?(){},]'
# (its literals are caseless: "Www.x.org/ab", "x.Com/ab")
_PTB_LIKELY_HOST = (rf"(?:(?i:www)\.(?:{_PTB_WWW_CHAR}+\.)+[a-zA-Z]{{2,4}}"
                    rf"|(?:{_PTB_URL_CHAR}+\.)+(?i:com|net|org|edu))")
# JFlex's longest match: a path after any host end of the chain ("www.x.org/ab.eduж": "www.x.org" + "/ab.eduж", where
# the last host end, "www.x.org/ab.edu", has none); every such path ends where the path after the last one would
# (a path of one entity's stand-in or supplementary character is 2+ characters, UTF-16 units, for it: "x.com/😀";
# group "stand_in": a character of the stand-ins' ranges, which :class:`_Tries` refuses where it is no stand-in)
_PTB_LIKELY_URL = (rf'(?:{_PTB_LIKELY_HOST}/(?:[^ \t\n\r\f"<>|()]+[^ \t\n\r\f"<>|.!?(){{}},-]'
                   rf'|[^ \t\n\r\f"<>|()]*(?:[\U00010000-\U0010ffff]|(?P<stand_in>[\u2a00-\u2aff\ua000-\ua014])))'
                   rf'|{_PTB_LIKELY_HOST})')
# An SGML/XML tag as the Java lexer's SGML rule reads one: <!...> / <?...>, a name with attributes (quoted values may
# hold spaces; the Java tool turns them into NBSP, which CIDEr's whitespace split undoes), or a closing tag.
_PTB_SGML = (
    r"<(?:[!?][A-Za-z-][^>\r\n]*"
    r"|[A-Za-z][A-Za-z0-9_:.-]*(?: +[A-Za-z][A-Za-z0-9_:.-]*(?: *= *(?:'[^']*'|\"[^\"]*\"))?)* */?"
    r"|/[A-Za-z][A-Za-z0-9_:.-]*) *>"
)


# Every web address without a scheme (LIKELYURL) holds one of these: a text without them needs no LIKELYURL try
_PTB_LIKELY_URL_MARKERS = ("www.", ".com", ".net", ".org", ".edu")


def _has_likely_url_marker(text: str) -> bool:
    text = text.lower()  # (the rule's literals are caseless)
    return any(marker in text for marker in _PTB_LIKELY_URL_MARKERS)


_PTB_WWW = re.compile(r"(?i:www)\.")
# pycocoevalcap replaces only "\n" in a caption; the Java tool breaks lines at these too, shifting every later caption
# of the call (a pycocoevalcap bug not reproduced): they are read as the spaces that give pycocoevalcap's tokens
_PTB_LINE_BREAKS = re.compile("[\r\x0b\x0c\u2028\u2029]")
# the spaces a web address without a scheme can start with (not after one of the lexer's spaces: see _ptb_patterns)
_PTB_LIKELY_SPACES = frozenset("\xa0\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u3000")


class _Runs:
    """Where one rule can match in a caption's texts, each character read once.

    A try of the rule at ``p`` reads on through the run of ``run_re`` from ``p`` (letters, symbols, skipped
    characters …) and matches only where an anchor lies ahead in that run: ``last_re``, matched over the run (and
    ``reach`` characters past it), finds the last one, its group 1. Tried at every token start or skipped character
    of a long run, the rule read the run each time (the caption's length squared); here each run is read once, kept
    per text (the lexer's tries only move on in a text: the caption's text and original text, or the copy that
    THINGA's rest is lexed in, with tries of its own), and a try at ``p`` is left out where no anchor lies after
    ``p`` in it (the rule cannot match there: the same tokens)."""

    def __init__(self, run_re: re.Pattern, last_re: re.Pattern, reach: int = 0) -> None:
        self._run_re, self._last_re, self._reach = run_re, last_re, reach
        # per text (one), the last run read: (text, where its search began, start, end, last anchor or -1)
        self._held: list[tuple[str, int, int, int, int]] = []

    def run(self, string: str, p: int, search: bool = False) -> Optional[tuple[int, int, int]]:
        """``(start, end, last anchor or -1)`` of the run holding ``p`` (from ``p`` on: its rest), or with ``search``
        of the first run from ``p`` on; ``None`` if there is none."""
        for held, begin, start, end, anchor in self._held:
            if held is string and (begin if search else start) <= p < end:
                return (start, end, anchor) if start < len(string) else None
        found = (self._run_re.search if search else self._run_re.match)(string, p)
        if found is None:
            if search:  # (kept: no run from p on)
                self._held = [entry for entry in self._held if entry[0] is not string][-1:]
                self._held.append((string, p, len(string), len(string), -1))
            return None
        start, end = found.span()
        last = self._last_re.match(string, start, end + self._reach)
        anchor = last.start(1) if last else -1
        self._held = [entry for entry in self._held if entry[0] is not string][-1:] + [(string, p, start, end, anchor)]
        return start, end, anchor

    def reaches(self, string: str, p: int) -> bool:
        """Whether an anchor lies after ``p`` in its run (else the rule cannot match at ``p``)."""
        run = self.run(string, p)
        return run is not None and p < run[2]


class _Tries:
    """The tries of one caption's rules that read on through long runs (see :class:`_Runs`): EMAIL (an "@" before a
    domain character ahead), LIKELYURL (a web address without a scheme: a chain of runs of its class joined by
    single dots, "a.b.com", with ".com" ".net" ".org" or ".edu" ahead; after "www.", a chain of ``_PTB_WWW_CHAR``
    with a dot before two ASCII letters ahead), and the longest-match rules for hyphenated numbers ("1.5-inch": a
    hyphen and a letter or digit after the run) and file names (".jpg" … and a space or . ? ! , after it). Each
    anchor is the rule's match, not only its condition: where it lies ahead, the rule matches from a start
    character of the rule (elsewhere it fails at once), so the pattern runs about once per address, e-mail address
    or file name — an anchor that only some matches need ("@" alone: "a@.a@.…") would leave the cost. SGML's
    <!…> and <?…> need a ">" on their line. EMAIL, SGML and LIKELYURL are left out of the lexer's alternation:
    :meth:`search` finds its token as the alternation with them does."""

    def __init__(self, patterns: dict[str, Any], likely_urls: bool, emails: bool,
                 stand_ins: frozenset[str] = frozenset()) -> None:
        self._patterns = patterns
        self._stand_ins = stand_ins  # (the caption's entity stand-ins: _ptb_entity_chars)
        self._runs = {name: _Runs(*spec) for name, spec in patterns["runs"].items()}
        self._likely_urls = likely_urls  # (a text without any of _PTB_LIKELY_URL_MARKERS has no web address)
        self._emails = emails  # (nor one without "@" an e-mail address)

    def _run(self, pattern: re.Pattern, string: str, p: int) -> Optional[re.Match]:
        """Every run of a guarded rule's pattern goes through here (tests count them)."""
        return pattern.match(string, p)

    def reaches(self, name: str, string: str, p: int) -> bool:
        """Whether rule ``name`` can match at ``p``."""
        if name == "tag":  # (an element reads its own tag only; <!…> and <?…> read on, to a ">" on their line)
            return string.startswith("<", p) and (
                string[p + 1: p + 2] not in ("!", "?") or self._runs["tag"].reaches(string, p))
        if name == "email" and not self._emails:
            return False
        if name != "likely":
            return self._runs[name].reaches(string, p)
        if not self._likely_urls:
            return False
        if string[p] != "." and self._runs["url"].reaches(string, p):  # (a dot of a chain starts no address)
            return True
        if _PTB_WWW.match(string, p):
            run = self._runs["www"].run(string, p)
            return run is not None and run[2] > p + 4  # (a run between "www." and the dot)
        return False

    def fresh(self) -> "_Tries":
        """Tries of the same rules over other texts."""
        return _Tries(self._patterns, self._likely_urls, self._emails, self._stand_ins)

    def match(self, name: str, string: str, p: int, pattern: Optional[re.Pattern] = None) -> Optional[re.Match]:
        """``re.match`` of rule ``name`` (``pattern``, by default its own) at ``p``."""
        if not self.reaches(name, string, p):
            return None
        if name == "likely":
            return self._likely(pattern or self._patterns[name], string, p)
        return self._run(pattern or self._patterns[name], string, p)

    def _likely(self, pattern: re.Pattern, string: str, p: int) -> Optional[re.Match]:
        """LIKELYURL's ``pattern`` at ``p``; a path of one character of the stand-ins' ranges that is no stand-in is
        one character for the Java rule too, too short: the address without it ("x.com/⨀" → "x.com" "/" "⨀")."""
        found = self._run(pattern, string, p)
        if found and found.group("stand_in") and found.group("stand_in") not in self._stand_ins:
            return pattern.match(string, p, found.end() - 2)  # (the "/" and the character: the last two)
        return found

    def checked_url(self, token_re: re.Pattern, string: str, found: re.Match) -> re.Match:
        """``found``, a FULLURL token of the lexer's alternation, unless its body is one character of the stand-ins'
        ranges that is no stand-in: one UTF-16 unit for the Java rule, whose body needs two — then the token the
        lexer reads there without it ("http://⨀" → "http" ":" "/" "/" "⨀")."""
        body = found.group()[found.group().index("://") + 3:]
        if len(body) != 1 or body in self._stand_ins or not _PTB_STAND_IN_RANGES.match(body):
            return found
        return token_re.match(string, found.start(), found.end() - 1) or found

    def search(self, token_re: re.Pattern, string: str, p: int, tag: bool = True) -> Optional[re.Match]:
        """``token_re.search(string, p)`` where ``token_re`` is the lexer's alternation without EMAIL, SGML (unless
        ``tag`` is false) and LIKELYURL, as the alternation with them gives it. The token found starts at ``s``;
        before it the lexer skipped characters (spaces, U+200B, supplementary characters), where only LIKELYURL can
        start; at ``s`` EMAIL then SGML (each before the alternatives not in ``before``), then LIKELYURL (before
        those in ``after_likely``)."""
        found = token_re.search(string, p)
        if not (self._likely_urls or self._emails):  # (most captions: neither rule can match, SGML only at a "<")
            if found is not None and tag and found.lastgroup not in self._patterns["before"]["tag"]:
                return self.match("tag", string, found.start(), self._patterns["tag_token"]) or found
            return found
        if found is None:
            s, kind = len(string), None
        else:
            s, kind = found.start(), found.lastgroup
        likely = self._search_likely(string, p, s + (kind in self._patterns["after_likely"]))
        if likely and likely.start() < s:
            return likely
        for name in ("email", "tag") if tag else ("email",):
            if kind is not None and kind not in self._patterns["before"][name]:
                earlier = self.match(name, string, s, self._patterns[f"{name}_token"])
                if earlier:
                    return earlier
        return likely or found

    def _search_likely(self, string: str, lo: int, hi: int) -> Optional[re.Match]:
        """The first match of LIKELYURL's alternative (with its lookaheads) starting in ``[lo, hi)``."""
        while lo < hi and self._likely_urls:
            p = self._first_likely_start(string, lo, hi)
            if p is None:
                return None
            likely = self._likely(self._patterns["likely_token"], string, p)  # (its lookaheads can still refuse p)
            if likely:
                return likely
            lo = p + 1
        return None

    def _first_likely_start(self, string: str, lo: int, hi: int) -> Optional[int]:
        """The first ``p`` in ``[lo, hi)`` where LIKELYURL can match (see :meth:`reaches`), or ``None``."""
        first, p = None, lo
        while p < hi:  # the chains without "www.", one after the other
            run = self._runs["url"].run(string, p, search=True)
            if run is None or run[0] >= hi:
                break
            p = max(p, run[0])
            p += string[p] == "."  # (a dot of the chain: the next character is of its class)
            if p < run[2]:
                first = p if p < hi else None
                break
            p = run[1]
        hi = hi if first is None else first
        www = _PTB_WWW.search(string, lo, hi + 3)
        while www:
            if self.reaches("likely", string, www.start()):
                return www.start()
            www = _PTB_WWW.search(string, www.start() + 1, hi + 3)
        return first


# How far past an entity's stand-in THINGA's rest is lexed in a copy of the caption: the rest (the entity's letters
# after its capitals, then its ";") starts a word, which ends at the ";", and ";" or a smiley (";-)": 3 characters
# and 1 of trailing context); the rules tried there read at most 4 characters past the rest (a smiley, the
# hyphenated-number rule's 2 after the word). No e-mail address starts in it: one from the capitals before would
# have been the token (the same run, the same "@" ahead).
_PTB_THINGA_READ = 16


class _ThingaCopy:
    """The caption as the lexer reads on after a THINGA token ("AT&MD;" → "AT&MD", then ";"): the entity's stand-in
    replaced by its rest, in a copy of the caption's text and original text from the character before the stand-in
    (the look-behinds read one) to :data:`_PTB_THINGA_READ` characters past it. The lexer goes back to the caption
    once past the rest: the caption is never rewritten (each THINGA token rewrote the rest of it, a cost of the
    caption's length squared) and its runs (:class:`_Runs`) are read once.

    ``strings``: the copy of the text, of the original text, and the tries over them; ``start``: where the rest
    starts in the copy, ``tail``: where the caption goes on, ``shift``: what turns a position there into the
    caption's."""

    def __init__(self, caption: tuple[str, str, "_Tries"], stand_in: int, rest: str) -> None:
        text, original, tries = caption
        begin, end = max(stand_in - 1, 0), stand_in + 1 + _PTB_THINGA_READ
        self.strings = (text[begin:stand_in] + rest + text[stand_in + 1:end],
                        original[begin:stand_in] + rest + original[stand_in + 1:end], tries.fresh())
        self.start, self.tail, self.shift = stand_in - begin, stand_in - begin + len(rest), begin + 1 - len(rest)


@functools.lru_cache(maxsize=1)
def _ptb_patterns() -> tuple[re.Pattern, re.Pattern, tuple[tuple[re.Pattern, str, int, Optional[str]], ...], dict]:
    """The lexer's patterns. The rules that read on through long runs are tried through :class:`_Tries`: EMAIL,
    SGML and LIKELYURL are left out of the alternation (``raw["email_token"]`` …: their alternatives there;
    ``raw["before"]``, ``raw["after_likely"]``: the names of the alternatives before / after them), the
    longest-match entries name their guard (``raw["runs"]``: the :class:`_Runs` of each)."""
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
    # (the stand-ins of SPLET entities, "&eacute;", are LETTERs of WORD but not [:letter:]: "5&eacute;" → "5" …)
    jalnum = f"[^\\W_\U00010000-\U0010ffff{not_word}{_PTB_SPLET_STAND_INS}]"
    jletter = f"[^\\W\\d_\U00010000-\U0010ffff{not_word}{_PTB_SPLET_STAND_INS}]"
    # after [DdOoLl] + an APOS (REDAUX's class, not the other quotes), a clitic that the rule cannot outrun ties
    # with {WORD}/{REDAUX}, the earlier rule: "D'll" → "D" "'ll", but "D'll9", "D‛ve" are one token
    clitic = f"(?:[{re.escape(_PTB_APOS)}](?i:re|ve|ll)(?!{{}}))"
    apos_etc = f"(?!{clitic.format(jalnum)})[{etc}]"  # ... before [:letter:]|[:digit:]
    apos_etc_letter = f"(?!{clitic.format(jletter)})[{etc}]"  # ... before [:letter:]
    # Joiners kept inside a word: - / _ between word characters; . ! ? between ASCII letters.
    # (a soft hyphen, a letter for the lexer, is no word start after a non-ASCII hyphen: "x‐\xadb" → "x" "‐" "b")
    joiner = f"(?:[-/_](?={alnum})|[\u058a\u2010\u2011](?!\xad)(?={alnum})|(?<=[A-Za-z])[.!?](?=[A-Za-z]))"
    word = f"(?:{alnum}+(?:{joiner}{alnum}+)*)"
    alternatives = (
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
                "(?P<quotes>''|[`‘’“”«»‹›„‚‛‟\x91-\x94]{2})",  # QUOTES: also ASCII "''" ("''s" → "''" "s")
                # Asian emoticons: "^_^", "(x.x)", "(^-^)"; "x_x" unless a word goes on ("x_xa"), "x_-" always ("x_-a")
                r"(?P<asian>\([-^x=~<>'][_.]?[-^x=~<>']\)|\([\^x=~<>']-[\^x=~<>'`]\)|[-^=~<>']_[-^x=~<>']"
                r"|x_(?:[-^=~<>']|x(?![^\W_]|[-_\u058a\u2010\u2011][^\W_])))",
                # SPACEDLDOTS: 3-5 dots with a space or U+00A0 between ("...": 6 dots are "..." "."; what follows can
                # be a web address from U+00A0: ".\xa0.\xa0.\xa0.\xa0x.com" → "..." "\xa0x.com")
                r"(?P<spaced>\.[ \xa0]\.[ \xa0]\.(?:[ \xa0]\.){0,2})",
                _java_digits(r"(?P<number>[-+]?[.,:\xad\u066b\u066c]?\d+(?:[.,:\xad\u066b\u066c]\d+)*)"),
                # emoticons (probed): [<>] eyes [nose] mouth, one token unless a word character follows
                # (SMILEY's classes are as written: "DPdpO", no lower-case "o" mouth: ":d" but ":o" → ":" "o")
                r"(?P<smiley>(?:[<>]?[:;=][-'*o]?[()@DdOPp\[\\\]|{]|:3)(?=[^A-Za-z0-9]))",  # not at the input's end
                # after a curly apostrophe these split off even before letters ("’sun" → "'s" "un")
                # ASCII 'n is a token before a space or the end only ("'n#" → "'" "n")
                r"(?P<lead>['’\x92\u2afe\u2aff](?i:em|cause|till?)|[’\x92\u2afe\u2aff](?i:n['’\x92\u2afe\u2aff]?)"
                r"|'(?i:n)(?:['’\x92\u2afe\u2aff]|(?=[ \t\n\r\f\x0b\xa0]|\Z))|'(?i:t(?=is|was)))",
                # '90s anywhere ('90ſ too: the lexer's literals are caseless in Unicode), '90 only before a space or
                # line end (the Java rule's trailing context); ASCII digits only (TBSPEC2: "'٣٣ " is "'" "٣٣")
                r"(?P<year>['’\x92\u2afe\u2aff](?:[2-9]0[sSſ]|[0-9][0-9]"
                r"(?=[ \t\n\r\f\v\x85\xa0\u2000-\u200a\u2028\u2029\u3000])))",
                # also after a space ("x 's y"), in any case ("IT'S")
                # (ASCII 're 've 'll need a character after them: at the end of the input "we've" is "we" "'" "ve")
                r"(?P<clitic>[’\x92\u2afe\u2aff](?:[msdMSD]|(?i:re|ve|ll))"
                r"|'(?:[msdMSD](?![A-Za-z])|(?i:re|ve|ll)(?=[^A-Za-z])))",
                # Twitter names are ASCII with _ and digits; runs of # @ _ are one token
                # a web address starting with a symbol ("*www.x.org", "·x.com"); at a word start the longest
                # rule decides
                # (also from U+3000 …, unless a run of SPACE characters (the whitespace rule) reaches it)
                f"(?P<likely>(?!{alnum})(?![ \\t\\n\\r\\f])"
                f"(?!(?<=[ \\t\\xa0\\u2000-\\u200a\\u3000])[\\xa0\\u2000-\\u200a\\u3000]){_PTB_LIKELY_URL})",
                f"(?P<handle>@[A-Za-z_][A-Za-z_0-9]*|#{letter}+)",
                r"(?P<hashes>##+|@@+|__+)",
                # words that keep their apostrophe: [DdOoLl]' + 2 characters (o'clock, L'Amour, o'neil-smith), one
                # capital (not I, Y) or n + ' + 2 letters (J'aime, B'Gosh, n'ts), qu'il, c'mon, ma'am, ne'er; a
                # bare clitic after one letter is split ("D'll" → "D" "'ll": the Java rule for it comes first)
                f"(?P<apos>(?:[DdOoLl]{apos_etc}{jalnum}{jalnum}+"
                f"(?:[-_\u058a\u2010\u2011](?:[DdOoLl][{etc}]{jalnum})?{jalnum}+)*"
                f"|[A-HJ-XZn]{apos_etc_letter}{jletter}{jletter}+"
                f"|[Qq]u['’\x92\u2afe\u2aff]{jletter}+|[Cc]'(?i:mon)|[Mm][Aa]['’\x92\u2afe\u2aff][Aa][Mm]{jletter}*"
                f"|[NnEeOo]e?['’\x92\u2afe\u2aff]er{jletter}*|(?i:nor'easter|s'mores|ev'ry|li'l|nat'l|cont'd\\.)"
                f"|(?i:cap[{apos}]n|c[{apos}]est)|[Oo][{etc}][Oo]"  # (APOWORD's O'o: "O'O'O" → "O'O" "'" "O")
                f"|(?:(?i:dunkin|somethin)[{apos}](?![Tt])|(?i:ol)[{apos}])(?!(?:[msdMSD]|(?i:re|ve|ll)))))",
                # l' d' j' before anything, y' before a letter, not before a clitic: a token ("j'" "ai", "y'" "all")
                f"(?P<apos2>(?:[LlDdJj][{apos}]|[Yy][{apos}](?={jletter}))(?!(?:[msdMSD]|(?i:re|ve|ll))))",
                # the word before n't cannot end in n ("Mann't" → "Mann" "'" "t")
                f"(?P<nt>[A-Za-z\xad]*[A-MO-Za-mo-z]\xad*[Nn][{etc}][Tt]{jletter}*)",
                # (its first character: the lexer reads the word, where it needs it, from raw["word"]; found
                # whole here at every token start, a run like "a/a/a…", cut into words by THING3, was read each time)
                f"(?P<word>{alnum})",
                r"(?P<dots>\.{3,5}|…)",  # (LDOTS: 3-5 dots, "......1" → "..." ".1")
                r"(?P<duck><<|>>)",
                r"(?P<dashes>--+)",
                r"(?P<stars>\*+|(?:\\\*){1,3})",  # ASTS: escaped stars too ("\*\*")
                r"(?P<bang>[!?]+)",
                # SUBSUPNUM: runs of superscript or subscript digits, with a sign ("²²", "⁺²", "₂₃")
                r"(?P<subsup>[\u207a\u207b\u208a\u208b]?(?:[\u2070\xb9\xb2\xb3\u2074-\u2079]+|[\u2080-\u2089]+))",
                r"(?P<other>[^\s\u200b\U00010000-\U0010ffff])",
            ]
    )
    names = [re.match(r"\(\?P<(\w+)>", a).group(1) for a in alternatives]
    after_likely = frozenset(names[names.index("likely") + 1:])
    before = {name: frozenset(names[:names.index(name)]) for name in ("email", "tag")}
    # (tried through _Tries; without them, the alternation also serves a tag that holds a character the Java tool
    # deletes: "<a 《》>")
    guarded = {name: alternatives.pop(names.index(name)) for name in ("likely", "tag", "email")}
    token = re.compile("|".join(alternatives))
    acronym = re.compile(r"(?:[A-Za-z]\.)*[A-Za-z]")  # a. / u.s / e.g (then followed by a period)
    # The Java lexer takes the longest of these at a word or number start (JFlex longest match).
    extensions = ("bat|bmp|c|class|cgi|cpp|dll|doc|docx|exe|gif|gz|h|htm|html|jar|java|jpeg|jpg|mov|mp3|pdf|php|pl|png"
                  "|ppt|ps|py|sql|tar|txt|wav|x|xml|zip")
    plain = jalnum  # no combining marks: "สวัสดีX-ray" → "สวัสดีx" "ray"
    # Each entry: (pattern, kind, length of the Java rule's trailing context, which counts in the longest match).
    # (a fourth item: the rule's guard in _Tries)
    dotted_word = f"{letter}{alnum}*(?:[.!?]{letter}{alnum}*)*"  # (the lexer's WORD)
    thing = (f"(?:[DdOoLl]{apos_etc}{jalnum})?{jalnum}+"  # (its THING)
             f"(?:[-_\u058a\u2010\u2011](?:[DdOoLl][{etc}]{jalnum})?{jalnum}+)*")
    longest = tuple((re.compile(pattern), kind, context, *guard) for pattern, kind, context, *guard in (
        (_java_digits(_PTB_NUMBER), "number", 0),
        (dotted_word, "word", 0),  # word with inner . ! ?
        (f"{plain}+(?:(?:{hyphen}|_){plain}+)*", "word", 0),  # hyphenated / underscored
        # ... with [DdOoLl]' parts ("black_O'Malley")
        (thing, "thing", 0),
        # 1.5-inch, a,b-c, pro-a.m. (ASCII only)
        # (ASCII "-" only: "1.5‐inch" → "1.5" "‐" "inch")
        ("[A-Za-z0-9][A-Za-z0-9.,\xad]*(?:-(?:[A-Za-z](?:\\.[A-Za-z])+\\.|[A-Za-z0-9\xad]+))+", "word", 0,
         "hyphenated"),
        # slashes: ASCII, at most two
        (r"[A-Za-z0-9]+(?:-[A-Za-z]+){0,2}(?:\\?/[A-Za-z0-9]+(?:-[A-Za-z]+){0,2}){1,2}", "thing3", 0),  # THING3
        # DATE: "06/20-5918383" → "06/20-5918" "383"
        (_java_digits(r"\d{1,2}[-/]\d{1,2}[-/]\d{2,4}"), "number", 0),
        # 2+ letters ending in a vowel, apostrophe, vowel or capital, not a clitic: "therey'all", "YOU'LLriding"
        # (the clitic only after an apostrophe of REDAUX: "people`D'x" → "people`D" "'" "x")
        (f"{jletter}+[aeiouyAEIOUY](?:[{apos}](?!(?:[msdMSD]|(?i:re|ve|ll))(?![A-Za-z]))|[`‘\x91‛])"
         f"[aeiouA-Z]{jletter}*", "thing", 0),
        # web address without a scheme; a path needs 2+ characters ("x.org/a" → "x.org" "/" "a")
        # (runs over Unicode spaces like the URL rule; the Java class's ",-_" range bars digits and capitals)
        (_PTB_LIKELY_URL, "thing", 0, "likely"),
        (r"[A-Z]+\$", "thing", 0),  # currency prefix "US$" (ASCII capitals only)
        (r"(?i:pro-|anti-)", "thing", 0),  # "pro- and anti-abortion"
        (f"[Nn][{etc}][Tt]", "sredaux", 0),  # SREDAUX: "n't" alone ("n'ts" is an APOWORD, longer)
        # fraction (a whole part after a space stays: CIDEr's whitespace split cuts it), phone number
        (_java_digits(r"(?:\d{1,4}[- \xa0])?\d{1,4}(?:\\?/|\u2044)\d{1,4}"), "number", 0),
        (r"(?:[0-9]{2,4}[- \xa0])?[0-9]{2,4}[- \xa0][0-9]{3,4}[- \xa0]?[0-9]{3,5}"
         r"|(?:[0-9]{2,4}\.)?[0-9]{2,4}\.[0-9]{3,4}\.[0-9]{3,5}", "thing", 0),
        (r"(?i:c\+\+|[cf]#)", "thing", 0),
        # file name with a known extension ("3.x", "a.jpg"), then a space, line end or . ? ! ,
        (f"{alnum}+(?:\\.{alnum}+)*\\.(?i:{extensions})(?={_PTB_SPACENL}|[.?!,])", "thing", 1,
         "filename"),
    ))
    longest = tuple(entry if len(entry) == 4 else (*entry, None) for entry in longest)
    email_char = '[^ \t\n\r\f"<>|(){}\xa0]'
    # each guard: the run its rule reads, the last anchor in it (group 1), how far past the run that one reads
    runs = {
        # (a caseless ".COM" is no part of the run: its capitals are not of the class, "x.Com/ab")
        "url": (f"{_PTB_URL_CHAR}+(?:\\.{_PTB_URL_CHAR}+)*", r"(?s:.*)(\.)(?i:com|net|org|edu)", 4),
        "www": (f"{_PTB_WWW_CHAR}+(?:\\.{_PTB_WWW_CHAR}+)*", r"(?s:.*)(\.)[a-zA-Z]{2}", 0),
        "email": (f"<?{email_char}+", f"(?s:.*)(@){email_char.replace('{}', '{}.')}", 0),  # (a domain character)
        "tag": ("[^>\r\n]+", "(?s:.*)(>)", 1),  # (<!…> and <?…> only: a ">" on the line)
        "hyphenated": ("[A-Za-z0-9.,\xad]+", "(?s:.*)()(?=-[A-Za-z0-9\xad])", 2),
        "filename": (f"{alnum}+(?:\\.{alnum}+)*", f"(?s:.*)(\\.)(?i:{extensions})(?={_PTB_SPACENL}|[.?!,])", 1),
    }
    deleted_digits = "".join(chr(code) for code in sorted(ptb_tables.DELETED) if re.fullmatch(_PTB_DIGIT, chr(code)))
    kept_digit = f"[^\\D\U00010000-\U0010ffff{deleted_digits}]"
    raw = {"url": re.compile(_PTB_URL), "email": re.compile(_PTB_EMAIL), "likely": re.compile(_PTB_LIKELY_URL),
           **{f"{name}_token": re.compile(alternative) for name, alternative in guarded.items()},
           "after_likely": after_likely, "before": before,
           "runs": {name: (re.compile(run), re.compile(last), reach) for name, (run, last, reach) in runs.items()},
           "word": re.compile(word), "tag": re.compile(_PTB_SGML),
           "number": re.compile(_PTB_NUMBER.replace(r"\d", kept_digit)),
           # the tokens that the INSENTP rules (WORD, THING, THINGA + "." before , ; :) read, by kind
           "insentp": {"word": re.compile(dotted_word), "thing": re.compile(thing), "apos": re.compile(thing),
                       "asian": re.compile(thing), "amp": re.compile(r"[A-Z]+(?:(?:(?i:&amp;)|[+&])[A-Z]+)+")}}
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


def _ptb_simple_tokens(text: str) -> Optional[list[str]]:
    """The tokens of a caption of ASCII words, single spaces, commas and one final ``.`` ``,`` ``!`` or ``?`` that no
    rule of the lexer rewrites (they never depend on the next caption); ``None`` for any other caption."""
    if _PTB_SIMPLE.fullmatch(text):
        lowered = _PTB_WORD.findall(text.lower())  # ASCII: lower-casing keeps every position
        last = lowered[-1]
        if not (text[-1] == "." and (len(last) == 1 or last in _PTB_ABBREVIATIONS or last in _PTB_BEFORE_NUMBER
                                     or text[-1 - len(last)] + last[1:] in _PTB_CAPITALISED_ABBREVIATIONS)):
            if _PTB_SPLIT_WORDS.keys().isdisjoint(lowered):
                return lowered
    return None


def ptb_tokenize(text: str, following: str = "", split_spaces: bool = True) -> list[str]:
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
        split_spaces: split tokens that hold a space (phone numbers, fractions ``"2 1/2"``, web addresses read over
            a no-break space) as pycocoevalcap's BLEU and CIDEr do (``str.split()`` of its string); ``False`` keeps
            them whole with the Java tool's no-break space (U+00A0) inside, as its tokenised string holds them
            (ROUGE-L splits that string on ``" "`` only, METEOR reads it as it is).

    Returns:
        ``list[str]`` of tokens.

    Example:
        >>> ptb_tokenize("A man's dog doesn't like cats (or birds), Mr. Smith.")
        ['a', 'man', "'s", 'dog', 'does', "n't", 'like', 'cats', '-lrb-', 'or', 'birds', '-rrb-', 'mr.', 'smith']
    """
    simple = _ptb_simple_tokens(text)
    if simple is not None:
        return simple
    text, following = _PTB_LINE_BREAKS.sub(" ", text), _PTB_LINE_BREAKS.sub(" ", following)
    restore: dict[str, str] = {}
    dashes: set[str] = set()
    spellings: dict[int, str] = {}
    if "&" in text or "\u2afe" in text or "\u2aff" in text:
        text = _ptb_entity_chars(text, restore, dashes, spellings)
    # pycocoevalcap ends every caption but the last with a line break, which the rules' trailing contexts can see
    line_end = "\n" if following else ""
    original = text + line_end
    token_re, acronym_re, longest_res, raw_res = _ptb_patterns()
    entity_stand_ins = frozenset(char for char, entity in restore.items() if entity.startswith("&"))
    tries = _Tries(raw_res, _has_likely_url_marker(original), "@" in original, entity_stand_ins)
    text = original.translate(_PTB_TRANSLATION)
    rewritten = text != original
    caption = (text, original, tries)  # never rewritten: THINGA's rest is lexed in a short copy (_ThingaCopy)
    copy: Optional[_ThingaCopy] = None  # while lexing in one
    thinga: Optional[tuple[int, str]] = None  # a THINGA token's stand-in (where it is in the caption) and its rest
    tokens: list[str] = []
    position = 0
    while True:
        if copy is not None and position >= copy.tail:  # past the rest: on in the caption itself
            (text, original, tries), position, copy = caption, position + copy.shift, None
        if thinga is not None:
            copy, thinga = _ThingaCopy(caption, *thinga), None
            (text, original, tries), position = copy.strings, copy.start
        match = tries.search(token_re, text, position)
        if match is None:
            break
        if match.lastgroup == "url":
            match = tries.checked_url(token_re, text, match)
        if rewritten and match.start() > position:
            # a character the Java tool deletes is no space for LIKELYURL, which can start with it ("《www.x.com"),
            # nor one the port's lexer skips unchanged (U+200B, a supplementary character: "\u200ba\u200dwww.x.com"
            # is one token); the lexer drops the first where no address starts there and tries the next; an address
            # from U+3000 or U+00A0 (LIKELYURL's alternative in the lexer) can run over a deleted character too
            starts = (p for p in range(position, match.start())
                      if text[p] == " " and not original[p].isspace() or text[p] == "\u200b" or text[p] > "\uffff"
                      or text[p] in _PTB_LIKELY_SPACES)
            likely = next(filter(None, (
                tries.match("likely", original, p, raw_res["likely_token"] if text[p] in _PTB_LIKELY_SPACES else None)
                for p in starts)), None)
            if likely:
                tokens.append(likely.group())
                position = likely.end()
                continue
        number = _ptb_separated_number(original, match.start(), position, raw_res["number"]) if rewritten else None
        if number:
            tokens.append(number.group().replace("\xad", ""))
            position = number.end()
            continue
        position = match.end()
        kind = match.lastgroup
        if kind == "tag" and rewritten:
            # the SGML rule reads the original text: a deleted character inside a tag name or attribute list
            # (not inside a quoted value or a <!...> body) is no space for it
            tag = tries.match("tag", original, match.start())
            if tag is None:
                match = tries.search(token_re, text, match.start(), tag=False)  # (at its start: "<")
                kind = match.lastgroup
            else:
                match = tag
            position = match.end()
        if rewritten and kind not in ("url", "email"):
            # FULLURL and EMAIL read the original text, over the deleted characters ("a@《b", "http://《x"): where
            # they are longer there than the token found here, JFlex's longest match takes them
            longer = max((m for m in (raw_res["url"].match(original, match.start()),
                                      tries.match("email", original, match.start())) if m),
                         key=lambda m: m.end(), default=None)
            token = raw_res["word"].match(text, match.start()) if kind == "word" else match  # (the whole word)
            if longer and longer.end() > token.end() and not longer.group().isspace():
                kind = "url" if raw_res["url"].match(original, match.start()) else "email"
        if kind not in ("word", "number", "url", "email", "likely", "tag"):
            # JFlex takes the longest match: a web address without a scheme outruns a quote pair, a clitic ...
            # ("‘‘x.org/ab")
            likely = tries.match("likely", original if rewritten else text, match.start())
            if likely and likely.end() > match.end():
                match, kind, position = likely, "likely", likely.end()
        value = match.group()
        literal = value
        if kind == "lead" and rewritten and value in ("'n", "'N") and (
            original[match.end(): match.end() + 1] not in _PTB_N_AFTER
        ):  # "'n" before a deleted character: "'" "n" (the character is no space for the rule's trailing context)
            tokens.append("'")
            position = match.start() + 1
            continue
        if kind == "year" and rewritten and value[-1].isdigit() and (
            original[match.end(): match.end() + 1] not in _PTB_YEAR_AFTER
        ):  # "'90" before a deleted character (U+FEFF …): "'" "90" (no space for the rule's trailing context)
            tokens.append(_PTB_CHAR_MAP.get(value[0], value[0]))
            position = match.start() + 1
            continue
        start = match.start()
        plain = kind == "word" and not rewritten and text[start].isalpha() and _PTB_WORD.match(text, start)
        if plain and text[plain.end(): plain.end() + 1] in _PTB_ASCII_SPACE:
            # a plain (ASCII) word before a space (or the end): no longer rule can match, the word rule wins the tie
            value = literal = plain.group()
            end = position = plain.end()
        elif kind in ("word", "number"):
            start = match.start()
            best = max(  # ties: word, then thing, then number
                ((m.end() + context, rule_kind, m.end())
                for m, rule_kind, context in (
                    (p.match(text, start) if guard is None else tries.match(guard, text, start, p), k, c)
                    for p, k, c, guard in longest_res)
                # a trailing context reads the original text: a deleted character is no space for it ("3.xⅫ")
                if m and not (rewritten and original[start: m.end()] != text[start: m.end()])  # no deleted character
                and not (context and rewritten and original[m.end(): m.end() + 1] not in _PTB_FILENAME_AFTER)
                # FILENAME + its context ties with ABBREV2 (an acronym and its period), an earlier rule: "b.c." stays
                and not (context and text[m.end(): m.end() + 1] == "." and acronym_re.fullmatch(m.group()))
                # ... and ABBREV1/[^][^] ("etc.x " → "etc." "x")
                and not (context and m.group()[-2:-1] == "." and (
                    m.group()[:-2].lower() in _PTB_SPLIT_BEFORE_LETTER
                    or m.group()[:1] + m.group()[1:-2].lower() in _PTB_CAPITALISED_ABBREVIATIONS))),
                default=None,
            )
            if best is None:  # no longest-match rule: the alternation's token (a word, read whole here only)
                token_end = (raw_res["word"].match(text, start) if kind == "word" else match).end()
                best = (token_end, kind, token_end)
            longest, kind, end = best
            value, position = text[start:end], end
            number = raw_res["number"].match(original, start) if rewritten else None
            if number and number.end() > longest:  # over the Arabic separators: "1٬000", "12:30٫5"
                kind, value, end = "number", number.group(), number.end()
                position = end
            literal = value  # the lexer's literal rules (abbreviations, "cannot" ...) see the soft hyphens
            if "\xad" in value and kind != "thing":  # words, numbers, hyphenated words drop their soft hyphens
                value = value.replace("\xad", "")
            raw = _ptb_reread(original, start, tries) if rewritten else None
            if raw and (raw[1], "thing") >= (longest, kind):  # the web address read over deleted characters wins
                tokens.append(raw[0])
                position = raw[1]
                continue
            # "dog.," keeps its period (INSENTP: , ; : and the ideographic comma "、") (not a number with . , : or a
            # sign: "12:55.;" → "12:55" "."; of the other rules' tokens only those that WORD or THING can read:
            # "O'clock.;" "x.com.;" but "toO'Malley" "." ";", "US$" "." ";")
            if (text[end: end + 1] == "." and text[end + 1: end + 2] in _PTB_INSENTP
                    and kind not in ("sredaux", "thing3") and (kind != "number" or literal.isdigit())
                    and (kind != "thing" or any(raw_res["insentp"][name].fullmatch(text, start, end)
                                                for name in ("word", "thing")))):
                tokens.append(value + ".")
                position = end + 1
                continue
            # "Inc.s" → "Inc." "s", but "etc.I'm" → "etc.I" "'m" (the word + clitic is the longer match); a soft
            # hyphen is a letter here ("etc.\xad" → "etc." ""), not before the period ("Inc\xad.s" is one word);
            # the rule's two characters of context also tie with a hyphenated word, an earlier rule in the lexer
            # ("Inc.-x" → "Inc." "-" "x"; "Inc.-xy" and the word "Inc.xy" are longer or earlier)
            glued = 1 if literal[-2:-1] == "." else (
                2 if literal[-3:-2] == "." and literal[-2] in "-\u058a\u2010\u2011" else 0)
            head = literal[:-1 - glued]
            if (kind == "word" and glued and end - glued + 2 <= len(text) and literal[-1] not in restore
                    and not _PTB_REDAUX.match(text, end) and (
                        head.lower() in _PTB_SPLIT_BEFORE_LETTER
                        or head[:1] + head[1:].lower() in _PTB_CAPITALISED_ABBREVIATIONS)):
                value, end, position = literal[:-glued].replace("\xad", ""), end - glued, end - glued
                tokens.append(value)
                continue
        if (kind in ("apos", "asian", "amp") and text[position: position + 1] == "."
                and text[position + 1: position + 2] in _PTB_INSENTP
                and raw_res["insentp"][kind].fullmatch(text, match.start(), position)):
            # THING or THINGA + "." before , ; : ("O'Malley.,", "x_x.;", "AT&T.;", not "S&P-500.;")
            tokens.append((re.sub("(?i:&amp;)", "&", value) if kind == "amp" else value) + ".")
            position += 1
            continue
        if kind in ("word", "amp") and restore and text[position: position + 1] in restore and (
            # "CAT\xad&MDASH;": no THINGA; nor after TBSPEC's "S&p-500" / "S&Ls" ("S&p-500&EACUTE;")
            kind == "amp" and raw_res["insentp"]["amp"].fullmatch(value)
            or kind == "word" and literal.isascii() and literal.isupper() and literal.isalpha()
        ) and not (kind == "word" and _PTB_REDAUX.match(text, position)):  # WORD/{REDAUX} is longer: "IPHONE&APOS;S"
            stand_in = position + (copy.shift if copy else 0)  # (in the caption)
            entity = _PTB_THINGA_ENTITY.fullmatch(spellings.get(stand_in) or restore[text[position]])
            if entity and not "\ua000" <= text[position] <= "\ua014" or kind == "amp" and entity:
                # THINGA: capitals joined over the entity's "&" (not for a word that runs on through a letter entity)
                tokens.append(re.sub("(?i:&amp;)", "&", value) + "&" + entity.group(1))
                # the rest is lexed in context: "K&MD;(" → "K&MD" ";(" (a smiley)
                thinga = (stand_in, entity.group(2) + entity.group(3))
                continue
        if kind == "word":
            if text.startswith(".", end) and (
                (acronym_re.fullmatch(literal)
                 and not (len(value) == 1 and _sentence_start_follows(original, end + 1, following)))
                or literal.lower() in _PTB_ABBREVIATIONS
                or literal[:1] + literal[1:].lower() in _PTB_CAPITALISED_ABBREVIATIONS
                or (literal.lower() in _PTB_BEFORE_NUMBER and (  # the line break is the space before the next caption
                    # ABBREV3/{SPACENL}?[:digit:]
                    # (the lexer's spaces: "fig.\x851,000" keeps its period, "pp.\ufeff5" does not)
                    re.match(r"\." + _PTB_SPACENL + "?" + _PTB_DIGIT, original[end: end + 3])
                    or (text[end + 1:] == line_end and re.match(_PTB_DIGIT, following[:1]))))
            ):
                tokens.append(value + ".")
                position = end + 1
            elif value.lower() in _PTB_SPLIT_WORDS and (_PTB_REDAUX.match(text, end) or literal != value):
                # {WORD}/{REDAUX} outmatches "gonna" / "cannot": "gonna's" → "gonna" "'s"; "can\xadnot" is no "cannot"
                tokens.append(value)
            else:
                _ptb_split_word(value, tokens)
        elif kind == "nt":
            cut = _PTB_NT.search(value).start()
            tokens.append(value[:cut].replace("\xad", ""))
            if tries.match("email", original if rewritten else text, match.start() + cut):
                position = match.start() + cut  # an e-mail address from the "n" on is longer ("xn't.a@b.com")
                continue
            # "n't" has its quote rewritten ("n‘t" → "n`t"); a longer tail ("n'ts") is a word kept as it is
            tokens.append(value[cut:].translate(_PTB_LATEX_QUOTES) if len(value) - cut == 3 else value[cut:])
        elif kind in ("url", "email"):
            # FULLURL and EMAIL: the longer match wins, FULLURL on a tie ("http://@x," is an e-mail address), and
            # LIKELYURL where it is longer (its path runs over U+00A0: "www.x.org/a@b.com\xa0:x"); all read the
            # original text (they run over the deleted characters)
            source = original if rewritten else text
            longer = None
            for name in ("url", "email", "likely"):
                candidate = (raw_res["url"].match(source, match.start()) if name == "url"
                             else tries.match(name, source, match.start()))
                if candidate and (longer is None or candidate.end() > longer.end()):
                    longer = candidate
            if longer:
                value, position = longer.group(), longer.end()
            tokens.append(value)
        elif kind == "likely":
            raw = _ptb_reread(original, match.start(), tries) if rewritten else None
            if raw:
                value, position = raw
            tokens.append(value)
        elif kind == "amp":
            tokens.append(re.sub("(?i:&amp;)", "&", value))
        elif kind in ("number", "thing", "thing3", "tag", "year", "handle", "lead", "apos", "apos2", "tbspec",
                      "subsup"):
            tokens.append(value)
        elif kind in ("clitic", "quotes", "sredaux"):
            tokens.append(value.translate(_PTB_LATEX_QUOTES))
        elif kind == "entity":
            # the quote rewriting is case-sensitive: "&QUOT;" stays as it is
            tokens.append(value if value.lower() == "&quot;" and value != "&quot;" else _PTB_ENTITIES[value.lower()])
        elif kind in ("smiley", "asian", "phone"):
            tokens.append(value.replace("(", "-LRB-").replace(")", "-RRB-"))
        elif kind == "other":
            tokens.append(_PTB_BRACKETS.get(value) or _PTB_CHAR_MAP.get(value, value))
        elif kind in ("dots", "spaced"):
            tokens.append("...")
        elif kind == "dashes" and len(value) <= 4:
            tokens.append("--")  # probed: runs of 2-4 hyphens are one "--", longer runs stay as they are
        else:  # dashes, bang, stars, hashes, << >>: punctuation runs kept whole
            tokens.append(value)
    if restore:
        table = str.maketrans({char: entity.lower() for char, entity in restore.items()})
        tokens = ["--" if token in dashes else token.translate(table) for token in tokens]
    # pycocoevalcap filters whole tokens, then CIDEr splits its string on any whitespace
    lower = _ptb_lower if "Σ" in caption[0] else str.lower
    if not split_spaces:  # the Java tool writes the spaces inside a token as U+00A0
        if tokens:  # pycocoevalcap strips the end of each output line ("x.org/ab\u3000" at the end)
            tokens[-1] = tokens[-1].rstrip()
        return [token.replace(" ", "\xa0") for token in map(lower, tokens)
                if token not in PTB_PUNCTUATIONS and not token.isspace() and token]
    return [piece for token in map(lower, tokens) if token not in PTB_PUNCTUATIONS for piece in token.split()]


# Java's final-sigma rule looks for cased letters before and after the Σ up to the boundaries of
# java.text.BreakIterator's word instance: letters (not CJK) join over - ' " . _, digits over , ' " ., combining
# marks stay on a letter or digit before them ("ΣΟΦΟΣ1990s" → "σοφοσ1990s" where Python writes
# "σοφος1990s"; "ΑΣ1-Β" → "ας1-β"). Its cased characters: Lu, Ll, Lt and a few modifier letters, Roman numerals and
# circled letters (not "ª", a cased letter for Python).
_PTB_JAVA_CASED_EXTRA = ((0x02B0, 0x02B8), (0x02C0, 0x02C1), (0x02E0, 0x02E4), (0x0345, 0x0345), (0x037A, 0x037A),
                         (0x1D2C, 0x1D61), (0x2160, 0x217F), (0x24B6, 0x24E9))


def _java_cased(char: str) -> bool:
    code = ord(char)
    return unicodedata.category(char) in ("Lu", "Ll", "Lt") or any(a <= code <= b for a, b in _PTB_JAVA_CASED_EXTRA)


_PTB_JAVA_WORD = re.compile(  # ("_" joins letters, not digits: "Α_Σ" is one word, "x2_Σ" and "Α_1Σ" two)
    r"(?:[^\W\d_\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|\d|_)"
    r"(?:[^\W\d_\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|\d(?<!_\d)|_(?<=[^\W\d]_)"
    r"|[-\u00ad\u2010-\u2015\u2027'\".](?<=[^\W\d].)(?=[^\W\d])"
    r"|[,'\".\u066b](?<=\d.)(?=\d))*"
)


def _ptb_entity_chars(text: str, restore: dict[str, str], dashes: set[str], spellings: dict[int, str]) -> str:
    """``text`` with each entity the Java lexer reads as one character (see ``_PTB_ENTITY_CHARS``) replaced by a
    stand-in character of the same lexer class that ``text`` does not hold: a letter (Yi syllables) for SPLET, a
    symbol (supplemental math operators) for SPPUNC / SPMDASH, U+2AFF (in the port's apostrophe classes, rewritten
    to "'" by the quote rules as "&apos;" is, but no member of the QUOTES pairs) for "&apos;", U+2AFE for the same
    entity in other cases ("&APOS;": an apostrophe for the rules, which the case-sensitive quote rewriting keeps).
    Fills ``restore`` (stand-in → entity text), ``dashes`` and ``spellings``: where U+2AFE stands in the returned text
    for another spelling than its ``restore`` entry ("&Apos;" after "&APOS;": THINGA reads its capitals)."""
    allocated: dict[str, str] = {}
    pools = {"letter": iter(range(0xA000, 0xA015)), "symbol": iter(range(0x2A00, 0x2AFE))}
    for literal in "\u2afe\u2aff":
        # the apostrophe stand-ins' own characters, where a caption holds them, are symbols for the Java lexer like
        # the other supplemental math operators: lexed as one of those that the caption does not hold
        if literal in text:
            char = next(c for c in map(chr, pools["symbol"]) if c not in text)
            text, restore[char] = text.replace(literal, char), literal
    free = {char: char not in text for char in "\u2afe\u2aff"}
    removed = 0  # characters the entities before the current one took out

    def stand_in(match: re.Match) -> str:
        nonlocal removed
        kind, entity = match.lastgroup, match.group()
        at, removed = match.start() - removed, removed + len(entity) - 1  # (``at``: where it stands in the result)
        if kind in ("apostrophe", "raw_apostrophe"):
            char = "\u2aff" if kind == "apostrophe" else "\u2afe"
            if free[char]:
                if restore.setdefault(char, entity) != entity:
                    spellings[at] = entity
                return char
        key = entity  # (exact: THINGA reads the entity's capitals)
        if key not in allocated:
            pool = pools["letter" if kind == "letter" else "symbol"]
            char = next(c for c in map(chr, pool) if c not in text)
            allocated[key], restore[char] = char, key
            if kind == "dash":
                dashes.add(char)
        return allocated[key]

    return _PTB_ENTITY_CHARS.sub(stand_in, text)


def _ptb_lower(token: str) -> str:
    """``token.lower()`` with the Java tool's choice between final ``ς`` and ``σ``: a Σ is final where a cased
    letter comes before it in its word (:data:`_PTB_JAVA_WORD`, anything between: "x1Σ" → "x1ς", where Python
    writes "x1σ") and none after it."""
    if "Σ" not in token:
        return token.lower()
    lowered = [char.lower() for char in token]  # ("İ" → "i̇": two characters, one item)
    kept: list[int] = []  # (a non-spacing mark after a letter, digit or Mc is read with it: "σ́.Σ" is one word)
    cased_mark: list[bool] = []  # cased_mark[i]: a mark read with bare[i] is cased for Java (U+0345: "ΑΣͅ" → "ασͅ")
    category_of: list[str] = []  # the Unicode category of each kept character
    for index, char in enumerate(token):
        category = unicodedata.category(char)
        if kept and category in ("Mn", "Me") and (token[kept[-1]].isalnum() or category_of[-1] == "Mc"):
            cased_mark[-1] = cased_mark[-1] or _java_cased(char)
        else:
            kept.append(index)
            cased_mark.append(False)
            category_of.append(category)
    bare = "".join(token[index] for index in kept)
    # Java's word rules read a spacing mark (Mc) as a letter ("Α.\u0903Σ" is one word): an uncased letter stands in
    words = "".join("\u05d0" if category == "Mc" else char for char, category in zip(bare, category_of))
    cased = [0]  # cased[i]: the characters of bare[:i] that are cased or read with a cased mark
    for char, mark in zip(bare, cased_mark):
        cased.append(cased[-1] + (_java_cased(char) or mark))
    start = end = 0  # (the word that holds the current character: bare[start:end])
    for position, char in enumerate(bare):
        if char != "Σ":
            continue
        if position >= end:  # the words, each read once
            word = _PTB_JAVA_WORD.search(words, end)
            while word.end() <= position:
                word = _PTB_JAVA_WORD.search(words, word.end())
            start, end = word.span()
        final = cased[position] > cased[start] and cased[end] == cased[position + 1] and not cased_mark[position]
        lowered[kept[position]] = "ς" if final else "σ"
    return "".join(lowered)


def _ptb_reread(original: str, start: int, tries: _Tries) -> tuple[str, int] | None:
    """Match LIKELYURL at ``start`` on the original text, where the Java tool's deleted characters are still there
    (its URL and e-mail rules run over them: "a@b\u0378c.com" is one token). Returns the token and where lexing
    goes on (deletion keeps every position), or None where the rule does not match there."""
    match = tries.match("likely", original, start)
    return None if match is None else (match.group(), match.end())


def _sentence_start_follows(original: str, start: int, following: str) -> bool:
    """Whether the lexer's spaces, a sentence-start word and a space again follow ``original[start:]`` (the caption
    as the Java tool reads it, its line break included; continuing into the next line). Nothing after the word (the
    end of the input) is no sentence start: "x I. The" as the last caption keeps "i."."""
    rest = original[start:]
    if re.fullmatch(f"{_PTB_SPACENL}*", rest):
        rest += following  # the line break, then the next caption
    match = re.match(rf"{_PTB_SPACENL}+(M(?i:[rs])\.|[A-Za-z]+|{_PTB_SGML})(?={_PTB_SPACENL})", rest)
    word = match and match.group(1)  # first letter as listed, the rest in any case ("THE", "MR.")
    return bool(word and (word[0] + word[1:].lower() in _PTB_SENTENCE_STARTS or word[0] == "<"))


def ptb_tokenize_batch(texts: Sequence[str], split_spaces: bool = True) -> list[list[str]]:
    """:func:`ptb_tokenize` of each text, in order, as pycocoevalcap tokenises one list of captions (one per line;
    each caption sees the start of the next one; newlines inside a caption count as spaces).

    Example:
        >>> ptb_tokenize_batch(["Two dogs.", "A CAT, sleeping!"])
        [['two', 'dogs'], ['a', 'cat', 'sleeping']]
    """
    return [list(tokens) for tokens in _ptb_tokenized(texts, split_spaces, tuple)]


def _following(texts: Sequence[str], index: int) -> str:
    """What the Java lexer sees after caption ``index``'s line break: the next caption and its own line break (none
    after the last caption), or for a blank one, its line break and what follows (bounded: only the start of the next
    words matters); ``""`` after the last caption."""
    seen = ""
    for after_index in range(index + 1, len(texts)):
        after = texts[after_index]
        if after.strip():
            if after_index < len(texts) - 1:  # its own line break: the space after a one-word caption ("The")
                after += "\n"
            return after if not seen else (seen + after)[:64]
        seen += after + "\n"
        if len(seen) >= 64:
            break
    return seen[:64]


def _ptb_tokenized(texts: Sequence[str], split_spaces: bool, finish: Callable[[list[str]], Any]) -> list:
    """``finish(ptb_tokenize(...))`` of each text of one pycocoevalcap call, computed once per distinct caption and
    what the lexer can read of the next one (``finish``'s value is shared by the repeats: make it immutable)."""
    texts = list(texts)
    last = len(texts) - 1
    # a simple caption never reads the next one; the next caption is read only past a final "." (see
    # ptb_tokenize), so a caption whose last visible character is an ASCII letter or digit depends on it only
    # through the line break (there is one after every caption but the last)
    by_text: dict[str, Any] = {}
    by_context: dict[tuple[str, Any], Any] = {}
    result = []
    for index, text in enumerate(texts):
        value = by_text.get(text)
        if value is None:
            simple = _ptb_simple_tokens(text)
            if simple is not None:
                value = by_text[text] = finish(simple)
            else:
                tail = text.rstrip()[-1:]
                following = _following(texts, index)
                key = (text, index < last) if tail.isascii() and tail.isalnum() else (text, following)
                value = by_context.get(key)
                if value is None:
                    value = by_context[key] = finish(ptb_tokenize(text, following, split_spaces))
        result.append(value)
    return result


def ptb_sample_reads_next(prediction: Any, references: Sequence[Any]) -> bool:
    """Whether a sample's tokens, in pycocoevalcap's two PTB calls (predictions, then all references one after the
    other), can depend on the next sample: its prediction or its last reference is not a caption that no lexer rule
    reads past (conservative: any caption but plain ASCII words with ``,`` and a final ``.``/``!``/``?`` that ends
    no abbreviation). Cutting a stream of samples only after samples where this is ``False`` tokenises every caption
    as one call over the whole stream does.

    Example:
        >>> ptb_sample_reads_next("a dog runs.", ["a dog", "the dog runs"]), ptb_sample_reads_next("the U.S.", ["x"])
        (False, True)
    """
    last_reference = references[-1] if len(references) else ""
    return not isinstance(prediction, str) or _ptb_simple_tokens(prediction) is None or (
        not isinstance(last_reference, str) or _ptb_simple_tokens(last_reference) is None)


def coco_tokenized_captions(texts: Sequence[str]) -> list[str]:
    """The strings pycocoevalcap's ``PTBTokenizer.tokenize`` returns for one call over ``texts``: each caption's
    tokens (lowercased, punctuation removed) joined by single spaces, a token holding a space keeping it as U+00A0.

    ``COCOEvalCap`` tokenises all references in one call and all results in another; its scorers then split these
    strings themselves (BLEU, CIDEr: any whitespace; ROUGE-L: ``" "``; METEOR: the jar's ``-norm``).

    Example:
        >>> coco_tokenized_captions(["A man, 2 1/2 dogs.", "Nothing!"])
        ['a man 2\\xa01/2 dogs', 'nothing']
    """
    return _ptb_tokenized(texts, False, " ".join)


def coco_ptb_strings(preds: Sequence[str], target: Sequence[Sequence[str]]) -> tuple[list[str], list[list[str]]]:
    """What ``COCOEvalCap`` hands its scorers: the references of all samples tokenised as one pycocoevalcap
    ``PTBTokenizer`` call (sample after sample), the predictions as another (:func:`coco_tokenized_captions`).

    Args:
        preds: ``B`` captions.
        target: ``B`` lists of reference captions.

    Returns:
        ``(preds, target)`` as tokenised strings, same structure.

    Example:
        >>> coco_ptb_strings(["A dog."], [["The dog!", "A DOG runs"]])
        (['a dog'], [['the dog', 'a dog runs']])
    """
    references = coco_tokenized_captions([ref for refs in target for ref in refs])
    grouped, start = [], 0
    for refs in target:
        grouped.append(references[start : start + len(refs)])
        start += len(refs)
    return coco_tokenized_captions(preds), grouped




class PTBTokenizer(Tokenizer):
    """pycocoevalcap's ``PTBTokenizer`` (lowercased, punctuation removed), see :func:`ptb_tokenize`.

    :meth:`encode` and :meth:`tokenize_batch` tokenise their lines as one pycocoevalcap call: a caption sees the
    start of the next one (:func:`ptb_tokenize_batch`), so they can differ from :meth:`tokenize` line by line where
    a caption ends in a one-letter word and a period.

    Example:
        >>> batch = PTBTokenizer().encode(["Two dogs.", "A CAT, sleeping!", "two CATS"])
        >>> batch.ids.tolist(), batch.lengths.tolist(), batch.vocabulary
        ([0, 1, 2, 3, 4, 0, 5], [2, 3, 2], ['two', 'dogs', 'a', 'cat', 'sleeping', 'cats'])
    """

    name = "ptb"

    def tokenize(self, line: str) -> list[str]:
        """Tokens of one caption, alone in its pycocoevalcap call."""
        return ptb_tokenize(line)

    def tokenize_batch(self, lines: Sequence[str]) -> list[list[str]]:
        """Tokens of each caption, as one pycocoevalcap call."""
        return ptb_tokenize_batch(lines)

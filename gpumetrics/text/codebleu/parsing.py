"""Tree-sitter grammars of the ten CodeBLEU languages, comment stripping and the token index of a parse tree.

Grammars come from the per-language wheels of the ``gpumetrics[code]`` extra (``tree-sitter-python`` …, pinned to
the versions that reproduce codebleu 0.7.0); a missing one raises an :class:`ImportError` that says what to install.
Or from a compiled grammar library given by path (:func:`load_grammar`, CodeBLEU's ``grammar`` option) that exports
``tree_sitter_<lang>`` — the AIJ-2021 organisers' ``my-languages.so`` for their Code2code number.

One parser abstraction serves both py-tree-sitter API generations: :class:`_Binding` is the only code that knows
which one is installed (0.22: ``Language(pointer)``, ``parser.language = …``, ``str(node)``; 0.2.x–0.21:
``Language(path, name)``, ``parser.set_language``, ``node.sexp()``); the token index here, the subtrees of
:mod:`.syntax` and the data-flow walker of :mod:`.dataflow` read the trees of either through the same node
attributes. Before a grammar is handed to the binding its language ABI (the first ``uint32`` of the ``TSLanguage``
struct, read with :mod:`ctypes`) is checked against the ABIs the binding loads (0.22.3: 13–14; 0.2.0: 9–12,
measured); a mismatch is a ``ValueError`` that names the py-tree-sitter that loads it.

What codebleu 0.7 does before it compares trees and data flow, reproduced here:

* :func:`strip_comments` — Python: re-tokenise with :mod:`tokenize`, drop comments and every string token that
  follows an ``INDENT`` or a ``NEWLINE`` token or starts in column 0 (docstrings, but also any string statement),
  keep the columns of what remains, drop blank lines; the source is returned unchanged when :mod:`tokenize` fails
  (unbalanced brackets, bad dedent). Ruby: unchanged. Other languages: ``//`` and ``/* */`` comments become one
  space (string and character literals are skipped over, so ``"//"`` survives), blank lines dropped.
* :func:`code_tokens` — the leaves of the tree (string / character literals count as one leaf, comments none) as
  ``(start_point, end_point)`` pairs, and the text of each, cut from the source lines **with tree-sitter's byte
  columns applied to Python ``str`` lines** (so a line with non-ASCII text before a token yields a shifted slice;
  codebleu does the same, and its data flow sees the shifted names).
"""

from __future__ import annotations

import ctypes
import functools
import importlib
import io
import re
import tokenize
from typing import Any, Callable, Optional

LANGUAGES = ("python", "java", "javascript", "c_sharp", "php", "c", "cpp", "go", "ruby", "rust")

# language → (module of the grammar wheel, function returning the language pointer)
_GRAMMARS = {
    "python": ("tree_sitter_python", "language"),
    "java": ("tree_sitter_java", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "c_sharp": ("tree_sitter_c_sharp", "language"),
    "php": ("tree_sitter_php", "language_php"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "go": ("tree_sitter_go", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "rust": ("tree_sitter_rust", "language"),
}

#: Language ABI ranges measured per py-tree-sitter generation, for the advice of an incompatible grammar:
#: 0.2.0 accepts ABI 9–12 (``set_language`` probed with patched versions), 0.22.3 accepts 13–14 (its constants).
_LEGACY_ABI = (9, 12)
_MODERN_ABI = (13, 14)


# ------------------------------------------------------------------------------------------------ binding adapter
class _Binding:
    """The installed py-tree-sitter behind one interface; only this class knows its API generation.

    * ``modern`` (0.22 and later): ``Language(pointer)``, ``parser.language = language``, ``str(node)`` is the
      S-expression;
    * ``legacy`` (0.2.x – 0.21): ``Language(library_path, name)``, ``parser.set_language(language)``,
      ``node.sexp()``.

    The trees both give are walked by the same code (``children``, ``child_count``, ``type``, ``start_point``,
    ``end_point``, ``child_by_field_name``).
    """

    def __init__(self) -> None:
        import tree_sitter

        self.module = tree_sitter
        try:
            from importlib.metadata import version

            self.version = version("tree_sitter")
        except Exception:  # an unregistered build: decide by the API alone
            self.version = "unknown"
        numbers = tuple(int(part) for part in re.findall(r"\d+", self.version)[:2])
        self.modern = numbers >= (0, 22) if len(numbers) == 2 else not hasattr(tree_sitter.Parser, "set_language")
        low = getattr(tree_sitter, "MIN_COMPATIBLE_LANGUAGE_VERSION", None)
        high = getattr(tree_sitter, "LANGUAGE_VERSION", None)
        if low is None or high is None:
            low, high = _LEGACY_ABI if numbers and numbers < (0, 19) else (None, None)
        self.abi_range: tuple[Optional[int], Optional[int]] = (low, high)
        #: the S-expression of a node: ``str`` (modern) or the unbound ``Node.sexp`` (legacy)
        self.sexp: Callable[[Any], str] = str if self.modern else tree_sitter.Node.sexp

    def language_from_library(self, path: str, lang: str, pointer: int) -> Any:
        if self.modern:
            return self.module.Language(pointer)
        return self.module.Language(path, lang)

    def language_from_pointer(self, pointer: Any, lang: str) -> Any:
        if self.modern:
            return self.module.Language(pointer)
        try:  # 0.21 takes a pointer and a name; older ones load from a library path only
            return self.module.Language(pointer, lang)
        except Exception as error:
            raise ImportError(
                f"py-tree-sitter {self.version} cannot load the grammar wheel of {lang!r}; pass `grammar` (a "
                f"compiled grammar library its ABI accepts), or install tree_sitter==0.22.3 (pip install "
                f"'gpumetrics[code]')") from error

    def parser(self, language: Any) -> Any:
        result = self.module.Parser()
        if self.modern:
            result.language = language
        else:
            result.set_language(language)
        return result

    def describe(self) -> str:
        low, high = self.abi_range
        accepts = f"loads ABI {low}–{high}" if low is not None else "rejected it"
        return f"the installed py-tree-sitter {self.version} {accepts}"


@functools.lru_cache(maxsize=None)
def binding() -> _Binding:
    """The installed py-tree-sitter (see :class:`_Binding`).

    Raises:
        ImportError: tree-sitter is not installed.
    """
    try:
        return _Binding()
    except ImportError as error:
        raise ImportError("CodeBLEU needs tree-sitter: pip install 'gpumetrics[code]' (pins the versions that "
                          "reproduce codebleu 0.7)") from error


def sexp(node: Any) -> str:
    """The S-expression of ``node`` as the installed py-tree-sitter writes it (``str(node)`` / ``node.sexp()``)."""
    return binding().sexp(node)


def language_abi(pointer: int) -> int:
    """The language ABI version of a loaded grammar: the first ``uint32`` of its ``TSLanguage`` struct."""
    return ctypes.c_uint32.from_address(pointer).value


def _abi_advice(abi: int) -> str:
    low, high = _LEGACY_ABI
    if low <= abi <= high:
        return (f"Grammars of ABI {low}–{high} load with py-tree-sitter 0.2.0 (measured); install it in a separate "
                "environment: pip install tree_sitter==0.2.0 (builds from the sdist, needs a C compiler), then "
                "gpumetrics without the [code] extra")
    low, high = _MODERN_ABI
    if low <= abi <= high:
        return (f"Grammars of ABI {low}–{high} load with py-tree-sitter 0.22.3: pip install tree_sitter==0.22.3 "
                "(the version pinned by gpumetrics[code])")
    if abi > high:
        return f"ABI {abi} needs a py-tree-sitter newer than 0.22 (built against a tree-sitter of that ABI)"
    return f"no py-tree-sitter we know of loads ABI {abi} (0.2.0 loads {_LEGACY_ABI[0]}–{_LEGACY_ABI[1]})"


class Grammar:
    """A loaded tree-sitter grammar of one language with its parser.

    Attributes:
        lang: the CodeBLEU language.
        source: ``None`` (the ``gpumetrics[code]`` grammar wheel) or the path of the grammar library.
        abi: the language ABI version of the grammar (``None`` when it could not be read).
        language, parser: the binding's ``Language`` and ``Parser``.
    """

    def __init__(self, lang: str, source: Optional[str], abi: Optional[int], language: Any, parser: Any) -> None:
        self.lang, self.source, self.abi, self.language, self.parser = lang, source, abi, language, parser

    def parse(self, code: str) -> Any:
        """The root node of ``code`` (UTF-8 bytes, as the reference scripts feed tree-sitter)."""
        return self.parser.parse(code.encode("utf8")).root_node


def _check_abi(abi: Optional[int], lang: str, what: str, current: _Binding) -> None:
    low, high = current.abi_range
    if abi is None or low is None or low <= abi <= high:
        return
    raise ValueError(f"{what} holds a {lang} grammar of language ABI {abi}; {current.describe()}. "
                     f"{_abi_advice(abi)}")


@functools.lru_cache(maxsize=None)
def load_grammar(lang: str, library: Optional[str] = None) -> Grammar:
    """The grammar of ``lang`` with its parser, loaded once per process and source.

    Args:
        lang: one of :data:`LANGUAGES`.
        library: ``None`` — the grammar wheel of ``gpumetrics[code]``; or the path of a compiled grammar library
            (e.g. the ``my-languages.so`` the AIJ-2021 organisers built) that exports ``tree_sitter_<lang>``.

    Raises:
        ImportError: tree-sitter or the grammar wheel is missing (the message names the package).
        ValueError: the library cannot be loaded, lacks ``tree_sitter_<lang>``, or has a language ABI the installed
            py-tree-sitter cannot load (the message says which py-tree-sitter loads it).
    """
    current = binding()
    if library is None:
        module_name, function = _GRAMMARS[lang]
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            raise ImportError(
                f"CodeBLEU for {lang!r} needs tree-sitter and {module_name.replace('_', '-')}: "
                f"pip install 'gpumetrics[code]' (pins the versions that reproduce codebleu 0.7)"
            ) from error
        pointer = getattr(module, function)()
        abi = language_abi(pointer) if isinstance(pointer, int) else None
        _check_abi(abi, lang, f"the grammar wheel {module_name.replace('_', '-')} (used when `grammar` is not set)",
                   current)
        language = current.language_from_pointer(pointer, lang)
    else:
        what = f"`grammar` {library!r}"
        try:
            shared = ctypes.CDLL(library)
        except OSError as error:
            raise ValueError(f"{what} cannot be loaded as a shared library: {error}") from error
        try:
            entry = getattr(shared, f"tree_sitter_{lang}")
        except AttributeError:
            raise ValueError(f"{what} has no {lang} grammar (no symbol tree_sitter_{lang})") from None
        entry.restype = ctypes.c_void_p
        pointer = entry()
        abi = language_abi(pointer)
        _check_abi(abi, lang, what, current)
        language = current.language_from_library(library, lang, pointer)
    try:
        parser = current.parser(language)
    except ValueError as error:  # the binding's own version check (a legacy one without ABI constants)
        what = "the grammar wheel" if library is None else f"`grammar` {library!r}"
        raise ValueError(f"{what} holds a {lang} grammar of language ABI {abi}; {current.describe()} ({error}). "
                         f"{_abi_advice(abi) if abi is not None else ''}".rstrip()) from error
    return Grammar(lang, library, abi, language, parser)


def grammar(lang: str) -> Any:
    """The ``tree_sitter.Language`` of ``lang`` from its grammar wheel (loaded once per process).

    Raises:
        ImportError: ``tree-sitter`` or the grammar wheel is missing (the message names the package).
    """
    return load_grammar(lang).language


def parser(lang: str) -> Any:
    """A ``tree_sitter.Parser`` for ``lang`` (one per process and language)."""
    return load_grammar(lang).parser


def parse(code: str, lang: str, library: Optional[str] = None) -> Any:
    """The root node of ``code`` parsed as ``lang`` (UTF-8 bytes, as codebleu feeds tree-sitter), with the grammar
    wheel or the grammar ``library`` (see :func:`load_grammar`)."""
    return load_grammar(lang, library).parse(code)


# ------------------------------------------------------------------------------------------------ comment stripping
# One alternation scanned left to right: a comment is replaced, a quoted literal is skipped over unchanged.
_C_LIKE = re.compile(r"//.*?$|/\*.*?\*/|'(?:\\.|[^\\'])*'|\"(?:\\.|[^\\\"])*\"", re.DOTALL | re.MULTILINE)


def _without_blank_lines(text: str) -> str:
    return "\n".join(line for line in text.split("\n") if line.strip())


def _strip_python(source: str) -> str:
    pieces: list[str] = []
    previous = tokenize.INDENT
    row, column = -1, 0
    for kind, text, (start_row, start_col), (end_row, end_col), _ in tokenize.generate_tokens(
        io.StringIO(source).readline
    ):
        if start_row > row:
            column = 0
        if start_col > column:
            pieces.append(" " * (start_col - column))
        if kind == tokenize.STRING:
            standalone = previous in (tokenize.INDENT, tokenize.NEWLINE) or start_col == 0
            if not standalone:
                pieces.append(text)
        elif kind != tokenize.COMMENT:
            pieces.append(text)
        previous, row, column = kind, end_row, end_col
    return _without_blank_lines("".join(pieces))


def _replace_c_comment(match: re.Match) -> str:
    text = match.group(0)
    return " " if text[0] == "/" else text


def strip_comments(code: str, lang: str) -> str:
    """``code`` without comments (and, for Python, docstrings) as codebleu 0.7 strips them (see the module doc).

    Example:
        >>> strip_comments("def f(x):\\n    'Doc.'\\n    return x  # done\\n", "python")
        'def f(x):\\n    return x  '
        >>> strip_comments('int a; // one\\n/* two */ char *s = "//";', "c")
        'int a;  \\n  char *s = "//";'
    """
    if lang == "python":
        try:
            return _strip_python(code)
        except Exception:  # noqa: BLE001 - codebleu: `except Exception: pass` (TokenError, IndentationError …)
            return code
    if lang == "ruby":
        return code
    return _without_blank_lines(_C_LIKE.sub(_replace_c_comment, code))


# ------------------------------------------------------------------------------------------------ token index
_ATOMIC = ("string_literal", "string", "character_literal")

Point = tuple[int, int]


def token_leaves(root: Any) -> list[Any]:
    """The leaf nodes in source order: a string / character literal is one leaf (its inner nodes are not visited),
    a comment leaf is left out."""
    leaves: list[Any] = []
    stack = [root]
    while stack:
        node = stack.pop()
        if not node.child_count:
            if node.type != "comment":
                leaves.append(node)
        elif node.type in _ATOMIC:
            leaves.append(node)
        else:  # an inner node, or a comment with children (which still count)
            stack.extend(node.children[::-1])
    return leaves


def token_spans(root: Any) -> list[tuple[Point, Point]]:
    """``(start_point, end_point)`` of each leaf of :func:`token_leaves`."""
    return [(node.start_point, node.end_point) for node in token_leaves(root)]


def _token_text(start: Point, end: Point, lines: list[str]) -> str:
    (start_row, start_col), (end_row, end_col) = start, end
    if start_row == end_row:
        return lines[start_row][start_col:end_col]
    return lines[start_row][start_col:] + "".join(lines[start_row + 1:end_row]) + lines[end_row][:end_col]


def index_to_code(root: Any, code: str) -> dict[tuple[Point, Point], tuple[int, str]]:
    """``{(start_point, end_point): (token number, token text)}`` — the table codebleu hands its DFG functions.

    Token texts are cut from ``code.split("\\n")`` with tree-sitter's (byte) columns; lines of a multi-line token
    are joined without their newlines, as codebleu joins them.
    """
    lines = code.split("\n")
    table = {}
    for number, node in enumerate(token_leaves(root)):
        start, end = node.start_point, node.end_point
        table[(start, end)] = (number, _token_text(start, end, lines))
    return table


class TokenTable(dict):
    """:func:`index_to_code`'s table keyed by ``(start_byte, end_byte)`` instead of points — the same entries (byte
    offsets and points name the same positions of one source), read about 5× faster from a node (a point is a new
    Python object per access). :func:`~gpumetrics.text.codebleu.dataflow.dataflow_edges` accepts either."""


def token_table(root: Any, code: str) -> TokenTable:
    """:func:`index_to_code` keyed by byte offsets (see :class:`TokenTable`)."""
    lines = code.split("\n")
    table = TokenTable()
    for number, node in enumerate(token_leaves(root)):
        table[(node.start_byte, node.end_byte)] = (number, _token_text(node.start_point, node.end_point, lines))
    return table

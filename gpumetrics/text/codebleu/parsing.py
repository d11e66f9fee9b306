"""Tree-sitter grammars of the ten CodeBLEU languages, comment stripping and the token index of a parse tree.

Grammars come from the per-language wheels of the ``gpumetrics[code]`` extra (``tree-sitter-python`` …, pinned to
the versions that reproduce codebleu 0.7.0); a missing one raises an :class:`ImportError` that says what to install.

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

import functools
import importlib
import io
import re
import tokenize
from typing import Any

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


@functools.lru_cache(maxsize=None)
def grammar(lang: str) -> Any:
    """The ``tree_sitter.Language`` of ``lang`` (loaded once per process).

    Raises:
        ImportError: ``tree-sitter`` or the grammar wheel is missing (the message names the package).
    """
    module_name, function = _GRAMMARS[lang]
    try:
        import tree_sitter

        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ImportError(
            f"CodeBLEU for {lang!r} needs tree-sitter and {module_name.replace('_', '-')}: "
            f"pip install 'gpumetrics[code]' (pins the versions that reproduce codebleu 0.7)"
        ) from error
    return tree_sitter.Language(getattr(module, function)())


@functools.lru_cache(maxsize=None)
def parser(lang: str) -> Any:
    """A ``tree_sitter.Parser`` for ``lang`` (one per process and language)."""
    import tree_sitter

    result = tree_sitter.Parser()
    result.language = grammar(lang)
    return result


def parse(code: str, lang: str) -> Any:
    """The root node of ``code`` parsed as ``lang`` (UTF-8 bytes, as codebleu feeds tree-sitter)."""
    return parser(lang).parse(code.encode("utf8")).root_node


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
        except (tokenize.TokenError, SyntaxError):  # IndentationError is a SyntaxError
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

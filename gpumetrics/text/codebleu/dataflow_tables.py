"""Per-language node-type tables that drive the one data-flow walker in :mod:`.dataflow`.

Each :class:`DataflowTable` says which tree-sitter node types play which role (definition, assignment, increment,
branch, loop) and how the parts of a node are found (the field conventions). Where a grammar convention cannot be
said with field names, a small named hook (a function of the node) says it. The tables reproduce codebleu 0.7's
``parser/DFG.py`` *as shipped*, quirks included: node types that a grammar never produces (``let_expression``,
``for_each_statement`` in Rust, ``local_variable_declaration`` as the C# ``for`` marker) are kept because they are
what the reference checks, and ``c`` / ``cpp`` use the C# table on C / C++ trees because codebleu 0.7's
``dataflow_match.dfg_function`` maps them to ``DFG_csharp`` ("XLCoST uses C# parser for C").

A hook returns the nodes a role needs; ``None`` where the reference would dereference a missing node (the walker then
raises :class:`~gpumetrics.text.codebleu.dataflow.DataflowError`, as the reference raises there).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal, Optional

Node = Any  # tree_sitter.Node; kept untyped so this module imports without tree-sitter installed

__all__ = ["DataflowTable", "DATAFLOW_TABLES", "DATAFLOW_LANGUAGES"]


# ----------------------------------------------------------------------------------------------------------- hooks
def _fields(name_field: str, value_field: str) -> Callable[[Node], tuple[Optional[Node], Optional[Node]]]:
    """Definition parts read from two named fields (most grammars)."""

    def parts(node: Node) -> tuple[Optional[Node], Optional[Node]]:
        return node.child_by_field_name(name_field), node.child_by_field_name(value_field)

    parts.__name__ = f"fields_{name_field}_{value_field}"
    return parts


def _csharp_declarator_parts(node: Node) -> tuple[Optional[Node], Optional[Node]]:
    """C# ``variable_declarator`` by position: name is child 0; child 1 is the value only when there are exactly 2."""
    children = node.children
    return children[0], (children[1] if len(children) == 2 else None)


def _rust_function_parts(node: Node) -> tuple[Optional[Node], Optional[Node]]:
    """Rust ``function_item`` by position: child 1 is the "name", child 2 (if any) the "value" (codebleu's layout)."""
    children = node.children
    if len(children) < 2:
        return None, None  # the reference indexes children[1] and raises
    return children[1], (children[2] if len(children) >= 3 else None)


def _without_commas(node: Node) -> list[Node]:
    return [child for child in node.children if child.type != ","]


def _split_sides(left: Node, right: Node) -> tuple[list[Node], list[Node]]:
    """Pair up ``a, b = x, y`` element-wise; when the element counts differ, the whole sides form one pair.

    A side with no (non-comma) children stands for itself.
    """
    lefts, rights = _without_commas(left), _without_commas(right)
    if len(lefts) != len(rights):
        return [left], [right]
    return (lefts or [left]), (rights or [right])


def _python_assignment_sides(node: Node) -> Optional[tuple[list[Optional[Node]], list[Node]]]:
    """Python ``assignment`` / ``augmented_assignment`` / ``for_in_clause``.

    ``for_in_clause``: left field against the last child. Others: ``None`` (nothing happens at all, the annotation of
    ``x: int`` is not walked) when there is no right side, else the element-wise split of the two sides.
    """
    if node.type == "for_in_clause":
        return [node.child_by_field_name("left")], [node.children[-1]]
    right = node.child_by_field_name("right")
    if right is None:
        return None
    left = node.child_by_field_name("left")
    if left is None:
        return [None], [right]  # the reference reads left.children and raises
    return _split_sides(left, right)


def _ruby_assignment_sides(node: Node) -> Optional[tuple[list[Optional[Node]], list[Optional[Node]]]]:
    """Ruby ``assignment`` (element-wise split) and ``operator_assignment`` (first child against last child)."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    if left is None or right is None:
        return [None], [None]  # the reference reads .children of the missing side and raises
    if node.type == "operator_assignment":
        return [node.children[0]], [node.children[-1]]
    return _split_sides(left, right)


def _python_for_parts(node: Node) -> tuple[list[Optional[Node]], list[Optional[Node]], Optional[Node]]:
    """Python ``for_statement``: element-wise split of left/right; the body is walked only when it is the last child
    (a ``for … else`` loop's body is not walked at all)."""
    left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
    last = node.children[-1]
    body = last if last.type == "block" else None
    if left is None or right is None:
        return [None], [None], body
    lefts, rights = _split_sides(left, right)
    return lefts, rights, body


def _ruby_for_parts(node: Node) -> tuple[list[Optional[Node]], list[Optional[Node]], Optional[Node]]:
    """Ruby ``for``: pattern against value, then the body (required)."""
    return [node.child_by_field_name("pattern")], [node.child_by_field_name("value")], node.child_by_field_name("body")


def _enhanced_fields(name_field: str, value_field: str) -> Callable[[Node], tuple]:
    """For-each parts (name, iterable, body) read from fields."""

    def parts(node: Node) -> tuple[Optional[Node], Optional[Node], Optional[Node]]:
        return (
            node.child_by_field_name(name_field),
            node.child_by_field_name(value_field),
            node.child_by_field_name("body"),
        )

    parts.__name__ = f"enhanced_{name_field}_{value_field}"
    return parts


def _php_foreach_parts(node: Node) -> tuple[Optional[Node], Optional[Node], Optional[Node]]:
    """PHP ``foreach``: the first ``variable_name`` child is the iterable, the second the loop variable."""
    name = value = None
    for child in node.children:
        if child.type == "variable_name":
            if value is None:
                value = child
            else:
                name = child
                break
    return name, value, node.child_by_field_name("body")


# ----------------------------------------------------------------------------------------------------------- table
@dataclass(frozen=True)
class DataflowTable:
    """Roles of node types in one language, in codebleu 0.7's order of precedence (first role listed wins).

    Attributes:
        definition: ``name = value`` declarations; each name token *comesFrom* each value token.
        definition_parts: hook ``node -> (name, value | None)``.
        assignment: assignment node types.
        assignment_style: ``"product"`` — walk ``right``, then each ``left`` token is *computedFrom* each right token
            (one edge per pair); ``"pairwise"`` — sides split element-wise by ``assignment_sides``, each left token
            *computedFrom* all tokens of its right element (one edge listing them all).
        assignment_sides: hook for ``"pairwise"``: ``node -> (lefts, rights)`` or ``None`` for "do nothing".
        increment: ``i++``-like nodes: every variable token *computedFrom* every variable token; children not walked.
        if_types: branching nodes; their children are walked in order, each alternative from the states before the
            branch, and the states after are the union of the alternatives' states.
        if_branch_types: child types that start an alternative (walked from the states before the node).
        if_sticky: once an alternative started, every later child is one too (``flag`` in the reference).
        if_merge_input: ``"unless_else"`` — the states before the node join the union unless the node or one of its
            children has ``else`` in its type; ``"always"`` — they always join.
        for_types: C-style loops: every child walked, then walked again after ``for_marker`` (a second iteration).
        for_marker: child type after which the second pass starts.
        for_marker_field: field of the marker child walked first in the second pass (Go's ``update``), or ``None``.
        iter_for_types: ``for x in y`` loops walked as two passes of (pairwise assignment, body).
        iter_for_parts: hook ``node -> (lefts, rights, body | None)``.
        iter_for_body_required: a missing body is an error (Ruby) rather than "not walked" (Python).
        enhanced_for_types: for-each loops walked as two passes of (iterable, name *computedFrom* it, body).
        enhanced_for_parts: hook ``node -> (name, iterable, body)``.
        while_types: loops whose children are all walked twice.
        do_first: child types that a plain node walks before its other children (Python comprehensions).
    """

    language: str
    definition: frozenset[str] = frozenset()
    definition_parts: Callable[[Node], tuple] = _fields("name", "value")
    assignment: frozenset[str] = frozenset()
    assignment_style: Literal["product", "pairwise"] = "product"
    assignment_sides: Optional[Callable[[Node], Any]] = None
    increment: frozenset[str] = frozenset()
    if_types: frozenset[str] = frozenset()
    if_branch_types: frozenset[str] = frozenset()
    if_sticky: bool = True
    if_merge_input: Literal["unless_else", "always"] = "unless_else"
    for_types: frozenset[str] = frozenset()
    for_marker: Optional[str] = None
    for_marker_field: Optional[str] = None
    iter_for_types: frozenset[str] = frozenset()
    iter_for_parts: Optional[Callable[[Node], tuple]] = None
    iter_for_body_required: bool = False
    enhanced_for_types: frozenset[str] = frozenset()
    enhanced_for_parts: Optional[Callable[[Node], tuple]] = None
    while_types: frozenset[str] = frozenset()
    do_first: frozenset[str] = frozenset()


def _f(*types: str) -> frozenset[str]:
    return frozenset(types)


_PYTHON = DataflowTable(
    language="python",
    definition=_f("default_parameter"),
    assignment=_f("assignment", "augmented_assignment", "for_in_clause"),
    assignment_style="pairwise",
    assignment_sides=_python_assignment_sides,
    if_types=_f("if_statement"),
    if_branch_types=_f("elif_clause", "else_clause"),
    if_sticky=False,
    iter_for_types=_f("for_statement"),
    iter_for_parts=_python_for_parts,
    while_types=_f("while_statement"),
    do_first=_f("for_in_clause"),
)

_JAVA = DataflowTable(
    language="java",
    definition=_f("variable_declarator"),
    assignment=_f("assignment_expression"),
    increment=_f("update_expression"),
    if_types=_f("if_statement", "else"),
    if_branch_types=_f("if_statement", "else"),
    for_types=_f("for_statement"),
    for_marker="local_variable_declaration",
    enhanced_for_types=_f("enhanced_for_statement"),
    enhanced_for_parts=_enhanced_fields("name", "value"),
    while_types=_f("while_statement"),
)

_CSHARP = DataflowTable(
    language="c_sharp",
    definition=_f("variable_declarator"),
    definition_parts=_csharp_declarator_parts,
    assignment=_f("assignment_expression"),
    increment=_f("postfix_unary_expression"),
    if_types=_f("if_statement", "else"),
    if_branch_types=_f("if_statement", "else"),
    for_types=_f("for_statement"),
    for_marker="local_variable_declaration",
    enhanced_for_types=_f("for_each_statement"),
    enhanced_for_parts=_enhanced_fields("left", "right"),
    while_types=_f("while_statement"),
)

_RUBY = DataflowTable(
    language="ruby",
    definition=_f("keyword_parameter"),
    assignment=_f("assignment", "operator_assignment"),
    assignment_style="pairwise",
    assignment_sides=_ruby_assignment_sides,
    if_types=_f("if", "elsif", "else", "unless", "when"),
    if_branch_types=_f("if", "elsif", "else", "unless", "when"),
    if_sticky=False,
    iter_for_types=_f("for"),
    iter_for_parts=_ruby_for_parts,
    iter_for_body_required=True,
    while_types=_f("while_modifier", "until"),
)

_GO = DataflowTable(
    language="go",
    definition=_f("var_spec"),
    assignment=_f("assignment_statement"),
    increment=_f("inc_statement"),
    if_types=_f("if_statement", "else"),
    if_branch_types=_f("if_statement", "else"),
    if_merge_input="always",
    for_types=_f("for_statement"),
    for_marker="for_clause",
    for_marker_field="update",
)

_PHP = DataflowTable(
    language="php",
    definition=_f("simple_parameter"),
    definition_parts=_fields("name", "default_value"),
    assignment=_f("assignment_expression", "augmented_assignment_expression"),
    increment=_f("update_expression"),
    if_types=_f("if_statement", "else_clause"),
    if_branch_types=_f("if_statement", "else_clause"),
    if_merge_input="always",
    for_types=_f("for_statement"),
    for_marker="assignment_expression",
    enhanced_for_types=_f("foreach_statement"),
    enhanced_for_parts=_php_foreach_parts,
    while_types=_f("while_statement"),
)

_JAVASCRIPT = DataflowTable(
    language="javascript",
    definition=_f("variable_declarator"),
    assignment=_f("assignment_pattern", "augmented_assignment_expression"),
    increment=_f("update_expression"),
    if_types=_f("if_statement", "else"),
    if_branch_types=_f("if_statement", "else"),
    if_merge_input="always",
    for_types=_f("for_statement"),
    for_marker="variable_declaration",
    while_types=_f("while_statement"),
)

_RUST = DataflowTable(
    language="rust",
    definition=_f("function_item"),
    definition_parts=_rust_function_parts,
    assignment=_f("assignment_expression", "compound_assignment_expr", "let_expression"),
    if_types=_f("if_expression", "if_let_expression", "match_expression", "else"),
    if_branch_types=_f("if_expression", "if_let_expression", "match_expression", "else"),
    for_types=_f("for_expression"),
    for_marker="local_variable_declaration",
    enhanced_for_types=_f("for_each_statement"),
    enhanced_for_parts=_enhanced_fields("left", "right"),
    while_types=_f("while_expression", "while_let_expression", "loop_expression"),
)

#: language name (as codebleu 0.7 spells it) -> table; ``c`` and ``cpp`` share the C# table, as in codebleu 0.7.
DATAFLOW_TABLES: dict[str, DataflowTable] = {
    "python": _PYTHON,
    "java": _JAVA,
    "javascript": _JAVASCRIPT,
    "c_sharp": _CSHARP,
    "php": _PHP,
    "c": _CSHARP,
    "cpp": _CSHARP,
    "go": _GO,
    "ruby": _RUBY,
    "rust": _RUST,
}

DATAFLOW_LANGUAGES: tuple[str, ...] = tuple(DATAFLOW_TABLES)

"""Data-flow edges of a parsed program: one generic walker driven by the per-language tables of :mod:`.dataflow_tables`.

The result equals codebleu 0.7's ``DFG_<lang>(root_node, index_to_code, {})[0]`` — same tuples, same order — for the
ten CodeBLEU languages. codebleu has one recursive function per language; here one iterative walker handles every
language, and what differs lives in a :class:`~.dataflow_tables.DataflowTable` (node types per role, field
conventions, a few named hooks).

How the reference behaves, and so how this walker behaves:

- The walk threads a *states* map ``variable name -> [token indices of its last definitions]`` through the tree in
  source order. A variable leaf (a leaf whose type differs from its text) emits ``(name, idx, "comesFrom", [name],
  states[name])`` when the name is known, else ``(name, idx, "comesFrom", [], [])`` and, for an ``identifier``,
  records itself as the name's definition.
- Definitions, assignments, increments, branches and loops are the roles of the table (see
  :class:`~.dataflow_tables.DataflowTable`); every other node walks its children in order (``do_first`` children
  first).
- Loops are walked twice (a second iteration sees the first one's definitions); the edges of a loop are then merged
  per ``(name, idx, relation)``: parent names ``list(set(a + b))``, parent indices ``sorted(set(a + b))``. The
  order of those names is Python's set order (it varies with ``PYTHONHASHSEED``); the same sets are built from the
  same lists in the same sequence as the reference, so the order is the reference's in the same process. Nested
  loops are walked ``2 ** depth`` times, as in the reference.
- The edges of the whole program are stably sorted by token index. The reference sorts at every node; a stable sort
  of sorted runs equals a stable sort of their concatenation, so sorting once at the end gives the same order.

Where the reference raises because it dereferences a node the tree lacks, :func:`dataflow_edges` raises
:class:`DataflowError`; codebleu's ``get_data_flow`` turns that into an empty data flow, and so should a caller that
wants its numbers. This happens on valid programs too: PHP ``foreach ($a as $k => $v)``, ``foreach ($a as &$v)`` and
``foreach ($this->items as $v)`` (codebleu looks for two ``variable_name`` children), besides error-recovered trees.
The same holds where the reference looks up a leaf that is not a token: a Python or Ruby assignment whose sides are
split element-wise (``a, b = c, d``) when the right side is a string literal with as many parts as the left side has
elements — ``x.s = 'H'``, ``self.mode = f'{m}'``, ``x[i], y = 'ab'`` (``x . s`` against ``' H '``): the walk enters
the literal, whose parts ``index_to_code`` does not hold (it keeps the literal as one token), and codebleu 0.7's
``KeyError`` there makes it count no data flow for the whole program; so does :class:`DataflowError` here.

The walker keeps an explicit stack (one suspended generator per open node), so tree depth is bounded by memory, not
by Python's recursion limit. The reference recurses (about two frames per tree level) and fails with
``RecursionError`` on very deep trees; where that happens depends on the interpreter's limit and on the caller's own
stack depth, so it is not reproduced: this walker returns the edges the reference returns with a large enough limit.
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, Generator, Hashable, Mapping, Optional

from gpumetrics.text.codebleu.dataflow_tables import DATAFLOW_LANGUAGES, DATAFLOW_TABLES, DataflowTable
from gpumetrics.text.codebleu.parsing import TokenTable

__all__ = ["DataflowError", "DataflowEdge", "dataflow_edges", "DATAFLOW_LANGUAGES"]

Node = Any  # tree_sitter.Node
#: ``(name, token index, relation, [parent names], [parent token indices])``; relation is "comesFrom"/"computedFrom".
DataflowEdge = tuple[str, int, str, list[str], list[int]]
States = dict[str, list[int]]
IndexToCode = Mapping[Hashable, tuple[int, str]]

_COMES_FROM = "comesFrom"
_COMPUTED_FROM = "computedFrom"
#: node types the reference treats as one token even when they have children
_TOKEN_TYPES = frozenset(("string_literal", "string", "character_literal"))
_BY_INDEX = itemgetter(1)

# role tags of the dispatch table
_DEFINITION, _ASSIGNMENT, _INCREMENT, _IF, _FOR, _ITER_FOR, _ENHANCED_FOR, _WHILE = range(8)


class DataflowError(ValueError):
    """The tree lacks a node the reference's walk dereferences (codebleu 0.7 raises there; its score counts no flow)."""


def _is_token(node: Node) -> bool:
    """codebleu's leaf test: no children, or a string / character literal — and never a comment."""
    return (node.child_count == 0 or node.type in _TOKEN_TYPES) and node.type != "comment"


def _variable_tokens(node: Optional[Node], index_to_code: IndexToCode) -> list[tuple[int, str]]:
    """``(token index, text)`` of the tokens under ``node`` whose type differs from their text, in source order.

    The iterative equivalent of codebleu's ``tree_to_variable_index``.
    """
    if node is None:
        raise DataflowError("a node the reference reads is missing from the tree")
    by_bytes = isinstance(index_to_code, TokenTable)
    found = []
    stack = [node]
    while stack:
        current = stack.pop()
        if _is_token(current):
            entry = _lookup(index_to_code, current, by_bytes)
            if current.type != entry[1]:
                found.append(entry)
        else:
            stack.extend(reversed(current.children))
    return found


def _lookup(index_to_code: IndexToCode, node: Node, by_bytes: bool) -> tuple[int, str]:
    """The ``(token index, text)`` of a leaf the walk reaches; :class:`DataflowError` where it is not a token.

    The walk reaches leaves that are not tokens when it splits the two sides of a Python / Ruby assignment
    element-wise and the right side is a string literal with as many parts as the left side has elements
    (``x.s = 'H'``: ``x . s`` against ``' H '``): it then walks the parts of the literal, which the token table keeps
    as one token. codebleu 0.7 looks the part up in its ``index_to_code`` there too and fails with ``KeyError``;
    ``get_data_flow`` then counts no data flow for the program.
    """
    try:
        return index_to_code[(node.start_byte, node.end_byte) if by_bytes else (node.start_point, node.end_point)]
    except KeyError:
        raise DataflowError(f"a {node.type!r} leaf the walk reaches is not a token of `index_to_code` (the inside "
                            "of a string literal, or a table built from another tree)") from None


def _merge_loop_edges(edges: list[DataflowEdge], start: int) -> None:
    """Merge, in place, the edges ``edges[start:]`` of one loop that share ``(name, idx, relation)``.

    Parent names become ``list(set(a + b))`` and indices ``sorted(set(a + b))``, folded in emission order exactly as
    the reference does (the order of a ``set`` of strings depends on the insertion sequence, so the fold is kept).
    Merged edges keep the position of their first occurrence.
    """
    merged: dict[tuple[str, int, str], list] = {}
    for name, idx, relation, parent_names, parent_indices in edges[start:]:
        key = (name, idx, relation)
        entry = merged.get(key)
        if entry is None:
            merged[key] = [parent_names, parent_indices]
        else:
            entry[0] = list(set(entry[0] + parent_names))
            entry[1] = sorted(set(entry[1] + parent_indices))
    del edges[start:]
    edges.extend((key[0], key[1], key[2], value[0], value[1]) for key, value in merged.items())


class _Walk:
    """One walk of one tree. Each role is a generator: ``states = yield child, states`` walks a child subtree; plain
    nodes walk their children in order (``do_first`` children first).

    A generator owns the ``states`` dict it receives and may change it; it returns the states after its node.
    """

    def __init__(self, table: DataflowTable, index_to_code: IndexToCode) -> None:
        self.table = table
        self.index_to_code = index_to_code
        self.by_bytes = isinstance(index_to_code, TokenTable)
        self.edges: list[DataflowEdge] = []
        roles: dict[str, int] = {}
        # lowest precedence first, so a type listed under two roles gets the earlier one of the reference's chain
        for role, types in (
            (_WHILE, table.while_types),
            (_ENHANCED_FOR, table.enhanced_for_types),
            (_ITER_FOR, table.iter_for_types),
            (_FOR, table.for_types),
            (_IF, table.if_types),
            (_INCREMENT, table.increment),
            (_ASSIGNMENT, table.assignment),
            (_DEFINITION, table.definition),
        ):
            roles.update(dict.fromkeys(types, role))
        self.roles = roles
        # plain functions, not bound methods: a dict of bound methods on self is a reference cycle, which would keep
        # every walk (and its token table) alive until the cyclic collector runs
        self.handlers = {
            _DEFINITION: _Walk._definition,
            _ASSIGNMENT: _Walk._pairwise_assignment if table.assignment_style == "pairwise" else _Walk._assignment,
            _INCREMENT: _Walk._increment,
            _IF: _Walk._if,
            _FOR: _Walk._for,
            _ITER_FOR: _Walk._iter_for,
            _ENHANCED_FOR: _Walk._enhanced_for,
            _WHILE: _Walk._while,
        }

    # ------------------------------------------------------------------------------------------------- driver
    def run(self, root: Node) -> list[DataflowEdge]:
        """Walk the tree from ``root`` with empty states; return the edges sorted by token index.

        A frame is either a role's generator (``send`` the states after the child it asked for) or, for a *plain*
        node (no role: it only threads the states through its children in order), the list of its children still
        to walk, last first — most nodes are plain, and a list costs less than a generator.
        """
        stack: list = []
        reply = self._enter(root, {}, stack)  # states after the last walked subtree (None: prime a new generator)
        while stack:
            frame = stack[-1]
            if frame.__class__ is list:
                if not frame:  # a plain node is done: its states go up as they are
                    stack.pop()
                    continue
                child, states = frame.pop(), reply
            else:
                try:
                    child, states = frame.send(reply)
                except StopIteration as done:
                    stack.pop()
                    reply = done.value
                    continue
            reply = self._enter(child, states, stack)
        edges = self.edges
        edges.sort(key=_BY_INDEX)
        return edges

    def _enter(self, node: Optional[Node], states: States, stack: list) -> Optional[States]:
        """Walk a token at once; push a frame for any other node. Returns the states to hand on (None for a new
        role generator, which is primed with None)."""
        if node is None:
            raise DataflowError("a node the reference walks is missing from the tree")
        node_type = node.type
        if (node.child_count == 0 or node_type in _TOKEN_TYPES) and node_type != "comment":  # :func:`_is_token`
            return self._token(node, node_type, states)
        role = self.roles.get(node_type)
        if role is not None:
            stack.append(self.handlers[role](self, node, states))
            return None
        children = node.children  # tree-sitter caches this list on the node: never change it in place
        do_first = self.table.do_first
        if do_first:
            children = [c for c in children if c.type in do_first] + [c for c in children if c.type not in do_first]
        stack.append(children[::-1])
        return states

    def _token(self, node: Node, node_type: str, states: States) -> States:
        idx, code = _lookup(self.index_to_code, node, self.by_bytes)
        if node_type == code:
            return states
        known = states.get(code)
        if known is not None:
            self.edges.append((code, idx, _COMES_FROM, [code], list(known)))
        else:
            if node_type == "identifier":
                states[code] = [idx]
            self.edges.append((code, idx, _COMES_FROM, [], []))
        return states

    # -------------------------------------------------------------------------------------------------- roles
    def _definition(self, node: Node, states: States) -> Generator:
        name, value = self.table.definition_parts(node)
        names = _variable_tokens(name, self.index_to_code)
        edges = self.edges
        if value is None:
            for idx, code in names:
                edges.append((code, idx, _COMES_FROM, [], []))
                states[code] = [idx]
            return states
        values = _variable_tokens(value, self.index_to_code)
        states = yield value, states
        for idx, code in names:
            for value_idx, value_code in values:
                edges.append((code, idx, _COMES_FROM, [value_code], [value_idx]))
            states[code] = [idx]
        return states

    def _product(self, targets: Optional[Node], sources: Optional[Node], states: States) -> States:
        """Each target token is *computedFrom* each source token (one edge per pair); targets are redefined."""
        names = _variable_tokens(targets, self.index_to_code)
        values = _variable_tokens(sources, self.index_to_code)
        edges = self.edges
        for idx, code in names:
            for value_idx, value_code in values:
                edges.append((code, idx, _COMPUTED_FROM, [value_code], [value_idx]))
            states[code] = [idx]
        return states

    def _assignment(self, node: Node, states: States) -> Generator:
        right = node.child_by_field_name("right")
        states = yield right, states
        return self._product(node.child_by_field_name("left"), right, states)

    def _pairs(self, lefts: list, rights: list, states: States) -> Generator:
        """Walk the right elements, then each left token is *computedFrom* all tokens of its right element."""
        for right in rights:
            states = yield right, states
        edges = self.edges
        for left, right in zip(lefts, rights):
            names = _variable_tokens(left, self.index_to_code)
            values = _variable_tokens(right, self.index_to_code)
            for idx, code in names:
                edges.append((code, idx, _COMPUTED_FROM, [v[1] for v in values], [v[0] for v in values]))
                states[code] = [idx]
        return states

    def _pairwise_assignment(self, node: Node, states: States) -> Generator:
        sides = self.table.assignment_sides(node)
        if sides is None:
            return states
        return (yield from self._pairs(sides[0], sides[1], states))

    def _increment(self, node: Node, states: States) -> Generator:
        yield from ()  # a frame like every role, but it walks no child: its own tokens only
        return self._product(node, node, states)

    def _if(self, node: Node, states: States) -> Generator:
        """Children in order; alternatives start from the states before the node; result: union of the outcomes."""
        table = self.table
        branch_types, sticky = table.if_branch_types, table.if_sticky
        current = dict(states)
        alternatives = []
        in_alternative = False
        has_else = "else" in node.type
        for child in node.children:
            child_type = child.type
            if "else" in child_type:
                has_else = True
            if child_type in branch_types or in_alternative:
                in_alternative = sticky
                alternatives.append((yield child, dict(states)))
            else:
                current = yield child, current
        alternatives.append(current)
        if table.if_merge_input == "always" or not has_else:
            alternatives.append(states)
        union: dict[str, list[int]] = {}
        for alternative in alternatives:
            for name, indices in alternative.items():
                known = union.get(name)
                if known is None:
                    union[name] = list(indices)
                else:
                    known.extend(indices)
        return {name: sorted(set(indices)) for name, indices in union.items()}

    def _for(self, node: Node, states: States) -> Generator:
        """C-style loop: all children, then (second iteration) the marker's field and the children after the marker."""
        start = len(self.edges)
        children = node.children
        for child in children:
            states = yield child, states
        marker, marker_field = self.table.for_marker, self.table.for_marker_field
        second_pass = False
        for child in children:
            if second_pass:
                states = yield child, states
            elif child.type == marker:
                if marker_field is not None:
                    first = child.child_by_field_name(marker_field)
                    if first is not None:
                        states = yield first, states
                second_pass = True
        _merge_loop_edges(self.edges, start)
        return states

    def _iter_for(self, node: Node, states: States) -> Generator:
        """``for x in y`` (Python, Ruby): twice (pairwise assignment of the loop variables, body)."""
        start = len(self.edges)
        parts, body_required = self.table.iter_for_parts, self.table.iter_for_body_required
        for _ in range(2):
            lefts, rights, body = parts(node)
            states = yield from self._pairs(lefts, rights, states)
            if body is not None or body_required:
                states = yield body, states
        _merge_loop_edges(self.edges, start)
        return states

    def _enhanced_for(self, node: Node, states: States) -> Generator:
        """For-each (Java, C#, PHP): twice (iterable, loop variable *computedFrom* the iterable's tokens, body)."""
        start = len(self.edges)
        parts = self.table.enhanced_for_parts
        for _ in range(2):
            name, value, body = parts(node)
            states = yield value, states
            states = self._product(name, value, states)
            states = yield body, states
        _merge_loop_edges(self.edges, start)
        return states

    def _while(self, node: Node, states: States) -> Generator:
        """All children, twice."""
        start = len(self.edges)
        children = node.children
        for _ in range(2):
            for child in children:
                states = yield child, states
        _merge_loop_edges(self.edges, start)
        return states


def dataflow_edges(root_node: Node, index_to_code: IndexToCode, lang: str) -> list[DataflowEdge]:
    """Data-flow edges of a program, equal to codebleu 0.7's ``DFG_<lang>(root_node, index_to_code, {})[0]``.

    Args:
        root_node: root ``tree_sitter.Node`` of the program, parsed with ``lang``'s grammar (tree-sitter 0.22).
        index_to_code: codebleu's token map ``(start_point, end_point) -> (token index, token text)`` over the leaf
            tokens of the tree (string / character literals count as one token, comments are left out) — the map
            ``codebleu.dataflow_match.get_data_flow`` builds — or the same keyed by byte offsets
            (:class:`~gpumetrics.text.codebleu.parsing.TokenTable`, faster to read).
        lang: one of ``python, java, javascript, c_sharp, php, c, cpp, go, ruby, rust``. ``c`` and ``cpp`` follow
            codebleu 0.7, which reads C / C++ trees with its C# rules.

    Returns:
        ``list[(name, idx, relation, parent_names, parent_indices)]`` — ``E`` edges sorted (stably) by ``idx``:
        ``name: str`` a variable or literal token, ``idx: int`` its token index, ``relation`` ``"comesFrom"`` or
        ``"computedFrom"``, ``parent_names: list[str]`` and ``parent_indices: list[int]`` the tokens it flows from.

    Raises:
        ValueError: ``lang`` is not one of the ten languages.
        DataflowError: (a ``ValueError``) the tree lacks a node the reference dereferences, or the walk reaches a
            leaf that ``index_to_code`` lacks (a part of a string literal, as in ``x.s = 'H'``; or a table built
            from another tree) — codebleu 0.7 raises there too, and its data-flow score then counts no edges for
            the program.

    Example:
        >>> from types import SimpleNamespace as N
        >>> def leaf(kind, col, text):
        ...     return N(type=kind, children=[], child_count=0, start_point=(0, col), end_point=(0, col + len(text)))
        >>> x, eq, one = leaf("identifier", 0, "x"), leaf("=", 2, "="), leaf("integer", 4, "1")
        >>> assign = N(type="assignment", children=[x, eq, one], child_count=3,
        ...            child_by_field_name={"left": x, "right": one}.get)
        >>> root = N(type="module", children=[N(type="expression_statement", children=[assign], child_count=1)],
        ...          child_count=1)
        >>> index_to_code = {((0, 0), (0, 1)): (0, "x"), ((0, 2), (0, 3)): (1, "="), ((0, 4), (0, 5)): (2, "1")}
        >>> dataflow_edges(root, index_to_code, "python")
        [('x', 0, 'computedFrom', ['1'], [2]), ('1', 2, 'comesFrom', [], [])]
    """
    table = DATAFLOW_TABLES.get(lang) if isinstance(lang, str) else None
    if table is None:
        raise ValueError(f"`lang` must be one of {', '.join(DATAFLOW_LANGUAGES)}; got {lang!r}")
    if root_node is None or not hasattr(root_node, "children"):
        raise ValueError(f"`root_node` must be a tree-sitter Node; got {type(root_node).__name__}")
    return _Walk(table, index_to_code).run(root_node)

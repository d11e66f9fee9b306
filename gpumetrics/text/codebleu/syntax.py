"""Syntactic (AST) match: the subtrees of a program as ids, and the match counts of candidate / reference pairs.

A *subtree* is the root or any node that has children (``node.children``, anonymous ones included; leaves are not
subtrees), written as tree-sitter's S-expression (``str(node)`` in py-tree-sitter 0.22, ``node.sexp()`` in 0.2.x–0.21,
chosen by :func:`gpumetrics.text.codebleu.parsing.sexp`: node types, and field names where the binding writes them, of
the named nodes, no leaf text — so renamed identifiers still match). Equal S-expressions get equal ids from one
per-process intern table, so a program's subtrees are an ``int64`` array that is cached per ``(lang, text)``.

Match counts of P (candidate, reference) pairs at once:

* ``membership`` (codebleu 0.7, AIJ-2021): the number of reference subtrees that occur *anywhere* among the
  candidate's (``sub_tree in cand_sexps``: a candidate subtree can be matched by several reference subtrees, so a
  candidate with one ``(identifier)`` argument list matches all of the reference's);
* ``clipped`` (the paper, eq. 4): ``Σ_s min(count_cand(s), count_ref(s))`` — each candidate subtree matches once.

The total of a pair is the number of reference subtrees.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core.transfer import upload_all
from gpumetrics.kernels.multiset import multiset_intersection_size
from gpumetrics.text.codebleu.parsing import binding

_SUBTREE_IDS: dict[str, int] = {}


def subtree_ids(root: Any, sexp: Optional[Callable[[Any], str]] = None) -> np.ndarray:
    """``int64[K]`` ids of the K subtrees of the tree under ``root`` (root first, then depth first).

    ``sexp`` writes a node's S-expression; default: the installed py-tree-sitter's (:func:`.parsing.sexp`).

    Example:
        >>> from gpumetrics.text.codebleu.parsing import parse
        >>> a, b = subtree_ids(parse("x = f(y)", "python")), subtree_ids(parse("z = g(w)", "python"))
        >>> len(a), a.tolist() == b.tolist()
        (5, True)
    """
    if sexp is None:
        sexp = binding().sexp
    ids = []
    stack = [root]
    intern = _SUBTREE_IDS.setdefault
    while stack:
        node = stack.pop()
        ids.append(intern(sexp(node), len(_SUBTREE_IDS)))
        stack.extend([child for child in node.children if child.child_count])
    return np.asarray(ids, dtype=np.int64)


def syntax_matches(
    candidates: Sequence[np.ndarray], references: Sequence[np.ndarray], clipped: bool, device: torch.device
) -> tuple[Tensor, Tensor]:
    """Match counts and reference totals of P (candidate, reference) subtree-id arrays.

    Returns:
        ``(matches LongTensor[P], totals LongTensor[P])``.

    Example:
        >>> cand, ref = np.array([1, 2]), np.array([1, 1, 3])
        >>> syntax_matches([cand], [ref], False, torch.device("cpu")), syntax_matches([cand], [ref], True, "cpu")
        ((tensor([2]), tensor([3])), (tensor([1]), tensor([3])))
    """
    device = torch.device(device)
    pairs = len(candidates)
    if pairs == 0:
        return torch.zeros(0, dtype=torch.long, device=device), torch.zeros(0, dtype=torch.long, device=device)
    cand_host, ref_host = np.concatenate(candidates).astype(np.int64), np.concatenate(references).astype(np.int64)
    # the pair of every key on the host (sizes known here), everything to the device in one copy
    cand_pair_host = np.repeat(np.arange(pairs, dtype=np.int64), [len(c) for c in candidates])
    ref_pair_host = np.repeat(np.arange(pairs, dtype=np.int64), [len(r) for r in references])
    totals_host = np.fromiter(map(len, references), dtype=np.int64, count=pairs)
    cand_ids, ref_ids, cand_pair, ref_pair, totals = upload_all(
        [cand_host, ref_host, cand_pair_host, ref_pair_host, totals_host], device)  # one host-to-device copy
    span = int(max(cand_host.max(initial=0), ref_host.max(initial=0))) + 1
    if clipped:
        return multiset_intersection_size(ref_ids, ref_pair, cand_ids, cand_pair, pairs, id_bound=span), totals
    # membership by binary search in the sorted candidate keys (torch.isin runs unique, a host sync on CUDA)
    ref_keys = ref_pair * span + ref_ids
    if cand_host.size:
        cand_keys = torch.sort(cand_pair * span + cand_ids).values
        found = cand_keys[torch.searchsorted(cand_keys, ref_keys).clamp_max(cand_host.size - 1)] == ref_keys
    else:
        found = torch.zeros_like(ref_keys, dtype=torch.bool)
    matches = torch.zeros(pairs, dtype=torch.long, device=device).index_add_(0, ref_pair, found.long())
    return matches, totals

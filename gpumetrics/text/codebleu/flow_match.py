"""Semantic (data-flow) match: the data-flow graph codebleu compares, as ids, and the clipped match of pairs.

From the edges of :func:`gpumetrics.text.codebleu.dataflow.dataflow_edges` (``(name, token, relation, [parent
names], [parent tokens])``) the graph is built as codebleu 0.7's ``get_data_flow`` builds it. A program whose walk
fails — :class:`~gpumetrics.text.codebleu.dataflow.DataflowError` where the reference's walker raises too (a node it
dereferences is missing; a leaf inside a string literal, as in ``x.s = 'H'``), or any other error — has no edges, as
``get_data_flow`` (``except Exception: DFG = []``) has none: its sample still counts, its data-flow part only
contributes the reference's edges to the total, and the corpus is never aborted. The steps:

1. edges sorted by token (stable);
2. only the variables that take part in a flow are kept: a token is kept if it has a parent or is a parent;
3. edges of the same token are merged into one: the last edge's name and relation, parents ``list(set(a + b))`` —
   **Python's set order**, which for strings depends on the process's hash seed (``PYTHONHASHSEED``): codebleu's
   data-flow score can change from one process to the next when a token has merged parents with several names;
   within a process we reproduce it exactly, by the same construction;
4. names normalised program-wide by first appearance (parents before the variable itself): ``var_0``, ``var_1`` …

An edge is then ``(variable, relation, parents)`` with normalised names, interned to an id. The match of a pair is
the size of the multiset intersection of the candidate's and the reference's edges (codebleu removes each matched
candidate edge from its list, which is the same count); the total is the reference's number of edges.

C and C++ use the C# walker on their own trees, as codebleu does (its ``dfg_function`` maps them so).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core.transfer import upload_all
from gpumetrics.kernels.multiset import multiset_intersection_size
from gpumetrics.text.codebleu.dataflow import DataflowError, dataflow_edges

_EDGE_IDS: dict[tuple, int] = {}


def dataflow_graph(root: Any, index_to_code: dict, lang: str) -> list[tuple[str, int, str, list, list]]:
    """codebleu's filtered and merged data-flow graph of a parsed program (steps 1–3 of the module doc)."""
    try:
        edges = dataflow_edges(root, index_to_code, lang)  # c / cpp: the C# rules, as codebleu 0.7 (dataflow tables)
    except DataflowError:  # programs on which codebleu's walker fails: it counts no data flow
        edges = []
    except Exception:  # noqa: BLE001 - codebleu's get_data_flow: any failure of the walk is "no data flow"
        edges = []
    edges = sorted(edges, key=lambda edge: edge[1])
    linked = set()
    for edge in edges:
        if edge[4]:
            linked.add(edge[1])
        linked.update(edge[4])
    merged: dict[int, tuple] = {}
    for edge in edges:
        if edge[1] not in linked:
            continue
        before = merged.get(edge[1])
        if before is None:
            merged[edge[1]] = edge
        else:
            merged[edge[1]] = (edge[0], edge[1], edge[2], list(set(before[3] + edge[3])),
                               list(set(before[4] + edge[4])))
    return list(merged.values())


def normalized_edges(graph: Sequence[tuple]) -> list[tuple[str, str, tuple[str, ...]]]:
    """Step 4: ``(variable, relation, parents)`` with names renamed ``var_<k>`` by first appearance."""
    names: dict[str, str] = {}

    def rename(name: str) -> str:
        if name not in names:
            names[name] = f"var_{len(names)}"
        return names[name]

    result = []
    for name, _, relation, parents, _ in graph:
        parents = tuple(rename(parent) for parent in parents)
        result.append((rename(name), relation, parents))
    return result


def edge_ids(root: Any, index_to_code: dict, lang: str) -> np.ndarray:
    """``int64[E]`` ids of the normalised data-flow edges of a parsed program."""
    intern = _EDGE_IDS.setdefault
    return np.asarray([intern(edge, len(_EDGE_IDS)) for edge in normalized_edges(dataflow_graph(root, index_to_code,
                                                                                                lang))],
                      dtype=np.int64)


def dataflow_matches(
    candidates: Sequence[np.ndarray], references: Sequence[np.ndarray], device: torch.device
) -> tuple[Tensor, Tensor]:
    """Clipped edge matches and reference edge totals of P (candidate, reference) pairs.

    Returns:
        ``(matches LongTensor[P], totals LongTensor[P])``.

    Example:
        >>> dataflow_matches([np.array([0, 0, 1])], [np.array([0, 2])], torch.device("cpu"))
        (tensor([1]), tensor([2]))
    """
    pairs = len(candidates)
    if pairs == 0:
        return torch.zeros(0, dtype=torch.long, device=device), torch.zeros(0, dtype=torch.long, device=device)
    cand_host, ref_host = np.concatenate(candidates).astype(np.int64), np.concatenate(references).astype(np.int64)
    bound = int(max(cand_host.max(initial=0), ref_host.max(initial=0))) + 1
    # the pair of every edge on the host (sizes known here), everything to the device in one copy
    cand_pair_host = np.repeat(np.arange(pairs, dtype=np.int64), [len(c) for c in candidates])
    ref_pair_host = np.repeat(np.arange(pairs, dtype=np.int64), [len(r) for r in references])
    totals_host = np.fromiter(map(len, references), dtype=np.int64, count=pairs)
    cand_ids, ref_ids, cand_pair, ref_pair, totals = upload_all(
        [cand_host, ref_host, cand_pair_host, ref_pair_host, totals_host], device)  # one host-to-device copy
    matches = multiset_intersection_size(ref_ids, ref_pair, cand_ids, cand_pair, pairs, id_bound=bound)
    return matches, totals

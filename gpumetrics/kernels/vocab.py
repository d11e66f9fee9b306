"""The one vocabulary builder: dense ids of hashable items by first appearance (tokens, words, n-gram tuples).

Tokenizers, the edit-distance word path, METEOR's word tables and OCR's transcriptions all take their ids from
:func:`dense_ids`, so equal items get equal ids the same way everywhere.
"""

from __future__ import annotations

from typing import Hashable, Sequence

import numpy as np


def dense_ids(items: Sequence[Hashable]) -> tuple[np.ndarray, list]:
    """Dense ids of hashable items (tokens, token tuples, strings) by first appearance: the one vocabulary builder.

    Args:
        items: ``T`` hashable items.

    Returns:
        ``(ids, vocabulary)``: ``int64[T]`` ids in ``[0, V)`` (equal items, equal ids) and the ``V`` distinct items
        in id order.

    Example:
        >>> ids, vocabulary = dense_ids(["b", "a", "b"])
        >>> ids.tolist(), vocabulary
        ([0, 1, 0], ['b', 'a'])
    """
    vocabulary = {item: index for index, item in enumerate(dict.fromkeys(items))}
    ids = np.fromiter(map(vocabulary.__getitem__, items), dtype=np.int64, count=len(items))
    return ids, list(vocabulary)

"""The host kernels' encoding of token ids as strings (:func:`gpumetrics.kernels.host.id_strings`): the rapidfuzz
paths of edit distance and ROUGE-L on CPU token tensors are only as exact as this map."""

from __future__ import annotations

import random

import numpy as np
import pytest

from gpumetrics.kernels import host


def _check_rows(ids: np.ndarray, lengths: np.ndarray, rows: list[str]) -> None:
    """Row ``i`` has ``lengths[i]`` symbols, none ``"\\0"`` or a surrogate, equal ids ↔ equal symbols."""
    assert len(rows) == len(lengths) and list(map(len, rows)) == lengths.tolist()
    symbols = [ord(c) for row in rows for c in row]
    assert 0 not in symbols and not any(0xD800 <= s < 0xE000 for s in symbols)
    pairs = set(zip(ids.tolist(), symbols))
    assert len(pairs) == len({i for i, _ in pairs}) == len({s for _, s in pairs})


@pytest.mark.parametrize("id_range", [(0, 3), (0, 0xFE), (0, 0xFF), (0, 300), (0xD7F0, 0xD810), (0, 70_000),
                                      (1_111_000, 1_112_064), (2**22 - 5, 2**22 + 5), (2**40, 2**40 + 9)])
def test_id_strings_give_each_row_its_symbols_whatever_the_ids(id_range):
    """Rows of every length (empty ones first, last, in a run), one row, no rows; ids in every width and across
    the presence table's end; the narrowest storage the distinct ids allow."""
    rng = random.Random(id_range[0])
    for distinct in (1, 5, 300, 70_000):
        vocab = [rng.randint(*id_range) for _ in range(min(distinct, id_range[1] - id_range[0] + 1))]
        lengths = np.array([rng.choice([0, 0, 1, 2, 7, 64, 65]) for _ in range(rng.choice([1, 2, 50]))] + [0],
                           dtype=np.int64)
        ids = np.array([rng.choice(vocab) for _ in range(int(lengths.sum()))], dtype=np.int64)
        rows = host.id_strings(ids, lengths)
        _check_rows(ids, lengths, rows)
        widest = max((ord(c) for row in rows for c in row), default=0)
        count = len(set(ids.tolist()))
        if ids.size and ids.max() >= 0xFF:  # ranked: the symbols are 1 … count, the surrogates skipped
            assert widest == count + (0x800 if count >= 0xD800 else 0)
        else:
            assert widest <= 0xFF
    assert host.id_strings(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)) == []
    assert host.id_strings(np.zeros(0, dtype=np.int64), np.zeros(3, dtype=np.int64)) == ["", "", ""]
    assert host.id_strings(np.array([5, 0, 0xFE]), np.array([3])) == ["\x06\x01\xff"]


def test_id_strings_hold_exactly_max_code_id_distinct_ids():
    """Every code point but the surrogates and ``"\\0"`` stands for an id; one id more does not fit (``None``),
    nor does a negative id."""
    count = host.MAX_CODE_ID
    ids = np.arange(count, dtype=np.int64) * 3 + 7  # ranked through the sort (ids past the presence table)
    ids[-1] = 2**40
    rows = host.id_strings(ids, np.array([count - 1, 1]))
    assert rows is not None and ord(rows[1]) == 0x10FFFF and len(rows[0]) == count - 1
    _check_rows(ids, np.array([count - 1, 1]), rows)
    assert host.id_strings(np.append(ids, 2**41), np.array([count, 1])) is None
    assert host.id_strings(np.array([1, -1]), np.array([2])) is None

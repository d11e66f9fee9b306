"""core.transfer: host arrays reach the device in one non-blocking, pinned copy (CUDA checks in tests/cuda)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from gpumetrics.core.transfer import upload, upload_all


@pytest.mark.parametrize("data", [np.arange(6).reshape(2, 3), torch.arange(6).reshape(2, 3), [[0, 1, 2], [3, 4, 5]]])
def test_upload_keeps_values_shape_and_dtype(data) -> None:
    out = upload(data, "cpu")
    assert out.tolist() == [[0, 1, 2], [3, 4, 5]] and out.dtype == torch.int64 and out.device.type == "cpu"
    assert upload(data, None, torch.float32).dtype == torch.float32


def test_upload_of_a_non_contiguous_array() -> None:
    array = np.arange(12).reshape(3, 4)[:, ::2]
    assert upload(array, "cpu").tolist() == array.tolist()


def test_upload_all_splits_one_buffer_back_into_the_shapes() -> None:
    parts = upload_all([np.arange(3), np.zeros((2, 2), dtype=np.int64), np.empty(0, dtype=np.int64)], "cpu")
    assert [p.shape for p in parts] == [(3,), (2, 2), (0,)]
    assert parts[0].tolist() == [0, 1, 2] and parts[1].sum() == 0
    assert upload_all([], "cpu") == []


def test_upload_all_refuses_mixed_dtypes() -> None:
    with pytest.raises(ValueError, match="`arrays` must share one dtype"):
        upload_all([np.arange(3), np.ones(2)], "cpu")

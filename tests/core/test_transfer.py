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


def test_upload_concatenated_casts_narrow_blocks_into_the_widest_without_sign_errors():
    from gpumetrics.core.transfer import upload_concatenated

    narrow = np.frombuffer(b"\x00\xff", dtype=np.uint8)  # read-only, like a view of encoded bytes
    bmp = np.array([0xFFFF, 0x8000], dtype=np.uint16)
    astral = np.array([0x10FFFF], dtype=np.uint32)
    wide = upload_concatenated([narrow, bmp, astral], "cpu")
    assert wide.dtype == torch.int32 and wide.tolist() == [0, 255, 0xFFFF, 0x8000, 0x10FFFF]
    bits = upload_concatenated([narrow, bmp], "cpu")  # uint16 arrives as the int16 bits
    assert bits.dtype == torch.int16 and (bits.int() & 0xFFFF).tolist() == [0, 255, 0xFFFF, 0x8000]
    ids = upload_concatenated([np.arange(3), np.array([[7, 8]])], "cpu")
    assert ids.dtype == torch.int64 and ids.tolist() == [0, 1, 2, 7, 8]
    assert upload_concatenated([], "cpu").tolist() == []
    assert upload_concatenated([np.ones(2, np.float32)], "cpu", np.float64).dtype == torch.float64


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.bool, torch.int32, torch.float64])
def test_upload_all_stages_every_torch_dtype_through_one_staging_buffer(dtype, monkeypatch) -> None:
    """upload_all assembles its one copy in core.transfer.staging_buffer (pinned for CUDA), bfloat16 included, which
    numpy lacks: the one way a host staging buffer is made."""
    from gpumetrics.core import transfer

    asked = []
    real = transfer.staging_buffer
    monkeypatch.setattr(transfer, "staging_buffer", lambda *args: asked.append(args) or real(*args))
    parts = [torch.arange(3).to(dtype), torch.ones(2, 2).to(dtype)]
    out = transfer.upload_all(parts, "cpu")
    assert asked == [(7, dtype, torch.device("cpu"))]
    assert all(torch.equal(a, b) and a.dtype == dtype for a, b in zip(out, parts))


def test_staging_buffer_takes_numpy_and_torch_dtypes() -> None:
    from gpumetrics.core.transfer import staging_buffer

    assert staging_buffer(4, np.uint8, "cpu").numpy().dtype == np.uint8  # numpy's memory, its view writes in
    assert staging_buffer(4, torch.int16, None).numpy().dtype == np.int16
    assert staging_buffer(2, torch.bfloat16, "cpu").dtype == torch.bfloat16

"""Warnings name the caller's line: through torchmetrics' wrappers, nn.Module calls and our context managers alike."""

from __future__ import annotations

import os
import warnings

import pytest
import torch
from torch import nn

import gpumetrics
from gpumetrics.core.warn import warn_caller
from gpumetrics.image.fid import FrechetInceptionDistance
from gpumetrics.image.precision import SpeedMode, precision_scope
from gpumetrics.kernels.transport import sinkhorn_batch


def caught_at(action) -> list[tuple[str, int, str]]:
    """``(filename, line, message)`` of every warning ``action()`` raises."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        action()
    return [(w.filename, w.lineno, str(w.message)) for w in caught]


def line_of(text: str) -> int:
    """The line of this file that holds ``text`` (once)."""
    with open(__file__, encoding="utf-8") as handle:
        (line,) = [number for number, content in enumerate(handle, 1) if text in content and "line_of" not in content]
    return line


def test_a_warning_inside_the_library_is_attributed_to_the_first_frame_outside_it():
    library = os.path.dirname(gpumetrics.__file__)
    inside = compile("warn_caller('from deep inside')", os.path.join(library, "core", "not_a_file.py"), "exec")
    warnings_seen = caught_at(lambda: exec(inside, {"warn_caller": warn_caller}))  # the exec'd frame is "ours"
    assert warnings_seen == [(__file__, line_of("exec(inside"), "from deep inside")]


def test_fid_compute_through_torchmetrics_wrapper_warns_at_the_compute_call():
    extractor = nn.Sequential(nn.Flatten(), nn.Linear(12, 8))
    extractor.dims = 8
    metric = FrechetInceptionDistance(feature=extractor)
    images = torch.rand(4, 3, 2, 2)
    metric.update(images, real=True)
    metric.update(images + 0.1, real=False)
    seen = caught_at(lambda: metric.compute())  # rank-deficient: three warnings
    assert len(seen) == 3 and {(f, n) for f, n, _ in seen} == {(__file__, line_of("lambda: metric.compute()"))}


def test_an_unconverged_sinkhorn_warns_at_its_caller():
    a = torch.tensor([[4 / 11, 7 / 11]], dtype=torch.float64)
    b = torch.tensor([[0.4, 0.6]], dtype=torch.float64)
    cost = torch.tensor([[[0.0, 1.7619], [1.7619, 0.0]]], dtype=torch.float64)
    seen = caught_at(lambda: sinkhorn_batch(a, b, cost, reg=0.01, max_iter=1000))
    assert [(f, n) for f, n, _ in seen] == [(__file__, line_of("sinkhorn_batch(a, b, cost, reg=0.01, max_iter=1000)"))]


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
def test_the_emulated_half_precision_warning_points_at_the_with_statement(precision, monkeypatch):
    from gpumetrics.image import precision as precision_module

    monkeypatch.setattr(torch.ops.mkldnn, precision_module._HARDWARE_PROBES[precision], lambda: False, raising=False)
    precision_module._warn_if_emulated.cache_clear()

    def enter_scope():
        with precision_scope(SpeedMode(precision), "cpu"):  # contextlib's __enter__ lies between
            pass

    try:
        seen = caught_at(enter_scope)
    finally:
        precision_module._warn_if_emulated.cache_clear()
    assert [(f, n) for f, n, _ in seen] == [(__file__, line_of("with precision_scope(SpeedMode(precision), \"cpu\"):"))]


def test_the_library_warns_only_through_warn_caller():
    """A fixed ``stacklevel`` points wherever the call depth of the day leaves it; ``warn_caller`` is the one way."""
    library = os.path.dirname(gpumetrics.__file__)
    offenders = []
    for folder, _, names in os.walk(library):
        for name in names:
            path = os.path.join(folder, name)
            if name.endswith(".py") and path != os.path.join(library, "core", "warn.py"):
                with open(path, encoding="utf-8") as handle:
                    offenders += [f"{path}:{n}" for n, line in enumerate(handle, 1) if "warnings.warn(" in line]
    assert offenders == []

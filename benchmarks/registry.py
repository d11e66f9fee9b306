"""Benchmark cases: each times gpumetrics and its reference tool(s) in this process, on the same data.

A case module in ``benchmarks/cases/`` registers a setup function::

    @register("token_f1", sizes=(10_000, 100_000), quick_sizes=(2_000,))
    def token_f1_case(size: int, device: str) -> Contenders:
        preds, target = make_data(size)
        return Contenders(
            ours={"gpumetrics": lambda: token_f1(preds, target)},
            anchors={"squad-v2 script formula": lambda: reference(preds, target)},
            check=lambda ours, anchor: abs(float(ours) - anchor) < 1e-9,
        )

Every (our variant, anchor) pair becomes one row of ``BENCHMARKS.md`` with ``ratio = anchor time / our time``
(above 1: gpumetrics is faster). ``check`` (optional) receives the two results of the first pair and must return
True, so a benchmark never compares two different numbers.

The runner imports only the module that registered a case into a fresh ``python -m benchmarks --child`` process, so a
case module must register its cases at import time. ``group="matrix"`` cases (``benchmarks/cases/matrix.py``) run
only when asked for (``--matrix`` or ``--only``); ``params`` describe the data of such a case and ``goal`` is the
ratio it must reach (rendered as pass / fail).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, Optional, Sequence


@dataclasses.dataclass
class Contenders:
    """What a case times. ``ours`` and ``anchors`` map a display name to a zero-argument callable."""

    ours: dict[str, Callable[[], Any]]
    anchors: dict[str, Callable[[], Any]]
    check: Optional[Callable[[Any, Any], bool]] = None
    note: str = ""
    #: our variant → the throughput it must reach, in the case's units per second (``size / time``; the GPU suite's
    #: absolute goals, rendered as pass / fail beside the ratio goal)
    throughput_goals: dict[str, float] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class Case:
    name: str
    setup: Callable[[int, str], Contenders]
    sizes: Sequence[int]
    quick_sizes: Sequence[int]
    unit: str = "samples"
    repeats: int = 5
    group: str = "main"
    params: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    goal: Optional[float] = None
    #: untimed rounds before the timed ones (0: the first timed round's results are the checked ones)
    warmup: int = 1
    #: seconds an item of this case may take in a shared child before it is killed (``--one-process``; None: the
    #: run's ``--case-limit``)
    limit_s: Optional[float] = None

    @property
    def module(self) -> str:
        """The module whose import registers this case (what a ``--child`` process imports)."""
        return self.setup.__module__


CASES: dict[str, Case] = {}


def register(
    name: str,
    sizes: Sequence[int],
    quick_sizes: Sequence[int],
    unit: str = "samples",
    repeats: int = 5,
    group: str = "main",
    params: Optional[Mapping[str, Any]] = None,
    goal: Optional[float] = None,
    warmup: int = 1,
    limit_s: Optional[float] = None,
) -> Callable:
    """Decorator adding a setup function ``(size, device) -> Contenders`` as the benchmark case ``name``."""

    def decorate(setup: Callable[[int, str], Contenders]) -> Callable[[int, str], Contenders]:
        if name in CASES:
            raise ValueError(f"benchmark case {name!r} is registered twice")
        CASES[name] = Case(name, setup, tuple(sizes), tuple(quick_sizes), unit, repeats, group,
                           dict(params or {}), goal, warmup, limit_s)
        return setup

    return decorate


#: main cases the GPU suite runs beside the ``group="gpu"`` ones (``--suite gpu``): the image forwards and pipelines
GPU_SUITE_MAIN = ("fid_update", "fid_files", "clip_score_update", "clip_speed_modes", "frechet_distance", "kid_compute")
#: the GPU suite's priority order (a budget cuts its tail): the rows whose goal a change since the last GPU run bets
#: on, the never-measured ones, then the remeasurements; a GPU case missing here runs after these
GPU_SUITE_ORDER = (
    "edit_gpu_kernel_long", "edit_gpu_kernel_medium", "edit_gpu_long", "edit_gpu_kernel_short",
    "edit_gpu_short_strings", "fid_gpu_forward", "clip_gpu_update_parts", "clip_gpu_resize", "wer_gpu",
    "fid_gpu_files", "edit_gpu_uneven", "fid_gpu_forward_compiled", "clip_gpu_update_bf16", "edit_gpu_short_tokens",
    "fid_gpu_forward_large_batch",
    "clip_gpu_update_tf32", "clip_gpu_update_fp16", "clip_gpu_update_fp32", *GPU_SUITE_MAIN,
)
#: ``--suite gpu``'s default budget (issue 25: the suite, start-up included, in 6 minutes of one GPU)
GPU_SUITE_BUDGET_S = 330.0


def gpu_suite_names() -> list[str]:
    """The cases of ``python -m benchmarks --suite gpu`` (the registered ones), in priority order."""
    gpu = {name for name, case in CASES.items() if case.group == "gpu"} | set(GPU_SUITE_MAIN) & set(CASES)
    return [name for name in GPU_SUITE_ORDER if name in gpu] + sorted(gpu - set(GPU_SUITE_ORDER))

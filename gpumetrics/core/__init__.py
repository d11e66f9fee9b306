"""Core of gpumetrics: the Metric base, its DDP reducer, the per-sample score base, signatures, input checks and
warnings attributed to the caller.

Imports nothing of ours, and nothing of torchmetrics at all. Names resolve lazily (PEP 562): ``import gpumetrics.core``
imports no torch distributed package until ``Metric`` (or another name that needs it) is used."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpumetrics.core.lazy import lazy_exports

_EXPORTS = {
    **dict.fromkeys(
        ["as_reference_lists", "as_text_list", "available_devices", "check_bool", "check_choice", "check_device",
         "check_int", "check_non_negative_int", "check_positive_int", "check_real", "check_same_length",
         "parse_device"],
        "gpumetrics.core.checks"),
    "gc_paused": "gpumetrics.core.gcpause",
    "paused_gc": "gpumetrics.core.gcpause",
    "replicated": "gpumetrics.core.distributed",
    "Metric": "gpumetrics.core.metric",
    **dict.fromkeys(["REDUCTIONS", "PerSampleScore", "keep_sample_dim", "mean_score", "reduce_scores"],
                    "gpumetrics.core.per_sample"),
    "intra_op_threads": "gpumetrics.core.threads",
    "single_threaded": "gpumetrics.core.threads",
    "format_signature": "gpumetrics.core.signature",
    "upload": "gpumetrics.core.transfer",
    "upload_all": "gpumetrics.core.transfer",
    "library_version": "gpumetrics.core.signature",
    "warn_caller": "gpumetrics.core.warn",
}

__all__ = [
    "Metric",
    "PerSampleScore",
    "REDUCTIONS",
    "as_reference_lists",
    "as_text_list",
    "available_devices",
    "check_bool",
    "check_choice",
    "check_device",
    "check_int",
    "check_non_negative_int",
    "check_positive_int",
    "check_real",
    "check_same_length",
    "format_signature",
    "gc_paused",
    "intra_op_threads",
    "library_version",
    "mean_score",
    "parse_device",
    "paused_gc",
    "keep_sample_dim",
    "reduce_scores",
    "replicated",
    "single_threaded",
    "upload",
    "upload_all",
    "warn_caller",
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static type checkers and IDEs see the names; nothing is imported at run time
    from gpumetrics.core.checks import (
        as_reference_lists, as_text_list, available_devices, check_bool, check_choice, check_device, check_int,
        check_non_negative_int, check_positive_int, check_real, check_same_length, parse_device,
    )
    from gpumetrics.core.distributed import replicated
    from gpumetrics.core.gcpause import gc_paused, paused_gc
    from gpumetrics.core.metric import Metric
    from gpumetrics.core.per_sample import REDUCTIONS, PerSampleScore, keep_sample_dim, mean_score, reduce_scores
    from gpumetrics.core.signature import format_signature, library_version
    from gpumetrics.core.threads import intra_op_threads, single_threaded
    from gpumetrics.core.transfer import upload, upload_all
    from gpumetrics.core.warn import warn_caller

"""Core of gpumetrics: the Metric base, its DDP reducer, the per-sample score base, signatures and input checks.

Imports nothing of ours."""

from gpumetrics.core.checks import (
    as_reference_lists,
    as_text_list,
    available_devices,
    check_choice,
    check_device,
    check_non_negative_int,
    check_positive_int,
    check_same_length,
    parse_device,
)
from gpumetrics.core.gcpause import gc_paused, paused_gc
from gpumetrics.core.distributed import replicated
from gpumetrics.core.metric import Metric
from gpumetrics.core.per_sample import REDUCTIONS, PerSampleScore, keep_sample_dim, mean_score, reduce_scores
from gpumetrics.core.threads import intra_op_threads, single_threaded
from gpumetrics.core.signature import format_signature, library_version

__all__ = [
    "Metric",
    "PerSampleScore",
    "REDUCTIONS",
    "as_reference_lists",
    "as_text_list",
    "available_devices",
    "check_choice",
    "check_device",
    "check_non_negative_int",
    "check_positive_int",
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
]

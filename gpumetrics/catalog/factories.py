"""Factories of catalog entries that fix an option of a metric class (resolved lazily by the table)."""

from typing import Any


def ned_aij2022(**options: Any):
    """``NormalizedEditSimilarity(preset="aij2022", **options)`` (the AIJ-2022 TRitW task)."""
    from gpumetrics.text.edit import NormalizedEditSimilarity

    return NormalizedEditSimilarity(**{"preset": "aij2022", **options})

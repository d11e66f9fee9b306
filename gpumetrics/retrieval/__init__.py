"""Retrieval metrics: ranking metrics with trec_eval / ranx conventions (``ranking.py``).

Names resolve lazily (PEP 562): the first use of a name imports its module only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpumetrics.core.lazy import lazy_exports

_EXPORTS = {
    "RankingMetrics": "gpumetrics.retrieval.ranking",
    "ranking_metrics": "gpumetrics.retrieval.ranking",
}

__all__ = [
    "RankingMetrics", "ranking_metrics"
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static type checkers and IDEs see the names; nothing is imported at run time
    from gpumetrics.retrieval.ranking import RankingMetrics, ranking_metrics

"""Retrieval metrics: ranking metrics with trec_eval / ranx conventions (``ranking.py``)."""

from gpumetrics.retrieval.ranking import RankingMetrics, ranking_metrics

__all__ = ["RankingMetrics", "ranking_metrics"]

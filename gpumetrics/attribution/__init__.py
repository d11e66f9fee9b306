"""Attribution: Shapley values of games whose value function scores batches of coalitions (``shapley.py``)."""

from gpumetrics.attribution.shapley import (
    ShapleyValues, corpus_bleu_shapley, corpus_cider_shapley, marginal_contributions, shapley_values,
)

__all__ = ["ShapleyValues", "corpus_bleu_shapley", "corpus_cider_shapley", "marginal_contributions", "shapley_values"]

"""Attribution: Shapley values of games whose value function scores batches of coalitions (``shapley.py``).

Names resolve lazily (PEP 562): the first use of a name imports its module only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpumetrics.core.lazy import lazy_exports

_EXPORTS = {
    "ShapleyValues": "gpumetrics.attribution.shapley",
    "corpus_bleu_shapley": "gpumetrics.attribution.shapley",
    "corpus_cider_shapley": "gpumetrics.attribution.shapley",
    "marginal_contributions": "gpumetrics.attribution.shapley",
    "shapley_values": "gpumetrics.attribution.shapley",
}

__all__ = [
    "ShapleyValues", "corpus_bleu_shapley", "corpus_cider_shapley", "marginal_contributions", "shapley_values"
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static type checkers and IDEs see the names; nothing is imported at run time
    from gpumetrics.attribution.shapley import (
        ShapleyValues, corpus_bleu_shapley, corpus_cider_shapley, marginal_contributions, shapley_values,
    )

"""The task catalog: one table of every task metric (:mod:`gpumetrics.catalog.table`), registered into the harness
registry on import. Factories are resolved on first use, so importing this package imports no metric module.
"""

from gpumetrics.catalog.table import ENTRIES
from gpumetrics.harness.registry import METRICS, get_metric, register_metric

for _entry in ENTRIES:
    if _entry.name not in METRICS:
        register_metric(_entry)
del _entry

__all__ = ["ENTRIES", "METRICS", "get_metric"]

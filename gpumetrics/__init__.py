"""gpumetrics: evaluation metrics that accumulate on the device of their inputs, with reference-tool parity.

Modules (``gpumetrics.TokenF1``…) are exported here; pure functions live in ``gpumetrics.functional``.
"""

from gpumetrics.core import Metric
from gpumetrics.core.signature import library_version

# --- text: question answering and strings (METRICS_SPEC §1)
from gpumetrics.text.qa import ExactMatch, StringAccuracy, TokenF1

__version__ = library_version()

__all__ = [
    "Metric",
    "TokenF1",
    "ExactMatch",
    "StringAccuracy",
]

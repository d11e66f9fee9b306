"""gpumetrics: evaluation metrics that accumulate on the device of their inputs, with reference-tool parity."""

from gpumetrics.core import Metric
from gpumetrics.core.signature import library_version

__version__ = library_version()

__all__ = ["Metric"]

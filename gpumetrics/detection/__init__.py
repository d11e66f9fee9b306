"""Detection and OCR metrics (the IoU kernels live in ``gpumetrics.kernels.iou``).

Names resolve lazily (PEP 562): the first use of a name imports its module only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpumetrics.core.lazy import lazy_exports

_EXPORTS = {
    "OCREndToEnd": "gpumetrics.detection.ocr_e2e",
    "ZeroShotDetectionF1": "gpumetrics.detection.zero_shot_f1",
}

__all__ = [
    "OCREndToEnd", "ZeroShotDetectionF1"
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static type checkers and IDEs see the names; nothing is imported at run time
    from gpumetrics.detection.ocr_e2e import OCREndToEnd
    from gpumetrics.detection.zero_shot_f1 import ZeroShotDetectionF1

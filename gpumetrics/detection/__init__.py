"""Detection and OCR metrics (the IoU kernels live in ``gpumetrics.kernels.iou``)."""

from gpumetrics.detection.ocr_e2e import OCREndToEnd
from gpumetrics.detection.zero_shot_f1 import ZeroShotDetectionF1

__all__ = ["OCREndToEnd", "ZeroShotDetectionF1"]

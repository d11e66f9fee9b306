"""Image metrics: FID (with its Inception-v3 extractor), KID, CLIP score."""

from gpumetrics.image.clip_score import CLIPScore
from gpumetrics.image.fid import FrechetInceptionDistance
from gpumetrics.image.inception import FIDInceptionV3
from gpumetrics.image.kid import KernelInceptionDistance

__all__ = ["FrechetInceptionDistance", "FIDInceptionV3", "KernelInceptionDistance", "CLIPScore"]

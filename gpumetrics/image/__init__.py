"""Image metrics: FID (with its Inception-v3 extractor), KID, CLIP score.

Names resolve lazily (PEP 562): the first use of a name imports its module only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpumetrics.core.lazy import lazy_exports

_EXPORTS = {
    "FrechetInceptionDistance": "gpumetrics.image.fid",
    "FIDInceptionV3": "gpumetrics.image.inception",
    "KernelInceptionDistance": "gpumetrics.image.kid",
    "CLIPScore": "gpumetrics.image.clip_score",
}

__all__ = [
    "FrechetInceptionDistance", "FIDInceptionV3", "KernelInceptionDistance", "CLIPScore"
]

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)

if TYPE_CHECKING:  # static type checkers and IDEs see the names; nothing is imported at run time
    from gpumetrics.image.fid import FrechetInceptionDistance
    from gpumetrics.image.inception import FIDInceptionV3
    from gpumetrics.image.kid import KernelInceptionDistance
    from gpumetrics.image.clip_score import CLIPScore

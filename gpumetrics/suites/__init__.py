"""The AIJ-2021 / AIJ-2022 challenge suites: their official file formats (:mod:`~gpumetrics.suites.formats`), their
composite task metrics (:mod:`~gpumetrics.suites.image`: S_ImageGeneration; :mod:`~gpumetrics.suites.captioning`:
S_ImageCaptioning, S_VisualQA) and the suites themselves (:mod:`~gpumetrics.suites.aij`), registered into the
harness registry on import. The suites name entries of :mod:`gpumetrics.catalog`, which is loaded first.
"""

import gpumetrics.catalog  # noqa: F401  (the entries the suites name)
from gpumetrics.harness.registry import SUITES, get_suite
from gpumetrics.suites import formats  # noqa: F401  (registers the official formats)
from gpumetrics.suites import entries  # noqa: F401  (registers s_image_generation, s_image_captioning, s_visual_qa)
from gpumetrics.suites import aij  # noqa: F401  (registers aij2022, aij2021; last: names the entries above)

__all__ = ["SUITES", "get_suite"]

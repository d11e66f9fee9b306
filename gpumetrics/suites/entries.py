"""The task metrics of the AIJ suites' composite scores (S_ImageGeneration, S_ImageCaptioning, S_VisualQA), registered
into the harness by dotted path: listing them (``gpumetrics list``) imports neither their modules
(:mod:`~gpumetrics.suites.image`, :mod:`~gpumetrics.suites.captioning`) nor torch; a run resolves them on use."""

from __future__ import annotations

from gpumetrics.harness.registry import TaskMetric, lazy, register_metric

_IMAGE = "gpumetrics.suites.image"
_CAPTIONING = "gpumetrics.suites.captioning"
#: METEOR mode of each captioning variant (``gpumetrics.suites.captioning.METEOR_MODES``)
_METEOR_MODES = {"caption": "aij2022-caption", "vqa": "aij2022-vqa"}

register_metric(TaskMetric(
    name="s_image_generation",
    factory=f"{_IMAGE}:ImageGenerationScore",
    check_options=f"{_IMAGE}:ImageGenerationScore.check_options",
    path_options={"real": None, "image_root": ".", "inception_weights": None, "cache_dir": None},
    description="AIJ-2022 S_ImageGeneration = ½(CLIP cosine + (200 − min(200, FID))/200) — docs/metrics.md §2",
    empty_prediction=None,
    update_args=lazy(f"{_IMAGE}:_image_generation_update_args"),
    primary="score",
    prepare=lazy(f"{_IMAGE}:ImageGenerationScore.load_real"),  # the real set first, with its own progress bar
))

for _name, _cls, _variant, _what in (("s_image_captioning", "ImageCaptioningScore", "caption", "S_ImageCaptioning"),
                                     ("s_visual_qa", "VisualQAScore", "vqa", "S_VisualQA")):
    register_metric(TaskMetric(
        name=_name,
        factory=f"{_CAPTIONING}:{_cls}",
        check_options=f"{_CAPTIONING}:{_cls}.check_options",
        path_options={"image_root": ".", "synonyms": None},
        description=f"AIJ-2022 {_what} = ½(METEOR {_METEOR_MODES[_variant]} + CLIP cosine of the image and the "
                    "predicted text) — docs/metrics.md §2",
        empty_prediction=None,
        update_args=lazy(f"{_CAPTIONING}:caption_update_args"),
        primary="score",
    ))
del _name, _cls, _variant, _what

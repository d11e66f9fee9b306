"""The suites' composite task metrics as registry entries, resolved lazily: listing them (``gpumetrics list``) imports
neither the image nor the METEOR modules; building one imports :mod:`gpumetrics.suites.image` or
:mod:`gpumetrics.suites.captioning`."""

from __future__ import annotations

from gpumetrics.harness.registry import TaskMetric, lazy, register_metric

_IMAGE = "gpumetrics.suites.image"
_CAPTIONING = "gpumetrics.suites.captioning"

register_metric(TaskMetric(
    name="s_image_generation",
    factory=f"{_IMAGE}:ImageGenerationScore",
    check_options=lazy(f"{_IMAGE}:ImageGenerationScore.check_options"),
    path_options={"real": None, "image_root": ".", "inception_weights": None, "cache_dir": None},
    model_options=("clip_model", "clip_pretrained"),
    description="AIJ-2022 S_ImageGeneration = ½(CLIP cosine + (200 − min(200, FID))/200) — docs/metrics/image.md",
    empty_prediction=None,
    empty_prediction_of="gpumetrics.catalog.adapters:missing_image_empty_prediction",  # "" under missing_image: zero
    update_args=lazy(f"{_IMAGE}:_image_generation_update_args"),
    primary="score",
    prepare=lazy(f"{_IMAGE}:ImageGenerationScore.load_real"),  # the real set first, with its own progress bar
    higher_is_better=True,
))
for _name, _cls, _what, _mode in (("s_image_captioning", "ImageCaptioningScore", "S_ImageCaptioning",
                                   "aij2022-caption"),
                                  ("s_visual_qa", "VisualQAScore", "S_VisualQA", "aij2022-vqa")):
    register_metric(TaskMetric(
        name=_name,
        factory=f"{_CAPTIONING}:{_cls}",
        check_options=lazy(f"{_CAPTIONING}:{_cls}.check_options"),
        path_options={"image_root": ".", "synonyms": None},
        model_options=("clip_model", "clip_pretrained"),
        description=f"AIJ-2022 {_what} = ½(METEOR {_mode} + CLIP cosine of the image and the predicted text) — "
                    "docs/metrics/image.md",
        empty_prediction=None,
        update_args=lazy(f"{_CAPTIONING}:caption_update_args"),
        primary="score",
        higher_is_better=True,
    ))
del _name, _cls, _what, _mode

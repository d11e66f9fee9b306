"""Factories of catalog entries that fix an option of a metric class (resolved lazily by the table)."""

from functools import partial
from typing import Any


def ned_aij2022(**options: Any):
    """``NormalizedEditSimilarity(preset="aij2022", **options)`` (the AIJ-2022 TRitW task)."""
    from gpumetrics.text.edit import NormalizedEditSimilarity

    return NormalizedEditSimilarity(**{"preset": "aij2022", **options})


#: the image metric behind each image-file entry, and how its records pair images (see ``catalog.image_files``)
IMAGE_FILE_METRICS = {
    "fid_files": ("gpumetrics.image.fid:FrechetInceptionDistance", "sets"),
    "kid_files": ("gpumetrics.image.kid:KernelInceptionDistance", "sets"),
    "clip_score_files": ("gpumetrics.image.clip_score:CLIPScore", "captions"),
}


def _image_file_metric(name: str, **options: Any):
    from gpumetrics.catalog.image_files import image_file_score

    metric, pairing = IMAGE_FILE_METRICS[name]
    return image_file_score(metric, pairing, **options)


def _image_file_check(name: str, **options: Any) -> None:
    from gpumetrics.catalog.image_files import image_file_options

    image_file_options(IMAGE_FILE_METRICS[name][0])(**options)


#: FID of the generated images (predictions) against the real ones (references)
fid_files = partial(_image_file_metric, "fid_files")
#: KID of the generated images (predictions) against the real ones (references)
kid_files = partial(_image_file_metric, "kid_files")
#: CLIP score of each image (prediction) with its caption (reference)
clip_score_files = partial(_image_file_metric, "clip_score_files")
check_fid_files = partial(_image_file_check, "fid_files")
check_kid_files = partial(_image_file_check, "kid_files")
check_clip_score_files = partial(_image_file_check, "clip_score_files")


def _check_label_metric(cls: str, **options: Any) -> None:
    """Build the module (its own checks), and refuse the options whose result is not one task score."""
    from gpumetrics.harness.registry import resolve

    if options.get("num_classes") is None:  # the label records' range check needs it (validate_args: false crashed)
        raise ValueError("`num_classes` is required: the number of classes of the label records")
    resolve(f"gpumetrics.classification:{cls}")(**options)
    if "average" in options and options["average"] in (None, "none"):
        raise ValueError(f"`average={options['average']!r}` gives one score per class, not a task score: use macro, "
                         "micro or weighted")
    if options.get("multidim_average") == "samplewise":
        raise ValueError("`multidim_average: samplewise` gives one score per sample, not a task score: use global")


check_f1 = partial(_check_label_metric, "MulticlassF1Score")
check_precision = partial(_check_label_metric, "MulticlassPrecision")
check_recall = partial(_check_label_metric, "MulticlassRecall")

"""The one WARNING line of a task that scored samples without a usable image (``missing_image: zero``, the AIJ-2022
image tasks): which count it reads, what it says was done, and which kinds it lists."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gpumetrics.cli.evaluate import _failed_images_line


def _task(metric: str, details: dict, missing: int = 0, n: int = 9) -> SimpleNamespace:
    return SimpleNamespace(name="t", metric=metric, details=details, missing=missing, n=n)


@pytest.mark.parametrize("metric, details, missing, line", [
    ("fid", {"images_failed": 4, "images_undecodable": 3}, 1,
     "WARNING: task 't': 4 of 9 generated images are missing or cannot be decoded, 3 of them a file that cannot be "
     "decoded, 1 of them a record without prediction: left out of the generated set (missing_image: zero)"),
    ("clip_score", {"clip_failed": 2, "clip_undecodable": 0}, 0,
     "WARNING: task 't': 2 of 9 images are missing or cannot be decoded: CLIP 0 for each (missing_image: zero)"),
    ("s_image_generation", {"clip_failed": 3, "clip_undecodable": 1}, 2,
     "WARNING: task 't': 3 of 9 samples have no image to score (none named, no such file, a file that cannot be "
     "decoded, or a caption that is not the first element, 1 of them a file that cannot be decoded, 2 of them a "
     "record without prediction): CLIP 0 for each, as the organisers' script"),
])
def test_the_line_names_the_count_the_kinds_and_the_outcome(metric, details, missing, line):
    assert _failed_images_line(_task(metric, details, missing)) == line


def test_a_missing_caption_is_no_missing_image():
    """In the captioning / VQA tasks the prediction is text: a record without one scores an empty answer and its
    image is still read, so it is not among the samples without an image (the line said so)."""
    line = _failed_images_line(_task("s_image_captioning", {"clip_failed": 1, "clip_undecodable": 0}, missing=2))
    assert line is not None and "record without prediction" not in line


def test_no_line_without_failed_samples():
    assert _failed_images_line(_task("fid", {"images_failed": 0})) is None
    assert _failed_images_line(_task("bleu", 0.5)) is None

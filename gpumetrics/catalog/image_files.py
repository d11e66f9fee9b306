"""Model-based image metrics (FID, KID, CLIP score) over image files named by records, for the catalog.

A record's prediction is a generated image's path; its references are

* ``pairing="sets"`` (FID, KID): paths of real images — the real set is every reference of every record, the
  generated set every prediction (the records only say which files belong to the evaluation);
* ``pairing="captions"`` (CLIP score): the caption(s) of the image (the first one is scored).

Relative paths resolve against ``image_root`` (a config's folder by default). The metric modules are imported when
an entry is built, never when the catalog is listed.

``missing_image`` (default ``"error"``: a prediction naming no file, a missing one or one that cannot be decoded is an
error naming it) ``"zero"`` scores such a generated image as the AIJ-2022 scripts' ``try/except`` does: CLIP 0 for
``clip_score``, left out of the generated set for ``fid`` / ``kid``; the result then counts them
(``clip_failed`` / ``images_failed``, of them ``*_undecodable`` files that exist but cannot be decoded) and one
warning at ``compute()`` names the first undecodable files (:mod:`gpumetrics.image.undecodable`). A record of the
references without a prediction is then fed as the prediction ``""``, naming no image, and scored as such
(:func:`gpumetrics.catalog.adapters.missing_image_empty_prediction`, the entries' empty answer); with ``"error"``
there is no empty answer and every id needs a prediction. The references (real images) must always be there.

An error about one sample (a prediction naming no file, a missing or undecodable file, a caption that is not a
string) is tagged with the sample's position in the batch (:mod:`gpumetrics.core.positions`), whatever the
numbering of its message.
"""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path
from typing import Any, Callable, Optional

import torch

from gpumetrics.core import Metric, check_positive_int
from gpumetrics.core.files import expand_user
from gpumetrics.core.positions import at_position, renumbered
from gpumetrics.harness.registry import resolve

PAIRINGS = ("sets", "captions")

#: per pairing: the prefix of the counts of failed samples, what is done with them, the signature value
_FAILED = {"captions": ("clip", "each scored CLIP 0", "clip0"),
           "sets": ("images", "each left out of the generated set", "left-out")}


def _present(root: Path, names: list) -> list[int]:
    """Indices of the names that are a path of an existing file (relative to ``root``)."""
    kept = []
    for index, name in enumerate(names):
        if isinstance(name, str) and name:
            path = expand_user(name)
            try:
                if (path if path.is_absolute() else root / path).is_file():
                    kept.append(index)
            except OSError:  # a name too long for the file system: no such file
                pass
    return kept


def _paths(root: Path, names: list, what: str, positions: Optional[list[int]] = None,
           samples: Optional[list[int]] = None) -> list[Path]:
    """The files ``names`` (``root``-relative) name; an error names ``what`` and the name's number (its index, or
    ``positions[index]``) and is tagged with its sample's batch position (that number, or ``samples[index]``)."""
    out = []
    for index, name in enumerate(names):
        sample = index if samples is None else samples[index]
        index = index if positions is None else positions[index]
        if not isinstance(name, str) or not name:
            raise at_position(TypeError(f"{what} {index} must be an image path, got {name!r:.60}"), sample)
        path = expand_user(name)
        path = path if path.is_absolute() else root / path
        try:
            found = path.is_file()
        except OSError as err:  # a name too long for the file system (is_file answers False only for missing files)
            raise at_position(ValueError(f"{what} {index}: unusable image path {name!r:.60}: {err.strerror}"),
                              sample) from None
        if not found:
            raise at_position(ValueError(f"{what} {index}: image file not found: {path}"), sample)
        out.append(path)
    return out


class _ImageFileScore(Metric):
    """``metric`` (a ``"package.module:Class"`` path) fed with the images of record paths.

    A catalog adapter, not a metric of the library (hence private): its empty-input rule, host syncs and parity
    are the wrapped metric's.

    Args:
        metric: the image metric's dotted path (FID / KID: ``update(images, real)``; CLIP score:
            ``update(images, captions)``).
        pairing: ``"sets"`` or ``"captions"`` (module docstring).
        image_root: folder relative image paths resolve against.
        batch_size: images read per model call.
        workers: decoding processes (``None``: from the core count; ``0``: this process) — values do not depend on it.
        decode: ``"pil"`` (parity pixels) or ``"nvjpeg"`` (JPEGs decoded on the metric's CUDA device; recorded in the
            signature). See :func:`gpumetrics.image.io.same_size_batches`.
        missing_image: ``"error"`` (default) or ``"zero"`` (module docstring; recorded in the signature).
        **options: the image metric's own options (``speed_mode`` among them).
    """

    full_state_update = False

    def __init__(self, metric: str, pairing: str, image_root: str = ".", batch_size: int = 32,
                 workers: Optional[int] = None, decode: str = "pil", missing_image: str = "error",
                 **options: Any) -> None:
        from gpumetrics.image.io import check_reading_options
        from gpumetrics.image.undecodable import add_failed_image_states, check_missing_image

        if pairing not in PAIRINGS:
            raise ValueError(f"`pairing` must be one of {', '.join(PAIRINGS)}, got {pairing!r}")
        check_positive_int(batch_size, "batch_size")
        check_reading_options(workers, decode)
        check_missing_image(missing_image)
        super().__init__()
        self.pairing, self.image_root, self.batch_size = pairing, Path(image_root), batch_size
        self.workers, self.decode, self.missing_image = workers, decode, missing_image
        self.inner = resolve(metric)(**options)
        self.signature_name = getattr(self.inner, "signature_name", "")
        if missing_image == "zero":
            add_failed_image_states(self, _FAILED[pairing][0])

    def update(self, predictions: list, references: list) -> None:
        """Add ``B`` generated image paths with their references (real image paths or captions)."""
        from gpumetrics.image.io import same_size_batches
        from gpumetrics.image.undecodable import count_failed_images

        zero = self.missing_image == "zero"
        kept = _present(self.image_root, predictions) if zero else list(range(len(predictions)))
        generated = _paths(self.image_root, [predictions[i] for i in kept], "prediction", kept, kept)
        device = next((t.device for t in self.inner.buffers()), self.device)
        undecodable: list = []

        def batches(files: list[Path], samples: list[int], bad: Optional[list] = None):
            # an error about a file (or a caption) numbers it among ``files``: tag it with its sample's position
            try:
                for indices, images in same_size_batches(files, self.batch_size, workers=self.workers,
                                                         decode=self.decode, device=device, undecodable=bad):
                    yield indices, images
            except (TypeError, ValueError) as error:
                raise renumbered(error, samples)

        if self.pairing == "captions":
            empty = next((index for index, refs in enumerate(references) if isinstance(refs, list) and not refs), None)
            if empty is not None:
                raise at_position(ValueError(f"references {empty} hold no caption: expected a caption or a list of "
                                             "them"), empty)
            captions = [refs[0] if isinstance(refs, list) else refs for refs in references]
            for indices, images in batches(generated, kept, undecodable if zero else None):
                try:
                    self.inner.update(images, [captions[kept[i]] for i in indices])
                except (TypeError, ValueError) as error:  # its `captions[k]` is the k-th of this group of images
                    raise renumbered(error, [kept[i] for i in indices])
            if zero:
                failed = count_failed_images(self, "clip", len(predictions) - len(kept), undecodable)
                if failed:
                    self.inner._accumulate(torch.zeros(failed, dtype=torch.float64))
            return
        groups = [refs if isinstance(refs, list) else [refs] for refs in references]
        owners = [sample for sample, refs in enumerate(groups) for _ in refs]
        real = _paths(self.image_root, [path for refs in groups for path in refs], "reference", samples=owners)
        for side, files, samples in ((False, generated, kept), (True, real, owners)):
            for _, images in batches(files, samples, undecodable if zero and not side else None):
                self.inner.update(images, real=side)
        if zero:
            count_failed_images(self, "images", len(predictions) - len(kept), undecodable)

    def compute(self) -> Any:
        """The image metric's value (KID: ``{"kid_mean", "kid_std"}``); with ``missing_image="zero"`` a dict that
        also holds the counts of failed samples, ``<prefix>_failed`` and ``<prefix>_undecodable``."""
        from gpumetrics.image.undecodable import warn_undecodable_images

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # small sets: the rank-deficiency warning is noise here
            try:
                value = self.inner.compute()
            except ValueError as err:
                zero = self.missing_image == "zero"
                failed = int(getattr(self, f"{_FAILED[self.pairing][0]}_failed").tolist()) if zero else 0
                if not failed:
                    raise
                raise ValueError(f"{err} ({failed} generated images are missing or cannot be decoded: "
                                 "`missing_image: zero` left them out)") from None
        if isinstance(value, tuple):  # KID: (mean, std)
            value = {"kid_mean": value[0], "kid_std": value[1]}
        if self.missing_image != "zero":
            return value
        prefix, consequence, _ = _FAILED[self.pairing]
        warn_undecodable_images(self, prefix, consequence)
        value = value if isinstance(value, dict) else {self.signature_name: value}
        return {**value, f"{prefix}_failed": getattr(self, f"{prefix}_failed").clone(),
                f"{prefix}_undecodable": getattr(self, f"{prefix}_undecodable").clone()}

    def signature(self) -> str:
        extra = ([f"decode:{self.decode}"] if self.decode != "pil" else []) + (
            [f"missing_image:{_FAILED[self.pairing][2]}"] if self.missing_image == "zero" else [])
        if not extra:
            return self.inner.signature()
        head, version = self.inner.signature().rsplit("|", 1)
        return "|".join([head, *extra, version])


def image_file_options(metric: str) -> Callable[..., None]:
    """``TaskMetric.check_options`` of an image-file entry: the options bound to the image metric's signature (and
    ``image_root``/``batch_size``), no model loaded."""

    def check(image_root: Any = ".", batch_size: Any = 32, workers: Any = None, decode: Any = "pil",
              missing_image: Any = "error", **options: Any) -> None:
        from gpumetrics.image.io import check_reading_options
        from gpumetrics.image.undecodable import check_missing_image

        check_positive_int(batch_size, "batch_size")
        check_reading_options(workers, decode)
        check_missing_image(missing_image)
        if not isinstance(image_root, str):
            raise TypeError(f"`image_root` must be a path, got {image_root!r}")
        parameters = inspect.signature(resolve(metric).__init__).parameters
        unknown = sorted(set(options) - set(parameters) - {"self"})
        if unknown:
            raise TypeError(f"unexpected option(s) {', '.join(map(repr, unknown))}")
        values = {name: p.default for name, p in parameters.items() if p.default is not inspect.Parameter.empty}
        resolve(metric).check_options({**values, **options})  # the metric's checks that need no model

    return check


def image_file_score(metric: str, pairing: str, **options: Any) -> Metric:
    """The task metric that feeds ``metric`` (a ``"module:Class"`` path) the images its records name (``pairing``:
    ``"sets"`` — generated against real, ``"captions"`` — each image with its caption)."""
    return _ImageFileScore(metric, pairing, **options)

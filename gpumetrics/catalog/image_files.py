"""Model-based image metrics (FID, KID, CLIP score) over image files named by records, for the catalog.

A record's prediction is a generated image's path; its references are

* ``pairing="sets"`` (FID, KID): paths of real images — the real set is every reference of every record, the
  generated set every prediction (the records only say which files belong to the evaluation);
* ``pairing="captions"`` (CLIP score): the caption(s) of the image (the first one is scored).

Relative paths resolve against ``image_root`` (a config's folder by default). The metric modules are imported when
an entry is built, never when the catalog is listed.
"""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path
from typing import Any, Callable, Optional

from gpumetrics.core import Metric, check_positive_int
from gpumetrics.core.files import expand_user
from gpumetrics.harness.registry import resolve

PAIRINGS = ("sets", "captions")


def _paths(root: Path, names: list, what: str) -> list[Path]:
    out = []
    for index, name in enumerate(names):
        if not isinstance(name, str) or not name:
            raise TypeError(f"{what} {index} must be an image path, got {name!r:.60}")
        path = expand_user(name)
        path = path if path.is_absolute() else root / path
        try:
            found = path.is_file()
        except OSError as err:  # a name too long for the file system (is_file answers False only for missing files)
            raise ValueError(f"{what} {index}: unusable image path {name!r:.60}: {err.strerror}") from None
        if not found:
            raise ValueError(f"{what} {index}: image file not found: {path}")
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
        **options: the image metric's own options (``speed_mode`` among them).
    """

    full_state_update = False

    def __init__(self, metric: str, pairing: str, image_root: str = ".", batch_size: int = 32,
                 workers: Optional[int] = None, decode: str = "pil", **options: Any) -> None:
        from gpumetrics.image.io import check_reading_options

        if pairing not in PAIRINGS:
            raise ValueError(f"`pairing` must be one of {', '.join(PAIRINGS)}, got {pairing!r}")
        check_positive_int(batch_size, "batch_size")
        check_reading_options(workers, decode)
        super().__init__()
        self.pairing, self.image_root, self.batch_size = pairing, Path(image_root), batch_size
        self.workers, self.decode = workers, decode
        self.inner = resolve(metric)(**options)
        self.signature_name = getattr(self.inner, "signature_name", "")

    def update(self, predictions: list, references: list) -> None:
        """Add ``B`` generated image paths with their references (real image paths or captions)."""
        from gpumetrics.image.io import same_size_batches

        generated = _paths(self.image_root, predictions, "prediction")
        device = next((t.device for t in self.inner.buffers()), self.device)

        def batches(files: list[Path]):
            return same_size_batches(files, self.batch_size, workers=self.workers, decode=self.decode, device=device)

        if self.pairing == "captions":
            empty = next((index for index, refs in enumerate(references) if isinstance(refs, list) and not refs), None)
            if empty is not None:
                raise ValueError(f"references {empty} hold no caption: expected a caption or a list of them")
            captions = [refs[0] if isinstance(refs, list) else refs for refs in references]
            for indices, images in batches(generated):
                self.inner.update(images, [captions[i] for i in indices])
            return
        real = _paths(self.image_root,
                      [path for refs in references for path in (refs if isinstance(refs, list) else [refs])],
                      "reference")
        for side, files in ((False, generated), (True, real)):
            for _, images in batches(files):
                self.inner.update(images, real=side)

    def compute(self) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # small sets: the rank-deficiency warning is noise here
            value = self.inner.compute()
        if isinstance(value, tuple):  # KID: (mean, std)
            return {"kid_mean": value[0], "kid_std": value[1]}
        return value

    def reset(self) -> None:
        super().reset()
        self.inner.reset()

    def signature(self) -> str:
        if self.decode == "pil":
            return self.inner.signature()
        head, version = self.inner.signature().rsplit("|", 1)
        return f"{head}|decode:{self.decode}|{version}"


def image_file_options(metric: str) -> Callable[..., None]:
    """``TaskMetric.check_options`` of an image-file entry: the options bound to the image metric's signature (and
    ``image_root``/``batch_size``), no model loaded."""

    def check(image_root: Any = ".", batch_size: Any = 32, workers: Any = None, decode: Any = "pil",
              **options: Any) -> None:
        from gpumetrics.image.io import check_reading_options

        check_positive_int(batch_size, "batch_size")
        check_reading_options(workers, decode)
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

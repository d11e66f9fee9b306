"""The AIJ-2022 image-generation task score: S_ImageGeneration = ½ (CLIP + (200 − min(200, FID)) / 200).

CLIP is the raw cosine (``scale=1``) between each generated image and its caption; FID compares all generated
images with a real set given as a folder of images or a pytorch-fid ``.npz`` statistics file.

Config records: predictions ``{"id": …, "prediction": "generated/0001.png"}``, references
``{"id": …, "references": ["the caption"]}``; image paths are relative to the ``image_root`` option. With
``missing_image="zero"`` a reference id without a prediction names no image (the empty answer ``""``): CLIP 0, out
of FID, counted in ``clip_failed``; with ``"error"`` every id needs a prediction. The AIJ-2022 suite reads the
organisers' files instead (format ``aij2022-generation``, :mod:`gpumetrics.suites.formats`; a missing prediction
there stops the run, as the organisers' script asserts).
"""

from __future__ import annotations

import dataclasses
import os
import warnings
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence, Union

import torch
from torch import Tensor

from gpumetrics.core import Metric
from gpumetrics.core.checks import as_text_list, check_bool, check_positive_int, check_same_length
from gpumetrics.core.positions import renumbered, sample_error
from gpumetrics.image.clip_score import CLIPScore, check_clip_options
from gpumetrics.core.progress import ProgressFn
from gpumetrics.image.feature_cache import FeatureCache
from gpumetrics.image.features import check_extractor_options
from gpumetrics.image.fid import FrechetInceptionDistance
from gpumetrics.image.precision import PRECISIONS, parse_speed_mode
from gpumetrics.image.image_files import add_image_files
from gpumetrics.image.undecodable import (
    add_failed_image_states, check_missing_image, count_failed_images,
    warn_undecodable_images,
)
from gpumetrics.image.io import check_reading_options, decode_signature, list_images, same_size_batches
from gpumetrics.harness.registry import init_options


def image_generation_score(clip: Union[float, Tensor], fid: Union[float, Tensor]) -> Tensor:
    """S_ImageGeneration = ½ (CLIP + (200 − min(200, FID)) / 200), CLIP as raw cosine in [0, 1].

    Example:
        >>> float(image_generation_score(0.3, 50.0))
        0.525
        >>> float(image_generation_score(0.3, 250.0))
        0.15
    """
    clip = torch.as_tensor(clip, dtype=torch.float64)
    fid = torch.as_tensor(fid, dtype=torch.float64, device=clip.device)
    return 0.5 * (clip + (200 - fid.clamp(max=200)) / 200)


def build_task_clip(
    backend: str, model: str, pretrained: Optional[str], clamp: bool = True, templates: Optional[Any] = None,
    speed_mode: Optional[str] = None,
) -> CLIPScore:
    """The CLIP term of the AIJ-2022 image tasks: ``CLIPScore`` with ``scale=1``, ``clamp``, ``templates`` and
    ``speed_mode`` (the encoders' precision; ``None``: true float32, the parity path).

    The organisers' term (what the ``aij2022`` suite sets) is ruCLIP ``ruclip-vit-large-patch14-336`` —
    ``backend="ruclip"`` with ``model`` = a local checkpoint folder — unclamped (``clamp=False``), the text feature
    averaged over ruclip ``Predictor``'s prompt templates (``templates="ruclip"``). hf / open_clip models take the
    same options (the tests use random-weight ones).
    """
    return CLIPScore(backend, model, pretrained, scale=1.0, clamp=clamp, templates=templates, speed_mode=speed_mode)


#: ``CLIPScore``'s argument → the image tasks' option of the same meaning, for the errors of its checks
_TASK_CLIP_OPTIONS = {"backend": "clip_backend", "model_name": "clip_model", "pretrained": "clip_pretrained",
                      "templates": "clip_templates"}


def check_task_clip_options(backend: Any, model: Any, pretrained: Any, clamp: Any, templates: Any,
                            speed_mode: Any = None) -> None:
    """The checks of :func:`build_task_clip`'s options that need no model (the image tasks' ``clip_*`` options), the
    model's files included; an error names the task's option (``clip_model``), not ``CLIPScore``'s argument."""
    check_bool(clamp, "clip_clamp")
    parse_speed_mode(speed_mode, "clip_speed_mode", PRECISIONS)  # the encoders take a precision, no layout
    try:
        check_clip_options(backend, model, pretrained, templates=templates)
    except (TypeError, ValueError, FileNotFoundError) as error:
        message = str(error)
        for argument, option in _TASK_CLIP_OPTIONS.items():
            message = message.replace(f"`{argument}`", f"`{option}`")
        raise type(error)(message) from None


def add_clip_failed_state(metric: Metric) -> None:
    """Register ``metric.clip_failed``: how many samples :func:`add_failed_clip_samples` scored 0 (a sum under DDP;
    ``compute()`` reports it as ``clip_failed``, so a wrong image folder is seen, not only a low CLIP),
    ``metric.clip_undecodable``: how many of them name an image file that cannot be decoded, and the first
    :data:`~gpumetrics.image.undecodable.NAMED_UNDECODABLE` of those with the decoder's reason
    (:mod:`gpumetrics.image.undecodable`: states, so a checkpoint, ``merge_state`` and DDP carry them)."""
    add_failed_image_states(metric, "clip")


def add_failed_clip_samples(metric: Metric, count: int, undecodable: Sequence[tuple[int, Exception]] = ()) -> None:
    """Count ``count`` samples whose CLIP term failed (no image, no text) and the ``undecodable`` ones (``(index,
    error)`` from :meth:`ImageFiles.batches`) as 0 in ``metric.clip``'s mean — the AIJ-2022 scripts' ``except:
    scores.append(0.0)`` — and in ``metric.clip_failed`` (``metric.clip_undecodable`` for the latter, naming them)."""
    count = count_failed_images(metric, "clip", count, undecodable)
    if count:
        metric.clip._accumulate(torch.zeros(count, dtype=torch.float64))


def warn_undecodable_clip_images(metric: Metric) -> None:
    """One warning for all the image files ``metric`` could not decode (scored CLIP 0): how many (over every
    process), and the first few read — by any process, before a resume, or by a merged metric — with the decoder's
    reason. Nothing when none was named."""
    warn_undecodable_images(metric, "clip", "each scored CLIP 0 as the AIJ-2022 scripts' try/except does")


@dataclasses.dataclass(frozen=True)
class ImageFiles:
    """How a task metric reads the image files its samples name (the options every image task shares, checked by
    :func:`check_image_file_options`): paths under ``root``, the missing-image rule, and the decoding pipeline."""

    root: Path
    allow_outside_root: bool = False
    missing_image: str = "error"
    batch_size: int = 32
    workers: Optional[int] = None
    decode: str = "pil"

    def signature_fields(self) -> dict[str, str]:
        """What of the reading changes a score: the decoder, paths outside ``root``, missing images scored 0."""
        fields = dict(decode_signature(self.decode))
        if self.allow_outside_root:
            fields["images"] = "outside-root-allowed"
        if self.missing_image == "zero":
            fields["missing_image"] = "clip0"
        return fields

    def batches(
        self, images: Sequence[Any], device: torch.device
    ) -> tuple[list[int], Iterator[tuple[list[int], Tensor]], list[tuple[int, Exception]]]:
        """``(kept, batches, undecodable)``: the samples whose image is given (every path checked now, before any
        state changes), their images as ``(indices into kept, Tensor[b, 3, H, W] uint8 on device)`` from
        :func:`~gpumetrics.image.io.same_size_batches`, and — filled as the batches are read, with
        ``missing_image="zero"`` — ``(index into kept, error)`` of each image file that cannot be decoded (left out
        of the batches, a failed sample as a missing file is). With ``"error"`` such a file is raised (naming it)."""
        kept, names = split_missing_images(images, self.root, self.missing_image)
        paths = image_paths_under_root(names, self.root, self.allow_outside_root, positions=kept)
        undecodable: list[tuple[int, Exception]] = []
        batches = same_size_batches(paths, self.batch_size, workers=self.workers, decode=self.decode, device=device,
                                    undecodable=undecodable if self.missing_image == "zero" else None)
        return kept, _renumbered_batches(batches, kept), undecodable


def _renumbered_batches(batches: Iterator[tuple[list[int], Tensor]],
                        kept: list[int]) -> Iterator[tuple[list[int], Tensor]]:
    """``batches``, a file's error (tagged with its index among the ``kept`` samples' files) tagged with its
    sample's position in the batch instead."""
    try:
        yield from batches
    except ValueError as error:
        raise renumbered(error, kept)


def check_image_file_options(image_root: Any, allow_outside_root: Any, batch_size: Any, missing_image: Any = "error",
                             workers: Any = None, decode: Any = "pil") -> None:
    """The options every task metric on image files shares: ``image_root`` a path, ``allow_outside_root`` a bool,
    ``batch_size`` a positive int, ``missing_image`` ``"error"`` or ``"zero"``, ``workers`` and ``decode`` (see
    :func:`gpumetrics.image.io.same_size_batches`). Raises ``TypeError``/``ValueError`` naming the option."""
    check_reading_options(workers, decode)
    check_missing_image(missing_image)
    check_bool(allow_outside_root, "allow_outside_root")
    if not isinstance(image_root, (str, os.PathLike)):
        raise TypeError(f"`image_root` must be a path, got {type(image_root).__name__}")
    check_positive_int(batch_size, "batch_size")


def image_paths_under_root(
    names: Sequence[str], image_root: Union[str, Path], allow_outside_root: bool = False, name: str = "images",
    positions: Optional[Sequence[int]] = None,
) -> list[Path]:
    """``image_root / name`` for each name; every file must exist and, unless ``allow_outside_root``, lie inside
    ``image_root`` once resolved (``..``, absolute paths and symlinks pointing elsewhere are refused), so that a
    submission cannot point its images at files outside the folder it was given.

    Args:
        positions: the position of each name in the caller's batch (where it passed a subset), for the messages.

    Raises:
        ValueError: naming ``name[position]`` (and tagged with ``position``, :mod:`gpumetrics.core.positions`): the
            file does not exist, or it leaves ``image_root``.
    """
    paths = [Path(image_root) / p for p in names]
    root = Path(image_root).resolve()
    for index, path in enumerate(paths):
        position = index if positions is None else positions[index]
        if not os.path.isfile(path):  # False also for a name the file system refuses (too long)
            raise sample_error(ValueError, name, position, f": file '{str(path):.300}' does not exist")
        if not allow_outside_root and not path.resolve().is_relative_to(root):
            raise sample_error(
                ValueError, name, position, f": '{names[index]}' leaves image_root '{root}' (resolves to "
                f"'{path.resolve()}'); images must lie inside image_root — set `allow_outside_root: true` to accept it"
            )
    return paths


def split_missing_images(
    names: Sequence[Any], image_root: Union[str, Path], missing_image: str, name: str = "images"
) -> tuple[list[int], list[str]]:
    """Indices and names of the samples whose image is given (a string) and, with ``missing_image="zero"``, exists
    under ``image_root``; the others are *failed* samples whose CLIP term scores 0 (the AIJ-2022 scripts' ruCLIP
    ``try/except``). With ``"error"`` every name must be a string (an absent file is reported later, by
    :func:`image_paths_under_root`).

    Raises:
        TypeError: ``missing_image="error"`` and ``name[index]`` is not a string.

    Example:
        >>> split_missing_images(["a.png", None], ".", "zero")
        ([], [])
    """
    if isinstance(names, str) or not isinstance(names, Sequence):
        raise TypeError(f"`{name}` must be a sequence of image paths, got {type(names).__name__}")
    if missing_image == "error":
        return list(range(len(names))), as_text_list(list(names), name)
    kept = [i for i, n in enumerate(names) if isinstance(n, str) and n and os.path.isfile(Path(image_root) / n)]
    return kept, [names[i] for i in kept]


class ImageGenerationScore(Metric):
    """S_ImageGeneration over generated image files and their captions.

    Args:
        real: folder of real images or a pytorch-fid/clean-fid ``.npz`` of their statistics.
        image_root: directory that relative image paths (predictions) are resolved against.
        allow_outside_root: accept prediction paths that leave ``image_root`` (``..``, absolute paths, symlinks
            pointing elsewhere). Default False: such a path is a ``ValueError``, so a submission cannot point its
            "generated" images at the reference images.
        fid_feature, inception_weights, resize: ``FrechetInceptionDistance`` options (``feature``, ``weights``,
            ``resize``); ``inception_weights="random"`` for tests only.
        clip_backend, clip_model, clip_pretrained: ``CLIPScore`` options (``backend``, ``model_name``,
            ``pretrained``); the CLIP score is the raw cosine (``scale=1``).
        batch_size: images read per model call.
        missing_image: ``"error"`` (default): an absent or undecodable image file is a ``ValueError`` naming it;
            ``"zero"`` (the AIJ-2022 script's ``try/except``): a sample without a usable image (``None``, no such
            file, or one that cannot be decoded) scores CLIP 0 and is left out of FID; one warning at ``compute()``
            names how many files could not be decoded and the first few, with the decoder's reason.
        clip_clamp, clip_templates: ``CLIPScore``'s ``clamp`` (default True: each cosine clamped at 0) and
            ``templates`` (default None); the ``aij2022`` suite sets False and ``"ruclip"``, as the organisers' term.
        workers: processes decoding the image files (``None``: from the core count; 0: this process); the values do
            not depend on it.
        decode: ``"pil"`` (default, pytorch-fid's pixels) or ``"nvjpeg"`` (JPEGs decoded on the metric's CUDA device;
            other formats as PIL; recorded in the signature) — docs/gpu.md.
        fid_speed_mode, clip_speed_mode: the Inception and CLIP precision policies (``None``: true float32, the
            parity path; see ``FrechetInceptionDistance`` and ``CLIPScore``), recorded in the signature.
        cache_dir: folder of the reference feature cache (:mod:`gpumetrics.image.feature_cache`); default None:
            ``$GPUMETRICS_HOME/features``, else ``~/.cache/gpumetrics/features``. A folder of real images is read
            through Inception once per content, extractor and batch size; later runs read its FID states from there.
        no_cache: True: neither read nor write the cache (an ``.npz`` ``real`` never uses it).

    ``compute()`` returns ``{"score": S, "clip": CLIP, "fid": FID, "clip_failed": n, "clip_undecodable": u}``: ``n``
    the samples without a usable image (``missing_image="zero"``), scored CLIP 0 and left out of FID, ``u`` of them
    those whose image file cannot be decoded.

    States: those of the child metrics ``fid`` and ``clip``, the counts ``clip_failed`` / ``clip_undecodable`` and
    the first undecodable files' names (:mod:`gpumetrics.image.undecodable`); ``merge_state`` takes another metric of
    this class and adds its generated samples (the real set once); ``reset()`` clears the generated samples, the real
    set stays loaded.
    """

    higher_is_better = True
    full_state_update = False
    signature_name = "s_image_generation"

    def __init__(
        self,
        real: str,
        image_root: str = ".",
        fid_feature: int = 2048,
        inception_weights: Optional[str] = None,
        resize: str = "pytorch-fid",
        clip_backend: str = "hf",
        clip_model: str = "openai/clip-vit-base-patch32",
        clip_pretrained: Optional[str] = None,
        batch_size: int = 32,
        allow_outside_root: bool = False,
        missing_image: str = "error",
        clip_clamp: bool = True,
        clip_templates: Optional[Any] = None,
        cache_dir: Optional[str] = None,
        no_cache: bool = False,
        workers: Optional[int] = None,
        decode: str = "pil",
        fid_speed_mode: Optional[str] = None,
        clip_speed_mode: Optional[str] = None,
        **kwargs: Any,
    ) -> None:
        self._check(real, image_root, fid_feature, inception_weights, resize, clip_backend, clip_model, clip_pretrained,
                    batch_size, allow_outside_root, missing_image, clip_clamp, clip_templates, cache_dir, no_cache,
                    workers, decode, fid_speed_mode, clip_speed_mode)
        super().__init__(**kwargs)
        self.files = ImageFiles(Path(image_root), allow_outside_root, missing_image, batch_size, workers, decode)
        self.real = Path(real)
        self.cache = None if no_cache else FeatureCache(cache_dir)
        self.fid = FrechetInceptionDistance(
            feature=fid_feature, weights=inception_weights, resize=resize, reset_real_features=False,
            speed_mode=fid_speed_mode,
        )
        self.clip = build_task_clip(clip_backend, clip_model, clip_pretrained, clip_clamp, clip_templates,
                                    clip_speed_mode)
        add_clip_failed_state(self)

    @classmethod
    def check_options(cls, **options: Any) -> None:
        """Check the options as ``__init__`` does (its own names and defaults), without building Inception or CLIP."""
        cls._check(**init_options(cls, options))

    @staticmethod
    def _check(real: Any, image_root: Any, fid_feature: Any, inception_weights: Any, resize: Any, clip_backend: Any,
               clip_model: Any, clip_pretrained: Any, batch_size: Any, allow_outside_root: Any,
               missing_image: Any = "error", clip_clamp: Any = True,
               clip_templates: Any = None, cache_dir: Any = None, no_cache: Any = False, workers: Any = None,
               decode: Any = "pil", fid_speed_mode: Any = None, clip_speed_mode: Any = None) -> None:
        check_image_file_options(image_root, allow_outside_root, batch_size, missing_image, workers, decode)
        if cache_dir is not None and not isinstance(cache_dir, (str, os.PathLike)):
            raise TypeError(f"`cache_dir` must be a path or None, got {type(cache_dir).__name__}")
        check_bool(no_cache, "no_cache")
        if not isinstance(real, (str, os.PathLike)) or not Path(real).exists():
            raise ValueError(f"`real` must be a folder of images or an .npz statistics file; '{real}' does not exist")
        check_extractor_options(fid_feature, inception_weights, resize)
        parse_speed_mode(fid_speed_mode, "fid_speed_mode")
        check_task_clip_options(clip_backend, clip_model, clip_pretrained, clip_clamp, clip_templates, clip_speed_mode)

    @property
    def _real_loaded(self) -> bool:
        # read from the FID states (not a Python flag) so that a restored checkpoint does not load the real set twice
        return int(self.fid.real_count) > 0 or self.fid.real_loaded_mu.numel() > 0

    def _signature_fields(self) -> dict[str, Any]:
        return {"fid": self.fid.signature().rsplit("|", 1)[0], "clip": self.clip.signature().rsplit("|", 1)[0],
                **self.files.signature_fields()}

    def load_real(self, progress: Optional[ProgressFn] = None) -> None:
        """Read the real set into the FID states now (``compute()`` does it otherwise), once.

        A folder goes through Inception — or, when the cache holds this content and extractor, not at all
        (``cache_dir`` / ``no_cache``); ``progress(phase, done, total)`` reports the hashing and the extraction.
        """
        if self._real_loaded:
            return
        if self.real.suffix == ".npz":
            self.fid.load_stats(self.real, real=True)
            return
        files = list_images(self.real)
        if torch.distributed.is_available() and torch.distributed.is_initialized():
            # each rank reads its share: the FID sum states are all-reduced, so every file counts once (and each
            # rank caches its own share: the key holds the files it read)
            files = files[torch.distributed.get_rank() :: torch.distributed.get_world_size()]
        add_image_files(self.fid, files, True, self.files.batch_size, self.fid.real_sum.device, cache=self.cache,
                        root=self.real, progress=progress, phase="real images", workers=self.files.workers,
                        decode=self.files.decode)

    def update(self, images: Sequence[Optional[str]], captions: Union[str, Sequence[str]]) -> None:
        """Add ``B`` generated images (file paths, relative to ``image_root``; ``None`` for none with
        ``missing_image="zero"``) with their ``B`` captions. An image file that cannot be decoded is a
        ``ValueError`` naming it, or with ``missing_image="zero"`` a sample scored CLIP 0 and left out of FID."""
        captions = as_text_list(captions, "captions")
        check_same_length(images, "images", captions, "captions")
        kept, batches, undecodable = self.files.batches(images, self.fid.real_sum.device)
        for indices, batch in batches:
            self.fid.update(batch, real=False)
            self.clip.update(batch, [captions[kept[i]] for i in indices])
        add_failed_clip_samples(self, len(captions) - len(kept), undecodable)

    def compute(self) -> dict[str, Tensor]:
        """``{"score", "clip", "fid", "clip_failed", "clip_undecodable"}`` as 0-d float64 tensors."""
        self.load_real()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # small sets: the rank-deficiency warning is noise here
            try:
                fid = self.fid.compute()
            except ValueError as err:
                failed = int(self.clip_failed)
                if not failed:
                    raise
                raise ValueError(f"{err} ({failed} generated samples have no image file, or one that cannot be "
                                 "decoded: they score CLIP 0 and stay out of FID)") from None
        clip = self.clip.compute()
        warn_undecodable_clip_images(self)
        return {"score": image_generation_score(clip, fid), "clip": clip, "fid": fid,
                "clip_failed": self.clip_failed.clone(), "clip_undecodable": self.clip_undecodable.clone()}

    def _merge_owned(self, name: str, metric: Metric, incoming: Metric) -> None:
        """The generated samples of the other metric's CLIP and FID; the real set is not added twice: this metric's,
        when loaded, stays; else the other's is taken."""
        if metric is not self.fid or not self._real_loaded:
            super()._merge_owned(name, metric, incoming)
            return
        states = dict(incoming.metric_state)
        states.update({state: self.fid._defaults[state].to(self.fid.real_sum.device)
                       for state in self.fid.side_state_names("real")})
        self.fid.merge_state(states)
        self.fid._update_count += incoming._update_count  # a dict merge counts no update


def _image_generation_update_args(predictions: list, references: list) -> tuple:
    return list(predictions), [refs[0] if refs else "" for refs in references]

"""The AIJ-2022 ImageCaptioning and VisualQA task scores (docs/metrics/image.md):

* **S_ImageCaptioning** = ½ (METEOR + CLIP), METEOR in mode ``aij2022-caption``;
* **S_VisualQA** = ½ (METEOR_vqa + CLIP), METEOR in mode ``aij2022-vqa``.

METEOR is the mean over samples of the AIJ-2022 sentence METEOR of the prediction against the sample's gold
answers (max over them; docs/metrics/meteor.md, :mod:`gpumetrics.text.meteor.aij2022`); CLIP is the mean over samples of
the raw cosine (``scale=1``, clamped at 0 per sample) between the sample's image and its *predicted* text. Both
terms are in [0, 1], and so is the score.

Config records: predictions ``{"id": …, "prediction": "the predicted caption / answer"}``, references
``{"id": …, "references": {"image": "images/0001.jpg", "answers": ["gold 1", "gold 2"]}}`` (``answers`` may be one
string; other keys of the object, e.g. ``"question"``, are ignored). Image paths are relative to the
``image_root`` option and must stay inside it unless ``allow_outside_root``. Every reference id needs a prediction:
these metrics have no empty answer, and a missing one is a ``DataError`` naming the ids (the organisers' scripts
likewise refuse a submission that does not answer every id).

Differences from the organisers' scripts (``fbc2_aij2022/evaluation/{captioning,vqa}``), named so that numbers are
not compared blindly: their CLIP term is ruCLIP ``ruclip-vit-large-patch14-336`` without the clamp at 0
(``clip_clamp=False`` here, which the ``aij2022`` suite sets); here the CLIP model is the ``clip_*`` options'
(``clip_backend: ruclip`` with a local checkpoint folder once that backend is available —
:func:`~gpumetrics.suites.image.build_task_clip`; hf or open_clip otherwise; the signature names it).
With ``missing_image="zero"`` (what the ``aij2022`` suite sets) a sample without an image — none named, no such
file, or a file that cannot be decoded — scores CLIP 0 as in their ``try/except``, and is counted and warned about
here. Their VQA script prints METEOR only, and the
``aij2022`` suite scores VisualQA that way (the ``meteor`` task metric, mode ``aij2022-vqa``); ``s_visual_qa`` is the
task description's ½ (METEOR + CLIP) for configs that want it.

The AIJ-2022 suite reads the organisers' files (formats ``aij2022-captioning``, ``aij2022-vqa`` of
:mod:`gpumetrics.suites.formats`) into these records.
"""

from __future__ import annotations

from abc import abstractmethod

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import torch
from torch import Tensor

from gpumetrics.core import Metric
from gpumetrics.core.checks import as_reference_lists, as_text_list, check_same_length
from gpumetrics.core.positions import at_position
from gpumetrics.suites.image import (
    ImageFiles, add_clip_failed_state, add_failed_clip_samples, build_task_clip, check_image_file_options,
    check_task_clip_options, warn_undecodable_clip_images,
)
from gpumetrics.harness.registry import init_options
from gpumetrics.text.meteor import METEORScore
from gpumetrics.text.meteor.synonyms import (
    DictSynonyms, SynonymProvider, as_synonym_provider, default_ruwordnet,
)

#: METEOR mode of each variant.
METEOR_MODES = {"caption": "aij2022-caption", "vqa": "aij2022-vqa"}


def meteor_clip_score(meteor: Union[float, Tensor], clip: Union[float, Tensor]) -> Tensor:
    """S = ½ (METEOR + CLIP), the AIJ-2022 ImageCaptioning / VisualQA task score (CLIP as raw cosine in [0, 1]).

    Example:
        >>> float(meteor_clip_score(0.4, 0.3))
        0.35
    """
    meteor = torch.as_tensor(meteor, dtype=torch.float64)
    clip = torch.as_tensor(clip, dtype=torch.float64, device=meteor.device)
    return 0.5 * (meteor + clip)


def _check_synonyms(synonyms: Any) -> None:
    """``synonyms`` as the metrics take it, checked without reading a database: None (RuWordNet), a provider, a
    mapping word → synonyms, or the path of an existing TSV file."""
    if synonyms is None or isinstance(synonyms, SynonymProvider):
        return
    if isinstance(synonyms, Mapping):
        try:
            DictSynonyms(synonyms)
        except TypeError as error:
            raise TypeError(f"`synonyms`: {error}") from None
        return
    if isinstance(synonyms, (str, os.PathLike)):
        if not Path(synonyms).is_file():
            raise FileNotFoundError(
                f"`synonyms`: no synonym file at '{os.fspath(synonyms)}'; expected a UTF-8 file of "
                "'word<TAB>synonym' lines (or a mapping, or null for the RuWordNet database)"
            )
        return
    raise TypeError(
        "`synonyms` must be null (the RuWordNet database), a mapping word → list of synonyms or the path of a TSV "
        f"file, got {type(synonyms).__name__}"
    )


class CaptionImageScore(Metric):
    """½ (METEOR + CLIP) over images (file paths), predicted texts and gold answers — the shared mechanism of
    :class:`ImageCaptioningScore` and :class:`VisualQAScore`, which fix ``variant``; not built directly.

    Args:
        image_root: directory that relative image paths are resolved against.
        synonyms: METEOR's synonym provider: ``None`` (the installed RuWordNet database, as the organisers), a
            :class:`~gpumetrics.text.meteor.synonyms.SynonymProvider`, a mapping ``word → synonyms`` or the path
            of a ``word<TAB>synonym…`` TSV file. Resolved once, when the metric is built (before CLIP loads);
            ``None`` without RuWordNet installed is a ``FileNotFoundError`` naming the option.
        clip_backend, clip_model, clip_pretrained: ``CLIPScore`` options (``backend``, ``model_name``,
            ``pretrained``); the CLIP term is the raw cosine (``scale=1``).
        batch_size: images read per CLIP model call.
        allow_outside_root: accept image paths that leave ``image_root`` (``..``, absolute paths, symlinks pointing
            elsewhere). Default False: such a path is a ``ValueError``.
        missing_image: ``"error"`` (default): an absent or undecodable image file is a ``ValueError`` naming it;
            ``"zero"`` (the AIJ-2022 script's ruCLIP ``try/except``): a sample without a usable image (``None``, no
            such file, or one that cannot be decoded) scores CLIP 0; one warning at ``compute()`` names how many
            files could not be decoded and the first few, with the decoder's reason.
        clip_clamp, clip_templates: ``CLIPScore``'s ``clamp`` (default True: each cosine clamped at 0) and
            ``templates`` (default None); the ``aij2022`` suite sets False and ``"ruclip"``, as the organisers' term.
        workers, decode: how the image files are read (``gpumetrics.image.io.same_size_batches``): decoding
            processes (``None``: from the core count) and ``"pil"`` / ``"nvjpeg"`` (recorded in the signature).
        clip_speed_mode: the CLIP encoders' precision (``None``: true float32, the parity path; ``"tf32"``,
            ``"bf16"``, ``"fp16"``), recorded in the signature.
        kwargs: the ``Metric`` base options (torchmetrics' names: ``sync_on_compute``, ``dist_sync_fn`` …).

    States: those of the child metrics ``meteor`` (:class:`~gpumetrics.METEORScore`, per-sample sum and count) and
    ``clip`` (:class:`~gpumetrics.CLIPScore`), each all-reduced under DDP; ``merge_state`` takes another metric of
    the same class.

    ``compute()`` returns ``{"score": S, "meteor": METEOR, "clip": CLIP, "clip_failed": n, "clip_undecodable": u}``
    as 0-d float64 tensors, ``n`` the samples without a usable image (``missing_image="zero"``) whose CLIP term
    scored 0, ``u`` of them those whose image file cannot be decoded.
    """

    higher_is_better = True
    full_state_update = False
    signature_name = "meteor_clip"

    @property
    @abstractmethod
    def variant(self) -> str:
        """``"caption"`` or ``"vqa"``: a subclass sets it (a class attribute), so this base is abstract."""

    def __init__(
        self,
        image_root: str = ".",
        synonyms: Any = None,
        clip_backend: str = "hf",
        clip_model: str = "openai/clip-vit-base-patch32",
        clip_pretrained: Optional[str] = None,
        batch_size: int = 32,
        allow_outside_root: bool = False,
        missing_image: str = "error",
        clip_clamp: bool = True,
        clip_templates: Optional[Any] = None,
        workers: Optional[int] = None,
        decode: str = "pil",
        clip_speed_mode: Optional[str] = None,
        **kwargs: Any,
    ) -> None:
        if self.variant not in METEOR_MODES:
            raise TypeError(f"{type(self).__name__} has no variant; use ImageCaptioningScore or VisualQAScore")
        self._check(image_root, synonyms, clip_backend, clip_model, clip_pretrained, batch_size, allow_outside_root,
                    missing_image, clip_clamp, clip_templates, workers, decode, clip_speed_mode)
        super().__init__(**kwargs)
        self.files = ImageFiles(Path(image_root), allow_outside_root, missing_image, batch_size, workers, decode)
        # resolved once (before CLIP loads, so that a missing RuWordNet fails first): one provider and one cache
        provider = default_ruwordnet("synonyms") if synonyms is None else as_synonym_provider(synonyms, "synonyms")
        self.meteor = METEORScore(mode=METEOR_MODES[self.variant], reduction="corpus", synonyms=provider)
        self.clip = build_task_clip(clip_backend, clip_model, clip_pretrained, clip_clamp, clip_templates,
                                    clip_speed_mode)
        add_clip_failed_state(self)

    @classmethod
    def check_options(cls, **options: Any) -> None:
        """Check the options as ``__init__`` does (its own names and defaults), without building CLIP or opening
        RuWordNet."""
        cls._check(**init_options(cls, options))

    @staticmethod
    def _check(image_root: Any, synonyms: Any, clip_backend: Any, clip_model: Any, clip_pretrained: Any,
               batch_size: Any, allow_outside_root: Any, missing_image: Any = "error", clip_clamp: Any = True,
               clip_templates: Any = None, workers: Any = None, decode: Any = "pil",
               clip_speed_mode: Any = None) -> None:
        check_image_file_options(image_root, allow_outside_root, batch_size, missing_image, workers, decode)
        _check_synonyms(synonyms)
        check_task_clip_options(clip_backend, clip_model, clip_pretrained, clip_clamp, clip_templates, clip_speed_mode)

    def _signature_fields(self) -> dict[str, Any]:
        return {"meteor": self.meteor.signature().rsplit("|", 1)[0], "clip": self.clip.signature().rsplit("|", 1)[0],
                **self.files.signature_fields()}

    def update(
        self, images: Sequence[Optional[str]], preds: Union[str, Sequence[str]], target: Union[str, Sequence[Any]]
    ) -> None:
        """Add ``B`` samples.

        Args:
            images: ``B`` image file paths, relative to ``image_root`` (``None``: no image, with
                ``missing_image="zero"``).
            preds: ``B`` predicted texts (the caption / the answer).
            target: ``B`` items, each the gold answer(s) of a sample: a string or a non-empty list of strings.

        Raises:
            TypeError, ValueError: naming the argument (and index): wrong types, different lengths, a sample
                without gold answer, a missing image file or one outside ``image_root``. Everything is checked
                before any state changes; an image file that cannot be decoded fails mid-batch (with
                ``missing_image="zero"`` it scores CLIP 0 instead).
        """
        preds = as_text_list(preds, "preds")
        target = as_reference_lists(target, "target")
        check_same_length(images, "images", preds, "preds")
        check_same_length(preds, "preds", target, "target")
        kept, batches, undecodable = self.files.batches(images, self.clip.score_sum.device)
        for indices, batch in batches:
            self.clip.update(batch, [preds[kept[i]] for i in indices])
        add_failed_clip_samples(self, len(preds) - len(kept), undecodable)
        self.meteor.update(preds, target)

    def compute(self) -> dict[str, Tensor]:
        """``{"score", "meteor", "clip", "clip_failed", "clip_undecodable"}`` as 0-d float64 tensors."""
        meteor = self.meteor.compute()
        clip = self.clip.compute()
        warn_undecodable_clip_images(self)
        return {"score": meteor_clip_score(meteor, clip), "meteor": meteor, "clip": clip,
                "clip_failed": self.clip_failed.clone(), "clip_undecodable": self.clip_undecodable.clone()}


class ImageCaptioningScore(CaptionImageScore):
    """S_ImageCaptioning = ½ (METEOR ``aij2022-caption`` + CLIP) over images and their predicted captions
    (options and ``compute()`` as :class:`CaptionImageScore`).

    Example:
        >>> import json, os, tempfile
        >>> from PIL import Image
        >>> from gpumetrics.text.meteor.synonyms import NoSynonyms
        >>> root = tempfile.mkdtemp()
        >>> Image.new("RGB", (40, 30), "red").save(os.path.join(root, "0.png"))
        >>> config = os.path.join(root, "tiny-clip.json")
        >>> vision = {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16}
        >>> text = {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1}
        >>> json.dump({"embed_dim": 16, "vision_cfg": vision, "text_cfg": text}, open(config, "w"))
        >>> metric = ImageCaptioningScore(root, NoSynonyms(), "open_clip", config, "random")
        >>> metric.update(["0.png"], ["красный квадрат"], [["красный квадрат", "квадрат"]])
        >>> result = metric.compute()
        >>> float(result["meteor"]) > 0.9, 0 <= float(result["clip"]) <= 1
        (True, True)
        >>> bool(result["score"] == (result["meteor"] + result["clip"]) / 2)
        True
        >>> metric.signature().split("|")[:2]
        ['s_image_captioning', 'meteor:meteor']
    """

    variant = "caption"
    signature_name = "s_image_captioning"


class VisualQAScore(CaptionImageScore):
    """S_VisualQA = ½ (METEOR ``aij2022-vqa`` + CLIP) over images and the predicted answers to their questions
    (options and ``compute()`` as :class:`CaptionImageScore`)."""

    variant = "vqa"
    signature_name = "s_visual_qa"


def caption_update_args(predictions: list[Any], references: list[Any]) -> tuple:
    """Records → ``update(images, preds, target)``: each prediction is the predicted text, each reference record
    holds one object ``{"image": path, "answers": [gold, …]}`` (``"references": {…}`` or ``"references": [{…}]``).

    Raises:
        TypeError, ValueError: naming the sample (its index in the batch, also tagged: :mod:`gpumetrics.core.positions`)
            and the field.
    """
    images, preds, target = [], [], []
    for index, (prediction, refs) in enumerate(zip(predictions, references)):
        if not isinstance(prediction, str):
            raise at_position(TypeError(
                f"prediction {index} must be a string (the predicted text), got {type(prediction).__name__}"
            ), index)
        ref = refs[0] if isinstance(refs, list) and len(refs) == 1 else refs
        if not isinstance(ref, dict):
            raise at_position(TypeError(
                f'references {index} must be one object {{"image": path, "answers": [gold, …]}}, got {ref!r:.80}'
            ), index)
        image, answers = ref.get("image"), ref.get("answers")
        if "image" not in ref or (image is not None and (not isinstance(image, str) or not image)):
            raise at_position(ValueError(f"references {index}: `image` must be a non-empty path string (or null), "
                                         f"got {image!r:.80}"), index)
        if isinstance(answers, str):
            answers = [answers]
        if not isinstance(answers, list) or not answers or not all(isinstance(a, str) for a in answers):
            raise at_position(ValueError(
                f"references {index}: `answers` must be a string or a non-empty list of strings, got {answers!r:.80}"
            ), index)
        images.append(image)
        preds.append(prediction)
        target.append(answers)
    return images, preds, target

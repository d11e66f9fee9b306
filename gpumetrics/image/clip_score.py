"""CLIP score (docs/metrics/image.md): mean over image–caption pairs of ``max(scale · cos(image_emb, text_emb), 0)``.

``scale`` is 100 (torchmetrics), 1 (raw cosine — the AIJ-2022 image-generation task) or 2.5 (the CLIPScore paper)
and is part of the signature, as is ``clamp`` (``False``: the raw ``scale · cos``, negative values kept). Three
backends:

* ``"hf"`` — a transformers ``CLIPModel``; ``model_name`` is a hub id or a local directory holding the model, its
  tokenizer and ``preprocessor_config.json`` (as ``save_pretrained`` writes them). Same model and processor as
  torchmetrics' ``CLIPScore``.
* ``"open_clip"`` — ``open_clip.create_model(model_name, pretrained=...)``; ``model_name`` is an open_clip
  architecture (``ViT-B-32``…) or the path of a model-config JSON; ``pretrained`` a tag (``openai``,
  ``laion2b_s34b_b79k``…) or a checkpoint file.
* ``"ruclip"`` — ruCLIP (ai-forever ``ru-clip``) ported to plain torch in :mod:`gpumetrics.image.ruclip` (its
  YouTokenToMe BPE read without youtokentome); ``model_name`` is a local checkpoint folder (``config.json``,
  ``pytorch_model.bin``, ``bpe.model``) or its name under ``$GPUMETRICS_HOME``; never downloaded. Its preprocessing
  is ruclip's: central square crop, Pillow-exact bilinear resize (integer images give ruclip's pixels exactly).
  The AIJ-2022 ruCLIP term is ``clip_score(..., backend="ruclip", model_name="ruclip-vit-large-patch14-336",
  scale=1, clamp=False, templates="ruclip")``: the official scripts average the text features over ruclip
  ``Predictor``'s six prompt templates and do not clamp.

``pretrained="random"`` builds the exact architecture with random weights (seeded) — for tests only; the signature
then says ``weights:random``. Preprocessing always comes from the model's own configuration (hf
``preprocessor_config.json``, open_clip ``preprocess_cfg``), never a silent default, and runs as tensor ops on the
device: resize of the shortest side (bicubic, antialiased — torchvision's, as transformers' fast CLIP image
processor), center crop, rescale, normalise.

Captions longer than the text context are truncated *keeping the end-of-text token* (whose embedding is the text
feature): ``ids[:context - 1] + [eot]``. torchmetrics instead cuts at the context length and loses it. Each
``update``/``forward`` makes exactly one image-encoder call and one text-encoder call.

Images are taken as torchmetrics takes them (a batch tensor, one ``[3, H, W]`` image, or a list of images of any
sizes; 1-channel images repeated to RGB) and preprocessed as its hf processor does: integer images (uint8, int64 …,
values 0..255) give the same pixels as torchmetrics. Float images are read as [0, 1] and equal torchmetrics fed the
same images ×255 as float; torchmetrics fed [0, 1] floats divides by 255 a second time, so that is no reference.

Differences from torchmetrics: the clamp at 0 is per sample (the paper's definition), torchmetrics clamps the mean;
they agree whenever no pair has a negative cosine.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import os
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

from gpumetrics.core import REDUCTIONS, PerSampleScore, reduce_scores
from gpumetrics.core.checks import (
    as_text_list, check_bool, check_choice, check_device, check_holds_data, check_int, check_real, check_same_length,
)
from gpumetrics.core.files import expand_user
from gpumetrics.core.positions import convert_each
from gpumetrics.core.transfer import upload, upload_all
from gpumetrics.image.clip_tokens import BatchCLIPTokenizer
from gpumetrics.image.inception import check_image_layout, check_images
from gpumetrics.image.precision import PRECISIONS, SpeedMode, parse_speed_mode, precision_scope
from gpumetrics.image.weights import gpumetrics_home
from gpumetrics.kernels.ragged import pad_segments

BACKENDS = ("hf", "open_clip", "ruclip")
RANDOM = "random"
RUCLIP_TEMPLATES = (
    "{}",
    "фото, на котором изображено {}",
    "изображение с {}",
    "картинка с {}",
    "фото с {}",
    "на фото видно {}",
)
"""ruclip's ``Predictor`` prompt templates (ruclip 0.0.2), the ones the AIJ-2022 scripts' ``get_text_latents`` uses."""
TEMPLATE_PRESETS = {"ruclip": RUCLIP_TEMPLATES}


class _Preprocess:
    """Tensor image preprocessing: shortest-side resize (bicubic, antialias), center crop, scale, normalise."""

    def __init__(self, size: int, crop: tuple[int, int], mean: Sequence[float], std: Sequence[float], resize_mode: str):
        self.size, self.crop, self.mean, self.std, self.resize_mode = size, crop, tuple(mean), tuple(std), resize_mode

    def describe(self) -> str:
        return f"{self.resize_mode}{self.size}-crop{self.crop[0]}x{self.crop[1]}"

    def __call__(self, images: Tensor) -> Tensor:
        from torchvision.transforms.v2 import functional as TF

        # float in [0, 1]: resized in float, no quantisation; integer 0..255 goes to torchvision as is, which
        # rounds (uint8 also clamps) after the resize — both exactly as transformers' CLIP processor does
        if images.is_floating_point():
            images = images * 255.0
        if self.resize_mode == "squash":
            images = _resize_bicubic(images, self.crop)
        else:
            images = _resize_bicubic(images, shortest_side_size(images.shape[-2:], self.size))
            images = TF.center_crop(images, list(self.crop))
        pixels = images.float() / 255.0
        mean, std = upload_all([torch.tensor(self.mean).view(1, -1, 1, 1), torch.tensor(self.std).view(1, -1, 1, 1)],
                               pixels.device)  # queued without a host sync: the forward before it keeps running
        return (pixels - mean) / std


def shortest_side_size(height_width: Sequence[int], size: int) -> tuple[int, int]:
    """``(height, width)`` of a resize that brings the shorter side to ``size`` (torchvision's rounding: the longer
    side is ``int(size * long / short)``).

    Example:
        >>> shortest_side_size((45, 37), 224)
        (272, 224)
    """
    height, width = int(height_width[0]), int(height_width[1])
    short, long = (width, height) if width <= height else (height, width)
    new_long = int(size * long / short)
    return (new_long, size) if width <= height else (size, new_long)


def _resize_bicubic(images: Tensor, size: Sequence[int]) -> Tensor:
    """Bicubic, antialiased resize of ``Tensor[..., C, H, W]`` to ``size = (h, w)``, the same on every device.

    uint8 off the CPU goes through :func:`resize_uint8_in_passes`: there torchvision resizes it in float in one pass,
    while the CPU's uint8 kernel (PIL's algorithm, which transformers' processor follows) rounds to uint8 between
    its horizontal and vertical passes — one float pass was up to 25 grey levels off on 23 % of the pixels of noise
    images (1.6e-3 on a CLIP score), the two rounded passes stay within 2 levels on < 1 % of them."""
    from torchvision.transforms.v2 import functional as TF

    if images.dtype == torch.uint8 and images.device.type != "cpu":
        return resize_uint8_in_passes(images, size)
    return TF.resize(images, list(size), interpolation=TF.InterpolationMode.BICUBIC, antialias=True)


def resize_uint8_in_passes(images: Tensor, size: Sequence[int]) -> Tensor:
    """PIL-style bicubic antialiased resize of integer images in float: the width first, rounded and clamped to
    ``0..255``, then the height, rounded and clamped — what the CPU's uint8 kernel does, in float arithmetic (so on
    any device). Returns ``FloatTensor[..., C, h, w]`` holding integers.

    Example:
        >>> image = torch.arange(12, dtype=torch.uint8).view(1, 1, 3, 4) * 20
        >>> resize_uint8_in_passes(image, (3, 2)).tolist()
        [[[[12.0, 48.0], [92.0, 128.0], [172.0, 208.0]]]]
    """
    from torchvision.transforms.v2 import functional as TF

    pixels = images.float()
    for target in ((pixels.shape[-2], size[1]), (size[0], size[1])):
        if tuple(pixels.shape[-2:]) != tuple(target):
            pixels = TF.resize(pixels, list(target), interpolation=TF.InterpolationMode.BICUBIC, antialias=True)
            pixels = pixels.clamp_(0, 255).round_()
    return pixels


def padded_token_ids(ids: Sequence[Sequence[int]], pad_id: int, device: torch.device) -> tuple[Tensor, Tensor]:
    """``(LongTensor[B, longest] ids right-padded with pad_id, LongTensor[B] lengths)`` on ``device``: the ids go
    flat in one upload (no host sync) and are padded there.

    Example:
        >>> padded_token_ids([[5, 6, 7], [8]], 0, torch.device("cpu"))
        (tensor([[5, 6, 7],
                [8, 0, 0]]), tensor([3, 1]))
    """
    lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
    flat = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int64, count=int(lengths.sum()))
    flat_ids, row_lengths = upload_all([flat, lengths], device)
    return pad_segments(flat_ids, row_lengths, pad_id, int(lengths.max()) if len(ids) else 0), row_lengths


def _not_found(what: str, places: str, reason: str) -> FileNotFoundError:
    return FileNotFoundError(
        f"{what} not found locally ({reason}). Place it {places}; or pass `download=True` to fetch it "
        "(CLIPScore / clip_score never download unless asked)."
    )


def _hf_source(model_name: str, download: bool) -> tuple[str, dict[str, Any]]:
    """Where the hf model loads from, in order: a local directory ``model_name`` → ``$GPUMETRICS_HOME/<model_name>``
    → the Hugging Face cache (``local_files_only``: no network call at all) → the hub, only with ``download``."""
    local = expand_user(model_name)
    if local.is_dir():
        return str(local), {"local_files_only": True}
    home = gpumetrics_home()
    if home is not None and (home / model_name).is_dir():
        return str(home / model_name), {"local_files_only": True}
    return model_name, {} if download else {"local_files_only": True}


def _hf_not_found(model_name: str, error: Optional[Exception], download: bool) -> FileNotFoundError:
    home = gpumetrics_home()
    places = (
        f"as a folder written by `CLIPModel.save_pretrained` + `CLIPProcessor.save_pretrained` and pass its path as "
        f"`model_name`, or at {str(home / model_name) if home else '$GPUMETRICS_HOME/' + model_name}, or in the "
        f"Hugging Face cache (`huggingface-cli download {model_name}`; $HF_HOME / $HF_HUB_CACHE choose it)"
    )
    if download:
        reason = f"download failed: {type(error).__name__}: {str(error)[:300]}"
    else:
        reason = "not a local directory, not under $GPUMETRICS_HOME, not in the Hugging Face cache"
    return _not_found(f"hf CLIP model {model_name!r}", places, reason)


class _HFBackend(nn.Module):
    def __init__(self, model_name: str, pretrained: Optional[str], seed: int, download: bool = False) -> None:
        super().__init__()
        from transformers import AutoImageProcessor, AutoTokenizer, CLIPConfig, CLIPModel

        if pretrained not in (None, RANDOM):
            raise ValueError(f"`pretrained` of the hf backend must be None or 'random', got {pretrained!r}")
        source, options = _hf_source(model_name, download)
        try:
            if pretrained == RANDOM:
                config = CLIPConfig.from_pretrained(source, **options)
                with torch.random.fork_rng(devices=[]):
                    torch.manual_seed(seed)
                    self.model = CLIPModel(config)
            else:
                self.model = CLIPModel.from_pretrained(source, **options)
            self.tokenizer = AutoTokenizer.from_pretrained(source, **options)
            processor = AutoImageProcessor.from_pretrained(source, **options)
        except OSError as error:  # transformers' "not found locally / cannot connect" (incl. LocalEntryNotFound)
            raise _hf_not_found(model_name, error, download) from error
        self.model.eval().requires_grad_(False)
        size = processor.size.get("shortest_edge") or processor.size.get("height")
        crop = ((processor.crop_size["height"], processor.crop_size["width"]) if processor.do_center_crop
                else (size, size))
        self.preprocess = _Preprocess(size, crop, processor.image_mean, processor.image_std, "shortest")
        self.context_length = self.model.config.text_config.max_position_embeddings
        self.eot_id = self.tokenizer.eos_token_id
        self.pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else self.eot_id

    def tokenize(self, captions: list[str], device: torch.device) -> tuple[Tensor, Tensor]:
        """``(LongTensor[B, longest] ids padded with pad_id, LongTensor[B, longest] attention mask)`` on ``device``."""
        ids = self.tokenizer(captions, add_special_tokens=True, truncation=False)["input_ids"]
        limit = self.context_length
        ids = [seq if len(seq) <= limit else seq[: limit - 1] + [self.eot_id] for seq in ids]
        tokens, lengths = padded_token_ids(ids, self.pad_id, device)
        mask = (torch.arange(tokens.shape[1], device=tokens.device) < lengths[:, None]).long()
        return tokens, mask

    def forward(self, pixels: Tensor, captions: list[str]) -> tuple[Tensor, Tensor]:
        # the image tower is queued first, so that tokenising on the host overlaps it on a GPU
        image = self.model.get_image_features(pixel_values=pixels)
        tokens, mask = self.tokenize(captions, pixels.device)
        text = self.model.get_text_features(input_ids=tokens, attention_mask=mask)
        image = getattr(image, "pooler_output", image)
        text = getattr(text, "pooler_output", text)
        return image, text


def _open_clip_checkpoint(model_name: str, tag: str) -> tuple[Optional[str], dict[str, Any], list[str]]:
    """The local file of open_clip's pretrained ``tag`` without any network call: ``(path or None, the tag's
    preprocessing config, the places looked at)``; ``(None, {}, [])`` when ``tag`` is no known tag."""
    from open_clip.pretrained import get_pretrained_cfg
    from open_clip.transform import merge_preprocess_dict

    cfg = get_pretrained_cfg(model_name.replace("/", "-"), tag)
    if not cfg:
        return None, {}, []
    preprocess = merge_preprocess_dict({}, cfg)
    if cfg.get("file"):
        return cfg["file"], preprocess, [cfg["file"]]
    places = []
    if cfg.get("hf_hub"):
        from huggingface_hub import try_to_load_from_cache

        repo, filename = os.path.split(cfg["hf_hub"])
        # open_clip's order: a .safetensors twin first, then the named file
        if not filename or filename == "open_clip_pytorch_model.bin":
            names = ["open_clip_model.safetensors", "open_clip_pytorch_model.bin"]
        elif filename.endswith((".bin", ".pth")):
            names = [filename[:-4] + ".safetensors", filename]
        else:
            names = [filename]
        for name in names:
            places.append(f"the Hugging Face cache: {repo}/{name}")
            found = try_to_load_from_cache(repo, name)
            if isinstance(found, str):
                return found, preprocess, places
    if cfg.get("url"):
        target = expand_user("~/.cache/clip") / os.path.basename(cfg["url"])
        places.append(f"{target} (from {cfg['url']})")
        if target.is_file():
            return str(target), preprocess, places
    return None, preprocess, places or [f"the Hugging Face cache / ~/.cache/clip for tag {tag!r}"]


def _open_clip_hub_snapshot(repo: str) -> str:
    """``local-dir:<cached snapshot>`` of an open_clip ``hf-hub:`` model holding its config and weights, or a
    ``FileNotFoundError`` (open_clip itself would ask the network first, and build random weights when only the
    config is found)."""
    from huggingface_hub import try_to_load_from_cache

    config = try_to_load_from_cache(repo, "open_clip_config.json")
    folder = Path(config).parent if isinstance(config, str) else None
    names = ("open_clip_model.safetensors", "open_clip_pytorch_model.bin")
    if folder is None or not any((folder / name).is_file() for name in names):
        raise _not_found(
            f"open_clip model 'hf-hub:{repo}'",
            f"in the Hugging Face cache ({repo}: open_clip_config.json and {' or '.join(names)}; "
            f"`huggingface-cli download {repo}`)",
            "no cached copy",
        )
    return f"local-dir:{folder}"


def _is_file(path: Optional[str]) -> bool:
    return path is not None and os.path.isfile(path)


def _closest(name: str, names: list[str]) -> str:
    """``"closest: 'a', 'b'"`` — the known names nearest to ``name`` — or how many there are when none is near."""
    near = difflib.get_close_matches(name, names, n=3, cutoff=0.6)
    return f"closest: {', '.join(map(repr, near))}" if near else f"none of its {len(names)} names is close"


def _first_line(error: BaseException) -> str:
    return str(error).strip().split("\n", 1)[0] or type(error).__name__


def _open_clip_sources(model_name: str, pretrained: Optional[str],
                       download: bool) -> tuple[str, Optional[str], dict[str, Any]]:
    """What ``open_clip.create_model`` is given for ``model_name`` / ``pretrained``, read from the disk only (no
    weights loaded, no network call): ``(model name, weights file or tag or None, create_model options)``.

    A ``.json`` model config is registered under its file name; an ``hf-hub:`` model without ``download`` becomes
    its cached snapshot; a tag without ``download`` becomes its cached file (open_clip would ask the network first)
    with the tag's preprocessing. The build and the config-time check (:func:`check_clip_files`) both call this, so
    a config that loads finds the files its run loads.

    Raises:
        ValueError: ``model_name`` is no open_clip model (or a missing ``.json`` config); ``pretrained`` is neither a
            file, ``'random'`` nor a tag of the model. FileNotFoundError: the cached files of a tag / ``hf-hub:``
            model.
    """
    import open_clip

    if str(model_name).endswith(".json"):
        if not os.path.isfile(model_name):  # else open_clip reads it as a name and lists its 200 built-ins
            raise ValueError(f"`model_name`: open_clip model config file '{model_name}' does not exist")
        open_clip.add_model_config(model_name)
        model_name = Path(model_name).stem
    options: dict[str, Any] = {}
    weights = None if pretrained == RANDOM else pretrained
    if model_name.startswith("hf-hub:"):
        if not download:
            model_name = _open_clip_hub_snapshot(model_name[len("hf-hub:"):])
        return model_name, weights, options
    if model_name.startswith("local-dir:"):
        return model_name, weights, options
    if open_clip.get_model_config(model_name.replace("/", "-")) is None:
        raise ValueError(f"`model_name`: {model_name!r} is not an open_clip model ("
                         f"{_closest(model_name, open_clip.list_models())}; open_clip.list_models() lists them all), "
                         "nor a model config .json file")
    if weights is None or os.path.isfile(weights):
        return model_name, weights, options
    path, preprocess, places = _open_clip_checkpoint(model_name, weights)
    if not places:  # no tag of this model
        tags = open_clip.list_pretrained_tags_by_model(model_name.replace("/", "-"))
        raise ValueError(f"`pretrained`: {weights!r} is neither a file, 'random' nor a pretrained tag of open_clip "
                         f"model {model_name!r} ({_closest(weights, tags) if tags else 'it has no tags'})")
    if not download:
        if path is None:
            raise _not_found(f"open_clip weights {model_name!r} / {weights!r}", "at one of: " + "; ".join(places),
                             "no cached copy")
        weights, options = path, {"force_preprocess_cfg": preprocess}
    return model_name, weights, options


#: what the hf backend needs in a folder or the cache, one file of each group: the config, and (unless
#: ``pretrained='random'``) the weights, single or sharded, safetensors or torch. The processor's and tokenizer's
#: files are left to the build: their names vary with the transformers version that wrote the folder
_HF_CONFIG = ("config.json",)
_HF_WEIGHTS = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json", "pytorch_model.bin.index.json")


def _hf_files(model_name: str, pretrained: Optional[str]) -> None:
    """Raise unless the hf model's config and weights (:data:`_HF_CONFIG`, :data:`_HF_WEIGHTS`; no weights for
    ``pretrained='random'``) are where :func:`_hf_source` will load them from without ``download``: a local folder,
    or the Hugging Face cache."""
    needed = [_HF_CONFIG] + ([_HF_WEIGHTS] if pretrained != RANDOM else [])
    source, _ = _hf_source(model_name, False)
    folder = Path(source)
    if folder.is_dir():
        missing = [" or ".join(names) for names in needed if not any((folder / name).is_file() for name in names)]
        if missing:
            raise FileNotFoundError(
                f"`model_name`: hf CLIP folder {source!r} lacks {'; '.join(missing)} (a folder written by "
                "`CLIPModel.save_pretrained` + `CLIPProcessor.save_pretrained`; `pretrained='random'` needs no "
                "weights)"
            )
        return
    from huggingface_hub import try_to_load_from_cache

    try:
        found = all(any(isinstance(try_to_load_from_cache(model_name, name), str) for name in names)
                    for names in needed)
    except ValueError:  # huggingface_hub's HFValidationError: no valid repository id, so nothing cached under it
        found = False
    if not found:
        raise _hf_not_found(model_name, None, False)


def check_clip_files(backend: str, model_name: Any, pretrained: Optional[Any], download: bool = False) -> None:
    """Raise as building the encoder would when its files are not where it will look — reading the disk only, no
    weights loaded and no network call — so that a config naming missing CLIP files fails when it loads, before any
    task is scored. With ``download`` (hf, open_clip) only what needs no network is checked (the model name, the tag).

    Raises:
        FileNotFoundError: naming the files and the places looked at. ValueError: an unknown open_clip model or tag.
    """
    model_name = os.fspath(model_name)
    pretrained = None if pretrained is None else os.fspath(pretrained)
    if backend == "hf":
        if not download:
            _hf_files(model_name, pretrained)
    elif backend == "open_clip":
        _open_clip_sources(model_name, pretrained, download)
    else:
        from gpumetrics.image import ruclip

        ruclip.ruclip_files(model_name, pretrained)


class _OpenCLIPBackend(nn.Module):
    def __init__(self, model_name: str, pretrained: Optional[str], seed: int, download: bool = False) -> None:
        super().__init__()
        import open_clip

        model_name, weights, options = _open_clip_sources(model_name, pretrained, download)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            try:
                self.model = open_clip.create_model(model_name, pretrained=weights, **options)
            except Exception as error:
                # open_clip's words for an unknown architecture or tag (names and tags are checked before, in
                # _open_clip_sources: what is left are hub snapshots and downloads)
                name = "model_name" if "Model config for" in str(error) else "pretrained" \
                    if "Pretrained value" in str(error) else None
                if isinstance(error, RuntimeError) and name is not None:
                    raise ValueError(f"`{name}`: {error}") from None
                if not _is_file(weights):  # else torch.load / safetensors of a --pretrained file that is no checkpoint
                    raise
                raise ValueError(f"`pretrained`: {str(weights)!r} is not an open_clip checkpoint of {model_name!r} "
                                 f"({type(error).__name__}: {_first_line(error)})") from None
        self.model.eval().requires_grad_(False)
        self.tokenizer = BatchCLIPTokenizer(open_clip.get_tokenizer(model_name))  # the same ids, batch-wise
        cfg = self.model.visual.preprocess_cfg
        size = cfg["size"] if isinstance(cfg["size"], int) else cfg["size"][0]
        crop = (size, size) if isinstance(cfg["size"], int) else tuple(cfg["size"])
        if (cfg.get("interpolation", "bicubic") != "bicubic"
                or cfg.get("resize_mode", "shortest") not in ("shortest", "squash")):
            raise ValueError(f"unsupported open_clip preprocessing {cfg}; "
                             "only bicubic shortest/squash resizes are exact")
        self.preprocess = _Preprocess(size, crop, cfg["mean"], cfg["std"], cfg.get("resize_mode", "shortest"))

    def forward(self, pixels: Tensor, captions: list[str]) -> tuple[Tensor, Tensor]:
        image = self.model.encode_image(pixels)  # queued first: tokenising on the host overlaps it on a GPU
        # open_clip's tokenizer truncates to the context and puts the end-of-text token last
        tokens = upload(self.tokenizer(captions), pixels.device)
        return image, self.model.encode_text(tokens)


class _RuCLIPBackend(nn.Module):
    """ruCLIP (:mod:`gpumetrics.image.ruclip`): our torch port of ruclip's model, its YouTokenToMe BPE, its image
    transform; loaded from a local folder only."""

    def __init__(self, model_name: str, pretrained: Optional[str], seed: int, download: bool = False) -> None:
        super().__init__()
        from gpumetrics.image import ruclip

        if download:
            raise ValueError("`download=True` is not available for the ruclip backend: place the checkpoint folder "
                             "locally (config.json, pytorch_model.bin, bpe.model) and pass its path as `model_name`")
        self.model, self.tokenizer, config, self.weights_tag = ruclip.load_ruclip(model_name, pretrained, seed)
        self.context_length = config["context_length"]
        self.preprocess = ruclip.RuCLIPPreprocess(
            config["image_resolution"], config.get("mean") or ruclip.OPENAI_MEAN, config.get("std") or ruclip.OPENAI_STD
        )

    def tokenize(self, captions: list[str], device: torch.device) -> tuple[Tensor, Tensor]:
        """``(LongTensor[B, L] ids padded with 0, LongTensor[B] lengths)``: ruclip's processor ids, padded to the
        longest caption of the batch rather than to the context (the causal text encoder gives the same features)."""
        from gpumetrics.image import ruclip

        return padded_token_ids(ruclip.ruclip_token_ids(self.tokenizer, captions, self.context_length), ruclip.PAD_ID,
                                device)

    def forward(self, pixels: Tensor, captions: list[str]) -> tuple[Tensor, Tensor]:
        image = self.model.encode_image(pixels)  # queued first: tokenising on the host overlaps it on a GPU
        tokens, lengths = self.tokenize(captions, pixels.device)
        return image, self.model.encode_text(tokens, lengths)


def check_clip_options(
    backend: Any, model_name: Any, pretrained: Any, seed: Any = 0, download: Any = False, templates: Any = None,
    speed_mode: Any = None,
) -> None:
    """Every check of the CLIP options that needs no model: values, types, and whether the model's files are where
    the build will look (:func:`check_clip_files`). Raises ``ValueError``, ``TypeError`` or ``FileNotFoundError``
    naming the argument."""
    check_choice(backend, "backend", BACKENDS)
    _check_templates(templates)
    _check_speed_mode(speed_mode)
    check_bool(download, "download")
    check_int(seed, "seed")
    if not isinstance(model_name, (str, os.PathLike)):
        raise TypeError(f"`model_name` must be a string or path, got {type(model_name).__name__}")
    if pretrained is not None and not isinstance(pretrained, (str, os.PathLike)):
        raise TypeError(f"`pretrained` must be a tag, a path, 'random' or None, got {type(pretrained).__name__}")
    if backend == "open_clip" and pretrained is None:
        raise ValueError("the open_clip backend needs `pretrained`: a tag (e.g. 'openai'), a file, or 'random'")
    if backend == "ruclip" and download:
        raise ValueError("`download=True` is not available for the ruclip backend (it loads from a local folder only)")
    check_clip_files(backend, model_name, pretrained, download)


def _build_backend(
    backend: str, model_name: str, pretrained: Optional[str], seed: int, download: bool = False
) -> nn.Module:
    cls = {"hf": _HFBackend, "open_clip": _OpenCLIPBackend, "ruclip": _RuCLIPBackend}[backend]
    return cls(os.fspath(model_name), None if pretrained is None else os.fspath(pretrained), seed, download)


@functools.lru_cache(maxsize=4)
def _cached_backend(
    backend: str, model_name: str, pretrained: Optional[str], seed: int, download: bool, device: torch.device
) -> nn.Module:
    return _build_backend(backend, model_name, pretrained, seed, download).to(device)


def _device_of(images: Any) -> torch.device:
    """Where ``clip_score`` runs without a ``device``: the images' device (the first image's for a list), else the
    CPU."""
    first = images[0] if isinstance(images, (list, tuple)) and images else images
    return first.device if isinstance(first, Tensor) else torch.device("cpu")


def _check_speed_mode(speed_mode: Any) -> SpeedMode:
    """The encoders' precision (:mod:`gpumetrics.image.precision`): ``None`` (true float32), ``"tf32"``, ``"bf16"`` or
    ``"fp16"``; layout parts do not apply to them."""
    return parse_speed_mode(speed_mode, "speed_mode", PRECISIONS)


def _check_templates(templates: Any) -> Optional[tuple[str, ...]]:
    """None, a preset name (``"ruclip"``) or a non-empty sequence of format strings with one ``{}`` each."""
    if templates is None:
        return None
    if isinstance(templates, str):
        if templates not in TEMPLATE_PRESETS:
            raise ValueError(f"`templates` must be None, one of {sorted(TEMPLATE_PRESETS)} or a list of format "
                             f"strings with one '{{}}', got {templates!r}")
        return TEMPLATE_PRESETS[templates]
    if not isinstance(templates, (list, tuple)) or not templates:
        raise ValueError(f"`templates` must be None, a preset name or a non-empty list of strings, got {templates!r}")
    for template in templates:
        if not isinstance(template, str) or template.count("{}") != 1:
            raise ValueError(f"`templates` entries must be strings with exactly one '{{}}', got {template!r}")
        try:
            template.format("x")
        except (IndexError, KeyError, ValueError) as error:
            raise ValueError(f"`templates` entry {template!r} is not a format string with one '{{}}': "
                             f"{error}") from None
    return tuple(templates)


def check_scale(scale: Any) -> float:
    return check_real(scale, "scale", above=0, hint="100, 2.5 or 1")  # inf: every score was inf


def _checked_images(images: Any, name: str) -> Tensor:
    """``Tensor[B, C, H, W]`` or one ``Tensor[C, H, W]`` with C = 3 (or 1, repeated as the hf processor does);
    float in [0, 1], or any integer dtype holding 0..255 (kept integer: it is resized as such)."""
    if isinstance(images, Tensor):
        check_holds_data(images, name)
        if images.ndim == 3:
            images = images.unsqueeze(0)
        if images.ndim == 4 and images.shape[1] == 1:
            images = images.expand(-1, 3, -1, -1)
        if images.dtype != torch.bool and not images.is_floating_point() and not images.is_complex():
            if images.dtype != torch.uint8 and images.numel():
                low, high = (int(v) for v in torch.aminmax(images))
                if low < 0 or high > 255:
                    raise ValueError(f"`{name}` of integer dtype must hold values in 0..255, got range [{low}, {high}]")
            check_image_layout(images, name)
            return images
    return check_images(images, name)


def _preprocessed(images: Any, preprocess: "_Preprocess", device: torch.device) -> Tensor:
    """Model-ready pixels ``Tensor[N, 3, h, w]`` from a batch tensor, one image, or a list of images of any sizes."""
    if not isinstance(images, (list, tuple)):
        return preprocess(_checked_images(images, "images").to(device))
    if len(images) == 0:
        raise ValueError("`images` is empty (an empty list)")
    batch = convert_each(_checked_images, images, "images[{}]".format)
    groups: dict[tuple, list[int]] = {}
    for i, image in enumerate(batch):  # one resize call per distinct size, as the hf processor groups them
        groups.setdefault((tuple(image.shape[1:]), image.dtype), []).append(i)
    rows: list[Optional[Tensor]] = [None] * len(batch)
    for indices in groups.values():
        pixels = preprocess(torch.cat([batch[i] for i in indices]).to(device))
        for row, i in enumerate(indices):
            rows[i] = pixels[row]
    return torch.stack(rows)  # type: ignore[arg-type]


def _clip_score_update(
    images: Any, captions: Any, encoder: nn.Module, scale: float, clamp: bool = True,
    templates: Optional[Sequence[str]] = None, speed: SpeedMode = SpeedMode(),
) -> Tensor:
    """Per-pair ``max(scale·cos, 0)`` (``scale·cos`` without ``clamp``), ``DoubleTensor[B]``, one encoder call for
    the batch. With ``templates`` (T of them) the text feature of a caption is the mean of the (unnormalised) features
    of ``template.format(caption.lower().strip())`` over the templates — ruclip's ``Predictor.get_text_latents``."""
    captions = as_text_list(captions, "captions")
    weight = next(encoder.parameters())
    device = weight.device
    # float32 pixels, in the encoder's dtype after `set_dtype` (as FID's Inception takes them)
    pixels = _preprocessed(images, encoder.preprocess, device).to(weight.dtype)
    check_same_length(range(pixels.shape[0]), "images", captions, "captions")
    texts = captions if templates is None else [t.format(c.lower().strip()) for t in templates for c in captions]
    with torch.no_grad(), precision_scope(speed, device.type):
        image, text = encoder(pixels, texts)
    if templates is not None:
        text = text.view(len(templates), len(captions), -1).mean(dim=0)
    cosine = F.cosine_similarity(image.double(), text.double(), dim=-1)
    return (scale * cosine).clamp(min=0) if clamp else scale * cosine


_EMPTY = "CLIP score needs at least one image–caption pair: call update(images, captions) first"


def clip_score(
    images: Tensor,
    captions: Union[str, Sequence[str]],
    backend: str = "hf",
    model_name: str = "openai/clip-vit-base-patch32",
    pretrained: Optional[str] = None,
    scale: float = 100.0,
    seed: int = 0,
    download: bool = False,
    reduction: str = "mean",
    clamp: bool = True,
    templates: Optional[Union[str, Sequence[str]]] = None,
    speed_mode: Optional[str] = None,
    device: Optional[Union[str, torch.device]] = None,
) -> Tensor:
    """CLIP score of image–caption pairs (the model is built once per argument set and device, and cached).

    Args:
        images: ``Tensor[B, 3, H, W]``, one ``Tensor[3, H, W]``, or a list of ``Tensor[3, H, W]`` of any sizes;
            float in [0, 1] or an integer dtype holding 0..255 (1 channel is repeated to RGB).
        captions: ``B`` strings (one string for one image).
        backend, model_name, pretrained, scale, seed, download, reduction, clamp, templates, speed_mode: see
            ``CLIPScore``.
        device: where the encoders run and the scores live; ``None``: the images' device.

    Returns:
        0-d float64 tensor: mean (or sum) of ``max(scale · cos, 0)`` (``scale · cos`` with ``clamp=False``);
        ``DoubleTensor[B]`` for ``reduction="none"``.

    Raises:
        ValueError: no image–caption pair (for every reduction), or an unknown option.

    Example:
        >>> import gpumetrics.image.clip_score as cs, json, os, tempfile
        >>> config = os.path.join(tempfile.mkdtemp(), "tiny-clip.json")
        >>> json.dump({"embed_dim": 16, "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16,
        ...                                            "head_width": 16},
        ...            "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1}},
        ...           open(config, "w"))
        >>> images = torch.zeros(2, 3, 40, 50, dtype=torch.uint8)
        >>> value = clip_score(images, ["a cat", "a dog"], "open_clip", config, "random", scale=1)
        >>> 0 <= float(value) <= 1
        True
    """
    check_choice(reduction, "reduction", REDUCTIONS)
    scale, clamp, templates = check_scale(scale), check_bool(clamp, "clamp"), _check_templates(templates)
    speed = _check_speed_mode(speed_mode)
    target = _device_of(images) if device is None else check_device(device)
    # before the cache: an unhashable option or a model_name that is no path failed there, naming nothing
    check_clip_options(backend, model_name, pretrained, seed, download)
    encoder = _cached_backend(backend, os.fspath(model_name), pretrained, seed, download, target)
    return reduce_scores(_clip_score_update(images, captions, encoder, scale, clamp, templates, speed), reduction,
                         _EMPTY)


class CLIPScore(PerSampleScore):
    """CLIP score accumulated over batches (:class:`~gpumetrics.core.PerSampleScore`): float64 sum of per-pair
    scores and a count (all-reduced under DDP), and the per-pair ``scores`` for ``reduction="none"``.

    Args:
        backend: ``"hf"`` (transformers ``CLIPModel``), ``"open_clip"`` or ``"ruclip"`` (ruCLIP,
            :mod:`gpumetrics.image.ruclip`).
        model_name: hf hub id / local directory, open_clip architecture / config-JSON path, or ruclip: a ruCLIP
            checkpoint folder (``config.json``, ``pytorch_model.bin``, ``bpe.model``) or its name
            (``ruclip-vit-large-patch14-336``) found under ``$GPUMETRICS_HOME`` / ruclip's ``/tmp/ruclip`` cache / the
            Hugging Face cache.
        pretrained: hf: None (weights of ``model_name``) or ``"random"``; open_clip: a tag, a checkpoint file, or
            ``"random"``; ruclip: None (the folder's ``pytorch_model.bin``), a state_dict file, or ``"random"`` (the
            folder then needs only ``config.json`` and ``bpe.model``). ``"random"`` is for tests only and the
            signature says so.
        scale: 100 (torchmetrics), 1 (raw cosine, AIJ-2022) or 2.5 (CLIPScore paper); any positive number.
        seed: seed of ``pretrained="random"``.
        download: allow fetching the model from the network (Hugging Face hub, open_clip's URLs). Default False:
            the model loads from a local directory / file, ``$GPUMETRICS_HOME/<model_name>`` (hf) or the Hugging
            Face / open_clip cache without any network call, else a ``FileNotFoundError`` says where to put it.
        reduction: ``"mean"`` (default), ``"sum"`` or ``"none"`` (``DoubleTensor[N]``, in update order).
        clamp: ``max(·, 0)`` of each pair (default, the CLIPScore paper, torchmetrics). ``False`` keeps negative
            cosines: the AIJ-2022 ruCLIP term (``scale=1, clamp=False, templates="ruclip"``).
        templates: None (the caption itself), ``"ruclip"`` (ruclip ``Predictor``'s six Russian prompts) or a list
            of format strings with one ``{}``: the text feature is then the mean of the unnormalised features of
            ``template.format(caption.lower().strip())`` over the templates (ruclip's ``get_text_latents``); one
            text-encoder call of ``T·B`` texts per batch.
        speed_mode: the encoders' precision (:mod:`gpumetrics.image.precision`): ``None`` (default) — true float32
            on every device (TF32 off during the forward, the caller's flags restored), so a GPU gives the CPU's score
            to float32 rounding; opt-in ``"tf32"``, ``"bf16"`` or ``"fp16"`` (autocast), in the signature as
            ``speed:<mode>``. Tested bound on the score (scale 1): 5e-3 absolute for bf16, 2e-3 for fp16 and tf32.
        kwargs: the ``Metric`` base options (torchmetrics' names: ``sync_on_compute``, ``dist_sync_fn`` …).

    Raises:
        FileNotFoundError: no local or cached copy of the model and ``download=False`` (at once, no retries).
        ValueError: ``compute()`` before any image–caption pair (every reduction: a CLIP score of 0 would pass for
            a real value).

    Example:
        >>> import json, os, tempfile
        >>> config = os.path.join(tempfile.mkdtemp(), "tiny-clip.json")
        >>> json.dump({"embed_dim": 16, "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16,
        ...                                            "head_width": 16},
        ...            "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1}},
        ...           open(config, "w"))
        >>> metric = CLIPScore("open_clip", config, pretrained="random", scale=2.5)
        >>> metric.update(torch.rand(2, 3, 64, 48), ["a red square", "пустая комната 🙂"])
        >>> 0 <= float(metric.compute()) <= 2.5
        True
        >>> metric.signature().split("|")[:4]
        ['clip_score', 'backend:open_clip', 'model:tiny-clip', 'weights:random']
    """

    higher_is_better = True
    is_differentiable = False
    full_state_update = False
    signature_name = "clip_score"
    empty_error = _EMPTY

    def __init__(
        self,
        backend: str = "hf",
        model_name: str = "openai/clip-vit-base-patch32",
        pretrained: Optional[str] = None,
        scale: float = 100.0,
        seed: int = 0,
        download: bool = False,
        reduction: str = "mean",
        clamp: bool = True,
        templates: Optional[Union[str, Sequence[str]]] = None,
        speed_mode: Optional[str] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(reduction=reduction, **kwargs)
        self.scale, self.clamp, self.templates, self.speed = CLIPScore._checked(
            backend, model_name, pretrained, scale, seed, download, reduction, clamp, templates, speed_mode)
        self.templates_name = templates if isinstance(templates, str) or templates is None else "custom"
        self.encoder = _build_backend(backend, model_name, pretrained, seed, download)
        self.backend, self.model_name, self.pretrained, self.seed = backend, os.fspath(model_name), pretrained, seed

    @staticmethod
    def _checked(backend: Any, model_name: Any, pretrained: Any, scale: Any, seed: Any, download: Any,
                 reduction: Any, clamp: Any, templates: Any,
                 speed_mode: Any) -> tuple[float, bool, Optional[tuple[str, ...]], SpeedMode]:
        """The option checks that need no model — the one list ``__init__`` and :meth:`check_options` run — and the
        values ``__init__`` keeps: ``(scale, clamp, templates, speed)``."""
        check_choice(reduction, "reduction", REDUCTIONS)
        scale, clamp = check_scale(scale), check_bool(clamp, "clamp")
        speed, parsed_templates = _check_speed_mode(speed_mode), _check_templates(templates)
        check_clip_options(backend, model_name, pretrained, seed, download, templates, speed_mode)
        return scale, clamp, parsed_templates, speed

    @classmethod
    def check_options(cls, options: dict[str, Any]) -> None:
        """The constructor's checks that need no model, so that a config fails when it loads: ``options`` holds every
        ``__init__`` option by name (bound with their defaults by the caller)."""
        CLIPScore._checked(options["backend"], options["model_name"], options["pretrained"], options["scale"],
                           options["seed"], options["download"], options["reduction"], options["clamp"],
                           options["templates"], options["speed_mode"])

    def _signature_fields(self) -> dict[str, Any]:
        name = Path(self.model_name).stem if self.model_name.endswith(".json") else self.model_name
        if self.backend == "ruclip":  # a folder: its name; a config.json: its folder's name
            path = Path(self.model_name)
            name = path.parent.name if path.name == "config.json" else path.name
        if self.pretrained == RANDOM:
            weights = RANDOM if self.seed == 0 else f"random(seed={self.seed})"
        elif self.backend == "ruclip":
            weights = self.encoder.weights_tag
        else:
            weights = self.pretrained or "hub"
        fields = {
            "backend": self.backend, "model": name, "weights": weights, "scale": f"{self.scale:g}",
            "preprocess": self.encoder.preprocess.describe(), "clamp": "per-sample" if self.clamp else "none",
        }
        if self.templates is not None:
            fields["templates"] = f"{self.templates_name}{len(self.templates)}"
        if self.speed.name is not None:
            fields["speed"] = self.speed.name
        return fields

    def update(self, images: Tensor, captions: Union[str, Sequence[str]]) -> None:
        """Add pairs: ``images`` as in :func:`clip_score` (``Tensor[B, 3, H, W]``, one image, or a list of images of
        any sizes; float in [0, 1] or integers 0..255) and ``B`` captions."""
        self._accumulate(
            _clip_score_update(images, captions, self.encoder, self.scale, self.clamp, self.templates, self.speed)
        )

    def compute(self) -> Tensor:
        """Mean (or sum) of ``max(scale · cos, 0)`` (``scale · cos`` with ``clamp=False``): 0-d float64 tensor;
        ``DoubleTensor[N]`` for ``"none"``."""
        return super().compute()

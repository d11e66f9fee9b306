r"""ruCLIP (ai-forever / sberbank-ai ``ru-clip``, PyPI ``ruclip`` 0.0.2) in plain torch: model, tokenizer,
preprocessing.

A ruCLIP checkpoint is a folder (``ruclip-vit-large-patch14-336`` is the one AIJ-2022 scores with)::

    config.json        embed_dim, image_resolution, vision_layers, vision_width, vision_patch_size, context_length,
                       vocab_size, transformer_width, transformer_heads, transformer_layers[, mean, std]
    pytorch_model.bin  the state_dict of ruclip's ``model.CLIP`` (OpenAI CLIP's ViT layout)
    bpe.model          the YouTokenToMe BPE (read by :class:`~gpumetrics.text.tokenize.yttm.YTTMBPE`, no youtokentome)

:class:`RuCLIP` builds the same network from ``config.json`` and loads that state_dict unchanged (same parameter
names); its ``encode_image`` / ``encode_text`` give ruclip's ``encode_image`` / ``encode_text`` features. As in
ruclip, the vision tower has ``vision_width // 64`` heads and the text feature is read at the end-of-text id 3.
Layer norms compute in float32 for half-precision inputs (ruclip casts them), otherwise in the input's dtype, so a
float64 model runs in float64 throughout. Text is encoded only up to the longest caption of the batch: attention is
causal, so the feature at the end-of-text token does not depend on the padding after it.

Text (ruclip's ``RuCLIPProcessor.encode_text``): lower-cased, BPE ids cut to ``context_length - 2``, then
``[bos=2] + ids + [eos=3]`` (padding id 0). Images (its ``image_transform``): the central square of side
``min(H, W)`` (offsets ``(H - side) // 2``, ``(W - side) // 2``: torchvision's ``RandomResizedCrop(scale=(1, 1),
ratio=(1, 1))`` falls back to that crop for every non-square image except ``|H - W| = 1``, where it picks one of the
two offsets at random — we take 0), resized to ``image_resolution``² bilinear with antialiasing (PIL's filter),
scaled to [0, 1], normalised by ``mean`` / ``std`` (config, default OpenAI CLIP's).

Where the folder is found, in order (no download: ruclip's own ``load`` fetches from the Hugging Face hub, we never
do): ``model_name`` as a folder (or a ``config.json`` in one) → ``$GPUMETRICS_HOME/<model_name>`` → ruclip's cache
``/tmp/ruclip/<model_name>`` → the Hugging Face cache of ``ai-forever/<model_name>`` or ``sberbank-ai/<model_name>``
→ a ``FileNotFoundError`` saying where to put the three files.

Example:
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> from gpumetrics import CLIPScore
    >>> folder = Path(tempfile.mkdtemp()) / "tiny-ruclip"
    >>> folder.mkdir()
    >>> _ = (folder / "config.json").write_text(json.dumps({"embed_dim": 8, "image_resolution": 32,
    ...     "vision_layers": 1, "vision_width": 64, "vision_patch_size": 16, "context_length": 16, "vocab_size": 64,
    ...     "transformer_width": 32, "transformer_heads": 2, "transformer_layers": 1}))
    >>> # a YouTokenToMe model: "▁" and 7 Cyrillic letters (ids 4-11), one merge rule, then unk pad bos eos ids
    >>> letters = "\n".join(f"{ord(c)} {4 + i}" for i, c in enumerate("\u2581котпёса"))
    >>> _ = (folder / "bpe.model").write_text(f"8 1\n{letters}\n5 6 12\n1 0 2 3\n")
    >>> metric = CLIPScore("ruclip", folder, pretrained="random", scale=1, clamp=False, templates="ruclip")
    >>> metric.update(torch.randint(0, 256, (2, 3, 40, 30), dtype=torch.uint8), ["Кот", "пёс на фото"])
    >>> -1 <= float(metric.compute()) <= 1
    True
    >>> metric.signature().split("|")[1:4]
    ['backend:ruclip', 'model:tiny-ruclip', 'weights:random']
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from gpumetrics.core.files import expand_user
from gpumetrics.image.resize import pil_bilinear_resize
from gpumetrics.image.weights import file_sha256, gpumetrics_home, read_state_dict
from gpumetrics.text.tokenize.yttm import YTTMBPE

CONFIG_FILE, WEIGHTS_FILE, BPE_FILE = "config.json", "pytorch_model.bin", "bpe.model"
CONFIG_KEYS = (
    "embed_dim", "image_resolution", "vision_layers", "vision_width", "vision_patch_size", "context_length",
    "vocab_size", "transformer_width", "transformer_heads", "transformer_layers",
)
PAD_ID, UNK_ID, BOS_ID, EOS_ID = 0, 1, 2, 3  # ruclip's RuCLIPProcessor / CLIP(eos_id=3) constants
OPENAI_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_STD = (0.26862954, 0.26130258, 0.27577711)
HUB_OWNERS = ("ai-forever", "sberbank-ai")
RUCLIP_CACHE = Path("/tmp/ruclip")  # ruclip.load's default cache_dir


# ------------------------------------------------------------------------------------------------- the network


class _LayerNorm(nn.LayerNorm):
    """LayerNorm in float32 for half-precision inputs (as ruclip), in the input dtype otherwise."""

    def forward(self, x: Tensor) -> Tensor:
        if x.dtype in (torch.float16, torch.bfloat16):
            return F.layer_norm(x.float(), self.normalized_shape, self.weight.float(), self.bias.float(), self.eps).to(
                x.dtype
            )
        return super().forward(x)


class _SelfAttention(nn.Module):
    """Multi-head self-attention holding ``nn.MultiheadAttention``'s parameters (``in_proj_weight``,
    ``in_proj_bias``, ``out_proj``), batch-first: ``Tensor[B, L, D] -> Tensor[B, L, D]``."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.in_proj_weight = nn.Parameter(torch.empty(3 * width, width))
        self.in_proj_bias = nn.Parameter(torch.zeros(3 * width))
        self.out_proj = nn.Linear(width, width)
        nn.init.xavier_uniform_(self.in_proj_weight)

    def forward(self, x: Tensor, causal: bool) -> Tensor:
        batch, length, width = x.shape
        qkv = F.linear(x, self.in_proj_weight, self.in_proj_bias)
        qkv = qkv.view(batch, length, 3, self.heads, width // self.heads).permute(2, 0, 3, 1, 4)
        out = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], is_causal=causal)
        return self.out_proj(out.transpose(1, 2).reshape(batch, length, width))


class _Block(nn.Module):
    """Pre-norm residual block: attention, then an MLP ``width → 4·width → width`` with QuickGELU."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.attn = _SelfAttention(width, heads)
        self.ln_1 = _LayerNorm(width)
        self.mlp = nn.ModuleDict({"c_fc": nn.Linear(width, 4 * width), "c_proj": nn.Linear(4 * width, width)})
        self.ln_2 = _LayerNorm(width)

    def forward(self, x: Tensor, causal: bool) -> Tensor:
        x = x + self.attn(self.ln_1(x), causal)
        hidden = self.mlp["c_fc"](self.ln_2(x))
        return x + self.mlp["c_proj"](hidden * torch.sigmoid(1.702 * hidden))


class _Tower(nn.Module):
    def __init__(self, width: int, layers: int, heads: int) -> None:
        super().__init__()
        if width % heads:
            raise ValueError(f"a transformer of width {width} cannot have {heads} heads (width % heads != 0)")
        self.resblocks = nn.ModuleList(_Block(width, heads) for _ in range(layers))

    def forward(self, x: Tensor, causal: bool) -> Tensor:
        for block in self.resblocks:
            x = block(x, causal)
        return x


class _Vision(nn.Module):
    def __init__(self, resolution: int, patch: int, width: int, layers: int, output_dim: int) -> None:
        super().__init__()
        if width < 64 or width % 64:
            raise ValueError(f"`vision_width` must be a multiple of 64 (ruclip uses width // 64 heads), got {width}")
        self.conv1 = nn.Conv2d(3, width, kernel_size=patch, stride=patch, bias=False)
        self.class_embedding = nn.Parameter(torch.randn(width) * width**-0.5)
        self.positional_embedding = nn.Parameter(torch.randn((resolution // patch) ** 2 + 1, width) * width**-0.5)
        self.ln_pre = _LayerNorm(width)
        self.transformer = _Tower(width, layers, width // 64)
        self.ln_post = _LayerNorm(width)
        self.proj = nn.Parameter(torch.randn(width, output_dim) * width**-0.5)

    def forward(self, pixels: Tensor) -> Tensor:
        x = self.conv1(pixels).flatten(2).transpose(1, 2)  # [B, grid², width]
        cls = self.class_embedding.to(x.dtype).expand(x.shape[0], 1, -1)
        x = self.ln_pre(torch.cat([cls, x], dim=1) + self.positional_embedding.to(x.dtype))
        x = self.transformer(x, causal=False)
        return self.ln_post(x[:, 0]) @ self.proj


class RuCLIP(nn.Module):
    """ruclip's ``model.CLIP`` (same parameter names and features), built from a ``config.json`` dict.

    Args:
        config: the ``config.json`` keys in ``CONFIG_KEYS`` (``mean``/``std`` and unknown keys are ignored here).

    Raises:
        ValueError: a key is missing or not a positive int, or the widths do not split into heads.

    Example:
        >>> config = {"embed_dim": 8, "image_resolution": 32, "vision_layers": 1, "vision_width": 64,
        ...           "vision_patch_size": 16, "context_length": 12, "vocab_size": 50, "transformer_width": 32,
        ...           "transformer_heads": 2, "transformer_layers": 1}
        >>> model = RuCLIP(config).eval()
        >>> model.encode_image(torch.rand(2, 3, 32, 32)).shape, model.encode_text(torch.tensor([[2, 7, 3]])).shape
        (torch.Size([2, 8]), torch.Size([1, 8]))
    """

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__()
        check_config(config)
        c = config
        self.context_length = c["context_length"]
        self.visual = _Vision(c["image_resolution"], c["vision_patch_size"], c["vision_width"], c["vision_layers"],
                              c["embed_dim"])
        width = c["transformer_width"]
        self.transformer = _Tower(width, c["transformer_layers"], c["transformer_heads"])
        self.token_embedding = nn.Embedding(c["vocab_size"], width)
        self.positional_embedding = nn.Parameter(torch.randn(self.context_length, width) * 0.01)
        self.ln_final = _LayerNorm(width)
        self.text_projection = nn.Parameter(torch.randn(width, c["embed_dim"]) * width**-0.5)
        self.logit_scale = nn.Parameter(torch.tensor(float(torch.log(torch.tensor(1 / 0.07)))))
        nn.init.normal_(self.token_embedding.weight, std=0.02)

    @property
    def dtype(self) -> torch.dtype:
        return self.visual.conv1.weight.dtype

    def encode_image(self, pixels: Tensor) -> Tensor:
        """``Tensor[B, 3, R, R]`` normalised pixels → image features ``Tensor[B, embed_dim]`` (not normalised)."""
        return self.visual(pixels.to(self.dtype))

    def encode_text(self, tokens: Tensor, lengths: Optional[Tensor] = None) -> Tensor:
        """``LongTensor[B, L]`` ids (``L ≤ context_length``) → text features ``Tensor[B, embed_dim]``, read at the
        end-of-text token: position ``lengths - 1`` when given, else the first id 3 of each row (ruclip)."""
        if tokens.shape[1] > self.context_length:
            raise ValueError(f"`tokens` has {tokens.shape[1]} positions, the context is {self.context_length}")
        if lengths is None:
            found = tokens == EOS_ID
            if not bool(found.any(dim=1).all()):
                raise ValueError("every row of `tokens` needs the end-of-text id 3")
            lengths = found.int().argmax(dim=1) + 1
        x = self.token_embedding(tokens).to(self.dtype) + self.positional_embedding[: tokens.shape[1]].to(self.dtype)
        x = self.ln_final(self.transformer(x, causal=True))
        rows = torch.arange(x.shape[0], device=x.device)
        return x[rows, lengths.to(x.device) - 1] @ self.text_projection


def check_config(config: Any, source: str = "config") -> None:
    """``ValueError`` naming the first missing / invalid ``config.json`` key."""
    if not isinstance(config, dict):
        raise ValueError(f"{source} must be a JSON object, got {type(config).__name__}")
    for key in CONFIG_KEYS:
        value = config.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{source}: `{key}` must be a positive int, got {value!r}")
    for key in ("mean", "std"):
        value = config.get(key)
        if value is not None and (
            not isinstance(value, (list, tuple)) or len(value) != 3
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
            or (key == "std" and not all(v > 0 for v in value))
        ):
            raise ValueError(f"{source}: `{key}` must be 3 numbers{' > 0' if key == 'std' else ''}, got {value!r}")


# ------------------------------------------------------------------------------------------------- preprocessing

class RuCLIPPreprocess:
    """ruclip's image transform as tensor ops: central square crop, Pillow-bilinear resize, [0, 1], normalise.

    ``images``: ``Tensor[N, 3, H, W]``, integers 0..255 (pixels equal to ruclip's processor fed the same image as a
    PIL image) or float in [0, 1] (read as values ×255, resized without quantisation). Returns ``Tensor[N, 3, R, R]``
    float32.
    """

    def __init__(self, size: int, mean: Sequence[float], std: Sequence[float]) -> None:
        self.size, self.mean, self.std = size, tuple(mean), tuple(std)

    def describe(self) -> str:
        return f"squarecrop-pilbilinear{self.size}"

    def __call__(self, images: Tensor) -> Tensor:
        height, width = images.shape[-2:]
        side = min(height, width)
        top, left = (height - side) // 2, (width - side) // 2
        square = images[..., top : top + side, left : left + side]
        if square.is_floating_point():
            square = square * 255.0
        pixels = (pil_bilinear_resize(square, (self.size, self.size)) / 255.0).float()
        mean = torch.tensor(self.mean, device=pixels.device).view(1, -1, 1, 1)
        std = torch.tensor(self.std, device=pixels.device).view(1, -1, 1, 1)
        return (pixels - mean) / std


# ------------------------------------------------------------------------------------------------- the checkpoint


def candidate_folders(model_name: str) -> list[Path]:
    """Where a ruCLIP folder named ``model_name`` is looked for, after ``model_name`` itself as a path."""
    places = []
    home = gpumetrics_home()
    if home is not None:
        places.append(home / model_name)
    places.append(RUCLIP_CACHE / model_name)
    return places


def _hub_snapshot(model_name: str, needed: Sequence[str]) -> Optional[Path]:
    """A Hugging Face cache snapshot of ``ai-forever/<name>`` or ``sberbank-ai/<name>`` holding ``needed`` files."""
    if "/" in model_name.strip("/") and not model_name.startswith(HUB_OWNERS):
        return None
    try:
        from huggingface_hub import try_to_load_from_cache
    except ImportError:  # pragma: no cover - transformers brings it
        return None
    name = model_name.rsplit("/", 1)[-1]
    repos = [model_name] if "/" in model_name else [f"{owner}/{name}" for owner in HUB_OWNERS]
    for repo in repos:
        config = try_to_load_from_cache(repo, CONFIG_FILE)
        if isinstance(config, str) and all((Path(config).parent / n).is_file() for n in needed):
            return Path(config).parent
    return None


def find_folder(model_name: str, needed: Sequence[str]) -> Path:
    """The ruCLIP folder of ``model_name`` holding the ``needed`` files (load order in the module docstring).

    Raises:
        FileNotFoundError: no such folder; the message lists the places and the files to put there.
    """
    path = expand_user(model_name)
    if path.is_file() and path.name == CONFIG_FILE:
        path = path.parent
    looked = []
    if path.is_dir():
        missing = [n for n in needed if not (path / n).is_file()]
        if not missing:
            return path
        raise FileNotFoundError(
            f"ruCLIP folder {str(path)!r} lacks {', '.join(missing)} (a ruCLIP checkpoint folder holds "
            f"{CONFIG_FILE}, {WEIGHTS_FILE} and {BPE_FILE}; `pretrained='random'` needs only {CONFIG_FILE} and "
            f"{BPE_FILE})"
        )
    for place in candidate_folders(model_name):
        looked.append(str(place))
        if all((place / n).is_file() for n in needed):
            return place
    snapshot = _hub_snapshot(model_name, needed)
    if snapshot is not None:
        return snapshot
    name = model_name.rsplit("/", 1)[-1]
    looked.append(f"the Hugging Face cache ({' or '.join(f'{o}/{name}' for o in HUB_OWNERS)})")
    raise FileNotFoundError(
        f"ruCLIP model {model_name!r} not found locally (looked at: {'; '.join(looked)}). Put {', '.join(needed)} "
        f"of the checkpoint (https://huggingface.co/ai-forever/{name}) in one folder and pass its path as "
        f"`model_name`, or place the folder at $GPUMETRICS_HOME/{name} (gpumetrics never downloads ruCLIP)"
    )


def read_config(folder: Path) -> dict[str, Any]:
    path = folder / CONFIG_FILE
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ValueError(f"{str(path)!r} is not valid JSON: {error}") from None
    check_config(config, repr(str(path)))
    return config


def ruclip_files(model_name: Union[str, os.PathLike], pretrained: Optional[str] = None) -> tuple[Path, Optional[Path]]:
    """``(the folder, the weights file or None for random weights)`` that :func:`load_ruclip` reads, found on the disk
    only (nothing is read from them).

    Raises:
        FileNotFoundError: the folder, one of its files or the ``pretrained`` file is missing.
    """
    needed = [CONFIG_FILE, BPE_FILE] if pretrained is not None else [CONFIG_FILE, BPE_FILE, WEIGHTS_FILE]
    folder = find_folder(os.fspath(model_name), needed)
    if pretrained == "random":
        return folder, None
    weights = expand_user(pretrained) if pretrained is not None else folder / WEIGHTS_FILE
    if not weights.is_file():
        raise FileNotFoundError(f"`pretrained`: ruCLIP weights file {str(weights)!r} does not exist")
    return folder, weights


def load_ruclip(
    model_name: Union[str, os.PathLike], pretrained: Optional[str] = None, seed: int = 0
) -> tuple[RuCLIP, YTTMBPE, dict[str, Any], str]:
    """``(model in eval mode, tokenizer, config, weights tag)`` of a ruCLIP folder.

    Args:
        model_name: a folder (or its ``config.json``) or a model name looked up as the module docstring says.
        pretrained: None (the folder's ``pytorch_model.bin``), a state_dict file in ruclip's layout, or
            ``"random"`` (random weights from ``seed``; the folder then needs only ``config.json`` and ``bpe.model``).
        seed: torch seed of the random weights.

    Returns:
        The weights tag is ``"random"`` or ``"file@<sha256[:8]>"`` of the state_dict file.

    Raises:
        FileNotFoundError: the folder or a file is missing. ValueError: a bad ``config.json`` or state_dict.
    """
    folder, weights = ruclip_files(model_name, pretrained)
    config = read_config(folder)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = RuCLIP(config)
    tag = "random"
    if weights is not None:
        state = read_state_dict(weights, "`pretrained`: ruCLIP weights file")
        result = model.load_state_dict(state, strict=False)
        if result.missing_keys or result.unexpected_keys:
            raise ValueError(
                f"{str(weights)!r} is not a ruCLIP state_dict of this config: missing {result.missing_keys[:5]}, "
                f"unexpected {result.unexpected_keys[:5]}"
            )
        tag = f"file@{file_sha256(weights)[:8]}"
    return model.eval().requires_grad_(False), YTTMBPE(folder / BPE_FILE), config, tag


def ruclip_token_ids(tokenizer: YTTMBPE, captions: Sequence[str], context_length: int) -> list[list[int]]:
    """ruclip's ``RuCLIPProcessor.encode_text`` ids of each caption (without the padding): lower-case, BPE, cut to
    ``context_length - 2``, ``[2] + ids + [3]``."""
    cut = context_length - 2
    return [[BOS_ID] + ids[:cut] + [EOS_ID] for ids in tokenizer.encode([c.lower() for c in captions])]

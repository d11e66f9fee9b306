"""Random-weight Hugging Face CLIP checkpoints written to a folder, with no download (tests and benchmarks).

The tokenizer is OpenAI CLIP's BPE, which open_clip ships inside its wheel; the folder then loads with
``CLIPModel.from_pretrained`` / ``CLIPProcessor.from_pretrained`` like any hub checkpoint.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Optional

import torch

TINY_CLIP = {
    "text_config": {"vocab_size": 49408, "hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1,
                    "num_attention_heads": 2, "max_position_embeddings": 77},
    "vision_config": {"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
                      "image_size": 32, "patch_size": 16},
    "projection_dim": 16,
}
"""A 2-layer CLIP for unit tests (32×32 images)."""

VIT_B_32 = {}
"""transformers' ``CLIPConfig()`` defaults: the architecture of openai/clip-vit-base-patch32 (224×224 images)."""


def write_openai_tokenizer(folder: Path) -> None:
    """OpenAI CLIP's BPE as hf ``vocab.json`` + ``merges.txt`` in ``folder``."""
    from open_clip.tokenizer import bytes_to_unicode, default_bpe

    merges = gzip.open(default_bpe()).read().decode("utf-8").split("\n")[1 : 49152 - 256 - 2 + 1]
    vocab = list(bytes_to_unicode().values())
    vocab = vocab + [v + "</w>" for v in vocab] + ["".join(m.split()) for m in merges]
    vocab += ["<|startoftext|>", "<|endoftext|>"]
    (folder / "vocab.json").write_text(json.dumps({token: i for i, token in enumerate(vocab)}))
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n")


def save_random_hf_clip(folder: Path, config: dict, image_size: Optional[int] = None, seed: int = 0) -> str:
    """Write a random-weight ``CLIPModel`` of ``config`` (``CLIPConfig`` kwargs) and its processor to ``folder``.

    Args:
        folder: an existing directory.
        config: ``CLIPConfig`` keyword arguments (``{}`` = ViT-B/32).
        image_size: the processor's resize/crop size; default the vision config's image size.
        seed: torch seed of the random weights.

    Returns:
        ``str(folder)``, a ``model_name`` for the hf backend and a path for ``from_pretrained``.
    """
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer

    folder = Path(folder)
    clip_config = CLIPConfig(**config)
    size = image_size or clip_config.vision_config.image_size
    write_openai_tokenizer(folder)
    tokenizer = CLIPTokenizer(str(folder / "vocab.json"), str(folder / "merges.txt"))
    image_processor = CLIPImageProcessor(size={"shortest_edge": size}, crop_size={"height": size, "width": size})
    CLIPProcessor(image_processor=image_processor, tokenizer=tokenizer).save_pretrained(folder)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        CLIPModel(clip_config).save_pretrained(folder)
    return str(folder)


class TensorFeatures(torch.nn.Module):
    """transformers 5 returns model outputs from ``get_*_features``; torchmetrics 1.9 expects tensors."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model, self.config = model, model.config

    def get_image_features(self, *args, **kwargs):
        out = self.model.get_image_features(*args, **kwargs)
        return getattr(out, "pooler_output", out)

    def get_text_features(self, *args, **kwargs):
        out = self.model.get_text_features(*args, **kwargs)
        return getattr(out, "pooler_output", out)

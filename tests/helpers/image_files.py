"""Folders of small random images for the image tests."""

from __future__ import annotations

from pathlib import Path

import torch
from PIL import Image


def save_random_images(folder: Path, seed: int, n: int = 4, size: tuple[int, int] = (24, 30),
                       suffix: str = "png") -> torch.Tensor:
    """Create ``folder`` with ``n`` random RGB images ``0.suffix`` … (``size`` = height, width); returns them as
    ``uint8 [n, 3, H, W]``. BMP keeps the file size when one pixel changes."""
    folder.mkdir()
    generator = torch.Generator().manual_seed(seed)
    images = torch.randint(0, 256, (n, 3, *size), dtype=torch.uint8, generator=generator)
    for i, image in enumerate(images):
        Image.fromarray(image.permute(1, 2, 0).numpy()).save(folder / f"{i}.{suffix}")
    return images

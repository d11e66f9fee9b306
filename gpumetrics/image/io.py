"""Reading image files into uint8 tensors (for the CLI and task configs): folders, path lists, same-size batches."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, Sequence, Union

import numpy as np
import torch
from torch import Tensor

#: pytorch-fid's image extensions.
IMAGE_EXTENSIONS = ("bmp", "jpg", "jpeg", "pgm", "png", "ppm", "tif", "tiff", "webp")


def list_images(folder: Union[str, Path]) -> list[Path]:
    """Image files of a folder (not recursive), sorted by name, as pytorch-fid lists them.

    Raises:
        FileNotFoundError: the folder does not exist. ValueError: it holds no image.

    Example:
        >>> list_images("/nonexistent")
        Traceback (most recent call last):
        ...
        FileNotFoundError: image folder '/nonexistent' does not exist
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"image folder '{folder}' does not exist")
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower().lstrip(".") in IMAGE_EXTENSIONS)
    if not files:
        raise ValueError(f"image folder '{folder}' holds no image ({', '.join(IMAGE_EXTENSIONS)})")
    return files


def read_image(path: Union[str, Path]) -> Tensor:
    """One image file as ``Tensor[3, H, W]`` uint8 RGB (``PIL.Image.open(path).convert("RGB")``, as pytorch-fid)."""
    from PIL import Image

    with Image.open(path) as image:
        array = np.asarray(image.convert("RGB"))
    return torch.from_numpy(array.copy()).permute(2, 0, 1)


def same_size_batches(paths: Sequence[Union[str, Path]], batch_size: int) -> Iterator[tuple[list[int], Tensor]]:
    """Read ``paths`` in chunks of ``batch_size`` and yield ``(indices, Tensor[b, 3, H, W] uint8)`` per image size.

    Images of one size (the usual case for generated images) form one batch; mixed sizes are split by size.
    """
    for start in range(0, len(paths), batch_size):
        groups: dict[tuple[int, int], list[tuple[int, Tensor]]] = {}
        for offset, path in enumerate(paths[start : start + batch_size]):
            image = read_image(path)
            groups.setdefault(tuple(image.shape[1:]), []).append((start + offset, image))
        for items in groups.values():
            yield [i for i, _ in items], torch.stack([image for _, image in items])

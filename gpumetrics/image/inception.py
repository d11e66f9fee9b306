"""The FID feature extractor: pytorch-fid's port of the TF "2015-12-05" Inception-v3, and the named resize modes.

The network is torchvision's ``Inception3`` with the blocks that pytorch-fid patches to mimic TensorFlow (average
pools that ignore padding, a max pool in the last block) — those block classes are imported from pytorch-fid
itself, so the architecture and the state_dict keys are pytorch-fid's by construction and its weight file
``pt_inception-2015-12-05-6726825d.pth`` loads as is.

Resize modes (recorded in every signature, never changed silently):

* ``"pytorch-fid"`` (default) — bilinear, ``align_corners=False``, no antialias, to 299×299, as pytorch-fid's
  ``InceptionV3(resize_input=True)``;
* ``"clean"`` — clean-fid's resize: PIL bicubic (``Image.resize(..., BICUBIC)`` of each channel as a 32-bit float
  image of 0..255 values, which antialiases when shrinking), clipped to [0, 255]. Computed on the device with
  ``F.interpolate(mode="bicubic", antialias=True)`` — the same separable a=-0.5 kernel as PIL — in float64;
  it agrees with PIL to ~1e-4 of a grey level (tested);
* ``"aij2022"`` — the AIJ-2022 organisers' FID (``fbc2_aij2022/evaluation/generation``): each image first goes
  through ``torchvision.transforms.Resize((256, 256))`` on the PIL image — Pillow bilinear with antialiasing, on
  8-bit pixels (:func:`gpumetrics.image.resize.pil_bilinear_resize`, exact) — then ``ToTensor`` and pytorch-fid's
  bilinear resize to 299×299. Float images are quantised to 8 bits first (``round(255 x)``), as a PIL image holds
  them; for images read from files nothing changes.

Then, in both modes, images are mapped from [0, 1] to [-1, 1] (``2x - 1``) as pytorch-fid does.

Precision and speed modes follow the one policy of :mod:`gpumetrics.image.precision`: the default (``speed_mode=None``)
is true float32 on every device — TF32 off during the forward, the caller's flags restored — so CUDA features equal the
CPU's to float32 rounding. Opt-in modes (NOT parity; recorded in every signature as ``speed:<mode>``) apply to the
network only — validation and resize always run in float32/float64 as in the exact path. Tested bounds (random
weights, CPU; ``tests/image/test_inception.py``), as max abs feature difference / max |feature| and FID relative:

* ``"channels_last"``, ``"compile"`` (and their combination): same float32 arithmetic in another order, ≤ 1e-4 and
  ≤ 1e-3 (measured ~1e-6 and ~1e-7). ``"compile"``'s first call compiles (tens of seconds, a C++ compiler on CPU).
* ``"tf32"`` (CUDA only; a CPU computes float32): 10 mantissa bits in matmuls and convolutions, ≤ 1e-2 and ≤ 1e-2
  (measured 8.4e-4 and 1e-4 on an H100 with the real weights).
* ``"bf16"`` (``torch.autocast`` bfloat16, 8 mantissa bits): ≤ 5 % and ≤ 10 % (measured ~1.3 % and ~2.4 %).
* ``"fp16"`` (autocast float16; slower than float32 on a CPU): ≤ 2 % and ≤ 5 % (measured ~0.5 % and ~1 %).
  A half copy of the network with its batch norms folded into the convolutions deviated less (bf16 ~0.44 %) but ran
  6–7 % slower on an H200 (docs/metrics/image.md), so both precisions run under autocast.
* combinations ``"<precision>+channels_last"``, ``"<precision>+compile"``, ``"<precision>+channels_last+compile"``
  and the preset ``"fastest"`` (``"bf16+channels_last"``): the precision's bound.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional, Union

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from gpumetrics.core.checks import check_choice, check_holds_data, check_int
from gpumetrics.core.files import expand_user
from gpumetrics.image.precision import parse_speed_mode, precision_scope
from gpumetrics.image.resize import pil_bilinear_resize
from gpumetrics.image.weights import FID_INCEPTION, RANDOM, load_weights

RESIZE_MODES = ("pytorch-fid", "clean", "aij2022")
AIJ2022_PRE_SIZE = 256  # the AIJ-2022 organisers resize to 256 x 256 (PIL) before pytorch-fid does to 299
SPEED_MODES = ("channels_last", "compile", "tf32", "bf16", "fp16", "fastest")  # and '+' combinations (precision.py)
FEATURE_DIMS = (64, 192, 768, 2048)
INPUT_SIZE = 299

WeightsArg = Union[None, str, Path, dict]


def check_weights_argument(weights: Any) -> None:
    """``weights`` of the FID Inception: None (the registry's file), a path that exists, a state_dict or
    ``"random"``; the file's hash and contents are checked when it is loaded."""
    if isinstance(weights, (str, Path)) and not (isinstance(weights, str) and weights == RANDOM):
        if not expand_user(weights).is_file():
            raise FileNotFoundError(f"`weights`: file {str(weights)!r} does not exist")
    elif weights is not None and not isinstance(weights, (str, dict)):
        raise TypeError(f"`weights` must be None, a path, a state_dict or 'random', got {type(weights).__name__}")


def _fid_blocks():
    # Imported lazily so that ``import gpumetrics`` does not require the image extra.
    try:
        from pytorch_fid.inception import FIDInceptionA, FIDInceptionC, FIDInceptionE_1, FIDInceptionE_2
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise ImportError("FIDInceptionV3 needs pytorch-fid: pip install 'gpumetrics[image]'") from exc
    return FIDInceptionA, FIDInceptionC, FIDInceptionE_1, FIDInceptionE_2


def build_fid_inception(device: Union[str, torch.device, None] = "meta") -> nn.Module:
    """The bare FID Inception-v3 (torchvision ``Inception3`` patched with pytorch-fid's blocks), uninitialised.

    Its ``state_dict`` keys are exactly those of pytorch-fid's weight file (``Conv2d_1a_3x3.conv.weight`` …
    ``fc.bias``, 1008 classes). Built on the ``meta`` device by default (no time spent initialising parameters
    that the weights replace); load them with ``load_state_dict(state, assign=True)``.
    """
    import torchvision

    block_a, block_c, block_e1, block_e2 = _fid_blocks()
    with torch.device(device):
        return _patched_inception(torchvision, block_a, block_c, block_e1, block_e2)


def _patched_inception(torchvision: Any, block_a: Any, block_c: Any, block_e1: Any, block_e2: Any) -> nn.Module:
    net = torchvision.models.inception_v3(weights=None, num_classes=1008, aux_logits=False, init_weights=False)
    net.Mixed_5b = block_a(192, pool_features=32)
    net.Mixed_5c = block_a(256, pool_features=64)
    net.Mixed_5d = block_a(288, pool_features=64)
    net.Mixed_6b = block_c(768, channels_7x7=128)
    net.Mixed_6c = block_c(768, channels_7x7=160)
    net.Mixed_6d = block_c(768, channels_7x7=160)
    net.Mixed_6e = block_c(768, channels_7x7=192)
    net.Mixed_7b = block_e1(1280)
    net.Mixed_7c = block_e2(2048)
    return net


def random_fid_inception_state_dict(seed: int = 0) -> dict[str, Tensor]:
    """Random weights of the exact FID Inception architecture, for tests and benchmarks only.

    Convolutions get He-normal weights and batch norms the identity (mean 0, var 1, scale 1, shift 0) so that
    activations keep an O(1) scale through the 90-odd layers — features are then informative, unlike a default
    initialisation whose activations shrink towards zero. Deterministic in ``seed``.

    Example:
        >>> state = random_fid_inception_state_dict(seed=0)
        >>> tuple(state["fc.weight"].shape)
        (1008, 2048)
    """
    generator = torch.Generator().manual_seed(seed)
    net = build_fid_inception()
    state = {}
    for key, value in net.state_dict().items():
        if key.endswith("conv.weight"):
            fan_in = value[0].numel()
            state[key] = torch.randn(value.shape, generator=generator) * (2.0 / fan_in) ** 0.5
        elif key.endswith("running_var") or key.endswith("bn.weight"):
            state[key] = torch.ones(value.shape, dtype=value.dtype)
        elif key == "fc.weight":
            state[key] = torch.randn(value.shape, generator=generator) * 0.01
        else:  # running_mean, bn.bias, fc.bias, num_batches_tracked
            state[key] = torch.zeros(value.shape, dtype=value.dtype)
    return state


def resize_images(images: Tensor, mode: str = "pytorch-fid", size: int = INPUT_SIZE) -> Tensor:
    """Resize a batch of images in [0, 1] to ``size × size`` with a named mode.

    Args:
        images: ``Tensor[B, C, H, W]`` float in [0, 1].
        mode: ``"pytorch-fid"`` (bilinear, no antialias), ``"clean"`` (PIL-bicubic equivalent, clipped) or
            ``"aij2022"`` (8-bit PIL bilinear to 256×256, then ``"pytorch-fid"``).
        size: output side.

    Returns:
        ``Tensor[B, C, size, size]`` float32 in [0, 1] (``"pytorch-fid"`` keeps the input's float dtype).

    Example:
        >>> resize_images(torch.rand(2, 3, 40, 50), "clean").shape
        torch.Size([2, 3, 299, 299])
    """
    check_choice(mode, "resize", RESIZE_MODES)
    if mode == "aij2022":
        eight_bit = torch.round(images.double() * 255.0).clamp_(0, 255).to(torch.uint8)
        pixels = pil_bilinear_resize(eight_bit, (AIJ2022_PRE_SIZE, AIJ2022_PRE_SIZE))
        images = pixels.to(torch.uint8).float() / 255.0  # ToTensor: uint8 -> float32, divided by 255 in float32
        mode = "pytorch-fid"
    if mode == "pytorch-fid":
        return F.interpolate(images, size=(size, size), mode="bilinear", align_corners=False)
    # clean-fid resizes 0..255 values in a float image, then clips to [0, 255]
    wide = images.to(torch.float64 if images.device.type != "mps" else torch.float32) * 255.0
    resized = F.interpolate(wide, size=(size, size), mode="bicubic", align_corners=False, antialias=True)
    return (resized.clamp_(0.0, 255.0) / 255.0).to(torch.float32)


def check_image_layout(images: Any, name: str = "images") -> None:
    """Raise unless ``images`` is a non-empty ``Tensor[B, 3, H, W]`` (any dtype; values are not looked at).

    Raises:
        TypeError: not a tensor.
        ValueError: wrong number of dimensions, not 3 channels, or an empty batch / image.
    """
    if not isinstance(images, Tensor):
        raise TypeError(f"`{name}` must be a Tensor[B, 3, H, W], got {type(images).__name__}")
    check_holds_data(images, name)
    if images.ndim != 4:
        raise ValueError(f"`{name}` must be a Tensor[B, 3, H, W], got shape {tuple(images.shape)}")
    if images.shape[1] != 3:
        raise ValueError(f"`{name}` must have 3 (RGB) channels in dim 1, got shape {tuple(images.shape)}")
    if images.shape[0] == 0 or images.shape[2] == 0 or images.shape[3] == 0:
        raise ValueError(f"`{name}` is empty (shape {tuple(images.shape)})")


def check_images(images: Any, name: str = "images") -> Tensor:
    """Validate a batch of RGB images and return it as float in [0, 1].

    Args:
        images: ``Tensor[B, 3, H, W]``, uint8 (0..255) or floating point in [0, 1].
        name: argument name for error messages.

    Returns:
        ``Tensor[B, 3, H, W]`` floating point in [0, 1] (uint8 divided by 255, as torchvision's ``ToTensor``).

    Raises:
        TypeError: not a tensor, or an integer dtype other than uint8.
        ValueError: wrong shape, not 3 channels, empty batch, or float values outside [0, 1] / NaN.

    Example:
        >>> check_images(torch.full((1, 3, 2, 2), 255, dtype=torch.uint8)).max().item()
        1.0
    """
    check_image_layout(images, name)
    if images.dtype == torch.uint8:
        return images.float() / 255.0
    if not images.is_floating_point():
        raise TypeError(f"`{name}` must be uint8 or floating point, got {images.dtype}")
    low, high = torch.stack(torch.aminmax(images.detach())).tolist()  # one host read
    if not (low >= 0.0 and high <= 1.0):  # also catches NaN
        raise ValueError(
            f"`{name}` must hold values in [0, 1] (or be uint8 in 0..255), got range [{low}, {high}]"
        )
    return images


class FIDInceptionV3(nn.Module):
    """pytorch-fid's FID Inception-v3 as a feature extractor: images → ``Tensor[B, dims]`` pooled features.

    Args:
        dims: 64, 192, 768 or 2048 — the output of the first / second max pool, the pre-aux-classifier block or
            the final average pool (pytorch-fid's ``BLOCK_INDEX_BY_DIM``); spatial maps are average-pooled.
        weights: ``None`` — the pinned pytorch-fid weights, found by ``gpumetrics.image.weights`` (explicit path →
            ``$GPUMETRICS_HOME`` / torch hub cache → download → ``FileNotFoundError``); a path to a weight file in
            pytorch-fid's format; a ``state_dict``; or ``"random"`` — random weights of the exact architecture,
            for tests only (the signature then says ``weights:random``).
        resize: ``"pytorch-fid"`` or ``"clean"``, see the module docstring.
        download: allow downloading the pinned weights (default: only when ``$GPUMETRICS_DOWNLOAD=1``).
        seed: seed of ``weights="random"``.
        speed_mode: ``None`` (default, the exact parity path: true float32 on every device) or an opt-in non-parity
            mode — ``"tf32"``, ``"bf16"``, ``"fp16"``, ``"channels_last"``, ``"compile"``, a precision joined to
            layout parts (``"bf16+channels_last"``) or ``"fastest"`` (see the module docstring for their bounds).
            Recorded in ``signature_fields()`` as ``speed`` (its canonical name).

    Example:
        >>> net = FIDInceptionV3(dims=64, weights="random")
        >>> net(torch.rand(2, 3, 37, 41)).shape
        torch.Size([2, 64])
        >>> net.signature_fields()
        {'dims': 64, 'weights': 'random', 'resize': 'pytorch-fid'}
        >>> FIDInceptionV3(dims=64, weights="random", speed_mode="bf16").signature_fields()["speed"]
        'bf16'
    """

    BLOCK_INDEX_BY_DIM = {64: 0, 192: 1, 768: 2, 2048: 3}

    def __init__(
        self,
        dims: int = 2048,
        weights: WeightsArg = None,
        resize: str = "pytorch-fid",
        download: Optional[bool] = None,
        seed: int = 0,
        speed_mode: Optional[str] = None,
    ) -> None:
        super().__init__()
        check_choice(dims, "dims", FEATURE_DIMS)
        check_choice(resize, "resize", RESIZE_MODES)
        check_int(seed, "seed")  # else torch.manual_seed's RuntimeError
        self._speed = parse_speed_mode(speed_mode)
        self.dims = dims
        self.resize = resize
        self.speed_mode = self._speed.name
        check_weights_argument(weights)
        net = build_fid_inception()
        if isinstance(weights, str) and weights == RANDOM:
            state, tag = random_fid_inception_state_dict(seed), RANDOM if seed == 0 else f"random(seed={seed})"
        elif isinstance(weights, dict):
            state, tag = weights, "state_dict"
        else:
            state, tag = load_weights(FID_INCEPTION.name, weights, download)
        try:
            net.load_state_dict(state, assign=True)
        except RuntimeError as err:  # missing / unexpected keys, wrong shapes: another network's weights
            detail = " ".join(str(err).split())
            raise ValueError(f"`weights` ({tag}) are not pytorch-fid's Inception-v3 state_dict: "
                             f"{detail[:200]}{'…' if len(detail) > 200 else ''}") from None
        self.weights_tag = tag
        last = self.BLOCK_INDEX_BY_DIM[dims]
        blocks = [
            [net.Conv2d_1a_3x3, net.Conv2d_2a_3x3, net.Conv2d_2b_3x3, nn.MaxPool2d(kernel_size=3, stride=2)],
            [net.Conv2d_3b_1x1, net.Conv2d_4a_3x3, nn.MaxPool2d(kernel_size=3, stride=2)],
            [net.Mixed_5b, net.Mixed_5c, net.Mixed_5d, net.Mixed_6a, net.Mixed_6b, net.Mixed_6c, net.Mixed_6d,
             net.Mixed_6e],
            [net.Mixed_7a, net.Mixed_7b, net.Mixed_7c],
        ]
        self.blocks = nn.Sequential(*[nn.Sequential(*block) for block in blocks[: last + 1]])
        if self._speed.channels_last:
            self.blocks.to(memory_format=torch.channels_last)
        self.eval()
        self.requires_grad_(False)

    def __getstate__(self) -> dict[str, Any]:
        # the compiled wrapper is rebuilt lazily; it is neither picklable nor part of the state
        state = dict(self.__dict__)
        state.pop("_compiled_blocks", None)
        return state

    def train(self, mode: bool = True) -> "FIDInceptionV3":
        """The extractor always stays in eval mode (batch-norm statistics are part of the weights)."""
        return super().train(False)

    def signature_fields(self) -> dict[str, Any]:
        """``dims``, ``weights`` tag, ``resize`` mode and (when set) ``speed`` mode, for the metric signature."""
        fields = {"dims": self.dims, "weights": self.weights_tag, "resize": self.resize}
        if self.speed_mode is not None:
            fields["speed"] = self.speed_mode
        return fields

    def _network(self, x: Tensor) -> Tensor:
        mode = self._speed
        if mode.channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        blocks = self.blocks
        if mode.compile:
            blocks = self.__dict__.get("_compiled_blocks")
            if blocks is None:  # kept out of ``_modules`` so state_dict keys stay pytorch-fid's
                blocks = self.__dict__["_compiled_blocks"] = torch.compile(self.blocks)
        with precision_scope(mode, x.device.type):
            return blocks(x).float()

    def forward(self, images: Tensor) -> Tensor:
        """Extract features.

        Args:
            images: ``Tensor[B, 3, H, W]``, uint8 or float in [0, 1], any ``H × W``.

        Returns:
            ``Tensor[B, dims]`` float32 (the weights' dtype).
        """
        x = check_images(images)
        weight = self.blocks[0][0].conv.weight
        x = x.to(device=weight.device, dtype=weight.dtype)
        x = resize_images(x, self.resize).to(weight.dtype)
        x = 2 * x - 1
        x = self._network(x)
        if x.shape[2] != 1 or x.shape[3] != 1:
            x = F.adaptive_avg_pool2d(x, output_size=(1, 1))
        return x.flatten(1)

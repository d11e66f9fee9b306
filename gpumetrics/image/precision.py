"""One precision policy for the networks of model-based metrics (FID/KID's Inception, the CLIP encoders).

The default is **true float32 on every device**: during a network's forward, TF32 is off for CUDA matmuls and cuDNN
convolutions, so CUDA features equal CPU features to float32 rounding (cuDNN's own default allows TF32 convolutions,
which moved FID features by ~8e-4 relative on an H100). The caller's flags are restored afterwards, also when the
forward raises. Faster modes are opt-in, named, bounded by tests and recorded in the signature as ``speed:<name>``:

* a precision — ``"tf32"`` (TF32 tensor cores for float32 matmuls and convolutions; CUDA only, a CPU computes float32),
  ``"bf16"`` / ``"fp16"`` (``torch.autocast``; reductions and normalisations stay float32);
* ``"channels_last"`` (NHWC memory format for convolutions) and ``"compile"`` (``torch.compile``), alone or joined to
  a precision with ``+`` in that order: ``"bf16+channels_last"``, ``"tf32+compile"``, ``"fp16+channels_last+compile"``;
* the preset ``"fastest"`` = ``"bf16+channels_last"`` (the fastest combination measured for Inception on an H100,
  6,742–6,904 img/s against 2,209 img/s for true float32).

``None`` and ``"fp32"`` both name the default (its signature says nothing).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from typing import Any, Iterator, Optional

import torch

from gpumetrics.core.warn import warn_caller

PRECISIONS = ("fp32", "tf32", "bf16", "fp16")
LAYOUTS = ("channels_last", "compile")
PRESETS = {"fastest": "bf16+channels_last"}
_AUTOCAST = {"bf16": torch.bfloat16, "fp16": torch.float16}
# oneDNN's answer to "does this CPU have hardware for the half precision" (torch.ops.mkldnn)
_HARDWARE_PROBES = {"bf16": "_is_mkldnn_bf16_supported", "fp16": "_is_mkldnn_fp16_supported"}


@dataclasses.dataclass(frozen=True)
class SpeedMode:
    """A parsed speed mode: one precision, and whether to use channels-last convolutions and ``torch.compile``."""

    precision: str = "fp32"
    channels_last: bool = False
    compile: bool = False

    @property
    def name(self) -> Optional[str]:
        """The canonical name (``"bf16+channels_last"``), ``None`` for the default true-float32 path."""
        parts = [self.precision] if self.precision != "fp32" else []
        parts += [flag for flag in LAYOUTS if getattr(self, flag)]
        return "+".join(parts) or None

    @property
    def autocast_dtype(self) -> Optional[torch.dtype]:
        return _AUTOCAST.get(self.precision)


def parse_speed_mode(value: Any, name: str = "speed_mode",
                     allowed: tuple[str, ...] = PRECISIONS + LAYOUTS) -> SpeedMode:
    """Read a speed mode: ``None``, a preset, or ``+``-joined parts (one precision first, then layout parts).

    Args:
        value: the option as given.
        name: the option's name, for errors.
        allowed: the parts this network accepts (the CLIP encoders take precisions only).

    Raises:
        TypeError: not a string or None.
        ValueError: an unknown or repeated part, two precisions, or parts out of order.

    Example:
        >>> parse_speed_mode("channels_last+bf16").name  # doctest: +NORMALIZE_WHITESPACE
        Traceback (most recent call last):
        ...
        ValueError: `speed_mode` 'channels_last+bf16': write the precision first, then channels_last, then compile
        ('bf16+channels_last')
        >>> parse_speed_mode("fastest").name
        'bf16+channels_last'
        >>> parse_speed_mode(None) == parse_speed_mode("fp32") == SpeedMode()
        True
    """
    if value is None:
        return SpeedMode()
    if not isinstance(value, str):
        raise TypeError(f"`{name}` must be a string or None, got {type(value).__name__}")
    parts = PRESETS.get(value, value).split("+")
    known = [part for part in PRECISIONS + LAYOUTS if part in allowed]
    unknown = [part for part in parts if part not in known]
    if unknown or len(set(parts)) != len(parts):
        presets = [preset for preset, spelled in PRESETS.items() if set(spelled.split("+")) <= set(allowed)]
        raise ValueError(
            f"`{name}` {value!r}: expected None or {' / '.join(map(repr, known + presets))}, or a precision joined to "
            f"layout parts with '+' (each once)"
        )
    precisions = [part for part in parts if part in PRECISIONS]
    if len(precisions) > 1:
        raise ValueError(f"`{name}` {value!r} names two precisions: {' and '.join(precisions)}")
    mode = SpeedMode(precisions[0] if precisions else "fp32", "channels_last" in parts, "compile" in parts)
    canonical = [mode.precision] * bool(precisions) + [part for part in LAYOUTS if part in parts]
    if parts != canonical:
        raise ValueError(
            f"`{name}` {value!r}: write the precision first, then channels_last, then compile ({'+'.join(canonical)!r})"
        )
    return mode


def _fp32_flags() -> list[tuple[Any, str]]:
    """The (object, attribute) pairs that decide whether float32 work may use TF32: torch ≥ 2.9's per-backend
    ``fp32_precision`` settings where they exist (mixing them with the legacy ``allow_tf32`` flags is an error), else
    the legacy flags."""
    backends = torch.backends
    modern = [(getattr(backends.cuda, "matmul", None), "fp32_precision"),
              (getattr(getattr(backends, "cudnn", None), "conv", None), "fp32_precision"),
              (getattr(getattr(backends, "cudnn", None), "rnn", None), "fp32_precision")]
    if all(owner is not None and hasattr(owner, attr) for owner, attr in modern):
        return modern
    return [(backends.cuda.matmul, "allow_tf32"), (backends.cudnn, "allow_tf32")]


@contextlib.contextmanager
def precision_scope(mode: SpeedMode, device_type: str) -> Iterator[None]:
    """Run a network's forward under ``mode``'s precision: TF32 off (on for ``tf32``) for CUDA float32 matmuls and
    convolutions, autocast for ``bf16`` / ``fp16``, and for every speed mode cuDNN's algorithm search
    (``cudnn.benchmark``; the parity path keeps the caller's setting); the caller's settings are restored on exit,
    also on an exception.

    Example:
        >>> before = torch.backends.cuda.matmul.fp32_precision
        >>> with precision_scope(SpeedMode(), "cpu"):
        ...     torch.backends.cuda.matmul.fp32_precision
        'ieee'
        >>> torch.backends.cuda.matmul.fp32_precision == before
        True
    """
    if device_type == "cpu" and mode.precision in _AUTOCAST:
        _warn_if_emulated(mode.precision)
    flags = _fp32_flags()
    tf32 = mode.precision == "tf32"
    values = [("tf32" if tf32 else "ieee") if flags[0][1] == "fp32_precision" else tf32] * len(flags)
    if mode.name is not None:  # a speed mode: let cuDNN time its convolution algorithms per shape (not for parity)
        flags, values = flags + [(torch.backends.cudnn, "benchmark")], values + [True]
    saved = [getattr(owner, attr) for owner, attr in flags]
    try:
        for (owner, attr), value in zip(flags, values):
            setattr(owner, attr, value)
        dtype = mode.autocast_dtype
        with torch.autocast(device_type=device_type, dtype=dtype) if dtype is not None else contextlib.nullcontext():
            yield
    finally:
        for (owner, attr), previous in zip(flags, saved):
            setattr(owner, attr, previous)


@functools.lru_cache(maxsize=None)
def _warn_if_emulated(precision: str) -> None:
    """Warn once per process when ``bf16`` / ``fp16`` runs on a CPU that lacks hardware for it (oneDNN reports no
    AVX-512 BF16 / AMX / AVX-512 FP16): there the half-precision convolutions are emulated, and the speed mode slows
    the run instead (Inception on a 2-core AVX2 AMD EPYC, 3 images: bf16 11.4 s, fp16 10.6 s, float32 0.41 s)."""
    try:
        supported = bool(getattr(torch.ops.mkldnn, _HARDWARE_PROBES[precision])())
    except (AttributeError, RuntimeError):  # torch without the probe: nothing known, nothing said
        return
    if not supported:
        warn_caller(
            f"speed_mode {precision!r} on this CPU: it has no {precision} hardware (AVX-512 BF16 / AMX / "
            f"AVX-512 FP16), so the network's half-precision work is emulated and runs ~25x slower than the default "
            f"float32; use "
            f"the default (speed_mode=None) on this CPU, or {precision!r} on a GPU",
            RuntimeWarning,
        )

"""Input checks shared by every metric: each error names the argument and what was expected."""

from __future__ import annotations

import itertools
import math
import numbers
from typing import Any, Optional, Sequence, Union

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core.gcpause import gc_paused
from gpumetrics.core.positions import sample_error


def describe_value(value: Any) -> str:
    """Type and shortened repr of a bad argument, for error messages (``"int 3"``)."""
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'…' if len(text) > 60 else ''}"


def is_finite(value: Any) -> bool:
    """``math.isfinite`` for a number that may be an integer past float64's range (``1`` and 400 zeros is valid JSON
    and YAML, an ``int`` in Python): ``False`` there instead of ``OverflowError``.

    Example:
        >>> is_finite(0.5), is_finite(float("nan")), is_finite(10**400)
        (True, False, False)
    """
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def is_sequence(value: Any) -> bool:
    """A list-like container of items (not a string, bytes, tensor or mapping)."""
    if type(value) in (list, tuple):  # fast path: the abc check costs ~30 µs per call
        return True
    return value is not None and not isinstance(value, (str, bytes, Tensor, dict)) and isinstance(value, Sequence)


def host_list(value: Any) -> Any:
    """A numpy array or a pandas ``Series`` / ``Index`` of texts as the Python list it holds (plain ``str`` items,
    rows of a 2-D array as lists); any other value unchanged. Texts often arrive as a data frame's column.

    Example:
        >>> host_list(np.array(["a b", "c"]))
        ['a b', 'c']
    """
    if isinstance(value, np.ndarray):
        return value.tolist()
    if type(value).__module__.partition(".")[0] == "pandas" and hasattr(value, "tolist"):
        return value.tolist()
    return value


def as_text_list(value: Any, name: str) -> list[str]:
    """Normalise a batch of strings.

    Args:
        value: one string or a sequence of strings (a numpy array or pandas column of them too).
        name: argument name used in error messages.

    Returns:
        ``list[str]``, a single string becoming a batch of one.

    Raises:
        TypeError: ``value`` is not a string / sequence of strings (``None`` included).

    Example:
        >>> as_text_list("a b", "preds")
        ['a b']
    """
    if isinstance(value, str):
        return [value]
    value = host_list(value)
    if not is_sequence(value):
        raise TypeError(f"`{name}` must be a string or a sequence of strings, got {describe_value(value)}")
    items = list(value)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise sample_error(TypeError, name, i, f"must be a string, got {describe_value(item)}")
    return items


def check_holds_data(value: Any, name: str) -> None:
    """Raise ``ValueError`` naming ``name`` when ``value`` is a tensor on the ``meta`` device: it has a shape and a
    dtype but no values, and every read of it fails deep inside torch (``NotImplementedError``, ``RuntimeError``).

    Example:
        >>> check_holds_data(torch.zeros(2, device="meta"), "preds")
        Traceback (most recent call last):
        ...
        ValueError: `preds` is a tensor on the meta device, which holds no values; pass it on the CPU or an accelerator
    """
    if isinstance(value, Tensor) and value.is_meta:
        raise ValueError(f"`{name}` is a tensor on the meta device, which holds no values; pass it on the CPU or an "
                         "accelerator")


_PLAIN_GROUPS = {str, list, tuple}


@gc_paused
def as_reference_lists(value: Any, name: str, allow_empty: bool = False) -> list[list[str]]:
    """Normalise a batch of references where each sample has one string or a list of strings.

    Args:
        value: ``Sequence[str | Sequence[str]]`` (a bare string is a batch of one sample with one reference; a
            numpy array or pandas column too, its items strings or lists of strings).
        name: argument name used in error messages.
        allow_empty: accept a sample with an empty list of references.

    Returns:
        ``list[list[str]]``, one list of references per sample.

    Raises:
        TypeError: an item is neither a string nor a sequence of strings.
        ValueError: a sample has no reference and ``allow_empty`` is False.

    Example:
        >>> as_reference_lists(["a", ["b", "c"]], "target")
        [['a'], ['b', 'c']]
    """
    if isinstance(value, str):
        return [[value]]
    value = host_list(value)
    if not is_sequence(value):
        raise TypeError(f"`{name}` must be a sequence of strings or of lists of strings, got {describe_value(value)}")
    # fast path, C-level type scans: exact str / list / tuple items of exact str; anything else (subclasses, other
    # sequences, errors) takes the item-by-item loop below, which also words the error
    outer = set(map(type, value))
    if outer == {str}:
        return [[item] for item in value]
    if outer <= _PLAIN_GROUPS:
        refs = [[item] if type(item) is str else list(item) for item in value]
        if set(map(type, itertools.chain.from_iterable(refs))) <= {str} and (allow_empty or all(refs)):
            return refs
    refs = []
    for i, item in enumerate(value):
        if isinstance(item, str):
            refs.append([item])
            continue
        item = host_list(item)
        if not is_sequence(item):
            raise sample_error(TypeError, name, i, f"must be a string or a list of strings, got {describe_value(item)}")
        group = list(item)
        for j, ref in enumerate(group):
            if not isinstance(ref, str):
                raise sample_error(TypeError, name, i, f"must be a string, got {describe_value(ref)}", inner=[j])
        if not group and not allow_empty:
            raise sample_error(ValueError, name, i, "holds no reference; every sample needs at least one")
        refs.append(group)
    return refs


def check_same_length(first: Sequence, first_name: str, second: Sequence, second_name: str) -> None:
    """Raise ``ValueError`` unless two batches have the same number of samples.

    Example:
        >>> check_same_length(["a"], "preds", ["a", "b"], "target")
        Traceback (most recent call last):
        ...
        ValueError: `preds` and `target` must have the same number of samples, got 1 and 2
    """
    if len(first) != len(second):
        raise ValueError(
            f"`{first_name}` and `{second_name}` must have the same number of samples, got {len(first)} and "
            f"{len(second)}"
        )


def check_choice(value: Any, name: str, choices: Sequence[Any]) -> None:
    """Raise ``ValueError`` unless ``value`` is one of ``choices``.

    Example:
        >>> check_choice("x", "preset", ("squad", "raw"))
        Traceback (most recent call last):
        ...
        ValueError: `preset` must be one of 'squad', 'raw'; got 'x'
    """
    if value not in choices:
        allowed = ", ".join(repr(c) for c in choices)
        raise ValueError(f"`{name}` must be one of {allowed}; got {value!r}")


def check_bool(value: Any, name: str) -> bool:
    """Return ``value`` if it is a ``bool`` (not ``0`` / ``1``, not ``"yes"``), else raise ``TypeError`` naming
    ``name``. The one check of every flag option.

    Example:
        >>> check_bool(1, "lowercase")
        Traceback (most recent call last):
        ...
        TypeError: `lowercase` must be a bool, got int 1
    """
    if not isinstance(value, bool):
        raise TypeError(f"`{name}` must be a bool, got {describe_value(value)}")
    return value


def check_integer_tensor(tensor: Tensor, name: str) -> Tensor:
    """Return ``tensor`` if its dtype is an integer one, else raise ``TypeError`` naming ``name`` (floating, complex
    and ``bool`` tensors are refused: a cast would drop fractions or imaginary parts without a word).

    Example:
        >>> check_integer_tensor(torch.ones(2), "lengths")
        Traceback (most recent call last):
        ...
        TypeError: `lengths` must be an integer tensor, got torch.float32
    """
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex or tensor.dtype == torch.bool:
        raise TypeError(f"`{name}` must be an integer tensor, got {tensor.dtype}")
    return tensor


# ---------------------------------------------------------------------------------------------------------- devices
DeviceArg = Union[str, int, torch.device, None]
_CPU = torch.device("cpu")
_BACKEND_NAMES = {"cuda": "CUDA", "mps": "MPS", "xpu": "XPU", "mtia": "MTIA", "hpu": "HPU", "xla": "XLA"}
_LISTED_BACKENDS = ("cuda", "xpu", "mps", "mtia")  # the accelerators ``available_devices`` looks for


def check_int(
    value: Any, name: str, *, at_least: Optional[int] = None, at_most: Optional[int] = None, hint: str = ""
) -> int:
    """Return ``value`` if it is an ``int`` (``bool`` is not) in ``[at_least, at_most]`` (either bound optional),
    else raise naming ``name`` (``hint``: appended in brackets). The one check of every integer option.

    Raises:
        TypeError: ``value`` is not an int (or is a bool).
        ValueError: it is out of range.

    Example:
        >>> check_int(4, "n_gram", at_least=1, at_most=16)
        4
        >>> check_int(17, "n_gram", at_least=1, at_most=16)
        Traceback (most recent call last):
        ...
        ValueError: `n_gram` must be an integer in [1, 16], got 17
    """
    if at_most is None:
        kind = {None: "an integer", 0: "a non-negative integer", 1: "a positive integer"}.get(
            at_least, f"an integer ≥ {at_least}")
    else:
        kind = f"an integer ≤ {at_most}" if at_least is None else f"an integer in [{at_least}, {at_most}]"
    expected = f"`{name}` must be {kind}" + (f" ({hint})" if hint else "")
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{expected}, got {describe_value(value)}")
    if (at_least is not None and value < at_least) or (at_most is not None and value > at_most):
        raise ValueError(f"{expected}, got {value!r}")
    return value


def check_positive_int(value: Any, name: str) -> int:
    """``check_int(value, name, at_least=1)``.

    Example:
        >>> check_positive_int(0, "batch_size")
        Traceback (most recent call last):
        ...
        ValueError: `batch_size` must be a positive integer, got 0
    """
    return check_int(value, name, at_least=1)


def check_real(
    value: Any, name: str, *, above: Optional[float] = None, at_least: Optional[float] = None,
    at_most: Optional[float] = None, hint: str = ""
) -> float:
    """Return ``value`` as a float if it is a finite real number (``bool`` is not; an integer past float64's range is
    not finite) that is ``> above`` / ``≥ at_least`` / ``≤ at_most`` (each bound optional), else raise naming
    ``name`` (``hint``: appended in brackets). The one check of every real-valued option.

    Raises:
        TypeError: ``value`` is not a real number.
        ValueError: it is NaN, infinite or out of range.

    Example:
        >>> check_real(2, "sigma", above=0)
        2.0
        >>> check_real(float("inf"), "sigma", above=0)
        Traceback (most recent call last):
        ...
        ValueError: `sigma` must be a finite number > 0, got inf
    """
    if at_least is not None and at_most is not None:
        bounds = f" in [{at_least:g}, {at_most:g}]"
    else:
        bounds = " and".join(f" {sign} {bound:g}" for sign, bound in ((">", above), ("≥", at_least), ("≤", at_most))
                             if bound is not None)
    expected = f"`{name}` must be a finite number{bounds}" + (f" ({hint})" if hint else "")
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{expected}, got {describe_value(value)}")
    if not is_finite(value) or (above is not None and not value > above) or (
            at_least is not None and not value >= at_least) or (at_most is not None and not value <= at_most):
        raise ValueError(f"{expected}, got {value!r}")
    return float(value)


def check_non_negative_int(value: Any, name: str) -> int:
    """``check_int(value, name, at_least=0)``.

    Example:
        >>> check_non_negative_int(0, "seed")
        0
    """
    return check_int(value, name, at_least=0)


def _device_count(kind: str) -> int:
    """How many devices of type ``kind`` this process can use (0 when the backend is missing or unavailable)."""
    if kind == "cpu":
        return 1
    if kind == "mps":
        return int(torch.backends.mps.is_available())
    backend = getattr(torch, kind, None)  # torch.cuda, torch.xpu, torch.mtia; out-of-tree backends register here
    is_available = getattr(backend, "is_available", None)
    if not callable(is_available) or not is_available():
        return 0
    count = getattr(backend, "device_count", None)
    return int(count()) if callable(count) else 1


def available_devices() -> list[str]:
    """Devices this process can place tensors on: ``cpu``, then ``cuda:i``, ``xpu:i``, ``mps``, ``mtia:i`` that exist.

    Example:
        >>> available_devices()[0]
        'cpu'
    """
    names = ["cpu"]
    for kind in _LISTED_BACKENDS:
        count = _device_count(kind)
        names += ([kind] if count else []) if kind == "mps" else [f"{kind}:{i}" for i in range(count)]
    return names


def parse_device(device: Union[str, int, torch.device], name: str = "device") -> torch.device:
    """Read a device as torch reads it, without asking whether this machine has it (see :func:`check_device`).

    Args:
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"`` …, a ``torch.device`` or a CUDA index.
        name: argument name used in error messages.

    Returns:
        ``torch.device``.

    Raises:
        TypeError: ``device`` is not a string, an int or a ``torch.device``.
        ValueError: torch does not know the device (``"tpu"``, ``"cuda:x"``), or it is ``meta`` (holds no data).

    Example:
        >>> parse_device("cuda:1")
        device(type='cuda', index=1)
    """
    if isinstance(device, torch.device):
        parsed = device
    elif isinstance(device, bool) or not isinstance(device, (str, int)):
        raise TypeError(
            f"`{name}` must be a device name such as 'cpu' or 'cuda:0', a torch.device or a CUDA index, "
            f"got {describe_value(device)}"
        )
    else:
        try:
            parsed = torch.device(device)
        except (RuntimeError, ValueError):
            raise ValueError(
                f"`{name}` must be a torch device such as 'cpu', 'cuda', 'cuda:1' or 'mps', got {device!r}; "
                f"available here: {', '.join(available_devices())}"
            ) from None
    if parsed.type == "meta":
        raise ValueError(
            f"`{name}` must be a device that holds data, got 'meta'; available here: {', '.join(available_devices())}"
        )
    return parsed


def check_device(device: DeviceArg, name: str = "device", *, available: bool = True) -> torch.device:
    """A device torch accepts and this process can use: the check behind every ``device`` argument and ``--device``.

    Args:
        device: ``None`` (the CPU), ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ``"mps"`` …, a ``torch.device`` or a CUDA
            index, as ``torch.device`` takes them.
        name: argument name used in error messages (``"device"``, ``"--device"`` …).
        available: also check that this machine has the device; ``False``: only that torch reads it (a config
            written for a GPU machine loads anywhere, and is checked when it is run).

    Returns:
        ``torch.device``.

    Raises:
        TypeError: ``device`` is not a string, an int or a ``torch.device``.
        ValueError: torch does not know the device (``"tpu"``), its backend is not available here (``"cuda"``
            without CUDA, ``"mps"`` off Apple silicon), or its index is beyond the device count (``"cuda:7"`` on a
            2-GPU machine); the message names the argument and lists the available devices.

    Example:
        >>> check_device(None), check_device("cpu")
        (device(type='cpu'), device(type='cpu'))
        >>> check_device("tpu")
        Traceback (most recent call last):
        ...
        ValueError: `device` must be a torch device such as 'cpu', 'cuda', 'cuda:1' or 'mps', got 'tpu'; ...
    """
    if device is None or (isinstance(device, str) and device == "cpu"):
        return _CPU
    if not available:
        return parse_device(device, name)
    if type(device) is torch.device and device.type == "cpu":  # a module's own device: every update passes it
        return device
    parsed = parse_device(device, name)
    if parsed.type == "cpu":  # torch ignores a CPU index
        return parsed
    count = _device_count(parsed.type)
    if count and (parsed.index is None or parsed.index < count):
        return parsed
    backend = _BACKEND_NAMES.get(parsed.type, parsed.type)
    reason = (
        f"{backend} is not available on this machine" if not count
        else f"this machine has {count} {backend} device{'s' if count > 1 else ''} (indices 0..{count - 1})"
    )
    raise ValueError(f"`{name}` is {str(parsed)!r}, but {reason}; available: {', '.join(available_devices())}")

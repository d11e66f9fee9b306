"""Input checks shared by every metric: each error names the argument and what was expected."""

from __future__ import annotations

import itertools
from typing import Any, Sequence

from torch import Tensor

from gpumetrics.core.gcpause import gc_paused


def _describe(value: Any) -> str:
    text = repr(value)
    return f"{type(value).__name__} {text[:60]}{'…' if len(text) > 60 else ''}"


def _is_sequence(value: Any) -> bool:
    if type(value) in (list, tuple):  # fast path: the abc check costs ~30 µs per call
        return True
    return value is not None and not isinstance(value, (str, bytes, Tensor, dict)) and isinstance(value, Sequence)


def as_text_list(value: Any, name: str) -> list[str]:
    """Normalise a batch of strings.

    Args:
        value: one string or a sequence of strings.
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
    if not _is_sequence(value):
        raise TypeError(f"`{name}` must be a string or a sequence of strings, got {_describe(value)}")
    items = list(value)
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(f"`{name}[{i}]` must be a string, got {_describe(item)}")
    return items


_PLAIN_GROUPS = {str, list, tuple}


@gc_paused
def as_reference_lists(value: Any, name: str, allow_empty: bool = False) -> list[list[str]]:
    """Normalise a batch of references where each sample has one string or a list of strings.

    Args:
        value: ``Sequence[str | Sequence[str]]`` (a bare string is a batch of one sample with one reference).
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
    if not _is_sequence(value):
        raise TypeError(f"`{name}` must be a sequence of strings or of lists of strings, got {_describe(value)}")
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
        if not _is_sequence(item):
            raise TypeError(f"`{name}[{i}]` must be a string or a list of strings, got {_describe(item)}")
        group = list(item)
        for j, ref in enumerate(group):
            if not isinstance(ref, str):
                raise TypeError(f"`{name}[{i}][{j}]` must be a string, got {_describe(ref)}")
        if not group and not allow_empty:
            raise ValueError(f"`{name}[{i}]` holds no reference; every sample needs at least one")
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
            f"`{first_name}` and `{second_name}` must have the same number of samples, got {len(first)} and {len(second)}"
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

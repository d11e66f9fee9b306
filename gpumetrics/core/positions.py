"""Errors about one sample of a batch carry that sample's position as data.

A metric that refuses one item of its batch names it in the message (```preds[3]` must be a string``) and tags the
exception with the position (:func:`at_position`); whoever knows which sample sits at each position (the harness's
runner: its ids) reads it back with :func:`batch_position` — never by parsing the message, where a file name like
``img[3].png`` or a wording change would mislead it.

The position is that of the sample in the batch the raising function was given. A function that hands a subset or a
reordering of its batch to another renumbers the errors coming back (:func:`renumbered`).
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Optional, Sequence, TypeVar, Union

E = TypeVar("E", bound=BaseException)
T = TypeVar("T")

#: the attribute that holds the position (an ``int``) on a tagged exception
ATTRIBUTE = "batch_position"


def at_position(error: E, position: int) -> E:
    """``error`` tagged with the batch ``position`` of the sample it is about (a position it had is replaced).

    Example:
        >>> batch_position(at_position(ValueError("`preds[3]` is empty"), 3))
        3
    """
    setattr(error, ATTRIBUTE, int(position))
    return error


def batch_position(error: BaseException) -> Optional[int]:
    """The batch position :func:`at_position` tagged ``error`` with, else ``None`` (the message is not read).

    Example:
        >>> batch_position(ValueError("file 'img[3].png' is missing")) is None
        True
    """
    position = getattr(error, ATTRIBUTE, None)
    return position if isinstance(position, int) and not isinstance(position, bool) else None


def renumbered(error: E, positions: Sequence[int]) -> E:
    """``error`` with a position ``k`` it carries (among the items a callee got) replaced by ``positions[k]`` (that
    item's position in the caller's batch); an untagged error, or a position outside ``positions``, stays as it is.

    Example:
        >>> batch_position(renumbered(at_position(TypeError("`text[0]` …"), 0), [4, 7]))
        4
    """
    position = batch_position(error)
    if position is not None and 0 <= position < len(positions):
        at_position(error, positions[position])
    return error


def sample_error(kind: type[E], name: str, position: int, detail: str, inner: Iterable[Union[int, str]] = ()) -> E:
    """``kind("`name[position]` detail")`` tagged with ``position``; ``inner`` indexes inside the sample
    (``name[2][0]``, a string key shown as its ``repr``). A ``detail`` starting with ``:`` follows the name directly.

    Example:
        >>> error = sample_error(TypeError, "target", 2, "must be a string, got int", inner=[0])
        >>> str(error), batch_position(error)
        ('`target[2][0]` must be a string, got int', 2)
    """
    where = f"{name}[{position}]" + "".join(f"[{index!r}]" if isinstance(index, str) else f"[{index}]"
                                            for index in inner)
    return at_position(kind(f"`{where}`{'' if detail.startswith(':') else ' '}{detail}"), position)


def convert_each(convert: Callable[[Any, str], T], items: Iterable[Any], name: Callable[[int], str]) -> list[T]:
    """``[convert(item, name(k)) for k, item in enumerate(items)]`` — ``convert`` checks one sample, named
    ``name(k)`` in its messages — with a ``TypeError`` / ``ValueError`` it raises tagged with ``k``.

    Example:
        >>> try:
        ...     convert_each(lambda x, what: int(x) if x.isdigit() else int(f"{what}"), ["1", "x"], "item {}".format)
        ... except ValueError as error:
        ...     print(batch_position(error))
        1
    """
    out = []
    for position, item in enumerate(items):
        try:
            out.append(convert(item, name(position)))
        except (TypeError, ValueError) as error:
            raise at_position(error, position)
    return out

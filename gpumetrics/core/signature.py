"""Signatures that tell whether two scores are comparable (in the spirit of sacrebleu's)."""

from __future__ import annotations

from importlib import metadata
from typing import Any, Mapping


def library_version() -> str:
    """The installed gpumetrics version, ``0+unknown`` when running from an uninstalled tree."""
    try:
        return metadata.version("gpumetrics")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def format_signature(name: str, fields: Mapping[str, Any]) -> str:
    """Join ``name`` and ``key:value`` pairs with ``|``, ending with the library version.

    Args:
        name: metric name, e.g. ``"bleu"``.
        fields: ordered pairs; ``None`` values are left out, booleans written ``yes``/``no``.

    Returns:
        e.g. ``"bleu|mode:sacrebleu|tok:13a|smooth:exp|version:0.1.0"``.

    Example:
        >>> format_signature("token_f1", {"preset": "squad", "lowercase": True})[:33]
        'token_f1|preset:squad|lowercase:y'
    """
    parts = [name]
    for key, value in fields.items():
        if value is None:
            continue
        if isinstance(value, bool):
            value = "yes" if value else "no"
        parts.append(f"{key}:{value}")
    parts.append(f"version:{library_version()}")
    return "|".join(parts)

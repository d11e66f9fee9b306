"""Suite-wide collection rule: a test that skips without CUDA (``skipif(..., reason="needs CUDA …")``) belongs to the
CUDA suite, so ``make test-cuda`` (``pytest -m cuda``) runs it beside ``tests/cuda/`` without each file repeating the
marker."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if any("CUDA" in str(mark.kwargs.get("reason", "")) for mark in item.iter_markers("skipif")):
            item.add_marker(pytest.mark.cuda)

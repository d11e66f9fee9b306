"""Suite-wide collection rules: a test that skips without CUDA (``skipif(..., reason="needs CUDA …")``) belongs to the
CUDA suite, so ``make test-cuda`` (``pytest -m cuda``) runs it beside ``tests/cuda/`` without each file repeating the
marker; the two-process CUDA DDP tests run last (the slowest: a time budget on a lent GPU cuts them and nothing
else). Also the random-weight tiny CLIP models the image tests and the CUDA suite share (session fixtures)."""

from __future__ import annotations

import json

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if any("CUDA" in str(mark.kwargs.get("reason", "")) for mark in item.iter_markers("skipif")):
            item.add_marker(pytest.mark.cuda)
    items.sort(key=lambda item: item.nodeid.startswith("tests/cuda/test_cuda_ddp.py"))  # stable: the rest keep order


@pytest.fixture(scope="session")
def hf_clip_dir(tmp_path_factory) -> str:
    """A random-weight tiny hf CLIP saved with ``save_pretrained`` (weights, tokenizer, preprocessor config)."""
    from testkit.clip_models import TINY_CLIP, save_random_hf_clip

    return save_random_hf_clip(tmp_path_factory.mktemp("tiny_hf_clip"), TINY_CLIP)


@pytest.fixture(scope="session")
def open_clip_config(tmp_path_factory) -> str:
    """The path of a tiny open_clip model config (random weights with ``pretrained="random"``)."""
    from tests.image.test_clip_score import TINY_OPEN_CLIP

    path = tmp_path_factory.mktemp("tiny_open_clip") / "tiny-clip.json"
    path.write_text(json.dumps(TINY_OPEN_CLIP))
    return str(path)

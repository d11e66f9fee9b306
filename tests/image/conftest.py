"""Shared fixtures of the image tests: one random-weight FID Inception state_dict, saved once per session."""

from __future__ import annotations

import pytest
import torch

from gpumetrics.image.inception import random_fid_inception_state_dict


@pytest.fixture(scope="session")
def inception_state():
    return random_fid_inception_state_dict(seed=0)


@pytest.fixture(scope="session")
def inception_file(inception_state, tmp_path_factory):
    path = tmp_path_factory.mktemp("weights") / "random_fid_inception.pth"
    torch.save(inception_state, path)
    return path


@pytest.fixture(autouse=True)
def feature_cache_dir(tmp_path_factory, monkeypatch):
    """The default feature cache of every image test: a fresh folder per test, never the user's ~/.cache."""
    from gpumetrics.image import feature_cache

    folder = tmp_path_factory.mktemp("feature-cache")
    monkeypatch.setattr(feature_cache, "default_cache_dir", lambda: folder)
    return folder


@pytest.fixture
def extracted(monkeypatch):
    """The batch sizes every ``FIDInceptionV3`` forward is called with, in order (the cache tests count them)."""
    from gpumetrics.image.inception import FIDInceptionV3

    calls = []
    original = FIDInceptionV3.forward

    def counting(self, images):
        calls.append(images.shape[0])
        return original(self, images)

    monkeypatch.setattr(FIDInceptionV3, "forward", counting)
    return calls

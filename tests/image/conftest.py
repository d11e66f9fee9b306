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

"""The image networks' precision policy where it bites: on CUDA the default path is true float32 (equal to the CPU to
float32 rounding even when the caller allows TF32), and every speed mode stays within its documented bound of the
CPU's exact value (FID's Inception: ``tests/image/test_speed_modes.BOUNDS``; CLIP: ``SPEED_BOUNDS``)."""

from __future__ import annotations

import warnings

import pytest
import torch

from gpumetrics.image.clip_score import clip_score
from gpumetrics.image.fid import FrechetInceptionDistance
from gpumetrics.image.inception import random_fid_inception_state_dict
from tests.image.test_clip_score import CAPTIONS, SPEED_BOUNDS, _images as _clip_images
from tests.image.test_speed_modes import BOUNDS, _images

CUDA = torch.cuda.is_available()
pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not CUDA, reason="needs CUDA: run `make test-cuda` on a GPU machine")]
#: the default path on CUDA vs the CPU: float32 rounding in another summation order (TF32 would be ~1e-3)
EXACT_FEATURES = 1e-4
#: every precision and layout; compile once, combined (compiling Inception costs most of a minute on a GPU)
FID_MODES = sorted(mode for mode in BOUNDS if mode != "compile") + ["fastest", "bf16+channels_last+compile"]
_BOUND_OF = {"fastest": "bf16+channels_last", "bf16+channels_last+compile": "bf16+channels_last"}


@pytest.fixture(scope="module")
def state():
    return random_fid_inception_state_dict(seed=0)


def _fid(state, device, speed_mode=None):
    metric = FrechetInceptionDistance(feature=2048, weights=state, speed_mode=speed_mode).to(device)
    outputs = []
    metric.extractor.register_forward_hook(lambda module, args, out: outputs.append(out.float().cpu()))
    real, fake = _images()
    metric.update(real.to(device), real=True)
    metric.update(fake.to(device), real=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 2 samples in 2048 dimensions: rank-deficient, by design
        return float(metric.compute()), torch.cat(outputs)


@pytest.fixture(scope="module")
def cpu_exact(state):
    return _fid(state, "cpu")


def test_default_path_on_cuda_is_true_float32_even_when_the_caller_allows_tf32(state, cpu_exact):
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
    try:
        fid, features = _fid(state, "cuda")
        assert torch.backends.cuda.matmul.allow_tf32 and torch.backends.cudnn.allow_tf32  # the caller's, restored
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn
    exact_fid, exact_features = cpu_exact
    scale = float(exact_features.abs().max())
    print(f"\ndefault path: CUDA features {float((features - exact_features).abs().max()) / scale:.3g} of max off")
    assert float((features - exact_features).abs().max()) <= EXACT_FEATURES * scale
    assert fid == pytest.approx(exact_fid, rel=1e-3)


@pytest.mark.parametrize("mode", FID_MODES)
def test_fid_speed_modes_on_cuda_within_their_bound_of_the_cpu(state, cpu_exact, mode):
    fid, features = _fid(state, "cuda", mode)
    exact_fid, exact_features = cpu_exact
    feature_bound, fid_bound = BOUNDS[_BOUND_OF.get(mode, mode)]
    scale = float(exact_features.abs().max())
    off = float((features - exact_features).abs().max())
    print(f"\n{mode}: features {off / scale:.3g} of max off; FID {fid:.6g} vs {exact_fid:.6g}")
    assert off <= feature_bound * scale
    assert abs(fid - exact_fid) <= fid_bound * exact_fid


#: uint8 images: the CPU resizes them with its uint8 kernel, CUDA in float in two rounded passes (clip_score.
#: _resize_bicubic): ≤ 2 grey levels apart; measured on the CPU with the CUDA path forced: 7e-5 (hf), 1.5e-4
#: (open_clip) on these noise images
UINT8_RESIZE_BOUND = 3e-4


@pytest.mark.parametrize("backend", ["hf", "open_clip"])
@pytest.mark.parametrize("mode", [None] + sorted(SPEED_BOUNDS))
def test_clip_on_cuda_within_its_bound_of_the_cpu(backend, mode, hf_clip_dir, open_clip_config):
    """Float images (resized in float on both devices), so the bound is the precision's alone."""
    args = (backend, hf_clip_dir, "random") if backend == "hf" else (backend, open_clip_config, "random")
    images = _clip_images(6, seed=5).float() / 255
    exact = clip_score(images, CAPTIONS[:6], *args, scale=1, clamp=False, reduction="none")
    fast = clip_score(images.cuda(), CAPTIONS[:6], *args, scale=1, clamp=False, reduction="none", speed_mode=mode,
                      device="cuda")
    bound = 1e-5 if mode is None else SPEED_BOUNDS[mode]
    print(f"\n{backend} {mode}: {float((fast.cpu() - exact).abs().max()):.3g} off (bound {bound:g})")
    assert fast.device.type == "cuda" and float((fast.cpu() - exact).abs().max()) <= bound


@pytest.mark.parametrize("backend", ["hf", "open_clip"])
def test_clip_uint8_images_on_cuda_within_the_resize_bound_of_the_cpu(backend, hf_clip_dir, open_clip_config):
    args = (backend, hf_clip_dir, "random") if backend == "hf" else (backend, open_clip_config, "random")
    images = _clip_images(6, seed=5)
    exact = clip_score(images, CAPTIONS[:6], *args, scale=1, clamp=False, reduction="none")
    on_cuda = clip_score(images.cuda(), CAPTIONS[:6], *args, scale=1, clamp=False, reduction="none", device="cuda")
    off = float((on_cuda.cpu() - exact).abs().max())
    print(f"\n{backend} uint8: {off:.3g} off (bound {UINT8_RESIZE_BOUND:g})")
    assert off <= UINT8_RESIZE_BOUND


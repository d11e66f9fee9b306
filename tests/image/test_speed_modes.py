"""Opt-in speed modes of the FID extractor: non-parity, recorded in the signature, deviation within documented bounds.

Bounds (documented in ``gpumetrics.image.inception``) relative to the exact default path, on random weights:
``channels_last`` / ``compile`` — features max abs diff ≤ 1e-4, FID ≤ 1e-3 relative; ``bf16`` — features max abs
diff ≤ 5 % of the largest exact feature, FID ≤ 10 % relative; ``fp16`` — 2 % and 5 %.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from gpumetrics.image.fid import FrechetInceptionDistance
from gpumetrics.image.inception import FIDInceptionV3

BOUNDS = {  # mode: (feature max abs diff as a fraction of max |exact feature|, FID relative difference)
    "channels_last": (1e-4, 1e-3),
    "bf16": (5e-2, 1e-1),
    "fp16": (2e-2, 5e-2),
    "compile": (1e-4, 1e-3),
    "tf32": (1e-2, 1e-2),  # a CPU computes float32 here: the CUDA suite checks the bound where it bites
    "bf16+channels_last": (5e-2, 1e-1),
    "fp16+channels_last": (2e-2, 5e-2),
    "tf32+channels_last": (1e-2, 1e-2),
}


def _images():
    generator = torch.Generator().manual_seed(1)
    real = torch.rand(2, 3, 61, 77, generator=generator)
    fake = (torch.rand(2, 3, 61, 77, generator=generator) * 0.7 + 0.1).clamp(0, 1)
    return real, fake


def _fid_and_features(state, speed_mode, fid=True):
    """FID of 2 real vs 2 fake images through ``update`` (``None`` unless ``fid``) and the features the metric's
    extractor produced."""
    metric = FrechetInceptionDistance(feature=2048, weights=state, speed_mode=speed_mode)
    outputs = []
    metric.extractor.register_forward_hook(lambda module, args, out: outputs.append(out))
    real, fake = _images()
    metric.update(real, real=True)
    metric.update(fake, real=False)
    value = None
    if fid:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # 2 samples in 2048 dimensions: rank-deficient, by design of this test
            value = float(metric.compute())
    return metric, value, torch.cat(outputs)


@pytest.fixture(scope="module")
def exact(inception_state):
    return _fid_and_features(inception_state, None)


def _check_mode(mode, state, exact, fid=True):
    _, exact_fid, exact_features = exact
    metric, value, features = _fid_and_features(state, mode, fid)
    assert f"|speed:{mode}|" in metric.signature()
    assert features.dtype == torch.float32 and features.shape == exact_features.shape
    feature_diff = float((features - exact_features).abs().max())
    feature_bound, fid_bound = BOUNDS[mode]
    print(f"speed_mode={mode}: features max abs diff {feature_diff:.3g} (max |feature| "
          f"{float(exact_features.abs().max()):.3g})")
    assert torch.isfinite(features).all()
    assert feature_diff <= feature_bound * float(exact_features.abs().max())
    if fid:
        print(f"speed_mode={mode}: FID {value:.6g} vs exact {exact_fid:.6g} (diff {abs(value - exact_fid):.3g})")
        assert value == value and abs(value) != float("inf")
        assert abs(value - exact_fid) <= fid_bound * exact_fid


# The FID of every mode is checked where the mode changes the numbers on a CPU (bf16, fp16) and where it changes the
# memory layout alone (channels_last); the other modes' features here, their FID under -m slow: each FID of 2048-d
# rank-deficient covariances costs two eigen-decompositions (~15 s on the 2-core VM), the features ~2 s
FID_CHECKED = ("channels_last", "bf16", "fp16")


@pytest.mark.parametrize("mode", ["channels_last", "bf16", "fp16", "tf32", "bf16+channels_last", "fp16+channels_last",
                                  "tf32+channels_last"])
def test_speed_mode_deviation_is_within_the_documented_bound(mode, inception_state, exact):
    _check_mode(mode, inception_state, exact, fid=mode in FID_CHECKED)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["tf32", "bf16+channels_last", "fp16+channels_last", "tf32+channels_last"])
def test_speed_mode_fid_deviation_is_within_the_documented_bound(mode, inception_state, exact):
    _check_mode(mode, inception_state, exact)


@pytest.mark.slow
def test_compile_mode_deviation_is_within_the_documented_bound(inception_state, exact):
    _check_mode("compile", inception_state, exact)


def test_default_is_the_exact_path_and_not_in_the_signature(exact):
    metric, fid, _ = exact
    assert "speed" not in metric.signature()
    assert metric.extractor.speed_mode is None
    assert fid > 0


def test_speed_mode_keeps_pytorch_fid_state_dict_keys(inception_state):
    exact_keys = list(FIDInceptionV3(dims=64, weights=inception_state).state_dict())
    for mode in BOUNDS:
        net = FIDInceptionV3(dims=64, weights=inception_state, speed_mode=mode)
        assert list(net.state_dict()) == exact_keys


def test_bad_speed_mode_names_the_argument(inception_state):
    with pytest.raises(ValueError, match="speed_mode"):
        FIDInceptionV3(dims=64, weights=inception_state, speed_mode="fast")
    with pytest.raises(ValueError, match="speed_mode"):
        FrechetInceptionDistance(feature=64, weights=inception_state, speed_mode="fp8")

    class Custom(nn.Module):
        dims = 4

        def forward(self, images):
            return images.flatten(1)[:, :4]

    with pytest.raises(ValueError, match="speed_mode"):
        FrechetInceptionDistance(feature=Custom(), speed_mode="bf16")


def test_fastest_preset_is_bf16_channels_last_in_the_signature(inception_state):
    net = FIDInceptionV3(dims=64, weights=inception_state, speed_mode="fastest")
    assert net.signature_fields()["speed"] == "bf16+channels_last"
    assert net.blocks[0][0].conv.weight.is_contiguous(memory_format=torch.channels_last)


@pytest.mark.parametrize("mode", [None, "fp32"])
def test_default_path_is_the_raw_network_bit_for_bit_on_cpu(mode, inception_state):
    from gpumetrics.image.inception import resize_images

    net = FIDInceptionV3(dims=192, weights=inception_state, speed_mode=mode)
    assert net.speed_mode is None and "speed" not in net.signature_fields()
    images = torch.rand(2, 3, 80, 90, generator=torch.Generator().manual_seed(3))
    raw = net.blocks(2 * resize_images(images, "pytorch-fid") - 1)
    raw = torch.nn.functional.adaptive_avg_pool2d(raw, (1, 1)).flatten(1)
    assert torch.equal(net(images), raw)


def test_kid_takes_the_same_speed_modes(inception_state):
    from gpumetrics.image.kid import KernelInceptionDistance

    kid = KernelInceptionDistance(feature=64, weights=inception_state, speed_mode="bf16", subsets=2, subset_size=2)
    assert "|speed:bf16|" in kid.signature()
    with pytest.raises(ValueError, match="speed_mode"):
        KernelInceptionDistance(feature=64, weights=inception_state, speed_mode="fp8")

"""FID Inception extractor vs pytorch-fid's ``InceptionV3`` on the same random weights; resize modes; weights."""

from __future__ import annotations

import dataclasses
from unittest import mock

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from PIL import Image

import pytorch_fid.inception as pfi
from gpumetrics.image import weights as weights_mod
from gpumetrics.image.inception import FIDInceptionV3, check_images, resize_images


def _pytorch_fid_model(state, blocks=(0, 1, 2, 3)):
    with mock.patch.object(pfi, "load_state_dict_from_url", return_value=state):
        return pfi.InceptionV3(list(blocks)).eval()


def _pool(pred):
    """pytorch-fid's ``get_activations`` on one output: average-pooled if spatial, squeezed."""
    if pred.shape[2] != 1 or pred.shape[3] != 1:
        pred = F.adaptive_avg_pool2d(pred, output_size=(1, 1))
    return pred.squeeze(3).squeeze(2)


def test_features_match_pytorch_fid_on_odd_sizes(inception_state):
    generator = torch.Generator().manual_seed(0)
    # one full forward per shape is all this shared 2-core machine affords: the 2nd shape checks the first blocks
    for shape, all_dims in [((1, 3, 97, 131), (64, 192, 768, 2048)), ((2, 3, 300, 41), (64, 192))]:
        images = torch.rand(*shape, generator=generator)
        with torch.no_grad():
            reference = [_pool(pred) for pred in _pytorch_fid_model(inception_state, range(len(all_dims)))(images)]
        for dims, expected in zip(all_dims, reference):
            ours = FIDInceptionV3(dims=dims, weights=inception_state)(images)
            assert ours.shape == (shape[0], dims)
            assert ours.abs().mean() > 1e-2  # the random network is not degenerate: features carry signal
            assert (ours - expected).abs().max() <= 1e-4, (shape, dims)


def test_uint8_input_is_to_tensor_scaling(inception_state):
    generator = torch.Generator().manual_seed(3)
    images = torch.randint(0, 256, (2, 3, 45, 30), dtype=torch.uint8, generator=generator)
    net = FIDInceptionV3(dims=192, weights=inception_state)
    with torch.no_grad():
        reference = _pool(_pytorch_fid_model(inception_state, [1])(images.float() / 255)[0])
    assert (net(images) - reference).abs().max() <= 1e-4
    assert torch.equal(net(images), net(images.float() / 255))


@pytest.mark.parametrize("size", [(97, 131), (512, 401), (299, 299), (20, 700)])
def test_clean_resize_matches_pil_bicubic(size):
    generator = torch.Generator().manual_seed(sum(size))
    image = torch.randint(0, 256, (1, 3, *size), dtype=torch.uint8, generator=generator)
    ours = resize_images(image.float() / 255, "clean")[0] * 255
    array = image[0].permute(1, 2, 0).numpy()
    channels = [
        np.asarray(Image.fromarray(array[:, :, c].astype(np.float32), mode="F").resize((299, 299), Image.BICUBIC))
        for c in range(3)
    ]
    reference = torch.from_numpy(np.stack(channels).clip(0, 255))
    assert (ours - reference).abs().max() <= 1e-3  # grey levels out of 255


def test_pytorch_fid_resize_is_bilinear_without_antialias():
    images = torch.rand(1, 3, 600, 50)
    expected = F.interpolate(images, size=(299, 299), mode="bilinear", align_corners=False)
    assert torch.equal(resize_images(images, "pytorch-fid"), expected)


def test_resize_mode_is_recorded_and_default_is_pytorch_fid(inception_state):
    assert FIDInceptionV3(dims=64, weights=inception_state).signature_fields()["resize"] == "pytorch-fid"
    clean = FIDInceptionV3(dims=64, weights=inception_state, resize="clean")
    assert clean.signature_fields() == {"dims": 64, "weights": "state_dict", "resize": "clean"}
    with pytest.raises(ValueError, match="`resize`"):
        FIDInceptionV3(dims=64, weights=inception_state, resize="bicubic")


def test_bad_images_name_the_argument():
    with pytest.raises(ValueError, match="`images`.*3 \\(RGB\\) channels"):
        check_images(torch.rand(2, 1, 8, 8))
    with pytest.raises(ValueError, match="`images`.*\\[0, 1\\]"):
        check_images(torch.rand(2, 3, 8, 8) - 0.5)
    with pytest.raises(ValueError, match="`images`.*\\[0, 1\\]"):
        check_images(torch.full((1, 3, 4, 4), float("nan")))
    with pytest.raises(ValueError, match="`images` is empty"):
        check_images(torch.rand(0, 3, 8, 8))
    with pytest.raises(ValueError, match="`images`"):
        check_images(torch.rand(3, 8, 8))
    with pytest.raises(TypeError, match="`images`"):
        check_images(torch.ones(1, 3, 4, 4, dtype=torch.int32))
    with pytest.raises(TypeError, match="`images`"):
        check_images(np.zeros((1, 3, 4, 4)))


def _no_network_call(*args, **kwargs):
    raise AssertionError("a download was attempted without being asked for")


def test_random_weights_only_when_asked_and_in_signature(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUMETRICS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))
    monkeypatch.delenv("GPUMETRICS_DOWNLOAD", raising=False)
    monkeypatch.setattr(torch.hub, "download_url_to_file", _no_network_call)  # offline first: never reached
    with pytest.raises(FileNotFoundError, match="pt_inception-2015-12-05-6726825d.pth") as info:
        FIDInceptionV3(dims=64)
    message = str(info.value)
    assert str(tmp_path / "home") in message and "github.com/mseitzer/pytorch-fid" in message
    assert FIDInceptionV3(dims=64, weights="random").signature_fields()["weights"] == "random"
    assert FIDInceptionV3(dims=64, weights="random", seed=3).signature_fields()["weights"] == "random(seed=3)"
    with pytest.raises(TypeError, match="`weights`"):
        FIDInceptionV3(dims=64, weights=3)
    with pytest.raises(ValueError, match="`dims`"):
        FIDInceptionV3(dims=100, weights="random")
    for seed in (None, 1.5, "1", True):  # torch.manual_seed's RuntimeError named nothing (found by fuzzing)
        with pytest.raises(TypeError, match="`seed` must be an int"):
            FIDInceptionV3(dims=64, weights="random", seed=seed)


def test_weight_file_load_order_and_hash(tmp_path, monkeypatch, inception_state, inception_file):
    """path → $GPUMETRICS_HOME → torch hub cache; pinned hash checked; a corrupt file is refused."""
    home, hub = tmp_path / "home", tmp_path / "torch"
    monkeypatch.setenv("GPUMETRICS_HOME", str(home))
    monkeypatch.setenv("TORCH_HOME", str(hub))
    monkeypatch.delenv("GPUMETRICS_DOWNLOAD", raising=False)
    digest = weights_mod.file_sha256(inception_file)
    # pretend the random file is the pinned one, so the registry path can be exercised without the real weights
    size = inception_file.stat().st_size
    pinned = dataclasses.replace(weights_mod.FID_INCEPTION, sha256=digest, size_bytes=size)
    monkeypatch.setitem(weights_mod.WEIGHTS, pinned.name, pinned)
    file_name = pinned.file_name

    (hub / "hub" / "checkpoints").mkdir(parents=True)
    (hub / "hub" / "checkpoints" / file_name).write_bytes(inception_file.read_bytes())
    assert weights_mod.resolve_weights(pinned.name) == hub / "hub" / "checkpoints" / file_name
    net = FIDInceptionV3(dims=64)
    assert net.weights_tag == f"pt_inception-2015-12-05@{digest[:8]}"
    probe = torch.rand(1, 3, 40, 40)
    assert torch.equal(net(probe), FIDInceptionV3(dims=64, weights=inception_state)(probe))

    home.mkdir()
    (home / file_name).write_bytes(b"corrupt")  # $GPUMETRICS_HOME comes first, and its size is checked
    with pytest.raises(ValueError, match=f"7 bytes, expected {size:,}"):
        weights_mod.resolve_weights(pinned.name)
    tampered = bytearray(inception_file.read_bytes())
    tampered[-1] ^= 1  # right size, one flipped bit: only the full digest can tell
    (home / file_name).write_bytes(bytes(tampered))
    with pytest.raises(ValueError, match=f"expected {digest}"):
        weights_mod.resolve_weights(pinned.name)

    # an explicit path wins; a file of another name is the user's own weights, tagged by its own hash
    assert weights_mod.resolve_weights(pinned.name, path=inception_file) == inception_file
    assert FIDInceptionV3(dims=64, weights=str(inception_file)).weights_tag == f"pt_inception-2015-12-05@{digest[:8]}"
    monkeypatch.setitem(weights_mod.WEIGHTS, pinned.name, weights_mod.FID_INCEPTION)
    assert FIDInceptionV3(dims=64, weights=inception_file).weights_tag == f"file@{digest[:8]}"
    with pytest.raises(FileNotFoundError, match="does not exist"):
        FIDInceptionV3(dims=64, weights=tmp_path / "missing.pth")


def test_the_pinned_weight_file_is_hashed_once_per_load(tmp_path, monkeypatch, inception_file):
    """The pinned file's sha256 was computed twice per model built — to check it, then again for the signature's
    tag (95 MB: ~0.1 s a run of ``gpumetrics fid`` before the network could start). The check's digest is the
    tag's now; a file of another name is hashed once, for its tag."""
    digest = weights_mod.file_sha256(inception_file)
    pinned = dataclasses.replace(weights_mod.FID_INCEPTION, sha256=digest, size_bytes=inception_file.stat().st_size)
    monkeypatch.setitem(weights_mod.WEIGHTS, pinned.name, pinned)
    named = tmp_path / pinned.file_name
    named.write_bytes(inception_file.read_bytes())
    hashed = []
    monkeypatch.setattr(weights_mod, "file_sha256", lambda path: (hashed.append(path), digest)[1])
    for path, tag in ((named, pinned.tag), (inception_file, pinned.tag)):
        hashed.clear()
        assert weights_mod.load_weights(pinned.name, path)[1] == tag and hashed == [path]
    monkeypatch.setitem(weights_mod.WEIGHTS, pinned.name, dataclasses.replace(pinned, sha256="0" * 64))
    hashed.clear()
    assert weights_mod.load_weights(pinned.name, inception_file)[1] == f"file@{digest[:8]}" and len(hashed) == 1


def test_fid_inception_pin_is_the_full_published_digest():
    entry = weights_mod.FID_INCEPTION
    assert len(entry.sha256) == 64 and all(c in "0123456789abcdef" for c in entry.sha256)
    assert entry.sha256.startswith(entry.sha256_prefix) and entry.sha256_prefix in entry.file_name
    assert entry.size_bytes == 95_628_359 and entry.tag == "pt_inception-2015-12-05@6726825d"


def test_download_failure_gives_placement_instructions(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUMETRICS_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "torch"))

    def no_network(*args, **kwargs):
        raise OSError("network unreachable")

    monkeypatch.setattr(torch.hub, "download_url_to_file", no_network)
    with pytest.raises(FileNotFoundError, match="download failed: network unreachable"):
        weights_mod.resolve_weights("pt_inception-2015-12-05", download=True)
    assert not (tmp_path / "home" / "pt_inception-2015-12-05-6726825d.pth").exists()


def test_a_file_that_is_not_inception_weights_is_a_value_error_naming_it(tmp_path):
    not_torch = tmp_path / "notes.pth"
    not_torch.write_text("hello")
    with pytest.raises(ValueError, match=r"notes\.pth' is not a torch weight file"):
        FIDInceptionV3(weights=not_torch)
    other = tmp_path / "other.pth"
    torch.save({"linear.weight": torch.zeros(2, 2)}, other)
    with pytest.raises(ValueError, match=r"not pytorch-fid's Inception-v3 state_dict: .*Missing key"):
        FIDInceptionV3(weights=other)

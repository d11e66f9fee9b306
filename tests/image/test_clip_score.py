"""CLIPScore: hf backend vs torchmetrics on the same tiny random CLIPModel; open_clip vs a direct cosine; DDP."""

from __future__ import annotations

import json
import socket
import time
import warnings

import pytest
import torch
import torch.nn.functional as F

from gpumetrics.image.clip_score import CLIPScore, clip_score
from testkit.clip_models import TINY_CLIP, TensorFeatures, save_random_hf_clip
from tests.helpers.harness import check_metric

TINY_OPEN_CLIP = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}
CAPTIONS = ["a photo of a cat", "Кошка на диване", "猫がソファにいる", "a dog 🐶 running", "e\u0301te\u0301", ""]


def _images(n, seed, size=(3, 45, 37)):
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (n, *size), dtype=torch.uint8, generator=generator)


def _torchmetrics_per_sample_reference(model_dir):
    """torchmetrics' CLIP score of each pair alone (its clamp is on the batch mean: per pair it is per sample)."""
    from torchmetrics.functional.multimodal import clip_score as tm_clip_score
    from transformers import CLIPModel, CLIPProcessor

    model, processor = TensorFeatures(CLIPModel.from_pretrained(model_dir)), CLIPProcessor.from_pretrained(model_dir)

    def reference(images, captions):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            scores = [
                float(tm_clip_score(image, caption, lambda: (model, processor)))
                for image, caption in zip(images, captions)
            ]
        return sum(scores) / len(scores)

    return reference


def test_hf_backend_matches_torchmetrics_on_the_same_model(hf_clip_dir):
    images = _images(len(CAPTIONS), seed=0)
    ours = clip_score(images, CAPTIONS, backend="hf", model_name=hf_clip_dir)
    expected = _torchmetrics_per_sample_reference(hf_clip_dir)(images, CAPTIONS)
    assert float(ours) == pytest.approx(expected, abs=1e-4)
    # scale 1 is the raw cosine (aij2022), 2.5 the paper's weight
    raw = clip_score(images, CAPTIONS, backend="hf", model_name=hf_clip_dir, scale=1)
    assert float(raw) == pytest.approx(expected / 100, abs=1e-6)


def _direct_open_clip_cosines(config_path, images, captions):
    import open_clip
    from torchvision.transforms.v2 import functional as TF

    open_clip.add_model_config(config_path)
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = open_clip.create_model("tiny-clip", pretrained=None).eval()
    cfg = model.visual.preprocess_cfg
    pixels = TF.center_crop(TF.resize(images, [32], interpolation=TF.InterpolationMode.BICUBIC, antialias=True), [32])
    pixels = TF.normalize(pixels.float() / 255, list(cfg["mean"]), list(cfg["std"]))
    tokens = open_clip.get_tokenizer("tiny-clip")(captions)
    with torch.no_grad():
        return F.cosine_similarity(model.encode_image(pixels).double(), model.encode_text(tokens).double())


def test_open_clip_backend_equals_direct_cosine(open_clip_config):
    images = _images(len(CAPTIONS), seed=1)
    cosines = _direct_open_clip_cosines(open_clip_config, images, CAPTIONS)
    for scale in (100, 2.5, 1):
        ours = clip_score(images, CAPTIONS, "open_clip", open_clip_config, "random", scale=scale)
        assert float(ours) == pytest.approx(float((scale * cosines).clamp(min=0).mean()), rel=1e-9, abs=1e-12)


def test_truncation_keeps_end_of_text_token(hf_clip_dir, open_clip_config):
    long_caption = " ".join(["word"] * 200)
    metric = CLIPScore("hf", hf_clip_dir)
    tokens, mask = metric.encoder.tokenize([long_caption, "short"], torch.device("cpu"))
    assert tokens.shape == (2, 77) and int(tokens[0, -1]) == 49407 and int(mask[1].sum()) == 3
    # the 200-token caption scores like its explicit truncation with the end-of-text token kept
    truncated = metric.encoder.tokenizer.decode(tokens[0, 1:-1])
    image = _images(1, seed=3)
    assert float(clip_score(image, [long_caption], "hf", hf_clip_dir)) == pytest.approx(
        float(clip_score(image, [truncated], "hf", hf_clip_dir)), rel=1e-9
    )
    open_metric = CLIPScore("open_clip", open_clip_config, "random")
    tokens = open_metric.encoder.tokenizer([long_caption])
    assert tokens.shape == (1, 77) and int(tokens[0, -1]) == 49407


@pytest.mark.parametrize("backend", ["open_clip", "hf"])
def test_set_dtype_casts_the_encoder_and_its_pixels(backend, open_clip_config, hf_clip_dir):
    """``set_dtype(d)`` casts the encoder's weights (conventions.md), but the pixels stayed float32: every later
    ``update`` failed inside torch's conv (RuntimeError: input type FloatTensor and weight type DoubleTensor / Half;
    found by fuzzing). The pixels follow the encoder's dtype, as FID's Inception takes them."""
    images, captions = _images(3, seed=5), CAPTIONS[:3]
    model = open_clip_config if backend == "open_clip" else hf_clip_dir
    want = float(CLIPScore(backend, model, "random" if backend == "open_clip" else None)(images, captions))
    for dtype, rel in ((torch.float64, 1e-4), (torch.bfloat16, 0.2)):
        metric = CLIPScore(backend, model, "random" if backend == "open_clip" else None)
        metric.set_dtype(dtype)
        metric.update(images, captions)
        assert next(metric.encoder.parameters()).dtype == dtype
        assert float(metric.compute()) == pytest.approx(want, rel=rel)


def test_complex_images_are_a_type_error_naming_the_argument(open_clip_config):
    """Complex images took the integer path and failed in ``torch.aminmax`` (NotImplementedError; found by
    fuzzing)."""
    metric = CLIPScore("open_clip", open_clip_config, "random")
    metric.update(_images(2, seed=6), CAPTIONS[:2])
    before = float(metric.compute())
    for images in (_images(2, seed=7).to(torch.complex64), [_images(1, seed=7)[0].to(torch.complex64)]):
        with pytest.raises(TypeError, match=r"`images(\[0\])?` must be uint8 or floating point, got torch.complex64"):
            metric.update(images, CAPTIONS[:len(images)])
    assert float(metric.compute()) == before


class _CountingCLIPScore(CLIPScore):
    calls = 0

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        original = self.encoder.forward

        def counted(*args):
            type(self).calls += 1
            return original(*args)

        self.encoder.forward = counted


def test_one_model_call_per_forward(open_clip_config):
    metric = _CountingCLIPScore(backend="open_clip", model_name=open_clip_config, pretrained="random")
    value = metric(_images(3, seed=4), CAPTIONS[:3])
    assert _CountingCLIPScore.calls == 1 and float(value) >= 0


@pytest.mark.ddp
def test_clip_score_harness_with_ddp(open_clip_config):
    batches = [(_images(n, seed=10 + i), CAPTIONS[:n]) for i, n in enumerate((2, 1, 4))]
    kwargs = {"backend": "open_clip", "model_name": open_clip_config, "pretrained": "random", "scale": 100.0}

    def reference(images, captions):
        return float((100 * _direct_open_clip_cosines(open_clip_config, images, captions)).clamp(min=0).mean())

    # float32 encoders: batch composition (text padding length, GEMM blocking) moves scores by ~1e-7 relative
    check_metric(CLIPScore, clip_score, reference, batches, metric_kwargs=kwargs, atol=1e-5, reference_atol=1e-5)


def test_clip_score_bad_inputs_name_the_argument(open_clip_config, hf_clip_dir):
    metric = CLIPScore("open_clip", open_clip_config, "random")
    with pytest.raises(ValueError, match="`images` and `captions`"):
        metric.update(_images(2, seed=0), ["only one"])
    with pytest.raises(ValueError, match="`images`.*channels"):
        metric.update(torch.rand(1, 4, 32, 32), ["x"])
    with pytest.raises(ValueError, match="`images`.*\\[0, 1\\]"):
        metric.update(-torch.rand(1, 3, 32, 32), ["x"])
    with pytest.raises(ValueError, match="`images` is empty"):
        metric.update(torch.zeros(0, 3, 32, 32, dtype=torch.uint8), [])
    meta = torch.rand(1, 3, 32, 32, device="meta")  # no values: NotImplementedError deep inside (found by fuzzing)
    with pytest.raises(ValueError, match="`images` is a tensor on the meta device"):
        metric.update(meta, ["x"])
    with pytest.raises(ValueError, match=r"`images\[0\]` is a tensor on the meta device"):
        metric.update([meta[0]], ["x"])
    with pytest.raises(TypeError, match="`captions"):
        metric.update(_images(1, seed=0), [3])
    with pytest.raises(ValueError, match="at least one"):
        metric.compute()
    with pytest.raises(ValueError, match="`scale`"):
        CLIPScore("open_clip", open_clip_config, "random", scale=0)
    with pytest.raises(ValueError, match="`scale` must be a finite number > 0"):  # inf scored inf (found by fuzzing)
        CLIPScore("open_clip", open_clip_config, "random", scale=float("inf"))
    # open_clip's RuntimeError listed its ~200 built-in names on one line: the closest ones instead
    with pytest.raises(ValueError, match=r"`model_name`: 'ViT-B-23' is not an open_clip model \(closest: 'ViT-B-32'"):
        CLIPScore("open_clip", "ViT-B-23", "random")
    with pytest.raises(ValueError, match=r"'no-such-model' is not an open_clip model \(none of its \d+ names"):
        CLIPScore("open_clip", "no-such-model", "random")
    # a config file that is not there: said so, not open_clip's list of its 200 built-in names (found by fuzzing)
    with pytest.raises(ValueError, match=r"`model_name`: open_clip model config file '/no/such/tiny.json' does not"):
        CLIPScore("open_clip", "/no/such/tiny.json", "random")
    with pytest.raises(ValueError, match="`pretrained`: 'no-such-tag' is neither a file, 'random' nor a pretrained"):
        CLIPScore("open_clip", open_clip_config, "no-such-tag")
    for option in ({"model_name": None}, {"backend": []}, {"pretrained": []}, {"seed": [1]}, {"download": []}):
        arguments = {"backend": "open_clip", "model_name": open_clip_config, "pretrained": "random", **option}
        with pytest.raises((TypeError, ValueError), match=f"`{next(iter(option))}`"):  # the function's model cache
            clip_score(_images(1, seed=0), ["x"], **arguments)  # raised "unhashable type: 'list'" (found by fuzzing)
    with pytest.raises(ValueError, match="`backend`"):
        CLIPScore("clip", open_clip_config, "random")
    with pytest.raises(ValueError, match="`pretrained`"):
        CLIPScore("open_clip", open_clip_config)
    with pytest.raises(ValueError, match="`pretrained`"):
        CLIPScore("hf", hf_clip_dir, pretrained="openai")
    signature = CLIPScore("hf", hf_clip_dir, pretrained="random", scale=1).signature()
    assert "|weights:random|scale:1|preprocess:shortest32-crop32x32|" in signature


def test_image_inputs_torchmetrics_accepts_match_it(hf_clip_dir):
    """Integer dtypes other than uint8 (torchvision rounds them unclamped), one [3, H, W] image, a list of images of
    different sizes, 1-channel images and float images (= torchmetrics fed the same ×255 floats)."""
    reference = _torchmetrics_per_sample_reference(hf_clip_dir)
    images = _images(3, seed=21, size=(3, 40, 29))
    listed = [images[0], images[1][:, :20], images[2][:, 3:, 1:2]]
    cases = [
        (images.long(), list(images.long())),
        (images[0], [images[0]]),
        (listed, listed),
        ([images[0].long(), images[1]], [images[0].long(), images[1]]),
        (images[:, :1], [image[:1] for image in images]),
        (images.float() / 255, list(images.float())),
    ]
    for ours_images, reference_images in cases:
        captions = CAPTIONS[: len(reference_images)]
        ours = clip_score(ours_images, captions[0] if len(captions) == 1 else captions, "hf", hf_clip_dir)
        assert float(ours) == pytest.approx(reference(reference_images, captions), abs=1e-4)
    with pytest.raises(ValueError, match="`images` of integer dtype.*0..255"):
        clip_score(images.long() * 2, CAPTIONS[:3], "hf", hf_clip_dir)
    with pytest.raises(ValueError, match="`images\\[1\\]`"):
        clip_score([images[0], images[1, :2]], CAPTIONS[:2], "hf", hf_clip_dir)
    with pytest.raises(ValueError, match="`images` is empty"):
        clip_score([], [], "hf", hf_clip_dir)


def test_wide_random_captions_and_sizes_match_torchmetrics(hf_clip_dir):
    """Unicode / emoji / control characters / empty captions, a caption of exactly 77 tokens, tiny and non-square
    images, split into module updates."""
    pool = ["", " \t\n", "Кошка на диване", "猫がソファにいる", "🐶🐱🎉", "e\u0301te\u0301", "\u200b", "a\u00a0b",
            "مرحبا بالعالم", "x\u2028y\r", "!!!???", "word " * 75, "ß ﬁ ｆｕｌｌ", "<|endoftext|>"]
    metric = CLIPScore("hf", hf_clip_dir)
    assert metric.encoder.tokenize(["word " * 75], torch.device("cpu"))[0].shape == (1, 77)
    generator = torch.Generator().manual_seed(8)
    images = [
        torch.randint(0, 256, (3, h, w), dtype=torch.uint8, generator=generator)
        for h, w in ((1, 1), (2, 7), (33, 32), (45, 37), (7, 120), (32, 32))
    ]
    captions = [pool[int(i)] for i in torch.randint(0, len(pool), (len(images),), generator=generator)]
    captions[0] = "word " * 75
    reference = _torchmetrics_per_sample_reference(hf_clip_dir)(images, captions)
    metric.update(images[:2], captions[:2])
    metric.update(images[2], captions[2])
    metric.update(images[3:], captions[3:])
    assert float(metric.compute()) == pytest.approx(reference, abs=1e-4)


@pytest.fixture
def empty_caches(tmp_path, monkeypatch):
    """Hugging Face, open_clip and gpumetrics caches pointed at empty folders; any network use fails at once."""
    import huggingface_hub.constants as hf_constants

    hub = tmp_path / "hf" / "hub"
    hub.mkdir(parents=True)
    for name, value in {"HF_HOME": tmp_path / "hf", "HF_HUB_CACHE": hub, "HUGGINGFACE_HUB_CACHE": hub,
                        "XDG_CACHE_HOME": tmp_path / "xdg", "HOME": tmp_path / "home"}.items():
        monkeypatch.setenv(name, str(value))
    monkeypatch.setattr(hf_constants, "HF_HUB_CACHE", str(hub))  # read at import by huggingface_hub
    monkeypatch.delenv("GPUMETRICS_HOME", raising=False)

    def no_network(*_, **__):
        raise AssertionError("a network connection was attempted")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    return hub


@pytest.mark.parametrize("args", [("hf",), ("open_clip", "ViT-B-32", "openai"),
                                  ("open_clip", "ViT-B-32", "laion2b_s34b_b79k")])
def test_a_model_that_is_not_local_fails_at_once_saying_where_to_put_it(args, empty_caches, monkeypatch):
    # was: CLIPScore() with the default hf model spent 24 s retrying the network before an OSError
    start = time.perf_counter()
    with pytest.raises(FileNotFoundError, match="not found locally.*download=True"):
        CLIPScore(*args)
    with pytest.raises(FileNotFoundError, match="not found locally"):
        clip_score(_images(1, seed=0), ["x"], *args)
    assert time.perf_counter() - start < 2.0
    with pytest.raises(TypeError, match="`download`"):
        CLIPScore(*args, download="yes")


def test_hf_model_saved_locally_or_under_gpumetrics_home_loads_without_network(empty_caches, monkeypatch, tmp_path):
    home = tmp_path / "gpumetrics_home"
    (home / "acme" / "tiny-clip").mkdir(parents=True)
    save_random_hf_clip(home / "acme" / "tiny-clip", TINY_CLIP, seed=3)
    monkeypatch.setenv("GPUMETRICS_HOME", str(home))
    images, captions = _images(2, seed=1), CAPTIONS[:2]
    by_home = CLIPScore("hf", "acme/tiny-clip", scale=1)
    by_path = CLIPScore("hf", str(home / "acme" / "tiny-clip"), scale=1)
    by_home.update(images, captions)
    by_path.update(images, captions)
    assert float(by_home.compute()) == float(by_path.compute())
    monkeypatch.delenv("GPUMETRICS_HOME")
    with pytest.raises(FileNotFoundError, match=r"acme/tiny-clip.*GPUMETRICS_HOME"):
        CLIPScore("hf", "acme/tiny-clip")


def test_open_clip_tag_in_the_hf_cache_loads_by_path_with_the_tags_preprocessing(empty_caches, monkeypatch,
                                                                                 open_clip_config):
    import open_clip
    import open_clip.pretrained

    reference = CLIPScore("open_clip", open_clip_config, "random", seed=4).encoder.model
    snapshot = empty_caches / "models--acme--tiny-open-clip" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (empty_caches / "models--acme--tiny-open-clip" / "refs").mkdir()
    (empty_caches / "models--acme--tiny-open-clip" / "refs" / "main").write_text("abc123")
    torch.save(reference.state_dict(), snapshot / "open_clip_pytorch_model.bin")
    tag = {"hf_hub": "acme/tiny-open-clip/", "mean": (0.5, 0.5, 0.5), "std": (0.25, 0.25, 0.25)}
    original = open_clip.pretrained.get_pretrained_cfg
    monkeypatch.setattr(open_clip.pretrained, "get_pretrained_cfg",
                        lambda model, name: tag if name == "acme-tag" else original(model, name))
    monkeypatch.setattr(open_clip.factory, "get_pretrained_cfg", open_clip.pretrained.get_pretrained_cfg)
    encoder = CLIPScore("open_clip", open_clip_config, "acme-tag").encoder
    loaded = encoder.model.state_dict()
    assert all(torch.equal(loaded[k], v) for k, v in reference.state_dict().items())
    assert encoder.preprocess.mean == (0.5, 0.5, 0.5) and encoder.preprocess.std == (0.25, 0.25, 0.25)


def test_open_clip_hf_hub_model_needs_config_and_weights_in_the_cache(empty_caches, open_clip_config):
    start = time.perf_counter()
    with pytest.raises(FileNotFoundError, match=r"hf-hub:acme/tiny.*not found locally.*download=True"):
        CLIPScore("open_clip", "hf-hub:acme/tiny", "ignored")
    assert time.perf_counter() - start < 2.0
    snapshot = empty_caches / "models--acme--tiny" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    (empty_caches / "models--acme--tiny" / "refs").mkdir()
    (empty_caches / "models--acme--tiny" / "refs" / "main").write_text("abc123")
    (snapshot / "open_clip_config.json").write_text(json.dumps({"model_cfg": TINY_OPEN_CLIP}))
    with pytest.raises(FileNotFoundError, match="not found locally"):  # config only: open_clip would go random
        CLIPScore("open_clip", "hf-hub:acme/tiny", "ignored")
    reference = CLIPScore("open_clip", open_clip_config, "random", seed=5).encoder.model
    torch.save(reference.state_dict(), snapshot / "open_clip_pytorch_model.bin")
    loaded = CLIPScore("open_clip", "hf-hub:acme/tiny", "ignored").encoder.model.state_dict()
    assert all(torch.equal(loaded[k], v) for k, v in reference.state_dict().items())


# bound on |score(mode) − score(float32)| at scale 1 (raw cosine), documented in CLIPScore's docstring
SPEED_BOUNDS = {"tf32": 2e-3, "bf16": 5e-3, "fp16": 2e-3}


@pytest.mark.parametrize("backend", ["hf", "open_clip"])
@pytest.mark.parametrize("mode", sorted(SPEED_BOUNDS))
def test_speed_modes_stay_within_their_bound_and_are_in_the_signature(backend, mode, hf_clip_dir, open_clip_config):
    args = (backend, hf_clip_dir, "random") if backend == "hf" else (backend, open_clip_config, "random")
    images = _images(6, seed=5)
    exact = clip_score(images, CAPTIONS[:6], *args, scale=1, clamp=False, reduction="none")
    fast = clip_score(images, CAPTIONS[:6], *args, scale=1, clamp=False, reduction="none", speed_mode=mode)
    assert fast.dtype == torch.float64
    assert float((fast - exact).abs().max()) <= SPEED_BOUNDS[mode]
    metric = CLIPScore(*args, speed_mode=mode)
    assert f"|speed:{mode}|" in metric.signature()
    assert "speed" not in CLIPScore(*args).signature()


def test_clip_speed_mode_takes_precisions_only(open_clip_config):
    for bad in ("channels_last", "fastest", "fp8"):
        with pytest.raises(ValueError, match="speed_mode"):
            CLIPScore("open_clip", open_clip_config, "random", speed_mode=bad)


# ------------------------------------------------------------------- uint8 resize off the CPU (CUDA's float path)
@pytest.mark.parametrize("shape", [(45, 37), (24, 20), (256, 256), (300, 500), (1000, 700), (224, 300), (7, 3)])
def test_shortest_side_size_is_torchvisions(shape):
    from torchvision.transforms.v2 import functional as TF

    from gpumetrics.image.clip_score import shortest_side_size

    image = torch.zeros(1, 3, *shape, dtype=torch.uint8)
    expected = TF.resize(image, [224], interpolation=TF.InterpolationMode.BICUBIC, antialias=True).shape[-2:]
    assert shortest_side_size(shape, 224) == tuple(expected)


@pytest.mark.parametrize("smooth", [False, True])
@pytest.mark.parametrize("shape, size", [((45, 37), (272, 224)), ((24, 20), (268, 224)), ((256, 256), (224, 224)),
                                         ((300, 500), (224, 373)), ((1000, 700), (320, 224)), ((224, 300), (224, 224))])
def test_uint8_resize_in_passes_is_within_two_levels_of_the_cpu_kernel(shape, size, smooth):
    """The float two-pass resize (what CUDA runs for uint8) against the CPU's uint8 kernel (PIL's algorithm): ≤ 2
    grey levels on < 2 % of the pixels; one float pass (torchvision's CUDA path) was up to 25 levels on 23 %."""
    from torchvision.transforms.v2 import functional as TF

    from gpumetrics.image.clip_score import resize_uint8_in_passes

    generator = torch.Generator().manual_seed(shape[0])
    if smooth:
        small = torch.randint(0, 256, (4, 3, shape[0] // 4 + 1, shape[1] // 4 + 1), dtype=torch.uint8,
                              generator=generator)
        images = TF.resize(small, list(shape), interpolation=TF.InterpolationMode.BICUBIC, antialias=True)
    else:
        images = torch.randint(0, 256, (4, 3, *shape), dtype=torch.uint8, generator=generator)
    native = TF.resize(images, list(size), interpolation=TF.InterpolationMode.BICUBIC, antialias=True)
    passes = resize_uint8_in_passes(images, size)
    assert passes.dtype == torch.float32 and torch.equal(passes, passes.round())
    off = (passes - native.float()).abs()
    assert float(off.max()) <= 2 and float((off > 0).float().mean()) < 0.02


@pytest.mark.parametrize("backend", ["hf", "open_clip"])
def test_uint8_images_off_the_cpu_score_like_the_cpu(monkeypatch, backend, hf_clip_dir, open_clip_config):
    """The score with the two-pass uint8 resize (taken on CUDA) stays within 2e-4 of the CPU's (measured 7e-5 hf,
    1.5e-4 open_clip on these noise images; one float pass, torchvision's CUDA path: 1.2e-3 and 1.6e-3)."""
    from gpumetrics.image import clip_score as module

    args = (backend, hf_clip_dir, "random") if backend == "hf" else (backend, open_clip_config, "random")
    images = _images(6, seed=5)
    cpu = clip_score(images, CAPTIONS[:6], *args, scale=1, clamp=False, reduction="none")
    monkeypatch.setattr(module, "_resize_bicubic", module.resize_uint8_in_passes)  # as on CUDA
    off_cpu = clip_score(images, CAPTIONS[:6], *args, scale=1, clamp=False, reduction="none")
    assert 0 < float((off_cpu - cpu).abs().max()) <= 2e-4

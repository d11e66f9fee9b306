"""CLIPScore backend "ruclip" vs ruclip 0.0.2's own model.py / processor.py / predictor.py on the same random
weights."""

from __future__ import annotations

import json
import random
import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from gpumetrics.image.clip_score import RUCLIP_TEMPLATES, CLIPScore, clip_score
from gpumetrics.image.resize import pil_bilinear_resize
from gpumetrics.image.ruclip import RuCLIP, RuCLIPPreprocess, load_ruclip
from tests.helpers.ruclip_models import (
    CYRILLIC, TINY_RUCLIP, random_ruclip_state, ruclip_reference, save_ruclip_folder,
)

CAPTIONS = ["Кошка на диване", "a photo of a cat", "ДВЕ собаки, 3 мяча!", "", "  пробелы  ", "🙂 смайлик", "ёж"]


@pytest.fixture(scope="module")
def state():
    return random_ruclip_state(TINY_RUCLIP, seed=0)


@pytest.fixture(scope="module")
def folder(tmp_path_factory, state):
    return save_ruclip_folder(tmp_path_factory.mktemp("ruclip") / "tiny-ruclip", TINY_RUCLIP, state)


def _images(n, seed, size=(3, 45, 37)):
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (n, *size), dtype=torch.uint8, generator=generator)


def _reference_model(state):
    model = ruclip_reference("model").CLIP(**TINY_RUCLIP)
    model.load_state_dict(state)
    return model.eval()


def _long_captions(seed, n):
    rng = random.Random(seed)
    alphabet = CYRILLIC + CYRILLIC.upper() + "abcxyz0123456789 .,!?-🙂\t"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120))) for _ in range(n)]


def test_features_equal_ruclip_model_py(folder, state):
    """Same state_dict in both models: image and text features (ours padded to the longest caption, ruclip's to
    the context) agree to float32 rounding."""
    reference = _reference_model(state)
    ours, _, config, tag = load_ruclip(folder)
    assert tag.startswith("file@") and config == TINY_RUCLIP
    pixels = torch.randn(5, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    lengths = torch.tensor([2, 5, 24, 13, 7])
    tokens = torch.zeros(5, 24, dtype=torch.long)
    for row, length in enumerate(lengths.tolist()):
        tokens[row, 0], tokens[row, length - 1] = 2, 3
        tokens[row, 1 : length - 1] = torch.randint(4, 600, (length - 2,), generator=torch.Generator().manual_seed(row))
    with torch.no_grad():
        image_ref, text_ref = reference.encode_image(pixels), reference.encode_text(tokens)
        image, text = ours.encode_image(pixels), ours.encode_text(tokens)
        text_short = ours.encode_text(tokens[:, :24], lengths)
        text_trimmed = ours.encode_text(tokens[1:2, :5], lengths[1:2])
    scale = max(float(image_ref.abs().max()), float(text_ref.abs().max()))
    for a, b in ((image, image_ref), (text, text_ref), (text_short, text_ref), (text_trimmed, text_ref[1:2])):
        assert float((a - b).abs().max()) <= 1e-5 * scale
    # float64: ruclip's LayerNorm casts its input to float32, so its float64 twin (that cast removed, nothing else
    # changed) is the oracle; the features then agree to float64 rounding
    module = ruclip_reference("model")
    module.LayerNorm.forward = torch.nn.LayerNorm.forward
    reference64 = module.CLIP(**TINY_RUCLIP).double().eval()
    reference64.load_state_dict(state)
    ours64 = RuCLIP(TINY_RUCLIP).double().eval()
    ours64.load_state_dict(state)
    with torch.no_grad():
        image64, text64 = ours64.encode_image(pixels.double()), ours64.encode_text(tokens)
        image64_ref, text64_ref = reference64.encode_image(pixels.double()), reference64.encode_text(tokens)
    assert image64.dtype == text64.dtype == torch.float64
    assert float((image64 - image64_ref).abs().max()) <= 1e-12 * scale
    assert float((text64 - text64_ref).abs().max()) <= 1e-12 * scale
    assert float((image64 - image_ref.double()).abs().max()) <= 1e-4 * scale


def test_token_ids_and_pixels_equal_ruclip_processor(folder):
    from PIL import Image

    processor = ruclip_reference("processor").RuCLIPProcessor.from_pretrained(str(folder))
    metric = CLIPScore("ruclip", folder, pretrained="random")
    captions = CAPTIONS + _long_captions(0, 200) + ["слово " * 40, "ab" * 300]
    tokens, lengths = metric.encoder.tokenize(captions, torch.device("cpu"))
    expected = processor(text=captions)["input_ids"]
    assert expected.shape[1] == 24 and int(lengths.max()) == 24
    assert torch.equal(tokens, expected[:, : tokens.shape[1]]) and not expected[:, tokens.shape[1] :].any()
    assert torch.equal(lengths, (expected != 0).sum(dim=1))
    # pixels: equal to ruclip's PIL transform for integer images of any size (the ±1 offset of |H - W| = 1 aside)
    generator = torch.Generator().manual_seed(5)
    for height, width in ((32, 32), (45, 37), (37, 45), (300, 200), (7, 120), (1, 1), (33, 31), (64, 64), (640, 9)):
        image = torch.randint(0, 256, (3, height, width), dtype=torch.uint8, generator=generator)
        pil = Image.fromarray(image.permute(1, 2, 0).numpy())
        assert torch.equal(metric.encoder.preprocess(image[None])[0], processor.image_transform(pil))


def test_aij2022_score_equals_ruclip_predictor(folder, state):
    """The official AIJ-2022 computation (evaluation/{generation,captioning}/metrics/ruclip*.py): per pair,
    Predictor.get_image_latents([img]) · Predictor.get_text_latents([text]) — six prompt templates, normalised
    latents, no clamp — equals clip_score(scale=1, clamp=False, templates="ruclip")."""
    from PIL import Image

    predictor_module = ruclip_reference("predictor")
    processor = ruclip_reference("processor").RuCLIPProcessor.from_pretrained(str(folder))
    predictor = predictor_module.Predictor(_reference_model(state), processor, "cpu", bs=8, quiet=True)
    images = [_images(1, seed=i, size=(3, 32 + 5 * i, 50 - 3 * i))[0] for i in range(len(CAPTIONS))]
    expected = []
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for image, caption in zip(images, CAPTIONS):
            pil = Image.fromarray(image.permute(1, 2, 0).numpy())
            latents = predictor.get_image_latents([pil]) @ predictor.get_text_latents([caption]).t()
            expected.append(float(latents.view(-1)[0]))
    assert predictor.templates == list(RUCLIP_TEMPLATES)
    ours = clip_score(images, CAPTIONS, "ruclip", folder, scale=1, clamp=False, templates="ruclip", reduction="none")
    assert ours.dtype == torch.float64 and ours.shape == (len(CAPTIONS),)
    assert np.allclose(ours.numpy(), expected, rtol=0, atol=2e-6)
    assert min(expected) < 0 < max(expected)  # random weights: negative cosines, which AIJ-2022 keeps
    metric = CLIPScore("ruclip", folder, scale=1, clamp=False, templates="ruclip")
    metric.update(images[:3], CAPTIONS[:3])
    metric.update(images[3:], CAPTIONS[3:])
    assert float(metric.compute()) == pytest.approx(float(np.mean(expected)), abs=2e-6)
    clamped = clip_score(images, CAPTIONS, "ruclip", folder, scale=1, templates="ruclip", reduction="none")
    assert torch.equal(clamped, ours.clamp(min=0))


def test_plain_captions_scale_and_float_images(folder):
    metric = CLIPScore("ruclip", folder, scale=100, clamp=False, reduction="none")
    images = _images(4, seed=3, size=(3, 40, 40))
    metric.update(images, CAPTIONS[:4])
    model, tokenizer, _, _ = load_ruclip(folder)
    pixels = RuCLIPPreprocess(32, (0.48145466, 0.4578275, 0.40821073), (0.26862954, 0.26130258, 0.27577711))(images)
    tokens = torch.zeros(4, 24, dtype=torch.long)
    for row, ids in enumerate(tokenizer.encode([c.lower() for c in CAPTIONS[:4]])):
        tokens[row, : len(ids) + 2] = torch.tensor([2] + ids + [3])
    with torch.no_grad():
        expected = 100 * F.cosine_similarity(model.encode_image(pixels).double(), model.encode_text(tokens).double())
    assert torch.allclose(metric.compute(), expected, rtol=0, atol=1e-4)
    # float [0, 1] images: resized without quantisation, within the rounding of the integer path
    float_pixels = metric.encoder.preprocess(images.float() / 255)
    assert float_pixels.dtype == torch.float32 and float_pixels.shape == pixels.shape
    assert float((float_pixels - pixels).abs().max()) <= 1 / 255 / 0.26 + 1e-5  # two rounded passes


def test_pil_bilinear_resize_equals_pillow_and_runs_in_any_dtype():
    """Square → square (ruclip's only case), one-axis resizes and resizes where Pillow's horizontal-first order is
    not in doubt. (Pillow 13 may run the vertical pass first for some resizes that grow one axis and shrink the other,
    which moves a few values by 1; upstream Pillow ≤ 12, as in 2022, always goes horizontal first, as we do.)"""
    from PIL import Image

    generator = torch.Generator().manual_seed(0)
    for (height, width), size in (((50, 70), (32, 32)), ((13, 9), (40, 25)), ((300, 11), (17, 11)),
                                  ((11, 300), (11, 60)), ((5, 5), (5, 5)), ((37, 37), (336, 336)),
                                  ((500, 500), (336, 336)), ((2, 2), (1, 1))):
        image = torch.randint(0, 256, (1, 3, height, width), dtype=torch.uint8, generator=generator)
        pil = Image.fromarray(image[0].permute(1, 2, 0).numpy()).resize(size[::-1], Image.BILINEAR)
        expected = torch.from_numpy(np.array(pil)).permute(2, 0, 1).double()
        assert torch.equal(pil_bilinear_resize(image, size)[0], expected)
        assert torch.equal(pil_bilinear_resize(image.long(), size)[0], expected)
        grey = Image.fromarray(image[0, 0].numpy().astype(np.float32), mode="F").resize(size[::-1], Image.BILINEAR)
        floats = pil_bilinear_resize(image[:, :1].double(), size)[0, 0]
        assert torch.allclose(floats, torch.from_numpy(np.array(grey)).double(), atol=1e-3)


def test_loading_order_and_missing_files(tmp_path, monkeypatch, state):
    monkeypatch.delenv("GPUMETRICS_HOME", raising=False)
    home = tmp_path / "home"
    full = save_ruclip_folder(home / "ruclip-tiny", TINY_RUCLIP, state)
    images, captions = _images(2, seed=1), CAPTIONS[:2]
    by_path = clip_score(images, captions, "ruclip", full, scale=1, clamp=False, reduction="none")
    by_config = clip_score(images, captions, "ruclip", full / "config.json", scale=1, clamp=False, reduction="none")
    monkeypatch.setenv("GPUMETRICS_HOME", str(home))
    by_home = CLIPScore("ruclip", "ruclip-tiny", scale=1, clamp=False, reduction="none")
    by_home.update(images, captions)
    assert torch.equal(by_path, by_config) and torch.equal(by_path, by_home.compute())
    # an explicit state_dict file overrides the folder's weights
    explicit = CLIPScore("ruclip", full, pretrained=str(full / "pytorch_model.bin"), scale=1, clamp=False)
    explicit.update(images, captions)
    assert float(explicit.compute()) == pytest.approx(float(by_path.mean()), abs=1e-12)
    signature = by_home.signature()
    assert "|backend:ruclip|model:ruclip-tiny|weights:file@" in signature and "|clamp:none|" in signature
    assert "|preprocess:squarecrop-pilbilinear32|" in signature
    templated = CLIPScore("ruclip", full, pretrained="random", seed=2, templates="ruclip").signature()
    assert "|weights:random(seed=2)|" in templated and "|clamp:per-sample|templates:ruclip6" in templated

    monkeypatch.delenv("GPUMETRICS_HOME")
    with pytest.raises(FileNotFoundError, match=r"'ruclip-tiny' not found locally.*GPUMETRICS_HOME.*never downloads"):
        CLIPScore("ruclip", "ruclip-tiny")
    partial = save_ruclip_folder(tmp_path / "no-weights", TINY_RUCLIP)
    with pytest.raises(FileNotFoundError, match="lacks pytorch_model.bin"):
        CLIPScore("ruclip", partial)
    CLIPScore("ruclip", partial, pretrained="random")  # random weights need only config.json and bpe.model
    (partial / "bpe.model").unlink()
    with pytest.raises(FileNotFoundError, match="lacks bpe.model"):
        CLIPScore("ruclip", partial, pretrained="random")
    with pytest.raises(FileNotFoundError, match="`pretrained`.*does not exist"):
        CLIPScore("ruclip", full, pretrained=str(tmp_path / "nothing.bin"))


def test_bad_arguments_name_the_argument(tmp_path, folder, state):
    with pytest.raises(ValueError, match="`download=True`.*ruclip"):
        CLIPScore("ruclip", folder, download=True)
    with pytest.raises(TypeError, match="`clamp`"):
        CLIPScore("ruclip", folder, clamp=0)
    for templates, message in [("openai", "`templates` must be"), ([], "`templates` must be"),
                               (["no slot"], "exactly one"), (["{}", 3], "exactly one"), (["{} {x}"], "format")]:
        with pytest.raises(ValueError, match=message):
            CLIPScore("ruclip", folder, templates=templates)
        with pytest.raises(ValueError, match="`templates`"):
            clip_score(_images(1, seed=0), ["x"], "ruclip", folder, templates=templates)
    with pytest.raises(TypeError, match="`clamp`"):
        clip_score(_images(1, seed=0), ["x"], "ruclip", folder, clamp="no")
    bad = save_ruclip_folder(tmp_path / "bad", {**TINY_RUCLIP, "vision_width": 48})
    with pytest.raises(ValueError, match="`vision_width` must be a multiple of 64"):
        CLIPScore("ruclip", bad, pretrained="random")
    for key, value in (("embed_dim", None), ("context_length", 0), ("transformer_heads", "2")):
        (bad / "config.json").write_text(json.dumps({**TINY_RUCLIP, key: value}))
        with pytest.raises(ValueError, match=f"`{key}` must be a positive int"):
            CLIPScore("ruclip", bad, pretrained="random")
    (bad / "config.json").write_text(json.dumps({**TINY_RUCLIP, "std": [0.5, 0, 0.5]}))
    with pytest.raises(ValueError, match="`std` must be 3 numbers > 0"):
        CLIPScore("ruclip", bad, pretrained="random")
    (bad / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        CLIPScore("ruclip", bad, pretrained="random")
    other = save_ruclip_folder(tmp_path / "other", {**TINY_RUCLIP, "vision_layers": 1}, state)
    with pytest.raises(ValueError, match="not a ruCLIP state_dict of this config"):
        CLIPScore("ruclip", other)


def test_dtype_follows_the_model_and_texts_are_one_call(folder):
    metric = CLIPScore("ruclip", folder, pretrained="random", scale=1, clamp=False, templates="ruclip",
                       reduction="none")
    reference = CLIPScore("ruclip", folder, pretrained="random", scale=1, clamp=False, templates="ruclip",
                          reduction="none")
    metric.encoder.double()
    calls = []
    original = metric.encoder.model.encode_text
    metric.encoder.model.encode_text = lambda tokens, lengths: calls.append(tokens.shape) or original(tokens, lengths)
    images = _images(3, seed=9)
    metric.update(images, CAPTIONS[:3])
    reference.update(images, CAPTIONS[:3])
    assert calls == [calls[0]] and calls[0][0] == 3 * len(RUCLIP_TEMPLATES)
    with torch.no_grad():
        pixels = metric.encoder.preprocess(images)
        assert metric.encoder.model.encode_image(pixels).dtype == torch.float64
    assert torch.allclose(metric.compute(), reference.compute(), atol=1e-5)


def test_clip_score_command_with_ruclip(tmp_path, capsys, folder):
    from PIL import Image

    from gpumetrics.cli.main import main

    (tmp_path / "images").mkdir()
    images = _images(3, seed=11, size=(3, 30, 41))
    for i, image in enumerate(images):
        Image.fromarray(image.permute(1, 2, 0).numpy()).save(tmp_path / "images" / f"{i}.png")
    (tmp_path / "captions.jsonl").write_text(
        "\n".join(json.dumps({"image": f"{i}.png", "caption": c}, ensure_ascii=False)
                  for i, c in enumerate(CAPTIONS[:3]))
    )
    args = ["clip-score", "--images", str(tmp_path / "images"), "--captions", str(tmp_path / "captions.jsonl"),
            "--backend", "ruclip", "--model", str(folder), "--scale", "1", "--no-clamp", "--templates", "ruclip",
            "--json"]
    assert main(args) == 0
    result = json.loads(capsys.readouterr().out)
    expected = clip_score(images, CAPTIONS[:3], "ruclip", folder, scale=1, clamp=False, templates="ruclip")
    assert result["clip_score"] == pytest.approx(float(expected), abs=1e-6) and result["n"] == 3
    assert ("|backend:ruclip|model:tiny-ruclip|" in result["signature"]
            and "|clamp:none|templates:ruclip6" in result["signature"])


def test_name_found_in_ruclips_cache_and_the_hugging_face_cache(tmp_path, monkeypatch, state):
    import huggingface_hub.constants as hf_constants

    import gpumetrics.image.ruclip as ruclip_module

    monkeypatch.delenv("GPUMETRICS_HOME", raising=False)
    hub = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    monkeypatch.setattr(hf_constants, "HF_HUB_CACHE", str(hub))
    monkeypatch.setattr(ruclip_module, "RUCLIP_CACHE", tmp_path / "ruclip-cache")
    with pytest.raises(FileNotFoundError, match="ruclip-cache/ruclip-tiny.*ai-forever/ruclip-tiny"):
        load_ruclip("ruclip-tiny")
    snapshot = hub / "models--ai-forever--ruclip-tiny" / "snapshots" / "abc123"
    save_ruclip_folder(snapshot, TINY_RUCLIP, state)
    (hub / "models--ai-forever--ruclip-tiny" / "refs").mkdir()
    (hub / "models--ai-forever--ruclip-tiny" / "refs" / "main").write_text("abc123")
    assert ruclip_module.find_folder("ruclip-tiny", ["config.json", "bpe.model", "pytorch_model.bin"]) == snapshot
    assert ruclip_module.find_folder("ai-forever/ruclip-tiny", ["config.json"]) == snapshot
    cached = save_ruclip_folder(tmp_path / "ruclip-cache" / "ruclip-tiny", TINY_RUCLIP, state)
    assert ruclip_module.find_folder("ruclip-tiny", ["config.json", "bpe.model", "pytorch_model.bin"]) == cached

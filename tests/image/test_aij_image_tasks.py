"""AIJ-2022 ImageCaptioning / ImageGeneration through the suite, from the organisers' files: the plumbing (which
image and which text each sample scores, a failed sample's CLIP term = 0, FID over the generated images) with a
random-weight open_clip model standing in for ruCLIP (whose weights cannot be loaded offline)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from PIL import Image

from gpumetrics.functional import meteor_score
from gpumetrics.image.fid import FrechetInceptionDistance
from gpumetrics.harness.config import parse_config
from gpumetrics.image.clip_score import CLIPScore
from gpumetrics.suites.image import image_generation_score
from gpumetrics.harness.runner import evaluate
from tests.image.test_clip_score import TINY_OPEN_CLIP


def _images(folder: Path, count: int, seed: int) -> list[torch.Tensor]:
    folder.mkdir(parents=True, exist_ok=True)
    generator = torch.Generator().manual_seed(seed)
    tensors = []
    for i in range(count):
        image = torch.randint(0, 256, (3, 30, 40), dtype=torch.uint8, generator=generator)
        Image.fromarray(image.permute(1, 2, 0).numpy()).save(folder / f"{i}.png")
        tensors.append(image)
    return tensors


def _json(path: Path, value) -> str:
    path.write_text(json.dumps(value, ensure_ascii=False), encoding="utf-8")
    return str(path)


@pytest.fixture()
def clip_options(tmp_path):
    model = tmp_path / "tiny-clip.json"
    model.write_text(json.dumps(TINY_OPEN_CLIP))
    return {"clip_backend": "open_clip", "clip_model": str(model), "clip_pretrained": "random"}


def _clip(images, texts, options):
    """The organisers' per-sample term: raw cosine (no clamp at 0), text averaged over ruclip's prompt templates."""
    metric = CLIPScore(options["clip_backend"], options["clip_model"], options["clip_pretrained"], scale=1.0,
                       reduction="none", clamp=False, templates="ruclip")
    metric.update(images, texts)
    return metric.compute()


def test_image_captioning_from_the_official_files(tmp_path, clip_options):
    images = _images(tmp_path / "split" / "images", 3, seed=0)
    text = {"type": "text", "content": "Опиши картинку"}
    inputs = {str(i): [text, {"type": "image", "content": f"images/{i}.png"}] for i in range(3)}
    inputs["3"] = [text, {"type": "image", "content": "images/missing.png"}]  # unreadable: CLIP 0
    inputs["4"] = [text]  # no image: CLIP 0
    gold = {str(i): [{"type": "text", "content": [f"кот номер {i}", "кошка"]}] for i in range(5)}
    captions = ["кот сидит", "кошка на столе", "собака", "кот номер 3", "кошка"]
    pred = {str(i): [{"type": "text", "content": c}] for i, c in enumerate(captions)}
    # CLIP reads element 0
    pred["2"] = [{"type": "image", "content": "x.png"}, {"type": "text", "content": captions[2]}]
    synonyms = tmp_path / "syn.tsv"
    synonyms.write_text("кот\tкошк\n", encoding="utf-8")
    task = {"name": "ImageCaptioning", "references": _json(tmp_path / "split" / "gt.json", gold),
            "predictions": _json(tmp_path / "pred.json", pred),
            "options": {"inputs": _json(tmp_path / "split" / "captioning_input.json", inputs),
                        "synonyms": str(synonyms), **clip_options}}
    result = evaluate(parse_config({"suite": "aij2022", "tasks": [task]}, tmp_path / "c.yaml"), device="cpu").tasks[0]

    meteor = float(meteor_score(captions, [g[0]["content"] for g in gold.values()], mode="aij2022-caption",
                                synonyms=str(synonyms)))
    clip = float(_clip(images[:2], captions[:2], clip_options).sum()) / 5  # samples 2, 3, 4 failed: 0 each
    assert result.details["meteor"] == pytest.approx(meteor, abs=1e-12)
    assert result.details["clip"] == pytest.approx(clip, abs=1e-6)
    assert result.score == pytest.approx((meteor + clip) / 2, abs=1e-6)
    assert "missing_image:clip0" in result.signature and "clamp:none" in result.signature
    assert result.details["clip_failed"] == 3  # counted, so that a wrong image folder is seen (the CLI warns)


def test_image_generation_from_the_official_files(tmp_path, clip_options, inception_file):
    real = _images(tmp_path / "output_images", 4, seed=1)
    fake = _images(tmp_path / "sub" / "output_pr_images", 3, seed=2)
    inputs = {"0": [{"type": "text", "content": "Сгенерируй изображение. Красный дом. У реки"}],
              "1": [{"type": "text", "content": "Нарисуй"}, {"type": "text", "content": "синяя река"}],
              "2": [{"type": "text", "content": "Создай картинку. кот"}],
              "3": [{"type": "text", "content": "Создай картинку. собака"}]}
    pred = {str(i): [{"type": "text", "content": ""},
                     {"type": "image", "content": f"/elsewhere/output_pr_images/{i}.png"}]
            for i in range(3)}  # the script keeps the last two path parts, relative to the predictions file
    pred["3"] = [{"type": "text", "content": "no image"}]  # CLIP 0, not in FID
    task = {"name": "ImageGeneration", "references": _json(tmp_path / "generation_input.json", inputs),
            "predictions": _json(tmp_path / "sub" / "generation_pred.json", pred),
            "options": {"real": str(tmp_path / "output_images"), "inception_weights": str(inception_file),
                        "fid_feature": 64, **clip_options}}  # the script's --dims; 64 keeps the test fast
    result = evaluate(parse_config({"suite": "aij2022", "tasks": [task]}, tmp_path / "c.yaml"), device="cpu").tasks[0]

    captions = ["Красный дом. У реки", "синяя река", "кот"]  # the text after the instruction's first ". "
    clip = float(_clip(fake, captions, clip_options).sum()) / 4
    fid = FrechetInceptionDistance(feature=64, weights=str(inception_file), resize="aij2022")  # fixed by the suite
    fid.update(torch.stack(real), real=True)
    fid.update(torch.stack(fake), real=False)
    with pytest.warns(UserWarning):
        expected_fid = float(fid.compute())
    assert result.details["clip"] == pytest.approx(clip, abs=1e-6)
    assert result.details["fid"] == pytest.approx(expected_fid, rel=1e-9)
    assert result.score == pytest.approx(float(image_generation_score(clip, expected_fid)), abs=1e-6)
    assert result.details["clip_failed"] == 1


def test_image_generation_with_too_few_images_for_fid_names_the_task_and_the_samples_without_image(
        tmp_path, clip_options, inception_file):
    """FID needs 2 generated images: the error named neither the task nor the file, and asked to "call update(images,
    real=False)" — now it says which task and file, and how many samples had no image (found by fuzzing)."""
    _images(tmp_path / "output_images", 3, seed=1)
    _images(tmp_path / "images", 1, seed=2)
    inputs = {str(i): [{"type": "text", "content": f"Нарисуй. кот {i}"}] for i in range(3)}
    pred = {str(i): [{"type": "text", "content": ""}, {"type": "image", "content": f"images/{i}.png"}]
            for i in range(3)}
    task = {"name": "ImageGeneration", "references": _json(tmp_path / "generation_input.json", inputs),
            "predictions": _json(tmp_path / "generation_pred.json", pred),
            "options": {"real": str(tmp_path / "output_images"), "inception_weights": str(inception_file),
                        "fid_feature": 64, **clip_options}}
    with pytest.raises(ValueError) as error:
        evaluate(parse_config({"suite": "aij2022", "tasks": [task]}, tmp_path / "c.yaml"), device="cpu")
    message = str(error.value)
    assert message.startswith("task 'ImageGeneration': metric 's_image_generation' has no score for ")
    assert str(tmp_path / "generation_pred.json") in message and "got 1" in message
    assert "2 generated samples have no image file" in message


# ---------------------------------------------------------------------------------------------------- ruCLIP term
DATA = Path(__file__).resolve().parents[1] / "data" / "aij" / "2022"
GOLDEN = json.loads((DATA.parent / "golden.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def tiny_ruclip(tmp_path_factory):
    """The tiny random ruCLIP the golden numbers were produced with (needs the ruclip wheel: skipped without)."""
    from tests.helpers.ruclip_models import TINY_RUCLIP, random_ruclip_state, save_ruclip_folder

    state = random_ruclip_state(TINY_RUCLIP, seed=0)
    return str(save_ruclip_folder(tmp_path_factory.mktemp("ruclip") / "tiny-ruclip", TINY_RUCLIP, state))


def test_ruclip_term_equals_the_organisers_functions(tmp_path, tiny_ruclip):
    """The organisers' calc_ruclip_metric (captioning and generation), run unchanged with ruclip 0.0.2's own model
    and Predictor on the same tiny random weights (tests/data/aij/generate.py golden-ruclip): which image and which
    text each sample scores, failed samples = 0, no clamp, six prompt templates. The models run in float32: 2e-6."""
    synonyms = tmp_path / "syn.tsv"
    synonyms.write_text("кот\tкошк\n", encoding="utf-8")
    clip = {"clip_backend": "ruclip", "clip_model": tiny_ruclip}
    tasks = [
        {"name": "ImageCaptioning", "references": str(DATA / "captioning" / "captioning_gt.json"),
         "predictions": str(DATA / "captioning" / "captioning_pred.json"),
         "options": {"inputs": str(DATA / "captioning" / "captioning_input.json"), "synonyms": str(synonyms), **clip}},
        {"name": "ImageGeneration", "references": str(DATA / "generation" / "generation_input.json"),
         "predictions": str(DATA / "generation" / "generation_pred.json"),
         "options": {"real": str(DATA / "captioning" / "images"), "inception_weights": "random", "fid_feature": 64,
                     **clip}},
    ]
    report = evaluate(parse_config({"suite": "aij2022", "tasks": tasks}, tmp_path / "c.yaml"), device="cpu")
    scores = {task.name: task.details["clip"] for task in report.tasks}
    assert scores["ImageCaptioning"] == pytest.approx(GOLDEN["2022/captioning/ruclip"]["official"], abs=2e-6)
    assert scores["ImageGeneration"] == pytest.approx(GOLDEN["2022/generation/ruclip"]["official"], abs=2e-6)


# ---------------------------------------------------------------------------------------------------- FID term
def test_fid_term_equals_the_organisers_fid():
    """The organisers' calculate_fid_given_paths (fbc2_aij2022 evaluation/generation/metrics/fid.py, run unchanged by
    tests/data/aij/generate.py golden-fid: PIL resize to 256×256, ToTensor, pytorch-fid's Inception — here with the
    random weights of ``weights="random"`` — dims 64) on 70 + 70 images of random sizes; float32 networks: 1e-6."""
    from gpumetrics.image.io import list_images, same_size_batches

    golden = GOLDEN["2022/generation/fid"]["official"]
    values = {}
    for resize in ("aij2022", "pytorch-fid"):
        fid = FrechetInceptionDistance(feature=64, weights="random", resize=resize)
        for side in ("real", "fake"):
            for _, images in same_size_batches(list_images(DATA / "generation_fid" / side), 32):
                fid.update(images, real=side == "real")
        values[resize] = float(fid.compute())
    assert values["aij2022"] == pytest.approx(golden, rel=1e-6)
    # without the 256×256 step the value is 4e-4 off (random weights make features smooth): 400× the tolerance
    assert abs(values["pytorch-fid"] - golden) > 1e-4 * golden

"""S_ImageCaptioning / S_VisualQA: the task metrics on image files equal ½ (METEOR + CLIP) computed directly, through
the runner from records, with the path rule, option checks and state handling (random-weight tiny CLIP, fake
synonyms — no download, no RuWordNet)."""

from __future__ import annotations

import importlib.util
import json

import pytest
import torch
from PIL import Image

from gpumetrics import CLIPScore
from gpumetrics.functional import meteor_score
from gpumetrics.catalog import get_metric
from gpumetrics.suites.captioning import ImageCaptioningScore, VisualQAScore, caption_update_args
from gpumetrics.harness.config import ConfigError, load_config, parse_config
from gpumetrics.harness.records import DataError
from gpumetrics.harness.runner import TaskError, evaluate
from gpumetrics.text.meteor.synonyms import NoSynonyms
from testkit.clip_models import TINY_CLIP, save_random_hf_clip

#: the provider is asked about stems: Snowball Russian "кот" → "кот", "кошка" → "кошк"
SYNONYMS = {"кот": ["кошк"], "машин": ["автомобил"], "кошка": ["кот"]}
SAMPLES = {
    "s_image_captioning": (
        "aij2022-caption",
        ["кот сидит на диване", "красная машина едет по дороге", "two dogs play in the park", "", "🙂 птица, ветка!"],
        [["кошка сидит на диване", "кот лежит"], ["автомобиль красного цвета едет"], ["2 собаки играют",
         "two dogs playing"], ["пустая комната"], ["птица на ветке"]],
    ),
    "s_visual_qa": (
        "aij2022-vqa",
        ["два", "кошка", "красный", "3 яблока", "нет"],
        [["2"], ["кот"], ["красная", "алая"], ["3"], ["да"]],
    ),
}


@pytest.fixture(scope="module")
def clip_dir(tmp_path_factory):
    return save_random_hf_clip(tmp_path_factory.mktemp("tiny_hf_clip"), TINY_CLIP)


@pytest.fixture()
def image_root(tmp_path):
    """Five PNGs of two sizes under ``tmp_path/data/images``; returns ``(root, names, tensors)``."""
    root = tmp_path / "data"
    (root / "images").mkdir(parents=True)
    generator = torch.Generator().manual_seed(0)
    names, tensors = [], []
    for i, size in enumerate([(30, 40), (30, 40), (48, 36), (30, 40), (48, 36)]):
        image = torch.randint(0, 256, (3, *size), dtype=torch.uint8, generator=generator)
        Image.fromarray(image.permute(1, 2, 0).numpy()).save(root / "images" / f"{i:02d}.png")
        names.append(f"images/{i:02d}.png")
        tensors.append(image)
    return root, names, tensors


def _options(root, clip_dir, **extra):
    return {"image_root": str(root), "synonyms": SYNONYMS, "clip_backend": "hf", "clip_model": clip_dir,
            "batch_size": 2, **extra}


def _expected(name, tensors, clip_dir, synonyms=SYNONYMS):
    mode, preds, answers = SAMPLES[name]
    meteor = meteor_score(preds, answers, mode=mode, synonyms=synonyms)
    clip = CLIPScore("hf", clip_dir, scale=1.0)
    clip.update(tensors, preds)
    clip = clip.compute()
    return float(meteor), float(clip), 0.5 * (float(meteor) + float(clip))


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_score_is_half_meteor_plus_clip(name, image_root, clip_dir):
    root, names, tensors = image_root
    mode, preds, answers = SAMPLES[name]
    entry = get_metric(name)
    metric = entry.build(_options(root, clip_dir))
    references = [{"image": n, "answers": a} for n, a in zip(names, answers)]
    metric.update(*entry.update_args(preds[:3], [[r] for r in references[:3]]))
    metric.update(*entry.update_args(preds[3:], [[r] for r in references[3:]]))
    result = metric.compute()
    assert set(result) == {"score", "meteor", "clip", "clip_failed", "clip_undecodable"}
    assert all(v.dtype == torch.float64 for v in result.values()) and float(result["clip_failed"]) == 0
    assert float(result["clip_undecodable"]) == 0

    meteor, clip, score = _expected(name, tensors, clip_dir)
    assert float(result["meteor"]) == pytest.approx(meteor, abs=1e-12)
    assert float(result["clip"]) == pytest.approx(clip, abs=1e-6)
    assert float(result["score"]) == pytest.approx(score, abs=1e-6)
    assert 0 < meteor < 1 and 0 <= clip <= 1
    # the synonyms reach METEOR: without them a sample loses its synonym match ("кот" ~ "кошка")
    plain = meteor_score(preds, answers, mode=mode, synonyms=NoSynonyms(), reduction="none")
    with_synonyms = meteor_score(preds, answers, mode=mode, synonyms=SYNONYMS, reduction="none")
    assert bool((with_synonyms > plain).any()) and float(result["meteor"]) > float(plain.mean())
    signature = metric.signature()
    assert signature.startswith(f"{name}|meteor:meteor|mode:{mode}|synonyms:DictSynonyms")
    assert "|clip:clip_score|backend:hf|" in signature and "|scale:1|" in signature


def test_records_through_the_runner(tmp_path, image_root, clip_dir):
    """Two tasks in one config: relative image_root and TSV synonyms resolve against the config's folder; the
    reference object may be given bare or in a one-element list, and ``answers`` as one string."""
    root, names, tensors = image_root
    (root / "synonyms.tsv").write_text("".join(f"{w}\t" + "\t".join(s) + "\n" for w, s in SYNONYMS.items()), "utf-8")
    (tmp_path / "configs").mkdir()
    tasks = []
    for name in sorted(SAMPLES):
        _, preds, answers = SAMPLES[name]
        with (root / f"{name}.pred.jsonl").open("w", encoding="utf-8") as f:
            for i, pred in enumerate(reversed(preds)):  # any order: joined by id
                f.write(json.dumps({"id": f"q{len(preds) - 1 - i}", "prediction": pred}, ensure_ascii=False) + "\n")
        with (root / f"{name}.ref.jsonl").open("w", encoding="utf-8") as f:
            for i, (image, gold) in enumerate(zip(names, answers)):
                ref = {"image": image, "answers": gold[0] if len(gold) == 1 else gold, "question": "что это?"}
                f.write(json.dumps({"id": f"q{i}", "references": [ref] if i % 2 else ref}, ensure_ascii=False) + "\n")
        options = {"image_root": "../data", "synonyms": "../data/synonyms.tsv", "clip_backend": "hf",
                   "clip_model": clip_dir, "batch_size": 2}
        tasks.append({"name": name, "metric": name, "options": options,
                      "predictions": f"../data/{name}.pred.jsonl", "references": f"../data/{name}.ref.jsonl"})
    config = tmp_path / "configs" / "captioning.yaml"
    config.write_text(json.dumps({"tasks": tasks}))
    loaded = load_config(config)
    assert loaded.tasks[0].options["synonyms"] == str(root / "synonyms.tsv")
    report = evaluate(loaded, device="cpu", batch_size=3)
    for result in report.tasks:
        meteor, clip, score = _expected(result.name, tensors, clip_dir)
        assert result.score == pytest.approx(score, abs=1e-6)
        assert result.details["meteor"] == pytest.approx(meteor, abs=1e-12)
        assert result.details["clip"] == pytest.approx(clip, abs=1e-6)
        assert result.n == 5 and result.missing == 0 and "synonyms:TSVSynonyms" in result.signature

    # every id needs a prediction
    pred_file = root / "s_visual_qa.pred.jsonl"
    whole = pred_file.read_text("utf-8")
    pred_file.write_text("".join(whole.splitlines(keepends=True)[1:]), "utf-8")
    with pytest.raises(DataError, match=r"1 of 5 references have no prediction \(ids 'q4'\)"):
        evaluate(load_config(config), device="cpu")
    pred_file.write_text(whole, "utf-8")  # (checked before any task is scored: it would stop the run below first)
    # a malformed reference object is named by the runner
    ref_file = root / "s_image_captioning.ref.jsonl"
    ref_file.write_text(ref_file.read_text("utf-8").replace('"answers"', '"answer"', 1), "utf-8")
    with pytest.raises(TaskError, match=r"s_image_captioning.*first id 'q0'.*`answers` must be a string"):
        evaluate(load_config(config), device="cpu")


def test_update_args_name_the_bad_field():
    good = {"image": "a.png", "answers": ["x"]}
    assert caption_update_args(["p"], [[good]]) == (["a.png"], ["p"], [["x"]])
    assert caption_update_args(["p"], [{"image": "a.png", "answers": "x"}]) == (["a.png"], ["p"], [["x"]])
    with pytest.raises(TypeError, match="prediction 0 must be a string"):
        caption_update_args([{"text": "p"}], [[good]])
    with pytest.raises(TypeError, match="references 1 must be one object"):
        caption_update_args(["p", "q"], [[good], ["just a string"]])
    with pytest.raises(ValueError, match="references 0: `image`"):
        caption_update_args(["p"], [[{"answers": ["x"]}]])
    with pytest.raises(ValueError, match="references 0: `answers`"):
        caption_update_args(["p"], [[{"image": "a.png", "answers": []}]])


def test_image_paths_must_stay_inside_image_root(tmp_path, image_root, clip_dir):
    root, names, _ = image_root
    Image.new("RGB", (20, 20)).save(tmp_path / "outside.png")
    (root / "link.png").symlink_to(tmp_path / "outside.png")
    metric = ImageCaptioningScore(**_options(root, clip_dir))
    for escape in ["../outside.png", str(tmp_path / "outside.png"), "link.png", "images/../../outside.png"]:
        with pytest.raises(ValueError, match=r"`images\[1\]`.*leaves image_root.*allow_outside_root"):
            metric.update([names[0], escape], ["a", "b"], ["a", "b"])
    with pytest.raises(ValueError, match=r"`images\[0\]`: file .* does not exist"):
        metric.update(["images/missing.png"], ["a"], ["a"])
    with pytest.raises(ValueError, match="`preds`"):
        metric.update(names[:2], ["a"], ["a", "b"])
    with pytest.raises(ValueError, match=r"`target\[0\]` holds no reference"):
        metric.update(names[:1], ["a"], [[]])
    assert int(metric.meteor.count) == 0 and int(metric.clip.count) == 0  # rejected batches change nothing
    allowed = ImageCaptioningScore(**_options(root, clip_dir, allow_outside_root=True))
    allowed.update(["../outside.png", "link.png"], ["a", "b"], ["a", "b"])
    assert "outside-root-allowed" in allowed.signature() and "outside-root" not in metric.signature()


def test_options_are_checked_without_loading_a_model(tmp_path, monkeypatch):
    """Config validation builds no CLIP and opens no RuWordNet; a bad option fails there, named."""
    from gpumetrics.image import clip_score as clip_module

    def no_model(*args, **kwargs):
        raise AssertionError("config validation built a model")

    monkeypatch.setattr(clip_module, "_build_backend", no_model)
    for name in ("p.jsonl", "r.jsonl"):
        (tmp_path / name).write_text("")
    (tmp_path / "syn.tsv").write_text("кот\tкошк\n", "utf-8")
    # the CLIP model's files must be found when a config loads (nothing is read from them: no model is built)
    (tmp_path / "x.json").write_text(json.dumps({"embed_dim": 16, "vision_cfg": {}, "text_cfg": {}}))
    random_clip = {"clip_backend": "open_clip", "clip_model": "x.json", "clip_pretrained": "random"}

    def parse(metric, options, task_name="T", suite=None):
        task = {"name": task_name, "options": options, "predictions": "p.jsonl", "references": "r.jsonl"}
        if metric:
            task["metric"] = metric
        return parse_config({"suite": suite, "tasks": [task]}, tmp_path / "c.yaml")

    for metric in ("s_image_captioning", "s_visual_qa"):
        (task,) = parse(metric, {"synonyms": "syn.tsv", "clip_backend": "open_clip", "clip_model": "x.json",
                                 "clip_pretrained": "random"}).tasks
        assert task.options["synonyms"] == str(tmp_path / "syn.tsv") and task.options["image_root"] == str(tmp_path)
        bad = {
            "synonyms": [(5, "synonyms"), ("missing.tsv", "synonyms"), ({"кот": "кошк"}, "mapping")],
            "image_root": [(3, "image_root")], "batch_size": [(0, "batch_size")],
            "allow_outside_root": [("yes", "allow_outside_root")], "clip_backend": [("jax", "backend")],
            "clip_pretrained": [(7, "pretrained")], "variant": [("vqa", "variant")],
            "clip_modle": [("x", "clip_modle")],
        }
        for key, cases in bad.items():
            for value, named in cases:
                with pytest.raises(ConfigError, match=rf"tasks\[0\] \(T\).*{named}"):
                    parse(metric, {key: value})
    # the aij2022 suite: ImageCaptioning with its fixed options, VisualQA as the official script (METEOR only); the
    # synonyms are one of the options a config may set, a metric option is not
    config = parse_config({"suite": "aij2022", "tasks": [
        {"name": "ImageCaptioning", "predictions": "p.jsonl", "references": "r.jsonl", "options": random_clip},
        {"name": "VisualQA", "predictions": "p.jsonl", "references": "r.jsonl", "options": {"synonyms": "syn.tsv"}},
    ]}, tmp_path / "suite.yaml")
    assert [task.metric.name for task in config.tasks] == ["s_image_captioning", "meteor"]
    assert config.tasks[1].options == {"mode": "aij2022-vqa", "synonyms": str(tmp_path / "syn.tsv")}
    with pytest.raises(ConfigError, match="options of suite 'aij2022' are fixed"):
        parse(None, {"mode": "nltk"}, "VisualQA", suite="aij2022")


@pytest.mark.skipif(importlib.util.find_spec("ruwordnet") is not None, reason="RuWordNet is installed here")
def test_default_synonyms_need_ruwordnet_and_fail_before_clip_loads(monkeypatch):
    from gpumetrics.image import clip_score as clip_module

    monkeypatch.setattr(clip_module, "_build_backend", lambda *a, **k: pytest.fail("CLIP was built first"))
    with pytest.raises(FileNotFoundError, match="`synonyms` is null.*RuWordNet.*pip install ruwordnet.*TSV"):
        VisualQAScore(clip_backend="open_clip", clip_model="ViT-B-32", clip_pretrained="random")


def test_merge_state_and_checkpoint_equal_one_pass(image_root, clip_dir):
    root, names, _ = image_root
    _, preds, answers = SAMPLES["s_visual_qa"]
    options = _options(root, clip_dir)
    full = VisualQAScore(**options)
    full.update(names, preds, answers)
    expected = {key: float(value) for key, value in full.compute().items()}

    first, second = VisualQAScore(**options), VisualQAScore(**options)
    first.update(names[:2], preds[:2], answers[:2])
    second.update(names[2:], preds[2:], answers[2:])
    first.merge_state(second)
    assert {k: float(v) for k, v in first.compute().items()} == pytest.approx(expected, abs=1e-12)
    with pytest.raises(TypeError, match="takes another VisualQAScore"):
        first.merge_state(ImageCaptioningScore(**options))

    partial = VisualQAScore(**options)
    partial.update(names[:3], preds[:3], answers[:3])
    partial.persistent(True)
    restored = VisualQAScore(**options)
    restored.load_state_dict(partial.state_dict())
    restored.update(names[3:], preds[3:], answers[3:])
    assert {k: float(v) for k, v in restored.compute().items()} == pytest.approx(expected, abs=1e-12)

    restored.reset()
    assert int(restored.meteor.count) == 0 and int(restored.clip.count) == 0


@pytest.mark.parametrize("cls, metric", [(ImageCaptioningScore, "s_image_captioning"), (VisualQAScore, "s_visual_qa")])
def test_forward_returns_the_batch_value_and_keeps_every_batch(image_root, clip_dir, cls, metric):
    """``forward`` of a metric that owns metrics (METEOR, CLIP): torchmetrics' forward reset the children for the
    batch and merged back the parent's own states only, so every batch before the last was lost from METEOR and CLIP
    (the accumulated score was the last batch's). Now each batch's value is that batch's alone, and ``compute()``
    after forwards equals one pass of ``update``."""
    root, names, _ = image_root
    _, preds, answers = SAMPLES[metric]
    options = _options(root, clip_dir)
    full = cls(**options)
    full.update(names, preds, answers)
    expected = {key: float(value) for key, value in full.compute().items()}
    stepped, cuts = cls(**options), [(0, 2), (2, 3), (3, len(names))]
    for start, stop in cuts:
        batch = stepped(names[start:stop], preds[start:stop], answers[start:stop])
        alone = cls(**options)
        alone.update(names[start:stop], preds[start:stop], answers[start:stop])
        assert {k: float(v) for k, v in batch.items()} == pytest.approx(
            {k: float(v) for k, v in alone.compute().items()}, abs=1e-12)
    assert {k: float(v) for k, v in stepped.compute().items()} == pytest.approx(expected, abs=1e-12)
    assert int(stepped.meteor.count) == int(full.meteor.count) and int(stepped.clip.count) == int(full.clip.count)


def test_forward_keeps_the_named_undecodable_files_bounded_and_in_order(image_root, clip_dir):
    """Each ``forward`` merges the batch's named files behind the kept ones: the first three read stay named, no more
    (torchmetrics' reduce appended every batch's)."""
    from gpumetrics.image.undecodable import undecodable_images

    root, names, _ = image_root
    _, preds, answers = SAMPLES["s_visual_qa"]
    bad = []
    for i in range(5):
        (root / "images" / f"bad{i}.png").write_bytes(b"not a png " + bytes([i]))
        bad.append(f"images/bad{i}.png")
    metric = VisualQAScore(**_options(root, clip_dir, missing_image="zero"))
    for i in range(5):
        metric([names[i], bad[i]], [preds[i], preds[i]], [answers[i], answers[i]])
    assert [path for path, _ in undecodable_images(metric)] == [str(root / b) for b in bad[:3]]
    assert len(metric.undecodable_named) == 3 and int(metric.clip_undecodable) == 5


def test_forward_warns_about_undecodable_files_once_at_compute_not_every_step(image_root, clip_dir):
    """A Lightning loop calls the metric every step: each step's value is the batch's own, but the undecodable files
    are reported by the epoch's ``compute()`` only (each step warned about its batch's files before)."""
    import warnings

    root, names, _ = image_root
    _, preds, answers = SAMPLES["s_visual_qa"]
    (root / "images" / "step-bad.png").write_bytes(b"not a png")
    metric = VisualQAScore(**_options(root, clip_dir, missing_image="zero"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(3):
            metric([names[i], "images/step-bad.png"], [preds[i], preds[i]], [answers[i], answers[i]])
    assert [str(w.message) for w in caught if "cannot be decoded" in str(w.message)] == []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        metric.compute()
    (message,) = [str(w.message) for w in caught if "cannot be decoded" in str(w.message)]
    assert message.startswith("s_visual_qa: 3 image file(s) cannot be decoded")


def test_an_undecodable_image_is_an_error_or_a_failed_sample_as_missing_image_says(image_root, clip_dir):
    """``missing_image="error"``: the file is named; ``"zero"``: CLIP 0 as a missing file, counted, one warning at
    ``compute()`` naming the files with the decoder's reason — also after ``merge_state``, and ``reset`` forgets."""
    root, names, _ = image_root
    _, preds, answers = SAMPLES["s_visual_qa"]
    (root / "images" / "01.png").write_bytes(b"not an image")
    (root / "images" / "03.png").write_bytes(b"")
    with pytest.raises(ValueError, match=r"01\.png' cannot be decoded: cannot identify image file$"):
        VisualQAScore(**_options(root, clip_dir)).update(names, preds, answers)

    def scored(images, missing_image="zero"):
        metric = VisualQAScore(**_options(root, clip_dir, missing_image=missing_image))
        metric.update(images[:2], preds[:2], answers[:2])
        other = VisualQAScore(**_options(root, clip_dir, missing_image=missing_image))
        other.update(images[2:], preds[2:], answers[2:])
        metric.merge_state(other)
        return metric

    metric = scored(names)
    with pytest.warns(UserWarning) as caught:
        result = {k: float(v) for k, v in metric.compute().items()}
    (message,) = [str(w.message) for w in caught]
    assert message == (f"s_visual_qa: 2 image file(s) cannot be decoded, each scored CLIP 0 as the AIJ-2022 scripts' "
                       f"try/except does ('{root / names[1]}': cannot identify image file; '{root / names[3]}': "
                       "cannot identify image file)")
    assert result["clip_failed"] == 2 and result["clip_undecodable"] == 2
    absent = [None if i in (1, 3) else name for i, name in enumerate(names)]
    expected = {k: float(v) for k, v in scored(absent).compute().items()}
    # a bad file leaves a hole in its chunk, so the CLIP forward sees other batches: float32 rounding apart
    assert result == pytest.approx({**expected, "clip_undecodable": 2}, abs=1e-7)
    metric.reset()
    assert metric.undecodable_named == [] and float(metric.clip_undecodable) == 0


def test_reading_and_clip_speed_options(image_root, clip_dir):
    """Decoding processes (2 chunks of 2 images per update: 2 workers start) change nothing; the CLIP precision is
    recorded; bad values name their option."""
    root, names, _ = image_root
    _, preds, answers = SAMPLES["s_image_captioning"]
    entry = get_metric("s_image_captioning")
    references = [[{"image": n, "answers": a}] for n, a in zip(names, answers)]
    values, signatures = [], []
    for workers in (0, 2):
        metric = entry.build(_options(root, clip_dir, workers=workers))
        metric.update(*entry.update_args(preds, references))
        values.append({k: float(v) for k, v in metric.compute().items()})
        signatures.append(metric.signature())
    assert values[0] == values[1] and signatures[0] == signatures[1]
    assert "bf16" in entry.build(_options(root, clip_dir, clip_speed_mode="bf16")).signature().split("|clip:")[1]
    for option, value, error in (("workers", 1.5, TypeError), ("workers", -1, ValueError),
                                 ("decode", "png", ValueError), ("clip_speed_mode", "bf16+compile", ValueError)):
        with pytest.raises(error, match=f"`{option}`"):
            entry.check_options(**_options(root, clip_dir, **{option: value}))

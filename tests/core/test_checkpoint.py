"""Checkpointing every metric mid-stream: update half → persistent(True) → save → fresh metric → load → rest == one
pass.

Every ``Metric`` exported from ``gpumetrics`` / ``gpumetrics.classification`` (and the AIJ-2022 image task metric)
needs a case in ``CASES``; a new metric without one fails ``test_every_exported_metric_has_a_checkpoint_case``.
"""

from __future__ import annotations

import copy
import inspect
import json
import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch
import torchmetrics
from PIL import Image

import gpumetrics
import gpumetrics.classification as C
from gpumetrics.core import Metric
from gpumetrics.image.fid import FrechetInceptionDistance
from gpumetrics.suites.captioning import ImageCaptioningScore, VisualQAScore
from gpumetrics.suites.image import ImageGenerationScore
from testkit.ddp import record_collectives, run_ddp_function
from tests.helpers.harness import assert_close, check_checkpoint, checkpoint_round_trip

TINY_OPEN_CLIP = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}
TEXT_PREDS = ["the cat sat on the mat", "a dog barked at 3 cats", "Кошка спит", "", "hello world", "the end . a"]
TEXT_REFS = [["the cat is on the mat", "a cat sat"], ["the dog barked"], ["кошка спит на диване"], ["x"],
             ["hello there world"], ["the end", "a"]]


WMD_VECTORS = {w: [float(len(w)), float(sum(map(ord, w)) % 7), 1.0] for w in
               " ".join(TEXT_PREDS + [r for refs in TEXT_REFS for r in refs]).split()}


def _wmd_pairs() -> list[tuple]:
    """Text pairs without an empty document (an empty one scores inf, and inf ≠ inf for the comparison)."""
    keep = [i for i, p in enumerate(TEXT_PREDS) if p]
    preds, refs = [TEXT_PREDS[i] for i in keep], [TEXT_REFS[i][0] for i in keep]
    return [(preds[i:j], refs[i:j]) for i, j in ((0, 2), (2, 3), (3, 5))]


def _text(single_ref: bool = False) -> list[tuple]:
    refs = [r[0] for r in TEXT_REFS] if single_ref else TEXT_REFS
    return [(TEXT_PREDS[i:j], refs[i:j]) for i, j in ((0, 2), (2, 3), (3, 6))]


def _code() -> list[tuple]:
    preds = ["def f(a):\n    b = a + 1\n    return b\n", "x = 1\n", "", "for i in range(3):\n    print(i)\n"]
    refs = [["def f(x):\n    y = x + 1\n    return y\n"], ["x = 2\ny = x\n", "x = 1\n"], ["pass\n"],
            ["for j in range(3):\n    print(j)\n"]]
    return [(preds[i:j], refs[i:j]) for i, j in ((0, 2), (2, 3), (3, 4))]


def _images(n: int, seed: int, size: tuple = (3, 24, 20)) -> torch.Tensor:
    return torch.rand(n, *size, generator=torch.Generator().manual_seed(seed))


def _boxes(seed: int, n: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(n, 2, generator=g) * 20
    return torch.cat([xy, xy + 1 + torch.rand(n, 2, generator=g) * 5], dim=1)


def _ocr_batches() -> list[tuple]:
    out = []
    for seed, n in ((0, 3), (1, 2), (2, 4)):
        gt = _boxes(seed, n)
        pred = gt + 0.3 * torch.rand(gt.shape, generator=torch.Generator().manual_seed(seed + 10))
        texts = [f"w{k}" for k in range(n)]
        out.append(([pred], [texts[::-1] if seed == 1 else texts], [gt], [texts]))
    return out


def _zsd_batches() -> list[tuple]:
    out = []
    for seed in range(3):
        boxes = _boxes(seed, 3)
        xywh = torch.cat([boxes[:, :2], boxes[:, 2:] - boxes[:, :2]], dim=1)
        out.append(([{"cat": xywh[:2], "dog": xywh[2:] + seed}], [{"cat": xywh[:1], "dog": xywh[2:]}]))
    return out


def _ranking() -> list[tuple]:
    g = torch.Generator().manual_seed(5)
    scores, relevance = torch.randint(0, 4, (9, 6), generator=g).double(), torch.randint(0, 3, (9, 6), generator=g)
    relevance[4] = 0  # an empty query
    return [(scores[i:j], relevance[i:j]) for i, j in ((0, 2), (2, 5), (5, 9))]


def _labels(kind: str) -> list[tuple]:
    g = torch.Generator().manual_seed(0)
    if kind == "binary":
        return [(torch.rand(n, generator=g), torch.randint(0, 2, (n,), generator=g)) for n in (5, 7, 4)]
    if kind == "multiclass":
        return [(torch.randint(0, 4, (n,), generator=g), torch.randint(0, 4, (n,), generator=g)) for n in (5, 7, 4)]
    return [(torch.rand(n, 3, generator=g), torch.randint(0, 2, (n, 3), generator=g)) for n in (5, 7, 4)]


def _side_batches(dims_or_images: str) -> list[tuple]:
    """``(tensor, real)`` batches for FID/KID ``update`` (images) or ``update_features`` (features)."""
    make = (lambda n, s: _images(n, s)) if dims_or_images == "images" else (
        lambda n, s: torch.rand(n, 64, generator=torch.Generator().manual_seed(s)) + 0.1 * (s % 2))
    return [(make(6, 0), True), (make(5, 1), False), (make(7, 2), True), (make(6, 3), False)]


def _update_features(metric, batch):
    metric.update_features(*batch)


def _clip_factory(tmp_path_factory) -> Callable[[], Any]:
    path = tmp_path_factory.mktemp("ckpt_clip") / "tiny-clip.json"
    path.write_text(json.dumps(TINY_OPEN_CLIP))
    return lambda: gpumetrics.CLIPScore("open_clip", str(path), pretrained="random", scale=2.5)


def _image_task(tmp_path_factory, real_npz: bool) -> tuple[Callable[[], Any], list[tuple]]:
    root = tmp_path_factory.mktemp("ckpt_task")
    names = []
    for folder, n, seed in (("real", 4, 0), ("fake", 5, 1)):
        (root / folder).mkdir()
        pixels = torch.randint(0, 256, (n, 20, 24, 3), dtype=torch.uint8, generator=torch.Generator().manual_seed(seed))
        for i in range(n):
            Image.fromarray(pixels[i].numpy()).save(root / folder / f"{i}.png")
            names.append(f"{folder}/{i}.png")
    real = str(root / "real")
    if real_npz:
        fid = FrechetInceptionDistance(feature=64, weights="random")
        fid.update((torch.rand(70, 3, 20, 24, generator=torch.Generator().manual_seed(5)) * 255).to(torch.uint8),
                   real=True)
        real = str(root / "real.npz")
        fid.save_stats(real, real=True)
    config = root / "tiny-clip.json"
    config.write_text(json.dumps(TINY_OPEN_CLIP))
    options = {"real": real, "image_root": str(root), "fid_feature": 64, "inception_weights": "random",
               "clip_backend": "open_clip", "clip_model": str(config), "clip_pretrained": "random", "batch_size": 2}
    fake = names[4:]
    captions = ["a cat", "собака", "鳥", "🙂", "a red square"]
    batches = [(fake[:2], captions[:2]), (fake[2:3], captions[2:3]), (fake[3:], captions[3:])]
    return lambda: ImageGenerationScore(**options), batches


def _caption_task(tmp_path_factory, cls) -> tuple[Callable[[], Any], list[tuple]]:
    root = tmp_path_factory.mktemp("ckpt_caption")
    pixels = torch.randint(0, 256, (4, 20, 24, 3), dtype=torch.uint8, generator=torch.Generator().manual_seed(3))
    for i in range(4):
        Image.fromarray(pixels[i].numpy()).save(root / f"{i}.png")
    config = root / "tiny-clip.json"
    config.write_text(json.dumps(TINY_OPEN_CLIP))
    options = {"image_root": str(root), "synonyms": {"кот": ["кошка"]}, "clip_backend": "open_clip",
               "clip_model": str(config), "clip_pretrained": "random", "batch_size": 2}
    preds = ["кошка спит", "2 собаки", "кот", ""]
    golds = [["кот спит"], ["две собаки", "2"], ["кошка"], ["пусто"]]
    batches = [([f"{i}.png" for i in range(a, b)], preds[a:b], golds[a:b]) for a, b in ((0, 2), (2, 3), (3, 4))]
    return lambda: cls(**options), batches


# class → (factory(tmp_path_factory) → (make_metric, batches, update or None))
CASES: dict[type, list[Callable]] = {
    gpumetrics.TokenF1: [lambda t: (lambda: gpumetrics.TokenF1(preset="squad"), _text(), None)],
    gpumetrics.ExactMatch: [lambda t: (lambda: gpumetrics.ExactMatch(preset="raw"), _text(), None)],
    gpumetrics.StringAccuracy: [lambda t: (gpumetrics.StringAccuracy, _text(single_ref=True), None)],
    gpumetrics.VQAAccuracy: [lambda t: (gpumetrics.VQAAccuracy, [(*batch, ["en", "ru", "en"][: len(batch[0])])
                                                                 for batch in _text(single_ref=True)], None)],
    gpumetrics.EditDistance: [
        lambda t: (lambda: gpumetrics.EditDistance(reduction="mean"), _text(single_ref=True), None),
        lambda t: (lambda: gpumetrics.EditDistance(reduction="none"), _text(single_ref=True), None),
    ],
    gpumetrics.CharErrorRate: [lambda t: (gpumetrics.CharErrorRate, _text(single_ref=True), None)],
    gpumetrics.WordErrorRate: [lambda t: (gpumetrics.WordErrorRate, _text(single_ref=True), None)],
    gpumetrics.NormalizedEditSimilarity: [
        lambda t: (gpumetrics.NormalizedEditSimilarity, _text(single_ref=True), None)
    ],
    gpumetrics.BLEUScore: [
        lambda t: (gpumetrics.BLEUScore, _text(), None),
        # NLTK method 7 reads the corpus' last sample (a ``cat`` state)
        lambda t: (lambda: gpumetrics.BLEUScore(mode="nltk", smooth="method7"), _text(), None),
        lambda t: (lambda: gpumetrics.BLEUScore(reduction="none", effective_order=True), _text(), None),
    ],
    gpumetrics.ROUGEScore: [
        lambda t: (gpumetrics.ROUGEScore, _text(), None),
        lambda t: (lambda: gpumetrics.ROUGEScore(reduction="none"), _text(), None),
    ],
    gpumetrics.CIDErScore: [
        lambda t: (lambda: gpumetrics.CIDErScore(tokenize="none"), _text(), None),
        # document frequency over the whole corpus: the first half's codes must survive the checkpoint
        lambda t: (lambda: gpumetrics.CIDErScore(mode="cider", tokenize="ptb", reduction="none"), _text(), None),
    ],
    gpumetrics.METEORScore: [
        lambda t: (gpumetrics.METEORScore, _text(), None),  # the jar's corpus statistics (a sum state)
        lambda t: (lambda: gpumetrics.METEORScore(reduction="none"), _text(), None),
        lambda t: (lambda: gpumetrics.METEORScore(mode="nltk", synonyms={"cat": ["kitty"]}), _text(), None),
    ],
    gpumetrics.COCOCaptionScores: [
        # one summed state (BLEU, METEOR, ROUGE-L, count) + CIDEr's token codes (document frequency over the corpus)
        lambda t: (gpumetrics.COCOCaptionScores, _text(), None),
        lambda t: (lambda: gpumetrics.COCOCaptionScores(tokenize="none", reduction="none"), _text(), None),
    ],
    gpumetrics.CodeBLEUScore: [
        lambda t: (lambda: gpumetrics.CodeBLEUScore(language="python"), _code(), None),  # 25 summed statistics
        lambda t: (lambda: gpumetrics.CodeBLEUScore(language="python", reduction="none"), _code(), None),
    ],
    gpumetrics.OCREndToEnd: [
        lambda t: (gpumetrics.OCREndToEnd, _ocr_batches(), None),
        lambda t: (lambda: gpumetrics.OCREndToEnd(matching="icdar15"), _ocr_batches(), None),
    ],
    gpumetrics.ZeroShotDetectionF1: [lambda t: (gpumetrics.ZeroShotDetectionF1, _zsd_batches(), None)],
    gpumetrics.FrechetInceptionDistance: [
        lambda t: (lambda: FrechetInceptionDistance(feature=64, weights="random"), _side_batches("images"), None),
        lambda t: (lambda: FrechetInceptionDistance(feature=64, weights="random"), _side_batches("features"),
                   _update_features),
    ],
    gpumetrics.KernelInceptionDistance: [
        lambda t: (lambda: gpumetrics.KernelInceptionDistance(feature=64, weights="random", subsets=4, subset_size=5),
                   _side_batches("images"), None),
        lambda t: (lambda: gpumetrics.KernelInceptionDistance(feature=64, weights="random", subsets=4, subset_size=5,
                                                              canonical_order=False),
                   _side_batches("features"), _update_features),
    ],
    gpumetrics.CLIPScore: [
        lambda t: (_clip_factory(t), [(_images(2, 0), TEXT_PREDS[:2]), (_images(3, 1), TEXT_PREDS[2:5])], None)
    ],
    ImageGenerationScore: [
        lambda t: (*_image_task(t, real_npz=False), None),
        lambda t: (*_image_task(t, real_npz=True), None),
    ],
    ImageCaptioningScore: [lambda t: (*_caption_task(t, ImageCaptioningScore), None)],
    VisualQAScore: [lambda t: (*_caption_task(t, VisualQAScore), None)],
    gpumetrics.WordMoversDistance: [
        lambda t: (lambda: gpumetrics.WordMoversDistance(WMD_VECTORS), _wmd_pairs(), None),
        lambda t: (lambda: gpumetrics.WordMoversDistance(WMD_VECTORS, "sinkhorn", reduction="none"), _wmd_pairs(),
                   None),
    ],
    gpumetrics.RankingMetrics: [
        lambda t: (lambda: gpumetrics.RankingMetrics(["ndcg@3", "map", "mrr", "precision@2"]), _ranking(), None),
        lambda t: (lambda: gpumetrics.RankingMetrics(["ndcg@3", "recall@2"], empty="skip", ties="ranx"), _ranking(),
                   None),
    ],
    C.BinaryPrecision: [lambda t: (C.BinaryPrecision, _labels("binary"), None)],
    C.BinaryRecall: [lambda t: (C.BinaryRecall, _labels("binary"), None)],
    C.BinaryF1Score: [lambda t: (lambda: C.BinaryF1Score(multidim_average="global"), _labels("binary"), None)],
    C.MulticlassPrecision: [lambda t: (lambda: C.MulticlassPrecision(num_classes=4), _labels("multiclass"), None)],
    C.MulticlassRecall: [
        lambda t: (lambda: C.MulticlassRecall(num_classes=4, average="weighted"), _labels("multiclass"), None)
    ],
    C.MulticlassF1Score: [
        lambda t: (lambda: C.MulticlassF1Score(num_classes=4, average="none"), _labels("multiclass"), None)
    ],
    C.MultilabelPrecision: [lambda t: (lambda: C.MultilabelPrecision(num_labels=3), _labels("multilabel"), None)],
    C.MultilabelRecall: [lambda t: (lambda: C.MultilabelRecall(num_labels=3, average="micro"), _labels("multilabel"),
                                    None)],
    C.MultilabelF1Score: [lambda t: (lambda: C.MultilabelF1Score(num_labels=3), _labels("multilabel"), None)],
}


def _exported_metric_classes() -> set[type]:
    """Metrics exported from gpumetrics / gpumetrics.classification, and every public gpumetrics subclass of Metric
    (task metrics included)."""
    found = set()
    for module in (gpumetrics, C):
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, type) and issubclass(obj, torchmetrics.Metric) and obj is not Metric:
                found.add(obj)
    pending = [Metric]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls is not Metric and cls.__module__.startswith("gpumetrics.") and not cls.__name__.startswith("_") \
                and not inspect.isabstract(cls):  # abstract bases (e.g. RealFakeFeatureMetric) are not metrics
            found.add(cls)
    return found


def test_every_exported_metric_has_a_checkpoint_case():
    import gpumetrics.suites  # noqa: F401  (registers the task metrics)

    exported = _exported_metric_classes()
    assert len(exported) >= 25 and ImageGenerationScore in exported
    missing = sorted(cls.__name__ for cls in exported - set(CASES))
    assert not missing, f"metrics without a mid-stream checkpoint case in tests/core/test_checkpoint.py: {missing}"
    for cls in exported:
        assert issubclass(cls, Metric), f"{cls.__name__} must derive from gpumetrics' Metric (checkpointing)"


def _one_pass(make_metric, batches, update):
    metric = make_metric()
    for batch in batches:
        (update or (lambda m, b: m.update(*b)))(metric, batch)
    return metric.compute()


@pytest.mark.parametrize(
    "cls, index", [(cls, i) for cls, cases in CASES.items() for i in range(len(cases))],
    ids=lambda v: v.__name__ if isinstance(v, type) else str(v),
)
def test_mid_stream_checkpoint_equals_one_pass(cls, index, tmp_path_factory):
    make_metric, batches, update = CASES[cls][index](tmp_path_factory)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # tiny FID/KID sets: rank-deficiency warnings
        expected = _one_pass(make_metric, batches, update)
        check_checkpoint(make_metric, batches, expected, atol=1e-9, rtol=1e-9, update=update)


# ---------------------------------------------------------------------------------------- FID .npz statistics
def _features(n: int, seed: int, shift: float = 0.0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    mixing = torch.randn(8, 8, generator=g, dtype=torch.float64) / 8**0.5
    return (torch.randn(n, 8, generator=g, dtype=torch.float64) @ mixing).abs() + shift


class _Identity(torch.nn.Module):
    dims = 8

    def forward(self, x):
        return x


def _fid() -> FrechetInceptionDistance:
    return FrechetInceptionDistance(feature=_Identity())


def test_fid_npz_statistics_are_state_and_survive_a_mid_stream_checkpoint(tmp_path):
    source = _fid()
    source.update_features(_features(300, seed=0), real=True)
    source.update_features(_features(10, seed=1), real=False)
    npz = tmp_path / "real.npz"
    source.save_stats(npz, real=True)
    # the two halves of the generated set differ, so dropping the first one shows in the number
    fake = [_features(200, seed=2, shift=0.5), _features(200, seed=3, shift=2.0)]

    one_pass = _fid()
    one_pass.load_stats(npz, real=True)
    for part in fake:
        one_pass.update_features(part, real=False)
    expected = float(one_pass.compute())

    first = _fid()
    first.load_stats(npz, real=True)
    first.update_features(fake[0], real=False)
    # torchmetrics' default: no state in the checkpoint, the first half is silently lost
    default = _fid()
    default.load_stats(npz, real=True)
    default.load_state_dict(checkpoint_round_trip(first.state_dict()))
    default.update_features(fake[1], real=False)
    assert abs(float(default.compute()) - expected) > 0.1 * expected

    first.persistent(True)
    state = checkpoint_round_trip(first.state_dict())
    assert torch.equal(state["real_loaded_mu"], one_pass.real_loaded_mu)
    restored = _fid()  # no load_stats: the checkpoint carries the statistics
    restored.load_state_dict(state)
    assert restored.signature() == one_pass.signature()  # "real_stats:loaded"
    restored.update_features(fake[1], real=False)
    assert_close(restored.compute(), expected, 1e-9, 1e-12, "FID restored mid-stream")
    with pytest.raises(ValueError, match="loaded from a file"):
        restored.update_features(fake[1], real=True)

    # a persistent metric refuses (strict) a checkpoint that lacks the states
    strict = _fid()
    strict.persistent(True)
    with pytest.raises(RuntimeError, match="Missing key.*real_loaded_mu"):
        strict.load_state_dict({})


def test_fid_loaded_statistics_follow_reset_rules_and_merge(tmp_path):
    source = _fid()
    source.update_features(_features(50, seed=0), real=True)
    npz = tmp_path / "real.npz"
    source.save_stats(npz, real=True)
    keep = FrechetInceptionDistance(feature=_Identity(), reset_real_features=False)
    keep.load_stats(npz, real=True)
    keep.reset()
    assert keep.real_loaded_mu.shape == (8,)
    drop = _fid()
    drop.load_stats(npz, real=True)
    drop.reset()
    assert drop.real_loaded_mu.numel() == 0

    # a worker with generated features only merges into the metric holding the loaded real statistics
    main, worker = _fid(), _fid()
    main.load_stats(npz, real=True)
    main.update_features(_features(30, seed=4, shift=0.3), real=False)
    worker.update_features(_features(30, seed=5, shift=0.3), real=False)
    main.merge_state(worker)
    single = _fid()
    single.load_stats(npz, real=True)
    single.update_features(torch.cat([_features(30, seed=4, shift=0.3), _features(30, seed=5, shift=0.3)]),
                           real=False)
    assert_close(main.compute(), single.compute(), 1e-9, 1e-12, "merge with loaded statistics")
    other = _fid()
    other.update_features(_features(30, seed=6), real=True)
    merged = copy.deepcopy(single)
    merged.merge_state(other)
    with pytest.raises(ValueError, match="both statistics loaded from a file and samples"):
        merged.compute()
    different = _fid()
    np.savez(tmp_path / "other.npz", mu=np.ones(8), sigma=np.eye(8))
    different.load_stats(tmp_path / "other.npz", real=True)
    with pytest.raises(ValueError, match="real_loaded_mu"):
        copy.deepcopy(single).merge_state(different)


# --------------------------------------------------------------------------------------------- the mechanism
def test_load_moves_states_to_the_metric_device_and_dtype_and_drops_the_cached_value():
    metric = gpumetrics.TokenF1()
    metric.update(["a cat"], ["a cat"])
    metric.persistent(True)
    state = metric.state_dict()
    state["score_sum"] = state["score_sum"].float()  # a checkpoint written with another dtype
    other = gpumetrics.TokenF1()
    other.update(["dog"], ["cat"])
    assert float(other.compute()) == 0.0  # cached
    other.load_state_dict(state)
    assert other.score_sum.dtype == torch.float64
    assert float(other.compute()) == 1.0
    state["score_sum"] += 1  # the metric owns a copy
    assert float(other.compute()) == 1.0


def test_bad_checkpoints_name_the_state():
    metric = gpumetrics.BLEUScore()
    metric.persistent(True)
    state = metric.state_dict()
    with pytest.raises(RuntimeError, match="matches: expected a tensor of shape"):
        gpumetrics.BLEUScore().load_state_dict({**state, "matches": torch.zeros(7, dtype=torch.float64)})
    with pytest.raises(RuntimeError, match="last: a metric state must be a tensor or a list of tensors"):
        gpumetrics.BLEUScore().load_state_dict({**state, "last": "text"})
    fid = _fid()
    fid.persistent(True)
    bad = {**fid.state_dict(), "real_loaded_mu": torch.zeros(3, dtype=torch.float64),
           "real_loaded_sigma": torch.eye(3, dtype=torch.float64)}
    with pytest.raises(RuntimeError, match=r"real_loaded_mu/sigma: expected shapes \(0,\)/\(0, 0\) or \(8,\)"):
        _fid().load_state_dict(bad)


def test_persistent_reaches_child_metrics(tmp_path_factory):
    make_metric, _ = _image_task(tmp_path_factory, real_npz=True)
    metric = make_metric()
    metric.persistent(True)
    keys = set(metric.state_dict())
    assert {"fid.real_loaded_mu", "fid.fake_sum", "clip.score_sum", "_update_count"} <= keys


def test_image_task_restored_after_compute_does_not_load_the_real_set_twice(tmp_path_factory):
    make_metric, batches = _image_task(tmp_path_factory, real_npz=False)
    expected = _one_pass(make_metric, batches, None)
    first = make_metric()
    first.update(*batches[0])
    first.compute()  # reads the real folder into the FID states
    first.persistent(True)
    restored = make_metric()
    restored.load_state_dict(checkpoint_round_trip(first.state_dict()))
    for batch in batches[1:]:
        restored.update(*batch)
    assert_close(restored.compute(), expected, 1e-9, 1e-9, "image task restored after compute")


def _restored_fid_on_rank(rank: int, checkpoint: str) -> tuple[float, list]:
    metric = _fid()
    metric.load_state_dict(torch.load(checkpoint, weights_only=True))
    metric.update_features(_features(40 + 30 * rank, seed=20 + rank, shift=1.0), real=False)
    with record_collectives() as calls:
        value = float(metric.compute())
    return value, calls


@pytest.mark.ddp
def test_restored_loaded_statistics_are_not_reduced_under_ddp(tmp_path):
    source = _fid()
    source.update_features(_features(100, seed=0), real=True)
    npz = tmp_path / "real.npz"
    source.save_stats(npz, real=True)
    first = _fid()
    first.load_stats(npz, real=True)
    first.update_features(_features(50, seed=9, shift=0.5), real=False)
    first.persistent(True)
    torch.save(first.state_dict(), tmp_path / "ckpt.pt")
    one_pass = _fid()
    one_pass.load_stats(npz, real=True)
    # both ranks restore the same checkpoint: its generated samples count twice, the loaded statistics once
    for part in (_features(50, seed=9, shift=0.5), _features(50, seed=9, shift=0.5), _features(40, seed=20, shift=1.0),
                 _features(70, seed=21, shift=1.0)):
        one_pass.update_features(part, real=False)
    expected = float(one_pass.compute())
    results = run_ddp_function(_restored_fid_on_rank, str(tmp_path / "ckpt.pt"))
    for value, calls in results:
        assert value == pytest.approx(expected, rel=1e-9)
        # the signature check, the float64 sums, the int64 counts (the loaded statistics do not travel)
        assert {name for name, _ in calls} == {"all_reduce"} and len(calls) == 3

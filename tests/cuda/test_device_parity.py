"""The CUDA suite (``make test-cuda``; ``pytest -m cuda``): every exported metric gives on CUDA the numbers it gives on
the CPU, keeps its states on the metric's device, and makes as many host syncs per ``update`` for B as for 4·B samples.

One list covers every export: the module cases of ``tests/core/test_host_syncs.py`` (every ``Metric`` class of the
package) and :data:`FUNCTIONAL_CASES` here (every name of ``gpumetrics.functional``). Without CUDA the device tests skip
with a reason and only the completeness checks and a CPU smoke run of every functional case run, so the list stays
valid on CPU CI.

Tolerances: float64 paths ≤ 1e-12 relative (``FLOAT64_RTOL``); float32 paths — the image networks (FID, KID, CLIP
on float images) and torchmetrics' classification statistics — ≤ ``FLOAT32_RTOL`` (the networks run true float32 on
both devices under the precision policy; their outputs differ by float32 rounding in another summation order, which
a 4-sample FID amplifies); CLIP on uint8 images (``UINT8_CLIP_CASES``) — ≤ ``UINT8_CLIP_RTOL`` beyond
``UINT8_CLIP_ATOL`` (the two devices' uint8 resizes differ by ≤ 2 grey levels).
"""

from __future__ import annotations

import functools
import json
import os
import tempfile
import traceback
import warnings
from pathlib import Path
from typing import Any, Callable

import pytest
import numpy as np
import torch

import gpumetrics
import gpumetrics.functional as F
from tests.core.test_host_syncs import (
    B, BUDGETS, COMPUTE_BUDGETS, TINY_OPEN_CLIP, _cases, _tiled, update_for_compute,
)
from tests.helpers.meteor_jar import skip_without_meteor_data

CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="needs CUDA: run `make test-cuda` on a GPU machine")

FLOAT64_RTOL = 1e-12
FLOAT32_RTOL = 1e-3
FLOAT32_CASES = ("FrechetInception", "KernelInception", "Binary", "Multiclass", "Multilabel")
#: CLIP on uint8 images (the module cases; the AIJ image tasks read PNG files): CUDA resizes them in two rounded
#: float passes, the CPU with its uint8 kernel (≤ 2 grey levels apart: ~1e-4 on a cosine,
#: tests/cuda/test_speed_modes_cuda.py); the functional case takes float images and has the float32 bound
UINT8_CLIP_CASES = ("CLIPScore", "ImageGeneration", "ImageCaptioning", "VisualQA")
UINT8_CLIP_RTOL, UINT8_CLIP_ATOL = 1e-2, 3e-2  # atol: 3e-4 of a cosine at the modules' scale 100
TEXT = (["the cat sat on the mat", "Кошка спит", "", "a dog 🙂 runs"],
        [["a cat sat on a mat", "the cat"], ["кошка спит дома"], [""], ["dogs run"]])
FLAT_TEXT = (TEXT[0], [refs[0] for refs in TEXT[1]])
#: every text metric's ``update`` makes at most this many host syncs on CUDA (uploads go through core.transfer)
TEXT_SYNC_BUDGET = 10
TEXT_METRICS = ("TokenF1", "ExactMatch", "StringAccuracy", "VQAAccuracy", "EditDistance", "CharErrorRate",
                "WordErrorRate", "NormalizedEditSimilarity", "BLEUScore", "ROUGEScore", "CIDErScore", "METEORScore",
                "COCOCaptionScores", "CodeBLEUScore", "WordMoversDistance")


def _boxes(n: int, seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    xy = torch.rand(n, 2, generator=g, dtype=torch.float64) * 20
    return torch.cat([xy, xy + 1 + torch.rand(n, 2, generator=g, dtype=torch.float64) * 5], dim=1)


def _quads(n: int, seed: int) -> torch.Tensor:
    b = _boxes(n, seed)
    return torch.stack([b[:, [0, 1]], b[:, [2, 1]], b[:, [2, 3]], b[:, [0, 3]]], dim=1)


def _labels(kind: str, device: str) -> tuple:
    g = torch.Generator().manual_seed(7)
    shapes = {"binary": ((16,), (16,), 2), "multiclass": ((16, 4), (16,), 4), "multilabel": ((16, 3), (16, 3), 2)}
    pred_shape, target_shape, high = shapes[kind]
    return torch.rand(pred_shape, generator=g).to(device), torch.randint(0, high, target_shape, generator=g).to(device)


def _vectors() -> dict:
    words = {w for text in TEXT[0] + [r for refs in TEXT[1] for r in refs] for w in text.split()}
    return {w: [float(len(w)), float(sum(map(ord, w)) % 7), 1.0] for w in words}


@functools.lru_cache(maxsize=1)
def _tiny_clip_config() -> str:
    path = Path(tempfile.mkdtemp(prefix="gpumetrics_tiny_clip_")) / "tiny-clip.json"
    path.write_text(json.dumps(TINY_OPEN_CLIP))
    return str(path)


def _clip_images() -> torch.Tensor:
    """Float images: resized in float on both devices (uint8 has its own bound, test_speed_modes_cuda)."""
    images = torch.randint(0, 256, (4, 3, 40, 36), dtype=torch.uint8, generator=torch.Generator().manual_seed(3))
    return images.float() / 255


#: functional name → ``case(device) -> result``: the same inputs, placed on ``device`` (or scored there via ``device=``)
FUNCTIONAL_CASES: dict[str, Callable[[str], Any]] = {
    "token_f1": lambda d: F.token_f1(*TEXT, device=d),
    "exact_match": lambda d: F.exact_match(*TEXT, device=d),
    "string_accuracy": lambda d: F.string_accuracy(*FLAT_TEXT, device=d),
    "vqa_accuracy": lambda d: F.vqa_accuracy(*FLAT_TEXT, ["en", "ru", "en", "en"], device=d),
    "edit_distance": lambda d: F.edit_distance(*FLAT_TEXT, device=d),
    "char_error_rate": lambda d: F.char_error_rate(*FLAT_TEXT, device=d),
    "word_error_rate": lambda d: F.word_error_rate(*FLAT_TEXT, device=d),
    "normalized_edit_similarity": lambda d: F.normalized_edit_similarity(*TEXT, device=d),
    "frechet_distance": lambda d: F.frechet_distance(*(t.to(d) for t in (
        torch.zeros(3, dtype=torch.float64), torch.eye(3, dtype=torch.float64) * 2,
        torch.ones(3, dtype=torch.float64), torch.eye(3, dtype=torch.float64)))),
    "feature_statistics": lambda d: F.feature_statistics(
        torch.rand(8, 3, generator=torch.Generator().manual_seed(0), dtype=torch.float64).to(d)),
    "kernel_inception_distance": lambda d: F.kernel_inception_distance(
        *(torch.rand(12, 4, generator=torch.Generator().manual_seed(s), dtype=torch.float64).to(d) for s in (1, 2)),
        subsets=3, subset_size=5),
    "clip_score": lambda d: F.clip_score(_clip_images(), ["a cat", "Кошка спит", "", "🙂"], "open_clip",
                                         _tiny_clip_config(), "random", scale=1, reduction="none", device=d),
    "bleu_score": lambda d: F.bleu_score(*TEXT, device=d),
    "rouge_score": lambda d: F.rouge_score(*TEXT, device=d),
    "cider_score": lambda d: F.cider_score(*TEXT, device=d),
    "meteor_score": lambda d: F.meteor_score(*TEXT, device=d),
    "codebleu_score": lambda d: F.codebleu_score(["def f(a):\n    return a + 1\n"], [["def g(b):\n    return b + 1\n"]],
                                                 language="python", device=d),
    "word_movers_distance": lambda d: F.word_movers_distance(*FLAT_TEXT, embeddings=_vectors(), device=d),
    "coco_caption_scores": lambda d: F.coco_caption_scores(*TEXT, device=d),
    "box_iou": lambda d: F.box_iou(_boxes(5, 1).to(d), _boxes(4, 2).to(d)),
    "box_iou_paired": lambda d: F.box_iou_paired(_boxes(5, 1).to(d), _boxes(5, 2).to(d)),
    "polygon_iou": lambda d: F.polygon_iou(_quads(5, 1).to(d), _quads(4, 2).to(d)),
    "polygon_iou_paired": lambda d: F.polygon_iou_paired(_quads(5, 1).to(d), _quads(5, 2).to(d)),
    "ocr_end_to_end": lambda d: F.ocr_end_to_end([_quads(3, 1).to(d)], [["a", "b", "c"]], [_quads(3, 1).to(d)],
                                                 [["a", "x", "c"]]),
    "zero_shot_detection_f1": lambda d: F.zero_shot_detection_f1(
        [{"cat": _boxes(2, 3).to(d)}], [{"cat": _boxes(2, 3).to(d)}]),
    **{f"{kind}_{stat}": (lambda d, kind=kind, stat=stat: getattr(F, f"{kind}_{stat}")(
        *_labels(kind, d), **({"num_classes": 4} if kind == "multiclass" else {"num_labels": 3} if kind == "multilabel"
                              else {})))
       for kind in ("binary", "multiclass", "multilabel") for stat in ("precision", "recall", "f1_score")},
    "ranking_metrics": lambda d: F.ranking_metrics(
        torch.tensor([[3.0, 1.0, 2.0, 2.0], [0.5, 0.1, 0.9, 0.2]], dtype=torch.float64).to(d),
        torch.tensor([[1, 0, 2, 0], [0, 0, 1, 1]]).to(d), metrics=["ndcg@3", "map", "mrr"]),
    "shapley_values": lambda d: F.shapley_values(lambda s: s.double().sum(-1) ** 2, 4, device=d),
    "marginal_contributions": lambda d: F.marginal_contributions(lambda s: s.double().sum(-1) ** 2, 4, 2, device=d),
    "corpus_bleu_shapley": lambda d: F.corpus_bleu_shapley(*FLAT_TEXT, device=d),
    "corpus_cider_shapley": lambda d: F.corpus_cider_shapley(*TEXT, device=d),
}


def test_every_functional_export_has_a_device_case():
    assert set(FUNCTIONAL_CASES) == set(F.__all__), (
        f"missing: {sorted(set(F.__all__) - set(FUNCTIONAL_CASES))}; "
        f"stale: {sorted(set(FUNCTIONAL_CASES) - set(F.__all__))}"
    )


def test_every_exported_module_has_a_device_case(tmp_path):
    names = {name.split("(")[0] for name in _cases(tmp_path)}
    exported = {name for name in gpumetrics.__all__
                if isinstance(getattr(gpumetrics, name), type)
                and issubclass(getattr(gpumetrics, name), gpumetrics.Metric)
                and name != "Metric"}
    assert exported <= names, f"no device case for {sorted(exported - names)}"


@pytest.mark.parametrize("name", sorted(n for n, case in FUNCTIONAL_CASES.items() if case is not None))
def test_functional_case_runs_on_the_cpu(name):
    """The CPU half of every parity pair: keeps the list valid where no GPU is (CPU CI)."""
    _flatten(FUNCTIONAL_CASES[name]("cpu"))


def _flatten(value: Any) -> list[torch.Tensor]:
    """Every tensor of a result (tensor, dict, tuple, list, dataclass-like), as float64 CPU tensors in a fixed order."""
    if isinstance(value, torch.Tensor):
        return [value.detach().to("cpu", torch.float64)]
    if isinstance(value, dict):
        return [t for key in sorted(value, key=str) for t in _flatten(value[key])]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _flatten(item)]
    if isinstance(value, (int, float)):
        return [torch.tensor(float(value), dtype=torch.float64)]
    if hasattr(value, "__dict__"):
        return _flatten(vars(value))
    return []


def _assert_close(cpu: Any, cuda: Any, rtol: float, what: str, atol: float = 0.0) -> None:
    """Every tensor of the two results within ``rtol`` relative, past an absolute slack ``atol``."""
    a, b = _flatten(cpu), _flatten(cuda)
    assert len(a) == len(b) and a, what
    for x, y in zip(a, b):
        assert x.shape == y.shape, what
        both_nan = torch.isnan(x) & torch.isnan(y)
        scale = torch.maximum(x.abs(), y.abs()).clamp(min=1e-300)
        excess = ((x - y).abs() - atol).clamp(min=0)
        diff = torch.where(both_nan | (x == y), torch.zeros_like(x), excess / scale)
        assert float(diff.max()) <= rtol, f"{what}: relative difference {float(diff.max()):.3g} > {rtol:g}"


@pytest.mark.cuda
@needs_cuda
@pytest.mark.parametrize("name", sorted(n for n, case in FUNCTIONAL_CASES.items() if case is not None))
def test_functional_equals_cpu_on_cuda(name):
    skip_without_meteor_data(name)
    case = FUNCTIONAL_CASES[name]
    rtol = FLOAT32_RTOL if name.startswith(("binary", "multiclass", "multilabel", "clip_score")) else FLOAT64_RTOL
    _assert_close(case("cpu"), case("cuda"), rtol, name)


def _to_device(value: Any, device: str) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, list):
        return [_to_device(v, device) for v in value]
    if isinstance(value, tuple):
        return tuple(_to_device(v, device) for v in value)
    if isinstance(value, dict):
        return {k: _to_device(v, device) for k, v in value.items()}
    return value


@pytest.fixture(scope="module")
def module_cases(tmp_path_factory):
    return _cases(tmp_path_factory.mktemp("cuda"))


@pytest.mark.cuda
@needs_cuda
@pytest.mark.parametrize("inputs_on", ["cpu", "cuda"])
@pytest.mark.parametrize("name", sorted(BUDGETS))
def test_module_equals_cpu_on_cuda_with_states_on_the_device(module_cases, name, inputs_on):
    skip_without_meteor_data(name)
    make, batch = module_cases[name]
    samples = batch(B)
    results = {}
    for device in ("cpu", "cuda"):
        metric = make().to(device)
        args = _to_device(samples, inputs_on if device == "cuda" else "cpu")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # tiny samples: FID's rank-deficiency warnings
            update_for_compute(name, metric, args)
            results[device] = metric.compute()
        if device == "cuda":
            for state in metric._defaults:
                value = getattr(metric, state)
                for tensor in value if isinstance(value, list) else [value]:
                    assert tensor.device.type == "cuda", f"{name}: state {state} on {tensor.device}"
    if name.startswith(UINT8_CLIP_CASES):
        _assert_close(results["cpu"], results["cuda"], UINT8_CLIP_RTOL, name, atol=UINT8_CLIP_ATOL)
    else:
        rtol = FLOAT32_RTOL if name.startswith(FLOAT32_CASES) else FLOAT64_RTOL
        _assert_close(results["cpu"], results["cuda"], rtol, name)


#: a one-time lazy initialisation on a metric's first use — the pinned host pool, cuBLAS/cuSOLVER handles, CUDA's
#: lazy module loading, a cache of ours — is no per-update (or per-compute) cost, yet it can synchronise; the sync
#: tests therefore run one fresh instance on the same inputs first (its syncs are printed, not bounded), then count
_PACKAGE_DIR = str(Path(gpumetrics.__file__).resolve().parent)
#: how many of the innermost package frames a sync site names
SITE_FRAMES = 3


def _site(stack: list[traceback.FrameSummary], filename: str, lineno: int, package_dir: str = _PACKAGE_DIR) -> str:
    """Where a warning was raised: the innermost ``SITE_FRAMES`` frames of ``stack`` inside ``package_dir`` (innermost
    first, ``gpumetrics/text/bleu.py:120 in _update < gpumetrics/core/metric.py:310 in update``), then the frame the
    warning is attributed to (a torch-internal or a test frame, often) when it is none of those; that frame alone when
    no frame is in the package."""
    parent = os.path.dirname(package_dir)
    ours, innermost = [], None
    for frame in reversed(stack):
        path = os.path.realpath(frame.filename)
        if path.startswith(package_dir + os.sep):
            innermost = innermost or (path, frame.lineno)
            ours.append(f"{os.path.relpath(path, parent)}:{frame.lineno} in {frame.name}")
            if len(ours) == SITE_FRAMES:
                break
    warned = f"{_short(filename)}:{lineno}"
    if not ours:
        return warned
    named = " < ".join(ours)
    return named if innermost == (os.path.realpath(filename), lineno) else f"{named} [warned at {warned}]"


def _short(filename: str) -> str:
    """A file from its package on (``torch/_tensor.py``), else as given."""
    parts = Path(filename).parts
    for root in ("site-packages", "dist-packages"):
        if root in parts:
            return "/".join(parts[parts.index(root) + 1:])
    return filename


def _warning_sites(call: Callable[[], Any], match: str, package_dir: str = _PACKAGE_DIR) -> list[str]:
    """``call()``, and the site (:func:`_site`) of every warning whose message contains ``match``, in order.

    Warnings torch raises in C++ reach Python when the op returns, attributed to the calling Python frame; a
    ``warnings.showwarning`` hook sees them there, with the Python stack of that moment (``traceback.extract_stack``),
    so the frames inside the package name the line that made the op."""
    sites: list[str] = []

    def record(message, category, filename, lineno, file=None, line=None):
        if match in str(message):
            sites.append(_site(traceback.extract_stack()[:-1], filename, lineno, package_dir))

    with warnings.catch_warnings():  # restores showwarning and the filters on exit
        warnings.simplefilter("always")
        warnings.showwarning = record
        call()
    return sites


def test_warning_sites_name_the_package_frames_of_a_cpp_warning(tmp_path, monkeypatch):
    """The CPU check of the sync sites: a warning torch raises in C++ (``x.T`` of a 3-D tensor) reaches the hook with
    the package's frames on the stack, innermost first."""
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "mod.py").write_text("import torch\n\n\ndef inner():\n    return torch.ones(2, 2, 2).T\n\n\n"
                                    "def outer():\n    return inner()\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from pkg import mod

    always = torch._C._get_warnAlways()
    torch._C._set_warnAlways(True)  # x.T warns once per process otherwise
    try:
        sites = _warning_sites(lambda: (mod.outer(), mod.outer(), torch.ones(2, 2, 2).T), "x.T",
                               str(package.resolve()))
    finally:
        torch._C._set_warnAlways(always)
    assert sites[:2] == ["pkg/mod.py:5 in inner < pkg/mod.py:9 in outer"] * 2
    assert len(sites) == 3 and sites[2].startswith(f"{__file__}:")  # no package frame: the attributed one


def _counted_cuda_syncs(call: Callable[[], Any]) -> list[str]:
    """The host synchronisations of ``call()`` on CUDA, as ``torch.cuda.set_sync_debug_mode`` reports them: one site
    (:func:`_site`, e.g. ``gpumetrics/core/transfer.py:88 in upload < …``) per sync; ``len`` counts them."""
    torch.cuda.synchronize()

    def counted():
        torch.cuda.set_sync_debug_mode("warn")
        try:
            call()
        finally:
            torch.cuda.set_sync_debug_mode(0)

    return _warning_sites(counted, "synchroniz")


def _cuda_syncs(make: Callable[[], Any], args: tuple) -> list[str]:
    """The sites of the host synchronisations of one ``update`` on CUDA (a fresh instance)."""
    metric = make().to("cuda")
    args = _to_device(args, "cuda")
    return _counted_cuda_syncs(lambda: metric.update(*args))


def _sites_report(what: str, sites: list[str]) -> str:
    """``what: N`` then one indented ``sync @ site`` line per sync (gpu_session.sh greps ``sync @``)."""
    return "\n".join([f"  {what}: {len(sites)}"] + [f"    sync @ {site}" for site in sites])


@pytest.mark.cuda
@needs_cuda
@pytest.mark.parametrize("name", sorted(BUDGETS))
def test_cuda_host_syncs_per_update_do_not_grow_with_the_batch(module_cases, name):
    skip_without_meteor_data(name)
    make, batch = module_cases[name]
    samples = batch(B)
    warm_up = _cuda_syncs(make, samples)  # a separate fresh instance, same inputs: the one-time initialisations
    small, large = _cuda_syncs(make, samples), _cuda_syncs(make, _tiled(samples, 4))
    report = "\n".join([_sites_report(f"warm-up ({B} samples, not counted)", warm_up),
                        _sites_report(f"{B} samples", small), _sites_report(f"{4 * B} samples", large)])
    print(f"\n{name}: {len(small)} CUDA host syncs per update\n{report}")
    assert len(small) == len(large), f"{name}: {len(small)} syncs for {B} samples, {len(large)} for {4 * B}\n{report}"
    if name.startswith(TEXT_METRICS):
        assert len(small) <= TEXT_SYNC_BUDGET, \
            f"{name}: {len(small)} CUDA host syncs per update, budget {TEXT_SYNC_BUDGET}\n{report}"


def _cuda_compute_syncs(name: str, make: Callable[[], Any], args: tuple) -> list[str]:
    """The sites of the host synchronisations of one ``compute`` on CUDA after ``update_for_compute`` (a fresh
    instance)."""
    metric = make().to("cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        update_for_compute(name, metric, _to_device(args, "cuda"))
    return _counted_cuda_syncs(metric.compute)  # other warnings (FID's rank deficiency) are neither shown nor counted


@pytest.mark.cuda
@needs_cuda
@pytest.mark.parametrize("name", sorted(BUDGETS))
def test_cuda_host_syncs_per_compute(module_cases, name):
    """0 where nothing needs the host (``COMPUTE_BUDGETS``: the metrics whose compute raises or warns on values);
    the same for B and 4·B samples everywhere."""
    skip_without_meteor_data(name)
    make, batch = module_cases[name]
    samples = batch(B)
    warm_up = _cuda_compute_syncs(name, make, samples)  # a separate fresh instance first: one-time initialisations
    small, large = _cuda_compute_syncs(name, make, samples), _cuda_compute_syncs(name, make, _tiled(samples, 4))
    report = "\n".join([_sites_report(f"warm-up ({B} samples, not counted)", warm_up),
                        _sites_report(f"{B} samples", small), _sites_report(f"{4 * B} samples", large)])
    print(f"\n{name}: {len(small)} CUDA host syncs per compute\n{report}")
    assert len(small) == len(large), \
        f"{name}: {len(small)} syncs per compute for {B} samples, {len(large)} for {4 * B}\n{report}"
    if COMPUTE_BUDGETS.get(name, 0) == 0:
        assert not small, f"{name}: {len(small)} CUDA host syncs in compute, where nothing needs the host\n{report}"


@pytest.mark.cuda
@needs_cuda
def test_upload_does_not_synchronise():
    from gpumetrics.core.transfer import upload, upload_all, upload_concatenated

    busy = torch.randn(2048, 2048, device="cuda")
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        busy @ busy  # queued work the uploads must not wait for
        one = upload(torch.arange(1000), "cuda")
        parts = upload_all([torch.arange(3), torch.ones(2, 2, dtype=torch.int64)], "cuda")
        arrays = upload_all([np.arange(3), np.ones((2, 2), dtype=np.int64)], "cuda")  # staged in pinned memory
        blocks = upload_concatenated([np.array([1, 255], np.uint8), np.array([0xFFFF], np.uint16)], "cuda")
    finally:
        torch.cuda.set_sync_debug_mode(0)
    assert one.device.type == "cuda" and one.sum().item() == 499500
    assert parts[1].tolist() == [[1, 1], [1, 1]] and arrays[1].tolist() == [[1, 1], [1, 1]]
    assert blocks.device.type == "cuda" and (blocks.int() & 0xFFFF).tolist() == [1, 255, 0xFFFF]


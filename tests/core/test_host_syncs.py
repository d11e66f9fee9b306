"""GPU readiness without a GPU: host↔device synchronisations per ``update`` do not grow with the batch.

For every module class of the package (the same discovery as ``tests/test_empty_input.py``), ``update`` runs once on
a batch of B samples and once on the same samples four times over (4·B), inside
:class:`tests.helpers.syncs.SyncCounter`. Each op kind must be counted the same number of times for both batches, and
the total must stay within the metric's budget below: today's measured count (``pytest -s`` prints the table), so a
change that adds a sync fails here and must either remove it again or raise the budget with a reason.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest
import torch
from PIL import Image
from torch.utils._python_dispatch import TorchDispatchMode

import gpumetrics
import gpumetrics.classification as C
from gpumetrics.suites.captioning import ImageCaptioningScore, VisualQAScore
from gpumetrics.suites.image import ImageGenerationScore
from tests.helpers.syncs import SyncCounter
from tests.test_empty_input import _module_classes

TINY_OPEN_CLIP = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 16, "head_width": 16},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}
_WORDS = ["the", "cat", "sat", "on", "mat", "Кошка", "спит", "鳥", "🙂", "a", "dog", "3", ",", "."]
B = 4


def _sentence(rng: random.Random, length: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(length))


def _text(n: int, single_ref: bool = False) -> tuple:
    rng = random.Random(n)
    refs = [[_sentence(rng, 2 + i % B), _sentence(rng, 4)] for i in range(n)]  # one length pattern for B and 4·B
    # every B samples one prediction repeats its first reference, so every n-gram order has matches
    preds = [refs[i][0] if i % B == 0 else _sentence(rng, 3 + i % B) for i in range(n)]
    return preds, [r[0] for r in refs] if single_ref else refs


def _strings(n: int) -> tuple:
    """``n`` prediction / reference strings whose lengths repeat every B samples (the kernel's steps follow them)."""
    rng = random.Random(n)
    letters = "abcdeкошка鳥🙂"
    target = ["".join(rng.choice(letters) for _ in range(4 + 3 * (i % B))) for i in range(n)]
    preds = ["".join(rng.choice(letters) for _ in range(2 + 5 * (i % B))) for i in range(n)]
    return preds, target


def _tokens(n: int) -> tuple:
    """``_strings(n)`` as padded code-point tensors with their lengths: ``(preds[B, L], target[B, L'], lengths…)``."""
    from gpumetrics.kernels.text_rows import encode_chars

    (preds, preds_lengths), (target, target_lengths) = (encode_chars(side) for side in _strings(n))
    return preds, target, preds_lengths, target_lengths


def _padded_tokens(n: int) -> tuple:
    """``_strings(n)`` as code-point tensors padded with ``pad_id=0`` (``EditDistance(pad_id=0)``)."""
    return _tokens(n)[:2]


def _flat_tokens(n: int) -> tuple:
    """``_strings(n)`` as flat code points + lengths of each side (tiling concatenates rows, as Ragged needs)."""
    from gpumetrics.kernels.text_rows import encode_chars_ragged

    (pv, po), (tv, to) = (encode_chars_ragged(side) for side in _strings(n))
    return pv, po.diff(), tv, to.diff()


class _RaggedInputs:
    """``update(values, lengths, values, lengths)`` → ``metric.update(Ragged, Ragged)`` (offsets by a cumsum, no
    sync), so the flat layout tiles like any tensor."""

    def __init__(self, metric: Any) -> None:
        self.metric = metric

    def update(self, pv: torch.Tensor, pl: torch.Tensor, tv: torch.Tensor, tl: torch.Tensor) -> None:
        from gpumetrics.core.threads import intra_op_threads
        from gpumetrics.kernels.ragged import Ragged

        with intra_op_threads(1):  # the adapter's cumsums run as the metric's own ops would
            preds, target = Ragged.from_lengths(pv, pl), Ragged.from_lengths(tv, tl)
        self.metric.update(preds, target)

    def compute(self) -> Any:
        return self.metric.compute()

    def to(self, *args: Any, **kwargs: Any) -> "_RaggedInputs":
        self.metric.to(*args, **kwargs)
        return self

    def __getattr__(self, name: str) -> Any:  # the wrapped module's states and ``_defaults`` (CUDA parity tests)
        if name == "metric":
            raise AttributeError(name)
        return getattr(self.metric, name)


def _boxes(g: torch.Generator, n: int) -> torch.Tensor:
    xy = torch.rand(n, 2, generator=g) * 20
    return torch.cat([xy, xy + 1 + torch.rand(n, 2, generator=g) * 5], dim=1)


def _ocr(n: int) -> tuple:
    g = torch.Generator().manual_seed(n)
    gts = [_boxes(g, 3) for _ in range(n)]
    quads = [torch.stack([b[:, [0, 1]], b[:, [2, 1]], b[:, [2, 3]], b[:, [0, 3]]], dim=1) for b in gts]
    preds = [q + 0.3 * torch.rand(q.shape, generator=g) for q in quads]
    texts = [["w0", "w1", "w2"] for _ in range(n)]
    return preds, [t[::-1] for t in texts], quads, texts


def _zsd(n: int) -> tuple:
    g = torch.Generator().manual_seed(n)
    preds, target = [], []
    for _ in range(n):
        boxes = _boxes(g, 3)
        xywh = torch.cat([boxes[:, :2], boxes[:, 2:] - boxes[:, :2]], dim=1)
        preds.append({"cat": xywh[:2], "dog": xywh[2:] + 1})
        target.append({"cat": xywh[:1], "dog": xywh[2:]})
    return preds, target


def _images(n: int) -> torch.Tensor:
    return (torch.rand(n, 3, 24, 20, generator=torch.Generator().manual_seed(n)) * 255).to(torch.uint8)


def _labels(kind: str, n: int) -> tuple:
    g = torch.Generator().manual_seed(n)
    if kind == "binary":
        return torch.rand(n, generator=g), torch.randint(0, 2, (n,), generator=g)
    if kind == "multiclass":
        return torch.rand(n, 4, generator=g), torch.randint(0, 4, (n,), generator=g)
    return torch.rand(n, 3, generator=g), torch.randint(0, 2, (n, 3), generator=g)


def _ranking(n: int) -> tuple:
    """``n`` queries × 8 documents, every B queries the same (tiling repeats the pattern)."""
    g = torch.Generator().manual_seed(0)
    scores, relevance = torch.randint(0, 4, (B, 8), generator=g).double(), torch.randint(0, 3, (B, 8), generator=g)
    return scores.repeat(n // B, 1), relevance.repeat(n // B, 1)


def _ranking_flat(n: int) -> tuple:
    scores, relevance = _ranking(n)
    return scores.reshape(-1), relevance.reshape(-1), None, None, None, torch.arange(n).repeat_interleave(8)


def _clip_config(tmp: Path) -> str:
    path = tmp / "tiny-clip.json"
    path.write_text(json.dumps(TINY_OPEN_CLIP))
    return str(path)


def _image_task(tmp: Path) -> tuple[Callable[[], Any], Callable[[int], tuple]]:
    pixels = torch.randint(0, 256, (4 * B, 20, 24, 3), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))
    for i in range(4 * B):
        Image.fromarray(pixels[i].numpy()).save(tmp / f"{i}.png")
    real = tmp / "real.npz"
    np.savez(real, mu=np.zeros(64), sigma=np.eye(64))
    options = {"real": str(real), "image_root": str(tmp), "fid_feature": 64, "inception_weights": "random",
               "clip_backend": "open_clip", "clip_model": _clip_config(tmp), "clip_pretrained": "random"}
    return lambda: ImageGenerationScore(**options), lambda n: ([f"{i}.png" for i in range(n)], ["a cat"] * n)


def _code(n: int) -> tuple:
    programs = ["def f(a):\n    b = a + 1\n    return b\n", "x = [i * 2 for i in range(3)]\n", "y = 1\n", ""]
    return [programs[i % B] for i in range(n)], [[programs[(i + 1) % B], programs[i % B]] for i in range(n)]


def _warm_meteor() -> Any:
    from gpumetrics.text.meteor import tables

    tables.paraphrase_table()  # loaded once per process (one sync then), not per update
    return gpumetrics.METEORScore()


def _caption_task(tmp: Path, cls: type) -> tuple[Callable[[], Any], Callable[[int], tuple]]:
    pixels = torch.randint(0, 256, (4 * B, 20, 24, 3), dtype=torch.uint8, generator=torch.Generator().manual_seed(1))
    for i in range(4 * B):
        Image.fromarray(pixels[i].numpy()).save(tmp / f"c{i}.png")
    options = {"image_root": str(tmp), "synonyms": {"cat": ["dog"]}, "clip_backend": "open_clip",
               "clip_model": _clip_config(tmp), "clip_pretrained": "random"}
    return lambda: cls(**options), lambda n: ([f"c{i}.png" for i in range(n)], *_text(n))


def update_for_compute(name: str, metric: Any, args: tuple) -> None:
    """``metric.update(*args)`` of a case, plus the other side for FID and KID (their ``compute`` needs real and
    generated samples): the inverted images."""
    metric.update(*args)
    if name.startswith(("FrechetInceptionDistance", "KernelInceptionDistance")):
        images, real = args
        metric.update(255 - images, real=not real)


def _cases(tmp: Path) -> dict[str, tuple[Callable[[], Any], Callable[[int], tuple]]]:
    """name → (make_metric, batch(n) → update arguments)."""
    cases = {
        "TokenF1": (lambda: gpumetrics.TokenF1(preset="squad"), _text),
        "ExactMatch": (lambda: gpumetrics.ExactMatch(preset="squad"), _text),
        "StringAccuracy": (gpumetrics.StringAccuracy, lambda n: _text(n, single_ref=True)),
        "VQAAccuracy": (gpumetrics.VQAAccuracy, lambda n: (*_text(n, single_ref=True), ["en", "ru"] * (n // 2))),
        "EditDistance": (gpumetrics.EditDistance, lambda n: _text(n, single_ref=True)),
        "EditDistance(torch)": (lambda: gpumetrics.EditDistance(backend="torch"), _strings),
        "EditDistance(torch, long)": (lambda: gpumetrics.EditDistance(backend="torch"),
                                      lambda n: tuple([s * 4 for s in side] for side in _strings(n))),
        # token tensors: the device kernels (backend="torch"; CPU tensors under "auto" go to rapidfuzz on the host)
        "EditDistance(tokens)": (lambda: gpumetrics.EditDistance(backend="torch"), _tokens),
        "EditDistance(tokens, pad_id)": (lambda: gpumetrics.EditDistance(pad_id=0, backend="torch"), _padded_tokens),
        "EditDistance(ragged)": (lambda: _RaggedInputs(gpumetrics.EditDistance(backend="torch")), _flat_tokens),
        "CharErrorRate(tokens)": (lambda: gpumetrics.CharErrorRate(backend="torch"), _tokens),
        "WordErrorRate(torch)": (lambda: gpumetrics.WordErrorRate(backend="torch"), lambda n: _text(n, True)),
        "NormalizedEditSimilarity(tokens)": (lambda: gpumetrics.NormalizedEditSimilarity(backend="torch"), _tokens),
        "CharErrorRate": (gpumetrics.CharErrorRate, lambda n: _text(n, single_ref=True)),
        "WordErrorRate": (gpumetrics.WordErrorRate, lambda n: _text(n, single_ref=True)),
        "NormalizedEditSimilarity": (gpumetrics.NormalizedEditSimilarity, lambda n: _text(n, single_ref=True)),
        "BLEUScore": (gpumetrics.BLEUScore, _text),
        "BLEUScore(nltk)": (lambda: gpumetrics.BLEUScore(mode="nltk", reduction="none"), _text),
        "ROUGEScore": (lambda: gpumetrics.ROUGEScore(rouge_keys=("rouge1", "rouge2", "rougeL", "rougeLsum")), _text),
        "CIDErScore": (lambda: gpumetrics.CIDErScore(tokenize="none"), _text),
        "OCREndToEnd": (gpumetrics.OCREndToEnd, _ocr),
        "OCREndToEnd(icdar15)": (lambda: gpumetrics.OCREndToEnd(matching="icdar15"), _ocr),
        "ZeroShotDetectionF1": (gpumetrics.ZeroShotDetectionF1, _zsd),
        "ZeroShotDetectionF1(strict)": (lambda: gpumetrics.ZeroShotDetectionF1(preset="strict"), _zsd),
        "FrechetInceptionDistance": (lambda: gpumetrics.FrechetInceptionDistance(feature=64, weights="random"),
                                     lambda n: (_images(n), True)),
        "KernelInceptionDistance": (lambda: gpumetrics.KernelInceptionDistance(feature=64, weights="random",
                                                                               subsets=3, subset_size=2),
                                    lambda n: (_images(n), False)),
        "CLIPScore": (lambda: gpumetrics.CLIPScore("open_clip", _clip_config(tmp), pretrained="random"),
                      lambda n: (_images(n), ["a cat on a mat"] * n)),
        "ImageGenerationScore": _image_task(tmp),
        "METEORScore": (_warm_meteor, _text),
        "COCOCaptionScores": (lambda: (_warm_meteor(), gpumetrics.COCOCaptionScores())[1], _text),
        "CodeBLEUScore": (lambda: gpumetrics.CodeBLEUScore(language="python"), _code),
        "METEORScore(nltk)": (lambda: gpumetrics.METEORScore(mode="nltk", synonyms={"cat": ["dog"]}), _text),
        "ImageCaptioningScore": _caption_task(tmp, ImageCaptioningScore),
        "VisualQAScore": _caption_task(tmp, VisualQAScore),
    }
    vectors = {w: [float(len(w)), float(sum(map(ord, w)) % 7), 1.0] for w in _WORDS}
    cases["WordMoversDistance"] = (lambda: gpumetrics.WordMoversDistance(vectors), lambda n: _text(n, single_ref=True))
    cases["WordMoversDistance(sinkhorn)"] = (lambda: gpumetrics.WordMoversDistance(vectors, "sinkhorn", max_iter=40),
                                             lambda n: _text(n, single_ref=True))
    cases["RankingMetrics"] = (lambda: gpumetrics.RankingMetrics(["ndcg@10", "map", "mrr", "recall@5"]), _ranking)
    cases["RankingMetrics(flat)"] = (lambda: gpumetrics.RankingMetrics(["ndcg@10", "map"]), _ranking_flat)
    for kind, extra in (("Binary", {}), ("Multiclass", {"num_classes": 4}), ("Multilabel", {"num_labels": 3})):
        for stat in ("Precision", "Recall", "F1Score"):
            cls = getattr(C, f"{kind}{stat}")
            cases[cls.__name__] = (lambda cls=cls, extra=extra: cls(**extra), lambda n, k=kind.lower(): _labels(k, n))
    return cases


#: metric → most host syncs one ``update`` may make (measured; the same for B and 4·B samples). CPU-only backends
#: (rapidfuzz for edit distance / CER / WER on CPU) make none; on a GPU ``backend="auto"`` is the tensor kernel.
BUDGETS = {
    "TokenF1": 0, "ExactMatch": 0, "StringAccuracy": 0, "VQAAccuracy": 0,  # sizes from the host tokens, sort-based bags
    "EditDistance": 0, "CharErrorRate": 0, "WordErrorRate": 0, "NormalizedEditSimilarity": 0,
    # tensor kernel (token tensors, or backend="torch"): ONE host read (the checks' bounds with the common-affix-
    # stripped lengths it plans its chunks from) and one `unique` per chunk (counted: cpu + numpy + unique = 3);
    # the same for 4x longer strings (the step loop reads nothing). Ragged inputs read the bounds with the 2·B
    # lengths first (their padded widths): +2. One chunk per max_elements (2**24) values of work. On CUDA with
    # triton: one read (checks) or none (strings)
    "EditDistance(torch)": 3, "EditDistance(torch, long)": 3, "WordErrorRate(torch)": 3,
    "EditDistance(tokens)": 3, "EditDistance(tokens, pad_id)": 3, "EditDistance(ragged)": 5,
    "CharErrorRate(tokens)": 3, "NormalizedEditSimilarity(tokens)": 3,
    # the pruned positions (nonzero) of each order after the first: at most N-1 = 3, here 2 (no trigram is left)
    "BLEUScore": 2, "BLEUScore(nltk)": 2,
    "ROUGEScore": 0,  # sizes, ROUGE-Lsum's line layout and widths from the host tokenizer; sort-ranked n-gram ids
    "CIDErScore": 0,  # predictions and references are encoded apart (no split to size); scoring is in compute
    # OCR: one read of the sizes with the coordinate checks, the overlapping pairs (nonzero); icdar15: + the sizes of
    # its greedy steps (the steps read nothing), whatever the boxes per image, images or ground-truth positions
    "OCREndToEnd": 2, "OCREndToEnd(icdar15)": 3,
    # one box check for both sides, IoU's coordinate check, the pairs above the IoU threshold (nonzero of a dense
    # per-group block); strict: its greedy rounds bounded by host sizes (groups of ≤ 4 boxes a side: one burst, no
    # read; crowded ones + a read a burst)
    "ZeroShotDetectionF1": 3, "ZeroShotDetectionF1(strict)": 3,
    "FrechetInceptionDistance": 0, "KernelInceptionDistance": 0, "CLIPScore": 0, "ImageGenerationScore": 0,
    # METEOR 1.5: matchers, beam search and pair statistics are host work in numpy (value-sized joins and a loop over
    # reference positions: every step would be a sync on a GPU); the float64[P, 23] statistics go up in one
    # non-blocking upload_all, scores and best reference on the device: none, whatever the lengths
    "METEORScore": 0,
    "COCOCaptionScores": 2,  # METEOR 1.5 as above (none), BLEU's pruned positions (2)
    "CodeBLEUScore": 3,  # the pruned positions of n-gram orders 2-4 (AST and data-flow keys: host sizes)
    "METEORScore(nltk)": 0, "ImageCaptioningScore": 0, "VisualQAScore": 0,  # NLTK-style alignment is host work
    # the one read of every input check (classification/stat_scores.py: label ranges, finite scores); the counts are
    # device work (the logits test of binary / multilabel scores is a torch.where, not a read)
    **{f"{kind}{stat}": 1 for kind in ("Binary", "Multiclass", "Multilabel")
       for stat in ("Precision", "Recall", "F1Score")},
    # ranking: one read of every value check of the batch; flat inputs add the grouping (unique, padded width)
    "RankingMetrics": 1, "RankingMetrics(flat)": 3,
    # WMD: bags of words, padding and the empty / one-word pairs are numpy work on the host. Exact EMD: POT solves
    # on the CPU, so the whole pair stays there (the counted read is the host cost matrix handed to POT: no device),
    # one upload of the distances; Sinkhorn: the pairs left to solve (nonzero), its kernel-or-log choice and one
    # convergence read every 10 iterations on the CPU (4 at max_iter=40; on a GPU at iterations 20, 40, 80 …: 1),
    # and when max_iter ends the iteration the check for a plan far off its marginals (one read, warned)
    "WordMoversDistance": 1, "WordMoversDistance(sinkhorn)": 7,
}


@pytest.fixture(scope="module")
def cases(tmp_path_factory) -> dict:
    return _cases(tmp_path_factory.mktemp("syncs"))


def _count(make: Callable[[], Any], args: tuple) -> SyncCounter:
    metric = make()
    with SyncCounter() as counter:
        metric.update(*args)
    return counter


def test_every_module_class_has_a_case(cases) -> None:
    names = {cls.__name__ for cls in _module_classes()}
    missing = names - {name.split("(")[0] for name in cases}
    assert not missing, f"no host-sync case for {sorted(missing)}"
    assert set(cases) == set(BUDGETS)


def _tiled(value: Any, times: int) -> Any:
    """The same samples ``times`` over: lists repeated, tensors concatenated on dim 0 (flags left alone)."""
    if isinstance(value, torch.Tensor):
        return torch.cat([value] * times)
    if isinstance(value, list):
        return value * times
    if isinstance(value, tuple):
        return tuple(_tiled(v, times) for v in value)
    return value


@pytest.mark.parametrize("name", sorted(BUDGETS))
def test_host_syncs_per_update_do_not_grow_with_the_batch(cases, name) -> None:
    make, batch = cases[name]
    samples = batch(B)  # 4·B samples are the same B four times: only per-sample host work can change the count
    small, large = _count(make, samples), _count(make, _tiled(samples, 4))
    print(f"\n{name}: {small.total} per update {dict(sorted(small.counts.items()))}")
    assert dict(large.counts) == dict(small.counts), f"{name}: {dict(small.counts)} for {B} samples, " \
                                                     f"{dict(large.counts)} for {4 * B}"
    assert small.total <= BUDGETS[name], f"{name}: {small.total} host syncs per update, budget {BUDGETS[name]}"


#: metric → most host syncs one ``compute`` may make (same for B and 4·B samples); every other case: 0. Each one
#: is a value the host needs: an error or a warning to raise, a size to allocate
COMPUTE_BUDGETS = {
    "CIDErScore": 2,  # the hashed-token collision check, one read of the corpus sizes (largest reference set, n-grams)
    "COCOCaptionScores": 2,  # CIDEr-D's two
    "CLIPScore": 1, "ImageCaptioningScore": 1, "VisualQAScore": 1,  # "no samples" is an error: the count is read
    "CodeBLEUScore": 1,  # the warning when samples have no data-flow edges
    "KernelInceptionDistance": 1,  # the non-finite check of the subset values
    # per side: its count, the finite check, the precision warning (mean ≫ spread); one Cholesky status per side;
    # the result against its rounding bound (a tiny negative value is clamped to 0, a large one is an error)
    "FrechetInceptionDistance": 9,
    "ImageGenerationScore": 11,  # FID's 9 (a loaded real side: its own checks), the real-side test, the CLIP count
}


@pytest.mark.parametrize("name", sorted(BUDGETS))
def test_host_syncs_per_compute_do_not_grow_with_the_corpus(cases, name) -> None:
    make, batch = cases[name]
    samples, counts = batch(B), []
    for times in (1, 4):
        metric = make()
        update_for_compute(name, metric, _tiled(samples, times))
        with SyncCounter() as counter:
            metric.compute()
        counts.append(counter)
    small, large = counts
    print(f"\n{name}.compute: {small.total} {dict(sorted(small.counts.items()))}")
    assert dict(large.counts) == dict(small.counts), f"{name}: {dict(small.counts)} vs {dict(large.counts)}"
    assert small.total <= COMPUTE_BUDGETS.get(name, 0), f"{name}: {small.total} host syncs per compute"


def test_counter_counts_each_kind_and_not_sized_ops() -> None:
    t = torch.tensor([0, 2, 0, 3])
    with SyncCounter() as counter:
        t.sum().item()
        bool(t.any())
        t.nonzero()
        torch.unique(t)
        t[t > 0]
        torch.repeat_interleave(torch.arange(4), t)
        t.tolist()
    assert counter.counts == {"item": 2, "nonzero": 1, "_unique2": 1, "bool-index": 1, "repeat_interleave": 1,
                              "to-host:tolist": 1}, dict(counter.counts)
    with SyncCounter() as counter:
        torch.repeat_interleave(torch.arange(4), t, output_size=5)
        t[torch.tensor([1, 3])]
        t.cumsum(0)
    assert counter.total == 0
    assert torch.Tensor.tolist is not None and "tolist" not in vars(SyncCounter)  # patches undone


class _Pinned(torch.Tensor):
    """A CPU tensor that reports itself pinned (a CPU-only machine cannot pin memory)."""

    def is_pinned(self, *args, **kwargs) -> bool:
        return True


def test_counter_leaves_out_reads_of_pinned_host_buffers() -> None:
    staging, plain = torch.arange(3).as_subclass(_Pinned), torch.arange(3)
    with SyncCounter() as counter:
        staging.numpy(), staging.tolist(), staging.cpu()
        plain.numpy()
    assert dict(counter.counts) == {"to-host:numpy": 1}, dict(counter.counts)


#: modules whose kernels run on one intra-op thread (core/threads.py: many small ops, measured 4-26x slower beside
#: busy processes on two threads); the image models and the classification modules keep torch's setting
SINGLE_THREADED = {name for name in BUDGETS if not name.startswith(
    ("FrechetInception", "KernelInception", "CLIPScore", "ImageGeneration", "ImageCaptioning", "VisualQA", "Binary",
     "Multiclass", "Multilabel"))}


class _ThreadsSeen(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.threads: set[int] = set()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.threads.add(torch.get_num_threads())
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("name", sorted(SINGLE_THREADED))
def test_text_and_matching_kernels_run_on_one_thread(cases, name) -> None:
    make, batch = cases[name]
    metric, samples, before = make(), batch(B), torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with _ThreadsSeen() as seen:
            metric.update(*samples)
            metric.compute()
        assert seen.threads == {1}, f"{name} ran ops on {sorted(seen.threads)} threads"
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)

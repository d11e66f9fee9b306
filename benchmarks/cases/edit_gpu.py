"""Edit distance on a CUDA device (group ``gpu``: not in a default run; ``tools/gpu_session.sh`` runs them), on the
data of the CPU rows (:mod:`benchmarks.cases.edit`):

    python -m benchmarks --device cuda --only edit_gpu_short_strings edit_gpu_short_tokens edit_gpu_long wer_gpu \
        edit_gpu_uneven

Goals (issue 26, one H100, same run as the reference): strings ≥ 2× the rapidfuzz loop; device token tensors ≥ 20×;
2,000 long pairs ≥ 3× CPU auto (unreachable from strings on a host with many free cores: the host's encoding alone
outweighs CPU auto there, ``edit_long_encode_separated``); WER 100k ≥ 1.5× CPU auto; 1e6-vs-3 bounded. They need a
CUDA device (``ValueError`` otherwise).
"""

from __future__ import annotations

from typing import Optional

import torch

from benchmarks.cases.edit import ocr_pairs, rapidfuzz_loop, uneven_pairs, wer_pairs
from benchmarks.registry import Contenders, register
from gpumetrics.functional import edit_distance, word_error_rate
from gpumetrics.kernels.ragged import Ragged
from gpumetrics.kernels.text_rows import encode_chars_ragged

# Triton launch shapes of the column kernel (pairs per program, warps): its default (1, 1), the shapes it launched
# first (32 lanes on 4 warps from 4,096 pairs, 16 lanes on 4 warps below) and its neighbours; of the wavefront kernel
# (pattern words per program, warps): its default (32, 1: a word per thread) and neighbours
# (gpumetrics.kernels.levenshtein_triton)
_SHAPES = ((1, 1), (2, 1), (4, 1), (8, 1), (16, 1), (16, 4), (32, 4))
_WAVE_SHAPES = ((32, 1), (32, 2), (16, 1), (64, 2))


def _cuda(device: str) -> str:
    if not device.startswith("cuda") or not torch.cuda.is_available():
        raise ValueError(f"the GPU edit-distance rows need --device cuda and a GPU (got {device!r}); they are skipped "
                         "without CUDA and not part of a default run")
    return device


def _device_tokens(texts, device):
    values, offsets = encode_chars_ragged(texts, device)
    return Ragged(values, offsets)


@register("edit_gpu_short_strings", sizes=(500_000,), quick_sizes=(20_000,), repeats=5, group="gpu", goal=2.0)
def edit_gpu_short_strings_case(size: int, device: str) -> Contenders:
    device = _cuda(device)
    preds, target = ocr_pairs(size, 5, 40, seed=size)
    return Contenders(
        ours={"edit_distance(strings → cuda, auto)": lambda: edit_distance(preds, target, reduction="none",
                                                                            device=device),
              "edit_distance(strings → cuda, backend=torch)": lambda: edit_distance(
                  preds, target, reduction="none", backend="torch", device=device)},
        anchors={"rapidfuzz Levenshtein.distance loop": lambda: rapidfuzz_loop(preds, target)},
        check=lambda ours, anchor: ours.tolist() == anchor,
        note="5–40 chars, end to end, result on the GPU. auto: rapidfuzz's threads on the host's free cores (≥ 4), "
             "then one upload; torch: separated encoding, rows found on the GPU, Triton kernel",
    )


@register("edit_gpu_short_tokens", sizes=(500_000,), quick_sizes=(20_000,), repeats=5, group="gpu", goal=20.0)
def edit_gpu_short_tokens_case(size: int, device: str) -> Contenders:
    device = _cuda(device)
    preds, target = ocr_pairs(size, 5, 40, seed=size)
    pred_ids, target_ids = _device_tokens(preds, device), _device_tokens(target, device)
    return Contenders(
        ours={"edit_distance(Ragged token ids on cuda)": lambda: edit_distance(pred_ids, target_ids, reduction="none")},
        anchors={"rapidfuzz Levenshtein.distance loop": lambda: rapidfuzz_loop(preds, target)},
        check=lambda ours, anchor: ours.tolist() == anchor,
        note="5–40 symbols already on the GPU (flat values + offsets), as a decoder's output",
    )


@register("edit_gpu_long", sizes=(2_000,), quick_sizes=(200,), repeats=3, group="gpu", goal=3.0)
def edit_gpu_long_case(size: int, device: str) -> Contenders:
    device = _cuda(device)
    preds, target = ocr_pairs(size, 500, 2_000, seed=size + 1)
    return Contenders(
        ours={"edit_distance(strings → cuda, auto)": lambda: edit_distance(preds, target, reduction="none",
                                                                            device=device),
              "edit_distance(strings → cuda, backend=torch)": lambda: edit_distance(
                  preds, target, reduction="none", backend="torch", device=device)},
        anchors={"gpumetrics edit_distance CPU auto": lambda: edit_distance(preds, target, reduction="none")},
        check=lambda ours, anchor: ours.tolist() == anchor.tolist(),
        note="500–2,000 chars, ~10% edits. auto: with ≥ 2 free cores rapidfuzz on the host, then one upload (the "
             "device route was slower than one host core; its encoding alone outweighs the host's threads: "
             "edit_long_encode_separated); torch: the device route (separated encoding, rows found on the GPU, "
             "Triton kernel)",
    )


@register("wer_gpu", sizes=(100_000,), quick_sizes=(5_000,), repeats=3, group="gpu", goal=1.5)
def wer_gpu_case(size: int, device: str) -> Contenders:
    device = _cuda(device)
    preds, target = wer_pairs(size)
    return Contenders(
        ours={"word_error_rate(strings → cuda)": lambda: word_error_rate(preds, target, device=device).item()},
        anchors={"gpumetrics word_error_rate CPU auto": lambda: word_error_rate(preds, target).item()},
        check=lambda ours_value, anchor: abs(ours_value - anchor) < 1e-12,
        note="20–120 chars, single spaces: code points to the GPU, words split and given exact ids there, distances "
             "by the Triton kernel",
    )


@register("edit_gpu_uneven", sizes=(1_000_000,), quick_sizes=(10_000,), unit="chars", repeats=3, group="gpu")
def edit_gpu_uneven_case(size: int, device: str) -> Contenders:
    device = _cuda(device)
    preds, target = uneven_pairs(size)
    return Contenders(
        ours={"edit_distance(strings → cuda)": lambda: edit_distance(preds, target, reduction="none", device=device)},
        anchors={"rapidfuzz Levenshtein.distance loop": lambda: rapidfuzz_loop(preds, target)},
        check=lambda ours_value, anchor: ours_value.tolist() == anchor,
        note="1e6 chars vs 3, vs itself with 1 substitution, 3 vs it: one Triton launch (bounded)",
    )


def _kernel_shapes_case(preds, target, device: str, before: Optional[tuple[int, int]], note: str, columns=_SHAPES,
                        wave=(), auto: bool = False) -> Contenders:
    """The kernels alone by launch shape against the column kernel at shape ``before`` (``None``: its default):
    ``columns`` and ``wave`` shapes with the kernel forced, and with ``auto`` the dispatch the routes run (both
    kernels launched)."""
    from gpumetrics.kernels.levenshtein_triton import LANES, WARPS, WAVE_WARPS, WAVE_WORDS, levenshtein_triton

    before = before or (LANES, WARPS)

    (a, a_offsets), (b, b_offsets) = encode_chars_ragged(preds, device), encode_chars_ragged(target, device)

    def column(lanes: int, warps: int):
        return lambda: levenshtein_triton(a, a_offsets, b, b_offsets, block=lanes, num_warps=warps, kernel="columns")

    def wavefront(words: int, warps: int):
        return lambda: levenshtein_triton(a, a_offsets, b, b_offsets, num_warps=warps, kernel="wavefront",
                                          words=words)

    def label(lanes: int, warps: int) -> str:
        default = " (default)" if (lanes, warps) == (LANES, WARPS) else ""
        return f"Triton column kernel, {lanes} pairs per program on {warps} warps{default}"

    def wave_label(words: int, warps: int) -> str:
        default = " (default)" if (words, warps) == (WAVE_WORDS, WAVE_WARPS) else ""
        return f"Triton wavefront kernel, {words} words per program on {warps} warps{default}"

    ours = {wave_label(*shape): wavefront(*shape) for shape in wave}
    ours.update({label(*other): column(*other) for other in columns if other != before})
    if auto:
        ours["Triton kernels, auto dispatch (the routes' launch)"] = lambda: levenshtein_triton(a, a_offsets, b,
                                                                                                 b_offsets)
    return Contenders(
        ours=ours,
        anchors={label(*before) + ("" if before == (LANES, WARPS) else ", the shape launched before"): column(*before)},
        check=lambda ours, anchor: torch.equal(ours, anchor),
        note=note,
    )


@register("edit_gpu_kernel_short", sizes=(500_000,), quick_sizes=(8,), repeats=5, group="gpu")
def edit_gpu_kernel_short_case(size: int, device: str) -> Contenders:
    device = _cuda(device)
    preds, target = ocr_pairs(size, 5, 40, seed=size)
    return _kernel_shapes_case(preds, target, device, (32, 4), "the Triton kernels alone on the 500,000 short pairs of "
                               "edit_gpu_short_strings (code points already on the GPU), by launch shape; auto: the "
                               "column kernel and an idle wavefront launch", wave=_WAVE_SHAPES[:1], auto=True)


def _wavefront_case(size: int, device: str, lengths: tuple[int, int], seed: int, note: str, **shapes) -> Contenders:
    """The kernels alone on ``size`` pairs of ``lengths`` characters, the column kernel's default as the anchor; the
    quick sizes check the case on a CPU, where the kernels run under Triton's interpreter: pairs of 65-200 characters
    (still several words), which take seconds there, not minutes."""
    device = _cuda(device)
    low, high = lengths if size >= 100 else (65, 200)
    preds, target = ocr_pairs(size, low, high, seed=seed)
    return _kernel_shapes_case(preds, target, device, None, note, columns=(), **shapes)


@register("edit_gpu_kernel_medium", sizes=(20_000,), quick_sizes=(4,), repeats=3, group="gpu")
def edit_gpu_kernel_medium_case(size: int, device: str) -> Contenders:
    # 2-8 pattern words, across WAVEFRONT_MIN_WORDS (4): where the wavefront kernel starts to win
    return _wavefront_case(size, device, (65, 512), size + 2, "the Triton kernels alone on 20,000 pairs of 65-512 "
                           "characters (code points already on the GPU): the column kernel's default against the "
                           "wavefront kernel's, and the auto dispatch", wave=_WAVE_SHAPES[:1], auto=True)


@register("edit_gpu_kernel_long", sizes=(2_000,), quick_sizes=(4,), repeats=3, group="gpu")
def edit_gpu_kernel_long_case(size: int, device: str) -> Contenders:
    return _wavefront_case(size, device, (500, 2_000), size + 1, "the Triton kernels alone on the 2,000 long pairs "
                           "of edit_gpu_long (code points already on the GPU): the wavefront kernel by launch shape "
                           "against the column kernel's default", wave=_WAVE_SHAPES)

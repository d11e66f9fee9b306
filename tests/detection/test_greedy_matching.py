"""The one-to-one greedy matchings of the detection metrics against plain sequential Python greedy loops written here:
OCR end-to-end ``icdar15`` (ground truths in order, each taking the first free prediction) and zero-shot F1
``strict`` (pairs by decreasing IoU, ties: earlier prediction, then earlier ground truth). Random candidate graphs
of many small images: 0–30 boxes a side, ties, all pairs candidates, none, many predictions on one ground truth,
chains that need the most rounds."""

import random

import pytest
import torch

from gpumetrics.detection.ocr_e2e import _greedy_in_gt_order
from gpumetrics.detection.zero_shot_f1 import _greedy_by_iou
from gpumetrics.functional import ocr_end_to_end

MODES = ("random", "dense", "all", "none", "many-to-one", "one-to-many", "chain")


def _candidates(r: random.Random, n_p: int, n_g: int, mode: str) -> list[tuple[int, int]]:
    """Candidate (prediction, ground truth) pairs of one image, in (prediction, ground truth) order."""
    if mode == "chain":  # p0-g0-p1-g1-…: every round of mutually-best pairs settles one pair at the chain's end
        pairs = {(i, i) for i in range(min(n_p, n_g))} | {(i + 1, i) for i in range(min(n_p - 1, n_g))}
    else:
        density = {"random": r.random(), "dense": 0.8, "all": 1.0, "none": 0.0}.get(mode, 0.0)
        pairs = {(p, g) for p in range(n_p) for g in range(n_g) if r.random() < density}
        if mode == "many-to-one" and n_g:
            pairs |= {(p, r.randrange(n_g) if r.random() < 0.2 else 0) for p in range(n_p)}
        if mode == "one-to-many" and n_p:
            pairs |= {(0, g) for g in range(n_g)}
    return sorted(pairs)


def _batch(seed: int, n_images: int):
    """Images with their sizes and candidate pairs (image-major, then prediction, then ground truth)."""
    r = random.Random(seed)
    images = []
    for _ in range(n_images):
        n_p, n_g = r.choice([0, 1, 2, r.randint(0, 30)]), r.choice([0, 1, 2, r.randint(0, 30)])
        mode = r.choice(MODES)
        images.append((n_p, n_g, _candidates(r, n_p, n_g, mode), mode))
    return r, images


def _icdar_reference(n_p: int, n_g: int, pairs: set, eligible: set) -> set:
    free, taken = [True] * n_p, set()
    for g in range(n_g):
        for p in range(n_p):
            if (p, g) in pairs and (p, g) in eligible and free[p]:
                free[p] = False
                taken.add((p, g))
                break
    return taken


@pytest.mark.parametrize("seed", range(12))
def test_icdar15_greedy_equals_the_sequential_loop(seed):
    r, images = _batch(seed, 150)
    ip, image, gt_pos, eligible, keys, expected = [], [], [], [], [], set()
    start_p = 0
    for i, (n_p, n_g, pairs, _) in enumerate(images):
        ok = {pair for pair in pairs if r.random() < 0.85}
        expected |= {(i, p, g) for p, g in _icdar_reference(n_p, n_g, set(pairs), ok)}
        for p, g in pairs:
            ip.append(start_p + p)
            image.append(i)
            gt_pos.append(g)
            eligible.append((p, g) in ok)
            keys.append((i, p, g))
        start_p += n_p
    shuffle = list(range(len(ip)))
    r.shuffle(shuffle)  # the matcher sorts the pairs itself
    tensors = [torch.tensor([column[k] for k in shuffle], dtype=torch.long) for column in (ip, image, gt_pos)]
    mask = torch.tensor([eligible[k] for k in shuffle], dtype=torch.bool)
    max_gt = max(image[1] for image in images)
    taken = _greedy_in_gt_order(*tensors, mask, start_p, max_gt)
    got = {keys[shuffle[k]] for k in torch.nonzero(taken).flatten().tolist()}
    assert got == expected and len(expected) > 20


def _by_iou_reference(pairs: list[tuple[int, int, float, bool]]) -> set:
    used_p, used_g, taken = set(), set(), set()
    for neg_iou, p, g in sorted((-iou, p, g) for p, g, iou, hit in pairs if hit):
        if p not in used_p and g not in used_g:
            used_p.add(p)
            used_g.add(g)
            taken.add((p, g))
    return taken


@pytest.mark.parametrize("seed", range(12))
def test_strict_greedy_by_iou_equals_the_sequential_loop(seed):
    r, groups = _batch(100 + seed, 150)
    levels = [0.0, 0.25, 0.5, 0.5, 0.75, 1.0]  # ties
    rows, start_p, start_g = [], 0, 0
    for n_p, n_g, pairs, mode in groups:
        for k, (p, g) in enumerate(pairs):
            iou = 0.5 + k / 1000 if mode == "chain" else r.choice(levels) if r.random() < 0.7 else r.random()
            rows.append((start_p + p, start_g + g, iou, iou >= 0.5))
        start_p, start_g = start_p + n_p, start_g + n_g
    rows.sort()  # (prediction, ground truth) order, as block_pairs gives them
    ip, ig = (torch.tensor([row[k] for row in rows], dtype=torch.long) for k in (0, 1))
    iou = torch.tensor([row[2] for row in rows], dtype=torch.float64)
    hit = torch.tensor([row[3] for row in rows], dtype=torch.bool)
    rounds = max(min(group[:2]) for group in groups)
    keep = torch.nonzero(hit).flatten()  # the caller hands over the pairs at or above the threshold
    taken = _greedy_by_iou(ip[keep], ig[keep], iou[keep], start_p, start_g, rounds)
    got = {(rows[k][0], rows[k][1]) for k in keep[taken].tolist()}
    expected = _by_iou_reference(rows)
    assert got == expected and len(expected) > 20


def test_strict_greedy_needs_its_rounds_on_a_chain():
    # p0-g0-p1-g1-…-p9-g9, IoU rising along the chain: one pair settles per round, from the far end
    pairs = sorted({(i, i) for i in range(10)} | {(i + 1, i) for i in range(9)})
    rows = [(p, g, 0.5 + k / 100, True) for k, (p, g) in enumerate(pairs)]
    ip, ig = (torch.tensor([row[k] for row in rows]) for k in (0, 1))
    iou = torch.tensor([row[2] for row in rows], dtype=torch.float64)
    expected = _by_iou_reference(rows)
    full = _greedy_by_iou(ip, ig, iou, 10, 10, 10)
    assert {(rows[k][0], rows[k][1]) for k in torch.nonzero(full).flatten().tolist()} == expected
    assert int(_greedy_by_iou(ip, ig, iou, 10, 10, 9).sum()) < len(expected)  # the bound is tight here


def test_icdar15_metric_on_grid_cells_equals_the_sequential_loop():
    # unit squares on integer cells: a pair overlaps (IoU 1) iff both boxes sit on the same cell, so the candidates
    # are known exactly: many boxes per cell (many-to-one, ties), empty cells (no overlap), don't-care cells
    r = random.Random(7)
    preds, pred_texts, gts, gt_texts = [], [], [], []
    matched = correct = dontcare = 0
    for _ in range(200):
        cells = r.randint(1, 6)
        pc = [r.randrange(cells) for _ in range(r.choice([0, r.randint(0, 30)]))]
        gc = [r.randrange(cells) for _ in range(r.choice([0, r.randint(0, 30)]))]
        pt = [r.choice("aAbB") for _ in pc]
        gtx = [r.choice(["a", "b", "###"]) if r.random() < 0.3 else r.choice("ab") for _ in gc]
        dc_cells = {c for c, t in zip(gc, gtx) if t == "###"}
        free = [c not in dc_cells for c in pc]
        dontcare += free.count(False)
        for g, c in enumerate(gc):
            if gtx[g] == "###":
                continue
            for p, d in enumerate(pc):
                if d == c and free[p]:
                    free[p] = False
                    matched += 1
                    correct += pt[p].upper() == gtx[g].upper()
                    break
        preds.append(torch.tensor([[4.0 * c, 0.0, 4.0 * c + 1, 1.0] for c in pc]).reshape(-1, 4))
        gts.append(torch.tensor([[4.0 * c, 0.0, 4.0 * c + 1, 1.0] for c in gc]).reshape(-1, 4))
        pred_texts.append(pt)
        gt_texts.append(gtx)
    out = ocr_end_to_end(preds, pred_texts, gts, gt_texts, matching="icdar15")
    assert (int(out["bbox_matched_gt"]), int(out["e2e_matched_gt"]), int(out["bbox_dontcare_pred"])) == (
        matched, correct, dontcare)
    assert matched > 100 and 0 < correct < matched and dontcare > 0

"""Polygon IoU and OCR end-to-end vs shapely 2 (vectorised GEOS), on the same data in the same process."""

from __future__ import annotations

import numpy as np
import shapely
import torch

from benchmarks.registry import Contenders, register
from gpumetrics.functional import ocr_end_to_end, polygon_iou_paired


_UNIT = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]])


def _quads(rng: np.random.Generator, n: int, centre: np.ndarray, size=(2.0, 30.0), angle=np.pi) -> np.ndarray:
    w, h = rng.uniform(*size, (n, 1)), rng.uniform(*size, (n, 1))
    shear = rng.uniform(-0.5, 0.5, (n, 1))
    theta = rng.uniform(-angle, angle, (n, 1))
    x, y = _UNIT[None, :, 0] * w + shear * _UNIT[None, :, 1] * h, _UNIT[None, :, 1] * h
    return np.stack([x * np.cos(theta) - y * np.sin(theta), x * np.sin(theta) + y * np.cos(theta)], -1) + centre


def _pairs(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """n pairs of rotated, sheared quadrilaterals whose partners overlap in ~90 % of the pairs (the costly case)."""
    rng = np.random.default_rng(seed)
    centre = rng.uniform(0, 1000, (n, 1, 2))
    return _quads(rng, n, centre), _quads(rng, n, centre + rng.normal(0, 6, (n, 1, 2)))


def _shapely_iou(pa, pb, area_a, area_b):
    inter = shapely.area(shapely.intersection(pa, pb))
    union = area_a + area_b - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


@register("polygon_iou_paired", sizes=(90_000, 1_000_000), quick_sizes=(10_000,), unit="pairs", repeats=3)
def polygon_iou_case(size: int, device: str) -> Contenders:
    a, b = _pairs(size)
    ta64, tb64 = torch.from_numpy(a).to(device), torch.from_numpy(b).to(device)
    ta32, tb32 = ta64.float(), tb64.float()
    pa, pb = shapely.polygons(a), shapely.polygons(b)  # geometry construction is not timed for shapely
    area_a, area_b = shapely.area(pa), shapely.area(pb)
    reference = _shapely_iou(pa, pb, area_a, area_b)
    ours = {
        "polygon_iou_paired float64": (lambda: polygon_iou_paired(ta64, tb64).cpu().numpy()),
        "polygon_iou_paired float32": (lambda: polygon_iou_paired(ta32, tb32).cpu().numpy()),
        "polygon_iou_paired float64 compiled": (lambda: polygon_iou_paired(ta64, tb64, compiled=True).cpu().numpy()
        ),
    }
    for label, fn in ours.items():  # every variant is checked, not only the first (this also compiles)
        tolerance = 1e-5 if "float32" in label else 1e-9
        assert np.abs(fn() - reference).max() <= tolerance, label
    return Contenders(
        ours=ours,
        anchors={"shapely 2 intersection+area (vectorised GEOS)": lambda: _shapely_iou(pa, pb, area_a, area_b)},
        check=lambda x, y: np.abs(x - y).max() <= 1e-9,
        note="rotated+sheared quads, ~90 % of pairs overlap; shapely geometries prebuilt (not timed); "
        "compiled = torch.compile'd kernel, one-off compile (tens of s) excluded by the warm-up",
    )


def _ocr_data(n_images: int, per_image: int = 100, seed: int = 0):
    """Page-like images: ``per_image`` word boxes on a grid (slightly rotated), predictions are jittered copies of
    85 % of them plus false positives; texts from a small vocabulary with case variants and don't-care regions."""
    rng = np.random.default_rng(seed)
    vocab = np.array(["the", "The", "THE", "cafe", "café", "Straße", "привет", "日本", "42", "###"])
    pred_polys, pred_texts, gt_polys, gt_texts = [], [], [], []
    cols = 10
    for _ in range(n_images):
        idx = np.arange(per_image)
        centre = np.stack([(idx % cols) * 60.0 + 30, (idx // cols) * 25.0 + 12], -1)[:, None, :]
        gts = _quads(rng, per_image, centre, size=(8.0, 20.0), angle=0.1)
        texts = rng.choice(vocab, per_image, p=[0.2, 0.1, 0.05, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.05])
        keep = rng.random(per_image) < 0.85
        n_fp = per_image - int(keep.sum())
        preds = np.concatenate([gts[keep] + rng.normal(0, 1.0, (int(keep.sum()), 4, 2)),
                                _quads(rng, n_fp, rng.uniform(0, 600, (n_fp, 1, 2)), size=(8.0, 20.0), angle=0.1)])
        ptexts = np.concatenate([np.where(rng.random(int(keep.sum())) < 0.7, texts[keep],
                                          rng.choice(vocab[:-1], int(keep.sum()))), rng.choice(vocab[:-1], n_fp)])
        order = rng.permutation(per_image)
        pred_polys.append(torch.from_numpy(preds[order]))
        pred_texts.append(ptexts[order].tolist())
        gt_polys.append(torch.from_numpy(gts))
        gt_texts.append(texts.tolist())
    return pred_polys, pred_texts, gt_polys, gt_texts


def icdar15_shapely(pred_polys, pred_texts, gt_polys, gt_texts):
    """A good shapely-based ICDAR 2015 e2e evaluator: STRtree candidate pairs, vectorised GEOS intersections,
    greedy matching in Python over the candidates only."""
    matched_sum = correct_sum = care_gt = care_det = 0
    for pp, pt, gp, gt in zip(pred_polys, pred_texts, gt_polys, gt_texts):
        P, G = shapely.polygons(pp.numpy()), shapely.polygons(gp.numpy())
        area_p, area_g = shapely.area(P), shapely.area(G)
        gt_dc = np.array([t == "###" for t in gt], dtype=bool)
        ig, ip = shapely.STRtree(P).query(G, predicate="intersects")
        inter = shapely.area(shapely.intersection(P[ip], G[ig]))
        covered = np.where(area_p[ip] > 0, inter / np.where(area_p[ip] > 0, area_p[ip], 1), 0)
        det_dc = np.zeros(len(P), dtype=bool)
        det_dc[ip[gt_dc[ig] & (covered > 0.5)]] = True
        iou = inter / (area_p[ip] + area_g[ig] - inter)
        ok = (iou > 0.5) & ~gt_dc[ig] & ~det_dc[ip]
        order = np.lexsort((ip[ok], ig[ok]))
        taken_p, taken_g = set(), set()
        for g, p in zip(ig[ok][order].tolist(), ip[ok][order].tolist()):
            if g in taken_g or p in taken_p:
                continue
            taken_g.add(g)
            taken_p.add(p)
            matched_sum += 1
            correct_sum += pt[p].upper() == gt[g].upper()
        care_gt += int((~gt_dc).sum())
        care_det += len(P) - int(det_dc.sum())
    precision = correct_sum / care_det if care_det else 0.0
    recall = correct_sum / care_gt if care_gt else 0.0
    return {"bbox_recall": matched_sum / care_gt if care_gt else 0.0, "e2e_precision": precision, "e2e_recall": recall}


@register("ocr_end_to_end_icdar15", sizes=(1_000,), quick_sizes=(50,), unit="images × 100 × 100", repeats=3)
def ocr_case(size: int, device: str) -> Contenders:
    pred_polys, pred_texts, gt_polys, gt_texts = _ocr_data(size)
    pred_polys = [p.to(device) for p in pred_polys]
    gt_polys = [g.to(device) for g in gt_polys]
    cpu_preds, cpu_gts = [p.cpu() for p in pred_polys], [g.cpu() for g in gt_polys]

    def ours():
        out = ocr_end_to_end(pred_polys, pred_texts, gt_polys, gt_texts, matching="icdar15")
        return {k: float(out[k]) for k in ("bbox_recall", "e2e_precision", "e2e_recall")}

    return Contenders(
        ours={"ocr_end_to_end(matching=icdar15)": ours},
        anchors={"shapely 2 STRtree + GEOS + Python greedy":
                 lambda: icdar15_shapely(cpu_preds, pred_texts, cpu_gts, gt_texts)},
        check=lambda x, y: all(abs(x[k] - y[k]) < 1e-12 for k in y),
        note="100 predictions × 100 ground truths per image, page layout, quads",
    )

"""OCR end-to-end: the worked examples of docs/metrics/detection.md, and both presets against independent shapely + loop
implementations written here from the rules (not from our code)."""

import random
from fractions import Fraction

import numpy as np
import pytest
import shapely
import torch

from gpumetrics import OCREndToEnd
from gpumetrics.functional import ocr_end_to_end
from tests.helpers.harness import check_metric


def B(k):
    return [[k, 0], [k + 1, 0], [k + 1, 1], [k, 1]]


Q = [[2, 0], [3, 1], [3, 2], [2, 2]]

# (preds, gts, (bbox P, bbox R), (e2e P, e2e R)); P = None for 0/0
WORKED = {
    "perfect": (
        [("111", B(0)), ("111", B(1)), ("222", B(2)), ("222", B(3)), ("111", B(4)), ("222", B(5))],
        [("111", B(0)), ("111", B(1)), ("222", B(2)), ("222", B(3)), ("###", B(4)), ("###", B(5))],
        ((4, 4), (4, 4)), ((4, 4), (4, 4)),
    ),
    "miss text": (
        [("111", B(0)), ("111", B(1)), ("000", B(2)), ("000", B(3)), ("111", B(4)), ("222", B(5))],
        [("111", B(0)), ("111", B(1)), ("222", B(2)), ("222", B(3)), ("###", B(4)), ("###", B(5)), ("111", B(6)),
         ("###", B(7))],
        ((4, 4), (4, 5)), ((2, 4), (2, 5)),
    ),
    "many-to-one": (
        [("111", B(0)), ("111", B(0)), ("222", B(0)), ("333", B(0)), ("111", B(1))],
        [("111", B(0))],
        ((4, 5), (1, 1)), ((2, 5), (1, 1)),
    ),
    "all don't-care": (
        [("111", B(0)), ("111", B(0)), ("222", B(0)), ("333", B(0))],
        [("111", [[3, 3], [4, 3], [4, 4], [3, 4]]), ("###", B(0))],
        ((0, 0), (0, 1)), ((0, 0), (0, 1)),
    ),
    "many-to-many": (
        [("111", B(0)), ("111", B(0)), ("222", B(0)), ("111", B(1)), ("222", B(1)), ("111", Q), ("333", Q),
         ("444", Q)],
        [("111", B(0)), ("###", B(1)), ("111", Q), ("222", Q), ("###", Q)],
        ((6, 6), (3, 3)), ((3, 4), (2, 3)),
    ),
}


def _frac(num, den):
    return Fraction(1) if den == 0 else Fraction(num, den)


def _f1(p, r):
    return 0.0 if p + r == 0 else float(2 * p * r / (p + r))


@pytest.mark.parametrize("name", list(WORKED))
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_worked_examples_of_the_spec(name, dtype):
    preds, gts, bbox, e2e = WORKED[name]
    out = ocr_end_to_end(
        [torch.tensor([p for _, p in preds], dtype=dtype)], [[t for t, _ in preds]],
        [torch.tensor([g for _, g in gts], dtype=dtype)], [[t for t, _ in gts]],
    )
    for kind, ((pm, pd), (gm, gd)) in (("bbox", bbox), ("e2e", e2e)):
        assert int(out[f"{kind}_matched_pred"]) == pm
        assert int(out["n_pred"] - out[f"{kind}_dontcare_pred"]) == pd
        assert int(out[f"{kind}_matched_gt"]) == gm and int(out["n_gt"]) == gd
        p, r = _frac(pm, pd), _frac(gm, gd)
        assert float(out[f"{kind}_precision"]) == float(p)
        assert float(out[f"{kind}_recall"]) == float(r)
        assert float(out[f"{kind}_f1"]) == pytest.approx(_f1(p, r), abs=1e-15)


def test_worked_examples_micro_summed_over_images():
    images = list(WORKED.values())
    out = ocr_end_to_end(
        [torch.tensor([p for _, p in preds], dtype=torch.float64) for preds, *_ in images],
        [[t for t, _ in preds] for preds, *_ in images],
        [torch.tensor([g for _, g in gts], dtype=torch.float64) for _, gts, *_ in images],
        [[t for t, _ in gts] for _, gts, *_ in images],
        per_image=True,
    )
    sums = np.array([[*b[0], *b[1], *e[0], *e[1]] for *_, b, e in images]).sum(0)
    assert float(out["bbox_precision"]) == sums[0] / sums[1] and float(out["bbox_recall"]) == sums[2] / sums[3]
    assert float(out["e2e_precision"]) == sums[4] / sums[5] and float(out["e2e_recall"]) == sums[6] / sums[7]
    assert out["per_image"]["e2e_precision"].tolist() == [1.0, 0.5, 0.4, 1.0, 0.75]


# --------------------------------------------------------------------------------------- independent references
def _polys(quads):
    return [shapely.Polygon(q).convex_hull if shapely.Polygon(q).is_valid else shapely.MultiPoint(q).convex_hull
            for q in np.asarray(quads, dtype=np.float64).reshape(-1, 4, 2)]


def _iou(a, b):
    inter = a.intersection(b).area
    union = a.area + b.area - inter
    return inter / union if union > 0 else 0.0


def _result(counts, global_p, global_r):
    n_pred, n_gt, bm_p, bm_g, b_dc, em_p, em_g, e_dc, n_images = counts
    out = {}
    for kind, m_p, m_g, dc in (("bbox", bm_p, bm_g, b_dc), ("e2e", em_p, em_g, e_dc)):
        p, r = global_p(m_p, n_pred - dc), global_r(m_g, n_gt)
        if n_images == 0:  # nothing evaluated: every rate 0 (gpumetrics' empty-input rule)
            p = r = 0.0
        out.update({f"{kind}_precision": p, f"{kind}_recall": r,
                    f"{kind}_f1": 0.0 if p + r == 0 else 2 * p * r / (p + r)})
    names = ["n_pred", "n_gt", "bbox_matched_pred", "bbox_matched_gt", "bbox_dontcare_pred", "e2e_matched_pred",
             "e2e_matched_gt", "e2e_dontcare_pred", "n_images"]
    out.update({k: float(v) for k, v in zip(names, counts)})
    return out


def many_to_many_reference(pred_polys, pred_texts, gt_polys, gt_texts, case_sensitive=True):
    """Seed 002 rule, one box at a time."""
    counts = [0] * 9
    for pp, pt, gp, gt in zip(pred_polys, pred_texts, gt_polys, gt_texts):
        P, G = _polys(pp), _polys(gp)
        norm = (lambda s: s) if case_sensitive else str.upper
        over = [[_iou(p, g) > 0.5 for g in G] for p in P]
        dc = [t == "###" for t in gt]
        counts[0] += len(P)
        counts[8] += 1
        counts[1] += sum(not d for d in dc)
        for i in range(len(P)):
            touches_dc = any(over[i][j] and dc[j] for j in range(len(G)))
            bbox = any(over[i][j] and not dc[j] for j in range(len(G)))
            e2e = any(over[i][j] and not dc[j] and norm(pt[i]) == norm(gt[j]) for j in range(len(G)))
            counts[2] += bbox
            counts[4] += (not bbox) and touches_dc
            counts[5] += e2e
            counts[7] += (not e2e) and touches_dc
        for j in range(len(G)):
            if dc[j]:
                continue
            counts[3] += any(over[i][j] for i in range(len(P)))
            counts[6] += any(over[i][j] and norm(pt[i]) == norm(gt[j]) for i in range(len(P)))
    return _result(counts, lambda n, d: n / d if d else 1.0, lambda n, d: n / d if d else 1.0)


def icdar15_reference(pred_polys, pred_texts, gt_polys, gt_texts):
    """ICDAR 2015 end-to-end rules, one box at a time."""
    counts = [0] * 9
    for pp, pt, gp, gt in zip(pred_polys, pred_texts, gt_polys, gt_texts):
        P, G = _polys(pp), _polys(gp)
        gt_dc = [j for j, t in enumerate(gt) if t == "###"]
        det_dc = []
        for i, p in enumerate(P):
            for j in gt_dc:
                covered = p.intersection(G[j]).area / p.area if p.area > 0 else 0.0
                if covered > 0.5:
                    det_dc.append(i)
                    break
        gt_taken, det_taken = [False] * len(G), [False] * len(P)
        matched = correct = 0
        for j in range(len(G)):
            for i in range(len(P)):
                if gt_taken[j] or det_taken[i] or j in gt_dc or i in det_dc:
                    continue
                if _iou(P[i], G[j]) > 0.5:
                    gt_taken[j] = det_taken[i] = True
                    matched += 1
                    correct += pt[i].upper() == gt[j].upper()
        counts[0] += len(P)
        counts[8] += 1
        counts[1] += len(G) - len(gt_dc)
        counts[2] += matched
        counts[3] += matched
        counts[4] += len(det_dc)
        counts[5] += correct
        counts[6] += correct
        counts[7] += len(det_dc)
    return _result(counts, lambda n, d: n / d if d else 0.0, lambda n, d: n / d if d else 0.0)


TEXTS = ["abc", "ABC", "Abc", "привет", "ПРИВЕТ", "日本語", "🙂x", "e\u0301", "", "###", "###", "straße", "STRASSE"]


def _random_images(seed, n_images, max_gt=12, quads=True):
    rng = np.random.default_rng(seed)
    r = random.Random(seed)
    images = []
    for _ in range(n_images):
        n_gt = int(rng.integers(0, max_gt + 1))
        centre = rng.uniform(0, 60, (n_gt, 1, 2))
        w, h = rng.uniform(2, 12, (n_gt, 1)), rng.uniform(1, 5, (n_gt, 1))
        unit = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]])
        theta = rng.uniform(-0.4, 0.4, (n_gt, 1)) if quads else np.zeros((n_gt, 1))
        x, y = unit[None, :, 0] * w, unit[None, :, 1] * h
        gts = np.stack([x * np.cos(theta) - y * np.sin(theta), x * np.sin(theta) + y * np.cos(theta)], -1) + centre
        gt_texts = [r.choice(TEXTS) for _ in range(n_gt)]
        preds, pred_texts = [], []
        for j in range(n_gt):  # 0..3 detections per ground truth, jittered (IoU from ~0.2 to 1)
            for _ in range(int(rng.integers(0, 4))):
                preds.append(gts[j] + rng.normal(0, rng.choice([0.05, 0.5, 1.5]), (4 if quads else 1, 2)))
                pred_texts.append(gt_texts[j] if r.random() < 0.5 else r.choice(TEXTS))
        for _ in range(int(rng.integers(0, 4))):  # false positives
            preds.append(rng.uniform(0, 60, (1, 2)) + unit * rng.uniform(2, 8))
            pred_texts.append(r.choice(TEXTS))
        order = rng.permutation(len(preds))
        preds = [preds[i] for i in order]
        pred_texts = [pred_texts[i] for i in order]
        if not quads:  # axis-aligned xyxy boxes
            pt = torch.tensor(np.array([[p[:, 0].min(), p[:, 1].min(), p[:, 0].max(), p[:, 1].max()]
                                        for p in preds]).reshape(-1, 4))
            gt = torch.tensor(np.array([[g[:, 0].min(), g[:, 1].min(), g[:, 0].max(), g[:, 1].max()]
                                        for g in gts]).reshape(-1, 4))
        else:
            pt = torch.tensor(np.array(preds).reshape(-1, 4, 2))
            gt = torch.tensor(gts.reshape(-1, 4, 2))
        images.append((pt, pred_texts, gt, gt_texts))
    return images


def _batches(images, sizes):
    out, start = [], 0
    for size in sizes:
        chunk = images[start : start + size]
        start += size
        out.append(tuple([img[k] for img in chunk] for k in range(4)))
    return out


def _as_ref_input(args):
    polys = [[np.asarray(_to_quads(p)) for p in args[0]], args[1], [np.asarray(_to_quads(g)) for g in args[2]], args[3]]
    return polys


def _to_quads(t):
    t = t.double()
    if t.dim() == 2 and t.shape[1] == 4:
        x1, y1, x2, y2 = t.unbind(1)
        return torch.stack([torch.stack([x1, y1], 1), torch.stack([x2, y1], 1), torch.stack([x2, y2], 1),
                            torch.stack([x1, y2], 1)], 1).numpy()
    return t.reshape(-1, 4, 2).numpy()


@pytest.mark.parametrize("quads", [True, False])
def test_many_to_many_matches_loop_reference(quads):
    images = _random_images(10 + quads, 60, quads=quads)
    args = tuple([img[k] for img in images] for k in range(4))
    ours = ocr_end_to_end(*args)
    ref = many_to_many_reference(*_as_ref_input(args))
    for key, value in ref.items():
        assert float(ours[key]) == pytest.approx(value, abs=1e-12), key
    assert 0 < ref["bbox_dontcare_pred"] and 0 < ref["e2e_matched_gt"] < ref["bbox_matched_gt"]


@pytest.mark.parametrize("quads", [True, False])
def test_icdar15_matches_loop_reference(quads):
    images = _random_images(20 + quads, 60, quads=quads)
    args = tuple([img[k] for img in images] for k in range(4))
    ours = ocr_end_to_end(*args, matching="icdar15")
    ref = icdar15_reference(*_as_ref_input(args))
    for key, value in ref.items():
        assert float(ours[key]) == pytest.approx(value, abs=1e-12), key
    assert ref["bbox_dontcare_pred"] > 0 and 0 < ref["e2e_matched_gt"] < ref["bbox_matched_gt"]
    case_sensitive = ocr_end_to_end(*args, matching="icdar15", case_sensitive=True)
    assert case_sensitive["e2e_matched_gt"] < ours["e2e_matched_gt"]  # "ABC" vs "abc" pairs exist


def test_icdar15_greedy_order_and_per_image_rules():
    # two GTs, two detections: GT0 overlaps both (first free = det0), GT1 overlaps det0 only → unmatched
    gt = torch.tensor([[0.0, 0.0, 10.0, 10.0], [0.5, 0.0, 10.5, 10.0]], dtype=torch.float64)
    det = torch.tensor([[0.2, 0.0, 10.2, 10.0], [0.0, 0.0, 9.0, 10.0]], dtype=torch.float64)
    empty = torch.zeros(0, 4, dtype=torch.float64)
    out = ocr_end_to_end([det, empty, det[:1]], [["a", "b"], [], ["x"]], [gt, empty, gt[1:]], [["A", "b"], [], ["###"]],
                         matching="icdar15", per_image=True)
    ref = icdar15_reference([_to_quads(det), _to_quads(empty), _to_quads(det[:1])], [["a", "b"], [], ["x"]],
                            [_to_quads(gt), _to_quads(empty), _to_quads(gt[1:])], [["A", "b"], [], ["###"]])
    for key, value in ref.items():
        assert float(out[key]) == pytest.approx(value, abs=1e-12), key
    per = out["per_image"]
    assert per["bbox_recall"].tolist()[1:] == [1.0, 1.0]  # no cared GT → recall 1
    assert per["bbox_precision"].tolist()[1:] == [1.0, 1.0]  # and no cared detection → precision 1


@pytest.mark.ddp
@pytest.mark.parametrize("matching", ["many-to-many", "icdar15"])
def test_module_functional_reference_and_ddp(matching):
    images = _random_images(30, 14, max_gt=6)
    batches = _batches(images, [5, 1, 8])
    reference = many_to_many_reference if matching == "many-to-many" else icdar15_reference
    check_metric(OCREndToEnd, ocr_end_to_end, lambda *a: reference(*_as_ref_input(a)), batches,
                 metric_kwargs={"matching": matching})


def test_bad_inputs_name_the_argument():
    box = torch.tensor([[0.0, 0.0, 1.0, 1.0]])
    with pytest.raises(ValueError, match=r"`pred_texts\[0\]` has 2 strings"):
        ocr_end_to_end([box], [["a", "b"]], [box], [["a"]])
    with pytest.raises(ValueError, match=r"`gt_texts` has 2 images"):
        ocr_end_to_end([box], [["a"]], [box], [["a"], ["b"]])
    with pytest.raises(ValueError, match="same number of images"):
        ocr_end_to_end([box, box], [["a"], ["b"]], [box], [["a"]])
    with pytest.raises(ValueError, match=r"`gt_polys\[0\]`.*NaN"):
        ocr_end_to_end([box], [["a"]], [torch.full((1, 4), float("nan"))], [["a"]])
    with pytest.raises(ValueError, match=r"`pred_polys\[0\]` must have shape"):
        ocr_end_to_end([torch.zeros(1, 3, 2)], [["a"]], [box], [["a"]])
    with pytest.raises(TypeError, match="`pred_polys`"):
        ocr_end_to_end(box, [["a"]], [box], [["a"]])
    with pytest.raises(TypeError, match=r"`gt_texts\[0\]\[0\]`"):
        ocr_end_to_end([box], [["a"]], [box], [[3]])
    with pytest.raises(ValueError, match="`matching`"):
        OCREndToEnd(matching="icdar13")
    with pytest.raises(ValueError, match="`iou_threshold`"):
        OCREndToEnd(iou_threshold=1.5)
    assert "matching:icdar15" in OCREndToEnd(matching="icdar15").signature()


def test_shape_formats_are_equivalent():
    images = _random_images(40, 6, quads=True)
    args = tuple([img[k] for img in images] for k in range(4))
    flat = ([p.reshape(-1, 8) for p in args[0]], args[1], [g.reshape(-1, 8).tolist() for g in args[2]], args[3])
    for matching in ("many-to-many", "icdar15"):
        a, b = ocr_end_to_end(*args, matching=matching), ocr_end_to_end(*flat, matching=matching)
        assert all(float(a[k]) == float(b[k]) for k in a)
    f32 = ocr_end_to_end([p.float() for p in args[0]], args[1], [g.float() for g in args[2]], args[3])
    f64 = ocr_end_to_end(*args)
    assert all(float(f32[k]) == float(f64[k]) for k in f64)


WIDE_TEXTS = ["abc", "ABC", "", " ", "###", "### ", "\u200b", "ǅ", "ǆ", "ß", "SS", "ﬁ", "FI", "İ", "i̇", "привет",
              "ПРИВЕТ", "日本", "🙂", "a\u0301", "á", "\u2028", "x\ty", "\xa0", "ς", "Σ", "σ"]


def _wide_random_images(seed, n_images):
    """Degenerate shapes (zero height, a point), self-crossing and clockwise vertex orders, duplicates of a ground
    truth, empty images on either side, Unicode texts whose upper case changes length (ß → SS)."""
    rng, r = np.random.default_rng(seed), random.Random(seed)

    def quad(base=None):
        if base is not None and r.random() < 0.7:
            return base + rng.normal(0, r.choice([0, 0.01, 0.3, 1.0]), (4, 2)) * (r.random() < 0.8)
        w, h = rng.uniform(0.5, 6, 2)
        q = rng.uniform(0, 20, 2) + np.array([[0, 0], [w, 0], [w, h], [0, h]])
        k = r.random()
        if k < 0.08:
            q[2], q[3] = q[1], q[0]
        elif k < 0.12:
            q[:] = q[0]
        elif k < 0.2:
            q = q[[0, 2, 1, 3]]
        elif k < 0.3:
            q = q[::-1].copy()
        return q

    images = []
    for _ in range(n_images):
        gts = [quad() for _ in range(r.choice([0, 0, 1, 3, 6]))]
        preds = [quad(r.choice(gts) if gts else None) for _ in range(r.choice([0, 1, 3, 8]))]
        images.append((torch.tensor(np.array(preds).reshape(-1, 4, 2)), [r.choice(WIDE_TEXTS) for _ in preds],
                       torch.tensor(np.array(gts).reshape(-1, 4, 2)), [r.choice(WIDE_TEXTS) for _ in gts]))
    return images


@pytest.mark.parametrize("matching, case_sensitive",
                         [("many-to-many", True), ("many-to-many", False), ("icdar15", None)])
def test_wide_random_degenerate_shapes_and_unicode_match_loop_reference(matching, case_sensitive):
    images = _wide_random_images(50, 40)
    args = tuple([img[k] for img in images] for k in range(4))
    if matching == "many-to-many":
        ref = many_to_many_reference(*_as_ref_input(args), case_sensitive=case_sensitive)
    else:
        ref = icdar15_reference(*_as_ref_input(args))
    ours = ocr_end_to_end(*args, matching=matching, case_sensitive=case_sensitive)
    metric = OCREndToEnd(matching=matching, case_sensitive=case_sensitive)
    for batch in _batches(images, [7, 0, 1, 32]):
        if batch[0]:
            metric.update(*batch)
    module = metric.compute()
    f32 = ocr_end_to_end([p.float() for p in args[0]], args[1], [g.float() for g in args[2]], args[3],
                         matching=matching, case_sensitive=case_sensitive)
    for key, value in ref.items():
        assert float(ours[key]) == pytest.approx(value, abs=1e-12), key
        assert float(module[key]) == float(ours[key]) == float(f32[key]), key
    assert ref["bbox_matched_gt"] > 10 and ref["bbox_dontcare_pred"] > 0


@pytest.mark.parametrize("exponent", [-90, 70])
@pytest.mark.parametrize("matching", ["many-to-many", "icdar15"])
def test_float32_polygons_at_extreme_scales_score_as_at_unit_scale(exponent, matching):
    # float32 quads at ~1e21 had every IoU 0 (products overflow float32): no detection matched
    images = _random_images(31, 30)
    args = tuple([img[k] for img in images] for k in range(4))
    unit = [[p.float() for p in args[0]], args[1], [g.float() for g in args[2]], args[3]]
    scaled = [[p * 2.0**exponent for p in unit[0]], args[1], [g * 2.0**exponent for g in unit[2]], args[3]]
    expected = ocr_end_to_end(*unit, matching=matching)
    ours = ocr_end_to_end(*scaled, matching=matching)
    assert {k: float(v) for k, v in ours.items() if isinstance(v, torch.Tensor)} == {
        k: float(v) for k, v in expected.items() if isinstance(v, torch.Tensor)}
    assert float(expected["bbox_matched_gt"]) > 20


@pytest.mark.parametrize("matching", ["many-to-many", "icdar15"])
def test_no_image_gives_zero_rates_under_both_rules(matching):
    rates = [f"{kind}_{stat}" for kind in ("bbox", "e2e") for stat in ("precision", "recall", "f1")]
    metric = OCREndToEnd(matching=matching)
    with pytest.warns(UserWarning, match="before the ``update``"):
        before = metric.compute()
    metric.update([], [], [], [])  # an update with no image
    for out in (before, metric.compute(), ocr_end_to_end([], [], [], [], matching=matching)):
        assert {k: float(out[k]) for k in rates} == dict.fromkeys(rates, 0.0)
        assert int(out["n_images"]) == 0 and int(out["n_pred"]) == 0


def test_images_without_cared_boxes_keep_each_rules_zero_over_zero():
    # evaluated images with nothing cared: many-to-many's 0/0 = 1 (docs/metrics/detection.md), ICDAR's global 0; not the
    # no-image rule
    empty = [torch.zeros(0, 4)]
    m2m = ocr_end_to_end(empty, [[]], empty, [[]])
    icdar = ocr_end_to_end(empty, [[]], empty, [[]], matching="icdar15")
    assert float(m2m["bbox_precision"]) == float(m2m["e2e_recall"]) == 1.0 and int(m2m["n_images"]) == 1
    assert float(icdar["bbox_precision"]) == float(icdar["e2e_recall"]) == 0.0


@pytest.mark.parametrize("matching, reference",
                         [("many-to-many", many_to_many_reference), ("icdar15", icdar15_reference)])
def test_float32_quads_at_the_threshold_decide_as_shapely(matching, reference):
    """A rotated box shifted by a third of its first edge has IoU 1/2 up to the rounding of its float32 coordinates;
    float32 arithmetic decided some of these pairs the other way from shapely's doubles on the same coordinates."""
    rng = np.random.default_rng(5)
    pred_polys, gt_polys = [], []
    for _ in range(150):
        centre, (w, h), theta = rng.uniform(0, 50, 2), rng.uniform([1, 0.5], [8, 4]), rng.uniform(-0.6, 0.6)
        unit = np.array([[-w, -h], [w, -h], [w, h], [-w, h]])
        rot = np.array([[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]])
        gt = unit @ rot.T + centre
        gt_polys.append(torch.tensor(gt[None], dtype=torch.float32))
        pred_polys.append(torch.tensor((gt + (gt[1] - gt[0]) / 3)[None], dtype=torch.float32))
    texts = [["a"]] * 150
    expected = reference([p.double().numpy() for p in pred_polys], texts, [g.double().numpy() for g in gt_polys], texts)
    assert 5 <= expected["bbox_matched_pred"] <= 145  # both sides of the threshold occur
    ours = ocr_end_to_end(pred_polys, texts, gt_polys, texts, matching=matching)
    assert {k: float(ours[k]) for k in expected} == expected



@pytest.mark.parametrize("matching", ["many-to-many", "icdar15"])
def test_exact_ties_on_grid_quads_are_not_overlaps(matching):
    # found by fuzzing against exact rational clipping; the float64 area terms of these grid quads round across the
    # threshold (IoU came out 0.5000000000000001 for an exact 1/2, ~3e-18 for quads that only touch)
    q = lambda pts: torch.tensor([pts], dtype=torch.float64)
    tie_p, tie_g = q([[2, 1], [1, 0], [1, 2], [0, 2]]), q([[1, 0], [1, 2], [2, 2], [0, 1]])  # IoU exactly 1/2
    out = ocr_end_to_end([tie_p], [["a"]], [tie_g], [["a"]], matching=matching)
    assert int(out["bbox_matched_pred"]) == int(out["e2e_matched_gt"]) == 0
    touch_p, touch_g = q([[0, 0], [1, 2], [3, 3], [2, 3]]), q([[3, 1], [1, 0], [3, 0], [1, 1]])  # share a vertex
    out = ocr_end_to_end([touch_p.float()], [["a"]], [touch_g.float()], [["a"]], matching=matching, iou_threshold=0.0)
    assert int(out["bbox_matched_pred"]) == 0
    dc_p, dc_g = q([[2, 1], [1, 0], [1, 2], [0, 0]]), q([[2, 2], [0, 0], [0, 2], [1, 0]])  # IoU 1/2 with a "###"
    out = ocr_end_to_end([dc_p], [["b"]], [dc_g], [["###"]], matching="many-to-many")
    assert int(out["bbox_dontcare_pred"]) == 0 and float(out["bbox_precision"]) == 0.0


def test_meta_tensors_are_errors_naming_the_argument():
    """A tensor on the ``meta`` device has a shape and no values: it failed deep inside torch ("Tensor on device cpu
    is not on the expected device meta!", ``Tensor.item() cannot be called on meta tensors``); found by fuzzing."""
    from gpumetrics.functional import box_iou, polygon_iou_paired

    box = torch.tensor([[0.0, 0.0, 1.0, 1.0]])
    meta = box.to("meta")
    with pytest.raises(ValueError, match=r"`pred_polys\[0\]` is a tensor on the meta device"):
        ocr_end_to_end([meta], [["a"]], [box], [["a"]])
    metric = OCREndToEnd()
    with pytest.raises(ValueError, match=r"`gt_polys\[0\]` is a tensor on the meta device"):
        metric.update([box], [["a"]], [meta], [["a"]])
    metric.update([box], [["a"]], [box], [["a"]])
    assert float(metric.compute()["e2e_f1"]) == 1.0
    with pytest.raises(ValueError, match="`b` is a tensor on the meta device"):
        box_iou(box, meta)
    with pytest.raises(ValueError, match="`a` is a tensor on the meta device"):
        polygon_iou_paired(torch.zeros(1, 4, 2, device="meta"), torch.zeros(1, 4, 2))

"""IoU kernels against shapely (polygons) and torchvision (boxes), incl. degenerate and adversarial quadrilaterals."""

import numpy as np
import pytest
import shapely
import torch
import torchvision

from gpumetrics.functional import box_iou, box_iou_paired, polygon_iou, polygon_iou_paired
from gpumetrics.kernels import iou as kernels
from gpumetrics.kernels.iou import block_pairs, normalize_quads, polygon_intersection_paired
from gpumetrics.kernels.ragged import size_buckets

UNIT = np.array([[-0.5, -0.5], [0.5, -0.5], [0.5, 0.5], [-0.5, 0.5]])


def _quads(rng, n, centre_scale=20.0, size=(0.5, 10.0), offset=0.0):
    """Random convex quadrilaterals: rectangles sheared, rotated and scaled (counter-clockwise)."""
    w = rng.uniform(*size, (n, 1))
    h = rng.uniform(*size, (n, 1))
    shear = rng.uniform(-0.8, 0.8, (n, 1))
    theta = rng.uniform(0, 2 * np.pi, (n, 1))
    x = UNIT[None, :, 0] * w + shear * UNIT[None, :, 1] * h
    y = UNIT[None, :, 1] * h
    c, s = np.cos(theta), np.sin(theta)
    pts = np.stack([x * c - y * s, x * s + y * c], -1)
    return pts + rng.uniform(-centre_scale, centre_scale, (n, 1, 2)) + offset


def _adversarial_pairs(seed=0, per_kind=1000):
    """10 kinds × ``per_kind`` pairs: random, rotated near-copies, tiny, huge coordinates, touching, identical,
    nested, reversed orientation, permuted vertex order, axis-aligned sharing edges. Returns (a, b, hull_needed)."""
    rng = np.random.default_rng(seed)
    kinds = []
    a = _quads(rng, per_kind)
    kinds.append((a, _quads(rng, per_kind)))  # random, mostly overlapping
    a = _quads(rng, per_kind)
    theta = rng.uniform(-0.3, 0.3, (per_kind, 1, 1))
    c = a.mean(1, keepdims=True)
    rot = np.concatenate([np.cos(theta), -np.sin(theta), np.sin(theta), np.cos(theta)], -1).reshape(-1, 2, 2)
    kinds.append((a, np.einsum("nij,nvj->nvi", rot, a - c) + c + rng.normal(0, 0.3, (per_kind, 1, 2))))
    a = _quads(rng, per_kind, centre_scale=0.01, size=(1e-3, 1e-2))  # tiny
    kinds.append((a, _quads(rng, per_kind, centre_scale=0.01, size=(1e-3, 1e-2))))
    a = _quads(rng, per_kind, offset=1e5)  # huge coordinates
    kinds.append((a, a + rng.normal(0, 2, (per_kind, 1, 2))))
    a = _quads(rng, per_kind)  # touching: b is a translated by one edge vector (shares that edge)
    kinds.append((a, a + (a[:, 1:2] - a[:, 0:1])))
    a = _quads(rng, per_kind)
    kinds.append((a, np.roll(a, 2, axis=1)))  # identical (other starting vertex)
    a = _quads(rng, per_kind)  # nested: b shrunk towards a vertex, sharing it
    k = rng.uniform(0.1, 0.9, (per_kind, 1, 1))
    kinds.append((a, a[:, :1] + k * (a - a[:, :1])))
    a = _quads(rng, per_kind)
    kinds.append((a[:, ::-1], _quads(rng, per_kind)[:, ::-1]))  # reversed orientation (clockwise)
    a = _quads(rng, per_kind)  # permuted vertex order (self-crossing lists of a convex set of points)
    perm = np.array([0, 2, 1, 3])
    kinds.append((a[:, perm], _quads(rng, per_kind)[:, perm[::-1]]))
    lo = rng.integers(0, 20, (per_kind, 2)).astype(float)  # integer axis-aligned boxes, many shared edges
    wh = rng.integers(0, 6, (per_kind, 2)).astype(float)
    lo2 = lo + rng.integers(-3, 4, (per_kind, 2))
    wh2 = rng.integers(0, 6, (per_kind, 2)).astype(float)
    box = lambda l, s: np.stack([l, l + [s[:, 0], 0 * s[:, 0]][0][:, None] * [1, 0], l + s,  # noqa: E731
                                 l + s * [0, 1]], 1)
    kinds.append((box(lo, wh), box(lo2, wh2)))
    a = np.concatenate([k[0] for k in kinds])
    b = np.concatenate([k[1] for k in kinds])
    return np.ascontiguousarray(a), np.ascontiguousarray(b)


def _as_shapely(quads):
    """Polygons as given when their ring is valid, else (permuted vertex order) the convex hull of the 4 points."""
    polys = shapely.polygons(quads)
    hulls = shapely.convex_hull(shapely.multipoints(quads))
    return np.where(shapely.is_valid(polys), polys, hulls)


def _shapely_iou(a, b):
    # (GEOS can lose a touching pair built by convex_hull — it reports full overlap for two parallelograms sharing
    # an edge up to 1 ulp — so valid rings are passed as they are.)
    pa, pb = _as_shapely(a), _as_shapely(b)
    inter = shapely.area(shapely.intersection(pa, pb))
    union = shapely.area(pa) + shapely.area(pb) - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)


def test_adversarial_set_is_what_it_claims():
    a, b = _adversarial_pairs(per_kind=10)
    assert a.shape == b.shape == (100, 4, 2)
    ref = _shapely_iou(a, b)
    assert np.allclose(ref[50:60], 1.0)  # identical kind
    assert np.allclose(ref[40:50], 0.0)  # touching kind
    assert (ref[60:70] > 0).all() and (ref[60:70] < 1).all()  # nested kind


def test_polygon_iou_paired_float64_matches_shapely_on_10k_adversarial_pairs():
    a, b = _adversarial_pairs()
    ref = _shapely_iou(a, b)
    ours = polygon_iou_paired(torch.from_numpy(a), torch.from_numpy(b))
    assert ours.dtype == torch.float64
    assert torch.isfinite(ours).all() and (ours >= 0).all() and (ours <= 1).all()
    assert np.abs(ours.numpy() - ref).max() <= 1e-9


def test_polygon_iou_paired_float32_matches_shapely_within_1e5():
    a, b = _adversarial_pairs(seed=1)
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    ref = _shapely_iou(a32.astype(np.float64), b32.astype(np.float64))  # same (rounded) input coordinates
    ours = polygon_iou_paired(torch.from_numpy(a32), torch.from_numpy(b32))
    assert ours.dtype == torch.float32
    assert np.abs(ours.double().numpy() - ref).max() <= 1e-5


def test_polygon_iou_all_pairs_matches_shapely_and_paired():
    rng = np.random.default_rng(2)
    a, b = _quads(rng, 70, centre_scale=8), _quads(rng, 50, centre_scale=8)[:, ::-1]
    ours = polygon_iou(torch.from_numpy(a), torch.from_numpy(np.ascontiguousarray(b)))
    ia, ib = np.meshgrid(np.arange(70), np.arange(50), indexing="ij")
    ref = _shapely_iou(a[ia.ravel()], b[ib.ravel()]).reshape(70, 50)
    assert ours.shape == (70, 50)
    assert np.abs(ours.numpy() - ref).max() <= 1e-9
    assert (ref > 0).mean() > 0.2 and (ref == 0).mean() > 0.2  # both skipped and clipped pairs are exercised


def test_polygon_iou_chunking_gives_the_same_values(monkeypatch):
    rng = np.random.default_rng(3)
    a, b = torch.from_numpy(_quads(rng, 40, centre_scale=5)), torch.from_numpy(_quads(rng, 30, centre_scale=5))
    full = polygon_iou(a, b)
    monkeypatch.setattr(kernels, "_CHUNK", 7)
    assert torch.equal(polygon_iou(a, b), full)


def test_degenerate_quads_are_finite_and_zero():
    sq = torch.tensor([[[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]]], dtype=torch.float64)
    degenerate = torch.tensor(
        [
            [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]],  # a point
            [[0.0, 0.0], [1.0, 1.0], [2.0, 2.0], [0.5, 0.5]],  # collinear, inside the square's diagonal
            [[0.0, 0.0], [2.0, 0.0], [2.0, 0.0], [0.0, 0.0]],  # a segment on the square's edge
            [[1.0, 1.0], [1.0, 1.0], [1.0, 2.0], [1.0, 2.0]],  # a segment inside
        ],
        dtype=torch.float64,
    )
    for values in (polygon_iou(sq, degenerate), polygon_iou(degenerate, degenerate), polygon_iou(degenerate, sq).T):
        assert torch.isfinite(values).all()
        assert (values == 0).all()
    assert torch.equal(polygon_iou_paired(degenerate, degenerate), torch.zeros(4, dtype=torch.float64))


def test_triangle_given_as_quad_and_concave_input_use_the_convex_hull():
    tri = torch.tensor([[[0.0, 0.0], [2.0, 0.0], [2.0, 0.0], [0.0, 2.0]]], dtype=torch.float64)
    dart = torch.tensor([[[0.0, 0.0], [4.0, 0.0], [1.0, 1.0], [0.0, 4.0]]], dtype=torch.float64)  # (1,1) is reflex
    hull = torch.tensor([[[0.0, 0.0], [4.0, 0.0], [0.0, 4.0], [0.0, 4.0]]], dtype=torch.float64)
    sq = torch.tensor([[[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]], dtype=torch.float64)
    assert polygon_iou_paired(tri, sq).item() == pytest.approx(0.5, abs=1e-12)  # the square lies inside
    assert polygon_iou_paired(dart, sq).item() == pytest.approx(polygon_iou_paired(hull, sq).item(), abs=1e-12)
    inter, area_a, area_b = polygon_intersection_paired(dart, sq)
    assert (inter.item(), area_a.item(), area_b.item()) == pytest.approx((1.0, 8.0, 1.0))


def test_normalize_quads_is_counter_clockwise_and_order_free():
    rng = np.random.default_rng(4)
    a = torch.from_numpy(_quads(rng, 50))
    for perm in ([0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1], [1, 3, 0, 2]):
        normal = normalize_quads(a[:, perm])
        rel = normal - normal.mean(1, keepdim=True)
        nxt = rel.roll(-1, 1)
        assert ((rel[..., 0] * nxt[..., 1] - rel[..., 1] * nxt[..., 0]) > 0).all()
        assert torch.equal(polygon_iou_paired(a[:, perm], a), torch.ones(50, dtype=torch.float64))


@pytest.mark.parametrize("fmt", ["xyxy", "xywh"])
def test_box_iou_matches_torchvision(fmt):
    g = torch.Generator().manual_seed(5)
    a = torch.rand(300, 4, generator=g, dtype=torch.float64) * 50
    b = torch.rand(200, 4, generator=g, dtype=torch.float64) * 50
    a = torch.cat([a, torch.tensor([[3.0, 3.0, 3.0, 3.0], [1.0, 1.0, 1.0, 9.0]], dtype=torch.float64)])  # degenerate
    if fmt == "xyxy":
        a[:, 2:] = a[:, :2] + a[:, 2:].abs() * (a[:, 2:] != a[:, :2])
        b[:, 2:] = b[:, :2] + b[:, 2:]
        ta, tb = a, b
    else:
        ta = torch.cat([a[:, :2], a[:, :2] + a[:, 2:]], 1)
        tb = torch.cat([b[:, :2], b[:, :2] + b[:, 2:]], 1)
    ref = torchvision.ops.box_iou(ta, tb)
    ours = box_iou(a, b, fmt=fmt)
    defined = torch.isfinite(ref)
    assert torch.allclose(ours[defined], ref[defined], atol=1e-12, rtol=0)
    assert (ours[~defined] == 0).all()
    assert torch.allclose(box_iou_paired(a[:200], b, fmt=fmt), ours[:200].diagonal(), atol=1e-12)
    assert (ours > 0).float().mean() > 0.2


def test_box_iou_equals_polygon_iou_on_boxes():
    g = torch.Generator().manual_seed(6)
    a = torch.rand(60, 4, generator=g, dtype=torch.float64) * 20
    a[:, 2:] += a[:, :2]
    b = torch.rand(40, 4, generator=g, dtype=torch.float64) * 20
    b[:, 2:] += b[:, :2]
    assert torch.allclose(box_iou(a, b), polygon_iou(kernels.boxes_to_quads(a), kernels.boxes_to_quads(b)), atol=1e-12)


def test_block_pairs():
    ia, ib, group = block_pairs(torch.tensor([2, 0, 3]), torch.tensor([2, 4, 1]))
    expected = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 6), (3, 6), (4, 6)]
    assert list(zip(ia.tolist(), ib.tolist())) == expected
    assert group.tolist() == [0, 0, 0, 0, 2, 2, 2]
    empty = block_pairs(torch.tensor([0, 0]), torch.tensor([3, 0]))
    assert all(x.numel() == 0 for x in empty)


def test_bad_inputs_name_the_argument():
    sq = torch.zeros(2, 4, 2)
    with pytest.raises(ValueError, match="`a`"):
        polygon_iou(torch.zeros(2, 3, 2), sq)
    with pytest.raises(ValueError, match="`b`"):
        polygon_iou(sq, torch.zeros(2, 8))
    with pytest.raises(ValueError, match="`a`.*NaN"):
        polygon_iou(torch.full((1, 4, 2), float("nan")), sq)
    with pytest.raises(ValueError, match="`b`.*NaN or infinite"):
        polygon_iou_paired(sq, torch.full((2, 4, 2), float("inf")))
    with pytest.raises(ValueError, match="same number"):
        polygon_iou_paired(sq, torch.zeros(3, 4, 2))
    with pytest.raises(TypeError, match="`a`"):
        polygon_iou([[0, 0]], sq)
    with pytest.raises(ValueError, match="`fmt`"):
        box_iou(torch.zeros(1, 4), torch.zeros(1, 4), fmt="cxcywh")
    with pytest.raises(ValueError, match="`b`"):
        box_iou(torch.zeros(1, 4), torch.zeros(4))
    with pytest.raises(TypeError, match="`a`"):
        box_iou(torch.zeros(1, 4, dtype=torch.bool), torch.zeros(1, 4))


def test_empty_inputs():
    assert polygon_iou(torch.zeros(0, 4, 2), torch.zeros(3, 4, 2)).shape == (0, 3)
    assert polygon_iou_paired(torch.zeros(0, 4, 2), torch.zeros(0, 4, 2)).shape == (0,)
    assert box_iou(torch.zeros(2, 4), torch.zeros(0, 4)).shape == (2, 0)


@pytest.mark.slow
def test_compiled_kernel_gives_the_same_values():
    a, b = _adversarial_pairs(seed=7, per_kind=200)
    ta, tb = torch.from_numpy(a), torch.from_numpy(b)
    assert torch.allclose(polygon_iou_paired(ta, tb, compiled=True), polygon_iou_paired(ta, tb), atol=1e-12)


def test_block_overlap_pairs_equals_filtered_block_pairs(monkeypatch):
    g = torch.Generator().manual_seed(8)
    counts_a, counts_b = torch.tensor([3, 0, 5, 2, 4]), torch.tensor([4, 2, 0, 3, 5])
    lo_a = torch.rand(int(counts_a.sum()), 2, generator=g) * 10
    lo_b = torch.rand(int(counts_b.sum()), 2, generator=g) * 10
    hi_a = lo_a + torch.rand(lo_a.shape, generator=g) * 5
    hi_b = lo_b + torch.rand(lo_b.shape, generator=g) * 5
    hi_b[0] = lo_b[0]  # zero-area box never overlaps
    ia, ib, _ = block_pairs(counts_a, counts_b)
    keep = ((lo_a[ia] < hi_b[ib]) & (lo_b[ib] < hi_a[ia])).all(1)
    expected = list(zip(ia[keep].tolist(), ib[keep].tolist()))
    got_a, got_b = kernels.block_overlap_pairs(lo_a, hi_a, counts_a, lo_b, hi_b, counts_b)
    assert list(zip(got_a.tolist(), got_b.tolist())) == expected and 0 < len(expected) < ia.numel()
    monkeypatch.setattr(kernels, "_CHUNK", 3)
    small_a, small_b = kernels.block_overlap_pairs(lo_a, hi_a, counts_a, lo_b, hi_b, counts_b)
    assert torch.equal(small_a, got_a) and torch.equal(small_b, got_b)



def _overlap_case(seed: int, counts_a: list, counts_b: list, extent: float = 10.0) -> tuple:
    g = torch.Generator().manual_seed(seed)
    counts_a, counts_b = torch.tensor(counts_a), torch.tensor(counts_b)
    lo_a = torch.rand(int(counts_a.sum()), 2, generator=g, dtype=torch.float64) * extent
    lo_b = torch.rand(int(counts_b.sum()), 2, generator=g, dtype=torch.float64) * extent
    return (lo_a, lo_a + 0.5 + torch.rand(lo_a.shape, generator=g, dtype=torch.float64) * 5, counts_a,
            lo_b, lo_b + 0.5 + torch.rand(lo_b.shape, generator=g, dtype=torch.float64) * 5, counts_b)


def test_block_overlap_pairs_in_size_buckets_equal_one_padded_block(monkeypatch):
    """Groups of very different sizes are tested in buckets of similar sizes: same pairs, same order."""
    lo_a, hi_a, counts_a, lo_b, hi_b, counts_b = _overlap_case(9, [3, 0, 40, 2, 1, 17, 9, 0, 5, 64],
                                                               [4, 2, 33, 0, 1, 2, 70, 3, 5, 1])
    ia, ib, _ = block_pairs(counts_a, counts_b)
    keep = ((lo_a[ia] < hi_b[ib]) & (lo_b[ib] < hi_a[ia])).all(1)
    whole = kernels.block_overlap_pairs(lo_a, hi_a, counts_a, lo_b, hi_b, counts_b)
    monkeypatch.setattr(kernels, "_OVERLAP_SLACK_CELLS", 0)
    assert len(size_buckets(counts_a.numpy(), counts_b.numpy(), 0)) > 3
    bucketed = kernels.block_overlap_pairs(lo_a, hi_a, counts_a, lo_b, hi_b, counts_b)
    for got in (whole, bucketed):
        assert torch.equal(got[0], ia[keep]) and torch.equal(got[1], ib[keep])


def test_one_crowded_group_among_many_small_ones_is_not_padded_to_its_size():
    """One image of 3,000 × 3,000 boxes among 20,000 images of one box each: padding every image to the crowded one
    held four [20,001, 3,000, 2] float64 blocks (3.8 GB) and tested 1.8e11 cells; in size buckets the work is the
    9e6 + 20,000 cells of the actual pairs."""
    lo_a, hi_a, counts_a, lo_b, hi_b, counts_b = _overlap_case(10, [3_000] + [1] * 20_000, [3_000] + [1] * 20_000,
                                                               extent=1_000.0)
    index_a, index_b = kernels.block_overlap_pairs(lo_a, hi_a, counts_a, lo_b, hi_b, counts_b)
    crowded = index_a < 3_000
    ia, ib, _ = block_pairs(counts_a[:1], counts_b[:1])
    keep = ((lo_a[ia] < hi_b[ib]) & (lo_b[ib] < hi_a[ia])).all(1)
    assert torch.equal(index_a[crowded], ia[keep]) and torch.equal(index_b[crowded], ib[keep])
    single = ((lo_a[3_000:] < hi_b[3_000:]) & (lo_b[3_000:] < hi_a[3_000:])).all(1).nonzero()[:, 0] + 3_000
    assert torch.equal(index_a[~crowded], single) and torch.equal(index_b[~crowded], single)

def test_integer_coordinates_are_computed_in_float64():
    big = torch.tensor([[[100_000_001, 0], [100_000_003, 0], [100_000_003, 2], [100_000_001, 2]]])
    shifted = big + torch.tensor([1, 0])
    assert polygon_iou_paired(big, shifted).dtype == torch.float64
    assert polygon_iou_paired(big, shifted).item() == pytest.approx(1 / 3, abs=1e-12)
    assert box_iou(torch.tensor([[0, 0, 2, 2]]), torch.tensor([[1, 0, 3, 2]])).item() == pytest.approx(1 / 3)


def test_rounded_collinear_quads_are_degenerate_not_noise():
    # four float points on one line (not exactly collinear after rounding): the computed areas are ~1e-16 rounding
    # noise, and two such quads on crossing lines once gave IoU 0.3986 where shapely (and exact arithmetic) give ~0
    rng = np.random.default_rng(11)
    p, d = rng.uniform(-3, 3, (200, 1, 2)), rng.uniform(-1, 1, (200, 1, 2))
    a = p + rng.uniform(-2, 2, (200, 4, 1)) * d
    q, e = rng.uniform(-3, 3, (200, 1, 2)), rng.uniform(-1, 1, (200, 1, 2))
    b = q + rng.uniform(-2, 2, (200, 4, 1)) * e
    a[0] = [[-2.6759780280870946, 0.9697371268593556], [-2.534488020659126, 0.10204588445525137],
            [-2.5680317684318923, 0.307753811883688], [-2.5865903738192544, 0.4215649541584916]]
    b[0] = [[-1.198069459863747, 0.8715350571023217], [-3.6024249759097167, -0.11082722490360952],
            [-1.334876946091988, 0.8156387832485759], [-3.790524546371234, -0.18768022024881986]]
    ref = _shapely_iou(a, b)
    ours = polygon_iou_paired(torch.from_numpy(a), torch.from_numpy(b))
    assert np.abs(ours.numpy() - ref).max() <= 1e-9
    assert (ours == 0).all()  # docs/metrics/detection.md: degenerate shapes give 0
    assert (polygon_iou(torch.from_numpy(a), torch.from_numpy(b)) == 0).all()


def test_thin_float32_quads_at_large_coordinates_match_shapely():
    # the vertex order is found by angle around an interior point; a mean of raw float32 coordinates ~1e6 is off by
    # ~0.1 and fell outside quads thinner than that (wrong order → wrong area, IoU off by up to 1)
    rng = np.random.default_rng(12)
    p, d = rng.uniform(-3, 3, (300, 1, 2)) + 1e6, rng.uniform(-1, 1, (300, 1, 2))
    a = (p + rng.uniform(-2, 2, (300, 4, 1)) * d).astype(np.float32)
    b = (a + rng.uniform(-0.5, 0.5, (300, 1, 1)) * d + rng.normal(0, 0.02, (300, 1, 2))).astype(np.float32)
    # shapely itself loses digits at 1e6 on such slivers: give it the same shapes moved (exactly) to the origin
    pa = shapely.convex_hull(shapely.multipoints(a.astype(np.float64) - 1e6))  # the rounded points are seldom a
    pb = shapely.convex_hull(shapely.multipoints(b.astype(np.float64) - 1e6))  # convex ring in their given order
    inter = shapely.area(shapely.intersection(pa, pb))
    union = shapely.area(pa) + shapely.area(pb) - inter
    ref = np.where(union > 0, inter / np.where(union > 0, union, 1), 0.0)
    ours = polygon_iou_paired(torch.from_numpy(a), torch.from_numpy(b))
    assert (ref > 0).sum() > 100
    assert np.abs(ours.double().numpy() - ref).max() <= 1e-5


@pytest.mark.parametrize("exponent", [-100, -70, -40, 40, 70, 100, 120])
def test_float32_coordinates_of_any_magnitude_give_the_exact_iou(exponent):
    # products of float32 coordinates overflow at ~1e19 and underflow at ~1e-19: identical boxes at 1e20 got IoU 0
    # and every IoU at 1e30 was 0. Scaled by 2**exponent (exact in float32) the IoU must not change; the reference is
    # torchvision / shapely in float64 on the unscaled (same) coordinates.
    scale = 2.0**exponent
    rng = np.random.default_rng(exponent + 200)
    qa = _quads(rng, 300)
    qb = qa + rng.normal(0, 2, (300, 1, 2))  # mostly overlapping
    qa32, qb32 = qa.astype(np.float32), qb.astype(np.float32)
    ref = _shapely_iou(qa32.astype(np.float64), qb32.astype(np.float64))
    big_a, big_b = torch.from_numpy(qa32) * scale, torch.from_numpy(qb32) * scale
    assert torch.isfinite(big_a).all() and (big_a.abs() > 0).all()
    ours = polygon_iou_paired(big_a, big_b)
    assert ours.dtype == torch.float32 and (ref > 0).sum() > 100
    assert np.abs(ours.double().numpy() - ref).max() <= 1e-5
    assert torch.equal(polygon_iou_paired(big_a, big_a), torch.ones(300))  # identical quads: exactly 1
    assert np.abs(polygon_iou(big_a[:40], big_b[:50]).double().numpy() - _shapely_iou(
        np.repeat(qa32[:40, None], 50, 1).reshape(-1, 4, 2).astype(np.float64),
        np.repeat(qb32[None, :50], 40, 0).reshape(-1, 4, 2).astype(np.float64)).reshape(40, 50)).max() <= 1e-5

    boxes_a = torch.from_numpy(np.concatenate([qa32.min(1), qa32.max(1)], 1))
    boxes_b = torch.from_numpy(np.concatenate([qb32.min(1), qb32.max(1)], 1))
    ref_boxes = torchvision.ops.box_iou(boxes_a.double(), boxes_b.double())
    ours_boxes = box_iou(boxes_a * scale, boxes_b * scale)
    assert ours_boxes.dtype == torch.float32
    assert (ours_boxes.double() - ref_boxes).abs().max() <= 1e-6
    assert torch.equal(box_iou_paired(boxes_a * scale, boxes_a * scale), torch.ones(300))
    xywh = torch.cat([boxes_a[:, :2], boxes_a[:, 2:] - boxes_a[:, :2]], 1) * scale
    assert torch.equal(box_iou_paired(xywh, xywh, fmt="xywh"), torch.ones(300))
    inter, area_a, _ = polygon_intersection_paired(big_a, big_a)
    assert torch.isfinite(area_a).all() and torch.equal(inter, area_a)


def test_float64_coordinates_beyond_1e150_are_an_error_naming_the_argument():
    box = torch.tensor([[0.0, 0.0, 1.0, 1.0]], dtype=torch.float64)
    with pytest.raises(ValueError, match=r"`b` holds coordinates up to \|x\| = 1e\+200"):
        box_iou(box, box * 1e200)  # products overflow float64: was IoU 0 for identical boxes
    with pytest.raises(ValueError, match=r"`a` holds coordinates up to"):
        polygon_iou_paired(kernels.boxes_to_quads(box) * 1e160, kernels.boxes_to_quads(box))
    assert float(box_iou(box * 1e150, box * 1e150)) == 1.0


def test_xywh_boxes_with_negative_size_are_an_error_naming_the_argument():
    good = torch.tensor([[0.0, 0.0, 2.0, 2.0]])
    for bad in ([[0.0, 0.0, -1.0, 2.0]], [[5.0, 5.0, 1.0, -0.5]]):
        with pytest.raises(ValueError, match="`b` holds \\[x, y, w, h\\] boxes with a negative width or height"):
            box_iou(good, torch.tensor(bad), fmt="xywh")  # was: accepted, a box "reaching back" overlapped others
        with pytest.raises(ValueError, match="`a` holds \\[x, y, w, h\\] boxes with a negative"):
            box_iou_paired(torch.tensor(bad), good, fmt="xywh")
    # zero size is a valid (empty) box; an unordered xyxy box is documented as zero-area (torchvision: undefined)
    assert float(box_iou(good, torch.tensor([[1.0, 1.0, 0.0, 3.0]]), fmt="xywh")) == 0.0
    assert float(box_iou(good, torch.tensor([[2.0, 2.0, 0.0, 0.0]]))) == 0.0


@pytest.mark.parametrize("seed", range(6))
def test_block_box_iou_hits_equal_the_flat_pairs_above_the_threshold(seed, monkeypatch):
    """Dense per-group blocks (buckets of similar sizes, blocks split by cells) give the very pairs and IoU values of
    ``block_pairs`` + ``box_iou_paired`` at or above the threshold, in (a, b) order."""
    from gpumetrics.kernels import iou as kernel

    g = torch.Generator().manual_seed(seed)
    sizes = [0, 1, 2, 3, 7, 40] if seed % 2 else [0, 1, 2, 5]
    counts_a = torch.tensor([sizes[int(k)] for k in torch.randint(0, len(sizes), (30,), generator=g)])
    counts_b = torch.tensor([sizes[int(k)] for k in torch.randint(0, len(sizes), (30,), generator=g)])
    if seed == 0:
        counts_a[3], counts_b[3] = 300, 200  # one large group: another bucket

    def boxes(n):
        corner = torch.rand(n, 2, generator=g, dtype=torch.float64) * 50
        size = torch.randint(0, 4, (n, 2), generator=g).double() * 5  # grid sizes: ties and empty boxes
        return torch.cat([corner.round(), corner.round() + size], 1)

    a, b = boxes(int(counts_a.sum())), boxes(int(counts_b.sum()))
    if seed < 3:
        monkeypatch.setattr(kernel, "_OVERLAP_SLACK_CELLS", 0)  # groups split by size octaves: several buckets
    if seed >= 3:
        monkeypatch.setattr(kernel, "_OVERLAP_BLOCK_CELLS", 64)  # many blocks per bucket
    for threshold in (0.0, 0.3, 0.5):
        ia, ib, _ = kernel.block_pairs(counts_a, counts_b)
        flat = kernel.box_iou_paired(a[ia], b[ib])
        keep = flat >= threshold
        got = kernel.block_box_iou_hits(a, counts_a, b, counts_b, counts_a.numpy(), counts_b.numpy(), threshold)
        assert torch.equal(got[0], ia[keep]) and torch.equal(got[1], ib[keep]) and torch.equal(got[2], flat[keep])

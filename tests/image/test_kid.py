"""KID vs torchmetrics ``KernelInceptionDistance`` on the same features and the same subsets; DDP; bad inputs."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn
from torchmetrics.image.kid import KernelInceptionDistance as TorchmetricsKID

from gpumetrics.image.kid import (
    KernelInceptionDistance, canonical_order, kernel_inception_distance, subset_index_chunks, subset_indices,
)
from tests.helpers.harness import check_metric
from tests.helpers.memory import run_python

DIMS = 10
OPTIONS = {"subsets": 7, "subset_size": 12, "seed": 5}


class _Identity(nn.Module):
    def __init__(self, dims: int = DIMS) -> None:
        super().__init__()
        self.dims = dims
        self.num_features = dims

    def forward(self, features):
        return features


def _features(n, seed, shift=0.0, d=DIMS):
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(n, d, generator=generator, dtype=torch.float64).abs() + shift)


def _torchmetrics_kid(real, fake, subsets=7, subset_size=12, seed=5, **kernel):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        metric = TorchmetricsKID(feature=_Identity(real.shape[1]), subsets=subsets, subset_size=subset_size, **kernel)
    metric.update(real, real=True)
    metric.update(fake, real=False)
    torch.manual_seed(seed)  # torchmetrics draws its subsets from the global generator
    mean, std = metric.compute()
    return mean, std


def test_gram_route_for_overlapping_subsets_matches_torchmetrics_and_the_subset_route():
    """50 subsets of 12 from ~30 samples overlap heavily: the full Gram matrices are computed once and gathered."""
    from gpumetrics.image.kid import _kid_compute

    real, fake = _features(30, seed=3), _features(27, seed=4, shift=0.1)
    options = {"subsets": 50, "subset_size": 12, "seed": 9}
    theirs = _torchmetrics_kid(real, fake, **options)
    gram = kernel_inception_distance(real, fake, **options, canonical_order=False)
    per_subset = _kid_compute(real, fake, 50, 12, 3, None, 1.0, 9, canonical=False, max_chunk_bytes=3 * 12 * 12 * 8 * 4)
    for a, b, c in zip(gram, per_subset, theirs):
        assert float(a) == pytest.approx(float(c), rel=1e-9, abs=1e-12)
        assert float(b) == pytest.approx(float(c), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("kernel", [{}, {"degree": 2, "gamma": 0.3, "coef": 0.5}])
def test_kid_matches_torchmetrics_on_the_same_subsets(kernel):
    real, fake = _features(40, seed=0), _features(31, seed=1, shift=0.2)
    # arrival order: exactly torchmetrics' subsets
    ours = kernel_inception_distance(real, fake, **OPTIONS, **kernel, canonical_order=False)
    theirs = _torchmetrics_kid(real, fake, **OPTIONS, **kernel)
    assert float(ours[0]) > 1e-3  # the sets differ: a real signal to compare
    for a, b in zip(ours, theirs):
        assert float(a) == pytest.approx(float(b), rel=1e-9, abs=1e-12)
    # canonical order (default): torchmetrics on the canonically sorted rows, whatever order they came in
    ours = kernel_inception_distance(real.flip(0), fake, **OPTIONS, **kernel)
    theirs = _torchmetrics_kid(canonical_order(real), canonical_order(fake), **OPTIONS, **kernel)
    for a, b in zip(ours, theirs):
        assert float(a) == pytest.approx(float(b), rel=1e-9, abs=1e-12)


def test_subsets_are_seeded_and_bounded_memory_chunks_agree():
    real, fake = _features(30, seed=2), _features(30, seed=3, shift=0.1)
    from gpumetrics.image.kid import _kid_compute

    whole = _kid_compute(real, fake, 9, 10, 3, None, 1.0, seed=1)
    chunked = _kid_compute(real, fake, 9, 10, 3, None, 1.0, seed=1, max_chunk_bytes=1)  # one subset per chunk
    assert torch.allclose(torch.stack(whole), torch.stack(chunked), rtol=1e-12, atol=0)
    other_seed = _kid_compute(real, fake, 9, 10, 3, None, 1.0, seed=2)
    assert float(other_seed[0]) != float(whole[0])
    first, second = subset_indices(30, 25, 4, 10, seed=0)
    assert first.shape == (4, 10) and all(len(set(row.tolist())) == 10 for row in second)



def test_subset_chunks_hold_their_indices_not_a_permutation_per_subset():
    """Every subset is the first ``subset_size`` entries of a permutation of all samples: kept as a slice, each held
    its whole permutation (``subsets · n`` int64 per side: 1,500 subsets of 100,000 samples took 2.4 GB, where
    torchmetrics holds one permutation at a time). Chunks hold only their own indices, and equal ``subset_indices``."""
    chunks = list(subset_index_chunks(1_000, 900, subsets=7, subset_size=3, seed=4, chunk=3))
    assert [tuple(real.shape) for real, _ in chunks] == [(3, 3), (3, 3), (1, 3)]
    for real, fake in chunks:
        for indices in (real, fake):
            assert indices.untyped_storage().nbytes() == indices.numel() * 8
    first, second = subset_indices(1_000, 900, 7, 3, seed=4)
    assert torch.equal(torch.cat([r for r, _ in chunks]), first)
    assert torch.equal(torch.cat([f for _, f in chunks]), second)
    script = """
        from tests.helpers.memory import limit_address_space
        import torch
        from gpumetrics.image.kid import kernel_inception_distance
        real, fake = torch.rand(100_000, 2, dtype=torch.float64), torch.rand(100_000, 2, dtype=torch.float64)
        limit_address_space(1 << 30)
        print(float(kernel_inception_distance(real, fake, subsets=1_500, subset_size=2)[0]))
    """
    run_python(script)

class FeaturePairKID(KernelInceptionDistance):
    def __init__(self, **kwargs):
        super().__init__(feature=_Identity(), **kwargs)

    def update(self, real_features, fake_features):
        super().update(real_features, real=True)
        super().update(fake_features, real=False)


def _functional(real, fake, **options):
    return kernel_inception_distance(real, fake, **options)


@pytest.mark.ddp
def test_kid_harness_with_ddp():
    sizes = [(9, 7), (1, 4), (14, 10), (6, 3)]
    batches = [(_features(r, seed=i).float(), _features(f, seed=20 + i, shift=0.3).float())
               for i, (r, f) in enumerate(sizes)]
    value = check_metric(
        FeaturePairKID, _functional,
        lambda real, fake: _torchmetrics_kid(canonical_order(real.double()), canonical_order(fake.double())), batches,
        metric_kwargs=OPTIONS, atol=1e-12, reference_atol=1e-9, check_forward=False,
    )
    assert float(value[0]) > 0


def test_reset_real_features_and_bad_inputs():
    real, fake = _features(20, seed=0), _features(20, seed=1, shift=0.1)
    metric = KernelInceptionDistance(feature=_Identity(), reset_real_features=False, subsets=3, subset_size=10)
    metric.update_features(real, real=True)
    metric.update_features(fake, real=False)
    metric.reset()
    assert len(metric.real_features) == 1 and metric.fake_features == []
    with pytest.raises(ValueError, match="real and generated"):
        metric.compute()
    metric.update_features(fake[:5], real=False)
    with pytest.raises(ValueError, match="`subset_size`"):
        metric.compute()
    with pytest.raises(ValueError, match="`features`"):
        metric.update_features(torch.rand(3, DIMS + 1), real=True)
    with pytest.raises(TypeError, match="`real`"):
        metric.update_features(real, real=None)
    with pytest.raises(ValueError, match="`subset_size`"):
        KernelInceptionDistance(feature=_Identity(), subset_size=1)
    with pytest.raises(ValueError, match="`subsets`"):
        KernelInceptionDistance(feature=_Identity(), subsets=0)
    with pytest.raises(ValueError, match="`gamma`"):
        kernel_inception_distance(real, fake, gamma=-1.0)
    with pytest.raises(ValueError, match="`fake_features`"):
        kernel_inception_distance(real, torch.rand(20, DIMS + 1))
    with pytest.raises(ValueError, match="`images`.*channels"):
        KernelInceptionDistance(feature=64, weights="random").update(torch.rand(2, 4, 9, 9), real=True)
    assert "kernel:poly(degree=3,gamma=1/d,coef=1.0)" in metric.signature()


def test_non_finite_features_are_an_error_naming_the_argument():
    real, fake = _features(10, seed=0), _features(10, seed=1)
    real[3, 1] = float("nan")  # was: NaN, or a finite value when no subset drew row 3
    with pytest.raises(ValueError, match="`real_features` holds NaN or infinite"):
        kernel_inception_distance(real, fake, subsets=2, subset_size=5)
    fake[0, 0] = float("inf")
    metric = KernelInceptionDistance(feature=_Identity(), subsets=2, subset_size=5)
    with pytest.raises(ValueError, match="`features` holds NaN or infinite"):
        metric.update_features(fake, real=False)


@pytest.mark.parametrize("option, value", [
    ("gamma", float("nan")), ("gamma", float("inf")), ("gamma", 0.0), ("gamma", True), ("gamma", "0.1"),
    ("coef", float("nan")), ("coef", float("-inf")), ("coef", None), ("coef", False),
    ("degree", 0), ("degree", 2.0), ("degree", float("nan")), ("subsets", -1), ("subsets", 1.5),
    ("subset_size", float("nan")), ("subset_size", True), ("seed", 1.5), ("seed", 2**64), ("seed", None),
])
def test_numeric_options_are_checked_at_construction_and_call(option, value):
    # was: KernelInceptionDistance(gamma=nan) constructed, then compute() returned (nan, nan); an option of the
    # wrong type is a TypeError
    number = float if option in ("gamma", "coef") else int  # core.checks.check_real / check_int
    error = TypeError if isinstance(value, bool) or not isinstance(value, number) else ValueError
    with pytest.raises(error, match=f"`{option}`"):
        KernelInceptionDistance(feature=_Identity(), **{option: value})
    real, fake = _features(20, seed=0), _features(20, seed=1)
    with pytest.raises(error, match=f"`{option}`"):
        kernel_inception_distance(real, fake, **{"subsets": 2, "subset_size": 5, option: value})


def test_numpy_scalar_options_and_extreme_but_valid_values_are_accepted():
    import numpy as np

    real, fake = _features(20, seed=0), _features(20, seed=1, shift=0.1)
    mean, std = kernel_inception_distance(real, fake, subsets=3, subset_size=8, gamma=np.float64(0.1), coef=-2)
    assert torch.isfinite(mean) and torch.isfinite(std)
    kernel_inception_distance(real, fake, subsets=3, subset_size=8, seed=-1)  # torch.Generator takes it


def test_kernel_overflow_is_an_error_not_nan():
    # finite features whose cubic kernel overflows float64: (1e60² · d / d)³ = 1e360
    real, fake = _features(20, seed=0) * 1e60, _features(20, seed=1) * 1e60
    with pytest.raises(ValueError, match="`real_features` / `fake_features` are too large"):
        kernel_inception_distance(real, fake, subsets=2, subset_size=5)
    # features whose squares overflow are refused on input
    with pytest.raises(ValueError, match=r"`real_features` holds values up to \|x\| = .*e\+200"):
        kernel_inception_distance(real / 1e60 * 1e200, fake, subsets=2, subset_size=5)

"""FID: Fréchet distance vs pytorch-fid (scipy sqrtm), streaming statistics, DDP, stats files, end-to-end."""

from __future__ import annotations

import contextlib
import io
import warnings
from unittest import mock

import numpy as np
import pytest
import torch
from PIL import Image
from torch import nn

import pytorch_fid.inception as pfi
from pytorch_fid.fid_score import calculate_fid_given_paths
from gpumetrics.image.fid import FrechetInceptionDistance, feature_statistics, frechet_distance
from gpumetrics.image.inception import FIDInceptionV3
from testkit.ddp import record_collectives, run_ddp_function
from testkit.pytorch_fid_scipy import pytorch_fid_frechet_distance, sqrtm_accepting_disp
from tests.helpers.harness import check_metric

DIMS = 12
_PYTORCH_FID_EPS = 1e-6  # calculate_frechet_distance's default `eps`, added to both covariances' diagonals


def _features(n, d, seed, shift=0.0):
    generator = torch.Generator().manual_seed(seed)
    mixing = torch.randn(d, d, generator=generator, dtype=torch.float64) / d**0.5
    return (torch.randn(n, d, generator=generator, dtype=torch.float64) @ mixing).abs() + shift


def _np_stats(features):
    array = features.double().numpy()
    return array.mean(axis=0), np.cov(array, rowvar=False)


def _pytorch_fid(real, fake):
    return pytorch_fid_frechet_distance(*_np_stats(real), *_np_stats(fake))


@pytest.mark.parametrize("d, n", [(8, 50), (64, 400), (160, 600)])
def test_frechet_distance_matches_scipy_sqrtm_on_well_conditioned_stats(d, n):
    real, fake = _features(n, d, seed=d), _features(n, d, seed=d + 1, shift=0.05)
    expected = _pytorch_fid(real, fake)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no rank-deficiency warning on full-rank covariances
        ours = frechet_distance(*feature_statistics(real), *feature_statistics(fake))
    assert ours.dtype == torch.float64
    assert abs(float(ours) - expected) <= 1e-6 * abs(expected)
    # numpy inputs and float32 tensors are accepted
    mu1, s1 = _np_stats(real)
    mu2, s2 = _np_stats(fake)
    assert abs(float(frechet_distance(mu1, s1, mu2, s2)) - expected) <= 1e-6 * abs(expected)


@pytest.mark.parametrize("n_real, n_fake", [(10, 40), (40, 10), (15, 15)])
def test_rank_deficient_stats_are_finite_warned_and_close_to_scipy(n_real, n_fake):
    d = 32
    real, fake = _features(n_real, d, seed=n_real), _features(n_fake, d, seed=100 + n_fake, shift=0.1)
    with (pytest.warns(UserWarning, match="singular|rank-deficient") if min(n_real, n_fake) <= d
          else warnings.catch_warnings()):
        metric = FrechetInceptionDistance(feature=_Identity(d))
        metric.update_features(real, real=True)
        metric.update_features(fake, real=False)
        ours = float(metric.compute())
    assert np.isfinite(ours) and ours >= 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = _pytorch_fid(real, fake)
        except ValueError:  # scipy's sqrtm left an imaginary component: nothing to compare with
            return
    assert abs(ours - expected) <= 1e-3 * abs(expected)


def test_identical_and_degenerate_stats_give_zero_not_nan():
    mu, sigma = feature_statistics(_features(5, 16, seed=0))
    with pytest.warns(UserWarning, match="singular"):
        assert 0 <= float(frechet_distance(mu, sigma, mu, sigma)) < 1e-6
    zeros = torch.zeros(16, 16, dtype=torch.float64)
    with pytest.warns(UserWarning, match="singular"):
        value = frechet_distance(mu, zeros, mu + 1, zeros)
    assert float(value) == pytest.approx(16.0)


def test_frechet_distance_bad_inputs_name_the_argument():
    mu, sigma = torch.zeros(3), torch.eye(3)
    with pytest.raises(ValueError, match="`sigma2`"):
        frechet_distance(mu, sigma, mu, torch.eye(4))
    with pytest.raises(ValueError, match="`mu2`"):
        frechet_distance(mu, sigma, torch.zeros(2), sigma)
    with pytest.raises(ValueError, match="`sigma1`"):
        frechet_distance(mu, torch.zeros(3), mu, sigma)
    with pytest.raises(ValueError, match="`mu1`.*NaN"):
        frechet_distance(torch.full((3,), float("nan")), sigma, mu, sigma)
    with pytest.raises(TypeError, match="`mu1`"):
        frechet_distance("mu", sigma, mu, sigma)


def test_frechet_distance_refuses_complex_and_text_statistics_by_name():
    """Complex statistics were cast to float64, their imaginary parts dropped without a word (``mu1 = 0 + 1j`` gave
    the distance of ``mu1 = 0``); numpy text and ragged lists failed inside numpy without naming the argument (found
    by fuzzing)."""
    mu, sigma = torch.zeros(3, dtype=torch.float64), torch.eye(3, dtype=torch.float64)
    for position, bad in ((0, mu.to(torch.complex128) + 1j), (1, sigma * (1 + 1j)), (2, np.zeros(3) + 1j),
                          (3, np.eye(3).astype(np.complex64)), (0, np.array(["0", "0", "0"]))):
        args = [mu, sigma, mu, sigma]
        args[position] = bad
        name = ("mu1", "sigma1", "mu2", "sigma2")[position]
        with pytest.raises(TypeError, match=f"`{name}` must hold real numbers"):
            frechet_distance(*args)
    with pytest.raises(ValueError, match="`mu2` must be a rectangular array"):
        frechet_distance(mu, sigma, [[0.0], [0.0, 0.0]], sigma)
    assert float(frechet_distance([0.0, 0.0, 0.0], sigma, np.ones(3), sigma.numpy())) == pytest.approx(3.0)


@pytest.mark.parametrize("position", range(4))
def test_frechet_distance_refuses_statistics_whose_products_overflow(position):
    """``mu1 = [1e160, 0, 0]`` gave ``inf`` without a word and a covariance of ``1e160 · I`` failed inside
    ``torch.linalg.eigh`` (LinAlgError), against image.md's "numeric inputs never give a silent NaN/inf"; zero feature
    dimensions failed inside torch (found by fuzzing). Statistics keep the features' bound ``MAX_FEATURE`` (1e150)."""
    mu, sigma = torch.zeros(3, dtype=torch.float64), torch.eye(3, dtype=torch.float64)
    args = [mu, sigma, mu, sigma]
    args[position] = args[position] * 0 + 1e160
    name = ("mu1", "sigma1", "mu2", "sigma2")[position]
    with pytest.raises(ValueError, match=f"`{name}` holds values beyond ±1e\\+150"):
        frechet_distance(*args)
    args[position] = args[position] * 0 + 1e150  # at the bound: finite
    assert torch.isfinite(frechet_distance(*args))
    with pytest.raises(ValueError, match="`mu1` must hold at least one feature dimension"):
        frechet_distance(mu[:0], sigma[:0, :0], mu[:0], sigma[:0, :0])


class _Identity(nn.Module):
    """A custom 'extractor' whose features are its input (picklable, for the DDP harness)."""

    def __init__(self, dims: int = DIMS) -> None:
        super().__init__()
        self.dims = dims

    def forward(self, features):
        return features


class FeaturePairFID(FrechetInceptionDistance):
    """FID driven by ``update(real_features, fake_features)`` so that the harness can concatenate batches."""

    def __init__(self, **kwargs):
        super().__init__(feature=_Identity(), **kwargs)

    def update(self, real_features, fake_features):
        super().update(real_features, real=True)
        super().update(fake_features, real=False)


def _fid_of_features(real, fake):
    return frechet_distance(*feature_statistics(real), *feature_statistics(fake))


@pytest.mark.ddp
def test_fid_streaming_states_merge_and_ddp_equal_one_pass():
    sizes = [(30, 25), (1, 3), (40, 33), (9, 12)]
    batches = [
        (_features(r, DIMS, seed=i).float(), _features(f, DIMS, seed=50 + i, shift=0.2).float())
        for i, (r, f) in enumerate(sizes)
    ]
    value = check_metric(
        FeaturePairFID, _fid_of_features, _pytorch_fid, batches, atol=1e-9, rtol=1e-9, reference_atol=1e-7,
        check_forward=False,
    )
    assert float(value) > 0


def _collectives_of_fid_sync(rank, dims, stats_path):
    with record_collectives() as calls:
        metric = FrechetInceptionDistance(feature=_Identity(dims))
        metric.update_features(_features(50 + 100 * rank, dims, seed=rank), real=True)
        metric.update_features(_features(70, dims, seed=10 + rank, shift=0.1), real=False)
        value = metric.compute()
    metric.save_stats(stats_path, real=True)  # every rank calls it (synchronised statistics), rank 0 writes
    assert int(metric.real_count) == 50 + 100 * rank  # unsynced again afterwards: local state intact
    return calls, float(value)


@pytest.mark.ddp
def test_fid_sync_is_three_all_reduces_of_fixed_size(tmp_path):
    dims = 16
    results = run_ddp_function(_collectives_of_fid_sync, dims, str(tmp_path / "real.npz"))
    # the 2-int64 signature check, then the float64 sums and outer products of both sides in one buffer, the two
    # int64 counts in another
    expected_bytes = [16, 2 * (8 * dims + 8 * dims * dims), 2 * 8]
    for calls, _ in results:
        assert {name for name, _ in calls} == {"all_reduce"}
        assert [size for _, size in calls] == expected_bytes
    assert results[0][1] == results[1][1]
    real = torch.cat([_features(50, dims, seed=0), _features(150, dims, seed=1)])
    fake = torch.cat([_features(70, dims, seed=10, shift=0.1), _features(70, dims, seed=11, shift=0.1)])
    assert results[0][1] == pytest.approx(_pytorch_fid(real, fake), rel=1e-9)
    with np.load(tmp_path / "real.npz") as data:
        np.testing.assert_allclose(data["mu"], _np_stats(real)[0], rtol=1e-12)
        np.testing.assert_allclose(data["sigma"], _np_stats(real)[1], rtol=1e-9, atol=1e-14)
        assert int(data["n"]) == 200


def test_update_features_accumulates_like_one_pass_and_forward_returns_none():
    real, fake = _features(60, DIMS, seed=1), _features(50, DIMS, seed=2, shift=0.3)
    metric = FrechetInceptionDistance(feature=_Identity())
    for chunk in real.split(7):
        assert metric(chunk, real=True) is None
    metric.update_features(fake[:20], real=False)
    first = metric.compute()
    metric.update_features(fake[20:], real=False)  # the cached value is invalidated
    assert float(metric.compute()) != float(first)
    assert float(metric.compute()) == pytest.approx(_pytorch_fid(real, fake), rel=1e-9)


def test_reset_real_features_keeps_the_reference_set():
    real, fake = _features(40, DIMS, seed=1), _features(40, DIMS, seed=2, shift=0.3)
    metric = FrechetInceptionDistance(feature=_Identity(), reset_real_features=False)
    metric.update_features(real, real=True)
    metric.update_features(fake, real=False)
    metric.reset()
    assert int(metric.real_count) == 40 and int(metric.fake_count) == 0
    metric.update_features(fake, real=False)
    assert float(metric.compute()) == pytest.approx(_pytorch_fid(real, fake), rel=1e-9)
    resetting = FrechetInceptionDistance(feature=_Identity())
    resetting.update_features(real, real=True)
    resetting.reset()
    assert int(resetting.real_count) == 0


def test_stats_files_interoperate_with_pytorch_fid(tmp_path):
    real, fake = _features(80, DIMS, seed=3), _features(90, DIMS, seed=4, shift=0.2)
    metric = FrechetInceptionDistance(feature=_Identity())
    metric.update_features(real, real=True)
    metric.update_features(fake, real=False)
    ours = float(metric.compute())
    metric.save_stats(tmp_path / "real.npz", real=True)
    metric.save_stats(tmp_path / "fake.npz", real=False)
    with np.load(tmp_path / "real.npz") as data:
        np.testing.assert_allclose(data["mu"], _np_stats(real)[0], rtol=1e-12)
        np.testing.assert_allclose(data["sigma"], _np_stats(real)[1], rtol=1e-9, atol=1e-15)
        assert int(data["n"]) == 80
    # pytorch-fid reads our files (its model is built but never run on .npz inputs)
    with mock.patch.object(pfi.InceptionV3, "__init__", lambda self, *a, **k: nn.Module.__init__(self)), \
            sqrtm_accepting_disp():
        theirs = calculate_fid_given_paths([str(tmp_path / "real.npz"), str(tmp_path / "fake.npz")], 2, "cpu", 2048)
    assert theirs == pytest.approx(ours, rel=1e-6)
    # files written the pytorch-fid way load back
    np.savez_compressed(tmp_path / "pfid.npz", mu=_np_stats(real)[0], sigma=_np_stats(real)[1])
    loaded = FrechetInceptionDistance(feature=_Identity())
    loaded.load_stats(tmp_path / "pfid.npz", real=True)
    loaded.update_features(fake, real=False)
    assert float(loaded.compute()) == pytest.approx(ours, rel=1e-9)
    assert "real_stats:loaded" in loaded.signature()
    with pytest.raises(ValueError, match="loaded from a file"):
        loaded.update_features(real, real=True)
    wrong = FrechetInceptionDistance(feature=_Identity(DIMS + 1))
    with pytest.raises(ValueError, match="`path`"):
        wrong.load_stats(tmp_path / "pfid.npz")


def test_fid_bad_inputs_name_the_argument(inception_state):
    metric = FrechetInceptionDistance(feature=64, weights=inception_state)
    with pytest.raises(ValueError, match="`images`.*channels"):
        metric.update(torch.rand(2, 1, 16, 16), real=True)
    with pytest.raises(ValueError, match="`images`.*\\[0, 1\\]"):
        metric.update(-torch.rand(2, 3, 16, 16), real=True)
    with pytest.raises(ValueError, match="`images` is empty"):
        metric.update(torch.rand(0, 3, 16, 16), real=True)
    with pytest.raises(TypeError, match="`real`"):
        metric.update(torch.rand(2, 3, 16, 16), real="yes")
    with pytest.raises(ValueError, match="`features`"):
        metric.update_features(torch.rand(4, 65), real=True)
    with pytest.raises(ValueError, match="`features` is an empty batch"):
        metric.update_features(torch.rand(0, 64), real=True)
    with pytest.raises(ValueError, match="at least 2 real samples"):
        metric.compute()
    with pytest.raises(ValueError, match="`feature`"):
        FrechetInceptionDistance(feature=100, weights="random")
    with pytest.raises(TypeError, match="`feature`"):
        FrechetInceptionDistance(feature="2048")
    with pytest.raises(ValueError, match="`resize`"):
        FrechetInceptionDistance(feature=64, weights="random", resize="nearest")


def _write_images(folder, seed, count, shift):
    folder.mkdir()
    generator = torch.Generator().manual_seed(seed)
    images = (torch.rand(count, 3, 33, 47, generator=generator) * (1 - shift) + shift).mul(255).round().to(torch.uint8)
    for i, image in enumerate(images):
        Image.fromarray(image.permute(1, 2, 0).numpy()).save(folder / f"{i:03d}.png")
    return images


def test_fid_end_to_end_matches_pytorch_fid_pipeline(tmp_path, inception_state):
    """Same PNG folders through pytorch-fid's ``calculate_fid_given_paths`` and through our module (64-d)."""
    real = _write_images(tmp_path / "real", seed=0, count=24, shift=0.0)
    fake = _write_images(tmp_path / "fake", seed=1, count=24, shift=0.3)
    with mock.patch.object(pfi, "load_state_dict_from_url", return_value=inception_state), warnings.catch_warnings(), \
            sqrtm_accepting_disp():
        warnings.simplefilter("ignore")
        expected = calculate_fid_given_paths([str(tmp_path / "real"), str(tmp_path / "fake")], 12, "cpu", 64, 0)
    metric = FrechetInceptionDistance(feature=64, weights=inception_state)
    for batch in real.split(10):
        metric.update(batch, real=True)
    metric.update(fake, real=False)
    with pytest.warns(UserWarning, match="rank-deficient"):
        ours = float(metric.compute())
    assert ours == pytest.approx(expected, rel=1e-3)
    assert metric.signature().startswith("fid|feature:64|weights:state_dict|resize:pytorch-fid|")
    # update(images) is exactly update_features(extractor(images))
    direct = FrechetInceptionDistance(feature=64, weights=inception_state)
    extractor = FIDInceptionV3(dims=64, weights=inception_state)
    direct.update_features(extractor(real), real=True)
    direct.update_features(extractor(fake), real=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert float(direct.compute()) == pytest.approx(ours, rel=1e-9)


def test_wide_random_small_sets_dtypes_and_degenerate_features_match_pytorch_fid():
    """n = 2..7 per side, d = 2..20, float16/32/64 inputs, repeated and constant rows, module fed in several batches;
    the oracle is pytorch-fid on the same (upcast) features. Where pytorch-fid's sqrtm goes negative (identical
    sets: −1e-6) we return 0 — never negative or NaN."""
    rng = np.random.default_rng(0)
    checked = 0
    for trial in range(60):
        d, n_real, n_fake = int(rng.integers(2, 21)), int(rng.integers(2, 8)), int(rng.integers(2, 8))
        dtype = [torch.float64, torch.float32, torch.float16][trial % 3]
        real = torch.from_numpy(np.abs(rng.normal(size=(n_real, d))) * rng.uniform(0.1, 10)).to(dtype)
        fake = torch.from_numpy(np.abs(rng.normal(size=(n_fake, d))) + rng.uniform(0, 1)).to(dtype)
        kind = trial % 5
        if kind == 1:
            fake = real.flip(0)  # the same set in another order
        elif kind == 2:
            real[1:] = real[0]  # repeated rows
        elif kind == 3:
            fake[:, : d // 2] = 0.25  # constant columns
        metric = FrechetInceptionDistance(feature=_Identity(d))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # rank-deficient: always here
            for part in real.split(3):
                metric.update_features(part, real=True)
            for part in fake.split(2):
                metric.update_features(part, real=False)
            ours = float(metric.compute())
            said = io.StringIO()
            try:
                with contextlib.redirect_stdout(said):
                    expected = _pytorch_fid(real, fake)
            except ValueError:  # scipy sqrtm left an imaginary part
                continue
        assert np.isfinite(ours) and ours >= 0
        if kind == 1:
            assert ours < 1e-9 and expected < 1e-5
            checked += 1
            continue
        compared = ours
        if "singular product" in said.getvalue():
            # pytorch-fid found sqrtm(Σ1·Σ2) non-finite (SciPy ≥ 1.18 on a zero product; older SciPy returned 0)
            # and scored Σ + εI instead, keeping the unperturbed traces: compare ours on the same covariances, and
            # bound what ε moves: 0 ≤ FID − FID_ε ≤ 2√ε (√(d·tr Σ1) + √(d·tr(Σ2 + εI))) (√ is operator monotone)
            (mu1, sigma1), (mu2, sigma2) = _np_stats(real), _np_stats(fake)
            eps, identity = _PYTORCH_FID_EPS, np.eye(d)
            compared = float(frechet_distance(mu1, sigma1 + eps * identity, mu2, sigma2 + eps * identity)) - 2 * d * eps
            bound = 2 * eps**0.5 * ((d * np.trace(sigma1)) ** 0.5 + (d * (np.trace(sigma2) + d * eps)) ** 0.5)
            assert -1e-9 * ours <= ours - compared <= bound + 1e-9 * ours, (trial, ours, compared, bound)
        assert compared == pytest.approx(expected, rel=1e-6, abs=1e-6), (trial, d, n_real, n_fake, dtype)
        checked += 1
    assert checked > 40


def test_offset_dominated_features_warn_and_the_documented_remedy_matches_pytorch_fid():
    generator = torch.Generator().manual_seed(3)
    real = torch.randn(40, 6, generator=generator, dtype=torch.float64) + 1e4
    fake = torch.randn(40, 6, generator=generator, dtype=torch.float64) * 1.2 + 1e4 + 0.1
    expected = _pytorch_fid(real, fake)  # np.cov centres first: exact to ~1e-12 here
    metric = FrechetInceptionDistance(feature=_Identity(6))
    metric.update_features(real, real=True)
    metric.update_features(fake, real=False)
    with pytest.warns(UserWarning, match="Subtract a constant"):
        metric.compute()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        shifted = _fid_of_features(real - 1e4, fake - 1e4)
    assert float(shifted) == pytest.approx(expected, rel=1e-9)
    # feature_statistics has all the features at once: it centres first, as np.cov, and needs no remedy
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mu, sigma = feature_statistics(real)
        direct = _fid_of_features(real, fake)
    np.testing.assert_allclose(sigma.numpy(), _np_stats(real)[1], rtol=1e-12, atol=1e-13)
    assert float(direct) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_non_finite_features_are_an_error_naming_the_argument(bad):
    features = _features(10, 4, seed=0)
    features[3, 1] = bad
    metric = FrechetInceptionDistance(feature=_Identity(4))
    with pytest.raises(ValueError, match="`features` holds NaN or infinite"):
        metric.update_features(features, real=True)  # was: accepted, then a LinAlgError from eigh at compute
    with pytest.raises(ValueError, match="`features` holds NaN or infinite"):
        feature_statistics(features)  # was: NaN statistics


def test_features_whose_squares_overflow_float64_are_an_error_naming_the_argument():
    features = _features(10, 4, seed=0) * 1e200  # was: feature_statistics gave inf covariance, FID NaN/garbage
    with pytest.raises(ValueError, match=r"`features` holds values up to \|x\| = .*e\+200.*scale them down"):
        feature_statistics(features)
    metric = FrechetInceptionDistance(feature=_Identity(4))
    with pytest.raises(ValueError, match=r"`features` holds values up to"):
        metric.update_features(features, real=True)
    # the largest accepted magnitude still gives exact float64 statistics
    big = _features(10, 4, seed=0) * 1e149
    mu, sigma = feature_statistics(big)
    expected_mu, expected_sigma = _np_stats(big)
    np.testing.assert_allclose(mu.numpy(), expected_mu, rtol=1e-12)
    np.testing.assert_allclose(sigma.numpy(), expected_sigma, rtol=1e-9, atol=1e-12 * np.abs(expected_sigma).max())


def test_float32_features_near_their_range_limit_are_summed_in_float64():
    # float32 features of 1e38: their float32 sum or square would be inf; converted before summing
    features = (_features(50, 4, seed=1) / _features(50, 4, seed=1).max() * 3e38).float()
    assert bool(torch.isfinite(features).all())
    mu, sigma = feature_statistics(features)
    expected_mu, expected_sigma = _np_stats(features)
    np.testing.assert_allclose(mu.numpy(), expected_mu, rtol=1e-12)
    np.testing.assert_allclose(sigma.numpy(), expected_sigma, rtol=1e-9, atol=1e-12 * np.abs(expected_sigma).max())
    value = frechet_distance(mu, sigma, mu * 1.5, sigma)
    assert float(value) == pytest.approx(float((mu * 0.5).square().sum()), rel=1e-9)


NOT_PSD = {
    "negated": -torch.eye(3, dtype=torch.float64),  # was: FID 0.0
    "indefinite": torch.tensor([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]], dtype=torch.float64),
    "asymmetric": torch.tensor([[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], dtype=torch.float64),
    "negative diagonal": torch.diag(torch.tensor([4.0, 1.0, -0.01], dtype=torch.float64)),
}


@pytest.mark.parametrize("kind", NOT_PSD)
@pytest.mark.parametrize("position", ["sigma1", "sigma2"])
def test_frechet_distance_refuses_a_covariance_that_is_not_symmetric_psd(kind, position):
    mu = torch.zeros(3, dtype=torch.float64)
    spd = torch.tensor([[2.0, 0.3, 0.0], [0.3, 1.0, 0.1], [0.0, 0.1, 0.5]], dtype=torch.float64)
    for other in (spd, torch.diag(torch.tensor([1.0, 1.0, 0.0], dtype=torch.float64))):  # PD and singular partner
        args = {"mu1": mu, "sigma1": other, "mu2": mu + 1, "sigma2": other, position: NOT_PSD[kind]}
        with pytest.raises(ValueError, match=f"`{position}` must be"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                frechet_distance(**args)


def test_round_off_negative_eigenvalues_and_float32_storage_still_pass():
    # rank-deficient covariances (n < d) have eigenvalues of ±1e-16 relative; pytorch-fid stats stored in float32
    real, fake = _features(10, 32, seed=1), _features(12, 32, seed=2, shift=0.1)
    (mu1, s1), (mu2, s2) = _np_stats(real), _np_stats(fake)
    assert np.linalg.eigvalsh(s1).min() < 0  # round-off really is there
    with pytest.warns(UserWarning, match="singular"):
        exact = float(frechet_distance(mu1, s1, mu2, s2))
        stored = float(frechet_distance(mu1.astype(np.float32), s1.astype(np.float32), mu2.astype(np.float32),
                                        s2.astype(np.float32)))
        same = float(frechet_distance(mu1, s1, mu1, s1))
    assert stored == pytest.approx(exact, rel=1e-4)
    assert 0 <= same < 1e-6


def test_a_result_negative_beyond_round_off_is_not_silently_clamped():
    # offset 1e8 ≫ spread 1: the streaming covariance Σxxᵀ − n·μμᵀ keeps no digit of the spread; FID of a set with
    # itself came out as −10 and was clamped to 0 without a word
    generator = torch.Generator().manual_seed(0)
    features = torch.randn(50, 6, generator=generator, dtype=torch.float64) + 1e8
    metric = FrechetInceptionDistance(feature=_Identity(6))
    metric.update_features(features, real=True)
    metric.update_features(features.flip(0)[:49], real=False)
    with pytest.warns(UserWarning, match="negative beyond its round-off bound"):
        assert float(metric.compute()) == 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        stats = metric.statistics(real=True) + metric.statistics(real=False)  # the streaming covariances
    with pytest.raises(ValueError, match="`sigma1`|`sigma2`"):
        frechet_distance(*stats)


@pytest.mark.parametrize("case", ["repeated rows", "two distinct rows", "constant 0.1 columns", "offset 1e6"])
def test_feature_statistics_centre_first_like_np_cov(case):
    """feature_statistics gave the streaming Σxxᵀ − n·μμᵀ covariance: on a set of one repeated row that is pure
    round-off, indefinite, and frechet_distance refused it (``sigma1 must be positive semi-definite``) where
    pytorch-fid returns its value; constant 0.1 columns were 5e-9 relative off. Centred first, it is np.cov."""
    generator = torch.Generator().manual_seed(7)
    real = torch.rand(30, 5, generator=generator, dtype=torch.float64) + 0.1
    fake = torch.rand(23, 5, generator=generator, dtype=torch.float64) * 1.3
    if case == "repeated rows":
        real[1:] = real[0]
    elif case == "two distinct rows":
        real[1::2], real[::2] = real[1], real[0]
    elif case == "constant 0.1 columns":
        real[:, :2] = 0.1
        fake[:, 1:3] = 0.1
    else:
        real, fake = real + 1e6, fake + 1e6
    mu, sigma = feature_statistics(real)
    expected_mu, expected_sigma = _np_stats(real)
    np.testing.assert_allclose(mu.numpy(), expected_mu, rtol=1e-15)
    # round-off of the centred products: of the spread, and of the mean's last bit (repeated rows: all there is)
    spread, size = float((real - real.mean(0)).abs().max()), float(real.abs().max())
    np.testing.assert_allclose(sigma.numpy(), expected_sigma, rtol=1e-12, atol=1e-14 * spread**2 + (1e-15 * size) ** 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # singular covariances: warned
        ours = float(frechet_distance(mu, sigma, *feature_statistics(fake)))
        said = io.StringIO()
        with contextlib.redirect_stdout(said):
            expected = _pytorch_fid(real, fake)
    assert "singular product" not in said.getvalue()
    # singular covariances (all but the offset case): sqrtm and our eigenvalues each sit ~1e-9 from a 50-digit
    # mpmath value; offset 1e6: the float64 means carry ~1e-10 absolute error into ‖μ₁ − μ₂‖² in both
    assert ours == pytest.approx(expected, rel=1e-7)


def test_meta_tensors_are_errors_naming_the_argument():
    """Images, features and statistics on the ``meta`` device (a shape, no values) failed deep inside torch
    (``NotImplementedError: Cannot copy out of meta tensor``, ``Tensor.item() cannot be called on meta tensors``);
    found by fuzzing the Python API."""
    from gpumetrics.functional import kernel_inception_distance

    metric = FrechetInceptionDistance(feature=64, weights="random")
    with pytest.raises(ValueError, match="`images` is a tensor on the meta device"):
        metric.update(torch.rand(2, 3, 8, 8, device="meta"), real=True)
    with pytest.raises(ValueError, match="`features` is a tensor on the meta device"):
        metric.update_features(torch.rand(2, 64, device="meta"), real=True)
    assert metric.side_is_empty("real") and metric._update_count == 0
    with pytest.raises(ValueError, match="`features` is a tensor on the meta device"):
        feature_statistics(torch.rand(3, 4, device="meta"))
    with pytest.raises(ValueError, match="`sigma2` is a tensor on the meta device"):
        frechet_distance(torch.zeros(2), torch.eye(2), torch.zeros(2), torch.eye(2, device="meta"))
    with pytest.raises(ValueError, match="`fake_features` is a tensor on the meta device"):
        kernel_inception_distance(torch.rand(3, 4), torch.rand(3, 4, device="meta"), subset_size=2)

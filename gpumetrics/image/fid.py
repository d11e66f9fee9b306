"""Fréchet Inception Distance (docs/metrics/image.md), pytorch-fid's number from streaming float64 statistics.

FID = ‖μ₁ − μ₂‖² + tr Σ₁ + tr Σ₂ − 2 tr √(Σ₁Σ₂) on pytorch-fid's Inception-v3 features; covariances with n − 1.

* ``frechet_distance`` — the distance between two Gaussians, on the device, in float64. ``tr √(Σ₁Σ₂)`` comes from
  one symmetric eigenvalue problem (``_frechet_distance`` with ``gpumetrics.kernels.linalg.psd_factor``: Cholesky factor
  ``L`` of a positive-definite covariance, eigenvalues of ``Lᵀ Σ₂ L`` clamped at 0; an ``eigh`` square root when neither
  covariance is positive definite). Never complex, never NaN. It matches scipy's ``sqrtm`` (pytorch-fid) to ~1e-9
  relative on well-conditioned statistics and is several times faster than both scipy and torchmetrics.
* ``FrechetInceptionDistance`` — states are, per side, a float64 feature sum ``Tensor[d]``, a float64 sum of outer
  products ``Tensor[d, d]`` and a count: fixed size, all-reduced under DDP (no feature gathering). ``save_stats`` /
  ``load_stats`` read and write pytorch-fid's / clean-fid's ``.npz`` (``mu``, ``sigma``).

Rank-deficient covariance (fewer samples than feature dimensions): FID is still defined by the formula on the exact
(singular) PSD covariances — no ``eps`` is added — and a warning is issued. pytorch-fid instead adds 1e-6 to the
diagonals when scipy's ``sqrtm`` returns a non-finite result; where scipy succeeds both agree to ~1e-6.

Offset-dominated features: the module's covariance is ``(Σxxᵀ − n·μμᵀ)/(n − 1)`` from the summed states (as
torchmetrics), which loses about ``log10(μ²/σ²)`` of float64's 16 digits where pytorch-fid's ``np.cov`` centres first —
e.g. features ``10⁴ + N(0, 1)`` give FID ~1e-5 relative from pytorch-fid (torchmetrics the same as us). Inception
features (mean ≈ spread) are far from this; a warning is issued when some feature's mean exceeds ~3000× its spread
(subtract a constant from the features: FID does not change). ``feature_statistics``, which has all the features at
once, centres them first as ``np.cov`` does and keeps every digit.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional, Union

import numpy as np
import torch
import torch.distributed as dist
from torch import Tensor, nn

from gpumetrics.core import replicated
from gpumetrics.core.checks import check_holds_data
from gpumetrics.core.files import atomic_write
from gpumetrics.core.warn import warn_caller
from gpumetrics.image.features import MAX_FEATURE, RealFakeFeatureMetric, check_features, side_of
from gpumetrics.image.inception import WeightsArg
from gpumetrics.kernels.linalg import check_psd, check_symmetric, covariance_from_sums, psd_factor, psd_tolerance


def _as_float64(value: Any, name: str, ndim: int, device: Optional[torch.device]) -> Tensor:
    if isinstance(value, np.ndarray) or isinstance(value, (list, tuple)):
        try:
            array = np.asarray(value)
        except ValueError:  # ragged nesting
            raise ValueError(f"`{name}` must be a rectangular array of numbers, got ragged nested lists") from None
        if array.dtype.kind in "cUSV":  # a cast would drop imaginary parts or fail on text without a name
            raise TypeError(f"`{name}` must hold real numbers, got a numpy array of dtype {array.dtype}")
        value = torch.as_tensor(array.astype(np.float64))
    if not isinstance(value, Tensor):
        raise TypeError(f"`{name}` must be a Tensor or numpy array, got {type(value).__name__}")
    if value.is_complex():  # `.to(float64)` would drop the imaginary part
        raise TypeError(f"`{name}` must hold real numbers, got dtype {value.dtype}")
    check_holds_data(value, name)
    if value.ndim != ndim:
        raise ValueError(f"`{name}` must have {ndim} dimension(s), got shape {tuple(value.shape)}")
    value = value.to(device=device if device is not None else value.device, dtype=torch.float64)
    peak = value.abs().amax() if value.numel() else value.new_zeros(())
    finite, peak = torch.stack([torch.isfinite(value).all().double(), peak]).tolist()
    if not finite:
        raise ValueError(f"`{name}` holds NaN or infinite values")
    if peak > MAX_FEATURE:  # ‖μ₁ − μ₂‖² or Σ₁Σ₂ would overflow: inf, or eigvalsh failing inside torch
        raise ValueError(f"`{name}` holds values beyond ±{MAX_FEATURE:g} (largest |x|: {peak:.3g}), whose products "
                         "overflow float64")
    return value


def read_npz_stats(path: Union[str, Path]) -> tuple[np.ndarray, np.ndarray]:
    """``(mu, sigma)`` of a pytorch-fid / clean-fid statistics file, as stored (their dtype sets the PSD tolerance).

    Raises:
        ValueError: naming ``path``: not a readable ``.npz`` (truncated, empty, text, pickled objects), no ``mu`` or
            ``sigma`` array, or arrays that are not numbers.
        FileNotFoundError, IsADirectoryError, PermissionError: the file cannot be opened.
    """
    import zipfile

    try:
        with np.load(os.fspath(path)) as data:
            if not hasattr(data, "files"):  # a bare .npy array, not an archive of named arrays
                raise ValueError("it holds one array, not the arrays 'mu' and 'sigma'")
            if "mu" not in data or "sigma" not in data:
                raise ValueError("it has no arrays 'mu' and 'sigma'")
            mu, sigma = data["mu"], data["sigma"]
        for name, value in (("mu", mu), ("sigma", sigma)):
            if value.dtype.kind not in "biuf":
                raise ValueError(f"its array {name!r} holds {value.dtype} values, not numbers")
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except (zipfile.BadZipFile, EOFError, OSError, ValueError, TypeError, KeyError) as err:
        raise ValueError(f"`path` {str(path)!r} is not a statistics file (.npz with arrays 'mu' and 'sigma'): "
                         f"{str(err) or type(err).__name__}") from None
    return mu, sigma


def _input_eps_dtype(value: Any) -> torch.dtype:
    """The floating dtype a user's matrix came in (its round-off sets the PSD tolerance); float64 otherwise."""
    dtype = value.dtype if isinstance(value, (Tensor, np.ndarray)) else None
    if isinstance(dtype, np.dtype):
        dtype = {np.dtype(np.float16): torch.float16, np.dtype(np.float32): torch.float32}.get(dtype, torch.float64)
    return dtype if isinstance(dtype, torch.dtype) and dtype.is_floating_point else torch.float64


def frechet_distance(mu1: Tensor, sigma1: Tensor, mu2: Tensor, sigma2: Tensor) -> Tensor:
    """Fréchet distance between N(μ₁, Σ₁) and N(μ₂, Σ₂): ‖μ₁ − μ₂‖² + tr(Σ₁ + Σ₂ − 2 √(Σ₁Σ₂)).

    Computed in float64 on the device of ``mu1`` with a symmetric eigenvalue method (see the module docstring):
    real, ≥ 0, finite for any PSD input — no ``eps`` offset, no complex intermediate.

    ``Σ₁`` and ``Σ₂`` must be covariances: symmetric and positive semi-definite up to round-off, i.e.
    ``max |Σ − Σᵀ| ≤ rtol · max |Σ|`` and smallest eigenvalue ``≥ −rtol · max |λ|`` with
    ``rtol = max(1e-6, 8 · d · eps)`` (``eps`` of the dtype they are given in: 1e-6 for float64, ~2e-3 for float32
    at d = 2048; see ``gpumetrics.kernels.linalg.psd_tolerance``). The result is clamped at 0 only within its
    round-off bound; a value more negative than that raises.

    Args:
        mu1: ``Tensor[d]`` mean of the first set (numpy arrays are accepted too).
        sigma1: ``Tensor[d, d]`` symmetric PSD covariance of the first set.
        mu2: ``Tensor[d]`` mean of the second set.
        sigma2: ``Tensor[d, d]`` covariance of the second set.

    Returns:
        0-d float64 tensor ≥ 0; negative round-off (within the bound) is returned as 0.

    Raises:
        TypeError / ValueError: wrong types, shapes that disagree, non-finite values, or a ``sigma1`` / ``sigma2``
            that is not symmetric PSD (naming the argument).

    Warns:
        UserWarning: when neither covariance is positive definite (e.g. fewer samples than dimensions).

    Example:
        >>> mu = torch.zeros(2)
        >>> float(frechet_distance(mu, torch.eye(2), mu + 1, 4 * torch.eye(2)))
        4.0
    """
    device = mu1.device if isinstance(mu1, Tensor) else None
    given = [_input_eps_dtype(sigma1), _input_eps_dtype(sigma2)]
    mu1 = _as_float64(mu1, "mu1", 1, device)
    mu2 = _as_float64(mu2, "mu2", 1, device)
    sigma1 = _as_float64(sigma1, "sigma1", 2, device)
    sigma2 = _as_float64(sigma2, "sigma2", 2, device)
    d = mu1.shape[0]
    if d == 0:
        raise ValueError("`mu1` must hold at least one feature dimension, got shape (0,)")
    for name, value, shape in (("mu2", mu2, (d,)), ("sigma1", sigma1, (d, d)), ("sigma2", sigma2, (d, d))):
        if tuple(value.shape) != shape:
            raise ValueError(f"`{name}` must have shape {shape} to match `mu1`, got {tuple(value.shape)}")
    rtol = max(psd_tolerance(d, dtype) for dtype in given)
    check_symmetric(sigma1, "sigma1", rtol)
    check_symmetric(sigma2, "sigma2", rtol)
    return _frechet_distance(mu1, (sigma1 + sigma1.mT) / 2, mu2, (sigma2 + sigma2.mT) / 2, user_rtol=rtol)


def _frechet_distance(
    mu1: Tensor, sigma1: Tensor, mu2: Tensor, sigma2: Tensor, user_rtol: Optional[float] = None
) -> Tensor:
    """The distance of symmetric float64 statistics.

    ``user_rtol``: the covariances are the caller's — check them PSD to this tolerance and raise ``ValueError``
    naming ``sigma1`` / ``sigma2`` (and on a result negative beyond round-off). None: our own statistics, whose
    round-off negative eigenvalues are clamped; a result negative beyond round-off (precision lost to cancellation)
    is then warned about before returning 0.
    """
    checked = user_rtol is not None
    rtol = user_rtol if checked else psd_tolerance(sigma1.shape[0], torch.float64)
    # tr√(Σ₁Σ₂) = tr√(Σ₂Σ₁): factor whichever covariance is positive definite
    factor, is_cholesky = psd_factor(sigma1, "sigma1" if checked else None, rtol)
    other = sigma2
    prove_other_psd = False
    if is_cholesky:
        # Σ₂ is PSD iff Lᵀ Σ₂ L is (Sylvester's law of inertia, L invertible): its eigenvalues, computed below anyway,
        # settle it; only when one of them is negative does Σ₂ get its own round-off-tolerant check
        prove_other_psd = checked
    else:
        factor2, is_cholesky2 = psd_factor(sigma2, "sigma2" if checked else None, rtol)
        if is_cholesky2:
            factor, other = factor2, sigma1
        else:
            warn_caller(
                "both covariance matrices are singular (rank-deficient: fewer samples than feature dimensions?); "
                "FID uses their exact PSD square roots without an eps offset — it is defined but has high variance",
                UserWarning,
            )
    inner = factor.mT @ other @ factor
    inner = (inner + inner.mT) / 2
    eigenvalues = torch.linalg.eigvalsh(inner)
    if prove_other_psd and float(eigenvalues[0]) < 0:
        check_psd(sigma2, "sigma2", rtol)
    tr_covmean = eigenvalues.clamp(min=0).sqrt().sum()
    diff = mu1 - mu2
    trace1, trace2 = sigma1.trace(), sigma2.trace()
    value = diff.dot(diff) + trace1 + trace2 - 2 * tr_covmean
    # Round-off bound of ``value``: an eigenvalue of ``inner`` is off by up to δ ≈ 8·d·eps·‖Σ₁‖‖Σ₂‖ (traces bound the
    # norms), so each of the k eigenvalues within δ of 0 adds up to √δ to tr√ (√ is steep at 0); the sum of the
    # terms carries a relative error ~d·eps, plus what the admitted PSD tolerance lets through.
    d = sigma1.shape[0]
    eps = torch.finfo(torch.float64).eps
    delta = 8 * d * eps * trace1.abs() * trace2.abs()
    near_zero = (eigenvalues.abs() <= delta).sum()
    magnitude = diff.dot(diff) + trace1.abs() + trace2.abs()
    bound = 2 * near_zero * delta.sqrt() + (8 * d * eps + rtol) * magnitude
    value_, bound_ = torch.stack([value, bound]).tolist()
    if value_ < -bound_:
        message = (
            f"the Fréchet distance came out at {value_:.6g}, negative beyond its round-off bound {bound_:.3g}: "
        )
        if checked:
            raise ValueError(message + "`sigma1` / `sigma2` are not consistent covariance matrices")
        warn_caller(
            message + "the covariances lost their precision (offset-dominated features? subtract a constant "
            "from the features); returning 0",
            UserWarning,
        )
    return value.clamp(min=0)


def feature_statistics(features: Tensor) -> tuple[Tensor, Tensor]:
    """Mean and n − 1 covariance of features, in float64 (``np.mean(axis=0)``, ``np.cov(rowvar=False)``).

    Two passes, as ``np.cov``: the features are centred on their mean before ``Xᵀ X``, so the covariance keeps its
    digits whatever the offset (the module's streaming ``Σxxᵀ − n·μμᵀ`` does not, see the module docstring) and is
    exactly PSD up to round-off — also for repeated rows and constant features, whose covariance is (near) zero.

    Args:
        features: ``Tensor[n, d]`` with ``n ≥ 2``.

    Returns:
        ``(mu: Tensor[d], sigma: Tensor[d, d])`` float64.

    Example:
        >>> mu, sigma = feature_statistics(torch.tensor([[0.0, 1.0], [2.0, 3.0]]))
        >>> mu.tolist(), sigma.tolist()
        ([1.0, 2.0], [[2.0, 2.0], [2.0, 2.0]])
    """
    wide = check_features(features, "features", None).to(torch.float64)
    n = wide.shape[0]
    if n < 2:
        raise ValueError(f"`features` needs at least 2 samples for a covariance, got {n}")
    mu = wide.mean(0)
    centred = wide - mu
    sigma = centred.mT @ centred / (n - 1)
    return mu, (sigma + sigma.mT) / 2


def _checked_covariance(total: Tensor, outer: Tensor, count: Tensor, what: str) -> tuple[Tensor, Tensor]:
    """``covariance_from_sums`` plus a warning when cancellation in ``Σxxᵀ − n·μμᵀ`` ate most of the digits."""
    mu, sigma = covariance_from_sums(total, outer, count)
    if not bool(torch.isfinite(sigma).all()):  # |x| ≤ MAX_FEATURE keeps Σxxᵀ finite up to ~1e8 samples
        raise ValueError(f"{what}: the float64 sum of squares Σxxᵀ overflowed; scale the features down")
    variance = sigma.diagonal()
    if bool((mu.square() > 1e7 * variance.abs()).logical_and_(mu != 0).any()):
        warn_caller(
            f"{what}: some feature's mean is over ~3000× its spread; the streaming float64 covariance loses "
            "log10(mean²/variance) digits of 16 (pytorch-fid's np.cov does not). Subtract a constant offset from the "
            "features — FID is unchanged by it",
            UserWarning,
        )
    return mu, sigma


def _fid_compute(real: tuple[Tensor, Tensor], fake: tuple[Tensor, Tensor]) -> Tensor:
    """FID from ``(mu, sigma)`` of each side."""
    return _frechet_distance(real[0], real[1], fake[0], fake[1])


class FrechetInceptionDistance(RealFakeFeatureMetric):
    """FID between real and generated images, pytorch-fid's number, accumulated on the device.

    Args:
        feature: feature size of pytorch-fid's Inception (64, 192, 768, 2048), or any ``nn.Module`` mapping
            images to ``Tensor[B, D]`` that has an integer attribute ``dims`` (or ``num_features``).
        weights: Inception weights — ``None`` (pinned pytorch-fid file: path → ``$GPUMETRICS_HOME`` / torch hub
            cache → download → ``FileNotFoundError``), a file path, a ``state_dict``, or ``"random"`` (tests only;
            the signature says so). Ignored for a custom ``feature`` module.
        resize: ``"pytorch-fid"`` (default), ``"clean"`` (clean-fid's PIL-bicubic resize) or ``"aij2022"`` (the
            AIJ-2022 organisers' PIL resize to 256×256 first); see :mod:`gpumetrics.image.inception`.
        reset_real_features: when False, ``reset()`` keeps the real statistics (and loaded real stats).
        download: allow downloading the pinned weights (default: only when ``$GPUMETRICS_DOWNLOAD=1``).
        speed_mode: ``None`` (default) — the parity path, true float32 on every device (TF32 off during the
            forward). Opt-in, NOT parity: ``"tf32"``, ``"bf16"`` / ``"fp16"`` (autocast), ``"channels_last"``,
            ``"compile"``, a precision joined to layout parts (``"bf16+channels_last"``) or ``"fastest"``; see
            :mod:`gpumetrics.image.precision` and ``gpumetrics.image.inception`` for their tested bounds. The mode
            appears in the signature as ``speed:<mode>``; values of different modes are not comparable. Built-in
            Inception only.
        kwargs: the ``Metric`` base options (torchmetrics' names: ``sync_on_compute``, ``dist_sync_fn`` …).

    States (summed over ranks): ``real_sum``/``fake_sum: float64[d]``, ``real_outer``/``fake_outer:
    float64[d, d]``, ``real_count``/``fake_count: int64`` — ``2·(d² + d + 1)`` numbers whatever the sample count.
    Statistics read by ``load_stats`` are states too (``real_loaded_mu: float64[d]``, ``real_loaded_sigma:
    float64[d, d]``, likewise ``fake_…``; empty when nothing is loaded; the same on every rank, never reduced), so
    ``persistent(True)`` checkpoints carry them and ``load_state_dict`` restores them.

    ``forward`` only accumulates and returns None: a per-batch FID of one side is undefined.

    Example:
        >>> fid = FrechetInceptionDistance(feature=64, weights="random")
        >>> g = torch.Generator().manual_seed(0)
        >>> fid.update_features(torch.rand(100, 64, generator=g), real=True)
        >>> fid.update_features(torch.rand(100, 64, generator=g) + 0.1, real=False)
        >>> round(float(fid.compute()), 3)
        2.504
        >>> fid.signature().rsplit("|", 1)[0]
        'fid|feature:64|weights:random|resize:pytorch-fid'
    """

    higher_is_better = False
    is_differentiable = False
    full_state_update = False
    signature_name = "fid"
    _signature_state_keys = ("real_stats", "fake_stats")  # loaded statistics are states: checked as such, not here

    real_sum: Tensor
    real_outer: Tensor
    real_count: Tensor
    fake_sum: Tensor
    fake_outer: Tensor
    fake_count: Tensor

    def __init__(
        self,
        feature: Union[int, nn.Module] = 2048,
        weights: WeightsArg = None,
        resize: str = "pytorch-fid",
        reset_real_features: bool = True,
        download: Optional[bool] = None,
        speed_mode: Optional[str] = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(feature, weights, resize, download, speed_mode, reset_real_features, **kwargs)
        dims = self.dims
        for side in ("real", "fake"):
            self.add_state(f"{side}_sum", torch.zeros(dims, dtype=torch.float64), dist_reduce_fx="sum")
            self.add_state(f"{side}_outer", torch.zeros(dims, dims, dtype=torch.float64), dist_reduce_fx="sum")
            self.add_state(f"{side}_count", torch.tensor(0, dtype=torch.long), dist_reduce_fx="sum")
            # empty until ``load_stats``: no d×d memory unless a file is loaded
            self.add_state(f"{side}_loaded_mu", torch.zeros(0, dtype=torch.float64), dist_reduce_fx=replicated)
            self.add_state(f"{side}_loaded_sigma", torch.zeros(0, 0, dtype=torch.float64), dist_reduce_fx=replicated)

    def _signature_fields(self) -> dict[str, Any]:
        fields = dict(self._feature_fields)
        for side in ("real", "fake"):
            if self._loaded(side) is not None:
                fields[f"{side}_stats"] = "loaded"
        return fields

    def _loaded(self, side: str) -> Optional[tuple[Tensor, Tensor]]:
        """``(mu, sigma)`` read by ``load_stats`` for one side, or None."""
        mu, sigma = getattr(self, f"{side}_loaded_mu"), getattr(self, f"{side}_loaded_sigma")
        return None if mu.numel() == 0 else (mu, sigma)

    def _add(self, features: Tensor, side: str) -> None:
        if self._loaded(side) is not None:
            raise ValueError(f"the {side} set holds statistics loaded from a file; it cannot be extended")
        # In place, one fused GEMM: the d×d float64 state (32 MB at d = 2048) is accumulated by ``addmm_`` instead
        # of materialising Σxxᵀ of the batch and a new state (6× less time per batch at d = 2048). Same float64
        # sum up to its association order (~1 ulp; a DDP all-reduce reorders it too).
        wide = features.to(torch.float64)
        getattr(self, f"{side}_outer").addmm_(wide.mT, wide)
        getattr(self, f"{side}_sum").add_(wide.sum(0))
        getattr(self, f"{side}_count").add_(wide.shape[0])

    def _load_from_state_dict(
        self, state_dict: dict, prefix: str, local_metadata: dict, strict: bool, missing_keys: list[str],
        unexpected_keys: list[str], error_msgs: list[str],
    ) -> None:
        # the base class copies states onto this metric's device (``_add`` accumulates in place, so it owns them)
        # and checks the fixed-size ones; loaded statistics are empty or ``[d]`` / ``[d, d]``
        for side in ("real", "fake"):
            mu, sigma = state_dict.get(f"{prefix}{side}_loaded_mu"), state_dict.get(f"{prefix}{side}_loaded_sigma")
            if mu is None and sigma is None:
                continue
            shapes = tuple(tuple(v.shape) if isinstance(v, Tensor) else None for v in (mu, sigma))
            if shapes not in (((0,), (0, 0)), ((self.dims,), (self.dims, self.dims))):
                error_msgs.append(
                    f"{prefix}{side}_loaded_mu/sigma: expected shapes (0,)/(0, 0) or ({self.dims},)/({self.dims}, "
                    f"{self.dims}), got {shapes[0]}/{shapes[1]}"
                )
                state_dict.pop(f"{prefix}{side}_loaded_mu", None)
                state_dict.pop(f"{prefix}{side}_loaded_sigma", None)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )

    def _statistics(self, side: str) -> tuple[Tensor, Tensor]:
        loaded = self._loaded(side)
        count = getattr(self, f"{side}_count")
        if loaded is not None:
            if int(count) > 0:  # only ``merge_state`` of a loaded side with a sampled one gets here
                raise ValueError(f"the {side} set holds both statistics loaded from a file and samples")
            return loaded
        n = int(count)
        if n < 2:
            raise ValueError(
                f"FID needs at least 2 {side} samples, got {n}: call update(images, real={side == 'real'}) "
                f"or load_stats(path, real={side == 'real'}) first"
            )
        if n < self.dims:
            warn_caller(
                f"{n} {side} samples for {self.dims}-dimensional features: the covariance is rank-deficient and "
                "FID is biased and noisy (pytorch-fid recommends ≥ 2048 samples)",
                UserWarning,
            )
        total, outer = getattr(self, f"{side}_sum"), getattr(self, f"{side}_outer")
        return _checked_covariance(total, outer, count, f"{side} features")

    def compute(self) -> Tensor:
        """FID of the accumulated (or loaded) statistics: 0-d float64 tensor."""
        return _fid_compute(self._statistics("real"), self._statistics("fake"))

    def statistics(self, real: bool = True) -> tuple[Tensor, Tensor]:
        """``(mu: float64[d], sigma: float64[d, d])`` of one side, synchronised across ranks under DDP."""
        mu, sigma, _ = self._synced_statistics(side_of(real))
        return mu, sigma

    def _synced_statistics(self, side: str) -> tuple[Tensor, Tensor, int]:
        with self.sync_context(should_sync=self._to_sync, should_unsync=True):
            mu, sigma = self._statistics(side)
            n = -1 if self._loaded(side) is not None else int(getattr(self, f"{side}_count"))
        return mu, sigma, n

    def save_stats(self, path: Union[str, Path], real: bool = True) -> None:
        """Write one side's statistics as pytorch-fid's ``.npz`` (``mu``, ``sigma``, plus ``n``) to exactly ``path``.

        The file is readable by pytorch-fid (``python -m pytorch_fid stats.npz images/``) and clean-fid. Under DDP
        every rank must call it (the statistics are synchronised); rank 0 writes.
        """
        mu, sigma, n = self._synced_statistics(side_of(real))
        if dist.is_available() and dist.is_initialized() and dist.get_rank() != 0:
            return
        arrays = {"mu": mu.cpu().numpy(), "sigma": sigma.cpu().numpy()}
        if n >= 0:
            arrays["n"] = np.asarray(n, dtype=np.int64)
        with atomic_write(path, "wb") as handle:  # a failed write keeps a previous file whole
            np.savez_compressed(handle, **arrays)

    def load_stats(self, path: Union[str, Path], real: bool = True) -> None:
        """Use the ``mu``/``sigma`` of a pytorch-fid / clean-fid ``.npz`` as one side (replacing its samples).

        Loaded statistics are fixed: that side cannot then be updated. ``reset()`` clears loaded real stats only
        when ``reset_real_features=True``. Under DDP, load the same file on every rank. They are metric states
        (``real_loaded_mu`` / ``real_loaded_sigma``…): a ``persistent(True)`` checkpoint carries them and
        ``load_state_dict`` restores them without another ``load_stats``.
        """
        side = side_of(real)
        mu, sigma = read_npz_stats(path)
        try:
            mu = _as_float64(mu, "mu", 1, None)
            sigma = _as_float64(sigma, "sigma", 2, None)
        except ValueError as err:
            raise ValueError(f"`path` {str(path)!r}: {err}") from None
        if tuple(mu.shape) != (self.dims,) or tuple(sigma.shape) != (self.dims, self.dims):
            raise ValueError(
                f"`path` {str(path)!r} holds {tuple(mu.shape)}/{tuple(sigma.shape)} statistics, "
                f"expected ({self.dims},)/({self.dims}, {self.dims})"
            )
        if int(getattr(self, f"{side}_count")) > 0:
            raise ValueError(f"the {side} set already holds samples; load_stats before any update or after reset")
        device = getattr(self, f"{side}_sum").device
        setattr(self, f"{side}_loaded_mu", mu.to(device))
        setattr(self, f"{side}_loaded_sigma", sigma.to(device))
        self._computed = None


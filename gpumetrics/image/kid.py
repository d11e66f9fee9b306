"""Kernel Inception Distance: unbiased polynomial-kernel MMD² over random subsets, as torchmetrics / clean-fid.

KID = mean over ``subsets`` random subsets (``subset_size`` samples drawn without replacement from each set) of
the unbiased MMD² with the kernel ``k(x, y) = (γ xᵀy + c)^degree`` (γ = 1/d by default, c = 1, degree 3); the
standard deviation over subsets (population, ``unbiased=False``) is returned with it.

Subsets are drawn by a ``torch.Generator`` seeded with ``seed`` on the CPU (``randperm`` of the real set, then of
the generated set, per subset — the order torchmetrics uses with the global generator), so the value is
deterministic and the same on every device and rank. The kernel sums are computed in float64, batched over
subsets in chunks whose size bounds the working memory (``max_chunk_bytes``, 256 MiB by default) instead of one
Python iteration per subset. When the subsets overlap (``subsets · m²`` above the number of distinct pairs, e.g.
torchmetrics' default 100 × 1,000 on a few thousand samples) and the three full Gram matrices fit in that budget, they
are computed once and each subset's sums are read from them through its membership vector.

Features must be kept (a kernel on random subsets is not a sum): states are ``cat`` lists of features in their own
dtype (float32 from the Inception), gathered once across ranks at ``compute``.

Order invariance: subsets index rows, so with torchmetrics the value depends on the order in which samples
arrived (batch order, DDP rank split). With ``canonical_order=True`` (default) rows are first sorted by a fixed
random projection, so single-process, ``merge_state`` and any DDP split give the same number; the subsets are then
exactly torchmetrics' subsets of the sorted features. ``canonical_order=False`` keeps arrival order (torchmetrics'
behaviour, reproduced exactly with the same seed).
"""

from __future__ import annotations

from typing import Any, Iterator, Optional, Union

import torch
from torch import Tensor, nn

from gpumetrics.core.distributed import dim_zero_cat
from gpumetrics.image.features import RealFakeFeatureMetric, check_features
from gpumetrics.core.checks import check_bool, check_int, check_real
from gpumetrics.core.transfer import upload
from gpumetrics.image.inception import WeightsArg

_CHUNK_BYTES = 256 * 2**20


def check_kid_options(subsets: Any, subset_size: Any, degree: Any, gamma: Any, coef: Any, seed: Any = 0) -> None:
    """Every numeric option checked once, at construction (module) or call (function): type, finiteness, range."""
    check_int(subsets, "subsets", at_least=1)
    check_int(degree, "degree", at_least=1)
    check_int(subset_size, "subset_size", at_least=2)
    if gamma is not None:
        check_real(gamma, "gamma", above=0, hint="or None: 1/d")
    check_real(coef, "coef")
    check_int(seed, "seed", at_least=-(2**63), at_most=2**64 - 1, hint="torch.Generator's range")


def subset_indices(n_real: int, n_fake: int, subsets: int, subset_size: int, seed: int) -> tuple[Tensor, Tensor]:
    """The random subsets: ``(Tensor[subsets, subset_size], Tensor[subsets, subset_size])`` int64 on the CPU.

    Example:
        >>> real, fake = subset_indices(10, 12, subsets=3, subset_size=4, seed=0)
        >>> real.shape, bool((fake < 12).all())
        (torch.Size([3, 4]), True)
    """
    real, fake = zip(*subset_index_chunks(n_real, n_fake, subsets, subset_size, seed, subsets))
    return torch.cat(real), torch.cat(fake)


def subset_index_chunks(
    n_real: int, n_fake: int, subsets: int, subset_size: int, seed: int, chunk: int
) -> Iterator[tuple[Tensor, Tensor]]:
    """:func:`subset_indices` ``chunk`` subsets at a time (the same subsets, drawn in the same order): memory for a
    chunk's ``[chunk, subset_size]`` indices and one permutation, not ``subsets`` permutations of every sample.

    Example:
        >>> [tuple(real.shape) for real, _ in subset_index_chunks(10, 12, subsets=5, subset_size=4, seed=0, chunk=2)]
        [(2, 4), (2, 4), (1, 4)]
    """
    generator = torch.Generator().manual_seed(seed)
    for start in range(0, subsets, chunk):
        real, fake = [], []
        for _ in range(min(chunk, subsets - start)):
            # a slice keeps its whole permutation alive: copied, a subset holds subset_size indices, not n
            real.append(torch.randperm(n_real, generator=generator)[:subset_size].clone())
            fake.append(torch.randperm(n_fake, generator=generator)[:subset_size].clone())
        yield torch.stack(real), torch.stack(fake)


def canonical_order(features: Tensor) -> Tensor:
    """Rows of ``features: Tensor[n, d]`` sorted by their projection on a fixed random direction.

    The order no longer depends on how samples arrived; identical rows (the only likely ties) are interchangeable.

    Example:
        >>> x = torch.rand(5, 3)
        >>> torch.equal(canonical_order(x), canonical_order(x.flip(0)))
        True
    """
    direction = torch.randn(features.shape[1], generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    keys = features.to(torch.float64) @ upload(direction, features.device)
    return features[torch.argsort(keys, stable=True)]


class _SubsetKernelSums:
    """Per-subset kernel sums — real–real and fake–fake without the diagonal, real–fake whole — by the cheaper route.

    Subsets overlap when ``subsets · m²`` exceeds the number of distinct pairs (torchmetrics' default 100 × 1,000 on
    a few thousand samples). Then, if the three full Gram matrices fit in ``max_chunk_bytes``, they are computed once
    and a subset's sum is ``vᵀ K w`` with ``v``, ``w`` its 0/1 membership vectors (``n² · d`` + ``subsets · n²``
    multiply-adds instead of ``subsets · m² · d``). Otherwise each chunk of subsets multiplies its own rows.
    """

    def __init__(self, real: Tensor, fake: Tensor, m: int, subsets: int, gamma: float, coef: float, degree: int,
                 max_chunk_bytes: int) -> None:
        self.real, self.fake = real.to(torch.float64), fake.to(torch.float64)
        self.gamma, self.coef, self.degree = gamma, coef, degree
        n_real, n_fake, d = real.shape[0], fake.shape[0], real.shape[1]
        gram_entries = n_real * n_real + n_fake * n_fake + n_real * n_fake
        self.full = None
        if gram_entries < 3 * subsets * m * m and gram_entries * 8 <= max_chunk_bytes:
            self.full = tuple(self._kernel(a, b) for a, b in
                              ((self.real, self.real), (self.fake, self.fake), (self.real, self.fake)))
            per_subset = 2 * (n_real + n_fake) * 8
            max_chunk_bytes -= gram_entries * 8
        else:
            per_subset = 3 * m * m * 8 + 2 * m * d * 8
        self.chunk = max(1, max_chunk_bytes // per_subset)

    def _kernel(self, a: Tensor, b: Tensor) -> Tensor:
        return (a @ b.mT * self.gamma + self.coef) ** self.degree

    def __call__(self, index_real: Tensor, index_fake: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """Sums ``Tensor[s]`` ×3 for the subsets ``index_real`` / ``index_fake`` (``Tensor[s, m]`` row indices)."""
        if self.full is not None:
            k_xx, k_yy, k_xy = self.full
            v = torch.zeros(index_real.shape[0], k_xx.shape[0], dtype=torch.float64, device=k_xx.device)
            v.scatter_(1, index_real, 1.0)
            w = torch.zeros(index_fake.shape[0], k_yy.shape[0], dtype=torch.float64, device=k_yy.device)
            w.scatter_(1, index_fake, 1.0)
            return ((v @ k_xx * v).sum(1) - v @ k_xx.diagonal(),
                    (w @ k_yy * w).sum(1) - w @ k_yy.diagonal(),
                    (v @ k_xy * w).sum(1))
        x, y = self.real[index_real], self.fake[index_fake]  # [s, m, d]
        k_xx, k_yy, k_xy = self._kernel(x, x), self._kernel(y, y), self._kernel(x, y)
        return (k_xx.sum((1, 2)) - k_xx.diagonal(dim1=1, dim2=2).sum(1),
                k_yy.sum((1, 2)) - k_yy.diagonal(dim1=1, dim2=2).sum(1),
                k_xy.sum((1, 2)))


def _kid_compute(
    real: Tensor,
    fake: Tensor,
    subsets: int,
    subset_size: int,
    degree: int,
    gamma: Optional[float],
    coef: float,
    seed: int,
    canonical: bool = True,
    max_chunk_bytes: int = _CHUNK_BYTES,
) -> tuple[Tensor, Tensor]:
    for name, features in (("real", real), ("fake", fake)):
        if features.shape[0] < subset_size:
            raise ValueError(
                f"`subset_size` ({subset_size}) must not exceed the number of {name} samples ({features.shape[0]})"
            )
    if real.shape[1] != fake.shape[1]:
        raise ValueError(f"real and fake features differ in size: {real.shape[1]} and {fake.shape[1]}")
    if canonical:
        real, fake = canonical_order(real), canonical_order(fake)
    m, d = subset_size, real.shape[1]
    gamma = 1.0 / d if gamma is None else float(gamma)
    kernel_sums = _SubsetKernelSums(real, fake, m, subsets, gamma, coef, degree, max_chunk_bytes)
    scores = []
    for index_real, index_fake in subset_index_chunks(real.shape[0], fake.shape[0], subsets, m, seed,
                                                      kernel_sums.chunk):
        sum_xx, sum_yy, sum_xy = kernel_sums(upload(index_real, real.device), upload(index_fake, fake.device))
        scores.append((sum_xx + sum_yy) / (m * (m - 1)) - 2 * sum_xy / (m * m))
    values = torch.cat(scores)
    if not bool(torch.isfinite(values).all()):
        # finite features (checked on input) whose kernel (γ xᵀy + c)^degree overflows float64
        largest = max(float(real.abs().max()), float(fake.abs().max()))
        raise ValueError(
            f"`real_features` / `fake_features` are too large for the kernel (γ xᵀy + {coef:g})^{degree} in float64 "
            f"(largest |feature| {largest:.3g}, d = {d}): scale the features down or lower `gamma`"
        )
    return values.mean(), values.std(unbiased=False)


def kernel_inception_distance(
    real_features: Tensor,
    fake_features: Tensor,
    subsets: int = 100,
    subset_size: int = 1000,
    degree: int = 3,
    gamma: Optional[float] = None,
    coef: float = 1.0,
    seed: int = 42,
    canonical_order: bool = True,
) -> tuple[Tensor, Tensor]:
    """KID (mean and std over subsets) from precomputed features.

    Args:
        real_features: ``Tensor[n_real, d]``.
        fake_features: ``Tensor[n_fake, d]``.
        subsets: number of random subsets.
        subset_size: samples per subset, ≤ ``n_real`` and ``n_fake``.
        degree, gamma, coef: polynomial kernel ``(γ xᵀy + coef)^degree``; ``gamma=None`` means ``1/d``.
        seed: seed of the subset generator.
        canonical_order: sort rows canonically first, so the value does not depend on sample order (default);
            False keeps the given order, as torchmetrics does.

    Returns:
        ``(kid_mean, kid_std)``: 0-d float64 tensors.

    Example:
        >>> g = torch.Generator().manual_seed(0)
        >>> real, fake = torch.rand(50, 8, generator=g), torch.rand(50, 8, generator=g) + 0.5
        >>> mean, std = kernel_inception_distance(real, fake, subsets=10, subset_size=20)
        >>> round(float(mean), 4)
        3.1095
    """
    check_kid_options(subsets, subset_size, degree, gamma, coef, seed)
    real = check_features(real_features, "real_features", None)
    fake = check_features(fake_features, "fake_features", real.shape[1])
    return _kid_compute(real, fake, subsets, subset_size, degree, gamma, coef, seed, canonical_order)


class KernelInceptionDistance(RealFakeFeatureMetric):
    """KID between real and generated images on pytorch-fid's Inception features (torchmetrics' definition).

    Args:
        feature: 64, 192, 768 or 2048 (pytorch-fid Inception), or an ``nn.Module`` with an integer ``dims``.
        weights: Inception weights as in ``FrechetInceptionDistance`` (``"random"`` for tests only).
        resize: ``"pytorch-fid"`` (default), ``"clean"`` or ``"aij2022"`` (see :mod:`gpumetrics.image.inception`).
        subsets, subset_size, degree, gamma, coef, seed, canonical_order: see ``kernel_inception_distance``.
        reset_real_features: when False, ``reset()`` keeps the real features.
        download: allow downloading the pinned weights (default: only when ``$GPUMETRICS_DOWNLOAD=1``).
        speed_mode: ``None`` (default) — the parity path, true float32 on every device (TF32 off during the
            forward). Opt-in, NOT parity: ``"tf32"``, ``"bf16"`` / ``"fp16"`` (autocast), ``"channels_last"``,
            ``"compile"``, a precision joined to layout parts (``"bf16+channels_last"``) or ``"fastest"``; see
            :mod:`gpumetrics.image.precision` and ``gpumetrics.image.inception`` for their tested bounds. The mode
            appears in the signature as ``speed:<mode>``; values of different modes are not comparable. Built-in
            Inception only.
        kwargs: the ``Metric`` base options (torchmetrics' names: ``sync_on_compute``, ``dist_sync_fn`` …).

    ``compute()`` returns ``(kid_mean, kid_std)``; ``forward`` only accumulates and returns None.

    Example:
        >>> kid = KernelInceptionDistance(feature=64, weights="random", subsets=5, subset_size=8)
        >>> g = torch.Generator().manual_seed(0)
        >>> kid.update_features(torch.rand(10, 64, generator=g), real=True)
        >>> kid.update_features(torch.rand(10, 64, generator=g) + 0.2, real=False)
        >>> round(float(kid.compute()[0]), 4)
        0.3163
    """

    higher_is_better = False
    is_differentiable = False
    full_state_update = False
    signature_name = "kid"

    def __init__(
        self,
        feature: Union[int, nn.Module] = 2048,
        weights: WeightsArg = None,
        resize: str = "pytorch-fid",
        subsets: int = 100,
        subset_size: int = 1000,
        degree: int = 3,
        gamma: Optional[float] = None,
        coef: float = 1.0,
        seed: int = 42,
        canonical_order: bool = True,
        reset_real_features: bool = True,
        download: Optional[bool] = None,
        speed_mode: Optional[str] = None,
        **kwargs: Any,
    ) -> None:
        KernelInceptionDistance._check(subsets, subset_size, degree, gamma, coef, seed, canonical_order)
        super().__init__(feature, weights, resize, download, speed_mode, reset_real_features, **kwargs)
        self.subsets, self.subset_size, self.degree, self.gamma, self.coef = subsets, subset_size, degree, gamma, coef
        self.seed, self.canonical_order = seed, canonical_order
        self.add_state("real_features", [], dist_reduce_fx="cat")
        self.add_state("fake_features", [], dist_reduce_fx="cat")

    @staticmethod
    def _check(subsets: Any, subset_size: Any, degree: Any, gamma: Any, coef: Any, seed: Any,
               canonical_order: Any) -> None:
        """KID's own option checks (the extractor's are the base class's): the one list ``__init__`` and
        :meth:`check_options` run, before the base class's."""
        check_kid_options(subsets, subset_size, degree, gamma, coef, seed)
        check_bool(canonical_order, "canonical_order")

    @classmethod
    def check_options(cls, options: dict[str, Any]) -> None:
        """The constructor's checks that need no model, in its order: ``options`` holds every ``__init__`` option by
        name (bound with their defaults by the caller)."""
        KernelInceptionDistance._check(options["subsets"], options["subset_size"], options["degree"],
                                       options["gamma"], options["coef"], options["seed"], options["canonical_order"])
        super().check_options(options)

    def _signature_fields(self) -> dict[str, Any]:
        gamma = "1/d" if self.gamma is None else self.gamma
        return {
            **self._feature_fields, "subsets": self.subsets, "subset_size": self.subset_size,
            "kernel": f"poly(degree={self.degree},gamma={gamma},coef={self.coef})", "seed": self.seed,
            "order": "canonical" if self.canonical_order else "arrival",
        }

    def _add(self, features: Tensor, side: str) -> None:
        getattr(self, f"{side}_features").append(features)

    def compute(self) -> tuple[Tensor, Tensor]:
        """``(kid_mean, kid_std)`` over the subsets, 0-d float64 tensors."""
        if not self.real_features or not self.fake_features:
            raise ValueError("KID needs real and generated features: call update(images, real=True/False) first")
        real, fake = dim_zero_cat(self.real_features), dim_zero_cat(self.fake_features)
        return _kid_compute(
            real, fake, self.subsets, self.subset_size, self.degree, self.gamma, self.coef, self.seed,
            self.canonical_order,
        )

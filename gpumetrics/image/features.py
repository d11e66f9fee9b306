"""What FID and KID share: the Inception (or custom) feature extractor, the checks of features and of the ``real``
flag, and a base module that turns ``update(images, real)`` / ``update_features(features, real)`` into features
of one side. FID keeps float64 sums of each side, KID the features themselves (``_add``).
"""

from __future__ import annotations

import math
from abc import abstractmethod
from copy import deepcopy
from typing import Any, Optional, Union

import numpy as np
import torch
from torch import Tensor, nn

from gpumetrics.core.distributed import dim_zero_cat
from gpumetrics.core import Metric
from gpumetrics.core.checks import check_bool, check_choice, check_holds_data
from gpumetrics.image.precision import parse_speed_mode
from gpumetrics.image.inception import (
    FEATURE_DIMS, RESIZE_MODES, FIDInceptionV3, WeightsArg, check_weights_argument,
)

MAX_FEATURE = 1e150
"""Largest |feature| accepted: squares stay ≤ 1e300, so float64 sums of ~1e8 of them stay finite."""


def check_features(features: Any, name: str, dims: Optional[int]) -> Tensor:
    """``features: Tensor[B, dims]`` checked: floating point, non-empty, finite, ``|x| ≤ MAX_FEATURE``
    (one host sync)."""
    if not isinstance(features, Tensor):
        raise TypeError(f"`{name}` must be a Tensor[B, D], got {type(features).__name__}")
    check_holds_data(features, name)
    if features.ndim != 2 or (dims is not None and features.shape[1] != dims):
        raise ValueError(f"`{name}` must be a Tensor[B, {dims or 'D'}], got shape {tuple(features.shape)}")
    if features.shape[0] == 0:
        raise ValueError(f"`{name}` is an empty batch")
    if not features.is_floating_point():
        raise TypeError(f"`{name}` must be floating point, got {features.dtype}")
    peak = float(features.abs().amax())  # NaN propagates: one host sync checks both
    if not math.isfinite(peak):  # else FID fails inside eigh and KID is NaN (or not, by subset luck)
        raise ValueError(f"`{name}` holds NaN or infinite values")
    if peak > MAX_FEATURE:
        raise ValueError(
            f"`{name}` holds values up to |x| = {peak:.3g}: the float64 sums of squares Σxxᵀ overflow beyond "
            f"|x| ≈ 1e154, so features must satisfy |x| ≤ {MAX_FEATURE:g}; scale them down (FID scales by the square "
            "of the factor)"
        )
    return features


def build_extractor(
    feature: Union[int, nn.Module],
    weights: WeightsArg,
    resize: str,
    download: Optional[bool],
    speed_mode: Optional[str] = None,
) -> tuple[nn.Module, int, dict[str, Any]]:
    """The feature extractor of FID / KID: ``(module, feature size, signature fields)``."""
    check_extractor_options(feature, weights, resize, download, speed_mode)
    if isinstance(feature, nn.Module):
        dims = getattr(feature, "dims", getattr(feature, "num_features", None))
        return feature, dims, {"feature": f"custom({type(feature).__name__})", "dims": dims}
    extractor = FIDInceptionV3(dims=feature, weights=weights, resize=resize, download=download, speed_mode=speed_mode)
    fields = extractor.signature_fields()
    signature = {"feature": feature, "weights": fields["weights"], "resize": fields["resize"]}
    if "speed" in fields:
        signature["speed"] = fields["speed"]
    return extractor, feature, signature


def check_extractor_options(
    feature: Any,
    weights: Any,
    resize: Any,
    download: Any = None,
    speed_mode: Any = None,
) -> None:
    """Every check of :func:`build_extractor` that needs no model: option values and types, and that an explicit
    weights file exists (its hash and contents are read when the extractor is built). Raises ``ValueError``,
    ``TypeError`` or ``FileNotFoundError`` naming the argument."""
    check_choice(resize, "resize", RESIZE_MODES)
    parse_speed_mode(speed_mode)
    if download is not None and not isinstance(download, bool):
        raise TypeError(f"`download` must be a bool or None, got {type(download).__name__}")
    if isinstance(feature, nn.Module):
        if speed_mode is not None:
            raise ValueError("`speed_mode` applies to the built-in Inception only, not to a custom `feature` module")
        dims = getattr(feature, "dims", getattr(feature, "num_features", None))
        if not isinstance(dims, int) or dims < 1:
            raise ValueError("a custom `feature` module needs an integer attribute `dims` (its output size)")
        return
    if not isinstance(feature, int) or isinstance(feature, bool):
        raise TypeError(f"`feature` must be one of {FEATURE_DIMS} or an nn.Module, got {feature!r}")
    check_choice(feature, "feature", FEATURE_DIMS)
    check_weights_argument(weights)


def side_of(real: Any) -> str:
    """``"real"`` or ``"fake"`` for the ``real`` flag of ``update`` (a bool, or a one-element tensor)."""
    if not isinstance(real, (bool, np.bool_)) and not (isinstance(real, Tensor) and real.numel() == 1):
        raise TypeError(f"`real` must be a bool, got {type(real).__name__}")
    return "real" if bool(real) else "fake"


class RealFakeFeatureMetric(Metric):
    """Base of the metrics that compare features of real and of generated images (FID, KID).

    Args:
        feature, weights, resize, download, speed_mode: see :func:`build_extractor`.
        reset_real_features: keep the real side's states on ``reset()`` when False (every state named ``real_*``).

    Subclasses add their states and implement ``_add(features: Tensor[B, d], side: "real" | "fake")``.
    ``forward`` accumulates like ``update`` and returns None: a per-batch value of one side is undefined.
    """

    forward_value = False

    def __init__(
        self,
        feature: Union[int, nn.Module],
        weights: WeightsArg,
        resize: str,
        download: Optional[bool],
        speed_mode: Optional[str] = None,
        reset_real_features: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        RealFakeFeatureMetric._check(feature, weights, resize, download, speed_mode, reset_real_features)
        self.extractor, self.dims, self._feature_fields = build_extractor(feature, weights, resize, download,
                                                                          speed_mode)
        self.reset_real_features = reset_real_features

    @staticmethod
    def _check(feature: Any, weights: Any, resize: Any, download: Any, speed_mode: Any,
               reset_real_features: Any) -> None:
        """This class's option checks that need no model: the one list ``__init__`` and :meth:`check_options` run."""
        check_bool(reset_real_features, "reset_real_features")
        check_extractor_options(feature, weights, resize, download, speed_mode)

    @classmethod
    def check_options(cls, options: dict[str, Any]) -> None:
        """The constructor's checks that need no model, so that a config fails when it loads: ``options`` holds every
        ``__init__`` option by name (bound with their defaults by the caller)."""
        RealFakeFeatureMetric._check(options["feature"], options["weights"], options["resize"], options["download"],
                                     options["speed_mode"], options["reset_real_features"])

    def update(self, images: Tensor, real: bool) -> None:
        """Extract features of a batch of images and add them to the real or the generated side.

        Args:
            images: ``Tensor[B, 3, H, W]``, uint8 (0..255) or float in [0, 1], any size (resized by ``resize``).
            real: True for reference images, False for generated ones.
        """
        side = side_of(real)
        self._add(self.extractor(images), side)

    def update_features(self, features: Tensor, real: bool) -> None:
        """Add precomputed ``features: Tensor[B, d]`` (``d`` the metric's feature size) to one side."""
        side = side_of(real)
        features = check_features(features, "features", self.dims)
        # the same bookkeeping torchmetrics' wrapped ``update`` does (cache invalidation, update count)
        self._computed = None
        self._update_count += 1
        self._add(features, side)

    @abstractmethod
    def _add(self, features: Tensor, side: str) -> None:
        """Add ``features: Tensor[B, d]`` to the ``side`` ("real" or "fake") states."""

    def side_states(self, side: str) -> dict[str, Tensor]:
        """The states of one side (``"real"`` or ``"fake"``: every state named ``<side>_*``), list states
        concatenated into one ``Tensor[n, d]``: what :func:`restore_side_states` needs to skip that side's pass.

        Raises:
            ValueError: a list state of ``side`` is empty (nothing to store).
        """
        states = {}
        for name in self.side_state_names(side):
            value = getattr(self, name)
            if isinstance(value, list):
                if not value:
                    raise ValueError(f"`side` {side!r}: state {name!r} holds no features yet")
                value = dim_zero_cat(value)
            states[name] = value
        return states

    def restore_side_states(self, side: str, states: dict[str, Tensor]) -> None:
        """Set one side's states to ``states`` (from :meth:`side_states`), as if its images had been added.

        Everything is checked before anything is set, so a rejected ``states`` leaves the metric as it was.

        Raises:
            ValueError: ``states`` does not hold exactly this side's states with their dtypes and shapes, or the
                side already holds samples.
        """
        names = self.side_state_names(side)
        if not isinstance(states, dict) or sorted(states) != names:
            got = sorted(states) if isinstance(states, dict) else type(states).__name__
            raise ValueError(f"`states` must hold the states {names}, got {got}")
        if not self.side_is_empty(side):
            raise ValueError(f"the {side} side already holds samples; states can only be restored into an empty side")
        for name in names:
            value, default = states[name], self._defaults[name]
            if isinstance(default, list):
                ok = isinstance(value, Tensor) and value.ndim == 2 and value.shape[1] == self.dims
                ok = ok and value.shape[0] > 0 and value.is_floating_point()
            else:
                ok = isinstance(value, Tensor) and value.dtype == default.dtype and value.shape == default.shape
            if not ok:
                shape = tuple(value.shape) if isinstance(value, Tensor) else type(value).__name__
                raise ValueError(f"`states[{name!r}]` does not fit this metric (got {shape})")
        for name in names:
            current = getattr(self, name)
            if isinstance(current, list):
                setattr(self, name, [states[name].to(self.device)])
            else:
                setattr(self, name, states[name].to(current.device))
        # the same bookkeeping torchmetrics' wrapped ``update`` does (cache invalidation, update count)
        self._computed = None
        self._update_count += 1

    def side_is_empty(self, side: str) -> bool:
        """Whether every state of ``side`` still holds its default (no sample added, no statistics loaded)."""
        for name in self.side_state_names(side):
            value, default = getattr(self, name), self._defaults[name]
            if isinstance(default, list):
                if value:
                    return False
            elif value.shape != default.shape or not torch.equal(value, default.to(value.device)):
                return False
        return True

    def side_state_names(self, side: str) -> list[str]:
        """Names of the states of ``side`` (``"real"`` or ``"fake"``), sorted."""
        check_choice(side, "side", ("real", "fake"))
        return sorted(name for name in self._defaults if name.startswith(f"{side}_"))

    def reset(self) -> None:
        """Reset the states; the real side's ones survive when ``reset_real_features=False``."""
        if self.reset_real_features:
            super().reset()
            return
        kept = {name: deepcopy(getattr(self, name)) for name in self._defaults if name.startswith("real_")}
        super().reset()
        for name, value in kept.items():
            setattr(self, name, value)

"""The gpumetrics ``Metric`` base: an ``nn.Module`` that behaves as a ``torchmetrics.Metric`` (Lightning,
``MetricCollection``), with an all-reduce DDP reducer and a signature. It imports torch only.

``torchmetrics.Metric`` has the metaclass ``ABCMeta``: this base is registered as a virtual subclass of it, so that
``isinstance(metric, torchmetrics.Metric)`` holds (what Lightning's ``self.log`` and ``MetricCollection`` check)
without gpumetrics importing torchmetrics — at import of this module when torchmetrics is already imported,
otherwise right after torchmetrics' own import (:func:`gpumetrics.core.abc_registration.register_on_import`).

This module holds the class — its options, state registration, ``update`` / ``compute`` wrapping, ``forward``, the
tree of owned metrics, signatures — and every method of it. Two jobs live in their own modules, whose functions the
methods of the same names delegate to: how states combine across ranks and between metrics
(:mod:`gpumetrics.core.metric_sync`: ``sync`` / ``unsync``, ``_sync_dist``, ``_reduce_states``, ``merge_state``) and
where they live (:mod:`gpumetrics.core.metric_state`: ``state_dict`` / ``_load_from_state_dict``, ``_apply``,
``set_dtype``). Checks of the ``Metric`` type stay here, so those modules never import this one.
"""

from __future__ import annotations

import abc
import contextlib
import copy
import functools
import inspect
from typing import Any, Callable, ClassVar, Iterator, Optional, Sequence, Union

import torch
from torch import Tensor

from gpumetrics.core import metric_state, metric_sync
from gpumetrics.core.abc_registration import register_on_import
from gpumetrics.core.checks import check_bool, check_positive_int
from gpumetrics.core.distributed import (
    REDUCTIONS_BY_NAME, canonical_reduction, distributed_available, gather_all_tensors,
)
from gpumetrics.core.gcpause import gc_paused
from gpumetrics.core.signature import format_signature
from gpumetrics.core.threads import intra_op_threads
from gpumetrics.core.warn import warn_caller


class Metric(torch.nn.Module, metaclass=abc.ABCMeta):
    """Base class of every gpumetrics module.

    An ``nn.Module`` with torchmetrics' ``Metric`` interface and bookkeeping names (``add_state``, ``update`` /
    ``compute`` / ``forward`` / ``reset``, ``merge_state``, ``sync`` / ``unsync`` / ``sync_context``,
    ``persistent``, ``set_dtype``, ``metric_state``, ``update_count``, ``_defaults`` / ``_reductions`` /
    ``_persistent`` / ``_update_count`` / ``_computed`` / ``_forward_cache`` …) and its ``__init__`` options
    (``compute_on_cpu``, ``dist_sync_on_step``, ``process_group``, ``dist_sync_fn``, ``distributed_available_fn``,
    ``sync_on_compute``, ``compute_with_cache``; any other keyword is a ``ValueError`` naming it). It is registered
    as a virtual subclass of ``torchmetrics.Metric`` (module docstring), so Lightning logging and
    ``MetricCollection`` (compute groups included) take it. ``compute()`` squeezes one-element tensor results to
    0-d and caches its value until the next update, as torchmetrics does (:meth:`_finish_compute` may undo the
    squeeze), and warns when no update came before it. Beyond torchmetrics:

    * **DDP reducer** — states registered with ``dist_reduce_fx="sum"`` (or max/min/mean) travel in one
      ``all_reduce`` per reduction and dtype, flattened into one buffer, instead of torchmetrics' all-gather per
      state; ``"cat"`` states in one all-gather per dtype after one object all-gather of their shapes, with uneven
      lengths and ranks that saw no data allowed (:mod:`gpumetrics.core.distributed`). ``compute()`` returns the same
      value on every rank. Before the states travel, one 16-byte ``all_reduce`` checks that every rank's metric has
      the same :meth:`state_signature` and additive-state layout: ranks built with other options (or cast with
      ``set_dtype`` on some ranks only) raise ``ValueError`` on every rank, naming each rank's signature. A user's
      ``dist_sync_fn`` keeps torchmetrics' gather semantics, after the same signature check where
      ``torch.distributed`` is initialized. Under DDP, ``compute()`` always synchronises (torchmetrics answers from a
      per-rank cache when that rank has not updated since its last ``compute()``, while the ranks that did update
      enter the collectives alone).
    * ``merge_state`` keeps ``cat`` states in call order: ``a.merge_state(b)`` equals updating with a's batches
      then b's (torchmetrics puts the incoming entries first), so per-sample results keep their order; the update
      counts add (``update_called``, the checkpointed count); a value cached by an earlier ``compute()`` is dropped.
    * ``forward`` (update, and the batch's own value) is all or nothing. A batch's value reports nothing about the
      accumulated states (``computing_batch_value``: the undecodable image files are named once, by ``compute()``).
      A metric whose batch value is undefined (``forward_value = False``: FID, KID, and any metric owning one)
      accumulates and returns None.
    * **A metric that owns metrics is one metric** (the AIJ-2022 captioning scores: METEOR and CLIP children;
      :meth:`owned_metrics`): ``reset``, ``merge_state`` (another metric of its class, each owned metric from its
      counterpart; hook :meth:`_merge_owned`), ``persistent`` / ``state_dict`` and ``forward`` (every metric of the
      tree keeps its states aside while the batch runs alone, then merges them back in front of the batch's) reach
      them without overrides. A list state registered with ``add_state(..., keep_first=k)`` keeps its first ``k``
      entries through merges and forwards.
    * ``update`` runs with Python's cyclic garbage collector paused (``core.gcpause``): text metrics build many
      small lists per batch, and the collector's scans would otherwise cost more than the building.
    * **Dtypes are the metric's.** ``.to(dtype)`` (Lightning's ``"16-true"``/``"bf16-true"``), ``.half()``,
      ``.bfloat16()``, ``.float()``, ``.double()`` move the metric's tensors to the new device only; every state,
      and an encoder the metric owns, keeps its dtype, so half precision never changes a score. ``set_dtype(d)``
      casts the floating-point tensors that are not float64 (float32 features, encoder weights); float64
      accumulators and integer/bool counts never change dtype.
    * ``signature()`` — a sacrebleu-style string ``name|key:value|...|version:X`` naming everything that makes two
      numbers comparable (mode, preset, tokenizer, weights …). Subclasses list those in ``_signature_fields``.
    * **Checkpointing.** As in torchmetrics, states are left out of ``state_dict()`` by default; after
      ``metric.persistent(True)`` every registered state (and that of child metrics) is saved as a tensor or a list
      of tensors — ``torch.load(weights_only=True)`` reads it — together with the update count, and
      ``load_state_dict`` into a fresh metric (persistent or not) restores them mid-stream: updating the rest then
      equals one pass. Loaded tensors are copied onto the metric's device (tensor states keep their dtype) and the
      cached ``compute()`` value is dropped; a fixed-size state of another shape is an error, and so is a missing
      state when the loading metric is itself persistent and ``strict=True``. Whatever a metric accumulates must
      therefore live in a registered state, never in a Python attribute. States registered with
      ``dist_reduce_fx=replicated`` (e.g. FID statistics loaded from an ``.npz``) are identical on every rank: they
      are saved and restored like the others but not reduced under DDP, and ``merge_state`` keeps the non-empty one.

    Example:
        >>> import io
        >>> from gpumetrics import TokenF1
        >>> metric = TokenF1()
        >>> metric.update(["the cat sat"], ["a cat sat"])
        >>> metric.persistent(True)
        >>> buffer = io.BytesIO()
        >>> torch.save(metric.state_dict(), buffer)
        >>> _ = buffer.seek(0)
        >>> restored = TokenF1()
        >>> restored.load_state_dict(torch.load(buffer, weights_only=True))
        <All keys matched successfully>
        >>> restored.update(["dog"], ["cat"])
        >>> float(restored.compute())
        0.5

    States carry what they were computed with: a persistent ``state_dict()`` holds the signature (without the
    library version) under ``_signature``, ``load_state_dict`` refuses a checkpoint whose signature differs from the
    loading metric's (``TokenF1(preset="aij2022")`` states into ``TokenF1(preset="squad")``), and ``merge_state``
    refuses a metric with another signature (CER with another ``transform``): ``ValueError`` naming both.
    Checkpoints written before this check (no ``_signature`` entry) load unchecked.

    Where it differs from torchmetrics' base: a non-bool flag option is a ``TypeError`` (``core.checks``);
    ``forward`` on a synchronised metric and ``sync`` / ``unsync`` misuse raise ``RuntimeError``; a ``compute()`` that
    raises under DDP still puts the rank's own states back; there are no arithmetic operators
    (``CompositionalMetric``) and no ``plot()``, and metrics compare and hash by identity.

    Subclasses set ``signature_name`` and override ``_signature_fields``.
    """

    is_differentiable: ClassVar[Optional[bool]] = False
    higher_is_better: ClassVar[Optional[bool]] = None
    full_state_update: ClassVar[Optional[bool]] = False
    plot_lower_bound: ClassVar[Optional[float]] = None
    plot_upper_bound: ClassVar[Optional[float]] = None
    plot_legend_name: ClassVar[Optional[str]] = None
    signature_name: ClassVar[str] = ""

    #: signature keys that describe state content rather than configuration (FID's ``real_stats:loaded``); they are
    #: left out when a checkpoint or a merged metric is checked against this one (see :meth:`state_signature`)
    _signature_state_keys: ClassVar[tuple[str, ...]] = ()

    #: torch intra-op threads for ``update`` and ``compute`` on CPU; ``None`` keeps torch's setting (see
    #: core/threads.py)
    kernel_threads: ClassVar[Optional[int]] = None

    #: whether ``forward`` returns the batch's own value; ``False``: it accumulates like ``update`` and returns None
    #: (FID, KID: the value of one batch is undefined) — and so does a metric that owns such a metric
    forward_value: ClassVar[bool] = True

    def __init__(self, **kwargs: Any) -> None:
        """
        Args:
            kwargs: torchmetrics' ``Metric`` options — ``compute_on_cpu`` (move list states to the CPU after each
                update), ``dist_sync_on_step`` (``forward`` synchronises the batch's value across ranks),
                ``process_group``, ``dist_sync_fn`` (a user's gather function, torchmetrics' semantics),
                ``distributed_available_fn``, ``sync_on_compute`` (default True), ``compute_with_cache`` (default
                True).

        Raises:
            ValueError: an option of the wrong type, or a keyword that is none of these (naming it).
        """
        super().__init__()
        self._device = torch.get_default_device() if hasattr(torch, "get_default_device") else torch.empty(0).device
        self._dtype = torch.get_default_dtype()
        self.compute_on_cpu = check_bool(kwargs.pop("compute_on_cpu", False), "compute_on_cpu")
        self.dist_sync_on_step = check_bool(kwargs.pop("dist_sync_on_step", False), "dist_sync_on_step")
        self.process_group = kwargs.pop("process_group", None)
        self.dist_sync_fn = kwargs.pop("dist_sync_fn", None)
        if self.dist_sync_fn is not None and not callable(self.dist_sync_fn):
            raise ValueError(f"`dist_sync_fn` must be a callable, got {type(self.dist_sync_fn).__name__}")
        self.distributed_available_fn = kwargs.pop("distributed_available_fn", None) or distributed_available
        self.sync_on_compute = check_bool(kwargs.pop("sync_on_compute", True), "sync_on_compute")
        self.compute_with_cache = check_bool(kwargs.pop("compute_with_cache", True), "compute_with_cache")
        if kwargs:
            raise ValueError(f"Unexpected keyword arguments: {', '.join(f'`{name}`' for name in sorted(kwargs))}")
        self._update_signature = inspect.signature(self.update)
        self.update: Callable = self._wrap_update(self.update)
        self.compute: Callable = self._wrap_compute(self.compute)
        self._computed: Any = None
        self._forward_cache: Any = None
        self._update_count = 0
        self._to_sync = self.sync_on_compute
        self._should_unsync = True
        self._enable_grad = False
        self._dtype_convert = False
        self._defaults: dict[str, Union[list, Tensor]] = {}
        self._persistent: dict[str, bool] = {}
        self._reductions: dict[str, Optional[Callable]] = {}
        self._is_synced = False
        self._cache: Optional[dict[str, Union[list[Tensor], Tensor]]] = None

    @abc.abstractmethod
    def update(self, *args: Any, **kwargs: Any) -> None:
        """Add a batch to the states."""

    @abc.abstractmethod
    def compute(self) -> Any:
        """The metric's value from the states (synchronised across ranks under DDP)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _CONSTANTS:  # class-level facts (torchmetrics refuses them too)
            raise RuntimeError(f"Can't change const `{name}`.")
        super().__setattr__(name, value)

    @property
    def update_called(self) -> bool:
        """Whether ``update`` or ``forward`` ran since the metric was built or last reset."""
        return self._update_count > 0

    @property
    def update_count(self) -> int:
        """How many times ``update`` or ``forward`` ran since the metric was built or last reset."""
        return self._update_count

    @property
    def metric_state(self) -> dict[str, Union[list[Tensor], Tensor]]:
        """State name → current value (a tensor or a list of tensors)."""
        return {name: getattr(self, name) for name in self._defaults}

    @property
    def device(self) -> torch.device:
        """The device of the metric's states."""
        return self._device

    @property
    def dtype(self) -> torch.dtype:
        """The default floating-point dtype of the metric (changed by :meth:`set_dtype` only)."""
        return self._dtype

    def add_state(self, name: str, default: Union[list, Tensor], dist_reduce_fx: Union[str, Callable, None] = None,
                  persistent: bool = False, keep_first: Optional[int] = None) -> None:
        """Register a state: ``self.<name>``, reset to ``default`` by :meth:`reset`.

        Args:
            name: attribute name of the state.
            default: a tensor (any shape) or an empty list (to which ``update`` appends tensors).
            dist_reduce_fx: how ranks (and merged metrics) combine the state: ``"sum"``, ``"mean"``, ``"max"``,
                ``"min"`` (elementwise over ranks), ``"cat"`` (concatenated along dim 0), :func:`replicated`
                (identical on every rank), another callable (applied to the ranks' values stacked on a new dim 0)
                or None (the stacked values, a list state's items joined).
            persistent: whether ``state_dict()`` holds the state (see :meth:`persistent`).
            keep_first: a list state keeps only its first ``keep_first`` entries whenever other entries are merged
                behind them (``merge_state``, ``forward``), so a bounded record stays bounded.

        Raises:
            ValueError: ``default`` is neither a tensor nor an empty list; ``dist_reduce_fx`` is none of the above;
                ``keep_first`` on a tensor state or not a positive int.
        """
        if not isinstance(default, (Tensor, list)) or (isinstance(default, list) and default):
            raise ValueError(f"`default` of the state {name!r} must be a tensor or an empty list (to which tensors "
                             f"are appended), got {type(default).__name__}")
        if isinstance(dist_reduce_fx, str):
            if dist_reduce_fx not in REDUCTIONS_BY_NAME:
                raise ValueError(f"`dist_reduce_fx` must be callable or one of {sorted(REDUCTIONS_BY_NAME)} or None, "
                                 f"got {dist_reduce_fx!r}")
            dist_reduce_fx = REDUCTIONS_BY_NAME[dist_reduce_fx]
        elif dist_reduce_fx is not None and not callable(dist_reduce_fx):
            raise ValueError(f"`dist_reduce_fx` must be callable or one of {sorted(REDUCTIONS_BY_NAME)} or None, got "
                             f"{type(dist_reduce_fx).__name__}")
        if keep_first is not None:
            if not isinstance(default, list):
                raise ValueError(f"`keep_first` bounds a list state; the state {name!r} is a tensor")
            keep_first = check_positive_int(keep_first, "keep_first")
        # states are normal tensors even where the metric is built under torch.inference_mode (an eval function
        # decorated with it): an inference tensor cannot be updated in place outside that mode
        with torch.inference_mode(False):
            if isinstance(default, Tensor):
                default = (default.clone() if default.is_inference() else default).contiguous()
            setattr(self, name, default)
            self._defaults[name] = copy.deepcopy(default)
        self._persistent[name] = persistent
        self._reductions[name] = canonical_reduction(dist_reduce_fx)
        if keep_first is not None:
            vars(self).setdefault("_kept_first", {})[name] = keep_first

    def _reset_states(self) -> None:
        """Every registered state to its default; the count, caches and sync flags cleared (torchmetrics' reset)."""
        self._update_count = 0
        self._forward_cache = None
        self._computed = None
        with torch.inference_mode(False):  # the fresh states likewise (see add_state)
            for name, default in self._defaults.items():
                if isinstance(default, Tensor):
                    setattr(self, name, default.detach().clone().to(getattr(self, name).device))
                else:
                    getattr(self, name).clear()  # frees the items' memory now
        self._cache = None
        self._is_synced = False

    def reset(self) -> None:
        """Reset the states, and those of every metric this one owns (:meth:`owned_metrics`)."""
        self._reset_states()
        for metric in self.owned_metrics().values():
            metric.reset()

    def clone(self) -> Metric:
        """A deep copy of the metric (states, options, count)."""
        return copy.deepcopy(self)

    def owned_metrics(self) -> dict[str, Metric]:
        """The metrics this metric owns, by their module path (``{"meteor": …, "clip": …}``): its submodules that are
        metrics, not looking inside them (theirs are theirs). A composite's ``reset``, ``merge_state``,
        ``persistent`` and ``forward`` treat it and these as one metric."""
        owned: dict[str, Metric] = {}
        # a walk over the ``_modules`` dicts with an MRO test (``named_modules`` and ABC ``isinstance`` took ~1 ms
        # over the 300 modules of FID's Inception, on every reset and forward)
        pending = [(name, module) for name, module in reversed(self._modules.items()) if module is not None]
        while pending:
            name, module = pending.pop()
            if Metric in type(module).__mro__:
                owned[name] = module
            else:
                pending.extend((f"{name}.{child}", sub) for child, sub in reversed(module._modules.items())
                               if sub is not None)
        return owned

    def _metric_tree(self) -> list[Metric]:
        """This metric and every metric under it (those its owned metrics own too), parents first."""
        tree, pending = [], [self]
        while pending:
            metric = pending.pop()
            tree.append(metric)
            pending.extend(reversed(metric.owned_metrics().values()))
        return tree

    @property
    def computing_batch_value(self) -> bool:
        """True while ``forward`` computes the value of its batch alone. What ``compute()`` reports about the
        accumulated states (e.g. the files that could not be read) is reported once, by the ``compute()`` over all
        the batches, not by every step's batch value."""
        return vars(self).get("_computing_batch_value", False)

    def _wrap_update(self, update: Callable) -> Callable:
        update = gc_paused(update)

        @functools.wraps(update)
        def counted(*args: Any, **kwargs: Any) -> None:
            if self.device.type == "meta":  # its states hold no data (the metric was moved with .to("meta"))
                raise ValueError(f"{type(self).__name__} is on the meta device, whose tensors hold no data: move it "
                                 "to a device (metric.to('cpu'), .to('cuda')) before update")
            # counted when it succeeds only: a rejected update does not count (a checkpoint would say 1 update,
            # compute() would no longer warn about none). The cached value stays dropped: an update that fails after
            # changing a state must not be answered from the cache
            count = self._update_count
            self._computed = None
            self._update_count = count + 1
            try:
                with torch.set_grad_enabled(self._enable_grad):
                    update(*args, **kwargs)
            except RuntimeError as error:
                self._update_count = count
                if "Expected all tensors to be on" in str(error):
                    raise RuntimeError(f"{type(self).__name__}: the inputs are on another device than the metric; "
                                       f"move the metric to theirs (`{type(self).__name__}(...).to(device)`)"
                                       ) from error
                raise
            except BaseException:
                self._update_count = count
                raise
            if self.compute_on_cpu:
                self._move_list_states_to_cpu()

        return self._with_kernel_threads(counted)

    def _move_list_states_to_cpu(self) -> None:
        for name in self._defaults:
            value = getattr(self, name)
            if isinstance(value, list):
                setattr(self, name, [item.to("cpu") for item in value])

    def _wrap_compute(self, compute: Callable) -> Callable:
        @functools.wraps(compute)
        def finished(*args: Any, **kwargs: Any) -> Any:
            if not self.update_called and _is_rank_zero():
                warn_caller(f"The ``compute`` method of metric {type(self).__name__} was called before the ``update`` "
                            "method which may lead to errors, as metric states have not yet been updated.")
            if self._to_sync and not self._is_synced and self.distributed_available_fn():
                # under DDP the value depends on every rank's states: a rank answering from its cache (nothing
                # updated there since) skipped the collectives the others entered, which then waited or paired with
                # the next sync (a stale or mixed value)
                self._computed = None
            if self._computed is not None:
                return self._finish_compute(self._computed)
            with self.sync_context(dist_sync_fn=self.dist_sync_fn, should_sync=self._to_sync,
                                   should_unsync=self._should_unsync):
                # one-element tensors squeezed to 0-d (torchmetrics' rule, which Lightning's logging expects);
                # cloned so that in-place changes of the result leave the cache alone
                value = metric_state.map_tensors(compute(*args, **kwargs),
                                                 lambda x: (x.squeeze() if x.numel() == 1 else x).clone())
            if self.compute_with_cache:
                self._computed = value
            return self._finish_compute(value)

        return self._with_kernel_threads(finished)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Update with the batch and return the batch's own value (``compute()`` over that batch alone), all or
        nothing: when the update or the batch's ``compute`` raises, the states and flags are those from before the
        call.

        The batch runs alone: the accumulated states are kept aside (tensor states by reference, not copied: they are
        replaced by fresh tensors and merged back without being written into; list states' items in a new list), the
        states reset, ``update`` and ``compute`` run (synchronised across ranks only with ``dist_sync_on_step``), and
        the kept states are merged in front of the batch's. ``full_state_update=True`` (or ``dist_sync_on_step``)
        instead updates the accumulated states first and recomputes the batch alone from a clone of them.

        Raises:
            RuntimeError: the metric is synchronised (``sync()`` without ``unsync()``).
        """
        if self._is_synced:
            raise RuntimeError(f"{type(self).__name__} is synchronised across ranks: call `unsync()` before forward")
        tree = self._metric_tree()
        if not all(getattr(metric, "forward_value", True) for metric in tree):
            self.update(*args, **kwargs)
            self._forward_cache = None
            return None
        if len(tree) > 1:
            return self._forward_tree(tree, *args, **kwargs)
        clone = self.full_state_update or self.full_state_update is None or self.dist_sync_on_step
        saved = {name: (value.clone() if clone else value) if isinstance(value, Tensor) else list(value)
                 for name, value in self.metric_state.items()}
        flags = {name: getattr(self, name) for name in _FORWARD_FLAGS}
        try:
            with _batch_value([self]):
                if clone:
                    self._forward_cache = self._forward_full_state_update(saved, *args, **kwargs)
                else:
                    self._forward_cache = self._forward_reduce_state_update(saved, *args, **kwargs)
            return self._forward_cache
        except BaseException:
            for name, value in {**saved, **flags}.items():
                setattr(self, name, value)
            raise

    def _batch_settings(self) -> None:
        """``forward``'s batch value: synchronised only with ``dist_sync_on_step``, on the device, with gradients."""
        self._to_sync = self.dist_sync_on_step
        self._should_unsync = False
        self.compute_on_cpu = False
        self._enable_grad = True

    def _restore_settings(self, compute_on_cpu: bool) -> None:
        self._is_synced = False
        self._should_unsync = True
        self._to_sync = self.sync_on_compute
        self._computed = None
        self._enable_grad = False
        self.compute_on_cpu = compute_on_cpu
        if self.compute_on_cpu:
            self._move_list_states_to_cpu()

    def _forward_full_state_update(self, accumulated: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        """``forward`` of a metric whose ``update`` reads the accumulated states: update them, then score the batch
        alone from the defaults and put back the updated states (``accumulated`` holds clones of the states before
        the call)."""
        self.update(*args, **kwargs)
        count, compute_on_cpu = self._update_count, self.compute_on_cpu
        updated = {name: value.clone() if isinstance(value, Tensor) else list(value)
                   for name, value in self.metric_state.items()}
        self._batch_settings()
        self.reset()
        self.update(*args, **kwargs)
        value = self.compute()
        for name, state in updated.items():
            setattr(self, name, state)
        self._update_count = count
        self._restore_settings(compute_on_cpu)
        return value

    def _forward_reduce_state_update(self, accumulated: dict[str, Any], *args: Any, **kwargs: Any) -> Any:
        """``forward`` when the states of the batch reduce into the accumulated ones (``full_state_update=False``)."""
        count, compute_on_cpu = self._update_count, self.compute_on_cpu
        self.reset()
        self._batch_settings()
        self.update(*args, **kwargs)
        value = self.compute()
        self._update_count = count + 1
        with torch.no_grad():
            self._reduce_states(accumulated)
        self._restore_settings(compute_on_cpu)
        return value

    def _forward_tree(self, tree: list[Metric], *args: Any, **kwargs: Any) -> Any:
        """``forward`` of a metric that owns metrics (the AIJ-2022 captioning scores: METEOR and CLIP): every metric
        of the tree keeps its states aside, the batch runs alone (every registered state at its default, ``update``,
        ``compute``: its own value, synchronised only with ``dist_sync_on_step``), and each metric then merges the
        kept states in front of the batch's; on an exception every state, count and flag is put back."""
        kept = [(metric, {name: value if isinstance(value, Tensor) else list(value)
                          for name, value in metric.metric_state.items()},
                 {name: getattr(metric, name) for name in _FORWARD_FLAGS}) for metric in tree]
        try:
            for metric in tree:  # every registered state to its default: a subclass's reset() may keep some
                metric._reset_states()
            for metric in tree:  # the batch's value is computed from the batch alone, on this process
                metric._to_sync, metric._should_unsync = metric.dist_sync_on_step, False
            self.update(*args, **kwargs)
            with _batch_value(tree):
                value = self.compute()
        except BaseException:
            for metric, states, flags in kept:
                for name, state in {**states, **flags}.items():
                    setattr(metric, name, state)
            raise
        for metric, states, flags in kept:
            count = flags["_update_count"] + metric._update_count  # the batch's updates after the kept ones
            metric._update_count = count
            metric._reduce_states(states)
            for name in ("_to_sync", "_should_unsync", "compute_on_cpu", "_enable_grad"):
                setattr(metric, name, flags[name])
            metric._computed = None
        self._forward_cache = value
        return value

    def _finish_compute(self, value: Any) -> Any:
        """Hook on every ``compute()`` result, after the wrapper's squeeze and cache (identity here)."""
        return value

    def _with_kernel_threads(self, fn: Callable) -> Callable:
        if self.kernel_threads is None:
            return fn

        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with intra_op_threads(self.kernel_threads):
                return fn(*args, **kwargs)

        return wrapped

    def _filter_kwargs(self, **kwargs: Any) -> dict[str, Any]:
        """The keyword arguments ``update`` takes (all of them when it has ``**kwargs``); ``MetricCollection`` hands
        each metric its own."""
        params = self._update_signature.parameters
        if any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values()):
            return kwargs
        variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        return {key: value for key, value in kwargs.items() if key in params and params[key].kind not in variadic}

    def sync(self, dist_sync_fn: Optional[Callable] = None, process_group: Optional[Any] = None,
             should_sync: bool = True, distributed_available: Optional[Callable] = None) -> None:
        """Replace the states by their reduction over the ranks (under DDP; nothing otherwise), keeping this rank's
        own states for :meth:`unsync`.

        Raises:
            RuntimeError: the metric is already synchronised.
        """
        metric_sync.sync(self, dist_sync_fn, process_group, should_sync, distributed_available)

    def unsync(self, should_unsync: bool = True) -> None:
        """Put back this rank's own states after :meth:`sync`.

        Raises:
            RuntimeError: the metric is not synchronised.
        """
        metric_sync.unsync(self, should_unsync)

    @contextlib.contextmanager
    def sync_context(self, dist_sync_fn: Optional[Callable] = None, process_group: Optional[Any] = None,
                     should_sync: bool = True, should_unsync: bool = True,
                     distributed_available: Optional[Callable] = None) -> Iterator[None]:
        """:meth:`sync` on entry, :meth:`unsync` on exit (also when the body raises)."""
        self.sync(dist_sync_fn=dist_sync_fn, process_group=process_group, should_sync=should_sync,
                  distributed_available=distributed_available)
        try:
            yield
        finally:
            self.unsync(should_unsync=self._is_synced and should_unsync)

    def _sync_dist(self, dist_sync_fn: Callable = gather_all_tensors, process_group: Optional[Any] = None) -> None:
        metric_sync.sync_dist(self, dist_sync_fn, process_group)

    def _sync_by_gather(self, gather: Callable, group: Optional[Any]) -> None:
        """torchmetrics' synchronisation through ``gather(tensor, group=...) -> [every rank's tensor]``: each state
        gathered (a list state concatenated first), the ranks' values stacked (tensors) or joined (lists), then
        reduced by the state's reduction."""
        metric_sync.sync_by_gather(self, gather, group)

    def _reduce_states(self, incoming_state: dict[str, Any]) -> None:
        """Reduce ``incoming_state`` (state name → value) with this metric's states, incoming first for ``cat``
        states (``forward`` hands the accumulated states here, the batch's being this metric's)."""
        metric_sync.reduce_states(self, incoming_state)

    def _keep_first_entries(self) -> None:
        metric_sync.keep_first_entries(self)

    def merge_state(self, incoming_state: Union[dict[str, Any], Metric]) -> None:
        """Add another metric's states (or a ``metric_state`` dict) to this one's, as if its batches had been
        updated here after this metric's (class docstring). A metric that owns metrics merges another of its class
        only, each owned metric from its counterpart (:meth:`_merge_owned`). The incoming states may live on another
        device: they are moved to this metric's.

        Raises:
            TypeError: a metric that owns metrics is given something else than a metric of its class.
            ValueError: ``incoming_state`` is neither a dict nor a metric of this class; its signature differs.
            RuntimeError: the metric has ``full_state_update=True`` or ``dist_sync_on_step=True``.
        """
        owned = self.owned_metrics()
        if owned and not isinstance(incoming_state, type(self)):
            raise TypeError(f"{type(self).__name__}.merge_state takes another {type(self).__name__} (its states live "
                            f"in its child metrics too), got {type(incoming_state).__name__}")
        self._merge_own_states(incoming_state)
        for name, metric in owned.items():
            self._merge_owned(name, metric, incoming_state.get_submodule(name))

    def _merge_owned(self, name: str, metric: Metric, incoming: Metric) -> None:
        """Merge ``incoming``, the other metric's counterpart of the owned metric ``name``, into ``metric``."""
        metric.merge_state(incoming)

    def _merge_own_states(self, incoming_state: Union[dict[str, Any], Metric]) -> None:
        if not isinstance(incoming_state, (dict, Metric)):
            raise ValueError(f"`incoming_state` must be a dict of states or a {type(self).__name__}, got "
                             f"{type(incoming_state).__name__}")
        if self.full_state_update or self.full_state_update is None or self.dist_sync_on_step:
            raise RuntimeError(f"{type(self).__name__}.merge_state is not supported with `full_state_update=True` or "
                               "`dist_sync_on_step=True`: override merge_state in the metric class")
        if not isinstance(incoming_state, Metric):
            metric_sync.merge_states(self, incoming_state, None)
            return
        if not isinstance(incoming_state, type(self)):
            raise ValueError(f"`incoming_state` must be a {type(self).__name__}, got {type(incoming_state).__name__}")
        mine, theirs = self.state_signature(), incoming_state.state_signature()
        if mine != theirs:
            raise ValueError(f"cannot merge the states of a metric `{theirs}` into a metric `{mine}`: the "
                             "signatures differ, so the numbers are not comparable")
        metric_sync.merge_states(self, incoming_state.metric_state, incoming_state._update_count)

    def persistent(self, mode: bool = False) -> None:
        """Whether ``state_dict()`` holds the metric states (default False, as torchmetrics); child metrics follow."""
        for name in self._persistent:
            self._persistent[name] = mode
        for module in self.modules():
            if module is not self and isinstance(module, Metric):
                module.persistent(mode)

    def state_dict(self, destination: Optional[dict[str, Any]] = None, prefix: str = "", keep_vars: bool = False):
        """``nn.Module.state_dict`` plus the persistent states (copies), the update count and the signature."""
        destination = super().state_dict(destination=destination, prefix=prefix, keep_vars=keep_vars)
        tree = [m for m in self.modules() if isinstance(m, Metric)]
        return metric_state.add_persistent_states(self, destination, prefix, keep_vars, tree)

    def _load_from_state_dict(
        self,
        state_dict: dict,
        prefix: str,
        local_metadata: dict,
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        metric_state.load_from_state_dict(self, super()._load_from_state_dict, state_dict, prefix, local_metadata,
                                          missing_keys, unexpected_keys, error_msgs)

    def _adopt_state(self, name: str, value: Any) -> Union[Tensor, list[Tensor]]:
        """A copy of a checkpointed state on this metric's device (tensor states keep their current dtype)."""
        return metric_state.adopt_state(self, name, value)

    def _apply(self, fn: Callable, exclude_state: Sequence[str] = ()) -> torch.nn.Module:
        """Move states with the metric; change their dtype only as ``set_dtype`` asks, never float64 or integers.

        ``nn.Module`` calls this for ``.to(...)``, ``.cuda()``, ``.cpu()``, ``.half()``, ``.bfloat16()``,
        ``.float()``, ``.double()``, ``.type(dtype)`` and a parent module's conversion. A dtype conversion
        (Lightning's ``"16-true"``/``"bf16-true"`` call ``model.to(dtype)``) moves every tensor of the metric —
        states, their defaults, cached values, the parameters of an encoder it owns — to the new device only; each
        keeps its dtype (float64 accumulators in float16 would drift, counts past 65,504 give NaN).
        ``set_dtype(dtype)`` casts floating-point tensors that are not float64 (e.g. float32 features, an encoder's
        weights), as torchmetrics does; float64, integer and bool tensors keep their dtype.
        """
        return metric_state.apply(self, super()._apply, fn, exclude_state)

    def set_dtype(self, dst_type: Union[str, torch.dtype]) -> Metric:
        """Cast the floating-point tensors that are not float64 (states, features, an owned encoder's weights) to
        ``dst_type``; float64 accumulators and integer/bool counts keep their dtype (see :meth:`_apply`)."""
        return metric_state.set_dtype(self, super().type, dst_type)

    def __getstate__(self) -> dict[str, Any]:
        # the wrapped bound methods are rebuilt on unpickling (they close over ``self``)
        return {k: v for k, v in self.__dict__.items() if k not in ("update", "compute", "_update_signature")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._update_signature = inspect.signature(self.update)
        self.update = self._wrap_update(self.update)
        self.compute = self._wrap_compute(self.compute)

    def _signature_fields(self) -> dict[str, Any]:
        """Ordered ``key → value`` pairs that identify how this metric's number was produced."""
        return {}

    def signature(self) -> str:
        """A sacrebleu-style signature, e.g. ``token_f1|preset:squad|version:0.1.0``."""
        name = self.signature_name or type(self).__name__
        return format_signature(name, self._signature_fields())

    def state_signature(self) -> str:
        """What this metric's states are computed with: :meth:`signature` without the library version (and without
        the keys of ``_signature_state_keys``, its own and its child metrics', whose signatures a composite metric
        may quote). Two metrics can exchange states (``load_state_dict``, ``merge_state``) only when theirs are
        equal."""
        ignored = {"version"}.union(*(getattr(m, "_signature_state_keys", ()) for m in self.modules()))
        return "|".join(part for part in self.signature().split("|") if part.split(":", 1)[0] not in ignored)


#: what torchmetrics' ``forward`` changes besides the states
_FORWARD_FLAGS = ("_update_count", "_computed", "_forward_cache", "_to_sync", "_should_unsync", "_is_synced",
                  "compute_on_cpu", "_enable_grad")


@contextlib.contextmanager
def _batch_value(metrics: Sequence[Metric]) -> Iterator[None]:
    """Mark ``metrics`` as computing a batch's own value (:attr:`Metric.computing_batch_value`) while inside."""
    for metric in metrics:
        vars(metric)["_computing_batch_value"] = True
    try:
        yield
    finally:
        for metric in metrics:
            vars(metric).pop("_computing_batch_value", None)


#: class-level facts an instance may not set (torchmetrics' rule)
_CONSTANTS = frozenset(("higher_is_better", "is_differentiable", "full_state_update", "plot_lower_bound",
                        "plot_upper_bound", "plot_legend_name"))


def _is_rank_zero() -> bool:
    """Whether this process is rank 0 (or not distributed): one warning per run, not one per rank."""
    return not distributed_available() or torch.distributed.get_rank() == 0


register_on_import(Metric, "torchmetrics", "Metric")

"""The gpumetrics ``Metric`` base: a ``torchmetrics.Metric`` with an all-reduce DDP reducer and a signature."""

from __future__ import annotations

import contextlib
import functools
from typing import Any, Callable, ClassVar, Iterator, Optional, Sequence, Union

import torch
import torchmetrics
from torch import Tensor
from torchmetrics.utilities.data import dim_zero_cat
from torchmetrics.utilities.distributed import gather_all_tensors

from gpumetrics.core.checks import check_positive_int
from gpumetrics.core.distributed import REDUCE_OPS, check_same_on_all_ranks, replicated, state_layout, sync_states
from gpumetrics.core.gcpause import gc_paused
from gpumetrics.core.signature import format_signature
from gpumetrics.core.threads import intra_op_threads


class Metric(torchmetrics.Metric):
    """Base class of every gpumetrics module.

    Behaves as a ``torchmetrics.Metric`` (Lightning logging, ``MetricCollection``, ``reset``, ``state_dict``,
    ``merge_state``) with two additions:

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

    Subclasses set ``signature_name`` and override ``_signature_fields``.
    """

    full_state_update: ClassVar[bool] = False
    is_differentiable: ClassVar[bool] = False
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

    def add_state(self, name: str, default: Any, *args: Any, keep_first: Optional[int] = None, **kwargs: Any) -> None:
        """torchmetrics' ``add_state``; ``keep_first=k`` (a list state) keeps only its first ``k`` entries whenever
        other entries are merged behind them (``merge_state``, ``forward``), so a bounded record stays bounded."""
        # states are normal tensors even where the metric is built under torch.inference_mode (an eval function
        # decorated with it): an inference tensor cannot be updated in place outside that mode
        with torch.inference_mode(False):
            if isinstance(default, Tensor) and default.is_inference():
                default = default.clone()
            super().add_state(name, default, *args, **kwargs)
        if keep_first is not None:
            if not isinstance(default, list):
                raise ValueError(f"`keep_first` bounds a list state; the state {name!r} is a tensor")
            vars(self).setdefault("_kept_first", {})[name] = check_positive_int(keep_first, "keep_first")

    def reset(self) -> None:
        """Reset the states, and those of every metric this one owns (:meth:`owned_metrics`)."""
        with torch.inference_mode(False):  # the fresh states likewise (see add_state)
            super().reset()
        for metric in self.owned_metrics().values():
            metric.reset()

    def owned_metrics(self) -> dict[str, torchmetrics.Metric]:
        """The metrics this metric owns, by their module path (``{"meteor": …, "clip": …}``): its submodules that are
        metrics, not looking inside them (theirs are theirs). A composite's ``reset``, ``merge_state``,
        ``persistent`` and ``forward`` treat it and these as one metric."""
        owned: dict[str, torchmetrics.Metric] = {}
        # a walk over the ``_modules`` dicts with an MRO test (``named_modules`` and ABC ``isinstance`` took ~1 ms
        # over the 300 modules of FID's Inception, on every reset and forward)
        pending = [(name, module) for name, module in reversed(self._modules.items()) if module is not None]
        while pending:
            name, module = pending.pop()
            if torchmetrics.Metric in type(module).__mro__:
                owned[name] = module
            else:
                pending.extend((f"{name}.{child}", sub) for child, sub in reversed(module._modules.items())
                               if sub is not None)
        return owned

    def _metric_tree(self) -> list[torchmetrics.Metric]:
        """This metric and every metric under it (those its owned metrics own too), parents first."""
        tree, pending = [], [self]
        while pending:
            metric = pending.pop()
            tree.append(metric)
            owned = metric.owned_metrics() if isinstance(metric, Metric) else {}
            pending.extend(reversed(owned.values()))
        return tree

    @property
    def computing_batch_value(self) -> bool:
        """True while ``forward`` computes the value of its batch alone. What ``compute()`` reports about the
        accumulated states (e.g. the files that could not be read) is reported once, by the ``compute()`` over all
        the batches, not by every step's batch value."""
        return vars(self).get("_computing_batch_value", False)

    def _wrap_update(self, update: Callable) -> Callable:
        # the thread setting encloses torchmetrics' bookkeeping too: every op of update/compute runs under it
        wrapped = self._with_kernel_threads(super()._wrap_update(gc_paused(update)))

        @functools.wraps(update)
        def counted(*args: Any, **kwargs: Any) -> None:
            # torchmetrics counts the update before running it: a rejected update would count (a checkpoint said 1
            # update, compute() no longer warned about none). The cached value stays dropped: an update that fails
            # after changing a state must not be answered from the cache
            if self.device.type == "meta":  # its states hold no data (the metric was moved with .to("meta"))
                raise ValueError(f"{type(self).__name__} is on the meta device, whose tensors hold no data: move it "
                                 "to a device (metric.to('cpu'), .to('cuda')) before update")
            count = self._update_count
            try:
                wrapped(*args, **kwargs)
            except BaseException:
                self._update_count = count
                raise

        return counted

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """As torchmetrics' ``forward`` (update, and the batch's own value), but all or nothing: when the update or
        the batch's ``compute`` raises, the states and flags are those from before the call. torchmetrics resets the
        states to run the batch alone and merges the saved ones back only at the end, so a rejected batch erased
        everything accumulated before it and left the step's sync flags set.

        Tensor states are kept by reference, not copied (a copy of every state on every step, however large): that
        path resets them to fresh tensors and merges without writing into the saved ones; list states are emptied in
        place by the reset, so their items are kept in a new list. Only ``full_state_update=True`` updates the
        accumulated tensors in place first, so there they are cloned."""
        tree = self._metric_tree()
        if not all(getattr(metric, "forward_value", True) for metric in tree):
            self.update(*args, **kwargs)
            self._forward_cache = None
            return None
        if len(tree) > 1:
            return self._forward_tree(tree, *args, **kwargs)
        clone = self.full_state_update
        saved = {name: (value.clone() if clone else value) if isinstance(value, Tensor) else list(value)
                 for name, value in ((name, getattr(self, name)) for name in self._defaults)}
        flags = {name: getattr(self, name) for name in _FORWARD_FLAGS}
        try:
            with _batch_value([self]):
                return super().forward(*args, **kwargs)
        except BaseException:
            for name, value in {**saved, **flags}.items():
                setattr(self, name, value)
            raise

    def _forward_tree(self, tree: list[torchmetrics.Metric], *args: Any, **kwargs: Any) -> Any:
        """``forward`` of a metric that owns metrics (the AIJ-2022 captioning scores: METEOR and CLIP): torchmetrics'
        forward saved and merged back this metric's own states only, while its ``reset()`` emptied the children's —
        every batch before the last was lost from them. Here every metric of the tree keeps its states aside, the
        batch runs alone (every registered state at its default, ``update``, ``compute``: its own value, synchronised
        only with ``dist_sync_on_step``), and each metric then merges the kept states in front of the batch's; on an
        exception every state, count and flag is put back."""
        kept = [(metric, {name: getattr(metric, name) if isinstance(getattr(metric, name), Tensor)
                          else list(getattr(metric, name)) for name in metric._defaults},
                 {name: getattr(metric, name) for name in _FORWARD_FLAGS}) for metric in tree]
        try:
            with torch.inference_mode(False):  # (see add_state)
                for metric in tree:  # every registered state to its default: a subclass's reset() may keep some
                    torchmetrics.Metric.reset(metric)
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

    def _wrap_compute(self, compute: Callable) -> Callable:
        wrapped = super()._wrap_compute(compute)  # torchmetrics: sync, cache, squeeze of one-element results

        @functools.wraps(compute)
        def finished(*args: Any, **kwargs: Any) -> Any:
            if self._to_sync and not self._is_synced and self.distributed_available_fn():
                # under DDP the value depends on every rank's states: a rank answering from its cache (nothing
                # updated there since) skipped the collectives the others entered, which then waited or paired with
                # the next sync (a stale or mixed value)
                self._computed = None
            return self._finish_compute(wrapped(*args, **kwargs))

        return self._with_kernel_threads(finished)

    def _finish_compute(self, value: Any) -> Any:
        """Hook on every ``compute()`` result, after torchmetrics' wrapper (identity here)."""
        return value

    def _with_kernel_threads(self, fn: Callable) -> Callable:
        if self.kernel_threads is None:
            return fn

        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            with intra_op_threads(self.kernel_threads):
                return fn(*args, **kwargs)

        return wrapped

    def _sync_dist(self, dist_sync_fn: Callable = gather_all_tensors, process_group: Optional[Any] = None) -> None:
        group = process_group or self.process_group
        if dist_sync_fn is not gather_all_tensors:  # a user-supplied sync function keeps torchmetrics' semantics
            if torch.distributed.is_available() and torch.distributed.is_initialized():  # its own transport otherwise
                check_same_on_all_ranks(self.state_signature(), type(self).__name__, group)
            super()._sync_dist(dist_sync_fn, process_group)
            return
        states = {name: getattr(self, name) for name in self._reductions}
        # ranks built with other options would add incomparable states into one number, and ranks whose additive
        # states differ in dtype or shape (set_dtype on one rank) would flatten them into buffers that do not match:
        # both are refused on every rank instead of a mixed number or a wait in mismatched collectives
        layout = state_layout(states, self._reductions)
        check_same_on_all_ranks(self.state_signature(), type(self).__name__, group, layout)
        synced = sync_states(states, self._reductions, gather_all_tensors, group)
        for name, value in synced.items():
            setattr(self, name, value)

    def _reduce_states(self, incoming_state: dict[str, Any]) -> None:
        # torchmetrics stacks the two values of a custom reduction, which fails for an empty vs a filled replicated
        # state: merge those here and hand torchmetrics two equal values
        incoming_state = dict(incoming_state)
        for name, reduction_fn in self._reductions.items():
            if reduction_fn is replicated and name in incoming_state:
                merged = _merge_replicated(name, getattr(self, name), incoming_state[name])
                setattr(self, name, merged)
                incoming_state[name] = merged
        super()._reduce_states(incoming_state)
        self._keep_first_entries()

    def _keep_first_entries(self) -> None:
        for name, count in vars(self).get("_kept_first", {}).items():
            entries = getattr(self, name)
            if isinstance(entries, list) and len(entries) > count:  # a synchronised state is one tensor: kept whole
                setattr(self, name, entries[:count])

    def merge_state(self, incoming_state: Union[dict[str, Any], torchmetrics.Metric]) -> None:
        """Add another metric's states (or a ``metric_state`` dict) to this one's, as if its batches had been
        updated here after this metric's (class docstring). A metric that owns metrics merges another of its class
        only, each owned metric from its counterpart (:meth:`_merge_owned`)."""
        owned = self.owned_metrics()
        if owned and not isinstance(incoming_state, type(self)):
            raise TypeError(f"{type(self).__name__}.merge_state takes another {type(self).__name__} (its states live "
                            f"in its child metrics too), got {type(incoming_state).__name__}")
        self._merge_own_states(incoming_state)
        for name, metric in owned.items():
            self._merge_owned(name, metric, incoming_state.get_submodule(name))

    def _merge_owned(self, name: str, metric: torchmetrics.Metric, incoming: torchmetrics.Metric) -> None:
        """Merge ``incoming``, the other metric's counterpart of the owned metric ``name``, into ``metric``."""
        metric.merge_state(incoming)

    def _merge_own_states(self, incoming_state: Union[dict[str, Any], torchmetrics.Metric]) -> None:
        own_entries = {
            name: list(getattr(self, name))
            for name, reduction_fn in self._reductions.items()
            if reduction_fn is dim_zero_cat and isinstance(getattr(self, name), list)
        }
        if isinstance(incoming_state, Metric) and isinstance(incoming_state, type(self)):
            mine, theirs = self.state_signature(), incoming_state.state_signature()
            if mine != theirs:
                raise ValueError(f"cannot merge the states of a metric `{theirs}` into a metric `{mine}`: the "
                                 "signatures differ, so the numbers are not comparable")
        super().merge_state(incoming_state)  # validates and reduces every state
        self._computed = None  # torchmetrics would keep returning the value cached before the merge
        if isinstance(incoming_state, torchmetrics.Metric):
            # as one pass, the merged metric has seen both metrics' updates (torchmetrics keeps its own count: a fresh
            # metric that merged another warned "compute ... called before the update method" and checkpointed 0)
            self._update_count += incoming_state._update_count
        incoming = incoming_state.metric_state if isinstance(incoming_state, torchmetrics.Metric) else incoming_state
        for name, local in own_entries.items():
            other = incoming[name]
            setattr(self, name, local + (list(other) if isinstance(other, list) else [other]))
        self._keep_first_entries()

    def persistent(self, mode: bool = False) -> None:
        """Whether ``state_dict()`` holds the metric states (default False, as torchmetrics); child metrics follow."""
        super().persistent(mode)
        for module in self.modules():
            if module is not self and isinstance(module, torchmetrics.Metric):
                module.persistent(mode)

    def state_dict(self, destination: Optional[dict[str, Any]] = None, prefix: str = "", keep_vars: bool = False):
        destination = super().state_dict(destination=destination, prefix=prefix, keep_vars=keep_vars)
        metrics = [m for m in self.modules() if isinstance(m, torchmetrics.Metric)]
        if any(flag for m in metrics for flag in m._persistent.values()):
            # a 0-d tensor, so that ``torch.load(weights_only=True)`` accepts the checkpoint
            destination[prefix + _UPDATE_COUNT] = torch.tensor(self._update_count, dtype=torch.long)
            destination[prefix + _SIGNATURE] = _encode_signature(self.state_signature())
        return destination

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
        signature = state_dict.pop(prefix + _SIGNATURE, None)
        if signature is not None:
            saved, own = _decode_signature(signature, prefix + _SIGNATURE), self.state_signature()
            if saved != own:
                raise ValueError(f"cannot load the states of a metric `{saved}` into a metric `{own}`: the "
                                 "signatures differ, so the numbers are not comparable (build the metric with the "
                                 "options the checkpoint was written with)")
        loaded = False
        for name in self._defaults:
            key = prefix + name
            if key not in state_dict:
                if self._persistent.get(name, False):  # reported when ``load_state_dict(strict=True)``
                    missing_keys.append(key)
                continue
            try:
                state_dict[key] = self._adopt_state(name, state_dict[key])
                loaded = True
            except (TypeError, ValueError) as error:
                error_msgs.append(f"{key}: {error}")
                state_dict.pop(key)
        count = state_dict.pop(prefix + _UPDATE_COUNT, None)
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
        )
        if count is not None:
            self._update_count = int(count)
        if loaded or count is not None:
            self._computed = None
            self._forward_cache = None

    def _adopt_state(self, name: str, value: Any) -> Union[Tensor, list[Tensor]]:
        """A copy of a checkpointed state on this metric's device (tensor states keep their current dtype)."""
        current = getattr(self, name)
        if isinstance(value, Tensor):
            if isinstance(current, Tensor):
                if self._reductions[name] in REDUCE_OPS and value.shape != current.shape:
                    raise ValueError(f"expected a tensor of shape {tuple(current.shape)}, got {tuple(value.shape)}")
                return value.detach().to(device=current.device, dtype=current.dtype, copy=True)
            return [value.detach().to(device=self.device, copy=True)]  # a synchronised ``cat`` state
        if isinstance(value, (list, tuple)) and all(isinstance(v, Tensor) for v in value):
            if isinstance(current, Tensor):
                raise TypeError(f"expected a tensor, got a list of {len(value)} tensors")
            return [v.detach().to(device=self.device, copy=True) for v in value]
        raise TypeError(f"a metric state must be a tensor or a list of tensors, got {type(value).__name__}")

    def _apply(self, fn: Callable, exclude_state: Sequence[str] = "") -> torch.nn.Module:
        """Move states with the metric; change their dtype only as ``set_dtype`` asks, never float64 or integers.

        torchmetrics guards ``.half()``/``.float()``/``.double()``/``.type()``/``.bfloat16()`` but not
        ``.to(dtype)``, which Lightning's ``"16-true"``/``"bf16-true"`` precision calls on the whole model: float64
        accumulators became float16 (scores drift; counts past 65,504 give NaN). Here a dtype conversion through the
        ``nn.Module`` API (``.to(dtype)``, ``.to(device, dtype)``, ``.half()``, ``.bfloat16()``, ``.float()``,
        ``.double()``, ``.type(dtype)``, a parent module's conversion) moves every tensor of the metric — states,
        their defaults, cached values, the parameters of an encoder it owns — to the new device only; each keeps its
        dtype. ``set_dtype(dtype)`` casts floating-point tensors that are not float64 (e.g. float32 features, an
        encoder's weights), as torchmetrics does; float64, integer and bool tensors keep their dtype.
        """
        probes = (torch.zeros((), dtype=torch.float32, device=self.device),
                  torch.zeros((), dtype=torch.float64, device=self.device))
        moved = [fn(probe) for probe in probes]
        device = moved[0].device
        if self._dtype_convert:  # ``set_dtype``: floating tensors follow, float64 and integer/bool ones do not

            def guarded(tensor: Tensor) -> Tensor:
                if tensor.is_floating_point() and tensor.dtype != torch.float64:
                    return fn(tensor)
                return tensor.to(device=device)

        elif any(out.dtype != probe.dtype for out, probe in zip(moved, probes)):  # an implicit dtype conversion

            def guarded(tensor: Tensor) -> Tensor:
                return tensor.to(device=device)

        else:  # a device move (``.to(device)``, ``.cuda()``, ``.cpu()``) or another dtype-preserving function
            return super()._apply(fn, exclude_state)
        return super()._apply(guarded, exclude_state)

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


_UPDATE_COUNT = "_update_count"
_SIGNATURE = "_signature"
#: what torchmetrics' ``forward`` changes besides the states
_FORWARD_FLAGS = ("_update_count", "_computed", "_forward_cache", "_to_sync", "_should_unsync", "_is_synced",
                  "compute_on_cpu", "_enable_grad")


@contextlib.contextmanager
def _batch_value(metrics: Sequence[torchmetrics.Metric]) -> Iterator[None]:
    """Mark ``metrics`` as computing a batch's own value (:attr:`Metric.computing_batch_value`) while inside."""
    for metric in metrics:
        vars(metric)["_computing_batch_value"] = True
    try:
        yield
    finally:
        for metric in metrics:
            vars(metric).pop("_computing_batch_value", None)


def _encode_signature(signature: str) -> Tensor:
    """A ``uint8`` tensor of the UTF-8 bytes: ``torch.load(weights_only=True)`` reads it, DDP never reduces it."""
    return torch.tensor(list(signature.encode("utf-8")), dtype=torch.uint8)


def _decode_signature(value: Any, key: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Tensor) and value.dtype == torch.uint8 and value.dim() == 1:
        return bytes(value.tolist()).decode("utf-8", errors="replace")
    raise TypeError(f"{key}: expected a uint8 tensor holding a metric signature, got {type(value).__name__}")


def _merge_replicated(name: str, local: Tensor, incoming: Tensor) -> Tensor:
    """The value two metrics share for a replicated state: an empty one defers to the other; two must agree."""
    if incoming.numel() == 0:
        return local
    incoming = incoming.to(local.device)
    if local.numel() == 0:
        return incoming.clone()
    if local.shape != incoming.shape or not torch.equal(local, incoming):
        raise ValueError(f"cannot merge metrics whose `{name}` differ (a replicated state must be the same in both)")
    return local

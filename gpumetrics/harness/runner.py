"""Run a validated config: join each task's files, feed its metric in batches, collect scores into a report."""

from __future__ import annotations

import dataclasses
import datetime
import json
import platform
import socket
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence

import torch
import torch.distributed as dist
from torch import Tensor

from gpumetrics.core import Metric, check_device, check_positive_int
from gpumetrics.core.positions import batch_position
from gpumetrics.core.progress import ProgressFn
from gpumetrics.core.signature import library_version
from gpumetrics.harness.checkpoint import RunCheckpoint, run_fingerprint
from gpumetrics.harness.config import ConfigError, EvalConfig, TaskConfig
from gpumetrics.harness.records import Batch, DataError, IndexedJoin
from gpumetrics.harness.registry import bounded_repr, get_format
from gpumetrics.harness.samples import SampleSummary

# progress (core.progress.ProgressFn): a task's samples (label: the task name; called before the first batch and after
# each one) or a file's bytes while it is read (label: "task: reading predictions" …).
MAX_LISTED_MISSING = 100
DEFAULT_CHECKPOINT_EVERY = 100  # batches
SAFE_CUT_LIMIT = 16  # batches a batch may grow to while it looks for a safe cut (TaskMetric.safe_cut)


class TaskError(ValueError):
    """A metric rejected a task's data (wrong value types for that metric, …); names the task and the samples."""


@dataclasses.dataclass
class TaskResult:
    """The score of one task with everything needed to tell whether two scores are comparable."""

    name: str
    metric: str
    options: dict
    score: float
    higher_is_better: Optional[bool]
    signature: str
    n: int
    missing: int
    missing_ids: list[str]
    details: dict[str, Any]
    predictions: str
    references: str
    load_seconds: float
    eval_seconds: float
    not_evaluated: int = 0
    samples: Optional[dict] = None  # SampleSummary.to_dict(): histogram and worst samples, when collected

    def to_dict(self) -> dict:
        entry = {
            "name": self.name,
            "metric": self.metric,
            "options": self.options,
            "score": self.score,
            "higher_is_better": self.higher_is_better,
            "signature": self.signature,
            "counts": {
                "n": self.n,
                "missing_predictions": self.missing,
                "missing_ids": self.missing_ids,
                "missing_ids_truncated": self.missing > len(self.missing_ids),
                "not_evaluated": self.not_evaluated,  # format coco: annotated images without a result
            },
            "details": self.details,
            "files": {"predictions": self.predictions, "references": self.references},
            "timing": {"load_seconds": round(self.load_seconds, 6), "eval_seconds": round(self.eval_seconds, 6)},
        }
        if self.samples is not None:
            entry["samples"] = self.samples
        return entry


@dataclasses.dataclass
class Report:
    """All task results of one run, plus the suite's combined score when the config names a suite."""

    config: str
    name: str
    device: str
    batch_size: int
    tasks: list[TaskResult]
    suite: Optional[dict]
    started: str
    total_seconds: float
    run: dict = dataclasses.field(default_factory=dict)  # world_size, argv, host, python, platform
    resumed: bool = False  # continued from a checkpoint (a fact about the timing; the numbers are the same)
    checkpoint: Optional[RunCheckpoint] = None  # removed by whoever writes the report (the run is then complete)

    def to_dict(self) -> dict:
        return {
            "gpumetrics_version": library_version(),
            "torch_version": torch.__version__,
            "config": self.config,
            "name": self.name,
            "device": self.device,
            "batch_size": self.batch_size,
            "started": self.started,
            "suite": self.suite,
            "run": self.run,
            "tasks": [task.to_dict() for task in self.tasks],
            "timing": {"total_seconds": round(self.total_seconds, 6), "resumed": self.resumed},
        }


def _to_python(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value.item() if value.numel() == 1 else value.detach().cpu().tolist()
    if isinstance(value, dict):
        return {str(k): _to_python(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_python(v) for v in value]
    return value


def primary_score(result: Any, primary: Optional[str], metric: str) -> tuple[float, dict]:
    value = _to_python(result)
    if isinstance(value, dict):
        key = primary if primary is not None else next(iter(value), None)
        if key not in value:
            raise ValueError(f"metric {metric!r} returned keys {sorted(value)}, none is the primary score {primary!r}")
        return float(value[key]), value
    if isinstance(value, (int, float)):
        return float(value), {}
    raise ValueError(f"metric {metric!r} returned {type(value).__name__}, expected a scalar or a dict of scalars")


_NUMBER = (int, float)
#: the type of each TaskResult field, checked when a checkpoint's finished tasks are restored
_RESULT_TYPES = {"name": str, "metric": str, "options": dict, "score": _NUMBER, "higher_is_better": (bool, type(None)),
                 "signature": str, "n": int, "missing": int, "missing_ids": list, "details": dict, "predictions": str,
                 "references": str, "load_seconds": _NUMBER, "eval_seconds": _NUMBER, "not_evaluated": int,
                 "samples": (dict, type(None))}


def _check_position(saved: dict, tasks: int, path: Path) -> None:
    """Refuse a checkpoint whose fingerprint matches but whose position has other types or ranges (a file edited or
    written by something else): the run would fail far from the cause, or report nonsense."""
    def bad(what: str) -> ConfigError:
        return ConfigError(f"{path}: not a gpumetrics checkpoint ({what}); delete it or run without --resume")

    def whole(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool)

    if not isinstance(saved["started"], str):
        raise bad("`started` is not a time stamp")
    if not whole(saved["task"]) or not 0 <= saved["task"] <= tasks or not whole(saved["done"]) or saved["done"] < 0:
        raise bad("its task or sample position is not a count in range")
    seconds = saved["seconds"]
    if not isinstance(seconds, (list, tuple)) or len(seconds) != 2 or not all(isinstance(s, _NUMBER) for s in seconds):
        raise bad("`seconds` is not a pair of numbers")
    if not all(saved[key] is None or isinstance(saved[key], dict) for key in ("metric", "samples")):
        raise bad("its metric states or samples are not objects")
    finished = saved["finished"]
    if not isinstance(finished, list) or len(finished) != saved["task"]:
        raise bad("its finished tasks are not one result per task before the current one")
    for result in finished:
        if not isinstance(result, dict) or set(result) != set(_RESULT_TYPES) or not all(
                isinstance(result[key], kind) and not (kind in (int, _NUMBER) and isinstance(result[key], bool))
                for key, kind in _RESULT_TYPES.items()):
            raise bad("a finished task's result has other fields or types")
    try:  # a lone surrogate (possible in a pickled str, not in UTF-8) would fail the report's write, naming no file
        json.dumps(finished, ensure_ascii=False, default=str).encode("utf-8")
    except UnicodeEncodeError:
        raise bad("a finished task's result holds text that is not valid Unicode") from None


def _device(device: Optional[str], name: str = "--device", where: Optional[str] = None) -> torch.device:
    """``core.check_device`` (``None`` → CPU), its error as a ``ConfigError`` (after ``where``, e.g. the config
    file)."""
    try:
        return check_device(device, name)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{where}: {error}" if where else str(error)) from None


def _named_position(error: BaseException, ids: Sequence[Any]) -> str:
    """`` (position k of the batch is id X)`` for the batch position a metric's error is tagged with
    (:func:`gpumetrics.core.positions.batch_position`: metrics number their batch, the files number their records),
    else ``""``."""
    position = batch_position(error)
    if position is None or not 0 <= position < len(ids):
        return ""
    return f" (position {position} of the batch is id {ids[position]!r})"


def shard_bounds(total: int, rank: int, world_size: int) -> tuple[int, int]:
    """The samples ``[start, stop)`` of process ``rank`` of ``world_size``: contiguous, no padding, no duplicates.

    Example:
        >>> [shard_bounds(5, r, 2) for r in range(2)], shard_bounds(1, 1, 2)
        ([(0, 2), (2, 5)], (0, 1))
    """
    return total * rank // world_size, total * (rank + 1) // world_size


def cut_where_safe(batches: Iterable[Batch], reads_next: Callable[[Any, list], bool], limit: int) -> Iterator[Batch]:
    """Re-cut ``batches`` so that each ends after a sample whose tokens cannot depend on the next sample (PTB: see
    ``TaskMetric.safe_cut``); the samples after a batch's last safe cut go to the front of the next one.
    A batch is cut anyway once it holds ``limit`` samples without a safe cut (a run of such samples).

    Example:
        >>> from gpumetrics.harness.records import Batch
        >>> cut = cut_where_safe([Batch(["a", "b"], ["x.", "U.S."], [["r"], ["r"]]), Batch(["c"], ["y"], [["r"]])],
        ...                      lambda p, r: p == "U.S.", limit=10)
        >>> [b.ids for b in cut]
        [['a'], ['b', 'c']]
    """
    carried: Optional[Batch] = None
    for batch in batches:
        if carried is not None:
            batch = Batch(carried.ids + batch.ids, carried.predictions + batch.predictions,
                          carried.references + batch.references)
        end = len(batch)
        while end > 0 and reads_next(batch.predictions[end - 1], batch.references[end - 1]) and len(batch) < limit:
            end -= 1
        end = end if end > 0 or len(batch) < limit else len(batch)
        if end:
            yield Batch(batch.ids[:end], batch.predictions[:end], batch.references[:end])
        carried = Batch(batch.ids[end:], batch.predictions[end:], batch.references[end:]) if end < len(batch) else None
    if carried is not None:
        yield carried


def _safe_bound(data: Any, bound: int, limit: int, reads_next: Callable[[Any, Any], bool]) -> int:
    """The first position at or after ``bound`` (at most ``limit`` later) where the samples before it do not read
    the next one (``reads_next``, the task's ``safe_cut``); every process computes the same bounds."""
    total, start = len(data), bound
    while 0 < bound < total and bound - start < limit:
        (sample,) = data.batches(1, bound - 1, bound)
        if not reads_next(sample.predictions[0], sample.references[0]):
            break
        bound += 1
    return bound


def _metric_states(metric: Metric) -> dict:
    """The state dict entries that are metric states (not model weights: a CLIP or Inception model inside a task
    metric stays out of the checkpoint)."""
    names = {"_update_count", "_signature"}  # _signature: what the states were computed with (checked on load)
    for prefix, module in metric.named_modules():
        if isinstance(module, Metric):
            names |= {f"{prefix}.{name}" if prefix else name
                      for name in [*module._defaults, "_update_count", "_signature"]}
    metric.persistent(True)
    try:
        return {key: value for key, value in metric.state_dict().items() if key in names}
    finally:
        metric.persistent(False)


@dataclasses.dataclass
class _Run:
    """What every task of one ``evaluate`` call shares: the device, batching, this process's place among the
    processes, the checkpoint and the per-sample summaries."""

    device: torch.device
    batch_size: int
    progress: Optional[ProgressFn] = None
    rank: int = 0
    world_size: int = 1
    checkpoint: Optional[RunCheckpoint] = None
    checkpoint_every: int = DEFAULT_CHECKPOINT_EVERY
    samples: bool = False
    finished: list = dataclasses.field(default_factory=list)  # TaskResult of the tasks done
    started: str = ""

    def save(self, task_index: int, done: int = 0, metric: Optional[Metric] = None,
             summary: Optional[SampleSummary] = None, seconds: tuple[float, float] = (0.0, 0.0)) -> None:
        if self.checkpoint is None:
            return
        self.checkpoint.save({
            "started": self.started,
            "finished": [dataclasses.asdict(result) for result in self.finished],
            "task": task_index,
            "done": done,
            "metric": _metric_states(metric) if metric is not None else None,
            "samples": summary.state() if summary is not None else None,
            "seconds": seconds,
        })

    def open_task(self, task: TaskConfig) -> OpenedTask:
        """Read and join the task's files, and check them (:func:`_check_data`) — before anything is scored."""
        start = time.perf_counter()
        if task.format != "records":  # coco (only the images of the results file), a suite task's official format
            data, options = get_format(task.format).read(task.predictions, task.references, dict(task.options))
        else:
            data, options = IndexedJoin(task.predictions, task.references, task.metric.empty_answer(task.options),
                                        self.progress, f"{task.name}: ",
                                        textual=isinstance(task.metric.empty_prediction, str)), task.options
        _check_data(task, data, options)
        return OpenedTask(data, options, time.perf_counter() - start)

    def evaluate_task(self, index: int, task: TaskConfig, resume: Optional[dict] = None,
                      opened: Optional[OpenedTask] = None) -> TaskResult:
        """Score task ``index`` of the config on this process's shard, from ``resume`` (a checkpoint) if given, on
        its ``opened`` data (read now when not given)."""
        if task.score is not None:
            return _supplied_result(task)
        if opened is None:
            opened = self.open_task(task)
        data, options = opened.data, opened.options
        loaded = time.perf_counter()
        try:
            metric = task.metric.build(options).to(self.device)
        except (TypeError, ValueError) as err:  # options checked only when the metric is built (image models' options)
            raise TaskError(f"task {task.name!r}: metric {task.metric.name!r} with options "
                            f"{bounded_repr(options, 200)}: {err}") from None
        total = len(data)
        summary = scorer = None
        if self.samples and task.metric.per_sample is not None:
            summary = SampleSummary(task.metric.name, task.metric.direction(metric))
            scorer = task.metric.per_sample(options, self.device)
        first, stop = shard_bounds(total, self.rank, self.world_size)
        reads_next = task.metric.reads_next(metric)
        if reads_next is not None and self.world_size > 1:  # shards end where batches may (cut_where_safe)
            first, stop = (_safe_bound(data, bound, SAFE_CUT_LIMIT * self.batch_size, reads_next)
                           for bound in (first, stop))
        done, earlier = 0, (0.0, 0.0)
        if resume is not None:
            if resume["done"] > stop - first:
                where = self.checkpoint.path if self.checkpoint is not None else "the checkpoint"
                raise ConfigError(f"{where}: not a gpumetrics checkpoint (it has fed {resume['done']} samples of task "
                                  f"{task.name!r}, whose shard on this process holds {stop - first}); delete it or run "
                                  "without --resume")
            metric.load_state_dict(resume["metric"], strict=False)
            done, earlier = resume["done"], tuple(resume["seconds"])
            if summary is not None:
                summary.load(resume["samples"])
        if task.metric.prepare is not None and total:
            # e.g. a metric with a reference set of its own (the real images of s_image_generation) reads it first,
            # so that this long pass has its own progress bar instead of hiding in compute(); a restored state has it
            progress = self.progress
            task.metric.prepare(metric, None if progress is None
                                else lambda phase, n, of: progress(f"{task.name}: {phase}", n, of))
        if self.progress is not None:
            self.progress(task.name, done, stop - first)
        batches_since_save = 0
        batches: Iterable[Batch] = data.batches(self.batch_size, first + done, stop)
        if reads_next is not None:  # cut only where one call over everything gives the same numbers (safe_cut)
            batches = cut_where_safe(batches, reads_next, SAFE_CUT_LIMIT * self.batch_size)
        for batch in batches:
            try:
                arguments = task.metric.update_args(batch.predictions, batch.references)
                metric.update(*arguments)
                if scorer is not None:
                    summary.add(batch, scorer(*arguments), first + done)
            except (TypeError, ValueError) as err:
                raise TaskError(
                    f"task {task.name!r}: metric {task.metric.name!r} rejected the batch of samples "
                    f"{first + done}..{first + done + len(batch) - 1} (first id {batch.ids[0]!r}) "
                    f"of {task.references}: "
                    f"{err}{_named_position(err, batch.ids)}"
                ) from err
            done += len(batch)
            batches_since_save += 1
            if self.progress is not None:
                self.progress(task.name, done, stop - first)
            if batches_since_save == self.checkpoint_every and first + done < stop:
                now = time.perf_counter()
                self.save(index, done, metric, summary, (earlier[0] + opened.seconds, earlier[1] + now - loaded))
                batches_since_save = 0
        if total:
            with warnings.catch_warnings():  # a process whose shard is empty (fewer samples than processes)
                warnings.filterwarnings("ignore", message=".*was called before the ``update`` method.*")
                try:
                    result = metric.compute()
                except (TypeError, ValueError) as err:  # e.g. FID of fewer than 2 images: name the task and file
                    raise TaskError(f"task {task.name!r}: metric {task.metric.name!r} has no score for "
                                    f"{task.predictions}: {err}") from err
                score, details = primary_score(result, task.metric.primary, task.metric.name)
        else:  # every prediction missing, each scored missing_score
            score, details = 0.0, {}
        if data.missing_score is not None and data.missing_count:
            # the official scripts' mean over all references, a missing prediction counting missing_score
            details = {**details, "mean_over_predicted": score}
            score = (score * total + data.missing_score * data.missing_count) / data.total
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        finished = time.perf_counter()
        signature = metric.signature() if hasattr(metric, "signature") else type(metric).__name__
        return TaskResult(
            name=task.name,
            metric=task.metric.name,
            options=dict(task.options),
            score=score,
            higher_is_better=task.metric.direction(metric),
            signature=signature,
            n=data.total,
            missing=data.missing_count,
            missing_ids=data.missing_ids[:MAX_LISTED_MISSING],
            details=details,
            predictions=str(task.predictions),
            references=str(task.references),
            load_seconds=earlier[0] + opened.seconds,
            eval_seconds=earlier[1] + finished - loaded,
            not_evaluated=data.not_evaluated_count,
            samples=self._gathered(summary),
        )

    def _gathered(self, summary: Optional[SampleSummary]) -> Optional[dict]:
        """The task's summary over every process (all of them call this: it is a collective when there are several)."""
        if summary is None:
            return None
        if self.world_size > 1:
            states: list = [None] * self.world_size
            dist.all_gather_object(states, summary.state())
            summary.load(states[0])
            for state in states[1:]:
                summary.merge(state)
        return summary.to_dict()


@dataclasses.dataclass
class OpenedTask:
    """A task's joined data (``len``, ``total``, ``missing_count``, ``missing_ids``, ``batches``), the metric options
    its reader settled, and the seconds the reading took."""

    data: Any
    options: dict
    seconds: float


def _check_data(task: TaskConfig, data: Any, options: dict) -> None:
    """What no metric can score: a references file without records, and missing predictions for a metric that has
    no empty answer under the task's ``options`` (and a layout that gives them no score). ``DataError`` naming the
    task and the file."""
    if data.total == 0:
        raise DataError(task.references, None, f"task {task.name!r}: the references file holds no records")
    if task.metric.empty_answer(options) is None and data.missing_count and data.missing_score is None:
        shown = ", ".join(repr(i) for i in data.missing_ids[:5]) + (", …" if data.missing_count > 5 else "")
        raise DataError(
            task.predictions, None,
            f"task {task.name!r}: {data.missing_count} of {len(data)} references have no prediction (ids {shown}); "
            f"metric {task.metric.name!r} has no empty answer to score them with, so every id needs a prediction",
        )


@dataclasses.dataclass
class DataCheck:
    """What ``gpumetrics evaluate --check`` reports of one task: its samples and missing predictions (``supplied``:
    a hidden-task slot whose score the config gives)."""

    name: str
    metric: str
    n: int
    missing: int
    missing_ids: list
    supplied: bool = False


def check_data(config: EvalConfig, progress: Optional[ProgressFn] = None) -> list[DataCheck]:
    """Read, join and check every task's files as :func:`evaluate` does before it scores anything, scoring nothing:
    the config's options and model files were checked when it loaded, so a config that passes here fails later
    only on what a metric finds in the values themselves.

    Raises:
        DataError: malformed or unjoinable records (file and line), an empty references file, missing predictions
            for a metric without an empty answer.
    """
    run = _Run(torch.device("cpu"), 1, progress)
    checks = []
    for task in config.tasks:
        if task.score is not None:
            checks.append(DataCheck(task.name, "supplied", 0, 0, [], supplied=True))
            continue
        data = run.open_task(task).data
        checks.append(DataCheck(task.name, task.metric.name, data.total, data.missing_count,
                                list(data.missing_ids[:MAX_LISTED_MISSING])))
    return checks


def evaluate_task(
    task: TaskConfig, device: torch.device, batch_size: int, progress: Optional[ProgressFn] = None
) -> TaskResult:
    """Join one task's files (``format`` records: by id, :class:`~gpumetrics.harness.records.IndexedJoin`; coco and the
    suites' formats: their readers) and score them with its metric, ``batch_size`` samples per ``update``.

    Raises:
        DataError: malformed / unjoinable data (names file and line).
    """
    return _Run(device, batch_size, progress).evaluate_task(0, task)


def _supplied_result(task: TaskConfig) -> TaskResult:
    """The result of a hidden-task slot: the score the config supplies."""
    return TaskResult(
        name=task.name, metric="supplied", options={}, score=float(task.score), higher_is_better=True,
        signature="supplied", n=0, missing=0, missing_ids=[], details={}, predictions="", references="",
        load_seconds=0.0, eval_seconds=0.0,
    )


def _agreed_position(saved: Optional[dict], world_size: int) -> Optional[dict]:
    """The checkpoint position every process resumes from (a collective).

    Each process saves on its own; a kill can land after one process saved "task i finished" and before another
    did. A finished task's result is the same on every process (its ``compute()`` was collective), so the processes
    behind adopt the finished results of the one furthest ahead and start its current task afresh on their shard.
    """
    positions: list = [None] * world_size
    dist.all_gather_object(positions, None if saved is None else (saved["task"], saved["finished"], saved["started"]))
    ahead = max((p for p in positions if p is not None), key=lambda p: p[0], default=None)
    if ahead is None or (saved is not None and saved["task"] == ahead[0]):
        return saved
    return {"task": ahead[0], "finished": ahead[1], "started": ahead[2], "metric": None}


def _run_metadata(world_size: int, argv: Optional[Sequence[str]], device: torch.device) -> dict:
    """How the run ran: processes and their collective backend (``None`` for one process without a process group),
    the device's name (the GPU model on CUDA), the command, host and platform."""
    distributed = dist.is_available() and dist.is_initialized()
    return {
        "world_size": world_size,
        "distributed_backend": str(dist.get_backend()) if distributed else None,
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or
        platform.machine(),
        "argv": list(argv) if argv is not None else [],
        "host": socket.gethostname(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def evaluate(
    config: EvalConfig,
    device: Optional[str] = None,
    batch_size: Optional[int] = None,
    progress: Optional[ProgressFn] = None,
    *,
    checkpoint_dir: Optional[Path | str] = None,
    checkpoint_every: int = DEFAULT_CHECKPOINT_EVERY,
    resume: bool = False,
    samples: bool = False,
    argv: Optional[Sequence[str]] = None,
) -> Report:
    """Score every task of ``config``; ``device``/``batch_size`` override the config's values when given.

    Under ``torch.distributed`` (``torchrun``: the process group is initialised), every process scores its
    contiguous shard of each task (:func:`shard_bounds`) and the metrics' DDP reducer combines the states at
    ``compute()``; every process returns the same report.

    Args:
        checkpoint_dir: save a checkpoint there (one file per process) every ``checkpoint_every`` batches and after
            every task; removed when the run finishes. ``None``: no checkpoints.
        resume: continue from the checkpoint in ``checkpoint_dir`` if there is one (else start from the beginning).
        samples: collect per-sample scores (histograms, worst examples; ``TaskResult.samples``) for metrics that
            have them — costs a second, per-sample scoring of every batch.
        argv: the command line, recorded in the report's run metadata.

    Returns:
        :class:`Report`; ``report.suite`` holds ``{"name", "score", "tasks", "missing_tasks"}`` when the config
        names a suite (the combined score is over the tasks present; missing tasks are listed).

    Raises:
        ConfigError: a bad option, or a checkpoint written by another run (named).
    """
    start = time.perf_counter()
    if device is not None:  # "" is a bad --device, not none
        torch_device = _device(device, "--device")
    else:
        torch_device = _device(config.device, "device", where=str(config.path))
    size = batch_size if batch_size is not None else config.batch_size
    try:
        check_positive_int(size, "--batch-size")
        check_positive_int(checkpoint_every, "--checkpoint-every")
    except (TypeError, ValueError) as error:
        raise ConfigError(str(error)) from None
    if resume and checkpoint_dir is None:
        raise ConfigError("--resume needs a checkpoint folder: give --checkpoint-dir (or --output, beside which it "
                          "is kept)")
    rank, world_size = ((dist.get_rank(), dist.get_world_size()) if dist.is_available() and dist.is_initialized()
                        else (0, 1))
    run = _Run(torch_device, size, progress, rank, world_size, checkpoint_every=checkpoint_every, samples=samples,
               started=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))
    saved = None
    if checkpoint_dir is not None:
        run.checkpoint = RunCheckpoint(checkpoint_dir, rank, world_size,
                                       run_fingerprint(config, size, world_size, torch_device, samples))
        saved = run.checkpoint.load() if resume else None
        if saved is not None:
            _check_position(saved, len(config.tasks), run.checkpoint.path)
        if resume and world_size > 1:
            saved = _agreed_position(saved, world_size)
    first_task = 0
    if saved is not None:
        run.started = saved["started"]
        run.finished = [TaskResult(**result) for result in saved["finished"]]
        first_task = saved["task"]
    # every task's files are read and checked before the first task is scored: a malformed file of the last task
    # stops the run at once, not after the tasks before it (the joins hold indices, not the records)
    opened = {index: run.open_task(config.tasks[index]) for index in range(first_task, len(config.tasks))
              if config.tasks[index].score is None}
    for index in range(first_task, len(config.tasks)):
        position = saved if saved is not None and index == saved["task"] and saved["metric"] is not None else None
        run.finished.append(run.evaluate_task(index, config.tasks[index], position, opened.pop(index, None)))
        run.save(index + 1)
    results = run.finished
    suite = None
    if config.suite is not None:
        scores = {result.name: result.score for result in results}
        suite = {
            "name": config.suite.name,
            "score": float(config.suite.combine(scores)),
            "tasks": scores,
            "missing_tasks": [task.name for task in config.suite.tasks if task.name not in scores],
            "hidden_not_supplied": [name for name in config.suite.hidden if name not in scores],
        }
    return Report(
        config=str(config.path),
        name=config.name,
        device=str(torch_device),
        batch_size=size,
        tasks=results,
        suite=suite,
        started=run.started,
        total_seconds=time.perf_counter() - start,
        run=_run_metadata(world_size, argv, torch_device),
        resumed=saved is not None,
        checkpoint=run.checkpoint,
    )

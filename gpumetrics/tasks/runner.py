"""Run a validated config: join each task's files, feed its metric in batches, collect scores into a report."""

from __future__ import annotations

import dataclasses
import datetime
import time
from typing import Any, Callable, Optional

import torch
from torch import Tensor

from gpumetrics.core import check_device
from gpumetrics.core.signature import library_version
from gpumetrics.tasks.config import ConfigError, EvalConfig, TaskConfig
from gpumetrics.tasks.data import DataError, join_by_id
from gpumetrics.tasks.formats import get_format

#: ``progress(task_name, samples_done, samples_total)`` — called once before the first batch and after each batch.
ProgressFn = Callable[[str, int, int], None]
MAX_LISTED_MISSING = 100


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

    def to_dict(self) -> dict:
        return {
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
            "tasks": [task.to_dict() for task in self.tasks],
            "timing": {"total_seconds": round(self.total_seconds, 6)},
        }


def _to_python(value: Any) -> Any:
    if isinstance(value, Tensor):
        return value.item() if value.numel() == 1 else value.detach().cpu().tolist()
    if isinstance(value, dict):
        return {str(k): _to_python(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_python(v) for v in value]
    return value


def _primary_score(result: Any, primary: Optional[str], metric: str) -> tuple[float, dict]:
    value = _to_python(result)
    if isinstance(value, dict):
        key = primary if primary is not None else next(iter(value), None)
        if key not in value:
            raise ValueError(f"metric {metric!r} returned keys {sorted(value)}, none is the primary score {primary!r}")
        return float(value[key]), value
    if isinstance(value, (int, float)):
        return float(value), {}
    raise ValueError(f"metric {metric!r} returned {type(value).__name__}, expected a scalar or a dict of scalars")


def resolve_device(device: Optional[str], name: str = "--device", where: Optional[str] = None) -> torch.device:
    """``None`` → CPU; otherwise a device torch accepts and this machine has (``core.check_device``).

    Raises:
        ConfigError: naming ``name`` (after ``where``, e.g. the config file) and listing the available devices.
    """
    try:
        return check_device(device, name)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{where}: {error}" if where else str(error)) from None


def evaluate_task(
    task: TaskConfig, device: torch.device, batch_size: int, progress: Optional[ProgressFn] = None
) -> TaskResult:
    """Join one task's files (``format`` records: by id; coco: COCO results + annotations) and score them with its
    metric, ``batch_size`` samples per ``update``.

    Raises:
        DataError: malformed / unjoinable data (names file and line).
    """
    start = time.perf_counter()
    if task.score is not None:
        return _supplied_result(task)
    options = task.options
    if task.format != "records":  # coco (only the images of the results file), a suite task's official format
        data, options = get_format(task.format).read(task.predictions, task.references, dict(task.options))
    else:
        data = join_by_id(task.predictions, task.references, task.metric.empty_prediction)
    loaded = time.perf_counter()
    metric = task.metric.build(options).to(device)
    total = len(data)
    if data.total == 0:
        raise DataError(task.references, None, f"task {task.name!r}: the references file holds no records")
    if task.metric.empty_prediction is None and data.missing and data.missing_score is None:
        shown = ", ".join(repr(i) for i in data.missing[:5]) + (", …" if len(data.missing) > 5 else "")
        raise DataError(
            task.predictions, None,
            f"task {task.name!r}: {len(data.missing)} of {total} references have no prediction (ids {shown}); "
            f"metric {task.metric.name!r} has no empty answer to score them with, so every id needs a prediction",
        )
    load_real = getattr(metric, "load_real", None)
    if load_real is not None and total:
        # a metric with a reference set of its own (the real images of s_image_generation) reads it first, so that
        # this long pass has its own progress bar instead of hiding in compute()
        load_real(None if progress is None else lambda phase, done, of: progress(f"{task.name}: {phase}", done, of))
    if progress is not None:
        progress(task.name, 0, total)
    done = 0
    for predictions, references in data.batches(batch_size):
        try:
            metric.update(*task.metric.update_args(predictions, references))
        except (TypeError, ValueError) as err:
            raise TaskError(
                f"task {task.name!r}: metric {task.metric.name!r} rejected the batch of samples "
                f"{done}..{done + len(predictions) - 1} (first id {data.ids[done]!r}) of {task.references}: {err}"
            ) from err
        done += len(predictions)
        if progress is not None:
            progress(task.name, done, total)
    if total:
        score, details = _primary_score(metric.compute(), task.metric.primary, task.metric.name)
    else:  # every prediction missing, each scored missing_score
        score, details = 0.0, {}
    if data.missing_score is not None and data.missing:
        # the official scripts' mean over all references, a missing prediction counting missing_score
        details = {**details, "mean_over_predicted": score}
        score = (score * total + data.missing_score * len(data.missing)) / data.total
    if device.type == "cuda":
        torch.cuda.synchronize(device)
    finished = time.perf_counter()
    signature = metric.signature() if hasattr(metric, "signature") else type(metric).__name__
    return TaskResult(
        name=task.name,
        metric=task.metric.name,
        options=dict(task.options),
        score=score,
        higher_is_better=getattr(metric, "higher_is_better", None),
        signature=signature,
        n=data.total,
        missing=len(data.missing),
        missing_ids=data.missing[:MAX_LISTED_MISSING],
        details=details,
        predictions=str(task.predictions),
        references=str(task.references),
        load_seconds=loaded - start,
        eval_seconds=finished - loaded,
        not_evaluated=len(data.not_evaluated),
    )


def _supplied_result(task: TaskConfig) -> TaskResult:
    """The result of a hidden-task slot: the score the config supplies."""
    return TaskResult(
        name=task.name, metric="supplied", options={}, score=float(task.score), higher_is_better=True,
        signature="supplied", n=0, missing=0, missing_ids=[], details={}, predictions="", references="",
        load_seconds=0.0, eval_seconds=0.0,
    )


def evaluate(
    config: EvalConfig,
    device: Optional[str] = None,
    batch_size: Optional[int] = None,
    progress: Optional[ProgressFn] = None,
) -> Report:
    """Score every task of ``config``; ``device``/``batch_size`` override the config's values when given.

    Returns:
        :class:`Report`; ``report.suite`` holds ``{"name", "score", "tasks", "missing_tasks"}`` when the config
        names a suite (the combined score is over the tasks present; missing tasks are listed).
    """
    started = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    start = time.perf_counter()
    if device:
        torch_device = resolve_device(device, "--device")
    else:
        torch_device = resolve_device(config.device, "device", where=str(config.path))
    size = batch_size if batch_size is not None else config.batch_size
    if isinstance(size, bool) or not isinstance(size, int) or size < 1:
        raise ConfigError(f"--batch-size must be a positive integer, got {size!r}")
    results = [evaluate_task(task, torch_device, size, progress) for task in config.tasks]
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
        started=started,
        total_seconds=time.perf_counter() - start,
    )

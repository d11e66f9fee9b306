"""Registry of task metrics and suites that configs and the CLI refer to by name.

A *task metric* says how to build a metric module from config options and how to turn joined records into
``update`` arguments. A *suite* is a fixed set of named tasks whose scores are combined (AIJ suites sum them).
Metric files never import this module; ``gpumetrics/tasks/*.py`` register entries for them.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Callable, Optional, Sequence

from gpumetrics.core import Metric


def init_options(cls: type, options: dict) -> dict[str, Any]:
    """``options`` bound to ``cls.__init__``'s own parameters and defaults (``self`` and ``**kwargs`` left out): how
    a task metric that loads models checks its options without building itself.

    Raises:
        TypeError: an option ``__init__`` does not name (torchmetrics keyword options are not task options).

    Example:
        >>> class Task:
        ...     def __init__(self, size: int = 2, **kwargs): ...
        >>> init_options(Task, {})
        {'size': 2}
    """
    bound = inspect.signature(cls.__init__).bind(None, **options)
    extra = bound.arguments.pop("kwargs", {})
    if extra:
        raise TypeError(f"unexpected option(s) {', '.join(map(repr, sorted(extra)))}")
    bound.apply_defaults()
    return {name: value for name, value in bound.arguments.items() if name not in ("self", "kwargs")}


def text_update_args(predictions: list[Any], references: list[list[Any]]) -> tuple:
    """Default adapter: ``update(preds: list[str], target: list[list[str]])`` — every reference of a sample."""
    return predictions, references


def per_sample_of(factory: Callable[..., Metric], key: Optional[str] = None) -> Callable[[dict, Any], Callable[..., Any]]:
    """``TaskMetric.per_sample`` of a metric that takes ``reduction="none"``: a second instance of it, reset for
    every batch, never synchronised across processes (each rank scores its own samples); ``key``: the entry of a
    dict result (ROUGE's primary key)."""

    def build(options: dict, device: Any) -> Callable[..., Any]:
        metric = factory(**{**options, "reduction": "none"}, sync_on_compute=False).to(device)

        def score(*update_args: Any) -> Any:
            metric.reset()
            metric.update(*update_args)
            result = metric.compute()
            return result[key] if key is not None else result

        return score

    return build


@dataclasses.dataclass(frozen=True)
class TaskMetric:
    """How a config's ``metric: NAME`` becomes a metric module and its update arguments.

    Attributes:
        name: registry key used in configs.
        factory: ``factory(**options) -> Metric``.
        description: one line for ``gpumetrics list``.
        empty_prediction: what a missing prediction is scored as (documented answer, counted in the report);
            ``None``: there is none, and a missing prediction is a ``DataError`` naming the ids.
        update_args: ``(predictions, references) -> tuple`` of positional ``update`` arguments.
        primary: key of the score to report when ``compute()`` returns a dict.
        path_options: options that are file-system paths, with their default (``None``: no default). A config
            resolves their relative values — and the defaults — against the config file's folder.
        table_keys: keys of a dict result that the results table shows one row each, under the task (the
            COCO caption table); the JSON report holds every key in ``details`` anyway.
        check_options: ``check_options(**options)`` raising ``TypeError``/``ValueError``/``FileNotFoundError`` for
            bad options without building the metric — set by metrics that load models; ``None``: :meth:`check`
            builds the metric once (model-free metrics construct in microseconds).
        per_sample: ``per_sample(options, device) -> score`` with ``score(*update_args) -> Tensor[B]``, the score of
            each sample of a batch (for the report's histograms and worst examples); ``None``: the metric has no
            meaningful per-sample score (corpus statistics such as CIDEr's document frequency, FID).
    """

    name: str
    factory: Callable[..., Metric]
    description: str
    empty_prediction: Any = ""
    update_args: Callable[[list, list], tuple] = text_update_args
    primary: Optional[str] = None
    path_options: dict = dataclasses.field(default_factory=dict)
    check_options: Optional[Callable[..., None]] = None
    table_keys: Sequence[str] = ()
    per_sample: Optional[Callable[[dict, Any], Callable[..., Any]]] = None

    def build(self, options: Optional[dict] = None) -> Metric:
        return self.factory(**(options or {}))

    def check(self, options: Optional[dict] = None) -> None:
        """Raise on options the metric would reject, loading no model weights (see ``check_options``)."""
        if self.check_options is None:
            self.build(options)
        else:
            self.check_options(**(options or {}))


@dataclasses.dataclass(frozen=True)
class SuiteTask:
    """One task of a suite: a display name, its metric, fixed options and the official file format.

    Attributes:
        format: name of the reader in :mod:`gpumetrics.tasks.formats` for the organisers' two files (``None``: the
            generic ``{"id", "prediction"}`` / ``{"id", "references"}`` records).
        user_options: options a config may set (model paths, real images, …); every other option is fixed.
    """

    name: str
    metric: str
    options: dict = dataclasses.field(default_factory=dict)
    format: Optional[str] = None
    user_options: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Suite:
    """A fixed challenge suite; ``combine`` maps ``{task name: score}`` to the overall score."""

    name: str
    description: str
    tasks: Sequence[SuiteTask]
    combine: Callable[[dict[str, float]], float] = lambda scores: float(sum(scores.values()))
    hidden: tuple[str, ...] = ()  # slots whose score S ∈ [0, 1] the config supplies (`score:`), e.g. hidden tasks


METRICS: dict[str, TaskMetric] = {}
SUITES: dict[str, Suite] = {}


def register_metric(entry: TaskMetric) -> TaskMetric:
    """Add a task metric; a name can be registered once."""
    if entry.name in METRICS:
        raise ValueError(f"task metric {entry.name!r} is already registered")
    METRICS[entry.name] = entry
    return entry


def register_suite(suite: Suite) -> Suite:
    """Add a suite; every task must name a registered metric."""
    if suite.name in SUITES:
        raise ValueError(f"suite {suite.name!r} is already registered")
    for task in suite.tasks:
        if task.metric not in METRICS:
            raise ValueError(f"suite {suite.name!r}: task {task.name!r} names unknown metric {task.metric!r}")
    SUITES[suite.name] = suite
    return suite


def get_metric(name: str) -> TaskMetric:
    """Look up a task metric, with an error that lists the known names."""
    if name not in METRICS:
        raise ValueError(f"unknown metric {name!r}; known: {', '.join(sorted(METRICS))}")
    return METRICS[name]


def get_suite(name: str) -> Suite:
    """Look up a suite, with an error that lists the known names."""
    if name not in SUITES:
        raise ValueError(f"unknown suite {name!r}; known: {', '.join(sorted(SUITES))}")
    return SUITES[name]

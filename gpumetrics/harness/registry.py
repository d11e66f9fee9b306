"""Registries of task metrics, suites and file formats that configs and the CLI refer to by name.

A *task metric* says how to build a metric module from config options, how to turn joined records into ``update``
arguments, and which runner hooks it needs (``safe_cut``, ``prepare``). A *suite* is a fixed set of named tasks whose
scores are combined (AIJ suites sum them). A *format* reads a task's two files in a layout other than the records.

The harness knows no metric: metric files never import this module, and the entries are registered by the layers
above — :mod:`gpumetrics.catalog` (one table of every task metric) and :mod:`gpumetrics.suites` (the AIJ suites,
their formats and composite metrics). A lookup (:func:`get_metric`, :func:`metrics`, …) loads those built-in
providers on first use (:data:`BUILTIN_PROVIDERS`, by module name, as a plugin hook: the harness uses no name of
theirs).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union

from gpumetrics.core.progress import ProgressFn

if TYPE_CHECKING:  # annotations only: the registry (and `gpumetrics list`) imports neither torch nor torchmetrics
    from gpumetrics.core import Metric

#: ``TaskMetric.options`` value of an option without a default (a config must set it)
REQUIRED = inspect.Parameter.empty

#: modules that register the built-in entries, imported on the first lookup (catalog first: suites name its entries)
BUILTIN_PROVIDERS = ("gpumetrics.catalog", "gpumetrics.suites")
_loaded = False


def load_builtin() -> None:
    """Import :data:`BUILTIN_PROVIDERS` once (they register their entries here); later calls return at once."""
    global _loaded
    if _loaded:
        return
    _loaded = True  # first: the providers look entries up while they register
    for module in BUILTIN_PROVIDERS:
        importlib.import_module(module)


def bounded_repr(value: object, limit: int = 80) -> str:
    """``repr(value)`` cut to about ``limit`` characters, for error messages about user data: containers are walked
    only as far as the limit needs, so a YAML alias bomb (``a: &a [*b, *b, …]``, billions of leaves) is never
    expanded.

    Example:
        >>> bounded_repr("x" * 100, 12)
        "'xxx...xxx'"
        >>> bomb = ["lol"]
        >>> for _ in range(40):
        ...     bomb = [bomb] * 9  # 9**40 leaves if expanded
        >>> len(bounded_repr(bomb)) <= 80
        True
    """
    import reprlib

    short = reprlib.Repr()
    short.maxstring = short.maxother = limit
    short.maxlevel, short.maxdict, short.maxlist, short.maxtuple, short.maxset = 3, 8, 8, 8, 8
    text = short.repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def resolve(target: Union[str, Callable[..., Any]]) -> Callable[..., Any]:
    """A callable, or a ``"package.module:attribute"`` string imported on first use (so that listing entries does not
    import the metric modules and their backends).

    Example:
        >>> resolve("os.path:join")("a", "b") == __import__("os").path.join("a", "b")
        True
    """
    if not isinstance(target, str):
        return target
    module, _, attribute = target.partition(":")
    if not attribute:
        raise ValueError(f"a lazy target is 'package.module:attribute', got {target!r}")
    value: Any = importlib.import_module(module)
    for part in attribute.split("."):
        value = getattr(value, part)
    return value


def lazy(target: str) -> Callable[..., Any]:
    """A callable that resolves ``"package.module:attribute"`` (:func:`resolve`) when first called."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return resolve(target)(*args, **kwargs)

    call.__qualname__ = call.__name__ = target.rpartition(":")[2]
    call.target = target  # type: ignore[attr-defined]
    return call


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


def per_sample_of(factory: Union[str, Callable[..., Metric]],
                  key: Optional[str] = None) -> Callable[[dict, Any], Callable[..., Any]]:
    """``TaskMetric.per_sample`` of a metric that takes ``reduction="none"``: a second instance of it, reset for
    every batch, never synchronised across processes (each rank scores its own samples); ``key``: the entry of a
    dict result (ROUGE's primary key)."""

    def build(options: dict, device: Any) -> Callable[..., Any]:
        metric = resolve(factory)(**{**options, "reduction": "none"}, sync_on_compute=False).to(device)

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
        factory: ``factory(**options) -> Metric``, or its ``"package.module:attribute"`` path, imported on first use.
        description: one line for ``gpumetrics list``.
        empty_prediction: what a missing prediction is scored as (documented answer, counted in the report);
            ``None``: there is none, and a missing prediction is a ``DataError`` naming the ids. A string also makes
            the records reader hold predictions and references to text.
        empty_prediction_of: hook ``empty_prediction_of(options) -> answer`` (or its ``"package.module:attribute"``
            path) for an entry whose empty answer depends on the task's options, overriding ``empty_prediction``
            (the image-file entries: ``""``, naming no image, under ``missing_image: zero``; ``None`` otherwise).
            The reader's text checks still follow ``empty_prediction``. See :meth:`empty_answer`.
        update_args: ``(predictions, references) -> tuple`` of positional ``update`` arguments.
        primary: key of the score to report when ``compute()`` returns a dict.
        path_options: options that are file-system paths, with their default (``None``: no default). A config
            resolves their relative values — and the defaults — against the config file's folder.
        model_options: options that name a model by a path *or* by a name (a hub id, an open_clip model or tag). A
            config resolves a relative value against its folder when a file or folder of that name is there; any
            other value stays as written (``"ViT-B-32"``, ``"openai/clip-vit-base-patch32"``, ``"openai"``).
        table_keys: keys of a dict result that the results table shows one row each, under the task (the
            COCO caption table); the JSON report holds every key in ``details`` anyway.
        check_options: ``check_options(**options)`` raising ``TypeError``/``ValueError``/``FileNotFoundError`` for
            bad options without building the metric — set by metrics that load models; ``None``: :meth:`check`
            builds the metric once (model-free metrics construct in microseconds).
        per_sample: ``per_sample(options, device) -> score`` with ``score(*update_args) -> Tensor[B]``, the score of
            each sample of a batch (for the report's histograms and worst examples); ``None``: the metric has no
            meaningful per-sample score (corpus statistics such as CIDEr's document frequency, FID).
        options: the options a config may set, with their defaults (``gpumetrics list`` shows them without importing
            the metric; a test holds them equal to the factory's signature). ``None``: not declared.
        safe_cut: hook ``safe_cut(metric) -> reads_next`` or ``None``: for a metric whose update scores a batch as one
            call in which a sample can depend on the next one (pycocoevalcap's PTB tokeniser), ``reads_next(prediction,
            references)`` tells whether the sample may; the runner then ends batches and shards only after samples
            that do not, and gets the numbers of one call over everything. ``None`` (the hook or its result): batches
            are cut anywhere.
        prepare: hook ``prepare(metric, progress)`` run once before the first batch of a task (e.g. reading a
            reference image set with its own progress bar instead of inside ``compute()``).
        higher_is_better: the direction shown in reports; ``None``: the metric module's ``higher_is_better``.
    """

    name: str
    factory: Callable[..., Metric]
    description: str
    empty_prediction: Any = ""
    update_args: Callable[[list, list], tuple] = text_update_args
    primary: Optional[str] = None
    path_options: dict = dataclasses.field(default_factory=dict)
    model_options: tuple[str, ...] = ()
    check_options: Optional[Callable[..., None]] = None
    table_keys: Sequence[str] = ()
    per_sample: Optional[Callable[[dict, Any], Callable[..., Any]]] = None
    options: Optional[dict] = None
    safe_cut: Optional[Callable[[Metric], Optional[Callable[[Any, Any], bool]]]] = None
    prepare: Optional[Callable[[Metric, Optional[ProgressFn]], None]] = None
    higher_is_better: Optional[bool] = None
    empty_prediction_of: Optional[Union[str, Callable[[dict], Any]]] = None

    def build(self, options: Optional[dict] = None) -> Metric:
        return resolve(self.factory)(**(options or {}))

    def empty_answer(self, options: Optional[dict] = None) -> Any:
        """What a missing prediction is scored as under a task's ``options``: the ``empty_prediction_of`` hook's
        answer, else ``empty_prediction`` (``None``: none — every id needs a prediction)."""
        if self.empty_prediction_of is None:
            return self.empty_prediction
        return resolve(self.empty_prediction_of)(dict(options or {}))

    def direction(self, metric: Metric) -> Optional[bool]:
        """Whether a higher score is better: the entry's ``higher_is_better``, else the metric module's class
        attribute (torchmetrics' ``Metric.higher_is_better``; ``None`` for a module without one)."""
        if self.higher_is_better is not None:
            return self.higher_is_better
        return getattr(type(metric), "higher_is_better", None)

    def reads_next(self, metric: Metric) -> Optional[Callable[[Any, Any], bool]]:
        """The ``safe_cut`` predicate of the built ``metric`` (``None``: batches may be cut anywhere)."""
        return None if self.safe_cut is None else self.safe_cut(metric)

    def check(self, options: Optional[dict] = None) -> None:
        """Raise on options the metric would reject, loading no model weights (see ``check_options``)."""
        if self.check_options is None:
            self.build(options)
        else:
            resolve(self.check_options)(**(options or {}))


@dataclasses.dataclass(frozen=True)
class SuiteTask:
    """One task of a suite: a display name, its metric, fixed options and the official file format.

    Attributes:
        format: name of a registered :class:`Format` (:mod:`gpumetrics.suites.formats`) for the organisers' two files
            (``None``: the generic ``{"id", "prediction"}`` / ``{"id", "references"}`` records).
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


#: ``read(predictions, references, options) -> (JoinedData, options)``; the returned options are the metric's
#: (a format may derive one, e.g. ``image_root`` from the predictions file's folder).
Reader = Callable[[Path, Path, dict], Any]


@dataclasses.dataclass(frozen=True)
class Format:
    """A file layout other than the records: its name, one line for ``gpumetrics list`` and its reader (its data
    is read and joined by :mod:`gpumetrics.harness.records`)."""

    name: str
    description: str
    read: Reader
    path_options: tuple[str, ...] = ()  # options the reader consumes (file paths, resolved against the config)


METRICS: dict[str, TaskMetric] = {}
SUITES: dict[str, Suite] = {}
FORMATS: dict[str, Format] = {}


def register_format(name: str, description: str, path_options: tuple[str, ...] = ()) -> Callable[[Reader], Reader]:
    """Decorator: register ``read`` as format ``name``."""

    def wrap(read: Reader) -> Reader:
        FORMATS[name] = Format(name, description, read, path_options)
        return read

    return wrap


def metrics() -> dict[str, TaskMetric]:
    """Every registered task metric (the built-in ones loaded)."""
    load_builtin()
    return METRICS


def suites() -> dict[str, Suite]:
    """Every registered suite (the built-in ones loaded)."""
    load_builtin()
    return SUITES


def formats() -> dict[str, Format]:
    """Every registered file format (the built-in ones loaded)."""
    load_builtin()
    return FORMATS


def get_format(name: str) -> Format:
    """Look up a format, with an error that lists the known names."""
    if name not in formats():
        raise ValueError(f"unknown format {name!r}; known: {', '.join(sorted(FORMATS))}")
    return FORMATS[name]


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
    if name not in metrics():
        raise ValueError(f"unknown metric {name!r}; known: {', '.join(sorted(METRICS))}")
    return METRICS[name]


def get_suite(name: str) -> Suite:
    """Look up a suite, with an error that lists the known names."""
    if name not in suites():
        raise ValueError(f"unknown suite {name!r}; known: {', '.join(sorted(SUITES))}")
    return SUITES[name]


def _read_coco_captions(predictions: Path, references: Path, options: dict) -> tuple:
    """:func:`~gpumetrics.harness.records.read_coco` as a format (``format: coco`` of a config)."""
    from gpumetrics.harness.records import read_coco  # same layer; read only when a config uses it

    return read_coco(predictions, references), options


register_format("coco", "COCO captions: predictions = a results file [{image_id, caption}], "
                        "references = captions_*.json; only the images of the results are evaluated "
                        "(COCOEvalCap)")(_read_coco_captions)

"""Evaluation configs: which tasks to score, with which metric, options and data files.

A config is a YAML (or JSON) mapping::

    name: demo                      # optional (default: the file's stem), shown in the report
    suite: aij2022                  # optional: tasks take metric + options from this registered suite
    batch_size: 1024                # optional, samples per ``update`` call (the CLI's --batch-size overrides)
    device: cpu                     # optional, cpu | cuda | cuda:N | mps … (the CLI's --device overrides)
    tasks:
      - name: TextQA                # unique; with a suite, one of the suite's task names
        metric: token_f1            # a name from ``gpumetrics list`` (optional with a suite)
        options: {preset: squad}    # keyword arguments of the metric (fixed by the suite when there is one)
        predictions: ../examples/textqa/predictions.jsonl
        references: ../examples/textqa/references.jsonl
        format: records             # optional: records (default; joined by id) or coco (COCO caption files:
                                    # predictions = results [{image_id, caption}], references = captions_*.json)

With a suite, a task gives only its two official files (the suite fixes the metric, its options and the file format,
:mod:`gpumetrics.suites.formats`) plus the options the suite leaves to the config (``user_options``: model and image
paths); a hidden-task slot of the suite gives ``score: S`` (a number in [0, 1]) instead of files::

    suite: aij2022
    tasks:
      - {name: TextQA, references: textqa_gt.json, predictions: textqa_pred.json}
      - {name: Hidden1, score: 0.42}

Relative paths — data files and a metric's path options (e.g. ``real`` and ``image_root`` of
``s_image_generation``) — are resolved against the directory of the config file, never the working directory. Every
error is a :class:`ConfigError` naming the config file and the offending entry.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
from pathlib import Path
from typing import Any, Optional

import yaml

from gpumetrics.core import check_device, check_positive_int
from gpumetrics.core.files import expand_user, open_input
from gpumetrics.harness.registry import Suite, TaskMetric, bounded_repr, formats, metrics, suites

DEFAULT_BATCH_SIZE = 1024
_TOP_KEYS = {"name", "suite", "batch_size", "device", "tasks"}
_TASK_KEYS = {"name", "metric", "options", "predictions", "references", "format", "score"}
#: data layouts a task outside a suite can read: ``records`` (:class:`~gpumetrics.harness.records.IndexedJoin`) and
#: ``coco`` (:func:`~gpumetrics.harness.records.read_coco`: a COCO results file and a ``captions_*.json`` annotations
#: file); a suite task reads its official format (:mod:`gpumetrics.suites.formats`; ``coco`` is registered in
#: :mod:`gpumetrics.harness.registry`)
DATA_FORMATS = ("records", "coco")


class ConfigError(ValueError):
    """An evaluation config is invalid; the message names the config file and entry."""


@dataclasses.dataclass(frozen=True)
class TaskConfig:
    """One task of a config, validated: its metric entry, options and existing data files.

    ``format``: ``"records"`` (joined by id), or the name of a reader in :mod:`gpumetrics.suites.formats` (``coco``,
    a suite task's official format); ``score``: the supplied score of a suite's hidden-task slot (then ``metric`` is
    None and there are no files).
    """

    name: str
    metric: Optional[TaskMetric]
    options: dict
    predictions: Optional[Path]
    references: Optional[Path]
    format: str = "records"
    score: Optional[float] = None

    def option_files(self) -> list[tuple[str, Path]]:
        """The files the task's options name (``synonyms``, ``embeddings``, ``weights``, a suite's ``inputs`` …:
        resolved against the config's folder when it loaded), as ``(option, path)``: inputs of the run like its data
        files (an output may be none of them; a checkpoint is resumed only while they are unchanged)."""
        return [(key, Path(value)) for key, value in self.options.items()
                if isinstance(value, str) and value and os.path.isfile(value)]


@dataclasses.dataclass(frozen=True)
class EvalConfig:
    """A validated config: tasks in order, optional suite, batch size and device (``None`` = not set); ``sha256``:
    the hex digest of the bytes :func:`load_config` read (a pipe, ``<(…)``, cannot be read a second time)."""

    path: Path
    name: str
    tasks: list[TaskConfig]
    suite: Optional[Suite] = None
    batch_size: int = DEFAULT_BATCH_SIZE
    device: Optional[str] = None
    sha256: Optional[str] = None


def _check_device(device: Any, where: str) -> str:
    """``device`` as a config gives it: a name torch reads (``core.check_device(..., available=False)``); whether
    this machine has it is checked when the config is run, so a config written for a GPU machine loads anywhere."""
    if not isinstance(device, str):
        raise ConfigError(f"{where}: expected a device name such as 'cpu', 'cuda' or 'cuda:1', got "
                          f"{bounded_repr(device)}")
    try:
        check_device(device, "device", available=False)
    except ValueError as error:
        raise ConfigError(f"{where}: {error}") from None
    return device


def _check_batch_size(value: Any, where: str) -> int:
    try:
        return check_positive_int(value, "batch_size")
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{where}: {error}") from None


def _resolve(base: Path, value: Any, where: str, key: str) -> Path:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where}: `{key}` must be a path string, got {bounded_repr(value)}")
    path = expand_user(value)
    path = path if path.is_absolute() else Path(os.path.normpath(base / path))
    if path.is_dir():
        raise ConfigError(f"{where}: `{key}` is a directory, not a data file: {path}")
    if not path.is_file():
        if path.exists():  # /dev/null, a FIFO (it would block, and cannot be read twice), a socket
            raise ConfigError(f"{where}: `{key}` is not a regular file (a device, FIFO or socket): {path}")
        raise ConfigError(f"{where}: `{key}` file not found: {path}")
    return path


def _resolve_path_options(base: Path, entry: TaskMetric, options: dict) -> dict:
    """The metric's path options (``TaskMetric.path_options``) resolved against the config's folder: a relative
    value or an unset option's default becomes ``base / value``; absolute paths and non-paths (``"random"``, None)
    stay as they are. A model option (``TaskMetric.model_options``) becomes ``base / value`` only where that file or
    folder exists (else it is a model's name, a hub id or a tag)."""
    resolved = dict(options)
    for key, default in entry.path_options.items():
        value = resolved.get(key, default)
        if isinstance(value, str) and value and value != "random" and not expand_user(value).is_absolute():
            resolved[key] = os.path.normpath(base / value)
    for key in entry.model_options:  # a path beside the config, or a model's name / hub id / tag kept as written
        value = resolved.get(key)
        if isinstance(value, str) and value and not expand_user(value).is_absolute() and (base / value).exists():
            resolved[key] = os.path.normpath(base / value)
    return resolved


def _check_options(entry: TaskMetric, options: dict, where: str) -> None:
    """Reject a wrong option here, naming the task, not mid-evaluation; model weights are not loaded."""
    if options.get("reduction") == "none":
        raise ConfigError(f"{where}: a task reports one score; `reduction: none` (per-sample scores) cannot be one — "
                          "use mean or sum")
    try:
        entry.check(options)
    except (TypeError, ValueError, FileNotFoundError) as err:
        raise ConfigError(f"{where}: invalid options {bounded_repr(options, 200)} for metric {entry.name!r}: "
                          f"{err}") from None


#: values a config may hold once YAML aliases are followed (a real config holds hundreds)
MAX_CONFIG_VALUES = 1_000_000


def _check_values(raw: Any, path: Path) -> None:
    """Refuse a config whose aliases expand to more than :data:`MAX_CONFIG_VALUES` values (a YAML "billion laughs"
    bomb: ``yaml.safe_load`` shares the aliased objects, but anything that walks them — an option check, a repr in
    an error message, the JSON report — would expand them; counted without expanding: at most the budget's steps),
    or a string that is not Unicode text (YAML's ``"\ud800"`` escape gives a lone surrogate, which no report can
    write: the run failed at its end naming no file)."""
    budget = MAX_CONFIG_VALUES
    stack = [raw]
    while stack:
        value = stack.pop()
        budget -= 1
        if budget < 0:
            raise ConfigError(f"{path}: the config holds more than {MAX_CONFIG_VALUES:,} values once its YAML aliases "
                              "are expanded (an alias bomb?); write the values out")
        if isinstance(value, str) and not value.isascii():
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as err:
                raise ConfigError(f"{path}: the string {bounded_repr(value, 60)} holds a lone surrogate "
                                  f"({value[err.start]!r}), which is not Unicode text") from None
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, (list, tuple)):
            stack.extend(value)


def _hidden_task(item: dict, name: str, where: str) -> TaskConfig:
    """A hidden-task slot: only ``name`` and ``score`` (a number in [0, 1])."""
    extra = sorted(set(item) - {"name", "score"})
    if extra:
        raise ConfigError(f"{where}: a hidden-task slot takes only `score` (S ∈ [0, 1]); remove {', '.join(extra)}")
    score = item.get("score")
    if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0 <= score <= 1:
        raise ConfigError(f"{where}: `score` of a hidden task must be a number in [0, 1], got {bounded_repr(score)}")
    return TaskConfig(name=name, metric=None, options={}, predictions=None, references=None, score=float(score))


def parse_config(raw: Any, path: Path | str = "<config>") -> EvalConfig:
    """Validate a config mapping already loaded from YAML/JSON.

    Args:
        raw: the loaded mapping (see the module docstring for the keys).
        path: the config's path; relative data paths resolve against its directory, errors name it.

    Returns:
        :class:`EvalConfig`.

    Raises:
        ConfigError: unknown key, unknown metric or suite, bad options, missing data file, duplicate task name.

    Example:
        >>> parse_config({"tasks": []}, "demo.yaml")
        Traceback (most recent call last):
        ...
        gpumetrics.harness.config.ConfigError: demo.yaml: `tasks` must be a non-empty list of task mappings
    """
    path = Path(path)
    base = path.parent
    _check_values(raw, path)
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a config must be a mapping with a `tasks` list, got {type(raw).__name__}")
    unknown = set(raw) - _TOP_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown key(s) {', '.join(sorted(map(str, unknown)))}; "
                          f"allowed: {', '.join(sorted(_TOP_KEYS))}")
    tasks_raw = raw.get("tasks")
    if not isinstance(tasks_raw, list) or not tasks_raw:
        raise ConfigError(f"{path}: `tasks` must be a non-empty list of task mappings")

    suite = None
    if raw.get("suite") is not None:
        known_suites = suites()
        if not isinstance(raw["suite"], str) or raw["suite"] not in known_suites:
            raise ConfigError(f"{path}: unknown suite {bounded_repr(raw['suite'])}; "
                              f"known: {', '.join(sorted(known_suites)) or 'none'}")
        suite = known_suites[raw["suite"]]
    suite_tasks = {task.name: task for task in suite.tasks} if suite else {}
    batch_size = _check_batch_size(raw.get("batch_size", DEFAULT_BATCH_SIZE), str(path))
    device = _check_device(raw["device"], f"{path}: device") if raw.get("device") is not None else None

    tasks: list[TaskConfig] = []
    seen: set[str] = set()
    for index, item in enumerate(tasks_raw):
        where = f"{path}: tasks[{index}]"
        if not isinstance(item, dict):
            raise ConfigError(f"{where}: a task must be a mapping, got {type(item).__name__}")
        name = item.get("name")
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{where}: `name` must be a non-empty string")
        where = f"{where} ({name})"
        unknown = set(item) - _TASK_KEYS
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(sorted(map(str, unknown)))}; "
                              f"allowed: {', '.join(sorted(_TASK_KEYS))}")
        if name in seen:
            raise ConfigError(f"{where}: duplicate task name {name!r}")
        seen.add(name)
        options = item.get("options")
        options = {} if options is None else options  # `options: false`, `0`, `""` or `[]` are no mapping either
        if not isinstance(options, dict):
            raise ConfigError(f"{where}: `options` must be a mapping, got {type(options).__name__}")
        if suite is not None and name not in suite_tasks and name not in suite.hidden:
            known = ", ".join([*suite_tasks, *suite.hidden])
            raise ConfigError(f"{where}: suite {suite.name!r} has no task {name!r}; its tasks: {known}")
        if suite is not None and name in suite.hidden:
            tasks.append(_hidden_task(item, name, where))
            continue
        if "score" in item:
            raise ConfigError(f"{where}: `score` is for the hidden-task slots of a suite"
                              + (f" ({', '.join(suite.hidden)})" if suite is not None and suite.hidden else ""))

        metric_name = item.get("metric")
        data_format = item.get("format", "records")
        format_options: dict = {}
        if suite is None and data_format not in DATA_FORMATS:
            raise ConfigError(f"{where}: `format` must be one of {', '.join(DATA_FORMATS)}, "
                              f"got {bounded_repr(data_format)}")
        if suite is not None:
            fixed = suite_tasks[name]
            if metric_name is not None and metric_name != fixed.metric:
                raise ConfigError(f"{where}: suite {suite.name!r} scores {name!r} with {fixed.metric!r}, "
                                  f"not {bounded_repr(metric_name)}")
            conflicts = {k: v for k, v in options.items()
                         if k not in fixed.user_options and (k not in fixed.options or fixed.options[k] != v)}
            if conflicts:
                settable = f"; a config may set only {', '.join(fixed.user_options)}" if fixed.user_options else ""
                raise ConfigError(f"{where}: options of suite {suite.name!r} are fixed to {fixed.options!r}{settable}; "
                                  f"cannot set {bounded_repr(conflicts, 200)}")
            metric_name = fixed.metric
            options = {**fixed.options, **{k: v for k, v in options.items() if k in fixed.user_options}}
            official = fixed.format or "records"
            if "format" in item and data_format != official:
                raise ConfigError(f"{where}: suite {suite.name!r} reads {name!r} in format {official!r}, not "
                                  f"{bounded_repr(data_format)} (leave `format` out)")
            data_format = official
            if fixed.format is not None:
                format_options = {k: options.pop(k) for k in formats()[fixed.format].path_options if k in options}
                format_options = {k: os.fspath(_resolve(base, v, where, k)) for k, v in format_options.items()}
        if not isinstance(metric_name, str):
            raise ConfigError(f"{where}: `metric` must name a registered metric (see `gpumetrics list`)")
        known_metrics = metrics()
        if metric_name not in known_metrics:
            raise ConfigError(f"{where}: unknown metric {metric_name!r}; known: {', '.join(sorted(known_metrics))}")
        entry = known_metrics[metric_name]
        options = _resolve_path_options(base, entry, options)
        _check_options(entry, options, where)
        tasks.append(
            TaskConfig(
                name=name,
                metric=entry,
                options={**options, **format_options},
                predictions=_resolve(base, item.get("predictions"), where, "predictions"),
                references=_resolve(base, item.get("references"), where, "references"),
                format=data_format,
            )
        )
    name = raw.get("name")
    if name is None:  # absent, or `name:` left empty
        name = path.stem
    elif isinstance(name, bool) or not isinstance(name, (str, int, float)):  # a list or mapping was the report's title
        raise ConfigError(f"{path}: `name` must be a string, got {bounded_repr(name)}")
    return EvalConfig(path=path, name=str(name), tasks=tasks, suite=suite, batch_size=batch_size, device=device)


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a mapping repeating a key: PyYAML keeps the last value silently, so a task
    pasted with a second ``predictions:`` (or ``metric:``) would score other files than the ones read first."""

    def construct_mapping(self, node, deep=False):
        if isinstance(node, yaml.MappingNode):
            seen: dict = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":  # `<<: *anchor`: its keys may be overridden
                    continue
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                    seen.setdefault(key, key_node.start_mark.line + 1)
                except TypeError:  # an unhashable key: PyYAML's own error follows
                    continue
                if first is not None:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key {bounded_repr(key)} (first on line {first}): YAML keeps only the "
                        "last value; remove one", key_node.start_mark)
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_str(self, node):
        # a JSON config's "\ud83d\ude00" is one character in JSON, two surrogates to PyYAML: joined here as JSON
        # joins them; a lone one stays and is refused with the file (``_check_values``)
        value = super().construct_yaml_str(node)
        if not value.isascii() and any("\ud800" <= char <= "\udfff" for char in value):
            value = value.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")
        return value


_UniqueKeyLoader.add_constructor("tag:yaml.org,2002:str", _UniqueKeyLoader.construct_yaml_str)


def load_config(path: Path | str) -> EvalConfig:
    """Read and validate a YAML/JSON config file (see :func:`parse_config`).

    Raises:
        ConfigError: the file is missing, a socket or a device (``/dev/zero``), is not valid YAML, or fails
            validation.
    """
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"{path}: is a directory, not a config file")
    try:
        with open_input(path) as handle:  # /dev/zero is refused, not read into memory
            data = handle.read()
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except ValueError as err:
        raise ConfigError(f"config {err}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise ConfigError(f"{path}:{line}: the config is not UTF-8 text ({err.reason} at byte {err.start})") from None
    try:
        raw = yaml.load(text, Loader=_UniqueKeyLoader)  # safe: SafeLoader's constructors only
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigError(f"{where}: invalid YAML: {getattr(err, 'problem', None) or err}") from None
    return dataclasses.replace(parse_config(raw, path), sha256=hashlib.sha256(data).hexdigest())

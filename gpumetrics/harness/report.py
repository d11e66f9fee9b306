"""Presenting a :class:`~gpumetrics.harness.runner.Report`: a rich table for people, a JSON file for machines."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from rich.table import Table

from gpumetrics.core.files import atomic_write
from gpumetrics.harness import registry
from gpumetrics.harness.registry import bounded_repr

if TYPE_CHECKING:  # the runner (torch) is not needed to list the registry
    from gpumetrics.harness.runner import DataCheck, Report

#: How the results table marks a task's direction: ``higher_is_better`` of its metric module.
DIRECTION_MARKS = {True: "↑", False: "↓", None: ""}


def results_table(report: Report) -> Table:
    """One row per task (task, metric, score with ↑/↓ for the better direction, n, missing, the whole signature, folded
    over lines when the terminal is narrow, never cut: two numbers are comparable only if all of it agrees) — and
    one row per key under it for metrics with ``table_keys`` (the COCO caption table) —, then the suite's combined
    score."""
    title = f"gpumetrics · {report.name} · {report.device}"
    table = Table(title=title, title_justify="left", caption="↑ higher is better · ↓ lower is better",
                  caption_justify="left")
    table.add_column("task", style="bold")
    table.add_column("metric")
    table.add_column("score", justify="right")
    table.add_column("n", justify="right")
    table.add_column("missing", justify="right")
    table.add_column("signature", overflow="fold")
    for task in report.tasks:
        missing = f"[yellow]{task.missing}[/yellow]" if task.missing else "0"
        table.add_row(task.name, task.metric, f"{task.score:.4f} {DIRECTION_MARKS[task.higher_is_better]}".rstrip(),
                      str(task.n), missing, task.signature)
        entry = registry.metrics().get(task.metric)
        for key in entry.table_keys if entry is not None else ():
            if isinstance(task.details.get(key), (int, float)):
                table.add_row(f"  {key}", "", f"{task.details[key]:.4f}", "", "", "")
    if report.suite is not None:
        suite = report.suite
        note = f"missing tasks: {', '.join(suite['missing_tasks'])}" if suite["missing_tasks"] else ""
        table.add_section()
        table.add_row(f"suite {suite['name']}", "combined", f"[bold]{suite['score']:.4f}[/bold]", "", "", note)
    return table


def data_check_table(name: str, checks: Sequence[DataCheck]) -> Table:
    """``gpumetrics evaluate --check``: one row per task — metric, samples, missing predictions and the first missing
    ids (a hidden-task slot: its supplied score)."""
    table = Table(title=f"gpumetrics · {name} · files checked, nothing scored", title_justify="left")
    table.add_column("task", style="bold")
    table.add_column("metric")
    table.add_column("n", justify="right")
    table.add_column("missing", justify="right")
    table.add_column("first missing ids", overflow="fold")
    for check in checks:
        if check.supplied:
            table.add_row(check.name, "supplied", "", "", "")
            continue
        missing = f"[yellow]{check.missing}[/yellow]" if check.missing else "0"
        shown = ", ".join(bounded_repr(i, 40) for i in check.missing_ids[:5]) + (", …" if check.missing > 5 else "")
        table.add_row(check.name, check.metric, str(check.n), missing, shown)
    return table


def write_json_report(report: Report, path: Path | str) -> Path:
    """Write ``report.to_dict()`` as indented UTF-8 JSON, atomically (a failed write leaves the previous report)."""
    path = Path(path)
    text = json.dumps(report.to_dict(), ensure_ascii=False, indent=2) + "\n"
    with atomic_write(path) as handle:
        handle.write(text)
    return path


def _json_value(value: object) -> object:
    """``value`` if JSON can hold it as it is, else its (bounded) repr."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return bounded_repr(value)
    return value


def option_defaults(entry: registry.TaskMetric) -> dict | None:
    """The options a config (or ``gpumetrics score --opt``) may set, name → ``{"default": value}`` or
    ``{"required": True}``; ``None`` when the entry declares none.

    Example:
        >>> from gpumetrics.harness.registry import get_metric
        >>> option_defaults(get_metric("token_f1"))
        {'preset': {'default': None}, 'reduction': {'default': 'mean'}}
    """
    if entry.options is None:
        return None
    return {name: {"required": True} if default is registry.REQUIRED else {"default": _json_value(default)}
            for name, default in entry.options.items()}


def _options_text(entry: registry.TaskMetric) -> str:
    options = option_defaults(entry)
    if options is None:
        return "(see the metric's docs)"
    if not options:
        return "—"
    return ", ".join(f"{name} (required)" if "required" in spec else f"{name}={spec['default']!r}"
                     for name, spec in options.items())


def registry_listing() -> dict:
    """Registered task metrics (with their options and defaults), suites and official file formats as plain data
    (``gpumetrics list --json``)."""
    return {
        "metrics": {
            name: {
                "description": entry.description,
                "empty_prediction": _json_value(entry.empty_prediction),
                "primary": entry.primary,
                "options": option_defaults(entry),
            }
            for name, entry in sorted(registry.metrics().items())
        },
        "suites": {
            name: {
                "description": suite.description,
                "tasks": [{"name": t.name, "metric": t.metric, "options": t.options, "format": t.format,
                           "user_options": list(t.user_options)} for t in suite.tasks],
                "hidden": list(suite.hidden),
            }
            for name, suite in sorted(registry.suites().items())
        },
        "formats": {name: fmt.description for name, fmt in sorted(registry.formats().items())},
    }


def registry_tables() -> list[Table]:
    """Rich tables of the registered task metrics, suites and official file formats (``gpumetrics list``)."""
    metrics = Table(title="task metrics", title_justify="left")
    metrics.add_column("metric", style="bold")
    metrics.add_column("options (default)", overflow="fold")
    metrics.add_column("missing prediction scored as")
    metrics.add_column("description", overflow="fold")
    for name, entry in sorted(registry.metrics().items()):
        empty = repr(entry.empty_prediction) + (" (its options may give one)" if entry.empty_prediction_of
                                                 is not None else "")
        metrics.add_row(name, _options_text(entry), empty, entry.description)
    suites = Table(title="suites", title_justify="left")
    suites.add_column("suite", style="bold")
    suites.add_column("tasks (metric)", overflow="fold")
    suites.add_column("description", overflow="fold")
    for name, suite in sorted(registry.suites().items()):
        tasks = ", ".join(f"{t.name} ({t.metric}" + (f", format {t.format})" if t.format else ")") for t in suite.tasks)
        if suite.hidden:
            tasks += f"; hidden-task slots {suite.hidden[0]}…{suite.hidden[-1]} (score: S)"
        suites.add_row(name, tasks, suite.description)
    if not registry.suites():
        suites.add_row("—", "no suite registered", "")
    formats = Table(title="official file formats of the suite tasks", title_justify="left")
    formats.add_column("format", style="bold")
    formats.add_column("files", overflow="fold")
    for name, fmt in sorted(registry.formats().items()):
        formats.add_row(name, fmt.description)
    return [metrics, suites, formats]

"""The HTML report: one self-contained page (inline CSS and SVG, no script, nothing fetched) rendered from the report
dict — what :meth:`~gpumetrics.harness.runner.Report.to_dict` returns and the JSON report holds — so a saved JSON
report can be rendered again later (``gpumetrics report REPORT.json --html out.html``)."""

from __future__ import annotations

import html
import json
import math
import shlex
from pathlib import Path
from typing import Any, Optional

from gpumetrics.core.files import atomic_write
from gpumetrics.harness import registry
from gpumetrics.harness.report import DIRECTION_MARKS

#: Displayed predictions and references are cut to this many characters (the JSON report keeps them whole).
TEXT_LIMIT = 300
HISTOGRAM_WIDTH, HISTOGRAM_HEIGHT, HISTOGRAM_MARGIN = 480, 140, 24
DIRECTION_WORDS = {True: "higher is better", False: "lower is better", None: "no better direction"}
RUN_LABELS = {"world_size": "processes", "distributed_backend": "collectives", "device_name": "device model",
              "argv": "command", "host": "host", "python": "python", "platform": "platform"}

# "default-src 'none'" makes the browser itself refuse any fetch and any script, should one ever slip through.
HEAD = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #1d2330; background: #fff;
  margin: 2rem auto; max-width: 76rem; padding: 0 1rem; }}
h1 {{ font-size: 1.6rem; margin: 0 0 .5rem; }}
h2 {{ font-size: 1.2rem; margin: 2rem 0 .4rem; border-bottom: 2px solid #dfe3ea; padding-bottom: .2rem; }}
table {{ border-collapse: collapse; margin: .5rem 0 1rem; }}
th, td {{ border: 1px solid #dfe3ea; padding: .3rem .5rem; vertical-align: top; text-align: left; }}
th {{ background: #f2f4f8; }}
td.num {{ text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }}
tr.key td {{ color: #4a5568; }}
tr.key td:first-child {{ padding-left: 1.5rem; }}
code, .text {{ font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12.5px; }}
.text {{ white-space: pre-wrap; overflow-wrap: anywhere; }}
td.sig {{ overflow-wrap: anywhere; max-width: 32rem; }}
dl.meta {{ display: grid; grid-template-columns: max-content 1fr; gap: .15rem 1rem; margin: .5rem 0; }}
dl.meta dt {{ color: #4a5568; }}
dl.meta dd {{ margin: 0; overflow-wrap: anywhere; }}
.worst td.side {{ width: 40%; }}
.ref + .ref {{ border-top: 1px dashed #cbd2dc; margin-top: .3rem; padding-top: .3rem; }}
.empty {{ color: #8a94a6; font-style: italic; }}
.cut {{ color: #b45309; font-style: italic; }}
.suite {{ font-size: 1.1rem; background: #eef6ee; border: 1px solid #b7dcb9; padding: .5rem .8rem;
  display: inline-block; }}
.note {{ color: #4a5568; }}
svg.histogram rect.bar {{ fill: #4c78a8; }}
svg.histogram text {{ font-size: 11px; fill: #4a5568; }}
svg.histogram line {{ stroke: #8a94a6; }}
</style>
</head>
<body>
"""


def render_html(report: dict) -> str:
    """The page of a report dict: header with run metadata, per-task table, the suite's combined score, then per task
    a histogram of per-sample scores and the worst examples, prediction beside references.

    Fields absent from older reports (``run``, a task's ``samples``) are left out of the page; every text from the
    report is HTML-escaped, and predictions and references are cut to :data:`TEXT_LIMIT` characters.

    Raises:
        TypeError: ``report`` is not a dict.
    """
    if not isinstance(report, dict):
        raise TypeError(f"`report` must be a report dict (Report.to_dict() or a JSON report), "
                        f"got {type(report).__name__}")
    tasks = [task for task in _sequence(report.get("tasks")) if isinstance(task, dict)]
    title = f"gpumetrics · {report.get('name', 'report')}"
    parts = [HEAD.format(title=_escape(title)), f"<h1>{_escape(title)}</h1>\n", _header(report)]
    parts.append(_results_table(tasks))
    if isinstance(report.get("suite"), dict):
        parts.append(_suite(report["suite"]))
    parts.extend(_task_section(index, task) for index, task in enumerate(tasks))
    parts.append("</body>\n</html>\n")
    # A lone surrogate (possible in a Python str, not in UTF-8) would make the write fail: shown as "?".
    return "".join(parts).encode("utf-8", "replace").decode("utf-8")


def write_html_report(report: dict, path: Path | str, page: Optional[str] = None) -> Path:
    """Write :func:`render_html` of ``report`` (or ``page``, rendered already) to ``path`` atomically (a failed write
    leaves the previous page)."""
    page = render_html(report) if page is None else page
    path = Path(path)
    with atomic_write(path) as handle:
        handle.write(page)
    return path


def histogram_svg(histogram: dict, label: str = "score") -> str:
    """An inline SVG bar chart of ``{"edges": [B+1 floats], "counts": [B ints], ...}``: one ``rect.bar`` per bin
    (zero-height for an empty bin), the first, middle and last edge under the axis, the largest count beside it.

    Raises:
        ValueError: ``histogram`` lacks counts, or its edges are not one more than its counts.
    """
    counts, edges = _sequence(histogram.get("counts")), _sequence(histogram.get("edges"))
    if not counts or len(edges) != len(counts) + 1:
        raise ValueError(
            f"`histogram` needs B >= 1 counts and B+1 edges, got {len(counts)} counts and {len(edges)} edges"
        )
    if not all(_real(count) and count >= 0 for count in counts) or not all(_real(edge) for edge in edges):
        raise ValueError("`histogram` needs counts ≥ 0 and edges that are numbers")
    width, height, margin = HISTOGRAM_WIDTH, HISTOGRAM_HEIGHT, HISTOGRAM_MARGIN
    plot_width, plot_height = width - 2 * margin, height - 2 * margin
    bin_width = plot_width / len(counts)
    tallest = max(max(counts), 1)
    bars = []
    for index, count in enumerate(counts):
        bar_height = plot_height * count / tallest
        x, y = margin + index * bin_width, margin + plot_height - bar_height
        bars.append(
            f'<rect class="bar" x="{x:.2f}" y="{y:.2f}" width="{max(bin_width - 1, 0.5):.2f}" '
            f'height="{bar_height:.2f}">'
            f"<title>{_number(edges[index])} … {_number(edges[index + 1])}: {count}</title></rect>"
        )
    baseline = margin + plot_height
    middle = len(edges) // 2
    ticks = [(margin, edges[0], "start"), (margin + middle * bin_width, edges[middle], "middle"),
             (margin + plot_width, edges[-1], "end")]
    labels = "".join(
        f'<text x="{x:.2f}" y="{baseline + 14}" text-anchor="{anchor}">{_number(value)}</text>'
        for x, value, anchor in ticks
    )
    return (
        f'<svg class="histogram" xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="histogram of per-sample {_escape(label)}">'
        + "".join(bars)
        + f'<line x1="{margin}" y1="{baseline}" x2="{margin + plot_width}" y2="{baseline}"/>'
        + labels
        + f'<text x="{margin}" y="{margin - 8}">max {tallest} per bin</text></svg>'
    )


def shown_text(value: Any, limit: int = TEXT_LIMIT) -> str:
    """Escaped HTML of a prediction or reference: a string as is, anything else as compact JSON; past ``limit``
    characters cut, with a marker saying how many were left out; an empty string marked as such.

    Example:
        >>> shown_text("<b>" + "x" * 5, limit=4)
        '&lt;b&gt;x<span class="cut">… [+4 chars]</span>'
        >>> shown_text({"box": [1, 2]})
        '{&quot;box&quot;:[1,2]}'
    """
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"),
                                                           default=str)
    if text == "":
        return '<span class="empty">(empty)</span>'
    if len(text) <= limit:
        return _escape(text)
    return f'{_escape(text[:limit])}<span class="cut">… [+{len(text) - limit} chars]</span>'


def _mapping(value: Any) -> dict:
    """A report field that should be an object: itself, else empty (the page renders what a report file holds)."""
    return value if isinstance(value, dict) else {}


def _sequence(value: Any) -> list:
    """A report field that should be a list: itself, else empty."""
    return value if isinstance(value, list) else []


def _real(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(value)


def _lookup(table: dict, key: Any, default: str = "") -> str:
    """``table[key]`` for a key read from a report file (a list or an object there is no key)."""
    return table.get(key, default) if isinstance(key, (str, int, float, bool, type(None))) else default


def _escape(value: Any) -> str:
    return html.escape(str(value), quote=True)


def _number(value: Any) -> str:
    """A score as shown: 4 decimals, ``nan``/``inf`` spelled out, ``—`` when absent."""
    if isinstance(value, bool) or value is None:
        return "—" if value is None else str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4f}" if math.isfinite(value) else str(value)
    return _escape(value)


def _meta_list(items: list[tuple[str, str]]) -> str:
    rows = "".join(f"<dt>{_escape(label)}</dt><dd>{value}</dd>" for label, value in items)
    return f'<dl class="meta">{rows}</dl>\n'


def _header(report: dict) -> str:
    items = [(label, _escape(report[key])) for key, label in (
        ("config", "config"), ("device", "device"), ("started", "started"), ("batch_size", "batch size"),
        ("gpumetrics_version", "gpumetrics"), ("torch_version", "torch"),
    ) if report.get(key) is not None]
    timing = _mapping(report.get("timing"))
    total = timing.get("total_seconds")
    if isinstance(total, (int, float)):
        items.append(("total time",
                      f"{total:.2f} s" + (" (resumed from a checkpoint)" if timing.get("resumed") else "")))
    run = report.get("run")
    for key, value in (run.items() if isinstance(run, dict) else ()):
        if key == "argv" and isinstance(value, list):
            shown = f"<code>{_escape(shlex.join(str(word) for word in value))}</code>"
        else:
            shown = _escape(value)
        items.append((RUN_LABELS.get(key, key), shown))
    return _meta_list(items)


def _results_table(tasks: list[dict]) -> str:
    rows = []
    for index, task in enumerate(tasks):
        counts = _mapping(task.get("counts"))
        mark = _lookup(DIRECTION_MARKS, task.get("higher_is_better"))
        rows.append(
            f'<tr><td><a href="#task-{index}">{_escape(task.get("name", "?"))}</a></td>'
            f'<td>{_escape(task.get("metric", ""))}</td>'
            f'<td class="num">{_number(task.get("score"))} {mark}</td>'
            f'<td class="num">{_number(counts.get("n"))}</td>'
            f'<td class="num">{_number(counts.get("missing_predictions"))}</td>'
            f'<td class="sig"><code>{_escape(task.get("signature", ""))}</code></td></tr>'
        )
        details = _mapping(task.get("details"))
        entry = _lookup(registry.metrics(), task.get("metric"), None)
        for key in entry.table_keys if entry is not None else ():
            if isinstance(details.get(key), (int, float)):
                rows.append(f'<tr class="key"><td>{_escape(key)}</td><td></td>'
                            f'<td class="num">{_number(details[key])}</td>'
                            "<td></td><td></td><td></td></tr>")
    return (
        '<table class="results">\n<thead><tr><th>task</th><th>metric</th><th>score</th><th>n</th><th>missing</th>'
        "<th>signature</th></tr></thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody></table>\n"
        '<p class="note">↑ higher is better · ↓ lower is better</p>\n'
    )


def _suite(suite: dict) -> str:
    lines = [f'<h2>Suite {_escape(suite.get("name", ""))}</h2>\n'
             f'<p class="suite">combined score <strong>{_number(suite.get("score"))}</strong></p>\n']
    for key, label in (("missing_tasks", "missing tasks"), ("hidden_not_supplied", "hidden tasks not supplied")):
        if _sequence(suite.get(key)):
            lines.append(f'<p class="note">{label}: {_escape(", ".join(map(str, suite[key])))}</p>\n')
    return "".join(lines)


def _task_section(index: int, task: dict) -> str:
    counts, files = _mapping(task.get("counts")), _mapping(task.get("files"))
    items = [("metric", _escape(task.get("metric", ""))), ("score", _number(task.get("score")))]
    items += [(label, _escape(files[key]))
              for key, label in (("predictions", "predictions"), ("references", "references"))
              if files.get(key)]
    if task.get("options"):
        items.append(("options", f"<code>{shown_text(task['options'])}</code>"))
    if counts.get("not_evaluated"):
        items.append(("not evaluated", _number(counts["not_evaluated"])))
    if _sequence(counts.get("missing_ids")):
        more = " …" if counts.get("missing_ids_truncated") else ""
        items.append(("missing ids", _escape(", ".join(map(str, counts["missing_ids"]))) + more))
    scalars = {key: value for key, value in _mapping(task.get("details")).items() if isinstance(value, (int, float))}
    if scalars:
        items.append(("details", ", ".join(f"{_escape(key)} {_number(value)}" for key, value in scalars.items())))
    body = [f'<section class="task" id="task-{index}">\n<h2>{_escape(task.get("name", "?"))}</h2>\n', _meta_list(items)]
    samples = task.get("samples")
    if isinstance(samples, dict):
        body.append(_samples(samples))
    else:
        body.append(f'<p class="note no-samples">Per-sample scores are not available for metric '
                    f'{_escape(task.get("metric", "?"))}.</p>\n')
    body.append("</section>\n")
    return "".join(body)


def _samples(samples: dict) -> str:
    name = samples.get("name", "score")
    better: Optional[bool] = samples.get("higher_is_better")
    parts = [f"<h3>Per-sample {_escape(name)} ({_lookup(DIRECTION_WORDS, better)})</h3>\n"]
    histogram = samples.get("histogram")
    if isinstance(histogram, dict):
        parts.append(histogram_svg(histogram, str(name)) + "\n")
        outside = [f"{histogram[key]} {label}" for key, label in (("below", "below the first edge"),
                   ("above", "above the last edge"), ("nan", "NaN")) if histogram.get(key)]
        if outside:
            parts.append(f'<p class="note">not in the bins: {", ".join(outside)}</p>\n')
    worst = [example for example in _sequence(samples.get("worst")) if isinstance(example, dict)]
    if worst:
        rows = "\n".join(
            f'<tr><td class="text" dir="auto">{shown_text(example.get("id", ""))}</td>'
            f'<td class="num">{_number(example.get("score"))}</td>'
            f'<td class="text side" dir="auto">{shown_text(example.get("prediction", ""))}</td>'
            f'<td class="text side">{_references(example.get("references"))}</td></tr>'
            for example in worst
        )
        parts.append(
            f"<h3>Worst {len(worst)} examples</h3>\n"
            f'<table class="worst"><thead><tr><th>id</th><th>{_escape(name)}</th><th>prediction</th>'
            f"<th>references</th></tr></thead>\n<tbody>\n{rows}\n</tbody></table>\n"
        )
    return "".join(parts)


def _references(references: Any) -> str:
    if not isinstance(references, list):
        references = [references]
    return "".join(f'<div class="ref" dir="auto">{shown_text(reference)}</div>' for reference in references)

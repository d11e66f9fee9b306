"""``gpumetrics evaluate CONFIG.yaml``, ``gpumetrics report REPORT.json`` and ``gpumetrics list``: configs →
registry → metrics → report (a table, JSON, HTML)."""

from __future__ import annotations

import argparse
import json

from gpumetrics.cli.options import console, positive_int


def _evaluate(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from gpumetrics.tasks.config import load_config
    from gpumetrics.tasks.report import results_table, write_json_report
    from gpumetrics.tasks.runner import evaluate

    out, err = console(), Console(stderr=True)
    config = load_config(args.config)
    show = args.progress == "on" or (args.progress == "auto" and err.is_terminal)
    batch_size = args.batch_size or config.batch_size
    bars = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=err, transient=True, disable=not show,
    )
    ids: dict[str, int] = {}

    def progress(task: str, done: int, total: int) -> None:
        # Only tasks that take more than one batch get a bar ("long runs"); --progress on shows every task.
        if task not in ids:
            if args.progress == "auto" and total <= batch_size:
                return
            ids[task] = bars.add_task(task, total=total)
        bars.update(ids[task], completed=done)

    with bars:
        report = evaluate(config, device=args.device, batch_size=args.batch_size, progress=progress)
    out.print(results_table(report))
    if args.output:
        path = write_json_report(report, args.output)
        out.print(f"report written to {path}")
    if args.html:
        from gpumetrics.tasks.html import write_html_report

        path = write_html_report(report.to_dict(), args.html)
        out.print(f"HTML report written to {path}")
    return 0


def _report(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gpumetrics.tasks.html import write_html_report

    try:
        report = json.loads(Path(args.report).read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{args.report}: not a JSON file ({err})") from None
    if not isinstance(report, dict) or not isinstance(report.get("tasks"), list):
        raise ValueError(f"{args.report}: not a gpumetrics JSON report (expected an object with a 'tasks' list)")
    path = write_html_report(report, args.html)
    console().print(f"HTML report written to {path}")
    return 0


def _list(args: argparse.Namespace) -> int:
    from gpumetrics.tasks.report import registry_listing, registry_tables

    if args.json:
        print(json.dumps(registry_listing(), ensure_ascii=False, indent=2))
        return 0
    out = console()
    for table in registry_tables():
        out.print(table)
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """The ``evaluate``, ``report`` and ``list`` subcommands."""
    evaluate = subparsers.add_parser(
        "evaluate",
        help="score prediction files against reference files as described by a YAML config",
        description="Join predictions and references by id for every task of CONFIG, score them, print a table.",
    )
    evaluate.add_argument("config", help="YAML config naming tasks, metrics, options and data files")
    evaluate.add_argument("--output", "-o", help="write the JSON report (scores, signatures, counts, timing) here")
    evaluate.add_argument(
        "--device", help="cpu (default), cuda, cuda:N, mps … (must exist here); overrides the config's `device`"
    )
    evaluate.add_argument("--batch-size", type=positive_int, help="samples per metric update (default: config or 1024)")
    evaluate.add_argument(
        "--progress", choices=("auto", "on", "off"), default="auto",
        help="progress bars on stderr: auto = on a terminal, for tasks longer than one batch",
    )
    evaluate.add_argument("--html", help="write a self-contained HTML page of the report here")
    evaluate.set_defaults(handler=_evaluate)

    report = subparsers.add_parser(
        "report", help="render a saved JSON report as HTML",
        description="Render the JSON report of `gpumetrics evaluate --output` as one self-contained HTML page.",
    )
    report.add_argument("report", help="a JSON report written by `gpumetrics evaluate --output`")
    report.add_argument("--html", required=True, help="the HTML page to write")
    report.set_defaults(handler=_report)

    listing = subparsers.add_parser("list", help="list the task metrics and suites configs can name")
    listing.add_argument("--json", action="store_true", help="print machine-readable JSON")
    listing.set_defaults(handler=_list)

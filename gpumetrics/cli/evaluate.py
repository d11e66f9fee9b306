"""``gpumetrics evaluate CONFIG.yaml`` and ``gpumetrics list``: configs → registry → metrics → report."""

from __future__ import annotations

import argparse
import json

from gpumetrics.cli.options import console, positive_int
from gpumetrics.cli.progress import add_progress_argument, progress_bars


def _evaluate(args: argparse.Namespace) -> int:
    from gpumetrics.tasks.config import load_config
    from gpumetrics.tasks.report import results_table, write_json_report
    from gpumetrics.tasks.runner import evaluate

    out = console()
    config = load_config(args.config)
    with progress_bars(args.progress) as progress:
        report = evaluate(config, device=args.device, batch_size=args.batch_size, progress=progress)
    out.print(results_table(report))
    if args.output:
        path = write_json_report(report, args.output)
        out.print(f"report written to {path}")
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
    """The ``evaluate`` and ``list`` subcommands."""
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
    add_progress_argument(evaluate)
    evaluate.set_defaults(handler=_evaluate)

    listing = subparsers.add_parser("list", help="list the task metrics and suites configs can name")
    listing.add_argument("--json", action="store_true", help="print machine-readable JSON")
    listing.set_defaults(handler=_list)

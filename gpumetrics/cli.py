"""The ``gpumetrics`` command: a thin layer over ``gpumetrics.tasks`` (config → registry → metrics → report).

Subcommands::

    gpumetrics evaluate CONFIG.yaml [--output report.json] [--device cpu|cuda] [--batch-size N]
    gpumetrics list [--json]

Adding a subcommand (hook for other families, e.g. ``fid`` / ``clip-score``): write a module with

.. code-block:: python

    def add_parser(subparsers):            # subparsers: argparse._SubParsersAction
        parser = subparsers.add_parser("fid", help="Fréchet inception distance of two image folders")
        parser.add_argument(...)
        parser.set_defaults(handler=run)   # run(args: argparse.Namespace) -> int (exit code)

and add its dotted name to :data:`COMMAND_MODULES`. Keep heavy imports (models, torchvision) inside the handler so
that ``gpumetrics --help`` stays fast. A handler may raise ``ValueError`` or ``OSError`` for user errors: ``main``
prints the message on one line and exits with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Callable, Optional, Sequence

#: Modules contributing subcommands through ``add_parser(subparsers)``, imported in order when the parser is built.
COMMAND_MODULES: list[str] = [
    "gpumetrics.image.cli_commands",  # fid, clip-score
]


def _console():
    from rich.console import Console

    console = Console()
    if not console.is_terminal:  # files and pipes: wide enough that signatures are not folded (rich defaults to 80)
        console.width = max(console.width, 132)
    return console


def _evaluate(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from gpumetrics.tasks.config import load_config
    from gpumetrics.tasks.report import results_table, write_json_report
    from gpumetrics.tasks.runner import evaluate

    out, err = _console(), Console(stderr=True)
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
    return 0


def _list(args: argparse.Namespace) -> int:
    from gpumetrics.tasks.report import registry_listing, registry_tables

    if args.json:
        print(json.dumps(registry_listing(), ensure_ascii=False, indent=2))
        return 0
    console = _console()
    for table in registry_tables():
        console.print(table)
    return 0


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (shared by every subcommand)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value


def add_builtin_parsers(subparsers: argparse._SubParsersAction) -> None:
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
    evaluate.add_argument(
        "--progress", choices=("auto", "on", "off"), default="auto",
        help="progress bars on stderr: auto = on a terminal, for tasks longer than one batch",
    )
    evaluate.set_defaults(handler=_evaluate)

    listing = subparsers.add_parser("list", help="list the task metrics and suites configs can name")
    listing.add_argument("--json", action="store_true", help="print machine-readable JSON")
    listing.set_defaults(handler=_list)


def build_parser(command_modules: Optional[Sequence[str]] = None) -> argparse.ArgumentParser:
    """The argument parser: built-in subcommands, then each module's ``add_parser(subparsers)``."""
    from gpumetrics.core.signature import library_version

    parser = argparse.ArgumentParser(prog="gpumetrics", description="Evaluation metrics with reference-tool parity.")
    parser.add_argument("--version", action="version", version=f"gpumetrics {library_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    add_builtin_parsers(subparsers)
    for name in COMMAND_MODULES if command_modules is None else command_modules:
        add_parser: Callable = getattr(importlib.import_module(name), "add_parser")
        add_parser(subparsers)
    return parser


def _user_errors() -> tuple[type[BaseException], ...]:
    """Exceptions that mean bad input, not a bug: printed as one line, exit status 2.

    ``ValueError`` covers our ConfigError / DataError / TaskError and metric argument errors (and JSON decode
    errors); ``OSError`` unreadable, missing or unwritable files and a full disk (``PIL.UnidentifiedImageError`` is
    one); ``RecursionError`` input nested too deeply to parse; ``yaml.YAMLError`` a malformed config. Anything else
    (``TypeError``, ``KeyError`` …) is a bug in gpumetrics and keeps its traceback.
    """
    errors: list[type[BaseException]] = [ValueError, OSError, RecursionError]
    try:
        import yaml

        errors.append(yaml.YAMLError)
    except ImportError:  # pragma: no cover - pyyaml is a dependency
        pass
    return tuple(errors)


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    if isinstance(err, RecursionError):
        text = f"input nested too deeply to read ({text})"
    return text


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``gpumetrics`` console script and ``python -m gpumetrics``; returns the exit code.

    A user error (see :func:`_user_errors`) prints exactly one line ``gpumetrics <command>: error: …`` on stderr and
    returns 2; Ctrl-C prints one line and returns 130. Reports are written atomically, so neither leaves a broken
    report behind: a previous report stays as it was.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except BrokenPipeError:  # `gpumetrics list --json | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print(f"gpumetrics {args.command}: interrupted", file=sys.stderr)
        return 130
    except _user_errors() as err:
        print(f"gpumetrics {args.command}: error: {_one_line(err)}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""Progress bars on stderr for the subcommands (``--progress auto|on|off``): one transient rich bar per phase."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any, Callable, Iterator, Optional

PROGRESS_MODES = ("auto", "on", "off")


def add_progress_argument(parser: argparse.ArgumentParser) -> None:
    """``--progress auto|on|off`` (default auto)."""
    parser.add_argument(
        "--progress", choices=PROGRESS_MODES, default="auto",
        help="progress bars on stderr: auto = on a terminal, for phases longer than one batch",
    )


@contextlib.contextmanager
def progress_bars(mode: str, console: Optional[Any] = None) -> Iterator[Callable[[str, int, int], None]]:
    """Yield ``progress(phase, done, total)`` — call it once with ``done=0``, then after each batch — that draws
    one bar per phase on ``console`` (default: a rich console on stderr), removed when the block ends.

    ``"on"``: every phase; ``"off"``: none; ``"auto"``: only on a terminal, and only for phases longer than one
    batch (a phase shows from its second report on, unless that report already finishes it), so pipes and logs stay
    quiet and short phases do not flicker.
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    err = console if console is not None else Console(stderr=True)
    show = mode == "on" or (mode == "auto" and err.is_terminal)
    bars = Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        console=err, transient=True, disable=not show, redirect_stdout=False,  # stdout carries results (--json)
    )
    ids: dict[str, int] = {}

    def progress(phase: str, done: int, total: int) -> None:
        if phase not in ids:
            if mode == "auto" and (done == 0 or done >= total):
                return
            ids[phase] = bars.add_task(phase, total=total)
        bars.update(ids[phase], completed=done, total=total)

    with bars:
        yield progress

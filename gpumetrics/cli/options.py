"""Helpers shared by the subcommands: argument types and the console."""

from __future__ import annotations

import argparse


def console(stderr: bool = False):
    """A rich console on stdout (``stderr=True``: on stderr, e.g. when stdout carries the JSON report); files and
    pipes get a width at which signatures are not folded."""
    from rich.console import Console

    out = Console(stderr=stderr)
    if not out.is_terminal:  # rich defaults to 80 columns off a terminal
        out.width = max(out.width, 132)
    return out


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (shared by every subcommand)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {value}")
    return value

"""Helpers shared by the subcommands: argument types and the console."""

from __future__ import annotations

import argparse
from typing import Optional


def console(stderr: bool = False):
    """A rich console on stdout (``stderr=True``: on stderr, e.g. when stdout carries the JSON report); files and
    pipes get a width at which signatures are not folded."""
    from rich.console import Console

    out = Console(stderr=stderr)
    if not out.is_terminal:  # rich defaults to 80 columns off a terminal
        out.width = max(out.width, 132)
    return out


def _int_at_least(minimum: int, what: str, maximum: Optional[int] = None):
    """argparse type: an integer ``>= minimum`` (and ``<= maximum`` when given); ``what`` names it in the error."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            raise argparse.ArgumentTypeError(f"expected {what}, got {value}")
        return value

    parse.__name__ = parse.__qualname__ = what.replace(" ", "_")  # argparse names the type in some errors
    return parse


#: argparse types shared by every subcommand
positive_int = _int_at_least(1, "a positive integer")
non_negative_int = _int_at_least(0, "an integer >= 0")
#: decimals of a printed score: past float64's 17 significant digits they are noise, and a huge count ("precision too
#: big", or gigabytes of zeros) is no score
decimals = _int_at_least(0, "an integer from 0 to 100", maximum=100)

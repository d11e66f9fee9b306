"""The ``gpumetrics`` command: the parser, its subcommand modules (imported statically) and the error boundary.

A subcommand module has ``add_parser(subparsers)``, which adds its parsers and sets ``handler=run`` with
``run(args: argparse.Namespace) -> int`` (the exit code), and ``result_on_stdout=True`` where the command prints its
result (``score``, ``list``, ``fid``, ``kid``, ``clip-score``: with standard output closed they are refused before
any work, not run to print nothing and exit 0); it keeps heavy imports (models, torchvision, rich) inside
its handlers so that ``gpumetrics --help`` stays fast. A handler may raise ``ValueError`` or ``OSError`` for user
errors: :func:`main` prints the message on one line and exits with status 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

from gpumetrics.cli import evaluate, image, score

#: the subcommand modules, in the order their commands appear in ``--help``
COMMANDS = (evaluate, score, image)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    from gpumetrics.core.signature import library_version

    parser = argparse.ArgumentParser(prog="gpumetrics", description="Evaluation metrics with reference-tool parity.")
    parser.add_argument("--version", action="version", version=f"gpumetrics {library_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in COMMANDS:
        module.add_parser(subparsers)
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


#: characters of a user error's line; the middle of a longer one (a hostile file's megabyte id or key quoted whole)
#: is left out, so that its start (file, line, what) and its end (the other file, the hint) are printed
MAX_ERROR_LINE = 2000


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    if isinstance(err, RecursionError):
        text = f"input nested too deeply to read ({text})"
    if len(text) > MAX_ERROR_LINE:
        head, tail = MAX_ERROR_LINE * 3 // 5, MAX_ERROR_LINE // 5
        text = f"{text[:head]} … ({len(text) - head - tail:,} characters left out) … {text[-tail:]}"
    return text


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``gpumetrics`` console script and ``python -m gpumetrics``; returns the exit code.

    A user error (see :func:`_user_errors`) prints exactly one line ``gpumetrics <command>: error: …`` on stderr and
    returns 2; Ctrl-C prints one line and returns 130. Reports are written atomically, so neither leaves a broken
    report behind: a previous report stays as it was.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = ["gpumetrics", *(sys.argv[1:] if argv is None else map(str, argv))]  # recorded in reports
    try:
        if getattr(args, "result_on_stdout", False) and sys.stdout is None:  # started with `>&-`
            raise ValueError("standard output is closed, and this command prints its result there: redirect it to a "
                             "file (or /dev/null)")
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

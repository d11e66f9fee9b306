"""``gpumetrics score -m METRIC -r REFS.txt [-r REFS2.txt …] [HYPS.txt]``: the command line a sacrebleu user expects.

Line-aligned plain-text files, one sample per line (UTF-8; lines end at ``\\n`` only and lose their trailing
whitespace, as ``sacrebleu`` reads them); the hypotheses come from stdin when no file is given; several ``-r`` give
several references per sample. Any task metric of the catalog (``gpumetrics list``) with ``--opt key=value``
(values parsed as YAML scalars); for a metric whose records are not text (labels, boxes, rankings) each line is read
as a JSON value when it is one (``3``, ``[1, 2]``), else as the text. Prints the score alone (a dict result: its primary
key, or ``key=value`` pairs for a metric without one), or ``--json``: one object with the score, signature, n, options
and the dict's keys.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Optional, Sequence

from gpumetrics.cli.options import decimals


STDIN = "-"


def read_lines(path: str) -> list[str]:
    """The samples of a plain-text file (``-``: stdin), one per line: UTF-8, split at ``\\n`` only, each line's trailing
    whitespace removed, a last line without ``\\n`` counts — sacrebleu's reading, a leading byte-order mark included:
    it stays at the start of the first line, as in ``sacrebleu`` (``score`` warns about it and about NULs:
    :func:`_warn_about_encodings`).

    Raises:
        ValueError: a file that is not UTF-8 (naming it and the line), a directory, a socket, a device other than a
            terminal or ``/dev/null`` (``/dev/zero`` would never end).
        OSError: a missing or unreadable file.

    Example:
        >>> import tempfile, os
        >>> name = os.path.join(tempfile.mkdtemp(), "h.txt")
        >>> _ = open(name, "w", encoding="utf-8").write("a b  \\nc\\r\\n\\nd")
        >>> read_lines(name)
        ['a b', 'c', '', 'd']
    """
    from gpumetrics.core.files import check_input_stream, open_input

    if path == STDIN:
        stdin, name = _stdin().buffer, "stdin"
        try:
            descriptor = stdin.fileno()
        except (AttributeError, OSError, ValueError):  # not a file descriptor (a test's stand-in)
            descriptor = None
        if descriptor is not None:
            check_input_stream(descriptor, name)  # `< /dev/zero` would never end
        data = stdin.read()
    else:
        if Path(path).is_dir():
            raise ValueError(f"{path} is a directory, not a text file of one sample per line")
        with open_input(path) as handle:  # a device such as /dev/zero is refused, not read into memory
            data, name = handle.read(), path
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise ValueError(f"{name}:{line}: not UTF-8 text ({err.reason} at byte {err.start})") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line.rstrip() for line in lines]


def _stdin() -> Any:
    """``sys.stdin``, which is ``None`` when the command starts with its standard input closed (``<&-``)."""
    if sys.stdin is None:
        raise ValueError("stdin is closed, so there are no lines to read from it (`-`, or no hypotheses file): give "
                         "the file, or pipe the lines in")
    return sys.stdin


BOM = "\ufeff"  # a UTF-8 byte-order mark, as Windows editors write one at the start of a file


def parse_opts(pairs: Sequence[str]) -> dict[str, Any]:
    """``["key=value", …]`` → options; each value a YAML scalar (``3`` → int, ``true`` → bool, ``null`` → None,
    ``[a, b]`` a list), else the text itself.

    Example:
        >>> parse_opts(["tokenize=intl", "lowercase=true", "n_gram=3", "weights=[0.5, 0.5]"])
        {'tokenize': 'intl', 'lowercase': True, 'n_gram': 3, 'weights': [0.5, 0.5]}
    """
    import yaml

    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ValueError(f"--opt takes key=value, got {pair!r}")
        if key in options:
            raise ValueError(f"--opt {key} is given twice")
        try:
            options[key] = yaml.safe_load(value) if value.strip() else value
        except yaml.YAMLError:
            options[key] = value
    return options


def _check_option_names(entry: Any, options: dict) -> None:
    if entry.options is None:
        return
    unknown = sorted(set(options) - set(entry.options))
    if unknown:
        known = ", ".join(entry.options) or "none"
        raise ValueError(f"metric {entry.name!r} has no option {', '.join(map(repr, unknown))}; its options: {known} "
                         "(`gpumetrics list` shows their defaults)")


def score_lines(metric: str, hypotheses: list[str], references: list[list[str]], options: Optional[dict] = None,
                device: Optional[str] = None) -> dict[str, Any]:
    """Score line-aligned samples with a catalog metric, as ``gpumetrics score`` does (one ``update`` over all of
    them, so a corpus metric sees the whole corpus in one call).

    Args:
        metric: a task metric name (``gpumetrics list``).
        hypotheses: ``N`` predicted texts.
        references: ``N`` lists of reference texts (one per ``-r`` file).
        options: the metric's options (``--opt``).
        device: where the statistics accumulate (default: cpu).

    Returns:
        ``{"metric", "score", "signature", "n", "options", "details"}``; ``details`` holds every key of a dict result.
    """
    from gpumetrics.core import check_device
    from gpumetrics.harness.registry import get_metric
    from gpumetrics.harness.runner import primary_score

    entry = get_metric(metric)
    if not _scores_text(entry):  # records that are not text: a line is a JSON value (1, [..])
        hypotheses = [_json_or_text(line) for line in hypotheses]
        references = [[_json_or_text(line) for line in refs] for refs in references]
    options = dict(options or {})
    _check_option_names(entry, options)
    if options.get("reduction") == "none":
        raise ValueError("--opt reduction=none gives per-sample scores, not one score: use mean or sum")
    torch_device = check_device(device, "--device")
    try:
        entry.check(options)  # what a config's task is checked for (precision's num_classes, f1's average …)
        built = entry.build(options)
    except (TypeError, FileNotFoundError) as err:
        raise ValueError(f"metric {metric!r}: {err}") from None
    built = built.to(torch_device)
    try:
        built.update(*entry.update_args(hypotheses, references))
    except TypeError as err:  # e.g. a label metric given text lines: the input, not a bug
        raise ValueError(f"metric {metric!r} cannot score these lines: {err}") from None
    score, details = primary_score(built.compute(), entry.primary, metric)
    signature = built.signature() if hasattr(built, "signature") else type(built).__name__
    return {"metric": metric, "score": score, "signature": signature, "n": len(hypotheses), "options": options,
            **({"details": details} if details else {})}


def _json_or_text(line: str) -> Any:
    """A line of a metric whose records are not text (labels, boxes, rankings): its JSON value, else the line."""
    try:
        return json.loads(line.removeprefix(BOM))  # JSON has no byte-order mark: a first line's is dropped
    except ValueError:
        return line


def _scores_text(entry: Any) -> bool:
    """Whether a catalog metric's records are text (else each line is read as a JSON value)."""
    return isinstance(entry.empty_prediction, str)


def _warn_about_encodings(metric: str, files: list[tuple[str, str, list[str]]]) -> None:
    """A stderr line per file that sacrebleu would misread as silently as ``score`` reads it (the same way):

    * a first line that starts with a byte-order mark, for metrics that score text (sacrebleu keeps the mark as part
      of the first word, and so does ``score``; JSON-valued lines drop it before parsing);
    * NUL characters in a line: a UTF-16 file without a byte-order mark is valid UTF-8 whose every other character is
      NUL (with the mark it is refused as not UTF-8), and text files hold no NUL otherwise.
    """
    from gpumetrics.harness.registry import get_metric

    text_metric = _scores_text(get_metric(metric))
    for role, path, lines in files:
        name = "stdin" if path == STDIN else path
        if text_metric and lines and lines[0].startswith(BOM):
            print(f"gpumetrics score: {role} {name} starts with a UTF-8 byte-order mark; it is kept as part of the "
                  "first line's first word, as sacrebleu keeps it (save the file without it, e.g. UTF-8 rather "
                  "than UTF-8-BOM, if that word should match)", file=sys.stderr)
        line = next((number for number, text in enumerate(lines, 1) if "\0" in text), None)
        if line is not None:
            print(f"WARNING: gpumetrics score: {role} {name} holds NUL characters (line {line} first): UTF-16 text "
                  "without a byte-order mark? It is read as UTF-8, as sacrebleu reads it, so its lines are not the "
                  "text you see (save it as UTF-8)", file=sys.stderr)


def _format(value: float, width: int) -> str:
    return f"{value:.{width}f}"


def _score(args: argparse.Namespace) -> int:
    if args.hypotheses == STDIN and _stdin().isatty():
        print("gpumetrics score: reading hypotheses from stdin (give a file, or pipe them in) …", file=sys.stderr)
    options = parse_opts(args.opt)
    hypotheses = read_lines(args.hypotheses)
    reference_files = [(path, read_lines(path)) for path in args.references]
    # before the line counts: a UTF-16 file's odd count is what its warning explains
    _warn_about_encodings(args.metric, [("hypotheses", args.hypotheses, hypotheses),
                                        *(("references", path, lines) for path, lines in reference_files)])
    if any(len(lines) != len(hypotheses) for _, lines in reference_files):
        listed = ", ".join([f"hypotheses {'stdin' if args.hypotheses == STDIN else args.hypotheses}: {len(hypotheses)}",
                            *(f"references {path}: {len(lines)}" for path, lines in reference_files)])
        raise ValueError("the files must be line-aligned (one sample per line) but have different line counts: "
                         f"{listed}")
    references = [list(refs) for refs in zip(*(lines for _, lines in reference_files))] if hypotheses else []
    if not hypotheses:  # the score of no sample is the metric's defined empty value: say so, as `evaluate` does
        name = "stdin" if args.hypotheses == STDIN else args.hypotheses
        print(f"WARNING: gpumetrics score: {name} holds no line: the score below is {args.metric}'s value for zero "
              "samples", file=sys.stderr)
    result = score_lines(args.metric, hypotheses, references, options, args.device)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0
    from gpumetrics.harness.registry import get_metric

    details = result.get("details")
    if details and get_metric(args.metric).primary is None:
        print(" ".join(f"{key}={_format(value, args.width) if isinstance(value, float) else value}"
                       for key, value in details.items()))
    else:
        print(_format(result["score"], args.width))
    return 0


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """The ``score`` subcommand."""
    score = subparsers.add_parser(
        "score",
        help="score a plain-text hypotheses file against reference files, one sample per line (sacrebleu-style)",
        description="Score line-aligned plain-text files (UTF-8, one sample per line, trailing whitespace removed as "
                    "sacrebleu does) with any task metric of `gpumetrics list`. Prints the score alone, or --json.",
        epilog="examples: gpumetrics score -m bleu -r refs.txt hyps.txt · gpumetrics score -m bleu -r r1.txt -r r2.txt "
               "< hyps.txt · gpumetrics score -m cer -r refs.txt hyps.txt · gpumetrics score -m rouge --opt "
               "use_stemmer=true -r refs.txt hyps.txt --json",
    )
    score.add_argument("hypotheses", nargs="?", default=STDIN, help="the hypotheses file (default: stdin)")
    score.add_argument("-m", "--metric", required=True, help="a task metric of `gpumetrics list` (bleu, cer, rouge, …)")
    score.add_argument("-r", "--references", action="append", required=True, metavar="FILE",
                       help="a references file, line-aligned with the hypotheses; repeat for several references")
    score.add_argument("--opt", action="append", default=[], metavar="KEY=VALUE",
                       help="a metric option (repeatable); the value is a YAML scalar: 3, 0.5, true, null, [a, b]")
    score.add_argument("--json", action="store_true",
                       help="print one JSON object: metric, score, signature, n, options (and a dict result's keys)")
    score.add_argument("-w", "--width", type=decimals, default=4,
                       help="decimals of the printed score, 0 to 100 (default 4)")
    score.add_argument("--device", help="cpu (default), cuda, cuda:N … (must exist here)")
    score.set_defaults(handler=_score, result_on_stdout=True)

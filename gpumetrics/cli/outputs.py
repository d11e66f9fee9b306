"""Output paths, checked before anything is read or scored (issue 28 item 8).

A report path that cannot be written fails at once, with one line naming the option, instead of after the whole
run: an existing directory, a report that would be its own checkpoint folder, a parent that is a file, a directory
(or file system) that refuses new files. A missing parent is fine — it is created when the report is written.
``-`` (where an option allows it) means standard output.
"""

from __future__ import annotations

import errno
import os
import sys
import tempfile
from pathlib import Path
from typing import Iterable, Optional

STDOUT = "-"


def _first_existing(path: Path) -> Path:
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            return candidate
    return Path(".")


def check_output(value: Optional[str], option: str, *, stdout_ok: bool = False) -> Optional[Path]:
    """Check that ``value`` (an option's output file) can be written; ``None`` for no value or ``-``.

    Raises:
        ValueError: naming ``option`` and the path: a directory; ``-`` where it is not allowed or stdout is closed; a
            loop of symbolic links; a parent that is not a directory; a directory in which no file can be created
            (read-only, a read-only file system); an existing file without write permission.

    Example:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> check_output(folder + "/new/report.json", "--output").name
        'report.json'
        >>> try:
        ...     check_output(folder, "--output")
        ... except ValueError as err:
        ...     print(str(err).endswith("is a directory: give a file name"))
        True
    """
    if value is None:
        return None
    if value == STDOUT:
        if not stdout_ok:
            raise ValueError(f"{option} - (standard output) is not supported here: give a file name")
        if sys.stdout is None:  # started with stdout closed (`>&-`): print() would drop the report without a word
            raise ValueError(f"{option} - writes to standard output, which is closed: give a file name")
        return None
    path = Path(value)
    try:
        os.stat(path)
    except OSError as err:  # is_dir() and exists() say False for a loop, which the write then meets after the run
        if err.errno == errno.ELOOP:
            raise ValueError(f"{option} {value}: a loop of symbolic links (no file can be written there)") from None
    if path.is_dir():
        raise ValueError(f"{option} {value} is a directory: give a file name")
    existing = _first_existing(path.parent)
    if not existing.is_dir():
        raise ValueError(f"{option} {value}: {existing} is not a directory")
    if existing == path.parent:  # the folder is there: try to create a file in it, as the report's writer will
        try:
            handle, probe = tempfile.mkstemp(dir=existing, prefix=f".{path.name}.", suffix=".probe")
        except OSError as err:
            raise ValueError(f"{option} {value}: cannot write in {existing} ({err.strerror or err})") from None
        os.close(handle)
        os.unlink(probe)
    elif not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"{option} {value}: cannot create folders in {existing} (permission denied)")
    if path.exists() and not path.is_file() and not path.is_char_device() and not path.is_fifo():
        raise ValueError(f"{option} {value} is not a regular file")
    if path.is_file() and not os.access(path, os.W_OK):
        raise ValueError(f"{option} {value}: permission denied")
    return path


def check_not_inputs(outputs: Iterable[tuple[str, Optional[str]]],
                     inputs: Iterable[tuple[str, Optional[Path]]]) -> None:
    """Refuse an output that is one of the command's input files (``-o config.yaml``, ``--html predictions.jsonl``,
    ``report r.json --html r.json``): the write would replace the input with the report. Symbolic and hard links to
    an input count as the input.

    Args:
        outputs: ``(option, value)`` pairs; ``None`` and ``-`` are skipped.
        inputs: ``(what, path)`` pairs naming the inputs (``"the config"``, ``"task 'QA' predictions"``).

    Raises:
        ValueError: naming the option, the path and the input it would overwrite.
    """
    existing = [(what, path) for what, path in inputs if path is not None and os.path.isfile(path)]
    for option, value in outputs:
        if value in (None, STDOUT) or not os.path.isfile(value):  # a new file, a device or a FIFO replaces nothing
            continue
        for what, path in existing:
            try:
                same = os.path.samefile(value, path)
            except OSError:
                continue
            if same:
                raise ValueError(f"{option} {value} is {what} ({path}): writing there would replace an input; "
                                 "give another file name")


def default_checkpoint_dir(output: Optional[str]) -> Optional[Path]:
    """``REPORT.checkpoint/`` beside the report; ``None`` without a report file (no ``--output`` or ``-o -``)."""
    if output is None or output == STDOUT:
        return None
    return Path(output).with_suffix(".checkpoint")


def check_evaluate_outputs(output: Optional[str], html: Optional[str], checkpoint_dir: Optional[str],
                           no_checkpoint: bool) -> None:
    """Every output of ``gpumetrics evaluate``, checked before the config's data is read."""
    check_output(output, "--output", stdout_ok=True)
    check_output(html, "--html")
    if output not in (None, STDOUT) and html is not None and Path(output).resolve() == Path(html).resolve():
        raise ValueError(f"--output and --html name the same file {output}")
    if no_checkpoint:
        return
    folder = Path(checkpoint_dir) if checkpoint_dir is not None else default_checkpoint_dir(output)
    if folder is None:
        return
    option = "--checkpoint-dir" if checkpoint_dir is not None else "--output"
    for name, value in (("--output", output), ("--html", html)):
        if value not in (None, STDOUT) and Path(value).resolve() == folder.resolve():
            hint = ("" if checkpoint_dir is not None
                    else " (its checkpoint folder is REPORT with the suffix .checkpoint)")
            raise ValueError(f"{name} {value} is also the checkpoint folder{hint}: rename it, or give --checkpoint-dir "
                             "or --no-checkpoint")
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{option}: the checkpoint folder {folder} exists and is not a directory")
    existing = _first_existing(folder)
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise ValueError(f"{option}: cannot create or write the checkpoint folder {folder}")

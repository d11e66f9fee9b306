"""Every Python line of the project is at most 120 characters wide (code points, not bytes): each ``*.py`` file under
``gpumetrics/``, ``tests/``, ``benchmarks/``, ``tools/``, ``examples/`` and ``testkit/``. A failure lists
``path:line (N chars)`` for the first 20 long lines and their total.

A line that truly cannot be broken (a hash, a URL, a regex whose exact text matters — split those with implicit string
concatenation where possible) may end with the marker ``# noqa: E501``; it is then not counted. Keep such lines rare.

``PENDING`` names files skipped for now; the test fails when one of them no longer exists, so the set cannot rot."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("gpumetrics", "tests", "benchmarks", "tools", "examples", "testkit")
LIMIT = 120
#: the end of a line that may be longer than ``LIMIT`` (nothing can break it)
MARKER = "# noqa: E501"
SHOWN = 20

#: repo-relative paths of files skipped for now; empty
PENDING: frozenset[str] = frozenset()


def _python_files() -> list[Path]:
    return sorted(path for folder in FOLDERS for path in (ROOT / folder).rglob("*.py"))


def _long_lines(path: Path) -> list[tuple[int, int]]:
    """``(line number, width)`` of each line of ``path`` wider than ``LIMIT`` and without the marker."""
    lines = path.read_text(encoding="utf-8").split("\n")
    return [(number, len(line)) for number, line in enumerate((line.rstrip("\r") for line in lines), 1)
            if len(line) > LIMIT and not line.rstrip().endswith(MARKER)]


def test_no_python_line_is_longer_than_120_characters():
    files = _python_files()
    assert files, "no Python file found"
    found = [f"{relative}:{number} ({width} chars)"
             for path in files if (relative := path.relative_to(ROOT).as_posix()) not in PENDING
             for number, width in _long_lines(path)]
    assert not found, (f"{len(found)} line(s) longer than {LIMIT} characters (first {min(len(found), SHOWN)}):\n"
                       + "\n".join(found[:SHOWN]))


def test_pending_files_exist():
    missing = sorted(path for path in PENDING if not (ROOT / path).is_file())
    assert not missing, f"PENDING names files that no longer exist (drop them from the set): {missing}"
    outside = sorted(path for path in PENDING if not path.startswith(tuple(f"{folder}/" for folder in FOLDERS)))
    assert not outside, f"PENDING names files outside the checked folders: {outside}"


def test_the_check_counts_characters_and_honours_the_marker(tmp_path):
    path = tmp_path / "sample.py"
    wide = "x = '" + "ж" * (LIMIT - 6) + "'"  # LIMIT characters, about twice as many bytes
    path.write_text("\n".join([wide, wide + " ", f"{wide}  {MARKER}", "y = 1"]) + "\n", encoding="utf-8")
    assert _long_lines(path) == [(2, LIMIT + 1)]

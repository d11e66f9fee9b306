"""``python -m benchmarks.compare BEFORE.json [AFTER.json] [--device cpu] [--drop 0.9]``: ratio before → after.

Compares two ``benchmarks/results/latest.json`` files (AFTER defaults to the current one) row by row — a row is
(case, size, gpumetrics contender, anchor, device type) — and prints a markdown table with both ratios and their
quotient, the rows that dropped below ``--drop`` × their earlier ratio first. ``git show REV:benchmarks/results/
latest.json > before.json`` gives an earlier state. Exit status 1 when a row dropped, so a refactor can be checked.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from benchmarks.__main__ import RESULTS

Key = tuple[str, int, str, str, str]


def _rows(path: Path, device: str) -> dict[Key, dict[str, Any]]:
    rows = json.loads(Path(path).read_text(encoding="utf-8"))["rows"]
    return {
        (row["case"], row["size"], row["ours"], row["anchor"], row.get("device", "cpu")): row
        for row in rows
        if row.get("device", "cpu") == device and row.get("ratio")
    }


def compare(before: Path, after: Path, device: str = "cpu", drop: float = 0.9) -> tuple[str, int]:
    """``(markdown table, number of rows whose ratio fell below drop × before)`` for the rows both files hold."""
    old, new = _rows(before, device), _rows(after, device)
    keys = sorted(set(old) & set(new))
    changes = [(new[key]["ratio"] / old[key]["ratio"], key) for key in keys]
    dropped = sum(change < drop for change, _ in changes)
    lines = [
        "| case | size | gpumetrics | anchor | ratio before | ratio after | after / before |",
        "|---|---:|---|---|---:|---:|---:|",
    ]
    for change, key in sorted(changes, key=lambda item: (item[0] >= drop, item[1])):
        case, size, ours, anchor, _ = key
        flag = " ⚠" if change < drop else ""
        lines.append(
            f"| {case} | {size:,} | {ours} | {anchor} | {old[key]['ratio']:.2f}× | {new[key]['ratio']:.2f}× | "
            f"{change:.2f}{flag} |"
        )
    only = len(set(old) ^ set(new))
    if only:
        lines.append(f"\n{only} row(s) are in one file only (new or retired cases) and are not compared.")
    return "\n".join(lines), dropped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compare", description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path, nargs="?", default=RESULTS)
    parser.add_argument("--device", default="cpu", help="device type of the rows to compare (default cpu)")
    parser.add_argument("--drop", type=float, default=0.9, help="flag rows below this fraction of before (0.9)")
    args = parser.parse_args(argv)
    table, dropped = compare(args.before, args.after, args.device, args.drop)
    print(table)
    return 1 if dropped else 0


if __name__ == "__main__":
    sys.exit(main())

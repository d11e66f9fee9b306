"""The CUDA suite's outcome (``pytest -m cuda``, run by ``tools/gpu_session.sh`` on a lent GPU) in BENCHMARKS.md.

Not a timed pair of callables: :func:`record` reads the junit XML the session writes (``$OUT/cuda-suite.xml``) and
adds one entry — date, device, passed / failed / skipped / errors, seconds — to the results payload's ``cuda_suite``
list; :func:`render` gives the GPU section's lines (a bullet per entry, oldest first). ``python -m benchmarks
--record-cuda-suite XML`` records and re-renders the table without timing anything.

Counts are per test case of the XML (a case with an ``<error>`` counts as an error, else one with a ``<failure>`` as
failed, else one with a ``<skipped>`` as skipped, else passed; pytest writes a collection error as an erroring case),
so a test that failed and errored in teardown counts once. Seconds are the suites' ``time`` attributes; the date is
the first suite's ``timestamp`` (the day pytest started), else today.
"""

from __future__ import annotations

import datetime
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Optional

KEY = "cuda_suite"  # the payload's list of entries
COUNTS = ("passed", "failed", "skipped", "errors")


def read_junit(junit_path: Path) -> dict:
    """``{"passed", "failed", "skipped", "errors": int, "seconds": float, "date": "YYYY-MM-DD" | None}`` of a junit
    XML file as pytest writes it (``<testsuites><testsuite …><testcase …>``, or a bare ``<testsuite>``)."""
    root = ElementTree.parse(junit_path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    counts = dict.fromkeys(COUNTS, 0)
    for case in root.iter("testcase"):
        kinds = {child.tag for child in case}
        kind = ("errors" if "error" in kinds else "failed" if "failure" in kinds
                else "skipped" if "skipped" in kinds else "passed")
        counts[kind] += 1
    stamp = next((suite.get("timestamp") for suite in suites if suite.get("timestamp")), None)
    return {**counts, "seconds": round(sum(float(suite.get("time") or 0) for suite in suites), 1),
            "date": stamp[:10] if stamp else None}


def entry(counts: dict, device: str, date: Optional[str] = None, note: str = "") -> dict:
    """One entry of the payload's list: the counts of :func:`read_junit` (or given), on ``device`` (the GPU's name)."""
    date = date or counts.get("date") or datetime.date.today().isoformat()
    made = {"date": date, "device": device, **{k: int(counts[k]) for k in COUNTS}, "seconds": float(counts["seconds"])}
    if note:
        made["note"] = note
    return made


def add(payload: dict, new: dict) -> dict:
    """``payload`` with ``new`` in its ``cuda_suite`` list (an entry of the same date and device is replaced: a rerun
    of the same day's session), in date order."""
    kept = [old for old in payload.get(KEY, []) if (old["date"], old["device"]) != (new["date"], new["device"])]
    payload[KEY] = sorted(kept + [new], key=lambda e: (e["date"], e["device"]))
    return payload


def record(payload: dict, junit_path: Path, device: str, note: str = "") -> dict:
    """Add the outcome in the junit XML ``junit_path`` on ``device`` to ``payload`` (:func:`add`); the entry."""
    new = entry(read_junit(Path(junit_path)), device, note=note)
    add(payload, new)
    return new


def summary(one: dict) -> str:
    """``247 passed, 8 failed, 18 skipped, 0 errors in 185 s``."""
    return ", ".join(f"{one[k]:,} {k}" for k in COUNTS) + f" in {one['seconds']:,.0f} s"


def render(entries: list[dict]) -> list[str]:
    """The GPU section's lines: a heading line, then a bullet per run, oldest first (none without entries)."""
    if not entries:
        return []
    lines = ["", "CUDA suite (`pytest -m cuda` in the same call; `python -m benchmarks --record-cuda-suite` reads its "
                 "junit XML):", ""]
    for one in sorted(entries, key=lambda e: (e["date"], e["device"])):
        note = f" ({one['note']})" if one.get("note") else ""
        lines.append(f"- {one['date']}, {one['device']}: {summary(one)}{note}.")
    return lines

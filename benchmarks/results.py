"""``latest.json``: the keys of its sections, its format (and how older files read in it), and how two runs' results
merge — what the runners write and :mod:`benchmarks.render` turns into ``BENCHMARKS.md``."""

from __future__ import annotations

import torch

from benchmarks import cuda_suite

DDP_SYNC = "fid_ddp_sync"  # not a timed pair of callables: real gloo ranks, see benchmarks/ddp_sync.py
CLI_SCALE = "cli_scale"  # whole `gpumetrics evaluate` processes on 1M samples (benchmarks/cli_scale.py); --only only
CUDA_SUITE = cuda_suite.KEY  # the CUDA suite's counts per GPU session (benchmarks/cuda_suite.py); --record-cuda-suite
# latest.json layout: 1 (no "format" key) had one "machine" string and no spread, 2 one machine per device type, 3 a
# machine per row (see migrate())
FORMAT = 3


def migrate(payload: dict) -> dict:
    """``latest.json`` of any earlier format, in the current one (rows keep their numbers; missing spread stays
    missing and renders as such; a row without its own machine takes the one its file named for its device type)."""
    payload = dict(payload)
    if payload.get("format", 1) < 2:
        machine = payload.pop("machine", "unknown machine")
        payload["rows"] = [{**row, "device": torch.device(row.get("device", "cpu")).type}
                           for row in payload.get("rows", [])]
        payload["machines"] = {row["device"]: machine for row in payload["rows"]}
    machines = payload.pop("machines", {})
    for key in ("rows", "contended"):
        payload[key] = [row if "machine" in row else {**row, "machine": machines.get(row["device"], "unknown machine")}
                        for row in payload.get(key, [])]
    payload["format"] = FORMAT
    return payload


def replace_rows(old: list[dict], new: list[dict]) -> list[dict]:
    """``old`` less its rows of the (case, device type) pairs ``new`` holds, then ``new``: a run replaces only the
    rows of the cases it timed on its device."""
    replaced = {(row["case"], row["device"]) for row in new}
    return [row for row in old if (row["case"], row["device"]) not in replaced] + new


def merge_payloads(base: dict, other: dict) -> dict:
    """``other``'s rows (and contended rows) in place of ``base``'s rows of the same (case, device type); its CUDA
    suite entries added; its failures after ``base``'s, less those of cases it timed (a second GPU call times what
    the first one's budget cut); everything else (``versions``, the other sections) kept from ``base``."""
    base, other = migrate(base), migrate(other)
    merged = dict(base)
    for key in ("rows", "contended"):
        merged[key] = replace_rows(base.get(key, []), other.get(key, []))
    for entry in other.get(CUDA_SUITE, []):
        cuda_suite.add(merged, entry)
    timed = {row["case"] for row in other.get("rows", [])}
    failures = [f for f in base.get("failures", []) if f.split("[", 1)[0] not in timed] + other.get("failures", [])
    merged.pop("failures", None)
    return {**merged, "failures": failures} if failures else merged

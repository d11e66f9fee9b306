"""Several (case, size) items in one child process: the GPU suite's mode (``--one-process``; ``--suite gpu`` implies
it).

The default runs each (case, size) in a fresh process. On the lent GPU machine that start costs more than the timing:
Python, torch, the case module, a CUDA context, cuDNN's and Triton's first calls — 25–45 s a case on the H200 machine,
where most GPU rows time under 5 s of work, so 22 cases did not fit one 10-minute device call. Here one child imports
the case modules once and runs the items in order, printing each item's rows as soon as they are timed; the parent
hands them on at once (:func:`run_items`' ``on_result``), so a cut loses only the item that was running.

* A case that raises is reported and the child goes on, unless its device no longer answers (a CUDA error poisons the
  context): then the child exits and a fresh one takes the remaining items.
* An item that runs past its limit (``limit_s`` of its case, else ``case_limit``) is killed with the child's whole
  process group (its decoding workers too); a fresh child takes the remaining items.
* ``budget_s`` bounds the whole run: an item starts only with ``MIN_ITEM_S`` left, and its limit shrinks to what is
  left. Items never started are reported as cut by the budget.
* A child that dies before starting any item (an import error) fails every remaining item: nothing is retried.

Protocol (child stdout, one JSON object per line after :data:`MARK`): ``{"start": i}``, then ``{"done": i, "rows":
[...]}`` or ``{"failed": i, "error": "..."}``; other stdout lines are passed through.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import traceback
from typing import Callable, Optional

from benchmarks.registry import CASES, Case

MARK = "@@benchmarks-items@@ "
MIN_ITEM_S = 20.0  # an item is not started with less of the budget left
STARTUP_LIMIT_S = 120.0  # a child's imports before its first item (the H200 machine: ~15 s)


@dataclasses.dataclass(frozen=True)
class Item:
    """One (case, size) to time ``repeats`` times."""

    case: Case
    size: int
    repeats: int

    @property
    def label(self) -> str:
        return f"{self.case.name}[{self.size}]"


#: ``on_result(item, rows, error)``: rows of a timed item (``error`` None), or why it has none (``rows`` None)
OnResult = Callable[[Item, Optional[list], Optional[str]], None]


def run_items(items: list[Item], device: str, on_result: OnResult, *, threads: Optional[int] = None,
              case_limit: float = 150.0, budget_s: Optional[float] = None,
              command: Optional[list[str]] = None, env: Optional[dict] = None, cwd: Optional[str] = None) -> None:
    """Time ``items`` in order in one child (``python -m benchmarks --child-items``), a fresh one after a kill or a
    crash; ``on_result`` is called once per item, in order. ``command`` / ``env`` / ``cwd``: how to start a child
    (the harness passes its own; the default is this interpreter in the current directory)."""
    start = time.monotonic()
    left = (lambda: float("inf")) if budget_s is None else (lambda: budget_s - (time.monotonic() - start))
    pending = list(items)
    while pending:
        if left() < MIN_ITEM_S:
            for item in pending:
                on_result(item, None, "cut: the run's budget was spent before it started")
            return
        pending = _one_child(pending, device, on_result, threads, case_limit, left, command, env, cwd)


def _one_child(pending: list[Item], device: str, on_result: OnResult, threads: Optional[int], case_limit: float,
               left: Callable[[], float], command: Optional[list[str]], env: Optional[dict],
               cwd: Optional[str]) -> list[Item]:
    """Run ``pending`` in one child until it ends or is killed; returns the items still to run (empty: all
    reported)."""
    spec = [[item.case.name, item.case.module, item.size, item.repeats] for item in pending]
    argv = [*(command or [sys.executable, "-m", "benchmarks"]), "--child-items", json.dumps(spec), "--device", device]
    if threads:
        argv += ["--threads", str(threads)]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, env=env, cwd=cwd, start_new_session=True)
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for line in child.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    running: Optional[int] = None  # index into pending of the item the child is timing
    reported = 0  # items of pending reported so far (they are reported in order)
    since = time.monotonic()
    try:
        while True:
            limit = STARTUP_LIMIT_S if running is None else (pending[running].case.limit_s or case_limit)
            wait = min(limit - (time.monotonic() - since), left())
            try:
                line = lines.get(timeout=max(wait, 0.0))
            except queue.Empty:
                if running is None:  # stalled before its first item, or between items: the next one takes the blame
                    running = reported
                spent = time.monotonic() - since
                why = "the run's budget was spent" if left() <= 0 else f"its limit of {limit:.0f} s"
                on_result(pending[running], None, f"cut: killed after {spent:.0f} s ({why})")
                return pending[running + 1 :]
            if line is None:
                code = child.wait()
                if running is None and reported == 0:
                    for item in pending:  # nothing started: the same failure would repeat
                        on_result(item, None, f"the child exited with {code} before its first item")
                    return []
                if running is not None:
                    on_result(pending[running], None, f"the child died (exit {code}) while timing it")
                    return pending[running + 1 :]
                return pending[reported:]
            if not line.startswith(MARK):
                print(line, end="", flush=True)
                continue
            event = json.loads(line[len(MARK) :])
            if "start" in event:
                running, since = event["start"], time.monotonic()
                continue
            index = event.get("done", event.get("failed"))
            on_result(pending[index], event.get("rows"), event.get("error"))
            running, reported, since = None, index + 1, time.monotonic()
    finally:
        _stop(child)


def _stop(child: subprocess.Popen) -> None:
    """Kill the child's whole process group (workers it started included) unless it has exited."""
    if child.poll() is None:
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    child.wait()


def child_main(spec: str, device: str, run_case: Callable[[Case, int, str, int], list]) -> int:
    """The ``--child-items`` process: import the items' case modules, then time each in order (protocol above)."""
    items = json.loads(spec)
    for module in dict.fromkeys(module for _, module, _, _ in items):
        importlib.import_module(module)

    def emit(event: dict) -> None:
        print(MARK + json.dumps(event), flush=True)

    for index, (name, _, size, repeats) in enumerate(items):
        emit({"start": index})
        try:
            rows = run_case(CASES[name], size, device, repeats)
        except Exception as error:  # noqa: BLE001 - reported, and the next item still runs
            traceback.print_exc()
            emit({"failed": index, "error": f"{type(error).__name__}: {error}"[:2000]})
            if not _device_answers(device):
                return 3
            continue
        emit({"done": index, "rows": rows})
    return 0


def _device_answers(device: str) -> bool:
    """Whether a tiny kernel still runs on ``device`` (after a CUDA error the context is unusable)."""
    import torch

    try:
        return torch.ones(1, device=device).add_(1).item() == 2.0
    except Exception:  # noqa: BLE001 - any failure means a fresh process is needed
        return False

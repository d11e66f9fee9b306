"""``python -m benchmarks [--quick] [--only NAME ...] [--matrix [core|full]] [--contended] [--device cpu|cuda]
[--processes N]``.

Runs cases and updates ``benchmarks/results/latest.json`` + ``BENCHMARKS.md``. Every (case, size) runs in a fresh
``python -m benchmarks --child`` process (one case's threads, caches and allocator state never reach the next); the
child prints its rows as JSON and the parent merges them (``--processes N``: N children one after the other, pooled
by :func:`pool_processes`). Rows are keyed by (case, device type): a run replaces only
the rows of the cases it ran on its device, so a ``--device cuda`` table sits beside the CPU table. ``--matrix`` runs
the data matrix (``benchmarks/cases/matrix.py``); ``--contended`` times each selected case idle and again with
``--burners`` busy Python processes and writes its own section. ``fid_ddp_sync`` (``benchmarks/ddp_sync.py``) spawns
real gloo ranks and renders its own section.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import pkgutil
import platform
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

import torch

from benchmarks import cli_scale, cuda_suite, ddp_sync, one_process
from benchmarks.registry import CASES, GPU_SUITE_BUDGET_S, Case, gpu_suite_names
from benchmarks.render import format_timing, render_markdown
from benchmarks.results import CLI_SCALE, CUDA_SUITE, DDP_SYNC, FORMAT, merge_payloads, migrate, replace_rows
from testkit.checkout import checkout_pythonpath

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "latest.json"
TABLE = ROOT / "BENCHMARKS.md"
CHILD_MARK = "@@benchmarks-child-rows@@ "

# A busy process that exits by itself once its parent is gone (the harness killed without cleanup).
BURNER = (
    "import os, sys\n"
    "parent = int(sys.argv[1])\n"
    "while os.getppid() == parent:\n"
    "    for _ in range(100_000):\n"
    "        pass\n"
)


#: case modules that could not be imported here (a missing reference package: a GPU machine carries few), with why
UNLOADED: dict[str, str] = {}


def load_cases() -> None:
    """Import every case module; one whose reference package is missing is left out (``UNLOADED``), so the others
    still run, and the rows it wrote before are kept in the results."""
    import benchmarks.cases

    for info in pkgutil.iter_modules(benchmarks.cases.__path__):
        try:
            importlib.import_module(f"benchmarks.cases.{info.name}")
        except ImportError as error:
            UNLOADED[info.name] = str(error)
            print(f"[bench] cases/{info.name}.py not loaded: {error}", file=sys.stderr)


def _synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _timed(fn: Callable[[], Any], device: str) -> tuple[float, float, Any]:
    """Wall and CPU seconds of one call (CPU: this process's threads, all of them), and its result."""
    _synchronize(device)
    start, start_cpu = time.perf_counter(), time.process_time()
    result = fn()
    _synchronize(device)
    return time.perf_counter() - start, time.process_time() - start_cpu, result


def time_callables(
    fns: dict[str, Callable[[], Any]], device: str, repeats: int, warmup: int = 1
) -> dict[str, tuple[list[float], list[float], Any]]:
    """Wall and CPU times in seconds of each callable over ``repeats`` rounds after ``warmup`` rounds, and its first
    result (with ``warmup=0``: its first timed round's, for a case whose setup warms its callables up itself).

    Rounds interleave the callables (a, b, c, a, b, c, …) so that drift of the machine (clock boost, allocator and
    cache warm-up, a neighbour's load) falls on every contender alike instead of on whichever runs last.

    Returns:
        ``{label: (wall_times, cpu_times, first_result)}`` with ``repeats`` times each.
    """
    first = {label: fn() for label, fn in fns.items()} if warmup else {}
    for _ in range(warmup - 1):
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {label: [] for label in fns}
    cpu_times: dict[str, list[float]] = {label: [] for label in fns}
    for _ in range(repeats):
        for label, fn in fns.items():
            wall, cpu, result = _timed(fn, device)
            first.setdefault(label, result)
            times[label].append(wall)
            cpu_times[label].append(cpu)
    return {label: (times[label], cpu_times[label], first[label]) for label in fns}


def versions() -> dict[str, str]:
    from importlib import metadata

    names = ["gpumetrics", "torch", "torchmetrics", "rapidfuzz", "jiwer", "sacrebleu", "rouge-score",
             "pycocoevalcap", "pytorch-fid", "nltk", "scikit-learn", "ranx"]
    found = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return found


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def device_name(device: str) -> str:
    """The CPU model, or the GPU's name for a CUDA device."""
    return torch.cuda.get_device_name(torch.device(device)) if device.startswith("cuda") else cpu_model()


def provenance() -> dict[str, str]:
    """When and from what a run's rows were timed: the UTC ``date`` and the checkout's ``commit`` (short hash, ``+``
    when tracked files other than the results differ from it; absent outside a git checkout, e.g. a tree copied to a
    GPU machine)."""
    found = {"date": time.strftime("%Y-%m-%d", time.gmtime())}
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                  f":!{TABLE.name}", f":!{RESULTS.parent.relative_to(ROOT)}"],
                                 cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return found
    return {**found, "commit": head + ("+" if changed else "")} if head else found


def machine_description(device: str) -> str:
    host = f"{cpu_model()} ({platform.machine()}, {os.cpu_count()} cores), Python {platform.python_version()}"
    return f"{device_name(device)}, host {host}" if device.startswith("cuda") else host


def _spread(prefix: str, times: list[float], cpu_times: list[float]) -> dict[str, Any]:
    """The median wall time, its min–max and every repeat; the median CPU time (all the process's threads: above the
    wall time where threads ran in parallel, below it where the process waited — for the device, or for a core)."""
    return {f"{prefix}_s": statistics.median(times), f"{prefix}_min": min(times), f"{prefix}_max": max(times),
            f"{prefix}_times": times, f"{prefix}_cpu_s": statistics.median(cpu_times)}


def run_case(case: Case, size: int, device: str, repeats: int) -> list[dict]:
    """Time ``case`` at ``size`` in this process: one row per (our variant, anchor) with median and spread."""
    contenders = case.setup(size, device)
    timed = time_callables({**contenders.ours, **contenders.anchors}, device, repeats, case.warmup)
    first_ours = timed[next(iter(contenders.ours))][2]
    first_anchor = timed[next(iter(contenders.anchors))][2]
    if contenders.check is not None and not contenders.check(first_ours, first_anchor):
        raise AssertionError(f"{case.name}[{size}]: gpumetrics and anchor disagree: {first_ours!r} vs {first_anchor!r}")
    rows = []
    for our_label in contenders.ours:
        for anchor_label in contenders.anchors:
            ours, anchor = _spread("ours", *timed[our_label][:2]), _spread("anchor", *timed[anchor_label][:2])
            rows.append({
                "case": case.name, "size": size, "unit": case.unit, "ours": our_label, **ours,
                "anchor": anchor_label, **anchor, "ratio": anchor["anchor_s"] / ours["ours_s"], "repeats": repeats,
                "device": torch.device(device).type, "device_name": device_name(device),
                "threads": torch.get_num_threads(), "note": contenders.note,
                **({"group": case.group} if case.group != "main" else {}),
                **({"params": dict(case.params)} if case.params else {}),
                **({"goal": case.goal} if case.goal is not None else {}),
                **({"throughput_goal": contenders.throughput_goals[our_label]}
                   if our_label in contenders.throughput_goals else {}),
            })
    return rows


def run_in_child(case: Case, size: int, device: str, repeats: int, threads: Optional[int] = None) -> list[dict]:
    """:func:`run_case` in a fresh ``python -m benchmarks --child`` process (importing only ``case.module``).

    Raises:
        RuntimeError: the child failed (its traceback went to stderr) or printed no rows.
    """
    command = [sys.executable, "-m", "benchmarks", "--child", case.name, "--module", case.module, "--size", str(size),
               "--device", device, "--repeats", str(repeats)]
    if threads:
        command += ["--threads", str(threads)]
    env = dict(os.environ)
    env["PYTHONPATH"] = checkout_pythonpath()
    done = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
    marked = [line for line in done.stdout.splitlines() if line.startswith(CHILD_MARK)]
    if done.returncode != 0 or not marked:
        raise RuntimeError(f"{case.name}[{size}]: child process failed (exit {done.returncode}); see its stderr above")
    return json.loads(marked[-1][len(CHILD_MARK):])


def run_in_processes(case: Case, size: int, device: str, repeats: int, threads: Optional[int] = None,
                     processes: int = 1) -> list[dict]:
    """:func:`run_in_child` ``processes`` times, one after the other, pooled by :func:`pool_processes`."""
    runs = [run_in_child(case, size, device, repeats, threads) for _ in range(processes)]
    return runs[0] if processes == 1 else pool_processes(runs)


def pool_processes(runs: list[list[dict]]) -> list[dict]:
    """The rows of several child processes of one (case, size) as one row per (our variant, anchor).

    A shared VM may run one process at another speed than the next (the 2-core AMD VM: the same loop 1.8 or 2.9 ms
    per process); within a process both contenders ran interleaved at one speed, so each process's ratio is a fair
    one. The pooled row takes the **median of the processes' ratios** with their min–max (``ratio_min``,
    ``ratio_max``), the median of their medians as each side's time, the min–max over every repeat, and every repeat
    in ``*_times``."""
    rows = []
    for per_process in zip(*runs):
        first = per_process[0]
        row = {**first, "processes": len(per_process)}
        ratios = [r["ratio"] for r in per_process]
        row.update(ratio=statistics.median(ratios), ratio_min=min(ratios), ratio_max=max(ratios))
        for side in ("ours", "anchor"):
            row[f"{side}_s"] = statistics.median(r[f"{side}_s"] for r in per_process)
            row[f"{side}_min"] = min(r[f"{side}_min"] for r in per_process)
            row[f"{side}_max"] = max(r[f"{side}_max"] for r in per_process)
            row[f"{side}_times"] = [t for r in per_process for t in r[f"{side}_times"]]
            if all(f"{side}_cpu_s" in r for r in per_process):
                row[f"{side}_cpu_s"] = statistics.median(r[f"{side}_cpu_s"] for r in per_process)
        rows.append(row)
    return rows


@contextlib.contextmanager
def burners(count: int) -> Iterator[list[subprocess.Popen]]:
    """``count`` busy pure-Python processes for the duration of the block; always stopped on exit (and each stops by
    itself if this process dies)."""
    procs: list[subprocess.Popen] = []
    try:
        for _ in range(count):
            procs.append(subprocess.Popen([sys.executable, "-c", BURNER, str(os.getpid())], stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(0.2)  # let them reach their loop before anything is timed
        yield procs
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def contended_rows(idle: list[dict], loaded: list[dict], burner_count: int) -> list[dict]:
    """Pair the idle and loaded rows of one (case, size): times and slowdown (loaded / idle) of ours and the anchor."""
    by_pair = {(row["ours"], row["anchor"]): row for row in loaded}
    rows = []
    for row in idle:
        busy = by_pair[(row["ours"], row["anchor"])]
        rows.append({
            "case": row["case"], "size": row["size"], "unit": row["unit"], "device": row["device"],
            "device_name": row["device_name"], "machine": row.get("machine", "unknown machine"),
            **{key: row[key] for key in ("date", "commit") if key in row},
            "threads": row["threads"], "burners": burner_count,
            "ours": row["ours"], "ours_idle_s": row["ours_s"], "ours_loaded_s": busy["ours_s"],
            "ours_slowdown": busy["ours_s"] / row["ours_s"],
            "anchor": row["anchor"], "anchor_idle_s": row["anchor_s"], "anchor_loaded_s": busy["anchor_s"],
            "anchor_slowdown": busy["anchor_s"] / row["anchor_s"],
            "ours_loaded_min": busy["ours_min"], "ours_loaded_max": busy["ours_max"],
        })
    return rows


def _child(args: argparse.Namespace) -> int:
    importlib.import_module(args.module)
    rows = run_case(CASES[args.child], args.size, args.device, args.repeats)
    print(CHILD_MARK + json.dumps(rows), flush=True)
    return 0


def _record_cuda_suite(args: argparse.Namespace) -> int:
    """``--record-cuda-suite XML``: the suite's counts into ``--results`` (:func:`cuda_suite.record`), the table
    re-rendered from them; nothing is timed."""
    try:
        payload = migrate(json.loads(args.results.read_text()) if args.results.exists() else {"format": FORMAT})
        added = cuda_suite.record(payload, args.record_cuda_suite, device_name(args.device), args.cuda_suite_note)
    except (OSError, ValueError, SyntaxError) as error:  # no XML (the suite died first), a cut-off one (ParseError)
        print(f"cuda suite: not recorded ({type(error).__name__}: {error})")
        return 1
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(payload, indent=2) + "\n")
    args.table.write_text(render_markdown(payload))
    print(f"cuda suite: {added['date']}, {added['device']}: {cuda_suite.summary(added)}; wrote {args.results} and "
          f"{args.table}")
    return 0


def _merge_results(args: argparse.Namespace) -> int:
    """``--merge A.json [B.json …]``: each into ``--results`` in turn (:func:`merge_payloads`), the table
    re-rendered."""
    payload = json.loads(args.results.read_text()) if args.results.exists() else {"format": FORMAT}
    for path in args.merge:
        payload = merge_payloads(payload, json.loads(path.read_text()))
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(migrate(payload), indent=2) + "\n")
    args.table.write_text(render_markdown(payload))
    print(f"merged {', '.join(map(str, args.merge))} into {args.results}; wrote {args.table}")
    return 0


def _select(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[Case]:
    """The cases to run, in order: ``--only``'s as given, then the matrix cells and the main cases sorted by name,
    the GPU suite's in :func:`gpu_suite_names`' priority order (``--one-process`` runs them in that order)."""
    known = set(CASES) | {DDP_SYNC, CLI_SCALE}
    unknown = set(args.only or []) - known
    if unknown:
        unloaded = f" (not loaded here: {', '.join(f'{m}: {e}' for m, e in UNLOADED.items())})" if UNLOADED else ""
        parser.error(f"unknown case(s) {sorted(unknown)}; known: see --list{unloaded}")
    names = [name for name in dict.fromkeys(args.only or []) if name not in (DDP_SYNC, CLI_SCALE)]
    if args.matrix:
        names += sorted(name for name, case in CASES.items()
                        if case.group == "matrix" and (args.matrix == "full" or case.params.get("core")))
    if args.suite == "gpu":
        names += gpu_suite_names()
    if not args.only and not args.matrix and not args.suite:
        names = sorted(n for n, c in CASES.items() if c.group == "main")
    return [CASES[name] for name in dict.fromkeys(names)]


def _stop_on_sigterm(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)  # unwinds through burners()' finally


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes only (smoke run)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these cases")
    parser.add_argument("--matrix", nargs="?", const="core", choices=("core", "full"),
                        help="run the data matrix: its core cells (default) or the full product")
    parser.add_argument("--suite", choices=("gpu",), default=None,
                        help="gpu: the GPU suite (edit distance on the device, image forwards and pipelines)")
    parser.add_argument("--contended", action="store_true",
                        help="time each case idle and under load (--burners busy processes); own section")
    parser.add_argument("--burners", type=int, default=2, help="busy processes for --contended (default 2)")
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--repeats", type=int, default=None, help="override each case's repeat count")
    parser.add_argument("--processes", type=int, default=1, metavar="N",
                        help="run each (case, size) in N fresh processes, one after the other, and report the median "
                             "of their ratios with its min–max (default 1; for a VM whose speed varies by process)")
    parser.add_argument("--list", action="store_true", help="list the registered cases and exit")
    parser.add_argument("--threads", type=int, default=None, help="torch intra-op threads (default: torch's)")
    parser.add_argument("--one-process", action="store_true",
                        help="time every selected (case, size) in one child process, in the order given, saving after "
                             "each (benchmarks/one_process.py); --suite gpu implies it")
    parser.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                        help="--one-process: start no case past this many seconds, cut the running one there "
                             f"(--suite gpu: default {GPU_SUITE_BUDGET_S:.0f})")
    parser.add_argument("--case-limit", type=float, default=150.0, metavar="SECONDS",
                        help="--one-process: kill a case running longer (default 150; a case may set its own)")
    parser.add_argument("--record-cuda-suite", type=Path, metavar="JUNIT_XML",
                        help="add the CUDA suite's counts from pytest's junit XML (on --device's name) to the results "
                             "and re-render the table; times nothing")
    parser.add_argument("--cuda-suite-note", default="", help="a note for --record-cuda-suite's entry")
    parser.add_argument("--merge", type=Path, nargs="+", metavar="RESULTS_JSON",
                        help="merge other runs' latest.json (a GPU call's $OUT/latest.json) into the results, in "
                             "order: their rows replace the rows of their (case, device); times nothing")
    parser.add_argument("--results", type=Path, default=RESULTS, help=argparse.SUPPRESS)
    parser.add_argument("--table", type=Path, default=TABLE, help=argparse.SUPPRESS)
    parser.add_argument("--child", metavar="CASE", help=argparse.SUPPRESS)  # internal: one case, rows as JSON
    parser.add_argument("--child-items", metavar="JSON", help=argparse.SUPPRESS)  # internal: see one_process.py
    parser.add_argument("--module", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.processes < 1:
        parser.error(f"--processes must be at least 1; got {args.processes}")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        parser.error("--device cuda: no CUDA device is available")
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.child:
        return _child(args)
    if args.child_items:
        return one_process.child_main(args.child_items, args.device, run_case)
    if args.record_cuda_suite:
        return _record_cuda_suite(args)
    if args.merge:
        return _merge_results(args)

    load_cases()
    if args.list:
        for name, case in sorted(CASES.items()):
            if case.group == "main" or args.matrix:
                print(f"{name}: sizes {list(case.sizes)} (quick {list(case.quick_sizes)})")
        matrix = [c for c in CASES.values() if c.group == "matrix"]
        print(f"{DDP_SYNC}: world sizes {list(ddp_sync.WORLD_SIZES)}, d = 2048 (quick 256)")
        print(f"{CLI_SCALE}: sizes {list(cli_scale.SIZES)} (quick {list(cli_scale.QUICK_SIZES)}); only with --only")
        print(f"data matrix: {sum(bool(c.params.get('core')) for c in matrix)} core cells, {len(matrix)} in the full "
              "product (--list --matrix lists them)")
        return 0
    selected = _select(args, parser)
    one_process_run = args.one_process or args.suite == "gpu"
    if one_process_run and (args.contended or args.processes > 1):
        parser.error("--one-process (and --suite gpu) times each case once in a shared child: not with --contended "
                     "or --processes")
    if args.suite == "gpu" and args.budget is None:
        args.budget = GPU_SUITE_BUDGET_S

    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    run = _Run(args)
    if one_process_run:
        _run_one_process(args, selected, run)
    else:
        _run_fresh_processes(args, selected, run)

    if not args.contended and (args.only is None and not args.matrix and not args.suite
                               or DDP_SYNC in (args.only or [])):
        print(f"[bench] {DDP_SYNC} (spawns gloo ranks)", flush=True)
        run.sync_rows = ddp_sync.measure(dims=256 if args.quick else 2048)
    if CLI_SCALE in (args.only or []):
        print(f"[bench] {CLI_SCALE} (whole gpumetrics evaluate processes)", flush=True)
        run.scale_rows = cli_scale.measure(cli_scale.QUICK_SIZES if args.quick else cli_scale.SIZES)
    run.save()
    print(f"wrote {args.results} and {args.table}")
    if run.failures:
        print(f"failed: {', '.join(run.failures)}")
        return 1
    return 0


def _announce(args: argparse.Namespace, case: Case, size: int, repeats: int) -> None:
    print(f"[bench] {case.name} size={size} device={args.device} repeats={repeats}"
          + (" (idle, then loaded)" if args.contended else ""), flush=True)


def _print_rows(rows: list[dict]) -> None:
    for row in rows:
        print(f"    {row['ours']}: {format_timing(row, 'ours')}  vs  {row['anchor']}: "
              f"{format_timing(row, 'anchor')}  ratio {row['ratio']:.2f}x", flush=True)


def _run_fresh_processes(args: argparse.Namespace, selected: list[Case], run: "_Run") -> None:
    """Each (case, size) in a fresh child process (``--processes`` of them), idle and, with ``--contended``, loaded."""
    for case in selected:
        for size in case.quick_sizes if args.quick else case.sizes:
            repeats = args.repeats or case.repeats
            _announce(args, case, size, repeats)
            try:
                rows = run_in_processes(case, size, args.device, repeats, args.threads, args.processes)
                if args.contended:
                    with burners(args.burners):
                        loaded = run_in_processes(case, size, args.device, repeats, args.threads, args.processes)
            except RuntimeError as error:
                print(f"    FAILED: {error}", flush=True)
                run.failures.append(f"{case.name}[{size}]")
                continue
            rows = run.stamped(rows)
            _print_rows(rows)
            if args.contended:
                for row in contended_rows(rows, loaded, args.burners):
                    print(f"    loaded: {row['ours']} {row['ours_slowdown']:.2f}x slower, {row['anchor']} "
                          f"{row['anchor_slowdown']:.2f}x slower", flush=True)
                    run.contended.append(row)
            else:
                run.rows += rows


def _run_one_process(args: argparse.Namespace, selected: list[Case], run: "_Run") -> None:
    """Every (case, size) in one child (:mod:`benchmarks.one_process`), in order; the results are saved after each,
    so a cut or a crash loses only the item it hit."""
    items = [one_process.Item(case, size, args.repeats or case.repeats)
             for case in selected for size in (case.quick_sizes if args.quick else case.sizes)]
    print(f"[bench] {len(items)} items in one process on {args.device}"
          + (f", within {args.budget:.0f} s" if args.budget else ""), flush=True)

    def on_result(item: one_process.Item, rows: Optional[list], error: Optional[str]) -> None:
        _announce(args, item.case, item.size, item.repeats)
        if rows is None:
            print(f"    FAILED: {item.label}: {error}", flush=True)
            run.failures.append(f"{item.label} ({error})")
        else:
            rows = run.stamped(rows)
            _print_rows(rows)
            run.rows += rows
        run.save()

    env = dict(os.environ)
    env["PYTHONPATH"] = checkout_pythonpath()
    one_process.run_items(items, args.device, on_result, threads=args.threads, case_limit=args.case_limit,
                          budget_s=args.budget, env=env, cwd=str(ROOT))


class _Run:
    """What a run has timed so far, and how it is written: rows replace the previous ones of their (case, device
    type) only, so the rows of a case that failed, was cut or did not run this time stay."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.stamp = {"machine": machine_description(args.device), **provenance()}
        self.rows: list[dict] = []
        self.contended: list[dict] = []
        self.failures: list[str] = []
        self.sync_rows: Optional[list] = None
        self.scale_rows: Optional[list] = None

    def stamped(self, rows: list[dict]) -> list[dict]:
        return [{**row, **self.stamp} for row in rows]

    def save(self) -> None:
        """Merge into ``--results`` (read now, so a concurrent run of other cases is not overwritten) and render
        ``--table``."""
        args = self.args
        previous = migrate(json.loads(args.results.read_text()) if args.results.exists() else {"format": FORMAT})

        def kept(old: list[dict], new: list[dict]) -> list[dict]:
            # a case no module registers is stale, unless a module could not be loaded here (its rows stay)
            return replace_rows([row for row in old if row["case"] in CASES or UNLOADED], new)

        payload = {
            "format": FORMAT,
            "versions": versions(),
            "repeats_note": "each case's repeats (1–7, see `benchmarks/cases`) after its warm-up round (none for "
                            "fid_gpu_files, which warms up in its setup), in interleaved rounds (each contender once "
                            "per round)",
            "rows": kept(previous["rows"], self.rows),
            "contended": kept(previous["contended"], self.contended),
            DDP_SYNC: self.sync_rows if self.sync_rows is not None else previous.get(DDP_SYNC, []),
            CLI_SCALE: self.scale_rows if self.scale_rows is not None else previous.get(CLI_SCALE, []),
            **({CUDA_SUITE: previous[CUDA_SUITE]} if previous.get(CUDA_SUITE) else {}),
        }
        if self.failures:
            payload["failures"] = self.failures
        args.results.parent.mkdir(parents=True, exist_ok=True)
        args.results.write_text(json.dumps(payload, indent=2) + "\n")
        args.table.write_text(render_markdown(payload))


if __name__ == "__main__":
    raise SystemExit(main())

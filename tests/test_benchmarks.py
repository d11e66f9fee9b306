"""The benchmark harness: cases run in fresh child processes, the spread of the repeats is recorded and rendered, rows
are keyed by device, old ``latest.json`` files still render, ``--contended`` always stops its busy processes, and
every data-matrix cell checks that gpumetrics and its reference tool agree."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import benchmarks.__main__ as bench
from benchmarks.__main__ import CASES, load_cases, render_markdown, run_case, run_in_child
from benchmarks.registry import GPU_SUITE_ORDER, Contenders, register
from benchmarks.render import when_measured

TOY = "toy_sum_of_squares"
TOY_WRONG = "toy_disagreeing"
TOY_RAISES, TOY_HANGS, TOY_DIES, TOY_COLD = "toy_raises", "toy_hangs", "toy_dies", "toy_cold"


def _loop(values):
    total = 0
    for v in values:
        total += v * v
    return total


# Registered at import: a --child process imports this module (the case's module) to find them.
if TOY not in CASES:

    @register(TOY, sizes=(2_000,), quick_sizes=(300,), repeats=3)
    def _toy_case(size, device):
        values = list(range(size))
        return Contenders(
            ours={"sum of squares (generator)": lambda: sum(v * v for v in values)},
            anchors={"sum of squares (loop)": lambda: _loop(values)},
            check=lambda ours, anchor: ours == anchor,
            note=f"pid {os.getpid()}",
        )

    @register(TOY_WRONG, sizes=(10,), quick_sizes=(10,), repeats=1)
    def _toy_wrong_case(size, device):
        return Contenders(ours={"one": lambda: 1}, anchors={"two": lambda: 2}, check=lambda a, b: a == b)

    # --one-process: a case that raises, one that hangs past its limit, one that kills its process
    @register(TOY_RAISES, sizes=(1,), quick_sizes=(1,), repeats=1)
    def _toy_raises_case(size, device):
        raise ValueError("this case needs a GPU")

    @register(TOY_HANGS, sizes=(1,), quick_sizes=(1,), repeats=1, limit_s=3)
    def _toy_hangs_case(size, device):
        worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])  # as a decoding worker
        Path(os.environ["TOY_HANG_WORKER"]).write_text(str(worker.pid))
        time.sleep(120)

    @register(TOY_DIES, sizes=(1,), quick_sizes=(1,), repeats=1)
    def _toy_dies_case(size, device):
        os._exit(7)

    @register(TOY_COLD, sizes=(1,), quick_sizes=(1,), repeats=2, warmup=0)
    def _toy_cold_case(size, device):
        calls = []
        return Contenders(ours={"first call": lambda: calls.append(1) or len(calls)},
                          anchors={"also": lambda: len(calls)}, check=lambda ours, anchor: (ours, anchor) == (1, 1),
                          note=f"pid {os.getpid()}")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")  # a zombie has stopped running


def test_token_f1_case_runs_and_reports_a_ratio():
    load_cases()
    rows = run_case(CASES["token_f1_squad"], size=50, device="cpu", repeats=1)
    assert {row["anchor"] for row in rows} >= {"SQuAD v2.0 formula (Python, Counter)"}
    assert all(row["ours_s"] > 0 and row["ratio"] > 0 for row in rows)
    table = render_markdown({"machine": "test", "versions": {"torch": "x"}, "repeats_note": "1 run", "rows": rows})
    assert "| token_f1_squad | 50 samples |" in table


def test_a_case_runs_in_a_fresh_process_and_records_the_spread_of_its_repeats():
    rows = run_in_child(CASES[TOY], 500, "cpu", repeats=4)
    assert len(rows) == 1
    row = rows[0]
    assert row["note"] != f"pid {os.getpid()}"  # set up in the child
    for side in ("ours", "anchor"):
        assert len(row[f"{side}_times"]) == 4
        assert row[f"{side}_min"] <= row[f"{side}_s"] <= row[f"{side}_max"]
        assert row[f"{side}_min"] == min(row[f"{side}_times"])
        assert row[f"{side}_cpu_s"] > 0  # one thread: its CPU time is at most the wall time, plus the clock's step
    assert row["ratio"] == pytest.approx(row["anchor_s"] / row["ours_s"])
    assert row["device"] == "cpu" and row["device_name"] and row["threads"] >= 1
    line = render_markdown({"format": 2, "machines": {"cpu": "toy CPU"}, "rows": rows}).splitlines()
    assert "## cpu: toy CPU" in line
    assert any(l.startswith(f"| {TOY} | 500 samples |") and f"({row['ours_min'] * 1e3:,.1f}–" in l for l in line)


def test_a_child_whose_values_disagree_fails_loudly():
    with pytest.raises(RuntimeError, match=TOY_WRONG):
        run_in_child(CASES[TOY_WRONG], 10, "cpu", repeats=1)


def test_rows_of_several_processes_pool_to_the_median_of_their_ratios():
    def run(ours, anchor):
        return [{"case": TOY, "size": 5, "ours": "o", "anchor": "a", "ratio": anchor / ours,
                 "ours_s": ours, "ours_min": ours * 0.9, "ours_max": ours * 1.1, "ours_times": [ours],
                 "ours_cpu_s": ours, "anchor_s": anchor, "anchor_min": anchor, "anchor_max": anchor,
                 "anchor_times": [anchor],
                 "anchor_cpu_s": anchor}]

    # the second process ran at half the speed, the third was an outlier: the ratio is the processes' median
    (row,) = bench.pool_processes([run(1.0, 1.2), run(2.0, 2.2), run(1.0, 0.5)])
    assert row["processes"] == 3
    assert (row["ratio"], row["ratio_min"], row["ratio_max"]) == (1.1, 0.5, 1.2)
    assert row["ours_s"] == 1.0 and row["ours_min"] == 0.9 and row["ours_max"] == 2.2
    assert row["anchor_times"] == [1.2, 2.2, 0.5] and row["anchor_cpu_s"] == 1.2
    line = render_markdown({"rows": [{**row, "unit": "samples", "device": "cpu"}]})
    assert "| 1.10× (0.50–1.20, 3 p.) |" in line


def test_processes_option_runs_each_case_in_that_many_children(tmp_path, monkeypatch):
    children = []
    real = bench.run_in_child

    def counted(*args, **kwargs):
        children.append(args[:2])
        return real(*args, **kwargs)

    monkeypatch.setattr(bench, "run_in_child", counted)
    results, table = tmp_path / "latest.json", tmp_path / "BENCHMARKS.md"
    assert bench.main(["--only", TOY, "--quick", "--repeats", "2", "--processes", "2", "--device", "cpu",
                       "--results", str(results), "--table", str(table)]) == 0
    assert len(children) == 2
    (row,) = [r for r in json.loads(results.read_text())["rows"] if r["case"] == TOY]
    assert row["processes"] == 2 and len(row["ours_times"]) == 4 and row["ratio_min"] <= row["ratio"]
    assert "2 p.) |" in table.read_text()
    with pytest.raises(SystemExit):
        bench.main(["--only", TOY, "--processes", "0"])


def test_one_process_times_the_cases_in_one_child_in_order_and_saves_after_each(tmp_path, monkeypatch):
    """``--one-process``: every case in one child (the pid in the toy's note), in the order given; a case that raises
    is reported and the next one still runs; the results are written after each case, and a failed case keeps its
    earlier rows."""
    results, table = tmp_path / "latest.json", tmp_path / "BENCHMARKS.md"
    old = {**_OLD_ROW, "case": TOY_RAISES, "machine": "m"}
    results.write_text(json.dumps({"format": bench.FORMAT, "rows": [old]}))
    saved = []
    real_save = bench._Run.save

    def save(run):
        real_save(run)
        saved.append(sorted({row["case"] for row in json.loads(results.read_text())["rows"]}))

    monkeypatch.setattr(bench._Run, "save", save)
    code = bench.main(["--only", TOY_COLD, TOY_RAISES, TOY, "--one-process", "--quick", "--device", "cpu",
                       "--results", str(results), "--table", str(table)])
    assert code == 1  # one case failed
    payload = json.loads(results.read_text())
    assert saved[:3] == [[TOY_COLD, TOY_RAISES], [TOY_COLD, TOY_RAISES], sorted([TOY, TOY_COLD, TOY_RAISES])]
    assert payload["failures"] == [f"{TOY_RAISES}[1] (ValueError: this case needs a GPU)"]
    assert [r for r in payload["rows"] if r["case"] == TOY_RAISES] == [old]
    (cold,) = [r for r in payload["rows"] if r["case"] == TOY_COLD]  # warmup=0: the first timed call is checked
    assert len(cold["ours_times"]) == 2
    (toy,) = [r for r in payload["rows"] if r["case"] == TOY]
    assert toy["note"] == cold["note"] != f"pid {os.getpid()}"  # one child, not this process


def test_one_process_kills_a_case_past_its_limit_and_a_fresh_child_runs_the_rest(tmp_path, monkeypatch):
    """A hung case is killed with its child's process group (a worker it started too); a case that kills its process
    is reported; a fresh child times the cases after each; a budget spent reports the cases it never started."""
    from benchmarks import one_process
    from testkit.checkout import checkout_pythonpath

    worker_file = tmp_path / "worker.pid"
    env = {**os.environ, "PYTHONPATH": checkout_pythonpath(), "TOY_HANG_WORKER": str(worker_file)}
    seen = []
    items = [one_process.Item(CASES[name], 1 if name != TOY else 300, 1) for name in (TOY_HANGS, TOY_DIES, TOY)]
    began = time.monotonic()
    one_process.run_items(items, "cpu", lambda item, rows, error: seen.append((item.case.name, rows, error)),
                          env=env, cwd=str(Path(__file__).resolve().parents[1]))
    assert time.monotonic() - began < 60
    assert [name for name, _, _ in seen] == [TOY_HANGS, TOY_DIES, TOY]
    assert seen[0][1] is None and seen[0][2].startswith("cut: killed after") and "its limit of 3 s" in seen[0][2]
    assert seen[1][1] is None and "exit 7" in seen[1][2]
    assert seen[2][2] is None and seen[2][1][0]["case"] == TOY
    deadline = time.monotonic() + 10
    while _alive(int(worker_file.read_text())) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(int(worker_file.read_text()))
    seen.clear()
    one_process.run_items(items[2:], "cpu", lambda item, rows, error: seen.append((item.case.name, rows, error)),
                          budget_s=one_process.MIN_ITEM_S - 1, env=env)
    assert seen == [(TOY, None, "cut: the run's budget was spent before it started")]


def test_one_process_is_not_combined_with_contended_or_processes():
    for extra in (["--contended"], ["--processes", "2"]):
        with pytest.raises(SystemExit):
            bench.main(["--only", TOY, "--one-process", "--device", "cpu", *extra])


#: a row of an earlier run's results (format 1: no spread, no device name)
_OLD_ROW = {"size": 10, "unit": "samples", "ours": "o", "ours_s": 0.1, "anchor": "a", "anchor_s": 0.2, "ratio": 2.0,
            "device": "cpu", "note": "", "threads": 2}


def test_a_run_replaces_only_its_cases_on_its_device_and_migrates_old_results(tmp_path):
    results, table = tmp_path / "latest.json", tmp_path / "BENCHMARKS.md"
    old_row = {**_OLD_ROW, "case": "token_f1_squad"}
    results.write_text(json.dumps({  # format 1: one machine string, no spread, no device name
        "machine": "old machine", "versions": {}, "repeats_note": "r", "fid_ddp_sync": [],
        "rows": [old_row, {**old_row, "case": TOY, "size": 7},
                 {**old_row, "case": TOY, "size": 8, "device": "cuda:0", "note": "gpu row"}],
    }))
    assert bench.main(["--only", TOY, "--quick", "--repeats", "2", "--device", "cpu",
                       "--results", str(results), "--table", str(table)]) == 0
    payload = json.loads(results.read_text())
    assert payload["format"] == bench.FORMAT and "machine" not in payload and "machines" not in payload
    machines = {(r["case"], r["size"], r["device"]): r["machine"] for r in payload["rows"]}
    here = bench.machine_description("cpu")
    assert machines == {("token_f1_squad", 10, "cpu"): "old machine", (TOY, 300, "cpu"): here,
                        (TOY, 8, "cuda"): "old machine"}
    text = table.read_text()
    assert "## cpu: old machine" in text and f"## cpu: {here}" in text and "## cuda: old machine" in text
    assert "| token_f1_squad | 10 samples | o | 100.0 ms | a | 200.0 ms | 2.00× | 2 | — |" in text  # no spread, no date
    new_row = next(r for r in payload["rows"] if r["case"] == TOY and r["size"] == 300)
    assert new_row["date"] == time.strftime("%Y-%m-%d", time.gmtime()) and new_row["commit"]  # this test runs in git
    assert f"| {when_measured(new_row)} |" in text and new_row["commit"] in when_measured(new_row)
    assert text.index("## cpu:") < text.index("## cuda:")
    # each row stays under the machine that timed it: a rerun elsewhere moves only the cases it ran

    def section(row_start: str) -> str:
        before = text[: text.index(row_start)]
        return before[before.rindex("\n## ") + 4:].split("\n", 1)[0]

    assert section("| token_f1_squad | 10 samples |") == "cpu: old machine"
    assert section(f"| {TOY} | 300 samples |") == f"cpu: {here}"


def test_a_case_module_that_cannot_import_is_left_out_and_its_rows_kept(tmp_path, monkeypatch):
    """A GPU machine may lack a reference package: the other cases still run and the missing module's rows stay."""
    import importlib

    real_import = importlib.import_module

    def import_module(name, *args, **kwargs):  # other imports of the run (torch's lazy ones: package=) go through
        if name == "benchmarks.cases.bleu":
            raise ImportError("No module named 'sacrebleu'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(importlib, "import_module", import_module)
    monkeypatch.setattr(bench, "UNLOADED", {})
    bleu_cases = {name: case for name, case in CASES.items() if case.module.endswith(".bleu")}
    for name in bleu_cases:
        monkeypatch.delitem(CASES, name)
    load_cases()
    assert "sacrebleu" in bench.UNLOADED["bleu"] and not set(bleu_cases) & set(CASES)
    results, table = tmp_path / "latest.json", tmp_path / "BENCHMARKS.md"
    row = {**_OLD_ROW, "case": "bleu_corpus"}
    results.write_text(json.dumps({"machine": "m", "versions": {}, "repeats_note": "r", "fid_ddp_sync": [],
                                   "rows": [row]}))
    assert bench.main(["--only", TOY, "--quick", "--repeats", "2", "--device", "cpu",
                       "--results", str(results), "--table", str(table)]) == 0
    assert "bleu_corpus" in {r["case"] for r in json.loads(results.read_text())["rows"]}


def test_contended_mode_times_idle_and_loaded_and_always_stops_its_burners(tmp_path, monkeypatch):
    started = []
    real_burners = bench.burners

    def watched(count):
        manager = real_burners(count)
        procs = manager.__enter__()
        assert len(procs) == count and all(_alive(p.pid) for p in procs)
        started.extend(procs)

        class Wrapper:
            def __enter__(self):
                return procs

            def __exit__(self, *exc):
                return manager.__exit__(*exc)

        return Wrapper()

    monkeypatch.setattr(bench, "burners", watched)
    results, table = tmp_path / "latest.json", tmp_path / "BENCHMARKS.md"
    assert bench.main(["--only", TOY, "--quick", "--repeats", "2", "--contended", "--burners", "2",
                       "--results", str(results), "--table", str(table)]) == 0
    assert len(started) == 2 and not any(_alive(p.pid) for p in started)
    payload = json.loads(results.read_text())
    assert payload["rows"] == []  # idle times of a contended run stay in its own section
    (row,) = payload["contended"]
    assert row["ours_slowdown"] == pytest.approx(row["ours_loaded_s"] / row["ours_idle_s"])
    assert row["anchor_slowdown"] == pytest.approx(row["anchor_loaded_s"] / row["anchor_idle_s"])
    text = table.read_text()
    assert "## Under load (cpu:" in text and f"| {TOY} | 300 samples |" in text


def test_burners_stop_when_the_block_raises():
    with pytest.raises(KeyError):
        with bench.burners(2) as procs:
            assert all(_alive(p.pid) for p in procs)
            raise KeyError("interrupted")
    assert all(p.returncode is not None for p in procs)


def test_a_burner_exits_by_itself_when_the_harness_dies():
    harness = (
        "import os, subprocess, sys\n"
        f"p = subprocess.Popen([sys.executable, '-c', {bench.BURNER!r}, str(os.getpid())])\n"
        "print(p.pid, flush=True)\n"
        "os._exit(0)\n"  # no cleanup at all
    )
    pid = int(subprocess.run([sys.executable, "-c", harness], capture_output=True, text=True, check=True).stdout)
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def test_matrix_covers_every_level_of_every_axis_and_its_cells_check_parity():
    from benchmarks.cases import matrix

    load_cases()
    cells = [c for c in CASES.values() if c.group == "matrix"]
    core = [c for c in cells if c.params["core"]]
    assert len(cells) == 4 * 54 + 3 * 27 and len(core) == 4 * 10 + 3 * 9
    for metric in matrix.METRICS:
        mine = [c.params for c in core if c.params["metric"] == metric]
        assert {p["vocab"] for p in mine} == set(matrix.VOCABULARIES)
        assert {p["tokens"] for p in mine} == set(matrix.LENGTHS)
        assert {p["script"] for p in mine} == set(matrix.SCRIPTS)
        assert {p["refs"] for p in mine} == ({1, 5} if matrix.METRICS[metric][2] else {1})
    rows = []
    parity_cells = (
        "matrix_rouge_v3k_t25_r5_cjk", "matrix_token_f1_v25_t5_r5_cyrillic", "matrix_edit_distance_v100k_t5_r1_cjk",
    )
    for name in parity_cells:
        rows += run_case(CASES[name], 6, "cpu", repeats=1)  # run_case raises when the values disagree
    rows[0]["ratio"], rows[1]["ratio"] = 5.0, 0.5
    text = render_markdown({"format": 2, "machines": {"cpu": "toy"}, "rows": rows})
    assert "| rouge | 3k | 25 | 5 | cjk | 6 |" in text and "| 5.00× | pass (≥ 3×) |" in text
    assert "| 0.50× | **fail** (≥ 3×) |" in text and "(≥ 1×)" in text


@pytest.mark.ddp
def test_ddp_sync_section_measures_fixed_size_all_reduces():
    from benchmarks import ddp_sync

    rows = ddp_sync.measure(dims=8, repeats=1, world_sizes=(2,))
    by_library = {row["library"]: row for row in rows}
    state_bytes = 2 * (8 * 8 + 8 * 8 * 8 + 8)  # real and fake: float64 sum, float64 outer sum, int64 count
    # the 16-byte signature check, the four float64 states in one buffer, the two int64 counts in another
    assert by_library["gpumetrics"]["collectives"] == 3
    assert by_library["gpumetrics"]["received_bytes"] == state_bytes + 16
    assert by_library["torchmetrics"]["received_bytes"] >= 2 * state_bytes  # all-gather: world size × state
    section = "\n".join(ddp_sync.render(rows))
    assert "| 2 | gpumetrics | 3 |" in section


def test_compare_flags_rows_whose_ratio_dropped(tmp_path, capsys):
    from benchmarks.compare import main as compare_main

    def results(path, ratios):
        rows = [{"case": case, "size": 10, "ours": "ours", "anchor": "ref", "device": "cpu", "ratio": ratio}
                for case, ratio in ratios.items()]
        path.write_text(json.dumps({"rows": rows}))
        return str(path)

    before = results(tmp_path / "before.json", {"a": 4.0, "b": 2.0, "gone": 1.0})
    after = results(tmp_path / "after.json", {"a": 4.4, "b": 1.0, "new": 9.0})
    assert compare_main([before, after]) == 1
    table = capsys.readouterr().out
    lines = [line for line in table.splitlines() if line.startswith("| a ") or line.startswith("| b ")]
    assert lines[0].startswith("| b ") and "0.50 ⚠" in lines[0]  # the drop is listed first and flagged
    assert "1.10 |" in lines[1]
    assert "2 row(s) are in one file only" in table
    assert compare_main([before, before]) == 0


def test_gpu_rows_render_their_throughput_and_both_goals():
    base = {"case": "gpu_toy", "size": 1000, "unit": "images", "anchor": "reference", "anchor_s": 1.0,
            "anchor_min": 1.0, "anchor_max": 1.0, "repeats": 3, "device": "cuda", "device_name": "Some GPU",
            "threads": 1, "note": "", "group": "gpu"}
    rows = [
        {**base, "ours": "fast", "ours_s": 0.25, "ours_min": 0.25, "ours_max": 0.25, "ratio": 4.0, "goal": 2.0,
         "throughput_goal": 2000.0},
        {**base, "ours": "slow", "ours_s": 2.0, "ours_min": 2.0, "ours_max": 2.0, "ratio": 0.5, "goal": 2.0},
    ]
    table = render_markdown({"format": bench.FORMAT, "machines": {"cuda": "Some GPU, host x"}, "rows": rows,
                             "contended": []})
    fast = next(line for line in table.splitlines() if "| fast |" in line)
    slow = next(line for line in table.splitlines() if "| slow |" in line)
    assert "4,000 images/s" in fast and "pass (≥ 2×); pass (≥ 2,000 images/s)" in fast
    assert "500 images/s" in slow and slow.rstrip().endswith("**fail** (≥ 2×) | — |")  # no date recorded
    load_cases()  # the suite's cases no GPU row covers are named, the measured one not
    suite = bench.gpu_suite_names()
    measured = {**rows[0], "case": suite[0]}
    unmeasured = next(line for line in render_markdown({"rows": [measured]}).splitlines() if "**Unmeasured**" in line)
    assert f"`{suite[0]}`" not in unmeasured and all(f"`{name}`" in unmeasured for name in suite[1:])


_JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites name="pytest tests"><testsuite name="pytest" errors="1" failures="1" skipped="2" tests="6" time="12.34"
 timestamp="2026-11-27T10:11:12.000000+00:00" hostname="gpu">
<testcase classname="tests.cuda.a" name="test_ok" time="1.0"/>
<testcase classname="tests.cuda.a" name="test_ok_too" time="1.0"><system-out>printed</system-out></testcase>
<testcase classname="tests.cuda.a" name="test_bad" time="1.0"><failure message="boom">trace</failure></testcase>
<testcase classname="tests.cuda.a" name="test_skip" time="0.0"><skipped type="pytest.skip"
 message="needs CUDA"/></testcase>
<testcase classname="tests.cuda.b" name="test_skip_too" time="0.0"><skipped message="no data"/></testcase>
<testcase classname="tests.cuda.c" name="tests.cuda.c" time="0.0"><error message="collection failure">E</error>
</testcase></testsuite></testsuites>
"""


def test_cuda_suite_counts_the_junit_cases_and_renders_a_line_per_run(tmp_path):
    from benchmarks import cuda_suite

    junit = tmp_path / "cuda-suite.xml"
    junit.write_text(_JUNIT)
    payload = {"format": bench.FORMAT, "machines": {"cpu": "toy"}, "rows": []}
    added = cuda_suite.record(payload, junit, "Some GPU")
    assert added == {"date": "2026-11-27", "device": "Some GPU", "passed": 2, "failed": 1, "skipped": 2, "errors": 1,
                     "seconds": 12.3}
    assert payload["cuda_suite"] == [added]
    cuda_suite.record(payload, junit, "Some GPU")  # the same day's rerun replaces its entry
    cuda_suite.add(payload, cuda_suite.entry({"passed": 5, "failed": 0, "skipped": 0, "errors": 0, "seconds": 9},
                                             "Other GPU", date="2026-11-01", note="first"))
    assert [e["device"] for e in payload["cuda_suite"]] == ["Other GPU", "Some GPU"]
    lines = cuda_suite.render(payload["cuda_suite"])
    assert lines[-2:] == ["- 2026-11-01, Other GPU: 5 passed, 0 failed, 0 skipped, 0 errors in 9 s (first).",
                          "- 2026-11-27, Some GPU: 2 passed, 1 failed, 2 skipped, 1 errors in 12 s."]
    assert cuda_suite.render([]) == []
    gpu_section = render_markdown(payload).split("## GPU suite", 1)[1]
    assert lines[-1] in gpu_section and "## " not in gpu_section.split(lines[-1])[0]  # in the GPU section


def test_record_cuda_suite_cli_writes_results_and_table_and_keeps_them_on_a_missing_xml(tmp_path):
    junit, results, table = tmp_path / "suite.xml", tmp_path / "latest.json", tmp_path / "BENCHMARKS.md"
    junit.write_text('<testsuites><testsuite name="pytest" time="3.5" timestamp="2026-12-01T00:00:00">'
                     '<testcase name="a"><skipped message="needs CUDA"/></testcase></testsuite></testsuites>')
    results.write_text(json.dumps({"format": bench.FORMAT, "machines": {"cpu": "toy"}, "rows": [],
                                   "fid_ddp_sync": [], "cli_scale": []}))
    assert bench.main(["--device", "cpu", "--record-cuda-suite", str(junit), "--cuda-suite-note", "dry run",
                       "--results", str(results), "--table", str(table)]) == 0
    entries = json.loads(results.read_text())["cuda_suite"]
    assert entries == [{"date": "2026-12-01", "device": bench.cpu_model(), "passed": 0, "failed": 0, "skipped": 1,
                        "errors": 0, "seconds": 3.5, "note": "dry run"}]
    assert "0 passed, 0 failed, 1 skipped, 0 errors in 4 s (dry run)." in table.read_text()
    before = results.read_text(), table.read_text()
    assert bench.main(["--device", "cpu", "--record-cuda-suite", str(tmp_path / "missing.xml"),
                       "--results", str(results), "--table", str(table)]) == 1
    assert (results.read_text(), table.read_text()) == before
    # a benchmark run afterwards (gpu_session.sh runs its cases after recording) keeps the entry
    assert bench.main(["--only", TOY, "--quick", "--repeats", "2", "--device", "cpu",
                       "--results", str(results), "--table", str(table)]) == 0
    assert json.loads(results.read_text())["cuda_suite"] == entries and "(dry run)." in table.read_text()


def _session_case_list(script: str, variable: str) -> list[str]:
    """The default case names of ``variable=${OVERRIDE:-"…"}`` in a shell script (continued lines joined)."""
    start = script.index(f"{variable}=${{")
    quoted = script[script.index('"', start) + 1 :]
    return quoted[: quoted.index('"')].replace("\\\n", " ").split()


def test_the_gpu_suite_order_and_the_session_script_name_only_registered_cases():
    """A misspelt case in the GPU suite's order or tools/gpu_session.sh would spend device time on an error: every
    name must be registered, once, and every GPU case must have its place in the order."""
    load_cases()
    script = (Path(__file__).resolve().parents[1] / "tools" / "gpu_session.sh").read_text()
    order, host = list(GPU_SUITE_ORDER), _session_case_list(script, "host_cases")
    assert host and [name for name in order + host if name not in CASES] == []
    assert len(order) == len(set(order)) and len(host) == len(set(host))
    gpu_cases = {name for name, case in CASES.items() if case.group == "gpu"}
    assert gpu_cases <= set(order), sorted(gpu_cases - set(order))
    assert bench.gpu_suite_names() == order
    assert all(CASES[name].group == "main" for name in host)  # timed on the GPU machine's CPU, never its device


def test_merge_puts_a_gpu_calls_rows_in_place_of_their_case_and_device(tmp_path):
    """``--merge``: a GPU call's $OUT/latest.json (a copy of the repo's plus its rows), then a second call's: rows
    replace those of their (case, device) only, CUDA suite entries add up, a case the second call timed leaves the
    failures, the repo's versions stay."""
    def row(case, device, ours):
        return {**_OLD_ROW, "case": case, "device": device, "ours_s": ours, "machine": "m"}

    repo = {"format": bench.FORMAT, "versions": {"torch": "repo"},
            "rows": [row(TOY, "cpu", 1.0), row(TOY, "cuda", 1.0), row(TOY_COLD, "cuda", 1.0)]}
    first = {"format": bench.FORMAT, "versions": {"torch": "gpu"}, "failures": [f"{TOY_COLD}[1] (cut: budget)"],
             "rows": [row(TOY, "cpu", 1.0), row(TOY, "cuda", 2.0), row(TOY_COLD, "cuda", 1.0)],
             "cuda_suite": [{"date": "2026-12-01", "device": "H200", "passed": 3, "failed": 0, "skipped": 1,
                            "errors": 0, "seconds": 170.0}]}
    second = {"format": bench.FORMAT, "rows": [row(TOY_COLD, "cuda", 3.0)]}
    results, table = tmp_path / "latest.json", tmp_path / "BENCHMARKS.md"
    results.write_text(json.dumps(repo))
    paths = []
    for number, payload in enumerate((first, second)):
        paths.append(tmp_path / f"call{number}.json")
        paths[-1].write_text(json.dumps(payload))
    assert bench.main(["--merge", *map(str, paths), "--results", str(results), "--table", str(table)]) == 0
    merged = json.loads(results.read_text())
    assert sorted((r["case"], r["device"], r["ours_s"]) for r in merged["rows"]) == [
        (TOY_COLD, "cuda", 3.0), (TOY, "cpu", 1.0), (TOY, "cuda", 2.0)]
    assert merged["versions"] == {"torch": "repo"} and "failures" not in merged
    assert merged["cuda_suite"] == first["cuda_suite"] and "H200" in table.read_text()


def test_a_stale_row_says_so_until_a_run_of_its_case_replaces_it(tmp_path):
    """A row whose timed code changed after its run renders its ``stale`` reason; a new run of the case drops it."""
    stale = {**_OLD_ROW, "case": TOY, "size": 300, "machine": "m", "date": "2026-11-29", "commit": "abc",
             "stale": "timed with a reverted copy"}
    assert "| 2026-11-29 · abc (**stale**: timed with a reverted copy) |" in render_markdown({"rows": [stale]})
    results, table = tmp_path / "latest.json", tmp_path / "BENCHMARKS.md"
    results.write_text(json.dumps({"format": bench.FORMAT, "rows": [stale]}))
    assert bench.main(["--only", TOY, "--quick", "--repeats", "1", "--device", "cpu", "--results", str(results),
                       "--table", str(table)]) == 0
    assert "stale" not in table.read_text() and all("stale" not in r for r in json.loads(results.read_text())["rows"])


def test_the_levenshtein_kernel_rows_set_up_both_kernels(monkeypatch):
    """The kernel rows a GPU run decides the dispatch by (``WAVEFRONT_MIN_WORDS``): their setup builds, at the quick
    size, the wavefront kernel's default shape against the column kernel's (the contenders themselves run on a CPU
    under Triton's interpreter: ``tools/gpu_rows_on_cpu.py``)."""
    import benchmarks.cases.edit_gpu as edit_gpu

    load_cases()
    monkeypatch.setattr(edit_gpu, "_cuda", lambda device: device)
    for name in ("edit_gpu_kernel_long", "edit_gpu_kernel_medium", "edit_gpu_kernel_short"):
        contenders = CASES[name].setup(CASES[name].quick_sizes[0], "cpu")
        assert "Triton wavefront kernel, 32 words per program on 1 warps (default)" in contenders.ours, name
        anchor = "Triton column kernel, 1 pairs per program on 1 warps (default)"
        assert anchor in contenders.anchors or anchor in contenders.ours, name

"""``gpumetrics evaluate`` on a million samples: wall time and peak memory of the whole command, streaming join.

For each metric (CER, BLEU) and size, a predictions file and a references file (JSON Lines, the predictions in
another order than the references, 5 % of them missing) are generated once, then the command runs in a fresh
process: ``python -m gpumetrics evaluate CONFIG --output REPORT``. Wall time is the child's life time; peak RSS is
the child's ``ru_maxrss`` (``os.wait4``), which includes the interpreter, torch and the index of both files — the
texts of one batch at a time are the only data held (``gpumetrics.harness.records``). The checkpoint default (every
100 batches, beside the report) is on, as a user gets it. CER's texts are OCR-like lines of 20–60 characters;
BLEU's sentences of 5–30 words with 1 reference.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from testkit.checkout import checkout_pythonpath

SIZES = (100_000, 1_000_000)
QUICK_SIZES = (20_000,)
METRICS = ("cer", "bleu")
BATCH_SIZE = 4096
WORDS = ("the a of to and in is was for on with as by at from that this it be are an or his her they we "
         "river city north king army church school house road station music film album song team league player "
         "season game war world water light time year day night man woman child book story family").split()


def _write_data(folder: Path, metric: str, size: int, seed: int = 0) -> tuple[Path, Path]:
    rng = random.Random(seed)
    predictions, references = folder / f"{metric}_{size}_pred.jsonl", folder / f"{metric}_{size}_ref.jsonl"
    order = list(range(size))
    rng.shuffle(order)
    with references.open("w", encoding="utf-8") as refs:
        texts = []
        for i in range(size):
            if metric == "cer":
                text = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz абвгдеж0123456789")
                               for _ in range(rng.randint(20, 60)))
            else:
                text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 30)))
            texts.append(text)
            refs.write(json.dumps({"id": f"s{i}", "references": [text]}, ensure_ascii=False) + "\n")
    with predictions.open("w", encoding="utf-8") as preds:
        for i in order:
            if rng.random() < 0.05:
                continue
            unit = list(texts[i]) if metric == "cer" else texts[i].split(" ")
            for _ in range(rng.randint(0, 3)):  # a few substitutions / deletions
                if unit:
                    position = rng.randrange(len(unit))
                    unit[position] = rng.choice(unit) if rng.random() < 0.7 else ""
            text = "".join(unit) if metric == "cer" else " ".join(w for w in unit if w)
            preds.write(json.dumps({"id": f"s{i}", "prediction": text}, ensure_ascii=False) + "\n")
    return predictions, references


# Peak RSS is read with wait4 by a small intermediate process: Linux starts a forked child's high-water mark at its
# parent's RSS (the mm is copied, then exec keeps the old mm's mark), so the benchmark process — torch imported, data
# generated — would put its own size into every row. A child of a small process starts small.
_MEASURE = """
import json, os, subprocess, sys, time
start = time.perf_counter()
process = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
_, status, usage = os.wait4(process.pid, 0)
print(json.dumps({"wall": time.perf_counter() - start, "maxrss_kb": usage.ru_maxrss,
                  "code": os.waitstatus_to_exitcode(status), "stderr": process.stderr.read().decode()[-2000:]}))
"""


def _run(arguments: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS bytes of one Python process run with ``arguments``."""
    environment = {**os.environ, "PYTHONPATH": checkout_pythonpath()}
    done = subprocess.run([sys.executable, "-c", _MEASURE, sys.executable, *arguments], env=environment,
                          capture_output=True, text=True, check=True)
    measured = json.loads(done.stdout)
    if measured["code"] != 0:
        raise RuntimeError(f"{arguments} failed: {measured['stderr']}")
    return measured["wall"], measured["maxrss_kb"] * 1024  # Linux reports kilobytes


def _run_cli(config: Path, report: Path) -> tuple[float, int]:
    return _run(["-m", "gpumetrics", "evaluate", str(config), "--output", str(report), "--batch-size",
                 str(BATCH_SIZE), "--progress", "off"])


def import_baseline() -> tuple[float, int]:
    """Wall and peak RSS of a process that only imports what ``gpumetrics evaluate`` imports (torch, torchmetrics)."""
    return _run(["-c", "import gpumetrics.cli.main, gpumetrics.harness.runner"])


def measure(sizes: tuple[int, ...] = SIZES) -> list[dict]:
    base_wall, base_rss = import_baseline()
    rows = []
    with tempfile.TemporaryDirectory(prefix="gpumetrics-scale-") as folder_name:
        folder = Path(folder_name)
        for metric in METRICS:
            for size in sizes:
                predictions, references = _write_data(folder, metric, size)
                config = folder / f"{metric}_{size}.yaml"
                config.write_text(f"name: scale\ntasks:\n  - name: {metric}\n    metric: {metric}\n"
                                  f"    predictions: {predictions.name}\n    references: {references.name}\n")
                report = folder / f"{metric}_{size}.json"
                wall, rss = _run_cli(config, report)
                task = json.loads(report.read_text())["tasks"][0]
                rows.append({
                    "metric": metric, "samples": size, "wall_s": wall, "peak_rss_bytes": rss,
                    "file_bytes": predictions.stat().st_size + references.stat().st_size,
                    "load_s": task["timing"]["load_seconds"], "eval_s": task["timing"]["eval_seconds"],
                    "score": task["score"], "missing": task["counts"]["missing_predictions"],
                    "import_wall_s": base_wall, "import_rss_bytes": base_rss,
                })
                print(f"    {metric} {size:,}: {wall:.1f} s, peak RSS {rss / 2**20:,.0f} MiB", flush=True)
    return rows


def render(rows: list[dict]) -> list[str]:
    """Markdown section for BENCHMARKS.md."""
    if not rows:
        return []
    lines = [
        "",
        "## The command line at scale (streaming join, `gpumetrics evaluate`)",
        "",
        "Generated by `python -m benchmarks --only cli_scale` (`benchmarks/cli_scale.py`): one fresh "
        f"`gpumetrics evaluate` process per row, batch size {BATCH_SIZE:,}, checkpoints on (every 100 batches); JSON "
        "Lines files, predictions shuffled against the references, 5 % missing. Peak RSS is the whole process "
        "(interpreter and torch included); the files are indexed (24 bytes per record each), never held.",
        "",
        "`import only` is a process that imports what the command imports and exits: torch (a CUDA build) and "
        "torchmetrics account for most of the RSS; `above import` is what the run itself adds.",
        "",
        "| metric | samples | files | wall | indexing both files | reading batches + scoring | samples/s "
        "| peak RSS | import only | above import |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in sorted(rows, key=lambda r: (r["metric"], r["samples"])):
        lines.append(
            f"| {row['metric']} | {row['samples']:,} | {row['file_bytes'] / 2**20:,.0f} MiB | {row['wall_s']:.1f} s "
            f"| {row['load_s']:.1f} s | {row['eval_s']:.1f} s | {row['samples'] / row['wall_s']:,.0f} "
            f"| {row['peak_rss_bytes'] / 2**20:,.0f} MiB | {row['import_rss_bytes'] / 2**20:,.0f} MiB "
            f"| {(row['peak_rss_bytes'] - row['import_rss_bytes']) / 2**20:,.0f} MiB |"
        )
    return lines


if __name__ == "__main__":
    for line in render(measure(QUICK_SIZES)):
        print(line)

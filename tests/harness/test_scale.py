"""Evaluation at scale: the indexed streaming join, resumable checkpoints (interrupts and ``kill -9``), ``torchrun``
sharding, and the per-sample summaries."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from gpumetrics.harness.config import ConfigError, load_config
from gpumetrics.harness.records import DataError
from gpumetrics.harness.records import IndexedJoin, join_by_id
from gpumetrics.harness.runner import evaluate, shard_bounds
from gpumetrics.harness.samples import SampleSummary
from testkit.checkout import checkout_pythonpath

ROOT = Path(__file__).resolve().parents[2]
ALPHABET = "abc де 東京 é\u2028\u00a0\"\\<>𝔘 \t"


def _text(rng: random.Random, longest: int = 30) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, longest)))


def _write_task(folder: Path, name: str, n: int, seed: int, suffix: str = ".jsonl", shuffle: bool = True,
                missing: float = 0.1) -> tuple[Path, Path]:
    """Random references (1–3 each) and predictions in another order, some missing; CRLF, blank lines and a BOM."""
    rng = random.Random(seed)
    ids = [f"{name}-{i}" if i % 3 else i for i in range(n)]  # string and integer ids
    refs = [{"id": i, "references": [_text(rng) for _ in range(rng.randint(1, 3))]} for i in ids]
    preds = [{"id": i, "prediction": _text(rng)} for i in ids if rng.random() > missing]
    if shuffle:
        rng.shuffle(preds)
    pred_path, ref_path = folder / f"{name}_pred{suffix}", folder / f"{name}_ref{suffix}"
    if suffix == ".jsonl":
        lines = [json.dumps(r, ensure_ascii=rng.random() < 0.5) for r in preds]
        pred_path.write_bytes(("\ufeff" + "\r\n".join(lines) + "\n\n").encode("utf-8"))
        ref_path.write_text("\n".join(json.dumps(r, ensure_ascii=False) + ("\n" if k % 7 == 0 else "")
                                      for k, r in enumerate(refs)) + "\n", encoding="utf-8")
    else:
        pred_path.write_text(json.dumps(preds, ensure_ascii=False, indent=1), encoding="utf-8")
        ref_path.write_text(json.dumps(refs, ensure_ascii=False, indent=1), encoding="utf-8")
    return pred_path, ref_path


CAPTION_WORDS = "a man dog the U.S. Mr. St. A. B. p.m. etc. cat on in sits runs , ! . The He It".split()


def _write_captions(folder: Path, name: str, n: int, seed: int) -> tuple[Path, Path]:
    """COCO-like captions full of endings the PTB lexer reads past ("… U.S.", "… B.") before sentence starts."""
    rng = random.Random(seed)

    def caption() -> str:
        return " ".join(rng.choice(CAPTION_WORDS) for _ in range(rng.randint(1, 7))) + rng.choice(["", ".", " ."])

    pred_path, ref_path = folder / f"{name}_pred.jsonl", folder / f"{name}_ref.jsonl"
    pred_path.write_text("".join(json.dumps({"id": i, "prediction": caption()}) + "\n" for i in range(n)))
    ref_path.write_text("".join(json.dumps({"id": i, "references": [caption() for _ in range(rng.randint(1, 3))]})
                                + "\n" for i in range(n)))
    return pred_path, ref_path


def _naive_join(pred_path: Path, ref_path: Path) -> tuple[list, list, list]:
    def records(path: Path) -> list:
        text = path.read_text(encoding="utf-8-sig")
        if path.suffix == ".json":
            return json.loads(text)
        return [json.loads(line) for line in text.split("\n") if line.strip()]

    by_id = {str(r["id"]): r["prediction"] for r in records(pred_path)}
    refs = records(ref_path)
    ids = [str(r["id"]) for r in refs]
    return ids, [by_id.get(i, "") for i in ids], [r["references"] for r in refs]


# ------------------------------------------------------------------------------------------------------- the join
@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
@pytest.mark.parametrize("seed", [0, 1])
def test_indexed_join_equals_a_dictionary_join(tmp_path, suffix, seed):
    pred_path, ref_path = _write_task(tmp_path, "t", 157, seed, suffix)
    join = IndexedJoin(pred_path, ref_path)
    ids, predictions, references = _naive_join(pred_path, ref_path)
    for batch_size in (1, 10, 1000):
        batches = list(join.batches(batch_size))
        assert [len(b) for b in batches[:-1]] == [batch_size] * (len(batches) - 1)
        assert sum((b.ids for b in batches), []) == ids
        assert sum((b.predictions for b in batches), []) == predictions
        assert sum((b.references for b in batches), []) == references
    missing = [i for i, p in zip(ids, _naive_join(pred_path, ref_path)[1]) if i not in
               {str(json.loads(line)["id"]) for line in pred_path.read_text("utf-8-sig").split("\n") if line.strip()}] \
        if suffix == ".jsonl" else None
    if missing is not None:
        assert join.missing_ids == missing and join.missing_count == len(missing)
    # a window of the samples, as a process of torchrun or a resumed run reads it
    window = list(join.batches(7, start=40, stop=61))
    assert sum((b.ids for b in window), []) == ids[40:61]
    assert join_by_id(pred_path, ref_path).predictions == predictions


def test_json_lines_are_streamed_not_held(tmp_path):
    pred_path, ref_path = _write_task(tmp_path, "t", 50, 3)
    join = IndexedJoin(pred_path, ref_path)
    assert join._predictions._records is None and join._references._records is None  # only the index is in memory
    assert len(join._prediction_index.locators) + join.missing_count == 50


def test_join_errors_name_file_and_line_in_both_layouts(tmp_path):
    for suffix in (".jsonl", ".json"):
        refs = tmp_path / f"r{suffix}"
        preds = tmp_path / f"p{suffix}"
        records = [{"id": "a", "references": ["x"]}, {"id": "b", "references": ["y"]}, {"id": "a", "references": ["z"]}]
        if suffix == ".jsonl":
            refs.write_text("\n".join(json.dumps(r) for r in records) + "\n")
            preds.write_text('{"id": "a", "prediction": "x"}\n')
            line_of = {0: 1, 1: 2, 2: 3}
        else:
            refs.write_text("[\n" + ",\n".join(json.dumps(r) for r in records) + "\n]\n")
            preds.write_text('[\n{"id": "a", "prediction": "x"}\n]\n')
            line_of = {0: 2, 1: 3, 2: 4}
        with pytest.raises(DataError,
                           match=rf"{refs}:{line_of[2]}: duplicate id 'a' \(first seen on line {line_of[0]}\)"):
            IndexedJoin(preds, refs)
        refs.write_text("\n".join(json.dumps(r) for r in records[:2]) + "\n" if suffix == ".jsonl"
                        else json.dumps(records[:2]))
        preds.write_text('{"id": "a", "prediction": "x"}\n{"id": "c", "prediction": "x"}\n' if suffix == ".jsonl"
                         else '[{"id": "a", "prediction": "x"},\n{"id": "c", "prediction": "x"}]')
        with pytest.raises(DataError, match=rf"{preds}:2: unknown id 'c'"):
            IndexedJoin(preds, refs)
        preds.write_text('{"id": "a", "prediction": 3}\n' if suffix == ".jsonl" else '[{"id": "a", "prediction": 3}]')
        with pytest.raises(DataError, match=rf"{preds}:1: id 'a': `prediction` must be a string"):
            IndexedJoin(preds, refs)
    preds.write_text('[{"id": "a", "prediction": "x"}]')
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"id": "a", "references": ["x"]}\n{"id": "b", "references": ["\xff"]}\n')
    with pytest.raises(DataError, match=rf"{bad}:2: not valid UTF-8"):
        IndexedJoin(preds, bad)
    bad.write_text('{"id": "a", "references": ["x"]}\n{"id": "b", "references": ["x"]\n')
    with pytest.raises(DataError, match=rf"{bad}:2: malformed JSON line"):
        IndexedJoin(preds, bad)


def test_ids_with_colliding_hashes_still_join_by_their_text(tmp_path, monkeypatch):
    import gpumetrics.harness.records as join_module

    pred_path, ref_path = _write_task(tmp_path, "t", 40, 5, missing=0.3)
    monkeypatch.setattr(join_module, "hash", lambda text: len(text) % 3, raising=False)  # every id collides
    join = IndexedJoin(pred_path, ref_path)
    ids, predictions, references = _naive_join(pred_path, ref_path)
    batches = list(join.batches(9))
    assert sum((b.predictions for b in batches), []) == predictions
    assert sum((b.ids for b in batches), []) == ids
    duplicate = tmp_path / "dup.jsonl"
    duplicate.write_text('{"id": "ab", "prediction": "x"}\n{"id": "cd", "prediction": "y"}\n'
                         '{"id": "ab", "prediction": "z"}\n')
    with pytest.raises(DataError, match=r"dup.jsonl:3: duplicate id 'ab' \(first seen on line 1\)"):
        IndexedJoin(duplicate, ref_path)


def test_shard_bounds_cover_every_sample_once():
    for total in range(0, 12):
        for world in range(1, 5):
            covered = [i for r in range(world) for i in range(*shard_bounds(total, r, world))]
            assert covered == list(range(total))


# ---------------------------------------------------------------------------------------------------- summaries
def test_sample_summary_merges_to_the_same_result_in_any_split():
    from gpumetrics.harness.records import Batch

    rng = torch.Generator().manual_seed(0)
    scores = torch.rand(200, generator=rng) * 1.2 - 0.1
    scores[::17] = 0.25  # ties: the earlier sample is the worse
    scores[5] = float("nan")
    ids = [f"s{i}" for i in range(200)]
    batch = Batch(ids, [f"p{i}" for i in range(200)], [[f"r{i}"] for i in range(200)])

    def summary_of(cuts: list[int]) -> dict:
        parts = []
        for a, b in zip(cuts[:-1], cuts[1:]):
            part = SampleSummary("x", higher_is_better=True)
            part.add(Batch(ids[a:b], batch.predictions[a:b], batch.references[a:b]), scores[a:b], a)
            parts.append(part.state())
        whole = SampleSummary("x", higher_is_better=True)
        whole.load(parts[0])
        for state in parts[1:]:
            whole.merge(state)
        return whole.to_dict()

    one = summary_of([0, 200])
    assert one == summary_of([0, 1, 70, 71, 200]) == summary_of([0, 100, 200])
    finite = scores[~scores.isnan()]
    assert one["histogram"]["nan"] == 1
    assert one["histogram"]["below"] == int((finite < 0).sum()) and one["histogram"]["above"] == int((finite > 1).sum())
    assert sum(one["histogram"]["counts"]) + one["histogram"]["below"] + one["histogram"]["above"] + 1 == 200
    expected = sorted(range(200), key=lambda i: (float("inf") if scores[i].isnan() else float(scores[i]), i))[:10]
    assert [w["id"] for w in one["worst"]] == [ids[i] for i in expected]


# ------------------------------------------------------------------------------------------------------ configs
def _config(folder: Path, n: int = 240, seed: int = 0) -> Path:
    tasks = []
    for k, metric in enumerate(("cer", "bleu", "rouge", "token_f1")):
        pred_path, ref_path = _write_task(folder, metric, n + k, seed + k, ".json" if metric == "rouge" else ".jsonl")
        tasks.append(f"  - name: {metric}\n    metric: {metric}\n    predictions: {pred_path.name}\n"
                     f"    references: {ref_path.name}\n")
    pred_path, ref_path = _write_captions(folder, "captions", n // 2 + 1, seed)
    tasks.append(f"  - name: captions\n    metric: cider\n    predictions: {pred_path.name}\n"
                 f"    references: {ref_path.name}\n")
    tasks.append(f"  - name: one\n    metric: cer\n"
                 f"    predictions: {_write_task(folder, 'one', 1, 9, missing=0)[0].name}\n"
                 f"    references: one_ref.jsonl\n")
    path = folder / "run.yaml"
    path.write_text("name: scale\nbatch_size: 16\ntasks:\n" + "".join(tasks), encoding="utf-8")
    return path


def _comparable(report: dict) -> dict:
    """The report without what legitimately differs between runs: timings."""
    report = json.loads(json.dumps(report))
    report.pop("timing")
    report.pop("started")
    for task in report["tasks"]:
        task.pop("timing")
    return report


def test_resume_after_an_interrupt_at_any_batch_gives_the_same_report(tmp_path):
    config = load_config(_config(tmp_path))
    whole = evaluate(config, samples=True).to_dict()
    assert {t["name"]: "samples" in t for t in whole["tasks"]} == {"cer": True, "bleu": True, "rouge": True,
                                                                    "token_f1": True, "captions": False, "one": True}
    assert whole["tasks"][0]["samples"]["higher_is_better"] is False  # CER: the highest rates are the worst
    counted = []
    evaluate(config, progress=lambda label, done, total: counted.append(label) if "reading" not in label else None)
    calls = len(counted)  # one per task and one per batch
    for stop_after in sorted({1, 2, 3, 16, 17, 18, 40, calls // 2, calls - 3, calls - 1, calls}):
        folder = tmp_path / f"ck{stop_after}"
        seen = []

        def interrupt(label, done, total):
            if "reading" not in label:  # the bytes of a file being indexed
                seen.append(label)
            if len(seen) == stop_after:
                raise KeyboardInterrupt

        with pytest.raises(KeyboardInterrupt):
            evaluate(config, progress=interrupt, checkpoint_dir=folder, checkpoint_every=1, samples=True)
        saved = folder.exists()  # progress is called before the batch's checkpoint: the 2nd call has none yet
        assert saved == (stop_after > 2) and (not saved or list(folder.iterdir()) == [folder / "rank0-of1.pt"])
        resumed = evaluate(config, checkpoint_dir=folder, resume=True, samples=True)
        assert resumed.resumed == saved and _comparable(resumed.to_dict()) == _comparable(whole)
        resumed.checkpoint.remove()
        assert not folder.exists()


def test_a_checkpoint_of_another_run_is_refused_naming_the_change(tmp_path):
    path = _config(tmp_path, n=40)
    config = load_config(path)
    folder = tmp_path / "ck"

    def interrupt(label, done, total):
        if "reading" not in label and done >= 32:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        evaluate(config, progress=interrupt, checkpoint_dir=folder, checkpoint_every=1)
    with pytest.raises(ConfigError, match="changed: batch size"):
        evaluate(config, batch_size=8, checkpoint_dir=folder, resume=True)
    data = tmp_path / "bleu_pred.jsonl"
    data.write_text(data.read_text(encoding="utf-8-sig") + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=rf"changed: data file {data}"):
        evaluate(config, checkpoint_dir=folder, resume=True)
    with pytest.raises(ConfigError, match="--resume needs a checkpoint folder"):
        evaluate(config, resume=True)


def _cli(*args: str, env: dict | None = None, **kwargs) -> subprocess.Popen:
    environment = {**os.environ, "PYTHONPATH": checkout_pythonpath(), **(env or {})}
    return subprocess.Popen([sys.executable, "-m", "gpumetrics", *args], env=environment, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kwargs)


def _checkpoint_writes(path: Path, process: subprocess.Popen, count: int) -> int:
    """Poll until ``path`` has been written ``count`` times (each save replaces the file: a new inode) or
    ``process`` ended; the writes seen. Polling may miss writes, never invent one: at least that many happened."""
    seen, last = 0, None
    while seen < count and process.poll() is None:
        try:
            stat = path.stat()
            stamp = (stat.st_ino, stat.st_mtime_ns)
        except FileNotFoundError:
            stamp = None
        if stamp is not None and stamp != last:
            seen, last = seen + 1, stamp
        time.sleep(0.002)
    return seen


def test_kill_9_at_random_points_then_resume_gives_the_same_report(tmp_path):
    """SIGKILL after the first checkpoint and after about the 20th and 60th of ~135 (one per batch), at a random
    moment of the write cycle, then ``--resume``: the same report. The kill points count writes, not seconds, so the
    test holds on a machine of any speed (polling may miss writes: the last kill point leaves room for that)."""
    config = _config(tmp_path)
    report = tmp_path / "report.json"
    args = ("evaluate", str(config), "--output", str(report), "--batch-size", "8", "--checkpoint-every", "1")
    assert _cli(*args).wait(timeout=300) == 0
    whole = json.loads(report.read_text())
    rng = random.Random(7)
    checkpoint = report.with_suffix(".checkpoint") / "rank0-of1.pt"
    for writes in (1, 20, 60):
        report.unlink()
        process = _cli(*args)
        seen = _checkpoint_writes(checkpoint, process, writes)
        time.sleep(rng.uniform(0.0, 0.01))  # anywhere in the next write cycle, mid-write included
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=60) == -signal.SIGKILL, f"the run ended after {seen} checkpoint writes seen"
        assert not report.exists()
        resumed = _cli(*args, "--resume")
        out, err = resumed.communicate(timeout=300)
        assert resumed.returncode == 0, err
        again = json.loads(report.read_text())
        assert again["timing"]["resumed"] and _comparable(again) == _comparable(whole)
        assert not report.with_suffix(".checkpoint").exists()


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_torchrun_two_processes_equal_one(tmp_path):
    config = _config(tmp_path, n=101)
    single = tmp_path / "single.json"
    assert _cli("evaluate", str(config), "--output", str(single), "--html",
                str(tmp_path / "single.html")).wait(timeout=300) == 0
    shared = tmp_path / "ddp.json"
    environment = {**os.environ, "PYTHONPATH": checkout_pythonpath(), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", f"--master_port={_free_port()}",
         "-m", "gpumetrics", "evaluate", str(config), "--output", str(shared), "--html", str(tmp_path / "ddp.html")],
        env=environment, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "called before the ``update``" not in done.stderr  # the process whose shard of task "one" is empty
    one, two = json.loads(single.read_text()), json.loads(shared.read_text())
    assert two["run"]["world_size"] == 2 and one["run"]["world_size"] == 1
    assert two["run"]["distributed_backend"] == "gloo" and one["run"]["distributed_backend"] is None
    assert one["run"]["device_name"] and one["device"] == "cpu"
    for a, b in zip(one["tasks"], two["tasks"]):
        assert a["name"] == b["name"] and a["counts"] == b["counts"] and a["signature"] == b["signature"]
        assert b["score"] == pytest.approx(a["score"], abs=1e-12, rel=1e-12)
        assert a.get("samples") == b.get("samples")  # histograms and worst samples merge exactly across processes
        for key, value in a["details"].items():
            if isinstance(value, float):
                assert b["details"][key] == pytest.approx(value, abs=1e-12, rel=1e-12)


def test_torchrun_one_process_joins_a_group_and_records_its_backend(tmp_path):
    """``torchrun --nproc_per_node=1`` (WORLD_SIZE=1) still joins a process group — gloo here, NCCL on CUDA — so the
    report says how it ran."""
    config = _config(tmp_path, n=7)
    out = tmp_path / "one.json"
    environment = {**os.environ, "PYTHONPATH": checkout_pythonpath(), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=1", f"--master_port={_free_port()}", "-m",
         "gpumetrics", "evaluate", str(config), "--output", str(out)],
        env=environment, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(out.read_text())
    assert report["run"]["world_size"] == 1 and report["run"]["distributed_backend"] == "gloo"


def _interrupt_at(task: str, samples: int):
    def progress(label: str, done: int, total: int) -> None:
        if label == task and done >= samples:
            raise KeyboardInterrupt

    return progress


def _resume_with_a_lagging_rank(rank: int, config_path: str, folder: str) -> tuple[dict, dict, bool]:
    """Per rank: the uninterrupted report, and the report resumed after rank 1 lost its last checkpoints."""
    import shutil

    import torch.distributed as dist

    config = load_config(config_path)
    whole = evaluate(config).to_dict()
    checkpoints, early = Path(folder) / "ck", Path(folder) / "early"
    with pytest.raises(KeyboardInterrupt):  # both processes stop in the same task, no collective pending
        evaluate(config, progress=_interrupt_at("bleu", 48), checkpoint_dir=checkpoints, checkpoint_every=1)
    dist.barrier()
    if rank == 0:
        shutil.copytree(checkpoints, early)
    dist.barrier()
    with pytest.raises(KeyboardInterrupt):
        evaluate(config, progress=_interrupt_at("token_f1", 48), checkpoint_dir=checkpoints, checkpoint_every=1,
                 resume=True)
    dist.barrier()
    if rank == 1:  # as if rank 1 had been killed before its checkpoints of the later tasks reached the disk
        shutil.copy(early / "rank1-of2.pt", checkpoints / "rank1-of2.pt")
    dist.barrier()
    resumed = evaluate(config, checkpoint_dir=checkpoints, resume=True)
    return _comparable(whole), _comparable(resumed.to_dict()), resumed.resumed


@pytest.mark.ddp
def test_processes_resume_from_the_furthest_one_when_their_checkpoints_differ(tmp_path):
    from testkit.ddp import run_ddp_function

    config = _config(tmp_path, n=240)
    results = run_ddp_function(_resume_with_a_lagging_rank, str(config), str(tmp_path))
    for whole, resumed, was_resumed in results:
        assert was_resumed and resumed == whole
        assert whole["run"]["world_size"] == 2


def test_ptb_tasks_cut_batches_where_one_call_over_the_file_tokenises_the_same(tmp_path, monkeypatch):
    from gpumetrics import functional as F
    from gpumetrics.harness import runner

    pred_path, ref_path = _write_captions(tmp_path, "c", 120, 11)
    ids, predictions, references = _naive_join(pred_path, ref_path)
    config = tmp_path / "c.yaml"
    config.write_text(f"name: c\ntasks:\n  - name: cider\n    metric: cider\n    predictions: {pred_path.name}\n"
                      f"    references: {ref_path.name}\n  - name: bleu\n    metric: bleu\n"
                      "    options: {mode: coco}\n"
                      f"    predictions: {pred_path.name}\n    references: {ref_path.name}\n")
    whole = {"cider": float(F.cider_score(predictions, references)),
             "bleu": float(F.bleu_score(predictions, references, mode="coco"))}
    for batch_size in (1, 2, 5, 64):
        scores = {t.name: t.score for t in evaluate(load_config(config), batch_size=batch_size).tasks}
        assert scores == pytest.approx(whole, abs=1e-12, rel=1e-12)
    monkeypatch.setattr(runner, "cut_where_safe", lambda batches, reads_next, limit: batches)
    scores = {t.name: t.score for t in evaluate(load_config(config), batch_size=5).tasks}
    assert scores["cider"] != pytest.approx(whole["cider"], abs=1e-9)  # the data does cross batch boundaries


def test_cut_where_safe_keeps_every_sample_once_in_order():
    from gpumetrics.harness.records import Batch
    from gpumetrics.harness.runner import cut_where_safe

    rng = random.Random(3)
    ids = [str(i) for i in range(200)]
    unsafe = {i for i in ids if rng.random() < 0.6}
    batches = [Batch(ids[a:a + 7], ids[a:a + 7], [[i] for i in ids[a:a + 7]]) for a in range(0, 200, 7)]
    for limit in (7, 14, 1000):
        cut = list(cut_where_safe(batches, lambda p, r: p in unsafe, limit))
        assert sum((b.ids for b in cut), []) == ids
        assert all(b.ids[-1] not in unsafe or len(b) >= limit or b is cut[-1] for b in cut)

"""A checkpoint folder holds whatever was put there: ``--resume`` refuses, in one ConfigError, a file that is not a
checkpoint of this run — truncated, of another shape, or a pickle that would run code when loaded (fuzz)."""

from __future__ import annotations

import pytest
import torch

from gpumetrics.harness.checkpoint import RunCheckpoint
from gpumetrics.harness.config import ConfigError

FINGERPRINT = {"config file": "abc", "batch size": 4}


class _Payload:
    """Unpickled, it would create ``marker``."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def _checkpoint(tmp_path) -> RunCheckpoint:
    return RunCheckpoint(tmp_path / "ck", 0, 1, FINGERPRINT)


def test_a_saved_checkpoint_loads_back(tmp_path):
    checkpoint = _checkpoint(tmp_path)
    position = {"started": "t", "finished": [{"name": "A", "score": 0.5}], "task": 1, "done": 8,
                "metric": {"total": torch.tensor([3.0], dtype=torch.float64)}, "samples": None, "seconds": (0.1, 0.2)}
    checkpoint.save(position)
    saved = checkpoint.load()
    assert saved["done"] == 8 and torch.equal(saved["metric"]["total"], position["metric"]["total"])


@pytest.mark.parametrize("content", ["truncated", "empty", "no fingerprint", "fingerprint not a dict", "no position",
                                     "code"])
def test_a_foreign_checkpoint_is_one_config_error(tmp_path, content):
    checkpoint = _checkpoint(tmp_path)
    checkpoint.directory.mkdir()
    marker = tmp_path / "ran"
    if content in ("truncated", "empty"):
        checkpoint.save({"started": "t", "finished": [], "task": 0, "done": 0, "metric": None, "samples": None,
                         "seconds": (0.0, 0.0)})
        data = checkpoint.path.read_bytes()
        checkpoint.path.write_bytes(data[: len(data) // 2] if content == "truncated" else b"")
    elif content == "code":  # torch.load(weights_only=False) would have unpickled it and created the marker
        torch.save({"format": 1, "fingerprint": FINGERPRINT, "x": _Payload(marker)}, checkpoint.path)
    else:
        body = {"no fingerprint": {"format": 1}, "fingerprint not a dict": {"format": 1, "fingerprint": 5},
                "no position": {"format": 1, "fingerprint": FINGERPRINT}}[content]
        torch.save(body, checkpoint.path)  # KeyError / TypeError tracebacks before
    with pytest.raises(ConfigError, match="not a gpumetrics checkpoint"):
        checkpoint.load()
    assert not marker.exists()


def test_every_modules_state_survives_the_plain_data_loader(tmp_path):
    """Checkpoints load with ``weights_only=True`` (no code runs): the states of every exported module after an
    update — the host-sync suite's cases, one per module and input layout — must be plain data and tensors, or
    ``--resume`` of that task would be refused."""
    import io

    from gpumetrics.harness.runner import _metric_states
    from tests.core.test_host_syncs import _cases, update_for_compute

    for name, (make, batch) in _cases(tmp_path).items():
        metric = make()
        update_for_compute(name, metric, batch(4))
        metric = getattr(metric, "metric", metric)  # an input adapter around the module
        buffer = io.BytesIO()
        torch.save({"metric": _metric_states(metric)}, buffer)
        buffer.seek(0)
        loaded = torch.load(buffer, map_location="cpu", weights_only=True)["metric"]
        assert loaded.keys() == _metric_states(metric).keys(), name


def test_a_file_named_by_a_task_option_is_part_of_the_fingerprint(tmp_path):
    # only the config and the data files were: --resume after editing METEOR's synonyms file mixed two tables' scores
    import os

    from gpumetrics.harness.checkpoint import run_fingerprint
    from gpumetrics.harness.config import load_config

    synonyms = tmp_path / "syn.tsv"
    synonyms.write_text("кот\tкошк\n", encoding="utf-8")
    for name in ("pred.jsonl", "ref.jsonl"):
        (tmp_path / name).write_text('{"id": "1", "prediction": "кот", "references": ["кошка"]}\n', encoding="utf-8")
    config_path = tmp_path / "run.yaml"
    config_path.write_text("name: run\ntasks:\n  - name: M\n    metric: meteor\n    options: {mode: nltk, synonyms: "
                           "syn.tsv}\n    predictions: pred.jsonl\n    references: ref.jsonl\n", encoding="utf-8")
    config = load_config(config_path)
    before = run_fingerprint(config, 4, 1, torch.device("cpu"), False)
    synonyms.write_text("кот\tкошк\nпёс\tсобак\n", encoding="utf-8")
    os.utime(synonyms, ns=(1, 1))
    after = run_fingerprint(config, 4, 1, torch.device("cpu"), False)
    changed = [key for key in {*before, *after} if before.get(key) != after.get(key)]
    assert changed == [f"file {synonyms} of option `synonyms`"]


def test_the_config_in_the_fingerprint_is_the_bytes_the_run_read(tmp_path):
    # the file was hashed again when the fingerprint was taken: a config given as a pipe (`<(…)`) hashed as the
    # drained pipe's nothing, and an edit after the load was taken for what the run read
    import hashlib

    from gpumetrics.harness.checkpoint import run_fingerprint
    from gpumetrics.harness.config import load_config

    for name in ("pred.jsonl", "ref.jsonl"):
        (tmp_path / name).write_text('{"id": "1", "prediction": "a", "references": ["a"]}\n', encoding="utf-8")
    text = "name: run\ntasks:\n  - {name: C, metric: cer, predictions: pred.jsonl, references: ref.jsonl}\n"
    path = tmp_path / "run.yaml"
    path.write_text(text, encoding="utf-8")
    config = load_config(path)
    path.write_text(text + "# edited after the load\n", encoding="utf-8")
    fingerprint = run_fingerprint(config, 4, 1, torch.device("cpu"), False)
    assert fingerprint["config file"] == hashlib.sha256(text.encode("utf-8")).hexdigest()

"""Checkpoints of an ``evaluate`` run: where it is and the metric state there, so that ``--resume`` after a crash
or ``kill -9`` ends with the report an uninterrupted run writes.

One file per process (``rank{r}-of{w}.pt`` in the checkpoint folder), replaced atomically: a kill at any moment
leaves the previous complete checkpoint. It holds the finished tasks' results, the index of the current task, the
samples of this process's shard already fed, the metric's states (``Metric.persistent(True)`` state dict), the
per-sample summary and the run's ``started`` time. A checkpoint is only resumed by the run it was written for: its
*fingerprint* (config file bytes, the size and modification time of every data file and of every file a task's
options name, batch size, world size, device type, per-sample collection, gpumetrics version) must match, else the
error names what changed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Optional

import torch

from gpumetrics.core.files import atomic_write, file_sha256
from gpumetrics.core.signature import library_version
from gpumetrics.harness.config import ConfigError, EvalConfig

FORMAT_VERSION = 1


def run_fingerprint(config: EvalConfig, batch_size: int, world_size: int, device: torch.device, samples: bool) -> dict:
    """What a checkpoint must agree with to be resumed, as ``{what: value}`` (an error can name the difference)."""
    fingerprint: dict[str, Any] = {
        "config file": config.sha256 or file_sha256(config.path),  # the bytes read at load: a pipe is drained
        "batch size": batch_size,
        "world size": world_size,
        "device type": device.type,
        "per-sample scores": samples,
        "gpumetrics version": library_version(),
    }
    for task in config.tasks:
        files = [(f"data file {path}", path) for path in (task.predictions, task.references)
                 if path is not None and Path(path).is_file()]
        # a synonyms / embeddings / weights file changes the numbers too
        files += [(f"file {path} of option `{key}`", path) for key, path in task.option_files()]
        for what, path in files:
            stat = os.stat(path)
            fingerprint[what] = (stat.st_size, stat.st_mtime_ns)
    return fingerprint


class RunCheckpoint:
    """The checkpoint file of one process of a run.

    Args:
        directory: the checkpoint folder (created on the first save).
        rank, world_size: this process and the number of processes.
        fingerprint: :func:`run_fingerprint` of the run.
    """

    def __init__(self, directory: Path | str, rank: int, world_size: int, fingerprint: dict) -> None:
        self.directory = Path(directory)
        self.path = self.directory / f"rank{rank}-of{world_size}.pt"
        self.fingerprint = fingerprint

    def load(self) -> Optional[dict]:
        """The saved position, or ``None`` when there is no checkpoint.

        Raises:
            ConfigError: the checkpoint belongs to another run (names what changed) or is not a checkpoint.
        """
        if not self.path.is_file():
            return None
        try:  # plain data and tensors only: a file dropped into the checkpoint folder cannot run code when unpickled
            saved = torch.load(self.path, map_location="cpu", weights_only=True)
        except Exception as err:  # a truncated file cannot happen (atomic replace), a foreign one can
            text = " ".join(str(err).split())
            raise ConfigError(f"{self.path}: not a gpumetrics checkpoint ({text[:200]}); delete it or run without "
                              "--resume") from None
        if (not isinstance(saved, dict) or saved.get("format") != FORMAT_VERSION
                or not isinstance(saved.get("fingerprint"), dict)
                or not {"started", "finished", "task", "done", "metric", "samples", "seconds"} <= set(saved)):
            raise ConfigError(f"{self.path}: not a gpumetrics checkpoint of this version; delete it or run without "
                              "--resume")
        changed = sorted(key for key in {*saved["fingerprint"], *self.fingerprint}
                         if saved["fingerprint"].get(key) != self.fingerprint.get(key))
        if changed:
            raise ConfigError(
                f"{self.path} was written by a different run (changed: {', '.join(changed)}); delete "
                f"{self.directory} or run without --resume"
            )
        return saved

    def save(self, position: dict) -> None:
        """Replace the checkpoint with ``position`` (plain data and tensors), atomically."""
        with atomic_write(self.path, "wb") as handle:
            torch.save({"format": FORMAT_VERSION, "fingerprint": self.fingerprint, **position}, handle)

    def remove(self) -> None:
        """Delete this process's checkpoint (the run finished and its report is written), and the folder if empty."""
        self.path.unlink(missing_ok=True)
        try:  # other processes remove theirs at the same time: the folder may be gone, or not yet empty
            for stale in self.directory.glob(f".{self.path.name}.*.tmp"):  # a write that kill -9 cut short
                stale.unlink(missing_ok=True)
            self.directory.rmdir()
        except OSError:  # gone already, other processes' files, or the user's own files
            pass

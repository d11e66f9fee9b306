"""Real 2-process DDP runs (gloo, CPU) for metric tests. Nothing is mocked.

The ranks are forked from a fork server that has imported torch and torchmetrics once per test session (a spawned
rank imported them afresh: ~5 s of each DDP test on the 2-core CPU, most of the suite's DDP time). The server is a
clean single-threaded process, so forking it is safe where forking the test process (its thread pools) is not; each
rank takes the caller's environment variables and working directory, as a spawned one would.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import traceback
from typing import Any, Callable, Iterator

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

WORLD_SIZE = 2


# what every rank imports, once, in the fork server (read when the server starts, on the first forked run)
mp.get_context("forkserver").set_forkserver_preload(["torch", "torch.distributed", "torchmetrics"])


def _init(rank: int, store_path: str, world_size: int = WORLD_SIZE) -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"file://{store_path}", rank=rank, world_size=world_size)


def _scenario_worker(
    rank: int,
    store_path: str,
    out_dir: str,
    metric_cls: type,
    batches: list,
    metric_kwargs: dict,
    splits: dict[str, tuple[list[int], ...]],
) -> None:
    try:
        _init(rank, store_path)
        results = {}
        for name, assignment in splits.items():
            metric = metric_cls(**metric_kwargs)
            for index in assignment[rank]:
                metric.update(*batches[index])
            results[name] = metric.compute()
        torch.save({"ok": results}, os.path.join(out_dir, f"rank{rank}.pt"))
    except BaseException:  # report, do not hang the other rank's test
        torch.save({"error": traceback.format_exc()}, os.path.join(out_dir, f"rank{rank}.pt"))
        raise
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def _function_worker(rank: int, store_path: str, out_dir: str, world_size: int, fn: Callable, args: tuple) -> None:
    try:
        _init(rank, store_path, world_size)
        torch.save({"ok": fn(rank, *args)}, os.path.join(out_dir, f"rank{rank}.pt"))
    except BaseException:
        torch.save({"error": traceback.format_exc()}, os.path.join(out_dir, f"rank{rank}.pt"))
        raise
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def _as_caller(rank: int, environ: dict, cwd: str, worker: Callable, *args: Any) -> None:
    """Run ``worker(rank, *args)`` with the caller's environment and working directory (a forked rank has the fork
    server's, taken when the server started)."""
    os.environ.clear()
    os.environ.update(environ)
    os.chdir(cwd)
    worker(rank, *args)


def _start_ranks(
    worker: Callable, args: tuple, world_size: int = WORLD_SIZE, start_method: str = "forkserver"
) -> list[Any]:
    for _ in range(_MESH_ATTEMPTS - 1):
        try:
            return _start_ranks_once(worker, args, world_size, start_method)
        except _MeshNotFormed:
            continue
    return _start_ranks_once(worker, args, world_size, start_method)


#: gloo's TCP mesh between the ranks sometimes fails to form on a loaded 2-core host ("Gloo connectFullMesh failed …
#: Connection closed by peer" in ``init_process_group``, before any test code ran; PyTorch's own gloo tests flake
#: the same way): such a start is retried, with a fresh store; any other failure is the test's
_MESH_ATTEMPTS = 3


class _MeshNotFormed(AssertionError):
    pass


def _start_ranks_once(worker: Callable, args: tuple, world_size: int, start_method: str) -> list[Any]:
    with tempfile.TemporaryDirectory() as out_dir:
        store_path = os.path.join(out_dir, "store")
        try:
            mp.start_processes(_as_caller, args=(dict(os.environ), os.getcwd(), worker, store_path, out_dir, *args),
                               nprocs=world_size, join=True, start_method=start_method)
        except Exception as exc:  # surface the child's traceback rather than spawn's summary
            errors = []
            for rank in range(world_size):
                path = os.path.join(out_dir, f"rank{rank}.pt")
                if os.path.exists(path):
                    errors.append(torch.load(path, weights_only=False).get("error", ""))
            errors = [error for error in errors if error]
            message = "DDP worker failed:\n" + "\n".join(errors)
            if errors and all("Gloo connectFullMesh failed" in error for error in errors):
                raise _MeshNotFormed(message) from exc
            raise AssertionError(message) from exc
        outputs = [torch.load(os.path.join(out_dir, f"rank{r}.pt"), weights_only=False) for r in range(world_size)]
    return [out["ok"] for out in outputs]


def run_ddp_scenarios(
    metric_cls: type, batches: list, metric_kwargs: dict, splits: dict[str, tuple[list[int], ...]]
) -> dict[str, list[Any]]:
    """Update a fresh metric per scenario on each rank with its share of ``batches`` and compute.

    Args:
        metric_cls: picklable metric class.
        batches: update-argument tuples.
        metric_kwargs: constructor options.
        splits: scenario name → (batch indices of rank 0, batch indices of rank 1).

    Returns:
        scenario name → ``[value on rank 0, value on rank 1]``.
    """
    per_rank = _start_ranks(_scenario_worker, (metric_cls, batches, metric_kwargs, splits))
    return {name: [per_rank[r][name] for r in range(WORLD_SIZE)] for name in splits}


def run_ddp_function(
    fn: Callable, *args: Any, world_size: int = WORLD_SIZE, start_method: str = "forkserver"
) -> list[Any]:
    """Call ``fn(rank, *args)`` in each of ``world_size`` gloo ranks (``fn`` must be importable); their results.
    ``start_method="spawn"``: fresh interpreters (ranks that use CUDA: no process they come from has touched it)."""
    return _start_ranks(_function_worker, (world_size, fn, args), world_size, start_method)


@contextlib.contextmanager
def record_collectives() -> Iterator[list[tuple[str, int]]]:
    """Record the collectives issued inside the block as ``(name, bytes this rank receives)``.

    Received bytes: an ``all_reduce`` hands back one tensor of its input's size; an ``all_gather`` fills one output
    per rank; ``all_gather_object`` / ``broadcast_object_list`` payloads are pickled objects, recorded as 0 bytes.
    """
    calls: list[tuple[str, int]] = []
    originals = {name: getattr(dist, name) for name in
                 ("all_reduce", "all_gather", "all_gather_into_tensor", "all_gather_object", "broadcast")}

    def received(name: str, args: tuple, kwargs: dict) -> int:
        if name == "all_reduce" or name == "broadcast":
            return (args[0] if args else kwargs["tensor"]).nbytes
        if name == "all_gather":
            return sum(t.nbytes for t in (args[0] if args else kwargs["tensor_list"]))
        if name == "all_gather_into_tensor":
            return (args[0] if args else kwargs["output_tensor"]).nbytes
        return 0

    def recording(name: str) -> Callable:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append((name, received(name, args, kwargs)))
            return originals[name](*args, **kwargs)

        return call

    for name in originals:
        setattr(dist, name, recording(name))
    try:
        yield calls
    finally:
        for name, original in originals.items():
            setattr(dist, name, original)

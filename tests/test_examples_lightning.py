"""The Lightning example project (``examples/lightning_ddp``) run as a user runs it, on 2 CPU processes (DDP, gloo)
and on 1: every logged value equals the functional metric on the whole validation set."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from torch.utils.data import DistributedSampler

from gpumetrics import functional as F
from testkit.checkout import checkout_pythonpath

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "lightning_ddp"
RUN_TIMEOUT_S = 300
#: variables of an enclosing distributed launch, which would make the example join it instead of starting its own
LAUNCH_VARIABLES = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "NODE_RANK", "GROUP_RANK",
                    "MASTER_ADDR", "MASTER_PORT")


def _load_example_module(name: str):
    spec = importlib.util.spec_from_file_location(f"lightning_ddp_{name}", EXAMPLE / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


example_data = _load_example_module("data")
example_model = _load_example_module("model")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _start(devices: int, output: Path) -> subprocess.Popen:
    env = {key: value for key, value in os.environ.items() if key not in LAUNCH_VARIABLES}
    env.update(
        PYTHONPATH=checkout_pythonpath(),  # this checkout's code
        MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()), OMP_NUM_THREADS="1",
    )
    command = [sys.executable, str(EXAMPLE / "train.py"), "--devices", str(devices), "--output", str(output)]
    # a session of its own, so that a timeout can end rank 0 and the rank it launched together
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def _finish(process: subprocess.Popen, output: Path) -> dict:
    try:
        log, _ = process.communicate(timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        log, _ = process.communicate()
        pytest.fail(f"the example ran past {RUN_TIMEOUT_S} s:\n{log[-4000:]}")
    assert process.returncode == 0, f"the example failed ({process.returncode}):\n{log[-4000:]}"
    return json.loads(output.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[int, dict]:
    """The example's JSON report per number of processes; both runs start together to save wall time."""
    folder = tmp_path_factory.mktemp("lightning_ddp")
    outputs = {devices: folder / f"devices{devices}.json" for devices in (1, 2)}
    processes = {devices: _start(devices, output) for devices, output in outputs.items()}
    return {devices: _finish(processes[devices], outputs[devices]) for devices in processes}


def _whole_set() -> tuple[list[str], list[list[str]]]:
    records = example_data.read_records()
    return [example_model.gloss(record["source"]) for record in records], [record["references"] for record in records]


def _functional_values(preds: list[str], target: list[list[str]]) -> dict[str, float]:
    """What the example logs, from the functional metrics on one corpus, with the options the example uses."""
    rouge = F.rouge_score(preds, target, rouge_keys=("rouge1", "rougeL"))
    values = {
        "val_cer": F.char_error_rate(preds, target),
        "val_bleu": F.bleu_score(preds, target, mode="sacrebleu"),
        "val_cider": F.cider_score(preds, target),
        "val_token_f1": F.token_f1(preds, target, preset="squad"),
        "val_exact_match": F.exact_match(preds, target, preset="squad"),
        **{f"val_{key}": value for key, value in rouge.items()},
    }
    return {name: float(value) for name, value in values.items()}


def test_example_data_is_real_world_text_split_unevenly():
    preds, target = _whole_set()
    assert len(preds) == 13
    assert "" in preds  # a filler the glossary drops: an empty prediction
    assert any(len(refs) >= 3 for refs in target) and any(len(refs) == 1 for refs in target)
    assert any(not text.isascii() for text in preds) and any(not ref.isascii() for refs in target for ref in refs)
    shards = [example_data.rank_shard(len(preds), rank, 2) for rank in range(2)]
    assert [len(shard) for shard in shards] == [7, 6]  # batches of 3: 3 + 3 + 1 on rank 0, 3 + 3 on rank 1


@pytest.mark.parametrize("world_size", [1, 2, 3, 5, 20])
def test_rank_shards_hold_every_sample_once(world_size):
    shards = [example_data.rank_shard(13, rank, world_size) for rank in range(world_size)]
    assert sorted(index for shard in shards for index in shard) == list(range(13))


@pytest.mark.parametrize(("rank", "world_size", "bad"), [(0, 0, "world_size"), (2, 2, "rank"), (-1, 2, "rank")])
def test_rank_shard_names_the_bad_argument(rank, world_size, bad):
    with pytest.raises(ValueError, match=f"^{bad} must"):
        example_data.rank_shard(13, rank, world_size)


def test_glossary_model_is_deterministic_word_by_word():
    assert example_model.gloss("Das Haus ist groß.") == "The house is big."
    assert example_model.gloss("Er spricht Japanisch: こんにちは!") == "He speaks Japanese: こんにちは!"
    assert example_model.gloss("Ähm…") == ""


def test_a_padding_sampler_would_change_the_values():
    """Why the example shards the data itself: Lightning's default DistributedSampler repeats a sample to even out
    the ranks, and the repeated sample moves every value far beyond the tolerance checked below."""
    preds, target = _whole_set()
    padded = [i for rank in range(2) for i in DistributedSampler(range(13), num_replicas=2, rank=rank, shuffle=False)]
    assert len(padded) == 14
    with_repeat = _functional_values([preds[i] for i in padded], [target[i] for i in padded])
    expected = _functional_values(preds, target)
    assert min(abs(with_repeat[name] - expected[name]) for name in expected) > 1e-3


@pytest.mark.ddp
def test_two_processes_score_every_sample_once(reports):
    assert reports[2]["world_size"] == 2 and reports[2]["samples_per_rank"] == [7, 6]
    assert reports[1]["world_size"] == 1 and reports[1]["samples_per_rank"] == [13]


@pytest.mark.ddp
@pytest.mark.parametrize("devices", [1, 2])
def test_logged_values_equal_the_functional_metrics_on_the_whole_set(reports, devices):
    expected = _functional_values(*_whole_set())
    logged = reports[devices]["metrics"]
    assert sorted(logged) == sorted(expected)
    for name, value in expected.items():
        assert logged[name] == pytest.approx(value, rel=0, abs=1e-12), name
    # the data exercises partial matches, not a trivial 0 or 1
    assert all(0 < value < 1 for name, value in expected.items() if name != "val_cider")
    assert expected["val_cider"] > 0


@pytest.mark.ddp
def test_two_processes_log_what_one_process_logs(reports):
    one, two = reports[1]["metrics"], reports[2]["metrics"]
    assert sorted(two) == sorted(one)
    for name, value in one.items():
        assert two[name] == pytest.approx(value, rel=0, abs=1e-12), name

"""``core.check_device``: the one validator behind every ``device`` argument and ``--device`` option.

Availability is monkeypatched (no CUDA / 2 GPUs / MPS), so these run on any machine; the real-CUDA case is
``test_real_cuda_devices`` (skipped without CUDA).
"""

from __future__ import annotations

import functools
import json

import inspect
from pathlib import Path

import pytest
import torch
import yaml

import gpumetrics.functional as F
from gpumetrics import cli
from gpumetrics.core import available_devices, check_device, parse_device
from gpumetrics.harness.config import ConfigError, load_config
from gpumetrics.harness.runner import evaluate

DEMO = str(Path(__file__).resolve().parents[2] / "configs" / "demo.yaml")


@pytest.fixture
def machine(monkeypatch):
    """``machine(cuda=N, mps=bool)``: what torch reports as available from now on in this test."""

    def set_machine(cuda: int = 0, mps: bool = False, xpu: int = 0) -> None:
        monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda > 0)
        monkeypatch.setattr(torch.cuda, "device_count", lambda: cuda)
        monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)
        monkeypatch.setattr(torch.xpu, "is_available", lambda: xpu > 0)
        monkeypatch.setattr(torch.xpu, "device_count", lambda: xpu)
        monkeypatch.setattr(torch.mtia, "is_available", lambda: False)

    return set_machine


def test_cpu_only_machine(machine):
    machine(cuda=0)
    assert available_devices() == ["cpu"]
    for ok in (None, "cpu", torch.device("cpu"), "cpu:0"):
        assert check_device(ok).type == "cpu"
    for bad in ("cuda", "cuda:0", 0, torch.device("cuda", 1)):
        with pytest.raises(ValueError, match=r"`device` is 'cuda(:\d)?', but CUDA is not available on this machine; "
                                             r"available: cpu$"):
            check_device(bad)
    with pytest.raises(ValueError, match="`device` is 'mps', but MPS is not available on this machine; available: cpu"):
        check_device("mps")
    with pytest.raises(ValueError, match="XPU is not available"):
        check_device("xpu:0")


@pytest.mark.parametrize("bad", ["tpu", "TPU", "gpu", "cuda:x", "cuda:-1", "", "cuda:0 "])
def test_names_torch_does_not_know(machine, bad):
    machine(cuda=2)
    with pytest.raises(ValueError, match=rf"`device` must be a torch device such as .*, got {bad!r}; "
                                         r"available here: cpu, cuda:0, cuda:1"):
        check_device(bad)
    with pytest.raises(ValueError, match="must be a torch device"):
        parse_device(bad)


def test_index_beyond_the_device_count(machine):
    machine(cuda=2)
    assert available_devices() == ["cpu", "cuda:0", "cuda:1"]
    assert check_device("cuda") == torch.device("cuda")
    assert check_device("cuda:1") == torch.device("cuda", 1) == check_device(1)
    with pytest.raises(ValueError, match=r"`device` is 'cuda:7', but this machine has 2 CUDA devices \(indices 0..1\); "
                                         r"available: cpu, cuda:0, cuda:1"):
        check_device("cuda:7")
    with pytest.raises(ValueError, match=r"`--device` is 'cuda:2'"):
        check_device(torch.device("cuda", 2), "--device")


def test_mps_and_xpu_when_present(machine):
    machine(cuda=0, mps=True, xpu=1)
    assert available_devices() == ["cpu", "xpu:0", "mps"]
    assert check_device("mps") == torch.device("mps")
    assert check_device("xpu") == torch.device("xpu")
    with pytest.raises(ValueError, match="has 1 MPS device"):
        check_device("mps:1")


def test_meta_and_wrong_types(machine):
    machine(cuda=0)
    with pytest.raises(ValueError, match="`device` must be a device that holds data, got 'meta'"):
        check_device("meta")
    for bad in (1.5, True, ["cpu"], b"cpu"):
        with pytest.raises(TypeError, match="`device` must be a device name such as 'cpu' or 'cuda:0'"):
            check_device(bad)
    assert parse_device("cuda:3") == torch.device("cuda", 3)  # syntax only: a config may name another machine's GPU


def _functions_with_a_device_argument():
    return sorted(name for name in F.__all__ if "device" in inspect.signature(getattr(F, name)).parameters)


def test_every_function_with_a_device_argument_checks_it(machine, tmp_path):
    from tests.core.test_host_syncs import TINY_OPEN_CLIP

    machine(cuda=0)
    names = _functions_with_a_device_argument()
    assert names == sorted([
        "token_f1", "exact_match", "string_accuracy", "edit_distance", "char_error_rate", "word_error_rate",
        "normalized_edit_similarity", "bleu_score", "rouge_score", "cider_score", "meteor_score", "codebleu_score",
        "coco_caption_scores", "vqa_accuracy",
        "shapley_values", "marginal_contributions", "corpus_bleu_shapley", "corpus_cider_shapley",
        "word_movers_distance", "clip_score",
    ])  # a new one joins this list and the loop below
    clip_config = tmp_path / "tiny-clip.json"
    clip_config.write_text(json.dumps(TINY_OPEN_CLIP))
    required = {"codebleu_score": {"language": "python"},  # options without a default
                "word_movers_distance": {"embeddings": {"a": [1.0, 0.0], "b": [0.0, 1.0]}},
                "clip_score": {"backend": "open_clip", "model_name": str(clip_config), "pretrained": "random"}}
    game = lambda coalitions: coalitions.sum(1)  # noqa: E731
    arguments = {"shapley_values": (game, 3), "marginal_contributions": (game, 3, 0),  # not (preds, target)
                 "clip_score": (torch.zeros(1, 3, 32, 32, dtype=torch.uint8), ["a b"])}
    for name in names:
        fn = functools.partial(getattr(F, name), **required.get(name, {}))
        args = arguments.get(name, (["a b"], ["a b"]))
        assert fn(*args, device="cpu") is not None
        for bad, message in (("tpu", "must be a torch device"), ("cuda", "CUDA is not available"),
                             ("mps", "MPS is not available")):
            with pytest.raises(ValueError, match=rf"`device`.*{message}.*available(: | here: )cpu"):
                fn(*args, device=bad)


def test_kernel_entry_points_check_their_device(machine):
    from gpumetrics.kernels.levenshtein_routes import levenshtein_strings
    from gpumetrics.kernels.text_rows import encode_chars, encode_words
    from gpumetrics.text.tokenize import encode_tokens

    machine(cuda=0)
    calls = [
        lambda device: levenshtein_strings(["ab"], ["b"], backend="torch", device=device),
        lambda device: encode_chars(["ab"], device=device),
        lambda device: encode_words([["a"]], {}, device=device),
        lambda device: encode_tokens(["a"], [1]).to(device),
    ]
    for call in calls:
        assert _first(call(None)).device.type == "cpu"
        for bad in ("tpu", "cuda", 0):  # 0 is cuda:0 to torch; it used to fall back to the CPU (`device or "cpu"`)
            with pytest.raises(ValueError, match="`device`"):
                call(bad)


def _first(value):
    return value if isinstance(value, torch.Tensor) else value[0]


def _run(args, capsys):
    code = cli.main([str(a) for a in args])
    return code, capsys.readouterr().err


def test_cli_device_options(machine, capsys, tmp_path):
    machine(cuda=2)
    code, err = _run(["evaluate", DEMO, "--device", "tpu"], capsys)
    assert code == 2 and "`--device` must be a torch device" in err and "available here: cpu, cuda:0, cuda:1" in err
    code, err = _run(["evaluate", DEMO, "--device", "cuda:7"], capsys)
    assert code == 2 and "this machine has 2 CUDA devices" in err
    machine(cuda=0)
    code, err = _run(["evaluate", DEMO, "--device", "cuda"], capsys)
    assert code == 2 and "`--device` is 'cuda', but CUDA is not available on this machine; available: cpu" in err
    for command in (["fid", tmp_path, tmp_path], ["clip-score", "--images", tmp_path, "--captions", tmp_path / "c"]):
        code, err = _run([*command, "--device", "cuda:1"], capsys)
        assert code == 2 and "`--device` is 'cuda:1', but CUDA is not available" in err, err


def _demo_config(tmp_path: Path, device: str) -> Path:
    """The demo config with ``device`` set, written to ``tmp_path`` with absolute data paths."""
    demo = Path(DEMO)
    raw = yaml.safe_load(demo.read_text(encoding="utf-8"))
    for task in raw["tasks"]:
        for key in ("predictions", "references"):
            task[key] = str((demo.parent / task[key]).resolve())
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({**raw, "device": device}), encoding="utf-8")
    return path


def test_config_device_is_read_anywhere_and_checked_when_run(machine, tmp_path):
    machine(cuda=0)
    config = load_config(_demo_config(tmp_path, "mps"))  # a config written for a Mac loads here…
    assert config.device == "mps"
    with pytest.raises(ConfigError, match=rf"^{config.path}: `device` is 'mps', but MPS is not available on this "
                                          r"machine; available: cpu$"):
        evaluate(config)  # …and running it says why not
    assert evaluate(config, device="cpu").device == "cpu"  # --device overrides
    with pytest.raises(ConfigError, match=r"config.yaml: device: `device` must be a torch device such as"):
        load_config(_demo_config(tmp_path, "tpu"))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_real_cuda_devices():
    count = torch.cuda.device_count()
    assert available_devices()[1:count + 1] == [f"cuda:{i}" for i in range(count)]
    assert check_device("cuda") == torch.device("cuda")
    assert F.token_f1(["a b"], ["a b"], device="cuda").device.type == "cuda"
    with pytest.raises(ValueError, match=f"this machine has {count} CUDA device"):
        check_device(f"cuda:{count}")

"""The precision policy (gpumetrics.image.precision): mode names, and TF32 flags set during a forward and restored."""

from __future__ import annotations

import pytest
import torch

from gpumetrics.image.precision import PRECISIONS, SpeedMode, _fp32_flags, parse_speed_mode, precision_scope


@pytest.mark.parametrize("name, expected", [
    (None, SpeedMode()), ("fp32", SpeedMode()), ("tf32", SpeedMode("tf32")), ("bf16", SpeedMode("bf16")),
    ("channels_last", SpeedMode(channels_last=True)), ("compile", SpeedMode(compile=True)),
    ("fp16+channels_last+compile", SpeedMode("fp16", True, True)), ("fastest", SpeedMode("bf16", True)),
    ("tf32+compile", SpeedMode("tf32", compile=True)),
])
def test_names_parse_to_one_canonical_mode(name, expected):
    mode = parse_speed_mode(name)
    assert mode == expected
    if mode.name is not None:
        assert parse_speed_mode(mode.name) == mode


@pytest.mark.parametrize("name, message", [
    ("fp8", "expected None"), ("bf16+fp16", "two precisions"), ("channels_last+bf16", "precision first"),
    ("compile+channels_last", "then compile"), ("bf16+bf16", "each once"), ("", "expected None"),
])
def test_bad_names_are_value_errors_naming_the_option(name, message):
    with pytest.raises(ValueError, match=message) as error:
        parse_speed_mode(name, "speed_mode")
    assert "`speed_mode`" in str(error.value)


def test_a_network_may_accept_precisions_only():
    assert parse_speed_mode("bf16", allowed=PRECISIONS) == SpeedMode("bf16")
    with pytest.raises(ValueError, match="'tf32' / 'bf16' / 'fp16'"):
        parse_speed_mode("channels_last", allowed=PRECISIONS)
    with pytest.raises(TypeError, match="speed_mode"):
        parse_speed_mode(16)


def _flag_values():
    return [getattr(owner, attr) for owner, attr in _fp32_flags()]


def _set_flags(values):
    for (owner, attr), value in zip(_fp32_flags(), values):
        setattr(owner, attr, value)


@pytest.mark.parametrize("precision, inside", [("fp32", False), ("bf16", False), ("fp16", False), ("tf32", True)])
def test_tf32_is_off_except_in_tf32_mode_and_the_callers_flags_come_back(precision, inside):
    before = _flag_values()
    modern = isinstance(before[0], str)
    try:
        for caller in ("tf32", "ieee") if modern else (True, False):
            _set_flags([caller] * len(before))
            with precision_scope(SpeedMode(precision), "cpu"):
                seen = _flag_values()
            expected = ("tf32" if inside else "ieee") if modern else inside
            assert seen == [expected] * len(seen)
            assert _flag_values() == [caller] * len(seen)
    finally:
        _set_flags(before)
    assert _flag_values() == before


def test_flags_are_restored_when_the_forward_raises():
    before = _flag_values()
    with pytest.raises(RuntimeError, match="boom"):
        with precision_scope(SpeedMode("tf32"), "cpu"):
            raise RuntimeError("boom")
    assert _flag_values() == before


@pytest.mark.parametrize("caller", [False, True])
def test_cudnn_searches_algorithms_in_speed_modes_only_and_the_callers_setting_comes_back(caller):
    before = torch.backends.cudnn.benchmark
    torch.backends.cudnn.benchmark = caller
    try:
        for mode, inside in ((SpeedMode(), caller), (SpeedMode("bf16", channels_last=True), True),
                             (SpeedMode("tf32"), True)):
            with precision_scope(mode, "cpu"):
                assert torch.backends.cudnn.benchmark is inside
            assert torch.backends.cudnn.benchmark is caller
        with pytest.raises(RuntimeError, match="boom"):
            with precision_scope(SpeedMode("fp16"), "cpu"):
                raise RuntimeError("boom")
        assert torch.backends.cudnn.benchmark is caller
    finally:
        torch.backends.cudnn.benchmark = before


def test_autocast_runs_only_for_bf16_and_fp16():
    layer = torch.nn.Linear(4, 4)
    x = torch.rand(2, 4)
    for precision, dtype in (("fp32", torch.float32), ("tf32", torch.float32), ("bf16", torch.bfloat16)):
        with precision_scope(SpeedMode(precision), "cpu"):
            assert layer(x).dtype == dtype


@pytest.mark.parametrize("precision", ["bf16", "fp16"])
@pytest.mark.parametrize("hardware", [False, True])
def test_half_precision_on_a_cpu_without_its_hardware_warns_once(precision, hardware, monkeypatch):
    import warnings

    from gpumetrics.image import precision as precision_module

    monkeypatch.setattr(torch.ops.mkldnn, precision_module._HARDWARE_PROBES[precision], lambda: hardware, raising=False)
    precision_module._warn_if_emulated.cache_clear()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(2):
                with precision_scope(SpeedMode(precision), "cpu"):
                    pass
            with precision_scope(SpeedMode(precision), "cuda"), precision_scope(SpeedMode("tf32"), "cpu"):
                pass
    finally:
        precision_module._warn_if_emulated.cache_clear()
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    if hardware:
        assert messages == []
    else:
        assert len(messages) == 1 and f"speed_mode {precision!r} on this CPU" in messages[0], messages

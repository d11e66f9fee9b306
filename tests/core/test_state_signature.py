"""States carry what they were computed with: checkpoints and merges between differently configured metrics fail."""

from __future__ import annotations

import io

import pytest
import torch

import gpumetrics
from tests.core.toy_metrics import SumAndCat


def _checkpoint(metric):
    metric.persistent(True)
    buffer = io.BytesIO()
    torch.save(metric.state_dict(), buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


def test_token_f1_preset_checkpoint_is_refused_naming_both():
    source = gpumetrics.TokenF1(preset="aij2022")
    source.update(["The cat!"], ["the cat"])
    state = _checkpoint(source)
    assert bytes(state["_signature"].tolist()).decode() == "token_f1|preset:aij2022"
    target = gpumetrics.TokenF1(preset="squad")
    target.update(["x"], ["x"])
    before = (target.score_sum.clone(), target.count.clone())
    with pytest.raises(ValueError, match=r"token_f1\|preset:aij2022.*token_f1\|preset:squad"):
        target.load_state_dict(state)
    assert torch.equal(target.score_sum, before[0]) and torch.equal(target.count, before[1])  # nothing loaded
    same = gpumetrics.TokenF1(preset="aij2022")
    same.load_state_dict(state)
    assert torch.equal(same.compute(), source.compute())


def test_checkpoint_without_signature_still_loads():
    source = gpumetrics.TokenF1()
    source.update(["a b"], ["a c"])
    state = _checkpoint(source)
    state.pop("_signature")
    restored = gpumetrics.TokenF1()
    restored.load_state_dict(state)
    assert torch.equal(restored.compute(), source.compute())


def test_signature_ignores_the_library_version(monkeypatch):
    source = gpumetrics.BLEUScore()
    source.update(["a b c d"], [["a b c d"]])
    state = _checkpoint(source)
    monkeypatch.setattr("gpumetrics.core.signature.library_version", lambda: "99.0")
    restored = gpumetrics.BLEUScore()
    assert restored.signature().endswith("version:99.0")
    restored.load_state_dict(state)
    assert torch.equal(restored.compute(), source.compute())


def test_cer_merge_with_other_transform_is_refused():
    a = gpumetrics.CharErrorRate()
    b = gpumetrics.CharErrorRate(transform="jiwer")
    a.update([" ab"], ["ab "])
    b.update([" ab"], ["ab "])
    with pytest.raises(ValueError, match=r"transform:jiwer.*transform:none"):
        a.merge_state(b)
    c = gpumetrics.CharErrorRate()
    c.update(["ab"], ["ac"])
    a.merge_state(c)  # same configuration: merged
    assert int(a.errors) == int(c.errors) + 2


def test_other_options_are_checked_too():
    bleu = gpumetrics.BLEUScore(tokenize="char")
    bleu.update(["abc"], [["abd"]])
    with pytest.raises(ValueError, match="signatures differ"):
        gpumetrics.BLEUScore().load_state_dict(_checkpoint(bleu))
    with pytest.raises(ValueError, match="signatures differ"):
        gpumetrics.BLEUScore().merge_state(bleu)
    wer = gpumetrics.WordErrorRate(transform="jiwer")
    with pytest.raises(ValueError, match="signatures differ"):
        gpumetrics.WordErrorRate().load_state_dict(_checkpoint(wer))


def test_signature_is_no_ddp_state_and_the_dict_form_of_merge_is_unchanged():
    metric = SumAndCat()
    assert "_signature" not in metric._reductions and "_signature" not in metric._defaults
    metric.update(torch.ones(2, 3))
    metric.merge_state({"total": torch.ones(3, dtype=torch.float64), "count": torch.tensor(1),
                        "peak": torch.tensor(1.0, dtype=torch.float64), "rows": [torch.zeros(1, 3)]})
    assert int(metric.count) == 3


def test_fid_loaded_statistics_are_states_not_signature_differences(tmp_path):
    import numpy as np
    g = torch.Generator().manual_seed(0)
    real = torch.rand(100, 64, generator=g, dtype=torch.float64)
    np.savez(tmp_path / "real.npz", mu=real.mean(0).numpy(), sigma=torch.cov(real.T).numpy())
    fid = gpumetrics.FrechetInceptionDistance(feature=64, weights="random")
    fid.load_stats(tmp_path / "real.npz", real=True)
    fid.update_features(torch.rand(100, 64, generator=g), real=False)
    assert "real_stats:loaded" in fid.signature() and "real_stats" not in fid.state_signature()
    fresh = gpumetrics.FrechetInceptionDistance(feature=64, weights="random")  # no load_stats: the checkpoint has them
    fresh.load_state_dict(_checkpoint(fid))
    assert torch.equal(fresh.compute(), fid.compute())
    other = gpumetrics.FrechetInceptionDistance(feature=64, weights="random", resize="clean")
    with pytest.raises(ValueError, match=r"resize:pytorch-fid.*resize:clean"):
        other.load_state_dict(_checkpoint(fid))

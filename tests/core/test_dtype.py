"""Half precision must not change scores: dtype conversions keep float64 / integer metric states.

Lightning's ``"16-true"`` / ``"bf16-true"`` call ``model.to(dtype)``; torchmetrics guards ``.half()`` & co. but not
``.to(dtype)``. ``Metric._apply`` moves states to the new device only; ``set_dtype`` casts floating states that are
not float64 (and an owned encoder's weights), never float64, integer or bool ones.
"""

from __future__ import annotations

import random

import pytest
import torch
import torchmetrics
from torch.utils.data import DataLoader

import gpumetrics
from gpumetrics import functional as F
from gpumetrics.core import Metric
from tests.core.toy_metrics import SumAndCat

CONVERSIONS = {
    "to(float16)": lambda m: m.to(torch.float16),
    "to(bfloat16)": lambda m: m.to(dtype=torch.bfloat16),
    "to(cpu, float16)": lambda m: m.to("cpu", torch.float16),
    "half": lambda m: m.half(),
    "bfloat16": lambda m: m.bfloat16(),
    "float": lambda m: m.float(),
    "double": lambda m: m.double(),
    "type(half)": lambda m: m.type(torch.half),
    "set_dtype(half)": lambda m: m.set_dtype(torch.half),
    "set_dtype(bfloat16)": lambda m: m.set_dtype(torch.bfloat16),
    "set_dtype(float32)": lambda m: m.set_dtype(torch.float32),
    "parent.to(half)": lambda m: torch.nn.ModuleDict({"m": m}).to(torch.half),
    "collection.to(bf16)": lambda m: torchmetrics.MetricCollection({"m": m}).to(torch.bfloat16),
}


def _words(rng, n):
    vocab = "the a cat dog sat on mat red blue big small über 東京 and of".split()
    return " ".join(rng.choice(vocab) for _ in range(n))


def _qa_data(seed=0, size=300):
    rng = random.Random(seed)
    preds = [_words(rng, rng.randint(0, 6)) for _ in range(size)]
    target = [[_words(rng, rng.randint(1, 6)) for _ in range(rng.randint(1, 3))] for _ in range(size)]
    return preds, target


def _mt_data(seed=0, size=200):
    rng = random.Random(seed)
    preds = [_words(rng, rng.randint(1, 20)) for _ in range(size)]
    target = [[_words(rng, rng.randint(1, 20)) for _ in range(2)] for _ in range(size)]
    return preds, target


def _cer_data(seed=0, size=200):
    preds, target = _qa_data(seed, size)
    return preds, [refs[0] for refs in target]


CASES = {
    "TokenF1": (gpumetrics.TokenF1, _qa_data),
    "BLEUScore": (gpumetrics.BLEUScore, _mt_data),
    "CharErrorRate": (gpumetrics.CharErrorRate, _cer_data),
}


def _tensor_dtypes(metric):
    dtypes = {}
    for name in metric._defaults:
        value = getattr(metric, name)
        if isinstance(value, torch.Tensor):
            dtypes[name] = value.dtype
        else:
            dtypes[name] = [v.dtype for v in value]
    return dtypes


@pytest.mark.parametrize("conversion", CONVERSIONS)
@pytest.mark.parametrize("case", CASES)
def test_conversion_keeps_state_dtypes_and_value(case, conversion):
    cls, data = CASES[case]
    preds, target = data()
    half = len(preds) // 2
    reference = cls()  # the same two updates, unconverted: a float64 sum grouped as the converted metric's
    reference.update(preds[:half], target[:half])
    reference.update(preds[half:], target[half:])
    expected = reference.compute()
    assert expected.dtype == torch.float64

    metric = cls()
    metric.update(preds[:half], target[:half])  # convert mid-stream, with a value cached by compute()
    metric.compute()
    before = _tensor_dtypes(metric)
    CONVERSIONS[conversion](metric)
    assert _tensor_dtypes(metric) == before
    metric.update(preds[half:], target[half:])
    value = metric.compute()
    assert value.dtype == torch.float64 and torch.equal(value, expected)
    metric.reset()  # the defaults kept their dtype too
    assert _tensor_dtypes(metric) == _tensor_dtypes(cls())


def test_half_precision_counts_beyond_float16_range():
    """float16 holds integers exactly only up to 2048 and overflows past 65,504: counts must stay integers."""
    metric = gpumetrics.CharErrorRate()
    metric.set_dtype(torch.half)
    metric.to(torch.half)
    pred, ref = "ab" * 50_000, "ac" * 50_000  # 100,000 reference characters, 50,000 errors
    metric.update([pred], [ref])
    metric.update(["x"], ["y"])
    assert metric.ref_length.dtype == torch.long and int(metric.ref_length) == 100_001
    assert float(metric.compute()) == pytest.approx(50_001 / 100_001, abs=1e-15)

    bleu = gpumetrics.BLEUScore()
    bleu.set_dtype(torch.half)
    words = " ".join(f"w{i % 5000}" for i in range(70_000))
    bleu.update([words], [[words]])
    assert bleu.hyp_len.dtype == torch.float64 and float(bleu.hyp_len) == 70_000
    assert float(bleu.compute()) == pytest.approx(1.0, abs=1e-12)


class _WithEncoder(Metric):
    """A float32 ``cat`` state and an owned float32 encoder beside float64 / integer accumulators."""

    def __init__(self):
        super().__init__()
        self.encoder = torch.nn.Linear(2, 2)
        self.add_state("features", [], dist_reduce_fx="cat")
        self.add_state("total", torch.zeros((), dtype=torch.float64), dist_reduce_fx="sum")
        self.add_state("seen", torch.zeros((), dtype=torch.long), dist_reduce_fx="sum")
        self.add_state("flag", torch.zeros((), dtype=torch.bool), dist_reduce_fx="max")

    def update(self, x):
        self.features.append(x.float())
        self.total += x.double().sum()
        self.seen += x.shape[0]

    def compute(self):
        return self.total


def test_implicit_conversions_change_no_dtype_set_dtype_casts_only_float32():
    metric = _WithEncoder()
    metric.update(torch.ones(3, 2))
    metric.to(torch.half)
    metric.bfloat16()
    assert metric.encoder.weight.dtype == torch.float32  # the encoder keeps its float32 precision policy
    assert metric.features[0].dtype == torch.float32 and metric.dtype == torch.float32
    assert (metric.total.dtype, metric.seen.dtype, metric.flag.dtype) == (torch.float64, torch.long, torch.bool)

    metric.set_dtype(torch.half)  # the explicit request: float32 tensors follow, accumulators do not
    assert metric.encoder.weight.dtype == torch.half and metric.features[0].dtype == torch.half
    assert metric.dtype == torch.half
    assert (metric.total.dtype, metric.seen.dtype, metric.flag.dtype) == (torch.float64, torch.long, torch.bool)
    metric.update(torch.ones(2, 2))
    assert float(metric.compute()) == 10.0


def test_device_moves_still_move_states():
    metric = SumAndCat()
    metric.update(torch.rand(2, 3))
    metric.to("meta")
    assert metric.total.device.type == "meta" and metric.rows[0].device.type == "meta"
    assert metric.total.dtype == torch.float64 and metric.device.type == "meta"
    # its states hold no data: an update names the metric and the move (CER named a `device` no one had passed)
    for moved in (metric, gpumetrics.CharErrorRate().to("meta")):
        with pytest.raises(ValueError, match=r"(SumAndCat|CharErrorRate) is on the meta device.*before update"):
            moved.update(*((torch.rand(2, 3),) if moved is metric else (["ab"], ["ac"])))


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_to_cuda_half_moves_and_keeps_dtype():
    metric = gpumetrics.TokenF1()
    metric.update(["cat sat"], ["cat ran"])  # F1 0.5 (no article: SQuAD's normaliser drops "a", "an", "the")
    metric.to("cuda", torch.half)
    assert metric.score_sum.device.type == "cuda" and metric.score_sum.dtype == torch.float64
    metric.update(["x"], ["x"])
    assert float(metric.compute()) == pytest.approx(0.75, abs=1e-15)


# --- Lightning: "16-true" / "bf16-true" convert the whole LightningModule with ``.to(dtype)``

import lightning as L  # noqa: E402  (a test dependency)


class _Model(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(1, 1)
        self.val_f1 = gpumetrics.TokenF1()
        self.val_bleu = gpumetrics.BLEUScore()
        self.val_cer = gpumetrics.CharErrorRate()

    def validation_step(self, batch, batch_idx):
        preds, target = batch
        self.layer(torch.ones(1, 1, dtype=self.layer.weight.dtype))
        self.val_f1.update(preds, target)
        self.val_bleu.update(preds, target)
        self.val_cer.update(preds, [refs[0] for refs in target])
        for name in ("val_f1", "val_bleu", "val_cer"):
            self.log(name, getattr(self, name), on_step=False, on_epoch=True, batch_size=len(preds))


@pytest.mark.parametrize("precision", ["16-true", "bf16-true"])
def test_lightning_true_half_precision_logs_the_float64_value(precision):
    preds, target = _mt_data(seed=1, size=120)
    loader = DataLoader(list(zip(preds, target)), batch_size=16, shuffle=False,
                        collate_fn=lambda items: ([p for p, _ in items], [t for _, t in items]))
    model = _Model()
    trainer = L.Trainer(accelerator="cpu", devices=1, precision=precision, logger=False, enable_checkpointing=False,
                        enable_progress_bar=False, enable_model_summary=False)
    (result,) = trainer.validate(model, dataloaders=loader, verbose=False)
    half = torch.float16 if precision == "16-true" else torch.bfloat16
    assert model.layer.weight.dtype == half  # Lightning did convert the model
    assert model.val_f1.score_sum.dtype == torch.float64 and model.val_f1.count.dtype == torch.long
    assert model.val_bleu.matches.dtype == torch.float64 and model.val_cer.errors.dtype == torch.long
    expected = {
        "val_f1": float(F.token_f1(preds, target)),
        "val_bleu": float(F.bleu_score(preds, target)),
        "val_cer": float(F.char_error_rate(preds, [refs[0] for refs in target])),
    }
    for name, value in expected.items():  # the logged epoch value equals the float64 one (to Lightning's float32)
        assert result[name] == pytest.approx(value, abs=1e-7), name

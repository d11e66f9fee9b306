"""A real Lightning ``LightningModule`` + ``Trainer`` (CPU) logging gpumetrics metrics in ``validation_step``."""

from __future__ import annotations

import pytest
import torch
from torch.utils.data import DataLoader

import gpumetrics
from gpumetrics import functional as F

import lightning as L  # noqa: E402  (a test dependency: never skipped)

FIRST = [
    ("Москва", ["Москва"]),
    ("the Eiffel tower", ["Eiffel Tower", "la tour Eiffel"]),
    ("", ["Jupiter"]),
    ("", [""]),
    ("Sir Isaac Newton", ["Isaac Newton"]),
    ("1969 год", ["в 1969 году", "1969"]),
    ("東京 Tokyo", ["Tokyo"]),
    ("азот", ["кислород"]),
    ("Marie Skłodowska-Curie!", ["Marie Curie"]),
]
SECOND = [("a b c", ["a b d"]), ("x", ["y"]), ("Paris", ["paris"])]


def _collate(items):
    preds = [pred for pred, _ in items]
    target = [refs for _, refs in items]
    return preds, target


def _loader(data, batch_size):
    return DataLoader(data, batch_size=batch_size, shuffle=False, collate_fn=_collate)


class QAModel(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(1, 1)
        self.val_f1 = gpumetrics.TokenF1()
        self.val_em = gpumetrics.ExactMatch(preset="squad")

    def training_step(self, batch, batch_idx):
        return self.layer(torch.ones(1, 1)).sum()

    def validation_step(self, batch, batch_idx):
        preds, target = batch
        self.val_f1.update(preds, target)
        self.log("val_f1", self.val_f1, on_step=False, on_epoch=True, batch_size=len(preds))
        self.val_em(preds, target)  # forward: per-batch value, epoch value accumulated
        self.log("val_em", self.val_em, on_step=False, on_epoch=True, batch_size=len(preds))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _trainer(**kwargs):
    return L.Trainer(
        accelerator="cpu", devices=1, logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, **kwargs,
    )


def _expected(data):
    preds, target = _collate(data)
    return float(F.token_f1(preds, target)), float(F.exact_match(preds, target))


def test_validation_epoch_value_equals_functional():
    model = QAModel()
    trainer = _trainer()
    (result,) = trainer.validate(model, dataloaders=_loader(FIRST, batch_size=4), verbose=False)  # batches 4, 4, 1
    f1, em = _expected(FIRST)
    assert 0 < f1 < 1 and 0 < em < f1  # the data exercises partial overlaps, not a trivial 0 or 1
    assert result["val_f1"] == pytest.approx(f1, abs=1e-7)
    assert result["val_em"] == pytest.approx(em, abs=1e-7)
    assert float(trainer.callback_metrics["val_f1"]) == pytest.approx(f1, abs=1e-7)

    # a second run sees only its own data: the metric was reset at the end of the first epoch
    (result,) = trainer.validate(model, dataloaders=_loader(SECOND, batch_size=2), verbose=False)
    f1_second, em_second = _expected(SECOND)
    assert f1_second != pytest.approx(f1)
    assert result["val_f1"] == pytest.approx(f1_second, abs=1e-7)
    assert result["val_em"] == pytest.approx(em_second, abs=1e-7)


def test_fit_logs_epoch_value_every_epoch():
    model = QAModel()
    trainer = _trainer(max_epochs=2, limit_train_batches=1, num_sanity_val_steps=0)
    train = DataLoader([0.0], batch_size=1)
    trainer.fit(model, train_dataloaders=train, val_dataloaders=_loader(FIRST, batch_size=3))
    f1, em = _expected(FIRST)
    assert trainer.current_epoch == 2
    assert float(trainer.callback_metrics["val_f1"]) == pytest.approx(f1, abs=1e-7)
    assert float(trainer.callback_metrics["val_em"]) == pytest.approx(em, abs=1e-7)

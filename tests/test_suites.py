"""The AIJ suites: fixed metrics/options per task, overall = sum, on the shipped examples."""

from pathlib import Path

import pytest

from gpumetrics import functional as F
from gpumetrics.tasks import SUITES
from gpumetrics.tasks.config import load_config
from gpumetrics.tasks.runner import evaluate
from tests.test_cli import _read_any

ROOT = Path(__file__).resolve().parents[1]


def test_aij2022_config_scores_each_task_with_the_suite_preset_and_sums():
    config = load_config(ROOT / "configs" / "aij2022.yaml")
    report = evaluate(config, device="cpu", batch_size=7)
    functions = {
        "TextQA": lambda p, r: F.token_f1(p, r, preset="aij2022"),
        "MathQA": lambda p, r: F.exact_match(p, r, preset="aij2022"),
        "TRitW": lambda p, r: F.normalized_edit_similarity(p, r, preset="aij2022"),
    }
    expected = {}
    for task in config.tasks:
        preds = _read_any(task.predictions, "prediction")
        refs = _read_any(task.references, "references")
        ids = list(refs)
        expected[task.name] = float(functions[task.name]([preds.get(i, "") for i in ids], [refs[i] for i in ids]))
    scores = {result.name: result.score for result in report.tasks}
    assert scores == pytest.approx(expected, abs=1e-12)
    assert report.suite["score"] == pytest.approx(sum(expected.values()), abs=1e-12)


@pytest.mark.parametrize("name", ["aij2022", "aij2021"])
def test_suites_name_what_is_missing(name):
    assert "not yet available" in SUITES[name].description

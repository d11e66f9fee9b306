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


#: every task of each challenge (docs/metrics.md §8), implemented or not
CHALLENGE_TASKS = {
    "aij2022": {"TextQA", "MathQA", "ImageGeneration", "ImageCaptioning", "VisualQA", "TRitW"},
    "aij2021": {"Code2code", "HTR", "ZeroShotDetection", "VQA"},
}


@pytest.mark.parametrize("name", sorted(CHALLENGE_TASKS))
def test_suites_name_what_is_missing(name):
    """A suite lists only challenge tasks; its description names each one it lacks after "not yet available", and
    says nothing is missing only when nothing is."""
    suite = SUITES[name]
    present = {task.name for task in suite.tasks}
    assert present <= CHALLENGE_TASKS[name]
    missing = CHALLENGE_TASKS[name] - present
    if missing:
        assert "not yet available" in suite.description
        named = suite.description.split("not yet available", 1)[1]
        assert all(task in named for task in missing), (missing, suite.description)
    else:
        assert "not yet available" not in suite.description

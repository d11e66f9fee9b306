"""The catalog entries added with the house step (classification, ranking, OCR end-to-end), each run through the
harness on tiny records whose scores are worked out by hand."""

from __future__ import annotations

import json

import pytest

from gpumetrics.harness.config import ConfigError, parse_config
from gpumetrics.harness.runner import evaluate
from tests.helpers.oracles import import_oracle


def _run(tmp_path, metric, predictions, references, options=None, batch_size=2):
    with open(tmp_path / "p.jsonl", "w") as handle:
        handle.writelines(json.dumps({"id": i, "prediction": p}) + "\n" for i, p in predictions.items())
    with open(tmp_path / "r.jsonl", "w") as handle:
        handle.writelines(json.dumps({"id": i, "references": r}) + "\n" for i, r in references.items())
    task = {"name": "t", "metric": metric, "predictions": "p.jsonl", "references": "r.jsonl"}
    if options:
        task["options"] = options
    (result,) = evaluate(parse_config({"tasks": [task]}, tmp_path / "c.yaml"), batch_size=batch_size).tasks
    return result


def test_f1_precision_recall_of_label_records(tmp_path):
    predictions, references = {1: 0, 2: 1, 3: 2, 4: 1}, {1: 0, 2: 1, 3: 1, 4: [1]}
    # class 0: P = R = 1; class 1: P = 1, R = 2/3; class 2: one false positive (P = R = 0); macro over the 3 classes
    f1 = _run(tmp_path, "f1", predictions, references, {"num_classes": 3})
    assert f1.score == pytest.approx((1 + 0.8 + 0) / 3)
    assert _run(tmp_path, "precision", predictions, references, {"num_classes": 3}).score == pytest.approx(2 / 3)
    assert _run(tmp_path, "recall", predictions, references,
                {"num_classes": 3, "average": "micro"}).score == pytest.approx(0.75)


def test_classification_needs_num_classes_and_every_prediction(tmp_path):
    with pytest.raises(ConfigError, match="num_classes"):
        _run(tmp_path, "f1", {1: 0}, {1: 0})
    with pytest.raises(Exception, match="no empty answer"):
        _run(tmp_path, "f1", {1: 0}, {1: 0, 2: 1}, {"num_classes": 2})


def test_ranking_of_run_and_qrels_records(tmp_path):
    predictions = {"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}, "q2": {"a": 0.3, "b": 0.7}}
    references = {"q1": {"d2": 1, "d4": 1}, "q2": {"b": 1}}
    # q1: first relevant at rank 2 (RR ½), AP = (½) / 2 relevant = ¼; q2: RR 1, AP 1
    result = _run(tmp_path, "ranking", predictions, references, {"metrics": ["map", "mrr", "precision@2"]},
                  batch_size=1)
    assert result.score == pytest.approx((0.25 + 1) / 2)
    assert result.details["mrr"] == pytest.approx(0.75) and result.details["precision@2"] == pytest.approx(0.5)


def test_ocr_end_to_end_of_region_records(tmp_path):
    box = [0.0, 0.0, 1.0, 1.0]
    predictions = {"img1": [{"points": box, "text": "hello"}], "img2": [{"points": box, "text": "world"}]}
    references = {"img1": [{"points": box, "text": "hello"}], "img2": [{"points": box, "text": "word"}]}
    result = _run(tmp_path, "ocr_e2e", predictions, references)
    assert result.score == pytest.approx(0.5) and result.details["bbox_f1"] == pytest.approx(1.0)
    missing = _run(tmp_path, "ocr_e2e", {"img1": predictions["img1"]}, references)  # no regions predicted for img2
    assert missing.missing == 1 and missing.details["e2e_recall"] == pytest.approx(0.5)


def test_wmd_of_text_records_with_a_vector_file(tmp_path):
    gensim = import_oracle("gensim")
    import_oracle("ot", "POT")
    from pathlib import Path

    from gpumetrics.functional import word_movers_distance

    vectors = Path(gensim.__file__).parent / "test" / "test_data" / "lee_fasttext.vec"
    predictions = {1: "the government said on monday", 2: "police arrested two men"}
    references = {1: ["officials announced the plan on monday"], 2: ["two men were detained by police"]}
    result = _run(tmp_path, "wmd", predictions, references, {"embeddings": str(vectors)})
    expected = word_movers_distance(list(predictions.values()), [r[0] for r in references.values()],
                                    embeddings=str(vectors), reduction="mean")
    assert result.score == pytest.approx(float(expected), rel=1e-9) and result.higher_is_better is False
    with pytest.raises(Exception, match="one reference"):
        _run(tmp_path, "wmd", {1: "a"}, {1: ["a", "b"]}, {"embeddings": str(vectors)})

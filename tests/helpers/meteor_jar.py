"""The METEOR 1.5 jar as a test oracle: pycocoevalcap's own wrapper for English, the same stdio protocol for other
command lines (Russian). Java 17 runs the jar that ships inside the installed pycocoevalcap wheel."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path
from typing import Sequence

import torch

from gpumetrics.text.meteor.jar import clean_hypothesis
from gpumetrics.text.tokenize.meteor import meteor_jar
from tests.helpers.oracles import import_oracle, missing_oracle


def meteor_data_installed() -> bool:
    """Whether METEOR 1.5's data (pycocoevalcap's jar and paraphrase table) is installed: not on the GPU machines,
    where the package (hundreds of MB) cannot travel."""
    try:
        meteor_jar()
    except FileNotFoundError:
        return False
    return True


def missing_meteor_data(case: str) -> bool:
    """A module / functional case of the device lists that reads METEOR 1.5's data (not the NLTK mode), where that
    data is not installed."""
    reads_it = case.startswith(("METEORScore", "COCOCaptionScores", "meteor_score", "coco_caption_scores")) and \
        "nltk" not in case
    return reads_it and not meteor_data_installed()


def skip_without_meteor_data(case: str) -> None:
    """Skip (or fail in CI: :func:`~tests.helpers.oracles.missing_oracle`) a case that reads METEOR 1.5's data
    where it is not installed."""
    if missing_meteor_data(case):
        missing_oracle("METEOR 1.5's data (pycocoevalcap's jar and paraphrase table)", "pip install pycocoevalcap")


def pycocoevalcap_meteor(preds: Sequence[str], target: Sequence[Sequence[str]]) -> tuple[float, torch.Tensor]:
    """``Meteor().compute_score`` of pycocoevalcap (one JVM per call): ``(corpus score, segment scores [B])``."""
    Meteor = import_oracle("pycocoevalcap.meteor.meteor").Meteor

    meteor = Meteor()
    try:
        score, scores = meteor.compute_score({i: list(r) for i, r in enumerate(target)},
                                             {i: [p] for i, p in enumerate(preds)})
    finally:
        del meteor
    return float(score), torch.tensor(scores, dtype=torch.float64)


def jar_file(member: str, folder: Path) -> Path:
    """A data file of the jar (e.g. ``function/russian.words``) extracted into ``folder``."""
    path = folder / Path(member).name
    with zipfile.ZipFile(meteor_jar()) as jar:
        path.write_bytes(jar.read(member))
    return path


def stdio_meteor(preds: Sequence[str], target: Sequence[Sequence[str]], *options: str) -> tuple[float, torch.Tensor]:
    """The jar run as ``java -jar meteor-1.5.jar - - -stdio <options>`` with pycocoevalcap's SCORE/EVAL protocol."""
    lines = []
    for pred, refs in zip(preds, target):
        lines.append(" ||| ".join(("SCORE", " ||| ".join(refs), clean_hypothesis(pred))))
    command = ["java", "-Xmx2G", "-jar", str(meteor_jar()), "-", "-", "-stdio", *options]
    stats = subprocess.run(
        command, input="\n".join(lines) + "\n", capture_output=True, text=True, encoding="utf-8", check=True
    ).stdout.strip().split("\n")
    evaluation = "EVAL ||| " + " ||| ".join(stats) + "\n"  # a second JVM: the statistics travel as text anyway
    out = subprocess.run(command, input=evaluation, capture_output=True, text=True, encoding="utf-8", check=True)
    values = [float(x) for x in out.stdout.strip().split("\n")]
    return values[-1], torch.tensor(values[:-1], dtype=torch.float64)

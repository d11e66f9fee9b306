"""``gpumetrics score -m bleu`` against sacrebleu's command line: the whole command in a fresh process each time —
interpreter start, imports, reading both files, scoring, printing — on one line and on a corpus.

On a one-line file the row measures start-up alone (what every shell loop, Makefile rule or CI step that scores a
file pays); on 10,000 lines the scoring starts to count. Both print the corpus BLEU of the same files (13a
tokenisation); the check compares the two numbers."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.cases.bleu import mt_corpus
from benchmarks.registry import Contenders, register
from testkit.checkout import checkout_pythonpath


def _run(arguments: list[str]) -> float:
    environment = {**os.environ, "PYTHONPATH": checkout_pythonpath()}
    done = subprocess.run([sys.executable, *arguments], env=environment, capture_output=True, text=True, check=True)
    return float(done.stdout.split()[-1])


@register("cli_score_bleu", sizes=(1, 10_000), quick_sizes=(1,), unit="lines", repeats=3)
def cli_score_bleu_case(size: int, device: str) -> Contenders:
    folder = Path(tempfile.mkdtemp(prefix="gpumetrics-cli-startup-"))
    preds, refs = mt_corpus(size, size)
    hypotheses, references = folder / "hyp.txt", folder / "ref.txt"
    hypotheses.write_text("\n".join(preds) + "\n", encoding="utf-8")
    references.write_text("\n".join(refs) + "\n", encoding="utf-8")
    ours = ["-m", "gpumetrics", "score", "-m", "bleu", "-r", str(references), str(hypotheses), "-w", "8",
            "--device", device]
    theirs = ["-m", "sacrebleu", str(references), "-i", str(hypotheses), "-b", "-w", "6"]
    return Contenders(
        ours={"gpumetrics score -m bleu (fresh process)": lambda: _run(ours)},
        anchors={"sacrebleu CLI -b (fresh process)": lambda: _run(theirs) / 100},
        check=lambda ours, anchor: abs(ours - anchor) <= 2e-8,
        note="the whole command in a fresh Python process (start-up, imports, files, 13a BLEU); WMT-like sentences, "
             "1 reference",
    )

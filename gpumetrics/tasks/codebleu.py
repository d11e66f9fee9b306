"""Task metric for CodeBLEU (codebleu 0.7 parity, the paper's formula, the AIJ-2021 Code2code preset)."""

from gpumetrics.tasks.registry import TaskMetric, register_metric
from gpumetrics.text.codebleu import CodeBLEUScore

register_metric(TaskMetric(
    name="codebleu",
    factory=CodeBLEUScore,
    description=(
        "CodeBLEU: mode codebleu-0.7 (codebleu 0.7.0 calc_codebleu parity; option lang: python|java|javascript|"
        "c_sharp|php|c|cpp|go|ruby|rust) or paper; preset aij2021 (Code2code, TransCoder-tokenised Python); option "
        "grammar: path of a tree-sitter grammar library (the AIJ-2021 organisers' my-languages.so with py-tree-sitter "
        "0.2.0 gives the official Code2code number); primary score codebleu — docs/metrics.md §4"
    ),
    empty_prediction="",
    primary="codebleu",
    path_options={"grammar": None},  # a compiled tree-sitter grammar library (the AIJ-2021 organisers' .so)
))

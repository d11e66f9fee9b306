"""Every metric as a pure function, torchmetrics-style: ``gpumetrics.functional.token_f1(preds, target)``.

Each function is ``_x_compute(_x_update(...))`` of the module of the same metric, so both give the same number.
"""

# --- text: question answering and strings (METRICS_SPEC §1)
from gpumetrics.text.qa import exact_match, string_accuracy, token_f1

__all__ = [
    "token_f1",
    "exact_match",
    "string_accuracy",
]

"""The AIJ challenge suites (docs/metrics.md §8): fixed tasks, fixed metric options, overall = sum of task scores.

Only tasks whose metric gpumetrics implements are listed; a description names the challenge's tasks still missing
("not yet available: …"), so a suite score is never silently computed over fewer tasks than the challenge had.
"""

from gpumetrics.tasks.registry import Suite, SuiteTask, register_suite

register_suite(Suite(
    name="aij2022",
    description="AIJ-2022 Fusion Brain: sum of the six task scores, each in [0, 1] (all available)",
    tasks=[
        SuiteTask("TextQA", "token_f1", {"preset": "aij2022"}),
        SuiteTask("MathQA", "exact_match", {"preset": "aij2022"}),
        SuiteTask("ImageGeneration", "s_image_generation"),
        SuiteTask("ImageCaptioning", "s_image_captioning"),
        SuiteTask("VisualQA", "s_visual_qa"),
        SuiteTask("TRitW", "ned_aij2022"),
    ],
))

register_suite(Suite(
    name="aij2021",
    description="AIJ-2021 Fusion Brain: sum of the four task scores — Code2code (CodeBLEU, preset aij2021), HTR "
                "(string accuracy), zero-shot detection (F1), VQA (accuracy); all available",
    tasks=[
        SuiteTask("Code2code", "codebleu", {"preset": "aij2021"}),
        SuiteTask("HTR", "string_accuracy"),
        SuiteTask("ZeroShotDetection", "zero_shot_detection_f1", {"preset": "aij2021"}),
        SuiteTask("VQA", "exact_match", {"preset": "raw"}),
    ],
))

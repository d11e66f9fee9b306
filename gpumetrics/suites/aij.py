"""The AIJ challenge suites (docs/metrics/suites.md): fixed tasks, their official file formats and metric options,
overall = sum of task scores.

A config names, per task, the organisers' two files — ``references`` (the gold file) and ``predictions`` (the
participant's file) — and nothing else; the format (:mod:`gpumetrics.suites.formats`) and the options are the
suite's. Image tasks also take the paths the official scripts take as arguments (``user_options``: the real images,
the task's input file, the CLIP checkpoint); Code2code takes ``grammar``, the path of the organisers' grammar
library (``my-languages.so``), which gives the official number where py-tree-sitter 0.2.0 is installed. Hidden-task
slots take a score ``S_k ∈ [0, 1]`` from the config.
"""

from gpumetrics.harness.registry import Suite, SuiteTask, register_suite

#: The organisers' ruCLIP term: the raw cosine (no clamp), text features averaged over ruclip Predictor's templates.
_ORGANISERS_CLIP = {"clip_clamp": False, "clip_templates": "ruclip"}
#: Options of the image tasks a config sets: the CLIP model (backend "ruclip" + a local checkpoint folder for the
#: official numbers), the Inception weights, batch size, and the data the official scripts take as arguments
_CLIP_OPTIONS = ("clip_backend", "clip_model", "clip_pretrained", "batch_size")
#: Options of the image tasks that change no number: image paths that leave the folder of the file naming them (the
#: organisers' scripts open them; refused unless the config says so) and the decoding processes
_IMAGE_FILE_OPTIONS = ("allow_outside_root", "workers")

register_suite(Suite(
    name="aij2022",
    description="AIJ-2022 Fusion Brain: sum of the six task scores and the supplied hidden-task scores, each in [0, 1]",
    tasks=[
        SuiteTask("TextQA", "token_f1", {"preset": "aij2022"}, format="aij2022-text"),
        SuiteTask("MathQA", "exact_match", {"preset": "aij2022"}, format="aij2022-text"),
        SuiteTask("ImageGeneration", "s_image_generation", {**_ORGANISERS_CLIP, "resize": "aij2022"},
                  format="aij2022-generation",
                  user_options=("real", "fid_feature", "inception_weights", "cache_dir", "no_cache", *_CLIP_OPTIONS,
                                *_IMAGE_FILE_OPTIONS)),
        SuiteTask("ImageCaptioning", "s_image_captioning", _ORGANISERS_CLIP, format="aij2022-captioning",
                  user_options=("inputs", "synonyms", *_CLIP_OPTIONS, *_IMAGE_FILE_OPTIONS)),
        SuiteTask("VisualQA", "meteor", {"mode": "aij2022-vqa"}, format="aij2022-vqa", user_options=("synonyms",)),
        SuiteTask("TRitW", "ned_aij2022", format="aij2022-text"),
    ],
    hidden=tuple(f"Hidden{k}" for k in range(1, 7)),
))

register_suite(Suite(
    name="aij2021",
    description="AIJ-2021 Fusion Brain: sum of the four task scores — Code2code (CodeBLEU, preset aij2021), HTR "
                "(string accuracy), zero-shot detection (F1), VQA (vqaEval accuracy); all available",
    tasks=[
        # grammar: the organisers' my-languages.so, for the official number (needs py-tree-sitter 0.2.0)
        SuiteTask("Code2code", "codebleu", {"preset": "aij2021"}, format="aij2021-c2c", user_options=("grammar",)),
        SuiteTask("HTR", "string_accuracy", format="aij2021-htr"),
        SuiteTask("ZeroShotDetection", "zero_shot_detection_f1", {"preset": "aij2021"}, format="aij2021-zsod"),
        SuiteTask("VQA", "vqa_accuracy", format="aij2021-vqa"),
    ],
))

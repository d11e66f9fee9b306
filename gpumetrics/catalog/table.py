"""The task catalog: ONE table of every task metric a config's ``metric:`` can name (``gpumetrics list``).

Each entry names its factory by dotted path (``"package.module:Class"``, resolved on first use), so that listing
the catalog imports no metric module; ``options`` declares the options a config may set with their defaults (a test
holds them equal to the factory's ``__init__``). Hooks (``safe_cut``, ``prepare``) are set here for the metrics
that need them. The AIJ suites' composite metrics are registered by :mod:`gpumetrics.suites`.
"""

from __future__ import annotations

from gpumetrics.catalog.adapters import (
    error_rate_per_sample,
    label_update_args,
    missing_image_empty_prediction,
    ocr_update_args,
    one_reference_update_args,
    ptb_safe_cut,
    ranking_update_args,
    vqa_update_args,
    zero_shot_update_args,
)
from gpumetrics.harness.registry import REQUIRED, TaskMetric, per_sample_of

_QA = "gpumetrics.text.qa"
_EDIT = "gpumetrics.text.edit"
_NED_AIJ2022 = "gpumetrics.catalog.factories:ned_aij2022"
_PRF = "gpumetrics.classification"
_FACTORIES = "gpumetrics.catalog.factories"
#: options of the multiclass precision / recall / F1 modules (``num_classes`` has no default: a config sets it)
_PRF_OPTIONS = {"num_classes": REQUIRED, "top_k": 1, "average": "macro", "multidim_average": "global",
                "ignore_index": None, "validate_args": True, "zero_division": 0}
#: precision and recall take no ``zero_division``; their modules' ``num_classes`` defaults to None (micro average),
#: but a task needs it all the same (``catalog.factories.check_precision``: the label range check)
_PR_OPTIONS = {"num_classes": None, "top_k": 1, "average": "macro", "multidim_average": "global", "ignore_index": None,
               "validate_args": True}

ENTRIES: tuple[TaskMetric, ...] = (
    # ------------------------------------------------------------------------------------ question answering, strings
    TaskMetric(
        name="token_f1", factory=f"{_QA}:TokenF1", per_sample=per_sample_of(f"{_QA}:TokenF1"),
        description="token F1, max over gold answers (presets: squad, aij2022) — docs/metrics/qa.md TextQA",
        empty_prediction="", options={"preset": None, "reduction": "mean"},
    ),
    TaskMetric(
        name="exact_match", factory=f"{_QA}:ExactMatch", per_sample=per_sample_of(f"{_QA}:ExactMatch"),
        description="exact match of normalised answers (presets: squad, aij2022, raw) — docs/metrics/qa.md MathQA",
        empty_prediction="", options={"preset": None, "reduction": "mean"},
    ),
    TaskMetric(
        name="string_accuracy", factory=f"{_QA}:StringAccuracy", per_sample=per_sample_of(f"{_QA}:StringAccuracy"),
        description="share of predictions equal to the gold string — docs/metrics/qa.md HTR",
        empty_prediction="", options={"preset": None, "reduction": "mean"},
    ),
    TaskMetric(
        name="vqa_accuracy", factory=f"{_QA}:VQAAccuracy", per_sample=per_sample_of(f"{_QA}:VQAAccuracy"),
        description="AIJ-2021 VQA accuracy: the prediction normalised as vqaEval.py (per question lang en|ru) equals a "
                    "raw gold answer — docs/metrics/qa.md",
        empty_prediction=None, update_args=vqa_update_args, options={"preset": None, "reduction": "mean"},
    ),
    # ------------------------------------------------------------------------------------ edit distances
    TaskMetric(
        name="ned_aij2022", factory=_NED_AIJ2022, per_sample=per_sample_of(_NED_AIJ2022),
        description="1 − NED, AIJ-2022 text recognition: either string empty → 0, max over gold strings "
                    "(docs/metrics/edit.md)",
        empty_prediction="", options={"preset": "aij2022", "backend": "auto", "pad_id": None, "reduction": "mean"},
    ),
    TaskMetric(
        name="normalized_edit_similarity", factory=f"{_EDIT}:NormalizedEditSimilarity",
        per_sample=per_sample_of(f"{_EDIT}:NormalizedEditSimilarity"),
        description="1 − NED = mean of 1 − lev/max(len), max over gold strings; presets default, aij2022 "
                    "(docs/metrics/edit.md)",
        empty_prediction="", options={"preset": "default", "backend": "auto", "pad_id": None, "reduction": "mean"},
    ),
    TaskMetric(
        name="cer", factory=f"{_EDIT}:CharErrorRate", per_sample=error_rate_per_sample(f"{_EDIT}:CharErrorRate"),
        description="character error rate: pooled edits / pooled reference characters, as jiwer; several references: "
                    "the best per sample (fewest edits, then the longest) (docs/metrics/edit.md)",
        empty_prediction="", options={"backend": "auto", "transform": None, "pad_id": None, "reduction": "mean"},
    ),
    TaskMetric(
        name="wer", factory=f"{_EDIT}:WordErrorRate", per_sample=error_rate_per_sample(f"{_EDIT}:WordErrorRate"),
        description="word error rate, pooled over whitespace tokens (jiwer, torchmetrics); several references: the "
                    "best per sample (fewest edits, then the longest) — docs/metrics/edit.md",
        empty_prediction="", options={"backend": "auto", "transform": None, "pad_id": None, "reduction": "mean"},
    ),
    TaskMetric(
        name="edit_distance", factory=f"{_EDIT}:EditDistance", per_sample=per_sample_of(f"{_EDIT}:EditDistance"),
        description="Levenshtein distance (rapidfuzz parity), unit char|word, of each prediction and its one "
                    "reference; mean over samples — docs/metrics/edit.md",
        empty_prediction="", higher_is_better=False, update_args=one_reference_update_args,
        options={"unit": "char", "backend": "auto", "pad_id": None, "reduction": "mean"},
    ),
    # ------------------------------------------------------------------------------------ n-gram metrics
    TaskMetric(
        name="bleu", factory="gpumetrics.text.bleu:BLEUScore",
        per_sample=per_sample_of("gpumetrics.text.bleu:BLEUScore"),
        description="BLEU in [0, 1]: sacrebleu corpus_bleu (13a/intl/char/zh/none), NLTK corpus_bleu or "
                    "pycocoevalcap Bleu (mode coco, tokenize ptb|none) — docs/metrics/ngram.md",
        empty_prediction="", safe_cut=ptb_safe_cut,
        options={"mode": "sacrebleu", "tokenize": None, "smooth": None, "smooth_value": None, "weights": None,
                 "lowercase": False, "effective_order": False, "reduction": "corpus"},
    ),
    TaskMetric(
        name="cider", factory="gpumetrics.text.cider:CIDErScore",
        description="CIDEr-D (pycocoevalcap Cider parity, corpus document frequency) or CIDEr (Vedantam 2015); options "
                    "mode (cider-d|cider), tokenize (ptb|none), n_gram, sigma; all references of a sample — "
                    "docs/metrics/ngram.md",
        empty_prediction="", safe_cut=ptb_safe_cut,
        options={"mode": "cider-d", "tokenize": "ptb", "reduction": "mean", "n_gram": 4, "sigma": 6.0},
    ),
    TaskMetric(
        name="rouge", factory="gpumetrics.text.rouge:ROUGEScore",
        per_sample=per_sample_of("gpumetrics.text.rouge:ROUGEScore", key="rougeL_fmeasure"),
        description="ROUGE-N/L/Lsum (rouge-score parity) and ROUGE-W; options rouge_keys, use_stemmer, tokenize "
                    "(rouge-score|unicode); best reference per key; mode coco: pycocoevalcap Rouge (best P and R "
                    "apart, β=1.2, tokenize ptb|none); primary score rougeL_fmeasure — docs/metrics/ngram.md",
        empty_prediction="", primary="rougeL_fmeasure", safe_cut=ptb_safe_cut,
        options={"rouge_keys": None, "use_stemmer": False, "tokenize": None, "rouge_w_weight": 1.2,
                 "reduction": "mean", "mode": "rouge-score"},
    ),
    TaskMetric(
        name="meteor", factory="gpumetrics.text.meteor:METEORScore",
        per_sample=per_sample_of("gpumetrics.text.meteor:METEORScore"),
        description="METEOR: mode meteor-1.5 (pycocoevalcap jar parity, corpus score of summed statistics; language "
                    "en|ru), nltk, aij2022-caption, aij2022-vqa (option synonyms: a TSV path); all references of a "
                    "sample — docs/metrics/meteor.md",
        empty_prediction="", path_options={"synonyms": None},
        options={"mode": "meteor-1.5", "language": "en", "reduction": "corpus", "alpha": None, "beta": None,
                 "gamma": None, "stemmer": None, "synonyms": None, "memory_budget": None},
    ),
    TaskMetric(
        name="codebleu", factory="gpumetrics.text.codebleu:CodeBLEUScore",
        description="CodeBLEU: mode codebleu-0.7 (codebleu 0.7.0 calc_codebleu parity; option language: python|java|"
                    "javascript|c_sharp|php|c|cpp|go|ruby|rust) or paper; preset aij2021 (Code2code, TransCoder-"
                    "tokenised Python); option grammar: path of a tree-sitter grammar library (the AIJ-2021 "
                    "organisers' my-languages.so with py-tree-sitter 0.2.0 gives the official Code2code number); "
                    "primary score codebleu — docs/metrics/codebleu.md",
        empty_prediction="", primary="codebleu",
        path_options={"grammar": None},  # a compiled tree-sitter grammar library (the AIJ-2021 organisers' .so)
        options={"language": None, "weights": (0.25, 0.25, 0.25, 0.25), "mode": "codebleu-0.7", "preset": None,
                 "tokenize": None, "reduction": "corpus", "detokenize": False, "grammar": None},
    ),
    TaskMetric(
        name="coco_caption", factory="gpumetrics.text.coco:COCOCaptionScores",
        description="the COCOEvalCap table: Bleu_1..4 (pycocoevalcap Bleu), METEOR (1.5 jar), ROUGE_L (β=1.2), CIDEr "
                    "(CIDEr-D), PTB-tokenised; no SPICE (not offline); use `format: coco` for COCO results/annotations "
                    "files; primary CIDEr — docs/metrics/coco.md",
        empty_prediction=None,  # COCOEvalCap scores the images that have a result; a missing one is an error
        primary="CIDEr", safe_cut=ptb_safe_cut,
        table_keys=("Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "METEOR", "ROUGE_L", "CIDEr"),
        options={"tokenize": "ptb", "reduction": "corpus"},
    ),
    TaskMetric(
        name="wmd", factory="gpumetrics.text.wmd:WordMoversDistance",
        per_sample=per_sample_of("gpumetrics.text.wmd:WordMoversDistance"),
        description="Word Mover's Distance (gensim wmdistance parity; method emd|sinkhorn) of each prediction and its "
                    "one reference; option embeddings: a word-vector file (word2vec text/binary, GloVe) — "
                    "docs/metrics/wmd.md",
        empty_prediction="", higher_is_better=False, update_args=one_reference_update_args,
        path_options={"embeddings": None},
        options={"embeddings": REQUIRED, "method": "emd", "stop_words": None, "normalize": True, "reg": 0.01,
                 "max_iter": 1000, "tol": 1e-06, "unicode_errors": "strict", "reduction": "mean"},
    ),
    # ------------------------------------------------------------------------------------ detection
    TaskMetric(
        name="zero_shot_detection_f1", factory="gpumetrics.detection.zero_shot_f1:ZeroShotDetectionF1",
        description="zero-shot detection F1 over queried classes, boxes [x, y, w, h] (presets: aij2021, strict) — "
                    "docs/metrics/detection.md",
        empty_prediction={}, update_args=zero_shot_update_args, primary="f1",
        options={"preset": "aij2021", "iou_threshold": 0.5},
    ),
    TaskMetric(
        name="ocr_e2e", factory="gpumetrics.detection.ocr_e2e:OCREndToEnd",
        description="OCR end-to-end detection + recognition P/R/F1 (many-to-many or ICDAR-15 matching, IoU > 0.5, "
                    "'###' don't care); records: per image a list of {points, text} regions; primary e2e_f1 — "
                    "docs/metrics/detection.md",
        empty_prediction=[], update_args=ocr_update_args, primary="e2e_f1",
        options={"matching": "many-to-many", "iou_threshold": 0.5, "dont_care": "###", "case_sensitive": None},
    ),
    # ------------------------------------------------------------------------------------ retrieval
    TaskMetric(
        name="ranking", factory="gpumetrics.retrieval.ranking:RankingMetrics",
        description="ranking metrics (ndcg@k, map, mrr, precision@k, recall@k …; trec_eval / ranx conventions) of "
                    "one query a record: prediction {doc_id: score} (the run), references {doc_id: label} (the "
                    "qrels); primary: the first of `metrics` — docs/metrics/ranking.md",
        empty_prediction={}, update_args=ranking_update_args,
        options={"metrics": ("ndcg@10", "map", "mrr"), "ties": "trec_eval", "gain": "linear", "empty": "zero",
                 "relevance_level": 1},
    ),
    # ------------------------------------------------------------------------------------ classification
    *(TaskMetric(
        name=name, factory=f"{_PRF}:Multiclass{cls}", check_options=f"{_FACTORIES}:check_{name}",
        description=f"multiclass {what} (torchmetrics parity; average macro|micro|weighted) of label records: "
                    "prediction and reference are class indices; option num_classes — docs/metrics/classification.md",
        empty_prediction=None, update_args=label_update_args, options=options,
    ) for name, cls, what, options in (
        ("f1", "F1Score", "F1", _PRF_OPTIONS),
        ("precision", "Precision", "precision", _PR_OPTIONS),
        ("recall", "Recall", "recall", _PR_OPTIONS),
    )),
    # ---------------------------------------------------------------------------------- images (files named by records)
    TaskMetric(
        name="fid", factory=f"{_FACTORIES}:fid_files", check_options=f"{_FACTORIES}:check_fid_files",
        description="FID (pytorch-fid parity) of the generated images (prediction: an image path) against the real "
                    "ones (references: image paths), paths relative to image_root — docs/metrics/image.md",
        empty_prediction=None, empty_prediction_of=missing_image_empty_prediction, higher_is_better=False,
        path_options={"image_root": ".", "weights": None},
        options={"image_root": ".", "batch_size": 32, "feature": 2048, "weights": None, "resize": "pytorch-fid",
                 "reset_real_features": True, "download": None, "speed_mode": None, "workers": None,
                 "decode": "pil", "missing_image": "error"},
    ),
    TaskMetric(
        name="kid", factory=f"{_FACTORIES}:kid_files", check_options=f"{_FACTORIES}:check_kid_files",
        description="KID (torch-fidelity / torchmetrics parity) of the generated images (prediction: an image path) "
                    "against the real ones (references); primary kid_mean — docs/metrics/image.md",
        empty_prediction=None, empty_prediction_of=missing_image_empty_prediction, higher_is_better=False,
        primary="kid_mean",
        path_options={"image_root": ".", "weights": None},
        options={"image_root": ".", "batch_size": 32, "feature": 2048, "weights": None, "resize": "pytorch-fid",
                 "subsets": 100, "subset_size": 1000, "degree": 3, "gamma": None, "coef": 1.0, "seed": 42,
                 "canonical_order": True, "reset_real_features": True, "download": None, "speed_mode": None,
                 "workers": None, "decode": "pil", "missing_image": "error"},
    ),
    TaskMetric(
        name="clip_score", factory=f"{_FACTORIES}:clip_score_files",
        check_options=f"{_FACTORIES}:check_clip_score_files",
        description="CLIP score (torchmetrics parity; backends hf, open_clip, ruclip) of each image (prediction: an "
                    "image path) and its caption (references: the caption) — docs/metrics/image.md",
        empty_prediction=None, empty_prediction_of=missing_image_empty_prediction, higher_is_better=True,
        path_options={"image_root": "."},
        model_options=("model_name", "pretrained"),
        options={"image_root": ".", "batch_size": 32, "backend": "hf", "model_name": "openai/clip-vit-base-patch32",
                 "pretrained": None, "scale": 100.0, "seed": 0, "download": False, "reduction": "mean",
                 "clamp": True, "templates": None, "speed_mode": None, "workers": None, "decode": "pil",
                 "missing_image": "error"},
    ),
)

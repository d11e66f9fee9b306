"""CodeBLEU (issue 13): one metric, reference conventions selected by ``mode`` / ``preset``.

Rooms (one job each):
- ``parsing``   — tree-sitter languages (per-language grammar wheels, ``gpumetrics[code]``), parse + token index,
                  cached per unique string;
- ``keywords``  — the keyword list of each language;
- ``ngram``     — BLEU and keyword-weighted BLEU parts on the shared n-gram kernel (``kernels/ngrams``);
- ``syntax``    — AST subtree match;
- ``dataflow``  — data-flow edges of a parsed program, one generic walker driven by per-language node tables:
                  ``dataflow_edges(root, index_to_code, lang) -> list[(name, token index, relation, [parent names],
                  [parent token indices])]``, equal to codebleu 0.7's ``DFG_<lang>(root, index_to_code, {})[0]``;
- ``flow_match`` — the data-flow graph codebleu compares (filtered, merged, normalised edges) and its match;
- ``metric``    — the public ``codebleu_score`` / ``CodeBLEUScore``, modes ``codebleu-0.7`` / ``paper``, preset
                  ``aij2021``.
"""

from gpumetrics.text.codebleu.metric import KEYS, MODES, PRESETS, CodeBLEUScore, clear_caches, codebleu_score
from gpumetrics.text.codebleu.parsing import LANGUAGES

__all__ = ["KEYS", "LANGUAGES", "MODES", "PRESETS", "CodeBLEUScore", "clear_caches", "codebleu_score"]

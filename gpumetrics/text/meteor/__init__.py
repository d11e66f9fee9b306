"""METEOR (issue 12): one metric, several reference conventions selected by ``mode``.

Rooms:
- ``jar``        — ``mode="meteor-1.5"``: the METEOR 1.5 jar that pycocoevalcap runs (matchers, aligner, statistics);
- ``tables``     — the jar's data files (function words, synonyms, paraphrase table) read from the installed jar;
- ``nltk_style`` — ``mode="nltk"``: NLTK's ``meteor_score`` (greedy exact → stem → synonym alignment);
- ``aij2022``    — ``mode="aij2022-caption"`` / ``"aij2022-vqa"``: the AIJ-2022 organisers' variants;
- ``synonyms``   — synonym providers for the NLTK-style modes (WordNet, RuWordNet, TSV, none);
- ``metric``     — the public :func:`meteor_score` and :class:`METEORScore`.
"""

from gpumetrics.text.meteor.metric import MODES, METEORScore, meteor_score

__all__ = ["MODES", "METEORScore", "meteor_score"]

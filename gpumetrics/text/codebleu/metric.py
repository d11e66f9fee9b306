"""CodeBLEU as a function and a module (docs/metrics/codebleu.md): ``mode="codebleu-0.7"`` (default), ``mode="paper"``,
``preset="aij2021"``.

``CodeBLEU = α·BLEU + β·weighted n-gram match + γ·AST match + δ·data-flow match``
(``weights=(α, β, γ, δ)``), every part a corpus-level ratio of summed statistics. The result is a dict of
``DoubleTensor``: ``codebleu``, ``ngram_match_score``, ``weighted_ngram_match_score``, ``syntax_match_score``,
``dataflow_match_score``.

**mode="codebleu-0.7"** equals ``codebleu.calc_codebleu(references, predictions, lang, weights, tokenizer)`` of the
``codebleu`` package 0.7.0 (note its argument order: references first; a sample's references may be a string or a
list; its ``lang`` and ``tokenizer`` are our ``language`` and ``tokenize``) to 1e-9 on every key, with tree-sitter
0.22.3 and the grammar wheels pinned by ``gpumetrics[code]``. What that implies, quirks included:

1. **Inputs** are ``strip()``-ed; the n-gram parts use ``text.split()`` (or ``tokenize``) — whitespace tokens, so
   ``f(x)`` is one token.
2. **BLEU** is NLTK's corpus BLEU (4-grams, uniform weights) with Chen & Cherry's method 1: an order with no match
   counts 0.1 matches; no unigram match at all gives 0.
3. **Weighted n-gram match** is not a precision but a *recall* summed over references: for each reference, its
   n-grams clipped by the hypothesis counts, over its own n-gram count (``max(1, ·)`` per reference); unigrams are
   weighted (keyword 1, other tokens 0.2, keywords from codebleu's lists, :mod:`.keywords`), higher orders not;
   then BLEU's method-1 smoothing and a brevity penalty whose "closest reference length" is **2 per sample**
   (codebleu takes ``len()`` of its ``[tokens, weights]`` pairs), so it is 1 unless the candidates average fewer
   than 2 tokens. A reference of four non-keyword tokens has a unigram denominator of ``max(1, 0.8) = 1``.
4. **AST match** counts the reference subtrees that occur anywhere among the candidate's (list membership, no
   clipping: one candidate subtree can match many equal reference subtrees), over the number of reference
   subtrees; a subtree is a node with children written as its S-expression (types and field names, no leaf text).
5. Before parsing, comments (and Python docstrings — any string statement) are removed
   (:func:`.parsing.strip_comments`); the **candidate is stripped again for every further reference** of its
   sample (codebleu reassigns it inside the reference loop), which matters only when stripping is not idempotent.
6. **Data-flow match** (:mod:`.flow_match`): normalised data-flow edges, clipped, over the reference's; C and C++
   use the C# walker. A corpus whose references have no data flow at all scores ``dataflow_match_score = 0`` (with
   a warning), and the combination then uses ``dataflow_match_score or 1``: **a data-flow score of 0 counts as
   1** in ``codebleu`` — also when there was data flow but nothing matched.
7. **codebleu's data-flow score depends on the process's hash seed**: its walkers and its merge list parent names
   in Python's set order of strings (``PYTHONHASHSEED``). On 40 edited HumanEval solutions codebleu itself gives
   0.7415, 0.7263 and 0.7317 with seeds 1, 2 and 3; we reproduce the number of the process we run in (same
   construction, same order). Under DDP each rank has its own seed, so the data-flow part of the corpus score can
   differ from one process's: start every rank with the same ``PYTHONHASHSEED`` (``PYTHONHASHSEED=0 torchrun …``)
   to get exactly the single-process number of that seed. Byte columns read from ``str`` lines (a token after
   non-ASCII text is cut shifted) are reproduced too; see :mod:`.flow_match` and :mod:`.parsing`.
8. An empty batch gives 0 on every key (codebleu divides by zero).
9. **A program whose data-flow walk fails has no data flow**, as codebleu's ``get_data_flow`` (``except Exception``)
   has none; its sample is still scored and the corpus call goes on. codebleu's walker fails on valid code: a Python
   or Ruby assignment whose right side is a string literal with as many parts as the left side has elements —
   ``x.s = 'H'``, ``self.mode = 'r'``, ``x.s = b'H'`` / ``f'H'``, ``x.s: str = 'H'`` (``x . s`` is paired with
   ``' H '``, whose parts are no tokens) — and PHP ``foreach`` forms; about 0.6 % of standard-library functions.
   Comment stripping that fails leaves the program as it is (codebleu: ``except Exception: pass``). A program that
   UTF-8 cannot encode (a lone surrogate) cannot be parsed: a ``ValueError`` names the sample (codebleu raises
   ``UnicodeEncodeError`` for the whole call).

**mode="paper"** is the formula of Ren et al. 2020 (arXiv:2009.10297, §3) as we read it:

=========================  ============================================  ============================================
part                       codebleu-0.7                                  paper
=========================  ============================================  ============================================
BLEU                       method-1 smoothing (no match → 0.1 matches)   Papineni's: an order without match → 0
weighted n-gram (eq. 2–3)  recall per reference, orders 1–4 (order 1     precision of the hypothesis unigrams
                           weighted), method 1, BP with length 2         (N = 1), weights 5:1, clipped by the max
                                                                         over references, BP
AST match (eq. 4)          reference subtrees found anywhere in the      candidate subtrees matching the
                           candidate (membership, unclipped)             reference's, clipped
comments / docstrings      stripped; the candidate again per reference   stripped once
data-flow 0 in the total   counts as 1                                   counts as 0
=========================  ============================================  ============================================

Worked example (one sample, Python, weights 0.25 each; whitespace tokens, ``def`` and ``return`` are keywords)::

    hypothesis  "def add(a, b):\n    return a + b"        tokens: def add(a, b): return a + b
    reference   "def sum(first, second):\n    return second + first"

    part             codebleu-0.7                                  paper
    BLEU             3/7 unigrams, no bigram: p = (3/7, .1/6,       (3/7, 0/6, 0/5, 0/4): 0
                     .1/5, .1/4), BP 1 → 0.0435
    weighted n-gram  recall (1+1+0.2)/(1+1+5·0.2) = 0.7333 for      precision (1+1+0.2)/(1+1+5·0.2)
                     unigrams, then (.1/6, .1/5, .1/4) → 0.0497     = 0.7333, BP 1 → 0.7333
    AST match        6/6 reference subtrees → 1.0                  6/6 clipped → 1.0
    data-flow        4/4 normalised edges → 1.0                    1.0
    CodeBLEU         .25·(0.0435 + 0.0497 + 1 + 1) = 0.5233        .25·(0 + 0.7333 + 1 + 1) = 0.6833

(the numbers are checked by ``tests/text/test_codebleu.py::test_docstring_worked_example``).

**preset="aij2021"** scores the Code2code task of AIJ-2021 (Fusion Brain) as its official script
(``evaluation/C2C_codeBLEU/evaluate.py``) does: Python only; inputs are TransCoder-tokenised (``NEW_LINE``,
``INDENT``, ``DEDENT`` tokens); whitespace tokens for the n-gram parts; the script's 35-word Python keyword list
(no ``match``/``case``/``type``); the raw string (not stripped, comments kept) is parsed as it is — a one-line token
stream that tree-sitter mostly reads as an error tree; no ``or 1``: the data-flow score enters as it is. With
``detokenize=True`` the tokens are turned back into Python source (one line per ``NEW_LINE``, four spaces per
``INDENT`` level, ``▁`` → space) before parsing — a better-founded score that is *not* the official number.

The official script parses with py-tree-sitter 0.2.0 and the organisers' prebuilt ``my-languages.so`` (a 2021
Python grammar of language ABI 11, which py-tree-sitter 0.22 cannot load). What the error recovery of a grammar
makes of the token stream decides the AST and data-flow parts, so with the ``gpumetrics[code]`` wheel
(tree-sitter-python 0.21.0) those two parts — and the total — differ from the official ones (0.3018 against 0.0859
on the organisers' sample files). **The official number** needs their grammar: in an environment whose
py-tree-sitter is 0.2.0 (``pip install tree_sitter==0.2.0``; gpumetrics without the ``[code]`` extra), pass
``grammar="path/to/my-languages.so"``: the same walkers then read the trees of that grammar, subtrees written with
``node.sexp()`` as the script writes them, and every part equals the script's to 1e-9 (golden values of the sample
files and of random Code2code files in ``tests/text/test_codebleu_aij2021.py`` and ``tests/data/aij/golden.json``).
Loading that file with py-tree-sitter 0.22 raises a ``ValueError`` that says so. Like codebleu's, the script's
data-flow part depends on ``PYTHONHASHSEED`` (item 7; reproduced within a process: compare under one seed). Not
reproduced: the script recurses, so a tree too deep for Python's recursion limit (about 1,000 frames) makes it count
no data flow for that program; we count it.

``reduction``: ``"corpus"`` (default, the reference tools' number), or sentence level — each sample's CodeBLEU
dict from its own statistics — ``"mean"``, ``"sum"``, ``"none"`` (``[B]`` per key).

States: 25 summed ``float64`` statistics (n-gram matches and totals, lengths, weighted counts in fifths, subtree
and data-flow matches and totals, the number of samples) — one all-reduce under DDP; the statistics are integers,
so any order of summation gives the same number. Parsing, subtrees and data-flow edges are cached per process and
per ``(lang, text)``.
"""

from __future__ import annotations

import functools
import math
import os
from typing import Any, Callable, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from gpumetrics.core import (
    PerSampleScore, as_reference_lists, as_text_list, check_choice, check_device, check_same_length,
    gc_paused, reduce_scores, single_threaded,
)
from gpumetrics.core.checks import check_bool, describe_value, is_finite
from gpumetrics.core.files import expand_user, file_sha256
from gpumetrics.core.positions import sample_error
from gpumetrics.core.transfer import upload
from gpumetrics.core.warn import warn_caller
from gpumetrics.text.codebleu import ngram
from gpumetrics.text.codebleu.flow_match import dataflow_matches, edge_ids
from gpumetrics.text.codebleu.keywords import AIJ2021_PYTHON, KEYWORDS
from gpumetrics.text.codebleu.parsing import LANGUAGES, binding, load_grammar, parse, strip_comments, token_table
from gpumetrics.text.codebleu.syntax import subtree_ids, syntax_matches

MODES = ("codebleu-0.7", "paper")
PRESETS = (None, "aij2021")
CODEBLEU_REDUCTIONS = ("corpus", "mean", "sum", "none")
KEYS = ("codebleu", "ngram_match_score", "weighted_ngram_match_score", "syntax_match_score", "dataflow_match_score")

# statistics columns after the n-gram ones
SYNTAX_MATCHES, SYNTAX_TOTAL = ngram.COLUMNS, ngram.COLUMNS + 1
DATAFLOW_MATCHES, DATAFLOW_TOTAL = ngram.COLUMNS + 2, ngram.COLUMNS + 3
SAMPLES = ngram.COLUMNS + 4
STATISTICS = ngram.COLUMNS + 5

_SMOOTHING_EPSILON = 0.1  # NLTK's SmoothingFunction().method1
_NO_DATAFLOW = ("CodeBLEU: no data flow was extracted from any reference; dataflow_match_score is 0 (codebleu 0.7 "
                "then counts it as 1 in `codebleu`). Consider ignoring this score.")


class _CodeBLEUConfig:
    """Checked options of one CodeBLEU set-up (built once per function call or module)."""

    def __init__(
        self, lang: Any, weights: Any, mode: Any, preset: Any, tokenizer: Any, detokenize: Any, reduction: Any,
        grammar: Any = None,
    ) -> None:
        check_choice(mode, "mode", MODES)
        check_choice(preset, "preset", PRESETS)
        check_choice(reduction, "reduction", CODEBLEU_REDUCTIONS)
        check_bool(detokenize, "detokenize")
        if preset == "aij2021":
            if mode != "codebleu-0.7":
                raise ValueError(f"preset='aij2021' fixes the computation; leave `mode` at its default (got {mode!r})")
            if lang is None:
                lang = "python"
            if lang != "python":
                raise ValueError(f"preset='aij2021' scores Python (the Code2code task); got language={lang!r}")
            if tokenizer is not None:
                raise ValueError("preset='aij2021' splits on whitespace; `tokenize` cannot be set")
        elif detokenize:
            raise ValueError("`detokenize` applies to preset='aij2021' only (TransCoder-tokenised Python)")
        if lang is None:
            raise ValueError(f"`language` is required: one of {', '.join(repr(x) for x in LANGUAGES)}")
        check_choice(lang, "language", LANGUAGES)
        if isinstance(weights, (str, bytes)) or not isinstance(weights, Sequence):
            raise TypeError(f"`weights` must be a sequence of 4 numbers, got {describe_value(weights)}")
        if len(weights) != 4 or not all(isinstance(w, (int, float)) and not isinstance(w, bool) for w in weights):
            raise ValueError(f"`weights` must be 4 numbers (alpha, beta, gamma, theta), got {weights!r}")
        if not all(is_finite(w) for w in weights):
            raise ValueError(f"`weights` must be finite, got {weights!r}")
        if tokenizer is not None and not callable(tokenizer):
            raise TypeError(f"`tokenize` must be a callable str -> list[str] or None, got {describe_value(tokenizer)}")
        self.lang, self.mode, self.preset, self.reduction = lang, mode, preset, reduction
        self.weights = tuple(float(w) for w in weights)
        self.tokenizer: Optional[Callable[[str], Sequence[str]]] = tokenizer
        self.detokenize = detokenize
        self.keywords = AIJ2021_PYTHON if preset == "aij2021" else KEYWORDS[lang]
        self.grammar: Optional[str] = _grammar_path(grammar)
        self.grammar_digest = ""
        if self.grammar is not None:
            load_grammar(lang, self.grammar)  # fails here, naming `grammar`, when the binding cannot load it
            self.grammar_digest = file_sha256(self.grammar)[:12]

    @property
    def flavour(self) -> str:
        return "aij2021" if self.preset == "aij2021" else self.mode

    def signature_fields(self) -> dict[str, Any]:
        fields: dict[str, Any] = {"mode": self.flavour, "lang": self.lang}
        if self.weights != (0.25, 0.25, 0.25, 0.25):
            fields["weights"] = ",".join(f"{w:g}" for w in self.weights)
        fields["tok"] = "split" if self.tokenizer is None else "custom"
        if self.detokenize:
            fields["detok"] = "transcoder"
        if self.grammar is not None:
            loaded = load_grammar(self.lang, self.grammar)
            fields["grammar"] = f"{self.grammar_digest}.abi{loaded.abi}"
            fields["tree_sitter"] = binding().version
        fields["reduction"] = self.reduction
        return fields


def check_renamed(kwargs: dict[str, Any], owner: str, renamed: dict[str, str]) -> None:
    """A ``TypeError`` for an option passed under its name before the 0.x API renames (``lang`` → ``language``).

    A class hands its other keyword arguments to the ``Metric`` base, whose error would not name the new option.
    """
    for old, new in renamed.items():
        if old in kwargs:
            raise TypeError(f"{owner} got an unexpected keyword argument {old!r}: the option is now `{new}`")


def _grammar_path(grammar: Any) -> Optional[str]:
    """The absolute path of the ``grammar`` option (a file), or None."""
    if grammar is None:
        return None
    if not isinstance(grammar, (str, os.PathLike)) or isinstance(grammar, bytes):
        raise TypeError(f"`grammar` must be the path of a compiled tree-sitter grammar library (str or PathLike) or "
                        f"None, got {describe_value(grammar)}")
    path = expand_user(grammar)
    if not path.is_file():
        raise ValueError(f"`grammar` file not found: {os.fspath(path)!r}")
    return os.fspath(path.resolve())


# ---------------------------------------------------------------------------------------------------- per program
@functools.lru_cache(maxsize=1 << 16)
def _stripped(code: str, lang: str) -> str:
    return strip_comments(code, lang)


@functools.lru_cache(maxsize=1 << 16)
def _program(code: str, lang: str, library: Optional[str] = None) -> tuple[np.ndarray, np.ndarray]:
    """Subtree ids and data-flow edge ids of one program (cached per ``(lang, grammar library, text)``)."""
    root = parse(code, lang, library)
    return subtree_ids(root), edge_ids(root, token_table(root, code), lang)


def _programs(texts: Sequence[str], pair_sample: Sequence[int], name: str,
              config: _CodeBLEUConfig) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`_program` of each text; a text that is not UTF-8 (a lone surrogate) is a ``ValueError`` naming its
    sample — tree-sitter reads UTF-8 bytes, and codebleu 0.7 fails there with a ``UnicodeEncodeError``."""
    result = []
    for text, index in zip(texts, pair_sample):
        try:
            result.append(_program(text, config.lang, config.grammar))
        except UnicodeEncodeError as error:
            raise sample_error(
                ValueError, name, index, f"holds {error.object[error.start:error.end]!r} ({error.reason}), which UTF-8 "
                "cannot encode; CodeBLEU parses programs as UTF-8 bytes") from None
    return result


def clear_caches() -> None:
    """Forget the per-process caches of comment-stripped texts and of parsed programs (subtree and data-flow ids)."""
    _stripped.cache_clear()
    _program.cache_clear()


def detokenize_python(text: str) -> str:
    """Python source from TransCoder tokens: a line per ``NEW_LINE``, 4 spaces per ``INDENT`` level (``DEDENT``
    closes one), tokens joined by a space, ``▁`` → space, ``STRNEWLINE`` → newline, ``TABSYMBOL`` → tab.

    Example:
        >>> print(detokenize_python("def f ( x ) : NEW_LINE INDENT return x NEW_LINE DEDENT"))
        def f ( x ) :
            return x
    """
    lines, words, level, line_level = [], [], 0, 0
    for token in text.split():
        if token == "NEW_LINE":
            if words:
                lines.append("    " * line_level + " ".join(words))
            words = []
        elif token == "INDENT":
            level += 1
        elif token == "DEDENT":
            level = max(0, level - 1)
        else:
            if not words:
                line_level = level
            words.append(token.replace("▁", " ").replace("STRNEWLINE", "\n").replace("TABSYMBOL", "\t"))
    if words:
        lines.append("    " * line_level + " ".join(words))
    return "\n".join(lines)


def _tokens(texts: Sequence[str], tokenizer: Optional[Callable]) -> list[Sequence[str]]:
    if tokenizer is None:
        return [text.split() for text in texts]
    result = []
    for text in texts:
        tokens = tokenizer(text)
        if isinstance(tokens, str) or not isinstance(tokens, Sequence) or not all(isinstance(t, str) for t in tokens):
            raise TypeError(f"`tokenize` must return a list of strings, got {describe_value(tokens)}")
        result.append(tokens)
    return result


# ---------------------------------------------------------------------------------------------------- statistics
def _codebleu_update(preds: Any, target: Any, config: _CodeBLEUConfig, device: torch.device) -> Tensor:
    """Per-sample statistics ``float64[B, STATISTICS]`` of a batch."""
    hypotheses = as_text_list(preds, "preds")
    references = as_reference_lists(target, "target")
    check_same_length(hypotheses, "preds", references, "target")
    flavour, lang = config.flavour, config.lang
    if flavour != "aij2021":  # codebleu strips every input first
        hypotheses = [h.strip() for h in hypotheses]
        references = [[r.strip() for r in refs] for refs in references]
    stats = torch.zeros(len(hypotheses), STATISTICS, dtype=torch.float64, device=device)
    if not hypotheses:
        return stats
    stats[:, : ngram.COLUMNS] = ngram.ngram_statistics(
        _tokens(hypotheses, config.tokenizer), [_tokens(refs, config.tokenizer) for refs in references],
        config.keywords, device)

    # the (candidate, reference) texts that are parsed, one pair per reference
    cand_texts, ref_texts, pair_sample = [], [], []
    for index, (hyp, refs) in enumerate(zip(hypotheses, references)):
        if flavour == "aij2021":
            cand = detokenize_python(hyp) if config.detokenize else hyp
            for ref in refs:
                cand_texts.append(cand)
                ref_texts.append(detokenize_python(ref) if config.detokenize else ref)
        else:
            cand = _stripped(hyp, lang)
            for number, ref in enumerate(refs):
                if number and flavour == "codebleu-0.7":  # 0.7 strips the candidate again for every further reference
                    cand = _stripped(cand, lang)
                cand_texts.append(cand)
                ref_texts.append(_stripped(ref, lang))
        pair_sample.extend([index] * len(refs))
    cands = _programs(cand_texts, pair_sample, "preds", config)
    refs_parsed = _programs(ref_texts, pair_sample, "target", config)
    pair_sample_t = upload(np.asarray(pair_sample, dtype=np.int64), device)
    syn_m, syn_t = syntax_matches([c[0] for c in cands], [r[0] for r in refs_parsed], flavour == "paper", device)
    df_m, df_t = dataflow_matches([c[1] for c in cands], [r[1] for r in refs_parsed], device)
    for column, values in ((SYNTAX_MATCHES, syn_m), (SYNTAX_TOTAL, syn_t), (DATAFLOW_MATCHES, df_m),
                           (DATAFLOW_TOTAL, df_t)):
        stats[:, column].index_add_(0, pair_sample_t, values.double())
    stats[:, SAMPLES] = 1.0
    return stats


# ---------------------------------------------------------------------------------------------------- scores
def _ratio(numerator: Tensor, denominator: Tensor) -> Tensor:
    return torch.where(denominator > 0, numerator / denominator.clamp_min(1e-300), torch.zeros_like(numerator))


def _brevity_penalty(hyp_len: Tensor, ref_len: Tensor) -> Tensor:
    ratio = ref_len / hyp_len.clamp_min(1.0)
    return torch.where(hyp_len > ref_len, 1.0, torch.where(hyp_len == 0, 0.0, torch.exp(1.0 - ratio)))


def _bleu(matches: Tensor, totals: Tensor, hyp_len: Tensor, ref_len: Tensor, smooth: bool) -> Tensor:
    """NLTK corpus BLEU-4 of R rows (method 1 when ``smooth``, else Papineni's); 0 without unigram match."""
    numerators = torch.where(matches == 0, _SMOOTHING_EPSILON, matches) if smooth else matches
    precision = numerators / totals.clamp_min(1e-300)
    log_mean = torch.where(precision > 0, torch.log(precision.clamp_min(1e-300)), -math.inf).mean(dim=1)
    score = _brevity_penalty(hyp_len, ref_len) * torch.exp(log_mean)
    return torch.where(matches[:, 0] == 0, torch.zeros_like(score), score)


def _component_scores(stats: Tensor, config: _CodeBLEUConfig) -> Tensor:
    """``float64[R, 5]`` (the :data:`KEYS` in order) of R rows of (summed) statistics."""
    stats = stats.double()
    hyp_len, ref_len = stats[:, ngram.HYP_LEN], stats[:, ngram.REF_LEN]
    paper = config.flavour == "paper"
    bleu = _bleu(stats[:, ngram.BLEU_MATCHES], stats[:, ngram.BLEU_TOTALS], hyp_len, ref_len, smooth=not paper)
    if paper:
        weighted = _brevity_penalty(hyp_len, ref_len) * _ratio(stats[:, ngram.PRECISION_MATCHES],
                                                              stats[:, ngram.PRECISION_TOTAL])
    else:
        fifths = torch.where(torch.arange(4, device=stats.device) == 0, 5.0, 1.0).double()  # [5, 1, 1, 1]
        # codebleu measures each "reference" [tokens, weights] with len(): 2, whatever the length
        weighted = _bleu(stats[:, ngram.RECALL_MATCHES] / fifths, stats[:, ngram.RECALL_TOTALS] / fifths,
                         hyp_len, 2.0 * stats[:, SAMPLES], smooth=True)
    syntax = _ratio(stats[:, SYNTAX_MATCHES], stats[:, SYNTAX_TOTAL])
    dataflow = _ratio(stats[:, DATAFLOW_MATCHES], stats[:, DATAFLOW_TOTAL])
    alpha, beta, gamma, theta = config.weights
    counted = torch.where(dataflow == 0, 1.0, dataflow) if config.flavour == "codebleu-0.7" else dataflow
    total = alpha * bleu + beta * weighted + gamma * syntax + theta * counted
    scores = torch.stack([total, bleu, weighted, syntax, dataflow], dim=1)
    return torch.where((stats[:, SAMPLES] > 0)[:, None], scores, torch.zeros_like(scores))


def _as_dict(scores: Tensor) -> dict[str, Tensor]:
    return {key: scores[..., i] for i, key in enumerate(KEYS)}


def _codebleu_compute(statistics: Tensor, config: _CodeBLEUConfig) -> dict[str, Tensor]:
    """Corpus CodeBLEU of summed statistics ``float64[STATISTICS]``."""
    if bool((statistics[SAMPLES] > 0) & (statistics[DATAFLOW_TOTAL] == 0)):
        warn_caller(_NO_DATAFLOW)
    return _as_dict(_component_scores(statistics[None], config)[0])


@gc_paused
@single_threaded
def codebleu_score(
    preds: Any,
    target: Any,
    *,
    language: Optional[str] = None,
    weights: Sequence[float] = (0.25, 0.25, 0.25, 0.25),
    mode: str = "codebleu-0.7",
    preset: Optional[str] = None,
    tokenize: Optional[Callable[[str], Sequence[str]]] = None,
    detokenize: bool = False,
    grammar: str | os.PathLike | None = None,
    reduction: str = "corpus",
    device: torch.device | str | None = None,
) -> dict[str, Tensor]:
    """CodeBLEU of candidate programs against their references (see the module docstring for modes and quirks).

    Args:
        preds: ``B`` candidate programs (strings).
        target: ``B`` items, each the reference program(s) of the corresponding candidate (a string or a list).
        language: ``"python"``, ``"java"``, ``"javascript"``, ``"c_sharp"``, ``"php"``, ``"c"``, ``"cpp"``, ``"go"``,
            ``"ruby"`` or ``"rust"``; required (``preset="aij2021"`` implies ``"python"``). codebleu calls it ``lang``.
        weights: ``(α, β, γ, δ)`` of n-gram, weighted n-gram, AST and data-flow match.
        mode: ``"codebleu-0.7"`` (the ``codebleu`` package 0.7.0) or ``"paper"`` (Ren et al. 2020).
        preset: ``"aij2021"``: the AIJ-2021 Code2code script (Python, TransCoder tokens); replaces ``mode``.
        tokenize: ``str -> list[str]`` for the n-gram parts (default ``str.split``), codebleu's ``tokenizer``.
        detokenize: ``preset="aij2021"`` only: parse the TransCoder tokens turned back into Python source.
        grammar: path of a compiled tree-sitter grammar library exporting ``tree_sitter_<language>`` to parse with
            instead of the ``gpumetrics[code]`` wheel — with ``preset="aij2021"``, the organisers'
            ``my-languages.so`` (loadable by py-tree-sitter 0.2.0 only) gives the official Code2code number.
        reduction: ``"corpus"`` (default), ``"mean"``, ``"sum"`` or ``"none"`` (sentence-level dicts).
        device: where the statistics are counted and the result lives.

    Returns:
        ``{"codebleu", "ngram_match_score", "weighted_ngram_match_score", "syntax_match_score",
        "dataflow_match_score"}`` → ``DoubleTensor[]`` (``[B]`` for ``reduction="none"``).

    Raises:
        TypeError: ``preds`` / ``target`` are not strings / sequences of strings, or bad option types.
        ValueError: different numbers of candidates and references, a sample without reference, an unknown
            ``language`` / ``mode`` / ``preset`` / ``reduction``, options that do not go together; a program that
            UTF-8 cannot encode (a lone surrogate), naming the sample.
        ImportError: tree-sitter or the language's grammar is not installed (``pip install 'gpumetrics[code]'``).
        ValueError: ``grammar`` is not a file, not a grammar library of ``language``, or of a language ABI the installed
            py-tree-sitter cannot load (the message says which py-tree-sitter can).

    Example:
        >>> preds = ["def add(a, b):\\n    return a + b"]
        >>> target = [["def sum(first, second):\\n    return second + first"]]
        >>> scores = codebleu_score(preds, target, language="python")
        >>> {key: round(value.item(), 4) for key, value in scores.items()}  # doctest: +NORMALIZE_WHITESPACE
        {'codebleu': 0.5233, 'ngram_match_score': 0.0435, 'weighted_ngram_match_score': 0.0497,
         'syntax_match_score': 1.0, 'dataflow_match_score': 1.0}
    """
    config = _CodeBLEUConfig(language, weights, mode, preset, tokenize, detokenize, reduction, grammar)
    stats = _codebleu_update(preds, target, config, check_device(device, "device"))
    if reduction == "corpus":
        return _codebleu_compute(stats.sum(0), config)
    return _as_dict(reduce_scores(_component_scores(stats, config), reduction))


class CodeBLEUScore(PerSampleScore):
    """CodeBLEU accumulated over batches (see :func:`codebleu_score` for the options, the module for the modes).

    States: ``reduction="corpus"``: the 25 summed statistics (``float64[25]``, one all-reduce under DDP);
    sentence level: the per-sample score vectors through :class:`~gpumetrics.core.PerSampleScore`.

    Host syncs: at most 3 per update (the pruned positions of n-gram orders 2–4), independent of the batch; the
    AST and data-flow keys come from the host parser and go to the device in one copy per component.

    Example:
        >>> metric = CodeBLEUScore(language="python")
        >>> metric.update(["def add(a, b):\\n    return a + b"],
        ...               [["def sum(first, second):\\n    return second + first"]])
        >>> round(metric.compute()["codebleu"].item(), 4)
        0.5233
        >>> metric.signature()[:47]
        'codebleu|mode:codebleu-0.7|lang:python|tok:spli'
    """

    signature_name = "codebleu"
    kernel_threads = 1
    reductions = CODEBLEU_REDUCTIONS
    higher_is_better = True
    plot_lower_bound = 0.0
    plot_upper_bound = 1.0

    def __init__(
        self,
        *,
        language: Optional[str] = None,
        weights: Sequence[float] = (0.25, 0.25, 0.25, 0.25),
        mode: str = "codebleu-0.7",
        preset: Optional[str] = None,
        tokenize: Optional[Callable[[str], Sequence[str]]] = None,
        detokenize: bool = False,
        grammar: str | os.PathLike | None = None,
        reduction: str = "corpus",
        **kwargs: Any,
    ) -> None:
        check_renamed(kwargs, type(self).__name__, {"lang": "language", "tokenizer": "tokenize"})
        self.config = _CodeBLEUConfig(language, weights, mode, preset, tokenize, detokenize, reduction, grammar)
        super().__init__(reduction=reduction, score_shape=(len(KEYS),), **kwargs)
        self.add_state("statistics", torch.zeros(STATISTICS, dtype=torch.float64), dist_reduce_fx="sum")

    def update(self, preds: Any, target: Any) -> None:
        """Add a batch: ``preds`` — ``B`` programs; ``target`` — ``B`` programs or lists of reference programs."""
        stats = _codebleu_update(preds, target, self.config, self.device)
        if self.config.reduction == "corpus":
            self.statistics += stats.sum(0)
        else:
            self._accumulate(_component_scores(stats, self.config))

    def compute(self) -> dict[str, Tensor]:
        """The five scores, ``DoubleTensor[]`` each (``none``: ``[N]``); 0 before data."""
        if self.config.reduction == "corpus":
            return _codebleu_compute(self.statistics, self.config)
        return _as_dict(super().compute())

    def _signature_fields(self) -> dict[str, Any]:
        return self.config.signature_fields()

"""Russian lemmas (gpumetrics/text/tokenize/russian_lemmas.py) against pymorphy2 0.9.1 — the AIJ scripts'
lemmatiser — reading the same 2020 dictionary."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from tests.helpers.oracles import import_oracle

import_oracle("pymorphy3")

from gpumetrics.text.tokenize.russian_lemmas import organisers_morph_analyzer, russian_lemma  # noqa: E402
from tests.helpers.pymorphy2_oracle import pymorphy2_analyzer, pymorphy2_lemma  # noqa: E402
from tests.helpers.russian_tokens import random_tokens  # noqa: E402

SHARP_CASES = Path(__file__).parent / "data" / "russian_lemma_sharp_cases.txt"


def _sharp_cases() -> list[str]:
    lines = SHARP_CASES.read_text(encoding="utf-8").split("\n")
    return [line for line in lines if line and not line.startswith("#")]


def test_the_tokens_where_the_dictionaries_disagree_get_pymorphy2s_lemma():
    tokens = _sharp_cases()
    assert len(tokens) == len(set(tokens)) == 81 + 747
    assert [russian_lemma(token) for token in tokens] == [pymorphy2_lemma(token) for token in tokens]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_tokens_get_pymorphy2s_lemma(seed):
    analyzer = organisers_morph_analyzer()
    tokens = random_tokens(random.Random(seed), analyzer, 3000)
    assert [russian_lemma(token) for token in tokens] == [pymorphy2_lemma(token) for token in tokens]
    # whole parses too: the guesses' order and scores come from the re-read prediction-suffix records
    ours = [[(p.normal_form, str(p.tag), round(p.score, 9)) for p in analyzer.parse(token)] for token in tokens[::10]]
    theirs = [[(p.normal_form, str(p.tag), round(p.score, 9)) for p in pymorphy2_analyzer().parse(token)]
              for token in tokens[::10]]
    assert ours == theirs


def test_the_newer_dictionary_would_fail_these_tests():
    """pymorphy3's own 2022 dictionary, which the library read before, differs from pymorphy2 on every sharp case."""
    import pymorphy3

    newer = pymorphy3.MorphAnalyzer(lang="ru")
    tokens = _sharp_cases()
    assert [t for t in tokens if newer.parse(t)[0].normal_form == pymorphy2_lemma(t)] == []
    assert russian_lemma("каковы") == pymorphy2_lemma("каковы") == "каков" != newer.parse("каковы")[0].normal_form


def test_another_dictionary_version_is_refused(monkeypatch):
    import pymorphy2_dicts_ru

    monkeypatch.setattr(pymorphy2_dicts_ru, "__version__", "2.4.417150.4580142")
    organisers_morph_analyzer.cache_clear()
    try:
        with pytest.raises(ImportError, match=r"pymorphy2-dicts-ru==2\.4\.417127\.4579844, found .*417150"):
            organisers_morph_analyzer()
    finally:
        organisers_morph_analyzer.cache_clear()

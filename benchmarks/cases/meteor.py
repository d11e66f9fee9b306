"""METEOR 1.5 vs pycocoevalcap's ``Meteor`` (the jar, end to end), and mode "nltk" vs NLTK's ``meteor_score`` loop."""

from __future__ import annotations

import random

from benchmarks.registry import Contenders, register
from gpumetrics.functional import meteor_score
from gpumetrics.text.meteor import jar, tables
from testkit.text_data import caption_batch

_N_REFS = 5


def _cold(fn):
    """Run ``fn`` after dropping every per-process table (paraphrase trie from the disk cache, WordNet, word caches),
    so each repeat pays the one-time load a new process pays."""

    def run():
        tables.paraphrase_table.cache_clear()
        tables.synonym_table.cache_clear()
        tables.function_words.cache_clear()
        jar._word_table.cache_clear()
        return fn()

    return run


def _against_the_jar(preds: list[str], target: list[list[str]], device: str, note: str) -> Contenders:
    """meteor_score (tables reloaded each repeat) against pycocoevalcap's Meteor (a new JVM each repeat)."""
    from pycocoevalcap.meteor.meteor import Meteor

    gts, res = {i: refs for i, refs in enumerate(target)}, {i: [p] for i, p in enumerate(preds)}
    tables.paraphrase_table()  # the disk cache exists before timing (built once per installation)

    def anchor() -> float:
        meteor = Meteor()
        score = float(meteor.compute_score(gts, res)[0])
        del meteor
        return score

    return Contenders(
        ours={"meteor_score (table load included)": _cold(lambda: meteor_score(preds, target, device=device).item())},
        anchors={"pycocoevalcap Meteor (JVM start + jar)": anchor},
        check=lambda ours, anchor: abs(ours - anchor) < 1e-9,
        note=note,
    )


@register("meteor_1.5", sizes=(5_000, 40_000), quick_sizes=(500,), repeats=2)
def meteor_jar_case(size: int, device: str) -> Contenders:
    preds, target = caption_batch(random.Random(size), size, _N_REFS)
    return _against_the_jar(
        preds, target, device,
        f"COCO-like raw captions, {_N_REFS} references each (a few 1–4); -norm tokenisation included on both sides",
    )


class _Lemma:
    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


class _Synset:
    def __init__(self, names: list[str]) -> None:
        self._lemmas = [_Lemma(n) for n in names]

    def lemmas(self) -> list[_Lemma]:
        return self._lemmas


class _FakeWordNet:
    """What NLTK's meteor reads of WordNet (``synsets(word)`` → ``lemmas()`` → ``name()``), from a dictionary."""

    def __init__(self, table: dict[str, list[list[str]]]) -> None:
        self.table = table

    def synsets(self, word: str) -> list[_Synset]:
        return [_Synset(names) for names in self.table.get(word, [])]


@register("meteor_nltk", sizes=(2_000, 20_000), quick_sizes=(300,), repeats=3)
def meteor_nltk_case(size: int, device: str) -> Contenders:
    from nltk.stem.porter import PorterStemmer
    from nltk.translate.meteor_score import meteor_score as nltk_meteor

    from gpumetrics.text.meteor.synonyms import DictSynonyms

    rng = random.Random(size)
    preds, target = caption_batch(rng, size, _N_REFS)
    hyps = [p.lower().split() for p in preds]
    refs = [[r.lower().split() for r in rs] for rs in target]
    porter = PorterStemmer()
    words = sorted({w for h in hyps for w in h} | {w for rs in refs for r in rs for w in r})
    words = sorted(set(words) | {porter.stem(w) for w in words})
    table = {w: [rng.sample(words, 3)] for w in words if rng.random() < 0.3}
    fake = _FakeWordNet(table)
    synonyms = DictSynonyms({w: {n for names in s for n in names if "_" not in n} for w, s in table.items()})

    return Contenders(
        ours={"meteor_score(mode=nltk)": lambda: meteor_score(hyps, refs, mode="nltk", synonyms=synonyms,
                                                              reduction="none", device=device)},
        anchors={"nltk meteor_score loop": lambda: [nltk_meteor(r, h, wordnet=fake) for h, r in zip(hyps, refs)]},
        check=lambda ours, anchor: max(abs(a - b) for a, b in zip(ours.tolist(), anchor)) < 1e-9,
        note="pre-tokenised captions, 5 refs, the same fake WordNet (30% of words with one 3-word synset) on both "
             "sides",
    )


@register("meteor_1.5_long", sizes=(40,), quick_sizes=(8,), repeats=2)
def meteor_jar_long_case(size: int, device: str) -> Contenders:
    """Very uneven lengths: 100–700-word hypotheses, a shuffled copy and the first half as references."""
    from testkit.text_data import random_caption

    rng = random.Random(size)
    preds, target = [], []
    for _ in range(size):
        words = [rng.choice(random_caption(rng).split() or ["x"]) for _ in range(rng.choice([100, 300, 700]))]
        preds.append(" ".join(words))
        target.append([" ".join(rng.sample(words, len(words))), " ".join(words[: len(words) // 2])])
    return _against_the_jar(
        preds, target, device, "long texts with many repeated words (beam search over up to 700 reference positions)"
    )


@register("meteor_1.5_long_pair", sizes=(1_000, 5_000, 10_000), quick_sizes=(300,), unit="words", repeats=1)
def meteor_jar_long_pair_case(size: int, device: str) -> Contenders:
    """One pair of ``size`` words each side (concatenated captions: a few hundred distinct words, each repeated), two
    references (another text, a shuffled copy): candidates grow with size², the jar's path copies with size³."""
    from testkit.text_data import long_pairs

    preds, target = long_pairs(size, size)
    return _against_the_jar(
        preds, target, device,
        "one long pair, repeated vocabulary; memory_budget at its default (the pair fits); the jar takes minutes",
    )

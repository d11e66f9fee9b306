"""METEOR mode "nltk" (gpumetrics/text/meteor/nltk_style.py) and the synonym providers vs NLTK 3.x's meteor_score."""

import random
import sqlite3

import pytest
import torch
from tests.helpers.oracles import import_oracle

nltk_meteor = import_oracle("nltk.translate.meteor_score")
from nltk.stem.porter import PorterStemmer  # noqa: E402
from nltk.stem.snowball import SnowballStemmer  # noqa: E402

from gpumetrics.text.meteor.nltk_style import align_words, cached_stemmer, nltk_meteor_scores  # noqa: E402
from gpumetrics.text.meteor.synonyms import (  # noqa: E402
    DictSynonyms, NoSynonyms, RuWordNetSynonyms, SynonymProvider, TSVSynonyms, WordNetSynonyms, as_synonym_provider,
)

VOCAB = (
    "cat cats dog dogs run running ran runner the a an mat mats sit sat sitting big large huge small little go went "
    "gone generous generously кот кошки кошка Кошку 日本 語 ünïcode ÜNÏCODE x_y 🙂 é e\u0301 ǅ ß SS"
).split()


# ---------------------------------------------------------------------------------------------------- fake WordNet
class _Lemma:
    def __init__(self, name):
        self._name = name

    def name(self):
        return self._name


class _Synset:
    def __init__(self, names):
        self._names = names

    def lemmas(self):
        return [_Lemma(name) for name in self._names]


class FakeWordNet:
    """The part of nltk.corpus.wordnet that NLTK's meteor uses: synsets(word) → lemmas() → name()."""

    def __init__(self, synsets_by_word):
        self.synsets_by_word = synsets_by_word

    def synsets(self, word):
        return [_Synset(names) for names in self.synsets_by_word.get(word, [])]


def _fake_wordnet(rng):
    porter = PorterStemmer()
    words = sorted(set(VOCAB) | {porter.stem(w) for w in VOCAB} | {w.lower() for w in VOCAB})
    table = {}
    for word in words:
        if rng.random() < 0.5:
            table[word] = [
                [rng.choice(words) for _ in range(rng.randint(1, 3))] + (["multi_word"] if rng.random() < 0.3 else [])
                for _ in range(rng.randint(1, 2))
            ]
    return FakeWordNet(table)


def _equivalent_dict(fake):
    return DictSynonyms({w: {n for names in s for n in names if "_" not in n} for w, s in fake.synsets_by_word.items()})


def _sentence(rng, length):
    return [rng.choice(VOCAB) for _ in range(length)]


def _random_batch(rng, n):
    lengths = [0, 1, 1, 2, 3, 5, 8, 13, 40]
    hyps = [_sentence(rng, rng.choice(lengths)) for _ in range(n)]
    refs = [[_sentence(rng, rng.choice(lengths)) for _ in range(rng.randint(1, 4))] for _ in range(n)]
    for hyp, sample_refs in zip(hyps, refs):  # shared words, repeats and permutations, so every stage has work
        if hyp and rng.random() < 0.5:
            sample_refs[0] = rng.sample(hyp, len(hyp)) + _sentence(rng, rng.randint(0, 3))
    return hyps, refs


def _nltk_scores(hyps, refs, **kwargs):
    return torch.tensor([nltk_meteor.meteor_score(r, h, **kwargs) for h, r in zip(hyps, refs)], dtype=torch.float64)


# ---------------------------------------------------------------------------------------------------- parity
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_equals_nltk_with_the_same_synonyms(seed):
    rng = random.Random(seed)
    fake = _fake_wordnet(rng)
    hyps, refs = _random_batch(rng, 400)
    expected = _nltk_scores(hyps, refs, wordnet=fake)
    got = nltk_meteor_scores(hyps, refs, synonyms=_equivalent_dict(fake))
    assert got.dtype == torch.float64 and got.shape == (400,)
    torch.testing.assert_close(got, expected, rtol=0, atol=1e-9)
    # WordNetSynonyms over the same fake reader builds the same sets
    torch.testing.assert_close(nltk_meteor_scores(hyps, refs, synonyms=WordNetSynonyms(fake)), expected, rtol=0,
                               atol=1e-9)


def test_equals_nltk_with_other_parameters_and_stemmers():
    rng = random.Random(7)
    fake = _fake_wordnet(rng)
    hyps, refs = _random_batch(rng, 200)
    synonyms = _equivalent_dict(fake)
    for alpha, beta, gamma in [(0.5, 1.0, 0.0), (0.85, 0.2, 0.6), (1.0, 2.0, 1.0), (0.0, 3.0, 0.5)]:
        expected = _nltk_scores(hyps, refs, wordnet=fake, alpha=alpha, beta=beta, gamma=gamma)
        got = nltk_meteor_scores(hyps, refs, alpha=alpha, beta=beta, gamma=gamma, synonyms=synonyms)
        torch.testing.assert_close(got, expected, rtol=0, atol=1e-9)
    snowball = SnowballStemmer("english")
    expected = _nltk_scores(hyps, refs, wordnet=fake, stemmer=snowball)
    torch.testing.assert_close(nltk_meteor_scores(hyps, refs, stemmer=snowball, synonyms=synonyms), expected,
                               rtol=0, atol=1e-9)


def test_alignment_equals_nltk_align_words():
    rng = random.Random(3)
    fake = _fake_wordnet(rng)
    synonyms = _equivalent_dict(fake)
    stem = cached_stemmer(None)
    for _ in range(500):
        hyp = tuple(w.lower() for w in _sentence(rng, rng.choice([0, 1, 4, 12])))
        ref = tuple(w.lower() for w in _sentence(rng, rng.choice([0, 1, 4, 12])))
        expected, _, _ = nltk_meteor.align_words(hyp, ref, wordnet=fake)
        assert align_words(hyp, ref, stem, synonyms) == expected


def test_edge_cases_equal_nltk():
    fake = FakeWordNet({"big": [["large"]]})
    cases = [
        ([], [[]]), ([], [["a"]]), (["a"], [[]]), (["a"], [["a"]]), (["A"], [["a"]]), (["a"], [["b"], ["a"]]),
        (["a", "a", "a"], [["a"]]), (["a"], [["a", "a", "a"]]), (["big"], [["large"]]), (["bigs"], [["large"]]),
        (["x"] * 60, [["x"]]), (["the", "cat"], [["cat", "the"]]), (["日本", "語"], [["語", "日本"], ["日本"]]),
    ]
    hyps, refs = [hyp for hyp, _ in cases], [ref for _, ref in cases]
    torch.testing.assert_close(nltk_meteor_scores(hyps, refs, synonyms=_equivalent_dict(fake)),
                               _nltk_scores(hyps, refs, wordnet=fake), rtol=0, atol=1e-9)


def test_strings_are_split_on_whitespace():
    rng = random.Random(5)
    fake = _fake_wordnet(rng)
    hyps, refs = _random_batch(rng, 100)
    expected = nltk_meteor_scores(hyps, refs, synonyms=_equivalent_dict(fake))
    as_strings = nltk_meteor_scores([" ".join(h) for h in hyps], [["\t ".join(r) for r in rs] for rs in refs],
                                    synonyms=_equivalent_dict(fake))
    torch.testing.assert_close(as_strings, expected, rtol=0, atol=0)
    one = nltk_meteor_scores("the cat sat", "the cat sat", synonyms=NoSynonyms())  # one sample, one reference
    torch.testing.assert_close(one, _nltk_scores([["the", "cat", "sat"]], [[["the", "cat", "sat"]]],
                                                 wordnet=FakeWordNet({})))


def test_real_wordnet_if_installed():
    try:
        provider = WordNetSynonyms()
    except FileNotFoundError as error:
        pytest.skip(f"NLTK's WordNet corpus is not installed here (no download in tests): {error}")
    from nltk.corpus import wordnet

    rng = random.Random(11)
    hyps, refs = _random_batch(rng, 200)
    torch.testing.assert_close(nltk_meteor_scores(hyps, refs, synonyms=provider),
                               _nltk_scores(hyps, refs, wordnet=wordnet), rtol=0, atol=1e-9)


def test_device_argument_cpu():
    got = nltk_meteor_scores(["a b"], [["a b"]], synonyms=NoSynonyms(), device="cpu")
    assert got.device.type == "cpu"


# ---------------------------------------------------------------------------------------------------- providers
def test_providers(tmp_path):
    assert NoSynonyms().synonyms("cat") == frozenset()
    provider = DictSynonyms({"cat": ["feline", "puss"]})
    assert provider.synonyms("cat") == {"feline", "puss"} and provider.synonyms("dog") == frozenset()
    assert provider.synonyms("cat") is provider.synonyms("cat")  # cached
    path = tmp_path / "syn.tsv"
    path.write_text("cat\tfeline\n\ncat\tpuss\tkitty\nкот\tкошка\n", encoding="utf-8")
    tsv = TSVSynonyms(path)
    assert tsv.synonyms("cat") == {"feline", "puss", "kitty"} and tsv.synonyms("кот") == {"кошка"}
    assert as_synonym_provider(str(path)).synonyms("cat") == tsv.synonyms("cat")
    assert as_synonym_provider({"a": ["b"]}).synonyms("a") == {"b"}
    assert isinstance(as_synonym_provider(tsv), SynonymProvider)


def _tiny_ruwordnet(path):
    database = sqlite3.connect(path)
    database.executescript(
        """
        CREATE TABLE sense (id TEXT PRIMARY KEY, name TEXT, lemma TEXT, synset_id TEXT);
        CREATE TABLE synset (id TEXT PRIMARY KEY, title TEXT, definition TEXT, part_of_speech TEXT);
        CREATE TABLE hypernym_relation (hyponym_id TEXT, hypernym_id TEXT);
        CREATE TABLE derivation_relation (source_id TEXT, derivative_id TEXT);
        INSERT INTO synset VALUES ('s1', 'КОШКА', '', 'N'), ('s2', 'ЖИВОТНОЕ', '', 'N'),
                                  ('s3', 'Домашний Зверь', '', 'N');
        INSERT INTO sense VALUES ('k1', 'КОШКА', 'КОШКА', 's1'), ('k2', 'КОШАЧИЙ', 'КОШАЧИЙ', 's2'),
                                 ('k3', 'КОШКА', 'КОШКА', 's3');
        INSERT INTO hypernym_relation VALUES ('s1', 's2'), ('s3', 's3');
        INSERT INTO derivation_relation VALUES ('k1', 'k2');
        """
    )
    database.commit()
    database.close()


def test_ruwordnet_database_and_object_agree(tmp_path):
    path = tmp_path / "ruwordnet.db"
    _tiny_ruwordnet(path)
    from_database = RuWordNetSynonyms(path)
    assert from_database.synonyms("кошка") == {"животное", "домашний зверь", "кошачий"}
    assert from_database.synonyms(" Кошка ") == from_database.synonyms("кошка")
    assert from_database.synonyms("собака") == frozenset()

    class Obj:
        def __init__(self, **kw):
            self.__dict__.update(kw)

    class RuWordNetLike:  # ruwordnet.RuWordNet's get_senses over the same rows
        def get_senses(self, lemma):
            if lemma.upper().strip() != "КОШКА":
                return []
            return [Obj(synset=Obj(hypernyms=[Obj(title="ЖИВОТНОЕ")]), derivations=[Obj(name="КОШАЧИЙ")]),
                    Obj(synset=Obj(hypernyms=[Obj(title="Домашний Зверь")]), derivations=[])]

    assert RuWordNetSynonyms(RuWordNetLike()).synonyms("кошка") == from_database.synonyms("кошка")


# ---------------------------------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "hyps, refs, error, words",
    [
        ([["a"]], [["a"]], TypeError, "references[0][0]"),
        ([["a"], "b"], [[["a"]], [["b"]]], TypeError, "hypotheses[1]"),
        ([["a", 1]], [[["a"]]], TypeError, "hypotheses[0][1]"),
        (["a"], [[1]], TypeError, "references[0][0]"),
        (["a"], [[]], ValueError, "references[0]"),
        ([["a"]], [[]], ValueError, "references[0]"),
        (["a", "b"], [["a"]], ValueError, "`hypotheses` and `references`"),
        (None, [["a"]], TypeError, "hypotheses"),
        (["a"], None, TypeError, "references"),
    ],
)
def test_bad_inputs_name_the_argument(hyps, refs, error, words):
    with pytest.raises(error, match=words.replace("[", r"\[").replace("]", r"\]")):
        nltk_meteor_scores(hyps, refs, synonyms=NoSynonyms())


def test_bad_options_name_the_argument(tmp_path):
    with pytest.raises(TypeError, match="`alpha`"):
        nltk_meteor_scores(["a"], ["a"], alpha="0.9", synonyms=NoSynonyms())
    with pytest.raises(ValueError, match="`gamma`"):
        nltk_meteor_scores(["a"], ["a"], gamma=float("nan"), synonyms=NoSynonyms())
    with pytest.raises(TypeError, match="`stemmer`"):
        nltk_meteor_scores(["a"], ["a"], stemmer=3, synonyms=NoSynonyms())
    with pytest.raises(TypeError, match="`synonyms`"):
        nltk_meteor_scores(["a"], ["a"], synonyms=3)
    with pytest.raises(FileNotFoundError, match="`path`"):
        TSVSynonyms(tmp_path / "missing.tsv")
    bad = tmp_path / "bad.tsv"
    bad.write_text("no tab here\n", encoding="utf-8")
    with pytest.raises(ValueError, match="line 1"):
        TSVSynonyms(bad)
    with pytest.raises(FileNotFoundError, match="`source`"):
        RuWordNetSynonyms(tmp_path / "missing.db")
    with pytest.raises(TypeError, match="`source`"):
        RuWordNetSynonyms(3)
    with pytest.raises(TypeError, match="`mapping`"):
        DictSynonyms({"a": "b"})


def test_missing_data_messages_say_what_to_install():
    try:
        WordNetSynonyms()
    except FileNotFoundError as error:
        assert "nltk.downloader wordnet" in str(error)
    try:
        RuWordNetSynonyms()
    except ImportError as error:
        assert "pip install ruwordnet" in str(error)
    except FileNotFoundError as error:
        assert "ruwordnet download" in str(error)


# ---------------------------------------------------------------------------------------------------- module, DDP
@pytest.mark.ddp
def test_module_equals_nltk_with_ddp():
    from gpumetrics import METEORScore
    from gpumetrics.functional import meteor_score
    from tests.helpers.harness import check_metric

    rng = random.Random(11)
    fake = _fake_wordnet(rng)
    batches = [_random_batch(rng, n) for n in (9, 1, 14, 5)]
    check_metric(
        METEORScore, meteor_score, lambda hyps, refs: _nltk_scores(hyps, refs, wordnet=fake), batches,
        metric_kwargs={"mode": "nltk", "synonyms": _equivalent_dict(fake), "reduction": "none"}, check_forward=False,
    )
    check_metric(  # corpus = mean of sentence scores, with parameters handed through the module
        METEORScore, meteor_score,
        lambda hyps, refs: _nltk_scores(hyps, refs, wordnet=fake, alpha=0.8, gamma=0.4).mean(),
        batches, metric_kwargs={"mode": "nltk", "synonyms": _equivalent_dict(fake), "alpha": 0.8, "gamma": 0.4},
        check_forward=False, ddp=False,
    )

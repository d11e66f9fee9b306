"""METEOR 1.5's -norm normaliser against the jar's own normaliser (edu.cmu.meteor.util.Normalizer in pycocoevalcap's
meteor-1.5.jar, run with Java: the reference is a test dependency, never skipped)."""

from __future__ import annotations

import os
import random
import re
import subprocess

import pytest

from gpumetrics.text.tokenize import get_tokenizer
from gpumetrics.text.tokenize.meteor import meteor_jar, meteor_normalize, nonbreaking_prefixes

FRAGMENTS = [
    "the", "cat", "Dog", "a", "man", "riding", "BIKE", "isn't", "dog's", "'90s", "rock'n'roll", "o'clock", "it’s",
    "‘quoted’", "“double”", "''twin''", "`back`", "U.S.A.", "e.g.", "i.e.", "Mr.", "Dr.", "No.", "Art.", "pp.",
    "3,000", "3,000.50", "1,2", "a,b", "x,", ",y", "3.", "end.", "...", "....", ".....", "a...b", "wait..", "--", "–",
    "-", "well-known", "3-4", "-5", "a.-b", "(paren)", "[box]", "{brace}", "50%", "$5", "#tag", "@user", "a/b",
    "x&y", "!", "?!", ";", ":", "кошка", "Ёлка.", "Straße", "naïve", "ŽŠ", "Ÿes", "鳥", "猫が", "🙂", "x🙂y",
    "ᴀᴍ", "Ꙁ", "\t", "\u00a0", "\u3000", "\u2009", "\u000b", "\f", "ß.", "Inc.", "Jan.", "vs.", "St.", "A.",
    "b.", "1.", "N.Y.", "4'5", "5's", "O'Neil", "' ", " '", "''", "'", "DOTMULTI", "x.y.z", "I'm", "can't", "won't",
]


def _random_lines(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    lines = []
    for _ in range(count):
        words = rng.choices(FRAGMENTS, k=rng.randint(0, 14))
        joiners = [rng.choice([" ", " ", " ", "", "  "]) for _ in words]
        lines.append("".join(w + j for w, j in zip(words, joiners)).replace("\n", " ").replace("\r", " "))
    return lines


def _jar_normalize(lines: list[str], language: str = "en") -> list[str]:
    """The jar's normaliser, one call for every line (UTF-8 in and out)."""
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    command = ["java", "-Dfile.encoding=UTF-8", "-Dsun.stdout.encoding=UTF-8", "-Dstdout.encoding=UTF-8",
               "-cp", str(meteor_jar()), "edu.cmu.meteor.util.Normalizer", language, "true"]
    result = subprocess.run(command, input="\n".join(lines) + "\n", capture_output=True, text=True,
                            encoding="utf-8", env=env, check=True, timeout=120)
    out = result.stdout.split("\n")
    assert out[-1] == "" and len(out) == len(lines) + 1, result.stderr[-500:]
    return out[:-1]


@pytest.fixture(scope="module")
def jar_outputs():
    lines = _random_lines(3000, seed=12) + [fragment for fragment in FRAGMENTS if "\n" not in fragment] + [
        "", " ", "A man in a hat.", "It's 5 p.m. now. The end", "He said ''hi'' -- then left...", "No. 5 is No. one",
        "Mr. smith", "Mr. Smith", "pp. 12", "pp. twelve", "see Art. 3", "U.S. troops.", "a. b. c.", "...start",
    ]
    return lines, _jar_normalize(lines)


def test_normalisation_equals_the_jar(jar_outputs):
    lines, expected = jar_outputs
    mismatches = [(line, want, meteor_normalize(line)) for line, want in zip(lines, expected)
                  if meteor_normalize(line) != want]
    assert not mismatches, f"{len(mismatches)} of {len(lines)} differ, e.g. {mismatches[:3]}"


def test_tokenizer_lowercases_and_splits_as_the_scorer_does(jar_outputs):
    tokenizer = get_tokenizer("meteor-1.5")
    lines, expected = jar_outputs
    for line, want in zip(lines[:500], expected[:500]):
        # java.util.StringTokenizer splits on space, tab, newline, CR and form feed — a vertical tab stays in a word
        assert tokenizer.tokenize(line) == [word for word in re.split("[ \t\n\r\f]+", want.lower()) if word]
    assert tokenizer.signature() == {"tok": "meteor-1.5-norm"}
    batch = tokenizer.encode(["A man.", "", "a MAN"])
    assert batch.lengths.tolist() == [3, 0, 2] and batch.ids.tolist() == [0, 1, 2, 0, 1]


def test_prefix_list_is_read_from_the_installed_jar():
    prefixes = nonbreaking_prefixes("english")
    assert prefixes["Mr"] == "any" and prefixes["No"] == "numeric-only" and len(prefixes) > 50


RUSSIAN = [
    "Кошка", "сидит", "на", "окне", "т.е.", "т.д.", "г.", "ул.", "им.", "А.", "Б.", "п.", "стр.", "5", "кот's",
    "д'Артаньян",
    "'цитата'", "«ёлка»", "—", "...", "1,5", "а,б", "рис.", "см.", "Москва.", "США.", "x-ray", "ёж", "ЁЖ.",
]


def test_russian_normalisation_equals_the_jar():
    rng = random.Random(13)
    lines = [" ".join(rng.choices(RUSSIAN + FRAGMENTS[:40], k=rng.randint(0, 10))) for _ in range(800)]
    expected = _jar_normalize(lines, "ru")
    mismatches = [(line, want, meteor_normalize(line, "ru")) for line, want in zip(lines, expected)
                  if meteor_normalize(line, "ru") != want]
    assert not mismatches, f"{len(mismatches)} of {len(lines)} differ, e.g. {mismatches[:3]}"
    assert get_tokenizer("meteor-1.5", language="ru").signature() == {"tok": "meteor-1.5-norm-ru"}
    with pytest.raises(ValueError, match="language"):
        get_tokenizer("meteor-1.5", language="xx")

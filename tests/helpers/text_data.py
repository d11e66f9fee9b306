"""Random text for parity tests: English with articles and punctuation, numbers, Cyrillic, CJK, emoji, combining
marks, empty strings, choice letters, several references per sample."""

from __future__ import annotations

import random

WORDS = [
    "the", "a", "an", "The", "A", "cat", "cats", "dog", "sat", "on", "mat", "Paris", "answer", "is", "b", "C)",
    "42", "3.14", "-5", "x-ray", "don't", "U.S.A.", "(a)", "e", "well-known",
    "кошка", "кошки", "собака", "Москва", "ответ:", "бежали", "Ёж", "три", "дом", "домами",
    "北京", "猫", "東京タワー", "🙂", "🐈‍⬛", "é", "é", "naïve", "Z̤͂", "ß", "İstanbul",
    ",", ".", "!", "?", "—", "«", "»", "'", "\"", "...", "#", "%", "&",
]


def random_text(rng: random.Random, max_words: int = 8) -> str:
    """A random string: 0..max_words words joined by random whitespace, occasionally glued punctuation."""
    n = rng.choice([0, 1, 1, 2, 3, 5, max_words])
    words = [rng.choice(WORDS) for _ in range(n)]
    separators = [rng.choice([" ", " ", " ", "  ", "\t", ""]) for _ in range(max(n - 1, 0))]
    text = words[0] if words else ""
    for sep, word in zip(separators, words[1:]):
        text += sep + word
    return text


def related_text(rng: random.Random, source: str) -> str:
    """A perturbed copy of ``source`` so that scores are neither all 0 nor all 1."""
    words = source.split()
    if not words or rng.random() < 0.2:
        return random_text(rng)
    action = rng.random()
    if action < 0.3:
        return source
    if action < 0.6:
        rng.shuffle(words)
        return " ".join(words[: max(1, len(words) - 1)])
    return " ".join(words + [rng.choice(WORDS)])


def qa_batch(rng: random.Random, size: int, max_refs: int = 4) -> tuple[list[str], list[list[str]]]:
    """``size`` predictions and, per prediction, 1..max_refs gold answers (some empty, some related)."""
    preds, target = [], []
    for _ in range(size):
        gold = [random_text(rng) for _ in range(rng.randint(1, max_refs))]
        preds.append(related_text(rng, rng.choice(gold)))
        target.append(gold)
    return preds, target


def qa_batches(seed: int, sizes: list[int], max_refs: int = 4) -> list[tuple[list[str], list[list[str]]]]:
    rng = random.Random(seed)
    return [qa_batch(rng, size, max_refs) for size in sizes]

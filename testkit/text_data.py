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


# ---------------------------------------------------------------------------------------------------- captions
CAPTION_SUBJECTS = [
    "a man", "A man", "a person", "the guy", "a woman", "two men", "a group of people", "some kids", "a child",
    "a little girl", "a young boy", "the player", "a skier", "a dog", "two dogs", "a black cat", "cats", "a horse",
    "an elephant", "a giraffe", "the bird", "a baseball player", "a tennis player", "people", "a couple", "a lady",
]
CAPTION_VERBS = [
    "is riding", "rides", "riding", "rode", "is sitting on", "sits on", "sitting on", "is standing next to",
    "stands by", "is holding", "holds", "holding", "is eating", "eats", "eating", "is playing with", "plays with",
    "playing", "is looking at", "looks at", "watching", "is walking along", "walks down", "walking on", "jumps over",
    "is jumping over", "is flying over", "flies above", "is laying on", "lies on", "is swinging", "throws", "catches",
]
CAPTION_OBJECTS = [
    "a horse", "the horse", "horses", "a bench", "the beach", "the shore", "a surfboard", "a skateboard",
    "a pizza", "a slice of pizza", "a sandwich", "the street", "a road", "a frisbee", "the ball", "a tennis racket",
    "a bat", "the snow", "a hill", "a table", "a plate of food", "the grass", "a field", "the water", "a kite",
    "a couch", "a bed", "the sky", "a clock tower", "a red bus", "a train", "the train tracks", "a wave",
]
CAPTION_TAILS = [
    "", "", "", ".", " .", " in the park", " near the ocean", " on a sunny day", " at night", " in the city",
    " with a smile", " next to a building", ", while others watch", " in front of a crowd", " on top of a hill",
    " during the game", " together", " outside", " in the rain", " by the water", " with 2 friends", " at 3 pm",
]
CAPTION_ODDITIES = [
    "well-known", "x-ray", "don't", "it's", "man's", "U.S.", "e.g.", "Mr. Smith", "1,000", "3.5", "10-year-old",
    "black-and-white", "...", "!", "?", "(", ")", '"', "''", "`", "’s", "naïve", "café", "—", "–", "Straße", "ёж",
    "|||", "a  b", "\t", "ELEPHANT", "Giraffes", "RIDING",
]


def random_caption(rng: random.Random) -> str:
    """A COCO-like caption: subject, verb, object, tail, sometimes an odd token (punctuation, digits, case …)."""
    words = (f"{rng.choice(CAPTION_SUBJECTS)} {rng.choice(CAPTION_VERBS)} {rng.choice(CAPTION_OBJECTS)}"
             f"{rng.choice(CAPTION_TAILS)}")
    if rng.random() < 0.3:
        parts = words.split(" ")
        parts.insert(rng.randrange(len(parts) + 1), rng.choice(CAPTION_ODDITIES))
        words = " ".join(parts)
    if rng.random() < 0.15:
        words = words.upper() if rng.random() < 0.3 else words.capitalize()
    if rng.random() < 0.05:
        words = rng.choice(["", " ", ".", words + " " + words, words.replace(" ", "")])
    return words


def caption_batch(rng: random.Random, size: int, references: int = 5) -> tuple[list[str], list[list[str]]]:
    """``size`` hypotheses with ``references`` references each (sometimes 1..references)."""
    preds, target = [], []
    for _ in range(size):
        count = references if rng.random() < 0.9 else rng.randint(1, references)
        refs = [random_caption(rng) for _ in range(count)]
        preds.append(refs[0] if rng.random() < 0.05 else random_caption(rng))
        target.append(refs)
    return preds, target


def long_text(rng: random.Random, words: int) -> str:
    """``words`` words of concatenated COCO-like captions (a vocabulary of a few hundred words, heavily repeated)."""
    out: list[str] = []
    while len(out) < words:
        out += random_caption(rng).replace("|||", "").split()
    return " ".join(out[:words])


def long_pairs(seed: int, words: int, count: int = 1) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(seed)
    preds = [long_text(rng, words) for _ in range(count)]
    return preds, [[long_text(rng, words), " ".join(rng.sample(p.split(), len(p.split())))] for p in preds]

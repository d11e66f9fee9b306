"""Random tokens for Russian lemma tests: dictionary word forms, near-words the analyser must guess, and the odd
strings answers contain (hyphens, digits, Latin letters, several words — the AIJ-2022 VQA script lemmatises a
whole answer as one "word")."""

from __future__ import annotations

import itertools
import random
from typing import Any

CYRILLIC = "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"
_ENDINGS = ("а", "ы", "у", "ов", "ами", "ах", "ой", "ей", "ий", "ая", "ое", "ые", "ого", "ему", "ть", "л", "ла", "ли",
            "ет", "ют", "ит", "ат", "ся", "сь", "енок", "ёнка", "ство", "ник", "ка", "ки", "ок", "ков", "ство", "ость")
_PREFIXES = ("не", "по", "пере", "за", "раз", "супер", "псевдо-", "полу", "анти", "недо")


def dictionary_forms(rng: random.Random, analyzer: Any, count: int) -> list[str]:
    """About ``count`` word forms of ``analyzer``'s dictionary, from random three-letter prefixes."""
    forms: list[str] = []
    while len(forms) < count:
        prefix = "".join(rng.choice(CYRILLIC) for _ in range(3))
        forms.extend(itertools.islice(analyzer.dictionary.words.iterkeys(prefix), rng.randint(1, 8)))
    return forms[:count]


def random_tokens(rng: random.Random, analyzer: Any, count: int) -> list[str]:
    """``count`` tokens: a quarter dictionary forms, the rest mutations of them and random strings."""
    forms = dictionary_forms(rng, analyzer, max(count // 4, 1))
    tokens = list(forms)
    makers = (
        lambda: rng.choice(forms)[: -rng.randint(1, 3)] + rng.choice(_ENDINGS),  # a real stem, another ending
        lambda: rng.choice(_PREFIXES) + rng.choice(forms),
        lambda: "".join(rng.choice(CYRILLIC) for _ in range(rng.randint(1, 12))),
        lambda: "".join(rng.choice(CYRILLIC) for _ in range(rng.randint(2, 7))) + rng.choice(_ENDINGS),
        lambda: rng.choice(forms) + "-" + rng.choice(forms),
        lambda: " ".join(rng.choice(forms) for _ in range(rng.randint(2, 3))),
        lambda: (rng.choice(forms) + str(rng.randint(0, 99)) if rng.random() < 0.5
                 else f"{rng.randint(0, 99)}-{rng.choice(forms)}"),
        lambda: "".join(rng.choice(CYRILLIC + "abcxyz0123456789-") for _ in range(rng.randint(1, 10))),
        lambda: rng.choice(forms).replace("е", "ё", 1) if rng.random() < 0.5 else rng.choice(forms).replace("ё", "е"),
        lambda: rng.choice(forms).upper() if rng.random() < 0.3 else rng.choice(forms).capitalize(),
    )
    while len(tokens) < count:
        tokens.append(rng.choice(makers)())
    return [token for token in tokens if token.strip()]

"""CIDEr-D vs pycocoevalcap ``Cider`` (pre-tokenised), and with PTB tokenisation vs pycocoevalcap's Java tokenizer."""

from __future__ import annotations

import random


from benchmarks.registry import Contenders, register
from gpumetrics.functional import cider_score
from gpumetrics.text import cider

_N_REFS = 5


def _vocabulary(rng: random.Random) -> tuple[list[str], list[float]]:
    """~3k caption-like words with Zipf weights (frequent function words, long tail of rare words)."""
    common = "a the on of in with and is are an to at man woman dog cat people sitting standing table street".split()
    words = common + [f"{rng.choice('bcdfghklmnprstvw')}{rng.choice('aeiou')}{i}word" for i in range(3000)]
    return words, [1.0 / (rank + 1) for rank in range(len(words))]


def _captions(size: int, punctuated: bool) -> tuple[list[str], list[list[str]]]:
    rng = random.Random(size)
    words, weights = _vocabulary(rng)

    def sentence() -> str:
        tokens = rng.choices(words, weights, k=rng.randint(8, 14))
        if not punctuated:
            return " ".join(tokens)
        tokens[0] = tokens[0].capitalize()
        if rng.random() < 0.3:
            tokens[rng.randrange(len(tokens))] += rng.choice([",", "'s"])
        return " ".join(tokens) + rng.choice([".", ".", "", "!"])

    return [sentence() for _ in range(size)], [[sentence() for _ in range(_N_REFS)] for _ in range(size)]


def _pycoco_inputs(preds: list[str], target: list[list[str]]) -> tuple[dict, dict]:
    return {i: list(refs) for i, refs in enumerate(target)}, {i: [p] for i, p in enumerate(preds)}


def _cold(fn):
    """Run ``fn`` with an empty token-code cache, so repeats do not measure cache hits."""

    def run():
        cider._token_code.cache_clear()
        return fn()

    return run


@register("cider_d", sizes=(2_000, 20_000), quick_sizes=(500,), repeats=3)
def cider_d_case(size: int, device: str) -> Contenders:
    from pycocoevalcap.cider.cider import Cider

    preds, target = _captions(size, punctuated=False)
    gts, res = _pycoco_inputs(preds, target)
    return Contenders(
        ours={"cider_score(tokenize=none)": _cold(lambda: cider_score(preds, target, tokenize="none",
                                                                      device=device).item())},
        anchors={"pycocoevalcap Cider (CIDEr-D)": lambda: float(Cider().compute_score(gts, res)[0])},
        check=lambda ours, anchor: abs(ours - anchor) < 1e-9,
        note=f"pre-tokenised captions, {_N_REFS} references each; tokenisation excluded on both sides",
    )


@register("cider_d_ptb", sizes=(2_000,), quick_sizes=(300,), repeats=3)
def cider_d_ptb_case(size: int, device: str) -> Contenders:
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    preds, target = _captions(size, punctuated=True)

    def anchor() -> float:
        tokenizer = PTBTokenizer()
        gts = tokenizer.tokenize({i: [{"caption": r} for r in refs] for i, refs in enumerate(target)})
        res = tokenizer.tokenize({i: [{"caption": p}] for i, p in enumerate(preds)})
        return float(Cider().compute_score(gts, res)[0])

    return Contenders(
        ours={"cider_score(tokenize=ptb)": _cold(lambda: cider_score(preds, target, tokenize="ptb",
                                                                     device=device).item())},
        anchors={"pycocoevalcap PTBTokenizer (Java) + Cider": anchor},
        check=lambda ours, anchor: abs(ours - anchor) < 1e-9,
        note=f"raw captions (case, commas, 's, final punctuation), {_N_REFS} refs each; tokenisation included",
    )

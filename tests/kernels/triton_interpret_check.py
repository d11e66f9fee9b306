"""Run under ``TRITON_INTERPRET=1`` (set before triton is imported) by ``tests/kernels/test_levenshtein.py``: the fused
Triton kernel equals the tensor kernel and rapidfuzz on CPU tensors. ``python -m tests.kernels.triton_interpret_check
SEED PAIRS LONG``; prints ``ok <n>`` or raises."""

import inspect
import os
import random
import sys

import torch  # noqa: E402
from rapidfuzz.distance import Levenshtein  # noqa: E402

from gpumetrics.kernels.levenshtein_routes import levenshtein_distance, levenshtein_ragged  # noqa: E402
from gpumetrics.kernels.text_rows import encode_chars, encode_chars_ragged  # noqa: E402
from gpumetrics.kernels.levenshtein_triton import levenshtein_triton_rows  # noqa: E402


def mend_interpreter_scalars() -> None:
    """Triton 3.6's interpreter (torch 2.11's) reads a scalar tensor as an index with ``int()`` of a one-element
    array, which NumPy 2.4 refuses, so ``range(tl.max(...))`` in a kernel raises there; Triton 3.7 squeezes the array
    first. Older interpreters get the same one-line mend, so the parity checks run on those toolchains too."""
    from triton.runtime import interpreter

    original = interpreter._patch_lang_tensor
    if "squeeze" in inspect.getsource(original):
        return

    def patch_lang_tensor(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", lambda self: int(self.handle.data.squeeze()))

    interpreter._patch_lang_tensor = patch_lang_tensor


ALPHABET = "abcxyz АбвЁж 中文字 😀🐈\u200d⬛ e\u0301ß"


def random_text(rng, n, alphabet=ALPHABET):
    return "".join(rng.choice(alphabet) for _ in range(n))


def main(seed: int, pairs: int, long: int) -> None:
    assert os.environ.get("TRITON_INTERPRET") == "1", "set TRITON_INTERPRET=1 before triton is imported"
    mend_interpreter_scalars()
    rng = random.Random(seed)
    a, b = ["", "", "a", "😀"], ["", "xyz", "", "😀"]  # empty sides, identical
    lengths = [0, 1, 3, 17, 63, 64, 65, 127, 128, 129, 200]
    for _ in range(pairs):  # uneven lengths, Unicode, multi-word patterns, tiny alphabets
        alphabet = ALPHABET if rng.random() < 0.7 else "ab"
        a.append(random_text(rng, rng.choice(lengths), alphabet))
        b.append(random_text(rng, rng.choice(lengths), alphabet))
    source = random_text(rng, 300)  # near-identical: common prefix and suffix across word boundaries
    a += [source, source[:150] + "q" + source[151:], source]
    b += [source[:70] + source[75:], source, source + "z"]
    big = random_text(rng, long)  # one long row against 3 symbols, both ways round
    a += [big, "abc"]
    b += ["abc", big]
    expected = [Levenshtein.distance(x, y) for x, y in zip(a, b)]

    ragged = levenshtein_ragged(*encode_chars_ragged(a), *encode_chars_ragged(b), backend="triton").tolist()
    assert ragged == expected, [(i, g, e) for i, (g, e) in enumerate(zip(ragged, expected)) if g != e][:5]
    pa, la = encode_chars(a)
    pb, lb = encode_chars(b)
    torch_path = levenshtein_distance(pa, la, pb, lb, backend="torch").tolist()  # the tensor kernel on the CPU
    assert torch_path == expected
    rows = levenshtein_triton_rows(pa, torch.arange(len(a)) * pa.shape[1], la, pb, torch.arange(len(b)) * pb.shape[1],
                                   lb, block=16, num_warps=4).tolist()  # padded rows, another launch shape
    assert rows == torch_path

    # word ids (symbols beyond the code-point range, up to 2**32 - 1)
    vocabulary = [rng.randrange(1 << 32) for _ in range(50)]
    words_a = [[rng.choice(vocabulary) for _ in range(rng.choice(lengths))] for _ in range(pairs // 2 + 1)]
    words_b = [[rng.choice(vocabulary) for _ in range(rng.choice(lengths))] for _ in range(pairs // 2 + 1)]
    flat = lambda rows: (torch.tensor([v for r in rows for v in r], dtype=torch.long),  # noqa: E731
                         torch.tensor([0] + [len(r) for r in rows]).cumsum(0))
    got = levenshtein_ragged(*flat(words_a), *flat(words_b), backend="triton").tolist()
    want = [Levenshtein.distance(x, y) for x, y in zip(words_a, words_b)]
    assert got == want
    assert levenshtein_ragged(*flat(words_a), *flat(words_b), backend="torch").tolist() == want
    print("ok", len(a) + len(words_a))


if __name__ == "__main__":
    main(*(int(x) for x in sys.argv[1:4]))

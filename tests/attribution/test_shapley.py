"""Shapley values: the seed-003 example, the axioms (efficiency, symmetry, dummy, additivity), sampling vs exact, and
corpus-BLEU attribution against brute force over sacrebleu's own corpus_bleu."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from gpumetrics.attribution.shapley import _permutations
from gpumetrics.functional import corpus_bleu_shapley, corpus_cider_shapley, marginal_contributions, shapley_values
from tests.helpers.harness import assert_close
from tests.helpers.memory import run_python
from tests.helpers.oracles import import_oracle


def _linear_weights(n: int, seed: int) -> torch.Tensor:
    return torch.randn(n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def _brute_force(v, n: int) -> torch.Tensor:
    """φ straight from the definition, one coalition at a time (Python)."""
    phi = torch.zeros(n, dtype=torch.float64)
    for i in range(n):
        others = [p for p in range(n) if p != i]
        for size in range(n):
            for subset in itertools.combinations(others, size):
                s = torch.zeros(1, n, dtype=torch.bool)
                s[0, list(subset)] = True
                with_i = s.clone()
                with_i[0, i] = True
                weight = math.factorial(size) * math.factorial(n - size - 1) / math.factorial(n)
                phi[i] += weight * float(v(with_i)[0] - v(s)[0])
    return phi


def _random_game(n: int, seed: int):
    """A non-additive game: squared weighted sum plus a pairwise interaction and a max term."""
    g = torch.Generator().manual_seed(seed)
    w, pair = torch.randn(n, generator=g, dtype=torch.float64), torch.randn(n, n, generator=g, dtype=torch.float64)

    def v(coalitions: torch.Tensor) -> torch.Tensor:
        x = coalitions.double()
        return (x @ w) ** 2 + ((x @ pair) * x).sum(1) + (x * w).amax(1)

    return v


def test_seed_003_example():
    players = torch.tensor([1.0, 2.0, 3.0, 4.0], dtype=torch.float64)
    game = lambda c: (c.double() @ players) ** 2  # noqa: E731
    phi = shapley_values(game, 4)
    assert phi.values.tolist() == [10.0, 20.0, 30.0, 40.0]
    assert phi.std_error.tolist() == [0.0] * 4
    table = marginal_contributions(game, 4, 2)
    assert table["weighted"].sum().item() == 30.0  # the seed's table for player 3 sums to φ₃
    # the seed prints: [] 0→9 (2.25), [4] 16→49 (2.75), [2] 4→25 (1.75), [1] 1→16 (1.25), [2,4] 36→81 (3.75),
    # [1,4] 25→64 (3.25), [1,2] 9→36 (2.25) …
    rows = {tuple(int(p) for p in players[c].tolist()): (w, m) for c, w, m in
            zip(table["coalitions"], table["weighted"].tolist(), table["marginal"].tolist())}
    assert rows[()] == (2.25, 9) and rows[(4,)] == (2.75, 33) and rows[(2,)] == (1.75, 21)
    assert rows[(1,)] == (1.25, 15) and rows[(2, 4)] == (3.75, 45) and rows[(1, 4)] == (3.25, 39)
    assert rows[(1, 2)] == (2.25, 27) and rows[(1, 2, 4)] == (12.75, 51)


@pytest.mark.parametrize("n, seed", [(1, 0), (2, 1), (5, 2), (7, 3), (9, 4)])
def test_exact_equals_the_definition_and_the_axioms_hold(n, seed):
    v = _random_game(n, seed)
    phi = shapley_values(v, n, batch_size=7).values  # small batches: the split must not matter
    assert_close(phi, _brute_force(v, n), 1e-9, what="exact vs definition")
    full, empty = v(torch.ones(1, n, dtype=torch.bool)), v(torch.zeros(1, n, dtype=torch.bool))
    assert abs(float(phi.sum()) - float(full[0] - empty[0])) < 1e-9  # efficiency
    w = _linear_weights(n, seed)
    additive = shapley_values(lambda c: c.double() @ w + 3.0, n).values  # additive game: φᵢ = wᵢ
    assert_close(additive, w, 1e-12)
    both = shapley_values(lambda c: v(c) + c.double() @ w, n).values  # additivity of φ in the game
    assert_close(both, phi + w, 1e-9)


def test_symmetry_and_dummy_players():
    w = torch.tensor([1.0, 2.0, 2.0, 0.0, 5.0], dtype=torch.float64)
    v = lambda c: (c.double() @ w) ** 2 + c[:, 1].double() * c[:, 2].double()  # noqa: E731 (1 and 2 symmetric)
    phi = shapley_values(v, 5).values
    assert abs(float(phi[1] - phi[2])) < 1e-12
    assert abs(float(phi[3])) < 1e-12  # player 3 adds nothing to any coalition
    sampled = shapley_values(v, 5, "sampling", num_permutations=50, seed=3).values
    assert abs(float(sampled[3])) < 1e-12


@pytest.mark.parametrize("seed", range(2))
def test_sampling_is_efficient_exactly_and_close_to_exact(seed):
    n = 10
    v = _random_game(n, seed)
    exact = shapley_values(v, n).values
    estimate = shapley_values(v, n, "sampling", num_permutations=1500, seed=seed, batch_size=1000)
    full, empty = v(torch.ones(1, n, dtype=torch.bool)), v(torch.zeros(1, n, dtype=torch.bool))
    assert abs(float(estimate.values.sum()) - float(full[0] - empty[0])) < 1e-9
    z = (estimate.values - exact).abs() / estimate.std_error.clamp_min(1e-12)
    assert float(z.max()) < 5.0, z  # within 5 standard errors for every player
    again = shapley_values(v, n, "sampling", num_permutations=1500, seed=seed, batch_size=37)
    assert_close(again.values, estimate.values, 1e-12)  # same seed, other batching: same permutations


def test_many_players_sampling():
    n = 300
    w = _linear_weights(n, 0)
    phi = shapley_values(lambda c: c.double() @ w, n, "sampling", num_permutations=20)
    assert_close(phi.values, w, 1e-9)  # additive game: every permutation gives wᵢ
    assert float(phi.std_error.max()) < 1e-9


def test_sampling_keeps_each_calls_coalitions_under_the_working_memory_budget(monkeypatch):
    """The default ``batch_size`` (65,536 coalitions) of 10,000 players was 655 MB of coalition booleans per call;
    ``"sampling"`` now also caps a call's ``BoolTensor[C, n]`` at ``core.chunks.WORKING_BYTES`` (whole permutations,
    at least one), with the same permutations."""
    from gpumetrics.core import chunks

    n = 300
    w = _linear_weights(n, 1)
    seen = []

    def game(coalitions):
        seen.append(coalitions.numel())
        return coalitions.double() @ w

    whole = shapley_values(game, n, "sampling", num_permutations=20)
    assert max(seen) == 20 * (n + 1) * n  # one call: 20 permutations of n + 1 prefixes
    seen.clear()
    monkeypatch.setattr(chunks, "WORKING_BYTES", 2 * (n + 1) * n)
    capped = shapley_values(game, n, "sampling", num_permutations=20)
    assert max(seen) == 2 * (n + 1) * n and len(seen) == 10
    assert_close(capped.values, whole.values, 1e-12)  # the same permutations (BLAS may round other batches apart)


@pytest.mark.parametrize("call, error, match", [
    (lambda: shapley_values(lambda c: c.sum(1), 0), ValueError, "`n_players` must be a positive int"),
    (lambda: shapley_values(lambda c: c.sum(1), 21), ValueError, "method='exact' enumerates"),
    (lambda: shapley_values(lambda c: c.sum(1), 3, "monte-carlo"), ValueError, "`method` must be one of"),
    (lambda: shapley_values(lambda c: c.sum(1), 3, "sampling", num_permutations=1), ValueError, "`num_permutations`"),
    (lambda: shapley_values(lambda c: c.sum(1), 3, batch_size=0), ValueError, "`batch_size`"),
    (lambda: shapley_values("not a function", 3), TypeError, "`value_fn` must be callable"),
    (lambda: shapley_values(lambda c: c.sum(), 3), ValueError, r"`value_fn` must return a tensor of shape \(8,\)"),
    (lambda: shapley_values(lambda c: "x", 3), TypeError, "`value_fn` must return a tensor"),
    (lambda: shapley_values(lambda c: c.sum(1) / 0.0, 3), ValueError, "non-finite"),
    (lambda: marginal_contributions(lambda c: c.sum(1), 3, 3), ValueError, r"`player` must be an integer in \[0, 2\]"),
    (lambda: corpus_bleu_shapley(["a"], ["a"], mode="nltk"), ValueError, "`bleu_options`"),
    (lambda: corpus_bleu_shapley(["a"], ["a"], colour="red"), TypeError, "unknown `bleu_options`: colour"),
])
def test_bad_input_names_the_argument(call, error, match):
    with pytest.raises(error, match=match):
        call()


def _corpus(n: int, seed: int) -> tuple[list[str], list[list[str]]]:
    import random

    rng = random.Random(seed)
    words = "the a cat dog sat on mat and ran fast slow big , .".split()
    refs = [[" ".join(rng.choices(words, k=rng.randint(3, 12))) for _ in range(rng.randint(1, 2))] for _ in range(n)]
    preds = [" ".join(r[0].split()[: rng.randint(1, 12)] + rng.choices(words, k=rng.randint(0, 3))) for r in refs]
    return preds, refs


def _sacrebleu_game(preds, refs):
    from sacrebleu.metrics.bleu import BLEU

    bleu = BLEU(tokenize="13a")
    width = max(len(r) for r in refs)

    def v(members) -> float:
        if not members:
            return 0.0
        hyps = [preds[i] for i in members]
        streams = [[refs[i][j] if j < len(refs[i]) else None for i in members] for j in range(width)]
        return bleu.corpus_score(hyps, streams).score / 100

    return v


@pytest.mark.parametrize("seed", range(2))
def test_corpus_bleu_shapley_exact_equals_sacrebleu_brute_force(seed):
    from gpumetrics.functional import bleu_score

    n = 7
    preds, refs = _corpus(n, seed)
    v = _sacrebleu_game(preds, refs)
    values = {mask: v([i for i in range(n) if mask >> i & 1]) for mask in range(1 << n)}
    expected = torch.zeros(n, dtype=torch.float64)
    for i in range(n):
        for mask, value in values.items():
            if not mask >> i & 1:
                size = bin(mask).count("1")
                weight = math.factorial(size) * math.factorial(n - size - 1) / math.factorial(n)
                expected[i] += weight * (values[mask | 1 << i] - value)
    phi = corpus_bleu_shapley(preds, refs, "exact")
    assert_close(phi.values, expected, 1e-9, what="corpus BLEU Shapley vs sacrebleu")
    assert abs(float(phi.values.sum()) - float(bleu_score(preds, refs))) < 1e-9


def test_corpus_bleu_shapley_sampling_equals_sacrebleu_on_the_same_permutations():
    n, m = 25, 6
    preds, refs = _corpus(n, 5)
    v = _sacrebleu_game(preds, refs)
    contributions = torch.zeros(m, n, dtype=torch.float64)
    for p, order in enumerate(_permutations(n, m, seed=11).tolist()):
        previous = 0.0
        for t, player in enumerate(order):
            current = v(order[: t + 1])
            contributions[p, player] = current - previous
            previous = current
    phi = corpus_bleu_shapley(preds, refs, num_permutations=m, seed=11, batch_size=40)
    assert_close(phi.values, contributions.mean(0), 1e-9)
    assert_close(phi.std_error, contributions.std(0) / math.sqrt(m), 1e-9)


def _pycocoevalcap_game(preds, refs):
    Cider = import_oracle("pycocoevalcap.cider.cider").Cider

    def v(members) -> float:
        if not members:
            return 0.0
        return float(Cider().compute_score({i: refs[i] for i in members}, {i: [preds[i]] for i in members})[0])

    return v


def test_corpus_cider_shapley_exact_equals_pycocoevalcap_brute_force():
    """CIDEr-D's IDF is recomputed over each coalition's references (what pycocoevalcap does for any corpus)."""
    from gpumetrics.functional import cider_score

    n = 6
    preds, refs = _corpus(n, 9)
    v = _pycocoevalcap_game(preds, refs)
    values = {mask: v([i for i in range(n) if mask >> i & 1]) for mask in range(1 << n)}
    expected = torch.zeros(n, dtype=torch.float64)
    for i in range(n):
        for mask, value in values.items():
            if not mask >> i & 1:
                size = bin(mask).count("1")
                weight = math.factorial(size) * math.factorial(n - size - 1) / math.factorial(n)
                expected[i] += weight * (values[mask | 1 << i] - value)
    phi = corpus_cider_shapley(preds, refs, "exact", tokenize="none", batch_size=9)
    assert_close(phi.values, expected, 1e-9, what="corpus CIDEr-D Shapley vs pycocoevalcap")
    assert abs(float(phi.values.sum()) - float(cider_score(preds, refs, tokenize="none"))) < 1e-9


def test_corpus_cider_shapley_sampling_equals_pycocoevalcap_on_the_same_permutations():
    n, m = 15, 3
    preds, refs = _corpus(n, 12)
    v = _pycocoevalcap_game(preds, refs)
    contributions = torch.zeros(m, n, dtype=torch.float64)
    for p, order in enumerate(_permutations(n, m, seed=4).tolist()):
        previous = 0.0
        for t, player in enumerate(order):
            current = v(order[: t + 1])
            contributions[p, player] = current - previous
            previous = current
    phi = corpus_cider_shapley(preds, refs, num_permutations=m, seed=4, tokenize="none")
    assert_close(phi.values, contributions.mean(0), 1e-9)



def test_cider_value_function_scores_coalitions_in_bounded_chunks(monkeypatch):
    """``corpus_cider_value_function`` under ``shapley_values``' default batch (65,536 coalitions) took
    65,536 × (n-gram entries) doubles per tensor: 16 players of ten-word captions with five references each
    allocated 1.4 GB at once (over 3 GB in all; 16,384 coalitions: over 512 MB). Chunked under 256 MiB, the values
    are the same."""
    from gpumetrics.core import chunks
    from gpumetrics.text import cider

    preds, refs = _corpus(7, 13)
    coalitions = torch.rand(40, 7, generator=torch.Generator().manual_seed(0)) < 0.5
    whole = cider.corpus_cider_value_function(preds, refs, tokenize="none")[0](coalitions)
    monkeypatch.setattr(chunks, "WORKING_BYTES", 1)  # one coalition per chunk
    assert torch.equal(cider.corpus_cider_value_function(preds, refs, tokenize="none")[0](coalitions), whole)
    script = """
        from tests.helpers.memory import limit_address_space
        import random, torch
        from gpumetrics.text.cider import corpus_cider_value_function
        rng = random.Random(0)
        words = [f"w{i}" for i in range(3000)]
        text = lambda: " ".join(rng.choice(words) for _ in range(10))
        value_fn, n = corpus_cider_value_function([text() for _ in range(16)], [[text() for _ in range(5)]
                                                                               for _ in range(16)], tokenize="none")
        limit_address_space(1 << 29)
        masks = torch.arange(1 << 14)[:, None] >> torch.arange(n) & 1 == 1
        print(float(value_fn(masks).sum()))
    """
    run_python(script)


def test_bleu_value_function_sums_coalitions_in_bounded_chunks(monkeypatch):
    """``corpus_bleu_value_function`` turned a whole batch of coalitions into float64 for its matrix product:
    ``shapley_values``' default batch of 65,536 coalitions of 2,000 players took 1 GB at once. In chunks under
    256 MiB the sums, integers exact in float64, are the same."""
    from gpumetrics.core import chunks
    from gpumetrics.text import bleu

    preds, refs = _corpus(7, 14)
    coalitions = torch.rand(40, 7, generator=torch.Generator().manual_seed(1)) < 0.5
    whole = bleu.corpus_bleu_value_function(preds, refs)[0](coalitions)
    monkeypatch.setattr(chunks, "WORKING_BYTES", 1)  # one coalition per chunk
    assert torch.equal(bleu.corpus_bleu_value_function(preds, refs)[0](coalitions), whole)
    script = """
        from tests.helpers.memory import limit_address_space
        import random, torch
        from gpumetrics.text.bleu import corpus_bleu_value_function
        rng = random.Random(0)
        text = lambda: " ".join(f"w{rng.randrange(300)}" for _ in range(10))
        value_fn, n = corpus_bleu_value_function([text() for _ in range(2_000)], [[text()] for _ in range(2_000)])
        masks = torch.rand(1 << 16, n, generator=torch.Generator().manual_seed(0)) < 0.5
        limit_address_space(1 << 29)
        print(float(value_fn(masks).sum()))
    """
    run_python(script)

@pytest.mark.parametrize("name", ["shapley_corpus_bleu", "shapley_corpus_cider"])
def test_benchmark_case_runs_at_a_tiny_size(name):
    from benchmarks.__main__ import CASES, load_cases, run_case

    load_cases()
    rows = run_case(CASES[name], 8, "cpu", repeats=1)  # raises when gpumetrics and the anchor disagree
    assert rows and all(row["ours_s"] > 0 for row in rows)

"""Shapley values of a cooperative game whose value function scores batches of coalitions on the device.

φᵢ = Σ_{S ⊆ N∖{i}} |S|! (n − |S| − 1)! / n! · (v(S ∪ {i}) − v(S))   (seed 003; docs/metrics/shapley.md)

* ``method="exact"`` (n ≤ 20): every one of the 2ⁿ coalitions is a bitmask; ``value_fn`` sees them as
  ``BoolTensor[C, n]`` rows in batches of ``batch_size``, once each; φ is then a weighted sum per player.
* ``method="sampling"``: random permutations of the players (seeded, drawn on the CPU so that every device gets the
  same ones); the marginal contribution of each player to the players before it, averaged over permutations, is an
  unbiased estimate of φ with the standard error ``std / √M``. Every permutation's marginals add up to
  v(N) − v(∅), so the estimate is efficient exactly, not only in expectation.

The real use here is attributing a corpus-level score that is not a sum over samples to the samples:
:func:`corpus_bleu_shapley` plays sacrebleu's corpus BLEU over coalitions of segments, summing each coalition's
sufficient statistics with one matrix product and scoring all coalitions of a batch at once;
:func:`corpus_cider_shapley` plays pycocoevalcap's CIDEr-D, whose IDF is recomputed over each coalition's references.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple, Sequence

import torch
from torch import Tensor

from gpumetrics.core import check_choice, check_device
from gpumetrics.core.checks import check_int, check_positive_int, describe_value
from gpumetrics.core.chunks import rows_per_chunk
from gpumetrics.core.transfer import upload

__all__ = ["ShapleyValues", "shapley_values", "marginal_contributions", "corpus_bleu_shapley", "corpus_cider_shapley",
           "MAX_EXACT_PLAYERS"]

MAX_EXACT_PLAYERS = 20
METHODS = ("exact", "sampling")


class ShapleyValues(NamedTuple):
    """``values: DoubleTensor[n]`` (φ per player) and ``std_error: DoubleTensor[n]`` (0 for ``method="exact"``)."""

    values: Tensor
    std_error: Tensor


def _evaluate(value_fn: Callable[[Tensor], Any], coalitions: Tensor) -> Tensor:
    """``value_fn`` on ``BoolTensor[C, n]``: ``DoubleTensor[C]`` on the coalitions' device (shape checked here)."""
    out = value_fn(coalitions)
    if not isinstance(out, Tensor):
        try:
            out = torch.as_tensor(out)
        except (TypeError, ValueError, RuntimeError):
            raise TypeError(f"`value_fn` must return a tensor of {coalitions.shape[0]} values, got "
                            f"{describe_value(out)}") from None
    if out.shape != (coalitions.shape[0],):
        raise ValueError(f"`value_fn` must return a tensor of shape ({coalitions.shape[0]},) for "
                         f"{coalitions.shape[0]} coalitions, got {tuple(out.shape)}")
    return out.to(device=coalitions.device, dtype=torch.float64)


def _check_finite(values: Tensor) -> None:
    if not bool(torch.isfinite(values).all()):  # one host sync for the whole game
        raise ValueError("`value_fn` returned a non-finite value (NaN or inf) for some coalition")


def _bits(masks: Tensor, n: int) -> Tensor:
    """``BoolTensor[C, n]``: player j is in coalition c iff bit j of ``masks[c]`` is set."""
    return (masks[:, None] >> torch.arange(n, device=masks.device)) & 1 == 1


def _all_values(value_fn: Callable, n: int, batch_size: int, device: torch.device) -> Tensor:
    """v of every coalition, indexed by bitmask: ``DoubleTensor[2ⁿ]``."""
    total = 1 << n
    parts = []
    for start in range(0, total, batch_size):  # batches of coalitions, not a loop over players or samples
        masks = torch.arange(start, min(total, start + batch_size), device=device)
        parts.append(_evaluate(value_fn, _bits(masks, n)))
    values = torch.cat(parts)
    _check_finite(values)
    return values


def _weights(n: int, device: torch.device) -> Tensor:
    """``w[s] = s! (n − s − 1)! / n!`` for s = 0..n−1, exact rationals rounded once to float64."""
    return upload(torch.tensor([math.factorial(s) * math.factorial(n - s - 1) / math.factorial(n) for s in range(n)],
                               dtype=torch.float64), device)


def _permutations(n: int, num_permutations: int, seed: int) -> Tensor:
    """``LongTensor[M, n]``: M seeded random orders of the players, drawn on the CPU (same on every device)."""
    generator = torch.Generator().manual_seed(seed)
    return torch.rand(num_permutations, n, generator=generator, dtype=torch.float64).argsort(1)


def shapley_values(
    value_fn: Callable[[Tensor], Tensor],
    n_players: int,
    method: str = "exact",
    *,
    num_permutations: int = 1000,
    seed: int = 0,
    batch_size: int = 65536,
    device: torch.device | str | None = None,
) -> ShapleyValues:
    """Shapley value of every player of the game ``value_fn``.

    Args:
        value_fn: ``value_fn(coalitions: BoolTensor[C, n]) -> Tensor[C]``, the value of each coalition (row c holds
            True for the players in coalition c). Called on batches of at most ``batch_size`` coalitions.
        n_players: n, the number of players.
        method: ``"exact"`` (all 2ⁿ coalitions; n ≤ 20) or ``"sampling"`` (permutation sampling).
        num_permutations: M, permutations drawn by ``"sampling"`` (≥ 2, for the standard error); each costs n + 1
            coalition values.
        seed: seed of the permutations.
        batch_size: most coalitions per ``value_fn`` call (``"sampling"`` also keeps a call's
            ``BoolTensor[C, n]`` under ``core.chunks.WORKING_BYTES``, 256 MiB).
        device: device of the coalition tensors and of the result (CPU by default).

    Returns:
        :class:`ShapleyValues` ``(values: DoubleTensor[n], std_error: DoubleTensor[n])``; ``values.sum()`` equals
        v(N) − v(∅) (efficiency) for both methods.

    Raises:
        ValueError: ``n_players`` < 1 or above 20 for ``"exact"``, unknown ``method``, ``num_permutations`` < 2,
            ``value_fn`` returning the wrong shape or a non-finite value.
        TypeError: ``value_fn`` is not callable or returns no tensor.

    Example:
        >>> players = torch.tensor([1.0, 2.0, 3.0, 4.0])
        >>> game = lambda coalitions: (coalitions.double() @ players.double()) ** 2   # v(S) = (Σ S)², seed 003
        >>> shapley_values(game, 4).values
        tensor([10., 20., 30., 40.], dtype=torch.float64)
        >>> estimate = shapley_values(game, 4, "sampling", num_permutations=2000, seed=1)
        >>> bool(((estimate.values - torch.tensor([10., 20., 30., 40.])).abs() < 4 * estimate.std_error + 1e-9).all())
        True
    """
    if not callable(value_fn):
        raise TypeError(f"`value_fn` must be callable, got {describe_value(value_fn)}")
    n = check_positive_int(n_players, "n_players")
    check_choice(method, "method", METHODS)
    batch_size = check_positive_int(batch_size, "batch_size")
    device = check_device(device, "device")
    if method == "exact":
        if n > MAX_EXACT_PLAYERS:
            raise ValueError(f"`n_players` is {n}: method='exact' enumerates 2^n coalitions and takes n ≤ "
                             f"{MAX_EXACT_PLAYERS}; use method='sampling'")
        return _exact(value_fn, n, batch_size, device)
    check_int(num_permutations, "num_permutations", at_least=2)
    check_int(seed, "seed")
    return _sampled(value_fn, n, num_permutations, seed, batch_size, device)


def _exact(value_fn: Callable, n: int, batch_size: int, device: torch.device) -> ShapleyValues:
    values = _all_values(value_fn, n, batch_size, device)
    masks = torch.arange(1 << n, device=device)
    sizes = _bits(masks, n).sum(1)
    weights = _weights(n, device)
    phi = torch.empty(n, dtype=torch.float64, device=device)
    for player in range(n):  # n ≤ 20 players; each step is one vectorised pass over the 2ⁿ⁻¹ coalitions without it
        without = masks[(masks >> player) & 1 == 0]
        phi[player] = (weights[sizes[without]] * (values[without | (1 << player)] - values[without])).sum()
    return ShapleyValues(phi, torch.zeros_like(phi))


def _sampled(value_fn: Callable, n: int, num_permutations: int, seed: int, batch_size: int,
             device: torch.device) -> ShapleyValues:
    order = upload(_permutations(n, num_permutations, seed), device)
    position = order.argsort(1)  # position[p, i]: where player i stands in permutation p
    prefix = torch.arange(n + 1, device=device)
    # whole permutations per value_fn call: at most batch_size coalitions, and their BoolTensor[rows, n] within
    # the working-memory budget (65,536 coalitions of 10,000 players would be 655 MB of booleans)
    per_chunk = max(1, min(batch_size, rows_per_chunk(n)) // (n + 1))
    parts = []
    for start in range(0, num_permutations, per_chunk):
        pos = position[start:start + per_chunk]
        coalitions = pos[:, None, :] < prefix[None, :, None]  # [m, n + 1, n]: the first t players of each order
        values = _evaluate(value_fn, coalitions.reshape(-1, n)).reshape(-1, n + 1)
        marginal = values[:, 1:] - values[:, :-1]  # marginal[p, t]: the player at position t joins
        parts.append(marginal.gather(1, pos))
    contributions = torch.cat(parts)  # [M, n]
    _check_finite(contributions)
    mean = contributions.mean(0)
    std_error = contributions.std(0, correction=1) / math.sqrt(num_permutations)
    return ShapleyValues(mean, std_error)


def marginal_contributions(
    value_fn: Callable[[Tensor], Tensor], n_players: int, player: int, *, batch_size: int = 65536,
    device: torch.device | str | None = None,
) -> dict[str, Tensor]:
    """Every term of φ for one player (seed 003's table): the coalitions without it, by size then bitmask.

    Args:
        value_fn: as in :func:`shapley_values`.
        n_players: n ≤ 20.
        player: index (0-based) of the player.
        batch_size, device: as in :func:`shapley_values`.

    Returns:
        ``coalitions: BoolTensor[2ⁿ⁻¹, n]``, ``without: DoubleTensor[2ⁿ⁻¹]`` = v(S), ``with_player`` = v(S ∪ {i}),
        ``marginal`` = their difference, ``weighted`` = marginal · |S|!(n − |S| − 1)!/n! (the terms summing to φᵢ).

    Example:
        >>> players = torch.tensor([1.0, 2.0, 3.0, 4.0])
        >>> game = lambda coalitions: (coalitions.double() @ players.double()) ** 2
        >>> table = marginal_contributions(game, 4, player=2)  # player "3" of the seed
        >>> for row in range(8):
        ...     members = [int(p) for p in players[table["coalitions"][row]].tolist()]
        ...     print(members, *(int(table[k][row]) for k in ("without", "with_player", "marginal")),
        ...           float(table["weighted"][row]))
        [] 0 9 9 2.25
        [1] 1 16 15 1.25
        [2] 4 25 21 1.75
        [4] 16 49 33 2.75
        [1, 2] 9 36 27 2.25
        [1, 4] 25 64 39 3.25
        [2, 4] 36 81 45 3.75
        [1, 2, 4] 49 100 51 12.75
        >>> float(table["weighted"].sum())
        30.0
    """
    n = check_positive_int(n_players, "n_players")
    if n > MAX_EXACT_PLAYERS:
        raise ValueError(f"`n_players` must be ≤ {MAX_EXACT_PLAYERS} to list every coalition, got {n}")
    check_int(player, "player", at_least=0, at_most=n - 1)
    device = check_device(device, "device")
    batch_size = check_positive_int(batch_size, "batch_size")
    masks = torch.arange(1 << n, device=device)
    masks = masks[(masks >> player) & 1 == 0]
    coalitions = _bits(masks, n)
    sizes = coalitions.sum(1)
    masks = masks[torch.argsort(sizes * (1 << n) + masks)]  # by size, then bitmask
    coalitions, sizes = _bits(masks, n), sizes.sort().values
    both = torch.cat([coalitions, coalitions | (torch.arange(n, device=device) == player)])
    values = torch.cat([_evaluate(value_fn, both[i:i + batch_size]) for i in range(0, both.shape[0], batch_size)])
    _check_finite(values)
    without, with_player = values[: masks.numel()], values[masks.numel():]
    marginal = with_player - without
    return {"coalitions": coalitions, "without": without, "with_player": with_player, "marginal": marginal,
            "weighted": marginal * _weights(n, device)[sizes]}


def corpus_bleu_shapley(
    preds: Sequence[str],
    target: Sequence[Any],
    method: str = "sampling",
    *,
    num_permutations: int = 200,
    seed: int = 0,
    batch_size: int = 65536,
    device: torch.device | str | None = None,
    **bleu_options: Any,
) -> ShapleyValues:
    """Shapley value of every segment for sacrebleu's corpus BLEU: v(S) = corpus BLEU of the segments in S.

    Corpus BLEU is not a mean of sentence scores (clipped counts and lengths are pooled first), so a segment's
    share of it is a Shapley value. Each segment's sufficient statistics are counted once (``bleu_score``'s
    tokeniser and n-gram kernel); a batch of coalitions ``BoolTensor[C, B]`` is then scored with one matrix product
    ``coalitions @ statistics`` and sacrebleu's formula on the C rows. v(∅) = 0, so the values add up to the corpus
    BLEU of all segments.

    Args:
        preds: B hypotheses.
        target: B reference sets (a string or a list of strings each).
        method, num_permutations, seed, batch_size, device: as in :func:`shapley_values` (``"exact"`` for B ≤ 20).
        bleu_options: ``bleu_score`` options of ``mode="sacrebleu"`` (``tokenize``, ``smooth``, ``smooth_value``,
            ``lowercase``, ``weights``).

    Returns:
        :class:`ShapleyValues` of the B segments (BLEU in [0, 1], as ``bleu_score`` returns it).

    Example:
        >>> preds = ["the cat sat on the mat", "a dog barked", "hello"]
        >>> target = [["the cat sat on a mat"], ["the dog barked loudly"], ["hello there"]]
        >>> phi = corpus_bleu_shapley(preds, target, "exact")
        >>> [round(v, 4) for v in phi.values.tolist()], round(float(phi.values.sum()), 6)
        ([0.4665, -0.0367, -0.0229], 0.406807)
    """
    from gpumetrics.text.bleu import corpus_bleu_value_function

    if "reduction" in bleu_options or bleu_options.get("mode", "sacrebleu") != "sacrebleu":
        raise ValueError("`bleu_options` may not set `mode` (only sacrebleu's corpus BLEU is a game over segment "
                         "statistics here) nor `reduction`")
    bleu_options.pop("mode", None)
    unknown = set(bleu_options) - {"tokenize", "smooth", "smooth_value", "weights", "lowercase", "effective_order"}
    if unknown:
        raise TypeError(f"unknown `bleu_options`: {', '.join(sorted(unknown))}")
    device = check_device(device, "device")
    corpus_bleu, n_segments = corpus_bleu_value_function(preds, target, device=device, **bleu_options)
    return shapley_values(corpus_bleu, n_segments, method, num_permutations=num_permutations, seed=seed,
                          batch_size=batch_size, device=device)


def corpus_cider_shapley(
    preds: Sequence[str],
    target: Sequence[Any],
    method: str = "sampling",
    *,
    num_permutations: int = 200,
    seed: int = 0,
    batch_size: int = 64,
    device: torch.device | str | None = None,
    tokenize: str = "ptb",
    n_gram: int = 4,
    sigma: float = 6.0,
) -> ShapleyValues:
    """Shapley value of every sample for pycocoevalcap's CIDEr-D: v(S) = CIDEr-D of the samples in S, with the
    document frequency (IDF) computed over the references of S alone, as pycocoevalcap does for whatever corpus it
    is given. v(∅) = 0; the values add up to ``cider_score`` of all samples.

    The n-gram counting is done once (``cider_score``'s tokeniser and sort-based counting); per batch of coalitions
    ``BoolTensor[C, B]`` the document frequencies are one scatter over the (sample, n-gram) presence list, and every
    TF-IDF norm, clipped dot product and length penalty of all C coalitions is a ``[C, entries]`` tensor operation.
    ``batch_size`` therefore bounds memory at ~``batch_size × (n-gram entries of the corpus)`` doubles.

    Args:
        preds: B candidate captions.
        target: B reference sets.
        method, num_permutations, seed, batch_size, device: as in :func:`shapley_values`.
        tokenize, n_gram, sigma: as in ``cider_score`` (CIDEr-D only).

    Returns:
        :class:`ShapleyValues` of the B samples.

    Example:
        >>> preds = ["a cat sits on a mat", "a dog runs", "two birds fly"]
        >>> target = [["a cat is on the mat", "a cat sits"], ["a dog is running"], ["birds flying in the sky"]]
        >>> phi = corpus_cider_shapley(preds, target, "exact", tokenize="none")
        >>> [round(v, 4) for v in phi.values.tolist()], round(float(phi.values.sum()), 6)
        ([0.9409, 0.789, 0.337], 2.066961)
    """
    from gpumetrics.text.cider import corpus_cider_value_function

    device = check_device(device, "device")
    cider, n_samples = corpus_cider_value_function(preds, target, tokenize=tokenize, n_gram=n_gram, sigma=sigma,
                                                   device=device)
    return shapley_values(cider, n_samples, method, num_permutations=num_permutations, seed=seed,
                          batch_size=batch_size, device=device)

"""METEOR 1.5 on long texts (issue 28 item 9): equal to the jar, and memory bounded by ``memory_budget``.

Long pairs of repeated vocabulary are the hard case: every word matches hundreds of words of the other side, so
the candidate matches grow with the product of the lengths (the jar holds them all too) and each beam step expands
40 paths × hundreds of candidates. The alignment kernel keeps memory linear in the candidates (no per-candidate
bitsets) and ``memory_budget`` scores a batch in groups of pairs that fit it."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch

from gpumetrics import METEORScore
from gpumetrics.functional import meteor_score
from gpumetrics.text.meteor import jar, tables
from tests.helpers.harness import assert_close
from tests.helpers.meteor_jar import pycocoevalcap_meteor
from testkit.text_data import long_pairs

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", autouse=True)
def _tables():
    tables.paraphrase_table()


def _check_against_jar(preds, target, **options):
    corpus, segments = pycocoevalcap_meteor(preds, target)
    assert_close(meteor_score(preds, target, reduction="none", **options), segments, what="segment scores")
    assert_close(meteor_score(preds, target, **options), corpus, what="corpus score")


def test_long_pairs_equal_the_jar():
    # 300–400 words against a different text and a shuffled copy: 100+ candidates per reference word
    preds, target = long_pairs(0, 350, count=2)
    _check_against_jar(preds, target)


@pytest.mark.slow
def test_very_long_pair_equals_the_jar():
    # 1,500 words each side, ≈ 2·10^5 candidate matches per reference (the jar takes minutes: O(n) copies per path)
    preds, target = long_pairs(1, 1500)
    _check_against_jar(preds, target)


def test_memory_budget_groups_pairs_without_changing_a_score(monkeypatch):
    preds, target = long_pairs(2, 120, count=6)
    expected_none = meteor_score(preds, target, reduction="none")
    expected_corpus = meteor_score(preds, target)
    need = jar.pair_bytes(jar.encode(preds, target, "en"))
    budget = int(need.max()) + 1  # every group holds one or two pairs
    groups: list[int] = []
    inner = jar._pair_statistics

    def counted(s, language):
        groups.append(int(jar.pair_bytes(s).sum()))
        return inner(s, language)

    monkeypatch.setattr(jar, "_pair_statistics", counted)
    assert torch.equal(meteor_score(preds, target, reduction="none", memory_budget=budget), expected_none)
    assert len(groups) > 1 and max(groups) <= budget
    assert torch.equal(meteor_score(preds, target, memory_budget=budget), expected_corpus)
    metric = METEORScore(memory_budget=budget)
    metric.update(preds[:4], target[:4])
    metric.update(preds[4:], target[4:])
    assert torch.equal(metric.compute(), expected_corpus)


def test_a_pair_over_the_budget_is_a_clear_error():
    preds, target = long_pairs(3, 400)
    need = int(jar.pair_bytes(jar.encode(preds, target, "en")).max())
    with pytest.raises(ValueError, match=r"sample 0 with its reference \d .*memory_budget.*pass memory_budget=\d+"):
        meteor_score(preds, target, memory_budget=need // 2)
    meteor_score(preds, target, memory_budget=need)  # the amount the message asks for is enough


def test_update_makes_no_host_sync_whatever_the_lengths():
    # matching and the beam search are host work (numpy), the pair statistics one upload: nothing a GPU would wait
    # for, on captions, on long pairs (the old tensor search read sizes at every reference position) and in groups
    from tests.helpers.syncs import SyncCounter
    from testkit.text_data import caption_batch

    long_preds, long_target = long_pairs(5, 200, count=2)
    budget = int(jar.pair_bytes(jar.encode(long_preds, long_target, "en")).max()) + 1
    for batch, options in ((caption_batch(random.Random(6), 40), {}), ((long_preds, long_target), {}),
                           ((long_preds, long_target), {"memory_budget": budget, "reduction": "none"})):
        metric = METEORScore(**options)
        with SyncCounter() as counter:
            metric.update(*batch)
        assert counter.total == 0, dict(counter.counts)


@pytest.mark.parametrize(
    "value, error", [(0, ValueError), (-5, ValueError), (1.5, TypeError), ("1GiB", TypeError), (True, TypeError)]
)
def test_bad_memory_budget(value, error):
    with pytest.raises(error, match="memory_budget"):
        meteor_score(["a"], [["a"]], memory_budget=value)
    with pytest.raises(error, match="memory_budget"):
        METEORScore(memory_budget=value)


def test_bad_memory_budget_shows_the_value():
    """YAML reads `memory_budget: 1e9` as the text '1e9': the error said only "got str" (found by fuzzing)."""
    with pytest.raises(TypeError, match=r"`memory_budget` must be a positive integer \(a number of bytes\), got str "
                                        r"'1e9'"):
        METEORScore(memory_budget="1e9")
    assert float(meteor_score(["a"], [["a"]], memory_budget=np.int64(1 << 30))) > 0  # numpy ints stay accepted


def test_memory_budget_is_a_meteor_1_5_option():
    with pytest.raises(ValueError, match="memory_budget"):
        meteor_score(["a"], [["a"]], mode="nltk", memory_budget=1 << 30)


_PEAK = textwrap.dedent(
    """
    import json, random, sys
    import torch
    from gpumetrics.functional import meteor_score
    from gpumetrics.text.meteor import tables
    from tests.text.test_meteor_long import long_pairs
    torch.set_num_threads(1)
    tables.paraphrase_table(); tables.synonym_table()
    meteor_score(*long_pairs(9, 60, count=2))  # warm: every table and code path loaded
    preds, target = long_pairs(4, 900, count=4)

    def kib(field):
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) for line in status if line.startswith(field + ":"))

    # the peak so far (the tables' loading) is reset to the resident size now: ru_maxrss kept it, and when loading
    # had peaked higher than the scoring, both budgets "grew" 0 MiB
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
    before = kib("VmRSS")
    score = meteor_score(preds, target, reduction="none", memory_budget=int(sys.argv[1])).tolist()
    print(json.dumps({"grew_mib": (kib("VmHWM") - before) / 1024, "scores": score}))
    """
)


def _peak_growth(budget: int) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", _PEAK, str(budget)], cwd=ROOT, capture_output=True, text=True, check=True,
        env={"PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.skipif(not os.access("/proc/self/clear_refs", os.W_OK),  # Linux >= 4.0 resets the peak RSS there
                    reason="needs Linux's /proc/self/clear_refs to reset the peak resident size")
def test_peak_memory_follows_the_budget():
    # four pairs of 900 words (two references each): ≈ 4 × 2 × 9·10^4 candidates. Unbounded, they are matched and
    # aligned at once; under a 48 MiB budget one or two pairs at a time. The peak resident memory grows accordingly
    # (the old kernel, with a bitset per candidate, needed several times the unbounded figure here)
    small = _peak_growth(48 << 20)
    large = _peak_growth(1 << 40)
    assert small["scores"] == large["scores"]
    assert small["grew_mib"] < 48 * 2, small
    assert small["grew_mib"] < large["grew_mib"] / 2, (small, large)


def _mixed_batch(seed: int, long_words: int, short: int) -> tuple[list[str], list[list[str]]]:
    """One long pair (a text against a different one and a shuffled copy) among ``short`` pairs of short sentences
    with repeated words (free candidates: every one of them is searched)."""
    preds, target = long_pairs(seed, long_words)
    rng = random.Random(seed)
    words = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", "cats", "running"]
    for _ in range(short):
        preds.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 12))))
        target.append([" ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))])
    return preds, target


def test_pairs_of_very_different_lengths_are_aligned_in_groups_as_the_jar_aligns_them(monkeypatch):
    """Searched pairs grouped by bitset width (each group's path bitsets as wide as its own longest lines) give the
    jar's scores, as one group of all pairs does."""
    from gpumetrics.kernels import alignment

    preds, target = _mixed_batch(4, 300, 30)
    whole = meteor_score(preds, target, reduction="none")
    monkeypatch.setattr(alignment, "_PAD_SLACK_WORDS", 0)
    searched = alignment._search_groups(np.ones(31, dtype=bool), np.array([300] + [12] * 30),
                                        np.array([300] + [9] * 30))
    assert len(searched) == 2
    assert torch.equal(meteor_score(preds, target, reduction="none"), whole)
    _check_against_jar(preds, target)


def test_one_long_pair_among_many_short_ones_does_not_widen_their_paths(monkeypatch):
    """One pair of 16,000-word lines among 5,000 short pairs: searched together, every path of every pair carried
    2 × 250 bitset words (2.7 GB peak against 1.2 GB); grouped by width, the short pairs' paths carry two."""
    from gpumetrics.kernels import alignment

    widths = []
    inner = alignment._search

    def recorded(matches, fixed, in_search, searched, len1, len2, beam):
        pairs = np.flatnonzero(searched)
        own = (-(-len1[pairs] // 64)).clip(1) + (-(-len2[pairs] // 64)).clip(1)
        widths.append((pairs.size * int(own.max()), int(own.sum())))
        return inner(matches, fixed, in_search, searched, len1, len2, beam)

    monkeypatch.setattr(alignment, "_search", recorded)
    rng = random.Random(5)
    vocabulary = [f"word{i}" for i in range(3_000)]
    base = [rng.choice(vocabulary) for _ in range(16_000)]
    small = ["cat", "dog", "sat", "mat", "ran"]
    preds = [" ".join(base[:8_000] * 2)] + [" ".join(rng.choice(small) for _ in range(12)) for _ in range(5_000)]
    target = [[" ".join(base)]] + [[" ".join(rng.choice(small) for _ in range(12))] for _ in range(5_000)]
    scores = meteor_score(preds, target, reduction="none")
    assert len(widths) >= 2 and sum(padded for padded, _ in widths) <= 2 * sum(own for _, own in widths) + (1 << 16)
    assert_close(scores[-3:], meteor_score(preds[-3:], target[-3:], reduction="none"), what="short pairs")

"""The benchmark harness runs a registered case end to end on a tiny size and renders its table."""

import pytest

from benchmarks.__main__ import CASES, load_cases, render_markdown, run_case


def test_token_f1_case_runs_and_reports_a_ratio():
    load_cases()
    rows = run_case(CASES["token_f1_squad"], size=50, device="cpu", repeats=1)
    assert {row["anchor"] for row in rows} >= {"SQuAD v2.0 formula (Python, Counter)"}
    assert all(row["ours_s"] > 0 and row["ratio"] > 0 for row in rows)
    table = render_markdown({"machine": "test", "versions": {"torch": "x"}, "repeats_note": "1 run", "rows": rows})
    assert "| token_f1_squad | 50 samples |" in table


@pytest.mark.ddp
def test_ddp_sync_section_measures_fixed_size_all_reduces():
    from benchmarks import ddp_sync

    rows = ddp_sync.measure(dims=8, repeats=1, world_sizes=(2,))
    by_library = {row["library"]: row for row in rows}
    state_bytes = 2 * (8 * 8 + 8 * 8 * 8 + 8)  # real and fake: float64 sum, float64 outer sum, int64 count
    assert by_library["gpumetrics"]["collectives"] == 6
    assert by_library["gpumetrics"]["received_bytes"] == state_bytes
    assert by_library["torchmetrics"]["received_bytes"] >= 2 * state_bytes  # all-gather: world size × state
    section = "\n".join(ddp_sync.render(rows))
    assert "| 2 | gpumetrics | 6 |" in section

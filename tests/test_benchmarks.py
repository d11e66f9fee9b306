"""The benchmark harness runs a registered case end to end on a tiny size and renders its table."""

from benchmarks.__main__ import CASES, load_cases, render_markdown, run_case


def test_token_f1_case_runs_and_reports_a_ratio():
    load_cases()
    rows = run_case(CASES["token_f1_squad"], size=50, device="cpu", repeats=1)
    assert {row["anchor"] for row in rows} >= {"SQuAD v2.0 formula (Python, Counter)"}
    assert all(row["ours_s"] > 0 and row["ratio"] > 0 for row in rows)
    table = render_markdown({"machine": "test", "versions": {"torch": "x"}, "repeats_note": "1 run", "rows": rows})
    assert "| token_f1_squad | 50 samples |" in table

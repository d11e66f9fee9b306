"""A missing reference tool is never a silent pass: outside CI its tests skip with the reason, in CI they fail."""

from __future__ import annotations

import pytest

from tests.helpers.oracles import import_oracle


def test_an_installed_oracle_is_its_module():
    assert import_oracle("rapidfuzz.distance").Levenshtein.distance("ab", "b") == 1


@pytest.mark.parametrize("ci", ["", "true"])
def test_a_missing_oracle_skips_outside_ci_and_fails_in_ci(monkeypatch, ci):
    monkeypatch.setenv("CI", ci)
    expected = pytest.fail.Exception if ci else pytest.skip.Exception
    with pytest.raises(expected, match=r"no_such_tool\.sub .*pip install no_such_tool"):
        import_oracle("no_such_tool.sub")


def test_no_test_imports_a_reference_tool_with_importorskip():
    """``pytest.importorskip`` skips in CI as well: a parity check would pass silently without its tool."""
    from pathlib import Path

    marker = "pytest." + "importorskip("
    offenders = [str(path) for path in Path(__file__).parent.rglob("*.py") if marker in path.read_text("utf-8")]
    assert not offenders, f"use tests.helpers.oracles.import_oracle instead in {offenders}"

"""The command line costs what it uses (issue 24 item 4): help and ``list`` import neither torch nor torchmetrics.

Checked in a fresh interpreter through ``sys.modules`` (not a timing: the machine's load varies)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from testkit.checkout import checkout_pythonpath

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("torch", "torchmetrics", "torchvision", "transformers", "numpy", "scipy")

_PROBE = """
import contextlib, io, json, sys
from gpumetrics.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exit:
        code = exit.code
print(json.dumps({"code": code, "out": out.getvalue(), "heavy": [m for m in %r if m in sys.modules]}))
""" % (HEAVY,)


def _probe(*argv: str) -> dict:
    env = {**os.environ, "PYTHONPATH": checkout_pythonpath()}
    done = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, env=env, cwd=ROOT,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def lazy_package() -> None:
    """``import gpumetrics`` must itself be light (PEP 562 package exports) for the CLI to be."""
    env = {**os.environ, "PYTHONPATH": checkout_pythonpath()}
    code = "import sys, gpumetrics; print('torchmetrics' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    if done.stdout.strip() != "False":
        pytest.skip("`import gpumetrics` still imports torchmetrics (the lazy package exports are not in this tree)")


@pytest.mark.parametrize("argv", [
    ("--help",), ("evaluate", "--help"), ("score", "--help"), ("fid", "--help"), ("kid", "--help"),
    ("clip-score", "--help"), ("report", "--help"), ("list", "--help"), ("list",), ("list", "--json"), ("--version",),
], ids=" ".join)
def test_help_and_list_import_no_torch(lazy_package, argv):
    result = _probe(*argv)
    assert result["code"] in (0, None)
    assert result["out"], "the command printed nothing"
    assert result["heavy"] == [], f"gpumetrics {' '.join(argv)} imported {result['heavy']}"


def test_list_json_shows_options_with_defaults():
    from gpumetrics.cli import main

    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["list", "--json"]) == 0
    listing = json.loads(out.getvalue())
    bleu = listing["metrics"]["bleu"]["options"]
    assert bleu["tokenize"] == {"default": None} and bleu["reduction"] == {"default": "corpus"}
    assert listing["metrics"]["rouge"]["options"]["use_stemmer"] == {"default": False}
    required = [name for name, entry in listing["metrics"].items()
                if entry["options"] and any(spec.get("required") for spec in entry["options"].values())]
    assert "f1" in required  # num_classes has no default
    for name in ("s_image_generation", "s_image_captioning", "s_visual_qa"):
        assert name in listing["metrics"]  # registered by path (gpumetrics.suites.entries)


def test_list_table_shows_options(capsys):
    from gpumetrics.cli import main

    assert main(["list"]) == 0
    out = capsys.readouterr().out
    assert "options (default)" in out and "backend='auto'" in out

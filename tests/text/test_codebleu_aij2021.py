"""CodeBLEU ``preset="aij2021"`` (AIJ-2021 Fusion Brain, task Code2code) on the organisers' sample files.

Golden values, and how they were produced
-----------------------------------------
``OFFICIAL``: the organisers' script, ``evaluation/C2C_codeBLEU/evaluate.py`` of the public repository
ai-forever/fusion_brain_aij2021 (commit aa73ba3042874d44e481d52b5d6c4a4bba457c37), run unchanged as its readme says —
``python evaluate.py --ref_path true_C2C.json --pred_path prediction_C2C.json --verbose`` — in a throwaway venv with
Python 3.11.7 and ``tree_sitter==0.2.0`` (its requirements.txt; built from the sdist), loading the prebuilt grammar the
repository ships (``parser/my-languages.so``, tree-sitter-python of 2021). It printed::

    ngram match: 0.14624836741222075, weighted ngram match: 0.1508265839433974, syntax_match: 0.046413502109704644,
    dataflow_match: 0.0
    CodeBLEU score:  0.08587211336633069

``OURS``: ``codebleu_score(preds, target, preset="aij2021")`` (and ``detokenize=True``) with tree-sitter 0.22.3 and
tree-sitter-python 0.21.0 (``gpumetrics[code]``).

Why AST and data flow differ with the pinned grammar
---------------------------------------------------
The n-gram parts are the same computation on the same whitespace tokens and agree to 1e-15. AST and data-flow
parts parse the raw TransCoder token stream (``def f ( x ) : NEW_LINE INDENT …`` on one line), which is not Python;
what each grammar version's error recovery makes of it decides both parts. The 2021 grammar reads every sample
prediction (``def find ( x , par ) : NEW_LINE INDENT if par [ x ] == x : ...``, the same for all 20 samples) as an
annotated assignment ``… : ...`` with no data flow at all, so its data-flow match is 0 and the script (which has no
``or 1``) adds nothing for it; grammar 0.21.0 recovers ``x``/``par`` uses and finds 5 edges per prediction, most of
them also in the references (0.845). ``detokenize=True`` parses real Python instead — a different, better-founded
number, not the official one.

The official number: ``grammar=`` the organisers' library
--------------------------------------------------------
The 2021 grammar (``my-languages.so``, language ABI 11) cannot be loaded by py-tree-sitter 0.22 (ABI 13–14); 0.2.0
loads ABI 9–12. With py-tree-sitter 0.2.0 installed and ``grammar="…/my-languages.so"``, our walkers read the same
trees as the script (subtrees written with ``node.sexp()``) and every key equals the script's — on its sample files
and on our random Code2code files (``tests/data/aij/2021/c2c*``, golden values in ``tests/data/aij/golden.json``,
``PYTHONHASHSEED=0`` on both sides: the script's data flow depends on it). Those checks need the old binding and the
organisers' file, neither of which the test environment has by default: they run in a subprocess whose
``PYTHONPATH`` puts tree_sitter 0.2.0 before the installed 0.22.3 —

* the binding: ``GPUMETRICS_TREE_SITTER_020`` = a folder holding the ``tree_sitter`` 0.2.0 package (a venv's
  site-packages or a ``pip install --target`` folder); or, when ``GPUMETRICS_BUILD_TREE_SITTER_020=1`` or ``CI`` is
  set, one built here with ``pip install --target`` (network and a C compiler; a failed build fails the test);
* the grammar: ``GPUMETRICS_AIJ2021_GRAMMAR``, else ``../shared/aij/2021/my-languages.so``;

and skip with the reason otherwise. The rest of this file (the adapter with 0.22, the ABI error, bad arguments)
runs everywhere.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gpumetrics.functional import codebleu_score
from gpumetrics.text.codebleu import CodeBLEUScore
from gpumetrics.text.codebleu.metric import detokenize_python

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT.parent / "shared" / "aij" / "2021"
DATA = ROOT / "tests" / "data" / "aij"
GOLDEN = json.loads((DATA / "golden.json").read_text(encoding="utf-8"))
#: golden key → (reference file, prediction file)
C2C_FILES = {
    "2021/c2c": (DATA / "2021/c2c/true.json", DATA / "2021/c2c/pred.json"),
    "2021/c2c_mixed": (DATA / "2021/c2c_mixed/true.json", DATA / "2021/c2c_mixed/pred.json"),
    "2021/c2c_samples": (SAMPLES / "true_C2C.json", SAMPLES / "prediction_C2C.json"),
}

OFFICIAL = GOLDEN["2021/c2c_samples"]["official"]  # the numbers above, as generate.py golden-c2c stored them
OURS = {
    "codebleu": 0.30178892656950973,
    "ngram_match_score": 0.14624836741222072,
    "weighted_ngram_match_score": 0.15082658394339746,
    "syntax_match_score": 0.06542056074766354,
    "dataflow_match_score": 0.8446601941747572,
}
OURS_DETOKENIZED = {
    "codebleu": 0.3171856565725202,
    "ngram_match_score": 0.14624836741222072,
    "weighted_ngram_match_score": 0.15082658394339746,
    "syntax_match_score": 0.023391812865497075,
    "dataflow_match_score": 0.9482758620689655,
}


def _samples():
    if not (SAMPLES / "true_C2C.json").exists():
        pytest.skip(f"the organisers' sample files are not at {SAMPLES}")
    truth = json.loads((SAMPLES / "true_C2C.json").read_text(encoding="utf-8"))
    predictions = json.loads((SAMPLES / "prediction_C2C.json").read_text(encoding="utf-8"))
    keys = list(truth)  # the script's order: the reference file's keys
    return [predictions[key] for key in keys], [truth[key] for key in keys]


def _values(result):
    return {key: float(value) for key, value in result.items()}


def test_ngram_parts_equal_the_official_script():
    preds, target = _samples()
    ours = _values(codebleu_score(preds, target, preset="aij2021"))
    for key in ("ngram_match_score", "weighted_ngram_match_score"):
        assert ours[key] == pytest.approx(OFFICIAL[key], abs=1e-12), key


def test_golden_values_with_the_pinned_grammar():
    preds, target = _samples()
    ours = _values(codebleu_score(preds, target, preset="aij2021"))
    assert ours == pytest.approx(OURS, abs=1e-12)
    # the documented difference: the AST / data-flow parts (and so the total) come from another grammar
    assert ours["syntax_match_score"] != pytest.approx(OFFICIAL["syntax_match_score"], abs=1e-3)
    assert OFFICIAL["codebleu"] == pytest.approx(0.25 * sum(v for k, v in OFFICIAL.items() if k != "codebleu"),
                                                 abs=1e-15)  # no `or 1` in the script
    detokenized = _values(codebleu_score(preds, target, preset="aij2021", detokenize=True))
    assert detokenized == pytest.approx(OURS_DETOKENIZED, abs=1e-12)


def test_preset_differs_from_codebleu_07_where_the_script_does():
    # no strip, no comment removal, the 35-word keyword list, data flow counted as it is
    preds = ["x = 1 NEW_LINE y = x"]
    target = ["x = 1 NEW_LINE match = x"]
    aij = _values(codebleu_score(preds, target, preset="aij2021"))
    old = _values(codebleu_score(preds, target, language="python"))
    assert aij["weighted_ngram_match_score"] != old["weighted_ngram_match_score"]  # "match" is a keyword in 0.7 only
    with pytest.warns(UserWarning, match="no data flow"):
        none = _values(codebleu_score(["print ( 1 )"], ["pass"], preset="aij2021"))
    assert none["dataflow_match_score"] == 0
    assert none["codebleu"] == pytest.approx(0.25 * (none["ngram_match_score"] + none["weighted_ngram_match_score"]
                                                     + none["syntax_match_score"]), abs=1e-15)


def test_detokenize_python():
    text = ("def f ( x ) : NEW_LINE INDENT if x : NEW_LINE INDENT return ' a▁b ' NEW_LINE DEDENT return 0 "
            "NEW_LINE DEDENT")
    assert detokenize_python(text) == "def f ( x ) :\n    if x :\n        return ' a b '\n    return 0"
    assert detokenize_python("") == ""


def test_official_golden_values_of_the_samples_are_the_printed_ones():
    assert OFFICIAL == {"codebleu": 0.08587211336633069, "ngram_match_score": 0.14624836741222075,
                        "weighted_ngram_match_score": 0.1508265839433974,
                        "syntax_match_score": 0.046413502109704644, "dataflow_match_score": 0.0}


# ---------------------------------------------------------------------------------------------------- grammar option
def _read(key: str, limit: int | None = None):
    true_path, pred_path = C2C_FILES[key]
    if not true_path.exists():
        pytest.skip(f"{key}: {true_path} is not there")
    truth = json.loads(true_path.read_text(encoding="utf-8"))
    predictions = json.loads(pred_path.read_text(encoding="utf-8"))
    keys = list(truth)[:limit]
    return [predictions[key] for key in keys], [truth[key] for key in keys]


def _wheel_library() -> str:
    import tree_sitter_python

    found = sorted(Path(tree_sitter_python.__file__).parent.glob("_binding*.so"))
    if not found:
        pytest.skip("the tree-sitter-python wheel has no _binding*.so to load as a grammar library")
    return str(found[0])


def test_grammar_library_with_the_pinned_binding_equals_the_wheel():
    """The 0.22 adapter loading a library by path: the wheel's own compiled grammar gives the wheel's numbers."""
    library = _wheel_library()
    preds, target = _read("2021/c2c_mixed", limit=20)
    by_path = _values(codebleu_score(preds, target, preset="aij2021", grammar=library))
    assert by_path == _values(codebleu_score(preds, target, preset="aij2021"))
    metric = CodeBLEUScore(preset="aij2021", grammar=Path(library))
    metric.update(preds, target)
    assert _values(metric.compute()) == by_path
    assert ".abi14|tree_sitter:" in metric.signature() and "grammar:" not in CodeBLEUScore(preset="aij2021").signature()


def _fake_grammar(tmp_path: Path, abi: int) -> str:
    """A shared library whose ``tree_sitter_python`` returns a struct starting with ``abi`` (nothing else is read)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build a stand-in grammar library")
    source = tmp_path / "fake.c"
    source.write_text(f"static const unsigned int language[64] = {{{abi}}};\n"
                      "const void *tree_sitter_python(void) { return language; }\n")
    library = tmp_path / f"abi{abi}.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    return str(library)


def test_a_grammar_of_another_abi_names_the_tree_sitter_that_loads_it(tmp_path):
    old = _fake_grammar(tmp_path, 11)
    with pytest.raises(ValueError, match=r"`grammar` .*abi11\.so.* ABI 11; the installed py-tree-sitter 0\.22\.3 "
                                         r"loads ABI 13–14\. .*pip install tree_sitter==0\.2\.0"):
        codebleu_score(["x = 1"], ["x = 1"], preset="aij2021", grammar=old)
    with pytest.raises(ValueError, match="ABI 15 needs a py-tree-sitter newer than 0.22"):
        CodeBLEUScore(language="python", grammar=_fake_grammar(tmp_path, 15))
    organisers = os.environ.get("GPUMETRICS_AIJ2021_GRAMMAR") or str(SAMPLES / "my-languages.so")
    if Path(organisers).is_file():  # the real file, where it is available
        with pytest.raises(ValueError, match="ABI 11; the installed py-tree-sitter 0.22.3 loads ABI 13–14"):
            codebleu_score(["x = 1"], ["x = 1"], preset="aij2021", grammar=organisers)


def test_bad_grammar_arguments(tmp_path):
    with pytest.raises(TypeError, match="`grammar` must be the path"):
        codebleu_score(["x"], ["x"], preset="aij2021", grammar=3)
    with pytest.raises(ValueError, match="`grammar` file not found"):
        codebleu_score(["x"], ["x"], preset="aij2021", grammar=tmp_path / "missing.so")
    (tmp_path / "text.so").write_text("not a library")
    with pytest.raises(ValueError, match="`grammar` .* cannot be loaded as a shared library"):
        codebleu_score(["x"], ["x"], preset="aij2021", grammar=tmp_path / "text.so")
    with pytest.raises(ValueError, match="has no java grammar \\(no symbol tree_sitter_java\\)"):
        codebleu_score(["x"], ["x"], language="java", grammar=_wheel_library())


def test_suite_option_grammar_resolves_against_the_config_and_is_checked_there(tmp_path):
    from gpumetrics.harness.config import ConfigError, parse_config
    from gpumetrics.harness.runner import evaluate

    (tmp_path / "grammars").mkdir()
    shutil.copy(_wheel_library(), tmp_path / "grammars" / "python.so")
    true_path, pred_path = C2C_FILES["2021/c2c_mixed"]

    def config(grammar: str):
        return parse_config({"suite": "aij2021", "tasks": [{
            "name": "Code2code", "references": str(true_path), "predictions": str(pred_path),
            "options": {"grammar": grammar}}]}, tmp_path / "suite.yaml")

    parsed = config("grammars/python.so")
    assert parsed.tasks[0].options["grammar"] == str(tmp_path / "grammars" / "python.so")
    preds, target = _read("2021/c2c_mixed")
    expected = float(codebleu_score(preds, target, preset="aij2021")["codebleu"])
    assert evaluate(parsed, device="cpu").tasks[0].score == pytest.approx(expected, abs=1e-12)
    _fake_grammar(tmp_path, 11)
    with pytest.raises(ConfigError, match=r"tasks\[0\].*ABI 11; the installed py-tree-sitter 0.22.3"):
        config("abi11.so")
    with pytest.raises(ConfigError, match="`grammar` file not found"):
        config("nothing.so")


# ------------------------------------------------------------------------------------------------- py-tree-sitter 0.2.0
def _organisers_grammar() -> str:
    path = os.environ.get("GPUMETRICS_AIJ2021_GRAMMAR") or str(SAMPLES / "my-languages.so")
    if not Path(path).is_file():
        pytest.skip("the organisers' my-languages.so is not available (set GPUMETRICS_AIJ2021_GRAMMAR to "
                    "evaluation/C2C_codeBLEU/parser/my-languages.so of ai-forever/fusion_brain_aij2021)")
    return path


@pytest.fixture(scope="module")
def tree_sitter_020(tmp_path_factory) -> str:
    """A folder holding the tree_sitter 0.2.0 package (see the module docstring)."""
    given = os.environ.get("GPUMETRICS_TREE_SITTER_020")
    if given:
        if not (Path(given) / "tree_sitter" / "__init__.py").is_file():
            pytest.fail(f"GPUMETRICS_TREE_SITTER_020={given!r} holds no tree_sitter package")
        return given
    if not (os.environ.get("GPUMETRICS_BUILD_TREE_SITTER_020") or os.environ.get("CI")):
        pytest.skip("no py-tree-sitter 0.2.0: set GPUMETRICS_TREE_SITTER_020 to a folder holding it, or "
                    "GPUMETRICS_BUILD_TREE_SITTER_020=1 to build one (pip, network, C compiler)")
    target = tmp_path_factory.mktemp("tree_sitter_020")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
                           "tree_sitter==0.2.0"], capture_output=True, text=True)
    if done.returncode:
        pytest.fail(f"building tree_sitter 0.2.0 failed:\n{done.stdout}\n{done.stderr}")
    return str(target)


def _run_with_tree_sitter_020(folder: str, code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([folder, str(ROOT)]), "PYTHONHASHSEED": "0"}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          cwd=str(ROOT), timeout=300)


def test_with_tree_sitter_020_the_wheel_is_refused_with_advice(tree_sitter_020):
    done = _run_with_tree_sitter_020(tree_sitter_020, """
        import tree_sitter
        from importlib.metadata import version
        from gpumetrics.functional import codebleu_score
        assert version("tree_sitter") == "0.2.0", version("tree_sitter")
        try:
            codebleu_score(["x = 1"], ["x = 1"], preset="aij2021")
        except ValueError as error:
            print(error)
    """)
    assert done.returncode == 0, done.stderr
    assert "ABI 14; the installed py-tree-sitter 0.2.0 loads ABI 9–12" in done.stdout
    assert "pip install tree_sitter==0.22.3" in done.stdout


def test_with_tree_sitter_020_and_the_organisers_grammar_every_key_equals_the_script(tree_sitter_020):
    """Function, module and the suite (``grammar`` resolved against the config) against the golden values."""
    grammar = _organisers_grammar()
    keys = [key for key, (true_path, _) in C2C_FILES.items() if true_path.exists()]
    paths = {key: (str(true_path), str(pred_path)) for key, (true_path, pred_path) in C2C_FILES.items()}
    done = _run_with_tree_sitter_020(tree_sitter_020, f"""
        import json, os
        from pathlib import Path
        from gpumetrics.functional import codebleu_score
        from gpumetrics.harness.config import parse_config
        from gpumetrics.harness.runner import evaluate
        from gpumetrics.text.codebleu import CodeBLEUScore
        files, grammar, out = {paths!r}, {grammar!r}, {{}}
        for key in {keys!r}:
            truth = json.load(open(files[key][0], encoding="utf-8"))
            preds = json.load(open(files[key][1], encoding="utf-8"))
            ids = list(truth)
            scores = codebleu_score([preds[i] for i in ids], [truth[i] for i in ids], preset="aij2021",
                                    grammar=grammar)
            metric = CodeBLEUScore(preset="aij2021", grammar=grammar)
            for start in range(0, len(ids), 7):
                metric.update([preds[i] for i in ids[start:start + 7]], [truth[i] for i in ids[start:start + 7]])
            base = Path(files[key][0]).parent
            config = parse_config({{"suite": "aij2021", "tasks": [{{
                "name": "Code2code", "references": files[key][0], "predictions": files[key][1],
                "options": {{"grammar": os.path.relpath(grammar, base)}}}}]}}, base / "inline.yaml")
            out[key] = {{"function": {{k: float(v) for k, v in scores.items()}},
                         "module": {{k: float(v) for k, v in metric.compute().items()}},
                         "suite": evaluate(config, device="cpu").tasks[0].score,
                         "signature": metric.signature()}}
        print(json.dumps(out))
    """)
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(results) == set(keys)
    for key, result in results.items():
        official = GOLDEN[key]["official"]
        for way in ("function", "module"):
            assert set(result[way]) == set(official)
            for name, value in official.items():
                assert abs(result[way][name] - value) <= 1e-9, (key, way, name, result[way][name], value)
        assert abs(result["suite"] - official["codebleu"]) <= 1e-9, key
        assert ".abi11|tree_sitter:0.2.0|" in result["signature"]

"""TEMPORARY stand-in for ``gpumetrics.text.codebleu.dataflow`` while it is written in a parallel branch (issue 13).

Importing this module makes ``gpumetrics.text.codebleu.dataflow.dataflow_edges`` resolve: to the real module when it
exists, else to a test-only stand-in that calls codebleu 0.7's own ``DFG_<lang>`` functions (the interface the real
module must equal). The library never imports this; tests, the doctest run (``conftest.py``) and the DDP workers
(through :class:`FallbackCodeBLEUScore`, whose import installs it in the spawned process) do. Delete this file and its
uses once ``dataflow.py`` has landed.
"""

from __future__ import annotations

import importlib
import sys
import types

from gpumetrics.text.codebleu.metric import CodeBLEUScore

try:
    importlib.import_module("gpumetrics.text.codebleu.dataflow")
    USING_FALLBACK = False
except ImportError:
    USING_FALLBACK = True


def _codebleu_dfg(root_node, index_to_code, lang):
    from codebleu import parser as reference

    walkers = {
        "python": reference.DFG_python, "java": reference.DFG_java, "javascript": reference.DFG_javascript,
        "c_sharp": reference.DFG_csharp, "php": reference.DFG_php, "go": reference.DFG_go,
        "ruby": reference.DFG_ruby, "rust": reference.DFG_rust, "c": reference.DFG_csharp, "cpp": reference.DFG_csharp,
    }
    return walkers[lang](root_node, index_to_code, {})[0]


if USING_FALLBACK:
    stand_in = types.ModuleType("gpumetrics.text.codebleu.dataflow")
    stand_in.__doc__ = "test-only stand-in (tests/text/codebleu_fallback.py): codebleu 0.7's DFG functions"
    stand_in.dataflow_edges = _codebleu_dfg
    sys.modules["gpumetrics.text.codebleu.dataflow"] = stand_in


class FallbackCodeBLEUScore(CodeBLEUScore):
    """:class:`CodeBLEUScore` whose defining module installs the stand-in (for spawned DDP workers)."""

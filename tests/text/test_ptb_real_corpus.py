"""The PTB tokenizer port on real text: a committed corpus with pycocoevalcap's Java output as golden values.

``tests/text/data/ptb_real/`` holds 39,120 lines of real text (Python documentation and docstrings, package READMEs,
licence texts; see its README.md) and 12,999 template lines of the lexer's rule families (entities, backslash escapes,
URLs beside quotes / ``@`` / commas, digit groups, SGML tags with non-ASCII content, historical letters, glued
fragments), each with the string pycocoevalcap's ``PTBTokenizer.tokenize`` returned for it when the whole file was
one call (CoreNLP 3.4.1 ``PTBTokenizer -preserveLines -lowerCase`` + its punctuation removal). The default test
compares the port with them (no Java); the slow test re-runs the Java tool and checks the golden values.
"""

import gzip
import shutil
from pathlib import Path

import pytest

from gpumetrics.text.tokenize.ptb import coco_tokenized_captions, ptb_tokenize_batch
from tests.helpers.oracles import import_oracle

_DATA = Path(__file__).parent / "data" / "ptb_real"
_CORPORA = ("real", "family")


def _read(name: str) -> list[str]:
    with gzip.open(_DATA / name, "rt", encoding="utf-8", newline="\n") as handle:
        return handle.read().split("\n")[:-1]


def _corpus(name: str) -> tuple[list[str], list[str]]:
    lines, golden = _read(f"{name}.txt.gz"), _read(f"{name}.golden.txt.gz")
    assert len(lines) == len(golden)
    return lines, golden


def _differences(lines: list[str], expected: list[str], ours: list[str]) -> list[tuple[int, str, str, str]]:
    return [(i, line, e, o) for i, (line, e, o) in enumerate(zip(lines, expected, ours)) if e != o]


def test_corpus_sizes():
    real, _ = _corpus("real")
    family, _ = _corpus("family")
    assert len(real) >= 20_000 and len(set(real)) == len(real)
    assert len(family) >= 8_000
    # the corpus holds what it is meant to exercise
    text = "\n".join(real + family)
    for needle in ("&#", "&eacute;", "&apos;", "\\*", "`http", "http://@", "<a ", "《", "ſ", "@", "06/20-", "猫", "ж"):
        assert needle in text, needle


@pytest.mark.parametrize("name", _CORPORA)
def test_port_equals_java_golden_output(name):
    lines, golden = _corpus(name)
    # one call over the whole file, as the golden values were made (each line sees the start of the next)
    ours = coco_tokenized_captions(lines)
    differences = _differences(lines, golden, ours)
    assert not differences, (len(differences), differences[:5])


def test_split_tokens_equal_golden_split():
    # CIDEr / BLEU split pycocoevalcap's strings on any whitespace: ptb_tokenize_batch gives those tokens directly
    lines, golden = _corpus("family")
    assert ptb_tokenize_batch(lines) == [string.split() for string in golden]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("java") is None, reason="no java: the committed golden values stand in for it")
@pytest.mark.parametrize("name", _CORPORA)
def test_golden_output_is_the_java_output(name):
    PTBTokenizer = import_oracle("pycocoevalcap.tokenizer.ptbtokenizer").PTBTokenizer

    lines, golden = _corpus(name)
    result = PTBTokenizer().tokenize({i: [{"caption": line}] for i, line in enumerate(lines)})
    java = [result[i][0] for i in range(len(lines))]
    assert java == golden

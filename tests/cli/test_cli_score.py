"""``gpumetrics score``: line-aligned plain-text files, the sacrebleu user's command line (issue 24 item 7)."""

from __future__ import annotations

import io
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sacrebleu
import torch

from gpumetrics import cli
from gpumetrics import functional as F

ROOT = Path(__file__).resolve().parents[2]


def _run(args, capsys):
    code = cli.main([str(a) for a in args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _real_lines(count: int = 120) -> list[str]:
    """Real text: lines of the project's own documentation (markdown, code spans, URLs, unicode)."""
    lines = [" ".join(line.split()) for line in (ROOT / "docs" / "cli.md").read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line][:count]


def _perturbed(lines: list[str], seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for line in lines:
        words = line.split()
        words = [w for w in words if rng.random() > 0.15]
        if len(words) > 3 and rng.random() < 0.5:
            i = rng.randrange(len(words) - 1)
            words[i], words[i + 1] = words[i + 1], words[i]
        out.append(" ".join(words))
    return out


@pytest.fixture()
def files(tmp_path):
    refs = _real_lines()
    hyps, refs2 = _perturbed(refs, 0), _perturbed(refs, 1)
    paths = {}
    for name, lines in (("hyps", hyps), ("refs", refs), ("refs2", refs2)):
        paths[name] = tmp_path / f"{name}.txt"
        paths[name].write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    return paths, hyps, refs, refs2


def test_bleu_equals_sacrebleu_one_and_two_references(files, capsys):
    paths, hyps, refs, refs2 = files
    code, out, err = _run(["score", "-m", "bleu", "-r", paths["refs"], paths["hyps"], "--json"], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["score"] * 100 == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score, abs=1e-12)
    assert result["n"] == len(hyps) and result["signature"].startswith("bleu|mode:sacrebleu")
    code, out, _ = _run(["score", "-m", "bleu", "-r", paths["refs"], "-r", paths["refs2"], paths["hyps"], "--json"],
                        capsys)
    two = sacrebleu.corpus_bleu(hyps, [refs, refs2]).score
    assert json.loads(out)["score"] * 100 == pytest.approx(two, abs=1e-12)
    assert two != pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score)  # the second reference counts


def test_score_only_output_matches_the_sacrebleu_command(files, capsys):
    paths, hyps, refs, _ = files
    code, out, _ = _run(["score", "-m", "bleu", "-r", paths["refs"], paths["hyps"], "-w", "6"], capsys)
    assert code == 0 and len(out.strip().splitlines()) == 1
    binary = Path(sys.executable).with_name("sacrebleu")  # the venv's console script
    binary = str(binary) if binary.exists() else shutil.which("sacrebleu")
    if binary is None:
        pytest.skip("the sacrebleu command is not installed")
    with open(paths["hyps"], "rb") as stdin:
        theirs = subprocess.run([binary, str(paths["refs"]), "-b", "-w", "4"], stdin=stdin, capture_output=True,
                                text=True, timeout=120)
    assert theirs.returncode == 0, theirs.stderr
    assert f"{float(out) * 100:.4f}" == theirs.stdout.strip()


def test_hypotheses_from_stdin(files, capsys, monkeypatch):
    paths, hyps, refs, _ = files
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(paths["hyps"].read_bytes())))
    code, out, err = _run(["score", "-m", "bleu", "-r", paths["refs"], "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["score"] * 100 == pytest.approx(sacrebleu.corpus_bleu(hyps, [refs]).score, abs=1e-12)


def test_bleu_options_as_yaml_scalars(files, capsys):
    paths, hyps, refs, _ = files
    code, out, err = _run(["score", "-m", "bleu", "--opt", "tokenize=char", "--opt", "lowercase=true",
                           "-r", paths["refs"], paths["hyps"], "--json"], capsys)
    assert code == 0, err
    expected = sacrebleu.corpus_bleu(hyps, [refs], tokenize="char", lowercase=True).score
    result = json.loads(out)
    assert result["score"] * 100 == pytest.approx(expected, abs=1e-12)
    assert result["options"] == {"tokenize": "char", "lowercase": True}


def test_other_catalog_metrics_equal_the_python_api(files, capsys):
    paths, hyps, refs, _ = files
    expected = {
        "cer": float(F.char_error_rate(hyps, refs)),
        "token_f1": float(F.token_f1(hyps, [[r] for r in refs])),
        "rouge": float(F.rouge_score(hyps, [[r] for r in refs])["rougeL_fmeasure"]),
    }
    for metric, value in expected.items():
        code, out, err = _run(["score", "-m", metric, "-r", paths["refs"], paths["hyps"], "--json"], capsys)
        assert code == 0, err
        assert json.loads(out)["score"] == pytest.approx(value, abs=1e-12), metric
    code, out, _ = _run(["score", "-m", "rouge", "-r", paths["refs"], paths["hyps"], "--json"], capsys)
    assert set(json.loads(out)["details"]) >= {"rouge1_fmeasure", "rougeL_fmeasure"}


def test_unknown_option_names_the_metric_options(files, capsys):
    paths, *_ = files
    code, _, err = _run(["score", "-m", "bleu", "--opt", "tokenise=13a", "-r", paths["refs"], paths["hyps"]], capsys)
    assert code == 2
    assert "'tokenise'" in err and "tokenize" in err and "smooth" in err and len(err.strip().splitlines()) == 1


def test_unknown_metric_and_bad_opt(files, capsys):
    paths, *_ = files
    code, _, err = _run(["score", "-m", "blue", "-r", paths["refs"], paths["hyps"]], capsys)
    assert code == 2 and "unknown metric 'blue'" in err and "bleu" in err
    code, _, err = _run(["score", "-m", "bleu", "--opt", "tokenize", "-r", paths["refs"], paths["hyps"]], capsys)
    assert code == 2 and "key=value" in err


def test_unequal_line_counts_name_files_and_counts(files, tmp_path, capsys):
    paths, *_ = files
    short = tmp_path / "short.txt"
    short.write_text("one\ntwo\n", encoding="utf-8")
    code, _, err = _run(["score", "-m", "bleu", "-r", paths["refs"], "-r", short, paths["hyps"]], capsys)
    assert code == 2
    assert f"references {short}: 2" in err and f"hypotheses {paths['hyps']}: {len(_real_lines())}" in err


def test_lines_are_read_as_sacrebleu_reads_them(tmp_path, capsys):
    hyps, refs = tmp_path / "h.txt", tmp_path / "r.txt"
    hyps.write_bytes("a b c d  \r\nsecond line\u2028 here\n".encode())  # no split at U+2028; trailing space dropped
    refs.write_bytes("a b c d\nsecond line\u2028 here".encode())  # no final newline: still two lines
    code, out, err = _run(["score", "-m", "bleu", "-r", refs, hyps, "--json"], capsys)
    assert code == 0, err
    expected = sacrebleu.corpus_bleu(["a b c d", "second line\u2028 here"], [["a b c d", "second line\u2028 here"]])
    assert json.loads(out)["score"] * 100 == pytest.approx(expected.score, abs=1e-12)


@pytest.mark.parametrize("bom_in", ["hyps", "refs", "both"])
def test_a_leading_byte_order_mark_is_read_as_the_sacrebleu_command_reads_it(tmp_path, capsys, bom_in):
    """A "UTF-8-BOM" file: sacrebleu's command keeps the mark on the first word (so the first line's first word
    stops matching where only one side has it); score gives the same number and says so on stderr."""
    lines = ["the cat sat on the mat", "hello world again and again", "a b c d e"]
    hyps, refs = tmp_path / "h.txt", tmp_path / "r.txt"
    for path, name in ((hyps, "hyps"), (refs, "refs")):
        path.write_bytes(("\ufeff" if bom_in in (name, "both") else "").encode() + "\n".join(lines).encode() + b"\n")
    code, out, err = _run(["score", "-m", "bleu", "-r", refs, hyps, "-w", "6"], capsys)
    assert code == 0, err
    assert (err.count("byte-order mark") == (2 if bom_in == "both" else 1)
            and str(hyps if bom_in != "refs" else refs) in err)
    marked = ["\ufeff" + lines[0], *lines[1:]]
    expected = sacrebleu.corpus_bleu(marked if bom_in != "refs" else lines, [marked if bom_in != "hyps" else lines])
    assert f"{float(out) * 100:.2f}" == f"{expected.score:.2f}"
    assert (expected.score > 99.99) == (bom_in == "both")  # one-sided: the first word no longer matches
    binary = Path(sys.executable).with_name("sacrebleu")
    binary = str(binary) if binary.exists() else shutil.which("sacrebleu")
    if binary is not None:
        theirs = subprocess.run([binary, str(refs), "-i", str(hyps), "-b", "-w", "4"], capture_output=True, text=True,
                                timeout=120)
        assert theirs.returncode == 0, theirs.stderr
        assert f"{float(out) * 100:.4f}" == theirs.stdout.strip()


def test_json_valued_lines_drop_a_byte_order_mark(tmp_path, capsys):
    preds, target = tmp_path / "p.txt", tmp_path / "t.txt"
    preds.write_bytes("\ufeff1\n0\n1\n".encode())
    target.write_bytes("\ufeff1\n1\n1\n".encode())
    code, out, err = _run(["score", "-m", "f1", "--opt", "num_classes=2", "-r", target, preds, "--json"], capsys)
    assert code == 0, err
    expected = F.multiclass_f1_score(torch.tensor([1, 0, 1]), torch.tensor([1, 1, 1]), num_classes=2)
    assert "byte-order mark" not in err and json.loads(out)["score"] == pytest.approx(float(expected), abs=1e-12)


def test_not_utf8_and_directory_are_named(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\n\xff\n")
    good = tmp_path / "good.txt"
    good.write_text("fine\nfine\n", encoding="utf-8")
    code, _, err = _run(["score", "-m", "bleu", "-r", good, bad], capsys)
    assert code == 2 and f"{bad}:2: not UTF-8" in err
    code, _, err = _run(["score", "-m", "bleu", "-r", tmp_path, good], capsys)
    assert code == 2 and "is a directory" in err


def test_empty_files_score_like_the_python_api(tmp_path, capsys):
    empty = tmp_path / "e.txt"
    empty.write_text("", encoding="utf-8")
    code, out, err = _run(["score", "-m", "bleu", "-r", empty, empty, "--json"], capsys)
    assert code == 0, err
    assert json.loads(out)["n"] == 0 and json.loads(out)["score"] == float(F.bleu_score([], []))
    assert f"WARNING: gpumetrics score: {empty} holds no line" in err  # a zero is said to be one of no samples


def test_shipped_plain_text_captions_equal_evaluate_of_the_records(tmp_path, capsys):
    """examples/captions/{hyps,refs1,refs2,refs3}.txt are the JSONL example as line-aligned text (the missing
    prediction an empty line): score gives evaluate's number, and sacrebleu's."""
    folder = ROOT / "examples" / "captions"
    refs = [folder / f"refs{k}.txt" for k in (1, 2, 3)]
    args = ["score", "-m", "bleu", *[a for r in refs for a in ("-r", r)], folder / "hyps.txt", "--json"]
    code, out, err = _run(args, capsys)
    assert code == 0, err
    scored = json.loads(out)
    config = tmp_path / "c.yaml"
    config.write_text(json.dumps({"tasks": [{"name": "C", "metric": "bleu",
                                             "predictions": str(folder / "predictions.jsonl"),
                                             "references": str(folder / "references.jsonl")}]}), encoding="utf-8")
    code, out, err = _run(["evaluate", config, "-o", "-", "--progress", "off"], capsys)
    assert code == 0, err
    evaluated = json.loads(out)["tasks"][0]
    assert scored["score"] == evaluated["score"] and scored["signature"] == evaluated["signature"]
    lines = [p.read_text(encoding="utf-8").splitlines() for p in (folder / "hyps.txt", *refs)]
    assert scored["score"] * 100 == pytest.approx(sacrebleu.corpus_bleu(lines[0], lines[1:]).score, abs=1e-12)


def test_label_metric_reads_lines_as_json_values(tmp_path, capsys):
    from gpumetrics.classification import MulticlassPrecision

    preds, target = [0, 2, 1, 1, 2, 0, 1], [0, 1, 1, 2, 2, 0, 0]
    hyps, refs = tmp_path / "h.txt", tmp_path / "r.txt"
    hyps.write_text("".join(f"{p}\n" for p in preds))
    refs.write_text("".join(f"{t}\n" for t in target))
    code, out, err = _run(["score", "-m", "precision", "--opt", "num_classes=3", "-r", refs, hyps, "--json"], capsys)
    assert code == 0, err
    expected = MulticlassPrecision(num_classes=3)(torch.tensor(preds), torch.tensor(target))
    assert json.loads(out)["score"] == pytest.approx(float(expected), abs=1e-12)
    hyps.write_text("0\nx\n" + "1\n" * 5)
    code, _, err = _run(["score", "-m", "precision", "--opt", "num_classes=3", "-r", refs, hyps], capsys)
    assert code == 2 and "cannot score these lines" in err and err.count("\n") == 1  # not a traceback


@pytest.mark.parametrize("width", ["-3", "101", "99999999999"])
def test_a_width_out_of_range_is_a_usage_error(tmp_path, capsys, width):
    # `-w -3` reached the format spec: "error: Format specifier missing precision"; `-w 99999999999` "error: precision
    # too big", naming no argument (and `-w 1000000000` printed a gigabyte of zeros)
    refs = tmp_path / "r.txt"
    refs.write_text("a b\n", encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        cli.main(["score", "-m", "bleu", "-w", width, "-r", str(refs), str(refs)])
    assert exit_info.value.code == 2 and "-w/--width: expected an integer from 0 to 100" in capsys.readouterr().err


def test_utf16_without_a_byte_order_mark_is_read_as_sacrebleu_reads_it_and_named(tmp_path, capsys):
    """UTF-16-LE text without a mark is valid UTF-8 with a NUL after every ASCII character: sacrebleu scores those
    lines silently; score reads them the same way (the same number) and names the files and lines holding NULs —
    also when only one side is UTF-16, where the line counts differ and the warning explains why."""
    lines = ["the cat sat on the mat", "hello world again and again"]
    hyps, refs = tmp_path / "h.txt", tmp_path / "r.txt"
    for path in (hyps, refs):
        path.write_bytes(("\n".join(lines) + "\n").encode("utf-16-le"))
    code, out, err = _run(["score", "-m", "bleu", "-r", refs, hyps, "--json"], capsys)
    assert code == 0, err
    assert f"hypotheses {hyps} holds NUL characters (line 1 first)" in err
    assert f"references {refs} holds NUL characters (line 1 first)" in err
    read = [line.rstrip() for line in hyps.read_bytes().decode("utf-8").split("\n")]  # sacrebleu's reading
    assert json.loads(out)["score"] * 100 == pytest.approx(sacrebleu.corpus_bleu(read, [read]).score, abs=1e-9)
    refs.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = _run(["score", "-m", "bleu", "-r", refs, hyps], capsys)
    assert code == 2 and "different line counts" in err
    assert err.index(f"hypotheses {hyps} holds NUL characters") < err.index("different line counts")
    assert f"references {refs} holds NUL" not in err


def test_clean_utf8_files_get_no_encoding_warning(tmp_path, capsys):
    hyps, refs = tmp_path / "h.txt", tmp_path / "r.txt"
    for path in (hyps, refs):
        path.write_text("the cat\nсобака 😀\n", encoding="utf-8")
    code, _, err = _run(["score", "-m", "bleu", "-r", refs, hyps], capsys)
    assert code == 0 and "NUL" not in err and "byte-order" not in err

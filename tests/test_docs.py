"""The documentation says only what is true: every code block of README.md and docs/ runs (or is listed here with the
reason it does not), the example table matches the data, every page the code cites exists, and every metric states its
better direction."""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
from pathlib import Path

import pytest
import torch
import yaml

import gpumetrics
from gpumetrics.cli import main
from gpumetrics.core import Metric

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = [README, *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.S | re.M)
#: languages of code blocks that are shown, not run: ``text`` holds install steps (they build the environment the tests
#: run in) and program output
SHOWN_ONLY = {"text"}

#: README bash lines that are not run here, with the reason.
NOT_RUN = {
    "make demo": "builds the venv and runs configs/demo.yaml; test_cli.py runs that config through the same CLI",
    "make test": "the command that runs this test",
    "python -m venv c2c && . c2c/bin/activate": "a second environment for py-tree-sitter 0.2.0 (Code2code with the "
                                                 "organisers' grammar); tests/text/test_codebleu_aij2021.py runs it",
    "pip install -e '.[text]'": "installs the package (that environment)",
    "pip install tree_sitter==0.2.0": "builds the old binding; tests/text/test_codebleu_aij2021.py builds it in CI",
    "torchrun --nproc_per_node=2 -m gpumetrics evaluate configs/demo.yaml --output report.json":
        "2 processes; tests/harness/test_scale.py::test_torchrun_two_processes_equal_one runs the same command",
}


def readme_blocks(language: str, pages: tuple = (README,)) -> list[str]:
    return [body for page in pages for lang, body in FENCE.findall(page.read_text(encoding="utf-8"))
            if lang == language]


def docs_blocks(language: str) -> list[str]:
    return readme_blocks(language, tuple(DOCS))


def command_lines(block: str) -> list[str]:
    """Shell lines of a block without comments; a line ending in ``\\`` continues on the next."""
    lines, pending = [], ""
    for raw in block.splitlines():
        line = (pending + " " + raw.split(" #", 1)[0].strip()).strip() if not raw.lstrip().startswith("#") else pending
        if line.endswith("\\"):
            pending = line[:-1]
            continue
        pending = ""
        if line:
            lines.append(line)
    return lines


def test_readme_has_code_blocks_of_each_kind():
    assert readme_blocks("python") and readme_blocks("bash") and readme_blocks("yaml")
    known = {"python", "bash", "yaml"} | SHOWN_ONLY
    for page in DOCS:
        languages = {lang for lang, _ in FENCE.findall(page.read_text(encoding="utf-8"))}
        assert languages <= known, f"{page.relative_to(ROOT)}: a block in a language this test does not run"


def test_readme_is_short():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_docs_python_blocks_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for page in DOCS[1:]:
        for block in readme_blocks("python", (page,)):
            exec(compile(block, str(page.relative_to(ROOT)), "exec"), {})  # noqa: S102 (our own docs)


def test_docs_links_resolve():
    for page in DOCS:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)} links to missing {target}"


def test_readme_python_blocks_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for block in readme_blocks("python"):
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 (our own README)
    assert namespace["metric"].compute() == pytest.approx(0.9)
    assert namespace["metric"].signature().startswith("token_f1|preset:squad")


def test_readme_yaml_config_runs_relative_to_its_folder(tmp_path, monkeypatch):
    from gpumetrics.harness.config import load_config
    from gpumetrics.harness.runner import evaluate

    block = readme_blocks("yaml")[0]  # docs/metrics/suites.md holds the suite example (test below)
    config = yaml.safe_load(block)
    assert config["tasks"]
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    (tmp_path / "configs").mkdir()
    path = tmp_path / "configs" / "readme.yaml"
    path.write_text(block, encoding="utf-8")
    monkeypatch.chdir(ROOT / "gpumetrics")  # anywhere but the config's folder
    report = evaluate(load_config(path))
    assert [task.name for task in report.tasks] == [task["name"] for task in config["tasks"]]
    assert all(0 <= task.score <= 1 for task in report.tasks)


def test_readme_suite_example_names_suite_tasks_and_settable_options():
    from gpumetrics.suites import SUITES

    blocks = readme_blocks("yaml", (ROOT / "docs" / "metrics" / "suites.md",))
    assert len(blocks) == 1
    config = yaml.safe_load(blocks[0])
    suite = SUITES[config["suite"]]
    tasks = {task.name: task for task in suite.tasks}
    for item in config["tasks"]:
        if item["name"] in suite.hidden:
            assert set(item) == {"name", "score"}
            continue
        assert set(item) - {"options"} == {"name", "references", "predictions"}
        assert set(item.get("options", {})) <= set(tasks[item["name"]].user_options)


def test_readme_bash_lines_are_all_run_or_listed():
    lines = [line for block in docs_blocks("bash") for line in command_lines(block)]
    assert lines
    for line in lines:
        assert line in NOT_RUN or _cli_args(line) is not None, f"README line is neither run here nor listed: {line}"


def _cli_args(line: str):
    """The argument list of a ``gpumetrics …`` / ``python -m gpumetrics …`` line, else None."""
    words = shlex.split(line)
    if words[:1] == ["gpumetrics"]:
        return words[1:]
    if words[:3] == ["python", "-m", "gpumetrics"]:
        return words[3:]
    return None


@pytest.fixture
def readme_sandbox(tmp_path, monkeypatch):
    """A working directory holding every file the README's commands name, with small stand-ins for the models:
    random-weight Inception under its official file name (the registry pin is pointed at it) and a tiny random
    Hugging Face CLIP in ``clip-vit-base-patch32/``."""
    from PIL import Image

    from gpumetrics.image import feature_cache
    from gpumetrics.image import weights as weights_mod
    from gpumetrics.image.inception import random_fid_inception_state_dict
    from testkit.clip_models import TINY_CLIP, save_random_hf_clip

    for name in ("configs", "examples"):
        (tmp_path / name).symlink_to(ROOT / name)
    generator = torch.Generator().manual_seed(0)
    for folder in ("real_images", "generated_images"):
        (tmp_path / folder).mkdir()
        for i in range(3):
            pixels = torch.randint(0, 256, (40, 48, 3), dtype=torch.uint8, generator=generator).numpy()
            Image.fromarray(pixels).save(tmp_path / folder / f"{i}.png")
    (tmp_path / "captions.jsonl").write_text(
        "".join(json.dumps({"image": f"{i}.png", "caption": c}) + "\n" for i, c in enumerate(["a cat", "кот", "猫"])),
        encoding="utf-8",
    )
    entry = weights_mod.FID_INCEPTION
    weights_file = tmp_path / entry.file_name
    torch.save(random_fid_inception_state_dict(seed=0), weights_file)
    pinned = dataclasses.replace(
        entry, sha256=weights_mod.file_sha256(weights_file), size_bytes=weights_file.stat().st_size
    )
    monkeypatch.setitem(weights_mod.WEIGHTS, entry.name, pinned)
    monkeypatch.setattr(feature_cache, "default_cache_dir", lambda: tmp_path / "feature-cache")
    (tmp_path / "clip-vit-base-patch32").mkdir()
    save_random_hf_clip(tmp_path / "clip-vit-base-patch32", TINY_CLIP)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_readme_bash_lines_run(readme_sandbox, capsys):
    ran, seen = [], set()
    for block in docs_blocks("bash"):
        for line in command_lines(block):
            args = _cli_args(line)
            # a line the README repeats ran once already (an FID line costs ~30 s here: the 2048-d eigen-decompositions
            # of two rank-deficient covariances)
            if args is None or line in NOT_RUN or line in seen:
                continue
            seen.add(line)
            code = main(args)
            captured = capsys.readouterr()
            assert code == 0, f"README line failed: {line}\n{captured.err}"
            ran.append(args[0])
    assert {"list", "evaluate", "report", "fid", "clip-score"} <= set(ran)
    assert (readme_sandbox / "real.npz").is_file() and (readme_sandbox / "report.json").is_file()
    assert "</html>" in (readme_sandbox / "report.html").read_text(encoding="utf-8")


def test_examples_readme_table_matches_the_data():
    text = (ROOT / "examples" / "README.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    table_lines = [line for line in text.splitlines() if line.startswith("|")]
    assert len(table_lines) == len(rows) + 2, "every table row sits in the one table (header + separator + rows)"
    # aij2022/ holds textqa/, mathqa/ and tritw/ again, in the organisers' layout (checked below); lightning_ddp/ is a
    # project, not scored data (tests/test_examples_lightning.py runs it)
    not_in_table = {"aij2022", "lightning_ddp", "text_to_image"}  # the last two: projects (tested on their own)
    folders = sorted(p.name for p in (ROOT / "examples").iterdir() if p.is_dir() and p.name not in not_in_table)
    assert sorted(row.split("`")[1].rstrip("/") for row in rows) == folders
    for task, folder in (("textqa", "textqa"), ("mathqa", "mathqa"), ("tritw", "text_recognition")):
        official = ROOT / "examples" / "aij2022" / folder
        assert _ids(official / f"{folder}_gt.json") == [str(i) for i in
                                                        _ids(ROOT / "examples" / task / "references.jsonl")]
        assert sorted(_ids(official / f"{folder}_pred.json")) == sorted(
            str(i) for i in _ids(ROOT / "examples" / task / "predictions.jsonl"))
    for row in rows:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        folder, records, missing = ROOT / "examples" / cells[0].strip("`/"), int(cells[2]), int(cells[3])
        if list(folder.glob("captions_*.json")):  # COCO layout: images of the annotations, results by image_id
            annotations = json.loads(next(folder.glob("captions_*.json")).read_text(encoding="utf-8"))
            refs = [image["id"] for image in annotations["images"]]
            preds = [r["image_id"] for r in json.loads(next(folder.glob("results_*.json")).read_text(encoding="utf-8"))]
        else:
            refs, preds = _ids(next(folder.glob("references.*"))), _ids(next(folder.glob("predictions.*")))
        assert len(refs) == records, folder
        assert len(set(refs) - set(preds)) == missing, folder


def _ids(path: Path) -> list:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [json.loads(line)["id"] for line in text.splitlines() if line.strip()]
    data = json.loads(text)
    return list(data) if isinstance(data, dict) else [record["id"] for record in data]


def test_no_citation_of_a_document_outside_the_repository():
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("gpumetrics", "tests", "benchmarks", "configs", "examples")
        for path in (ROOT / folder).rglob("*")
        if path.is_file() and path.suffix in {".py", ".md", ".yaml"} and "METRICS_SPEC" in path.read_text("utf-8")
        and path.name != "test_docs.py"
    ]
    offenders += [name for name in ("README.md", "BENCHMARKS.md") if "METRICS_SPEC" in (ROOT / name).read_text("utf-8")]
    assert not offenders, f"cite the page of docs/metrics/ instead: {offenders}"


def test_cited_pages_of_docs_metrics_exist():
    """Rules live in one place, docs/metrics/<family>.md; every page the code or the docs cite exists."""
    cited = 0
    for path in [*DOCS, *(ROOT / "gpumetrics").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]:
        for page in re.findall(r"docs/metrics/([a-z_]+)\.md", path.read_text("utf-8")):
            cited += 1
            assert (ROOT / "docs" / "metrics" / f"{page}.md").is_file(), f"{path.relative_to(ROOT)} cites {page}.md"
        assert "docs/metrics.md" not in path.read_text("utf-8") or path.name == "test_docs.py", (
            f"{path.relative_to(ROOT)} cites the old docs/metrics.md"
        )
    assert cited >= 30


def _exported_metric_classes() -> list[type]:
    import gpumetrics.classification as classification

    found = {getattr(module, name) for module in (gpumetrics, classification) for name in module.__all__}
    return sorted((cls for cls in found if isinstance(cls, type) and issubclass(cls, Metric) and cls is not Metric),
                  key=lambda c: c.__name__)


@pytest.mark.parametrize("metric_cls", _exported_metric_classes(), ids=lambda cls: cls.__name__)
def test_every_metric_states_its_better_direction(metric_cls):
    assert metric_cls.higher_is_better in (True, False)


def test_family_packages_export_their_modules():
    import gpumetrics.detection
    import gpumetrics.image
    import gpumetrics.text

    assert gpumetrics.image.FIDInceptionV3 is gpumetrics.FIDInceptionV3
    for package in (gpumetrics.image, gpumetrics.text, gpumetrics.detection):
        for name in package.__all__:
            assert getattr(gpumetrics, name) is getattr(package, name)


def test_every_top_level_metric_is_exported_by_its_family_package():
    """`gpumetrics.X` of a family (text, image, …) is also `gpumetrics.<family>.X`, as the family's docstring lists."""
    import importlib

    for name in gpumetrics.__all__:
        family = getattr(gpumetrics, name).__module__.split(".")[1]
        if family == "core":
            continue
        package = importlib.import_module(f"gpumetrics.{family}")
        assert name in package.__all__ and getattr(package, name) is getattr(gpumetrics, name), (
            f"gpumetrics.{family} does not export {name}")


def _subcommand_parsers() -> dict:
    import argparse

    from gpumetrics.cli.main import build_parser

    parser = build_parser()
    (subparsers,) = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    return dict(subparsers.choices)


def test_every_cli_option_is_in_docs_cli():
    """Every subcommand and each of its options (each spelling: `-m` and `--metric`) appears in docs/cli.md."""
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    missing = [
        f"{command} {option}"
        for command, parser in _subcommand_parsers().items()
        for option in [command, *(o for action in parser._actions for o in action.option_strings)]
        if option not in ("-h", "--help") and not re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text)
    ]
    assert not missing, f"docs/cli.md does not mention: {missing}"


def test_catalog_descriptions_cite_the_page_that_documents_them():
    """`gpumetrics list` names one docs/metrics page per task metric; that page names the metric (its catalog name
    or its class)."""
    from gpumetrics.harness.registry import metrics

    for entry in metrics().values():
        pages = re.findall(r"docs/metrics/([a-z_]+)\.md", entry.description)
        assert len(pages) == 1, f"{entry.name}: cite one docs/metrics page in its description"
        text = (ROOT / "docs" / "metrics" / f"{pages[0]}.md").read_text(encoding="utf-8")
        names = {f"`{entry.name}`", f"metric: {entry.name}", entry.factory.rsplit(":", 1)[-1]}
        assert any(name in text for name in names), f"{entry.name}: docs/metrics/{pages[0]}.md does not name it"


#: top folders of the repository whose files the docs cite by path
_REPO_FOLDERS = ("tests", "gpumetrics", "examples", "configs", "docs", "benchmarks", "testkit", "tools")


def test_repository_paths_the_docs_cite_exist():
    """A path such as `tests/harness/test_scale.py` (or `…::test_name`) in the docs names a file (and a test) that
    exists: tests and modules move."""
    pattern = re.compile(r"(?<![\w./-])((?:%s)/[\w./-]*)(?:::(\w+))?" % "|".join(_REPO_FOLDERS))
    pages = [*DOCS, *sorted((ROOT / "examples").rglob("README.md")), ROOT / "BENCHMARKS.md"]
    checked = 0
    for page in pages:
        for match in pattern.finditer(page.read_text(encoding="utf-8")):
            path, test = ROOT / match.group(1).rstrip("."), match.group(2)
            where = f"{page.relative_to(ROOT)} cites {match.group(0)}"
            assert path.exists(), where
            assert test is None or re.search(rf"def {test}\b", path.read_text(encoding="utf-8")), where
            checked += 1
    for reason in NOT_RUN.values():
        for match in pattern.finditer(reason):
            assert (ROOT / match.group(1)).exists(), f"NOT_RUN cites {match.group(1)}"
    assert checked >= 30


def test_suite_options_a_config_may_set_are_in_docs_suites():
    from gpumetrics.harness.registry import suites

    text = (ROOT / "docs" / "metrics" / "suites.md").read_text(encoding="utf-8")
    missing = [f"{suite.name}/{task.name}: {option}" for suite in suites().values() for task in suite.tasks
               for option in task.user_options if f"`{option}`" not in text and f"`{option}:" not in text]
    assert not missing, f"docs/metrics/suites.md does not name these settable options: {missing}"


def _heading_anchors(text: str) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces → hyphens."""
    text = FENCE.sub("", text)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
            for heading in re.findall(r"^#{1,6} +(.+?)$", text, re.M)}


def test_docs_link_anchors_resolve():
    checked = 0
    for page in [*DOCS, *sorted((ROOT / "examples").rglob("README.md"))]:
        for target, anchor in re.findall(r"\]\(([^)#:\s]*)#([^)\s]+)\)", page.read_text(encoding="utf-8")):
            linked = page.parent / target if target else page
            assert anchor in _heading_anchors(linked.read_text(encoding="utf-8")), (
                f"{page.relative_to(ROOT)} links to {target}#{anchor}: no such heading")
            checked += 1
    assert checked >= 5


def test_public_names_are_documented():
    """Every name a user imports from gpumetrics, gpumetrics.functional or a metric family package appears in the
    README or docs/ (its page says what it matches)."""
    import importlib

    text = "\n".join(page.read_text(encoding="utf-8") for page in DOCS if page.parent.name != "design")
    modules = ["gpumetrics", "gpumetrics.functional", *(f"gpumetrics.{family}" for family in (
        "text", "image", "detection", "retrieval", "classification", "attribution"))]
    missing = [f"{module}.{name}" for module in modules for name in importlib.import_module(module).__all__
               if not re.search(rf"(?<![\w.]){name}\b", text) and not re.search(rf"\.{name}\b", text)]
    assert not missing, f"not in README.md or docs/: {missing}"


def test_documented_choices_of_public_constants():
    """The names a user passes or reads (ranking metric names, CodeBLEU's languages and result keys, the detection
    results' keys) are on the metric's page."""
    from gpumetrics.retrieval.ranking import METRIC_NAMES
    from gpumetrics.text.codebleu import KEYS, LANGUAGES

    from gpumetrics.functional import ocr_end_to_end, zero_shot_detection_f1

    square, box = torch.tensor([[0.0, 0, 1, 0, 1, 1, 0, 1]]), {"cat": torch.tensor([[0.0, 0, 1, 1]])}
    detection_keys = [*ocr_end_to_end([square], [["a"]], [square], [["a"]]), *zero_shot_detection_f1([box], [box])]
    for page, names in (("ranking", METRIC_NAMES), ("codebleu", (*LANGUAGES, *KEYS)), ("detection", detection_keys)):
        text = (ROOT / "docs" / "metrics" / f"{page}.md").read_text(encoding="utf-8")
        missing = [name for name in names if f"`{name}`" not in text]
        assert not missing, f"docs/metrics/{page}.md does not name {missing}"


def test_every_catalog_option_is_documented():
    """Each option a config may give a task metric (`gpumetrics list`) is named on the metric's page, docs/cli.md or
    conventions.md (`reduction`)."""
    from gpumetrics.harness.registry import metrics

    shared = "".join((ROOT / "docs" / page).read_text(encoding="utf-8")
                     for page in ("cli.md", "metrics/conventions.md"))
    missing = []
    for entry in metrics().values():
        (page,) = re.findall(r"docs/metrics/([a-z_]+)\.md", entry.description)
        text = (ROOT / "docs" / "metrics" / f"{page}.md").read_text(encoding="utf-8") + shared
        missing += [f"{entry.name}: {option}" for option in entry.options or {}
                    if not re.search(rf"`{option}\b|\b{option}=|\b{option}:", text)]
    assert not missing, f"options named nowhere in docs/: {missing}"


def test_every_cli_option_has_help_text():
    """`gpumetrics COMMAND --help` says what each option does (and its default where it has one)."""
    import argparse

    bare = [f"{command} {action.option_strings[0] if action.option_strings else action.dest}"
            for command, parser in _subcommand_parsers().items() for action in parser._actions
            if not isinstance(action, argparse._HelpAction) and not (action.help or "").strip()]
    assert not bare, f"options without help text: {bare}"

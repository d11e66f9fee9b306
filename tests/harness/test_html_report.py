"""The HTML report: escaping, truncation, old reports, histogram bars — and the page as headless Chromium renders it
(no console errors, no request leaves the file, a non-blank screenshot, the escaped script never runs)."""

from __future__ import annotations

import copy
import io
import html
import json
import os
import re
import shutil
from pathlib import Path

import pytest

from gpumetrics import cli
from gpumetrics.harness.html import TEXT_LIMIT, histogram_svg, render_html, write_html_report

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "<script>alert(1)</script>"
LONG = "ж" * 5000
UNICODE_TEXTS = ("Москва — столица", "مرحبا بالعالم", "東京タワー 🗼", "naïve \"quoted\" 'text' & more")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def _samples(name="cer", higher_is_better=False, counts=(5, 0, 3, 9, 1)) -> dict:
    bins = len(counts)
    return {
        "name": name,
        "higher_is_better": higher_is_better,
        "histogram": {"edges": [i / bins for i in range(bins + 1)], "counts": list(counts), "below": 0, "above": 2,
                      "nan": 1},
        "worst": [
            {"id": "xss", "score": 1.0, "prediction": SCRIPT, "references": ["a harmless reference"]},
            {"id": "long", "score": 0.97, "prediction": LONG, "references": [LONG[:10]]},
            {"id": "empty", "score": 0.9, "prediction": "", "references": ["", "не пусто"]},
            *({"id": f"u{i}", "score": 0.5 - i / 10, "prediction": text, "references": [text[::-1]]}
              for i, text in enumerate(UNICODE_TEXTS)),
            {"id": "box", "score": 0.1, "prediction": {"boxes": [[1, 2, 3, 4]], "label": "<b>cat</b>"},
             "references": [[{"label": "cat"}]]},
        ],
    }


def _task(name: str, metric: str, score: float, higher_is_better=True, samples=None, details=None) -> dict:
    task = {
        "name": name, "metric": metric, "options": {"preset": "aij2022"}, "score": score,
        "higher_is_better": higher_is_better, "signature": f"{metric}|preset:aij2022|version:0.1.0",
        "counts": {"n": 24, "missing_predictions": 2, "missing_ids": ["7", "9"], "missing_ids_truncated": False,
                   "not_evaluated": 0},
        "details": details or {},
        "files": {"predictions": f"examples/{name}/predictions.jsonl",
                  "references": f"examples/{name}/references.jsonl"},
        "timing": {"load_seconds": 0.001, "eval_seconds": 0.01},
    }
    if samples is not None:
        task["samples"] = samples
    return task


def sample_report(task_count: int = 14) -> dict:
    """A report dict as the runner writes it, with samples on most tasks, a COCO table, a suite and run metadata."""
    coco = {"Bleu_1": 0.88, "Bleu_2": 0.64, "Bleu_3": 0.43, "Bleu_4": 0.2, "METEOR": 0.34, "ROUGE_L": 0.61,
            "CIDEr": 1.44}
    tasks = [
        _task("HTR-CER", "cer", 0.1234, higher_is_better=False, samples=_samples()),
        _task("COCO-captions", "coco_caption", 1.44, details=coco),
        _task("Hidden1", "supplied", 0.5),
    ]
    tasks += [_task(f"Task{i} «ü»", "token_f1", i / task_count, samples=_samples("f1", True, counts=(i, 2 * i, 0, 1)))
              for i in range(len(tasks), task_count)]
    return {
        "gpumetrics_version": "0.1.0", "torch_version": "2.14.1", "config": "configs/<demo>.yaml", "name": "demo & co",
        "device": "cpu", "batch_size": 1024, "started": "2026-01-02T03:04:05+00:00",
        "suite": {"name": "aij2022", "score": 2.6174, "tasks": {t["name"]: t["score"] for t in tasks},
                  "missing_tasks": ["VisualQA"], "hidden_not_supplied": ["Hidden2"]},
        "tasks": tasks,
        "timing": {"total_seconds": 1.5},
        "run": {"world_size": 2, "argv": ["gpumetrics", "evaluate", "configs/demo.yaml", "--html", "a b.html"],
                "host": "node-1", "python": "3.11.2", "platform": "Linux-6.1-x86_64"},
    }


# ---------------------------------------------------------------------------------------------- the page as text


def test_user_text_is_escaped_and_the_page_has_no_script_or_external_reference():
    page = render_html(sample_report())
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script" not in page.lower() and "<b>cat" not in page
    assert "configs/&lt;demo&gt;.yaml" in page and "demo &amp; co" in page
    assert "naïve &quot;quoted&quot; &#x27;text&#x27; &amp; more" in page
    for text in UNICODE_TEXTS[:3]:
        assert text in page
    # nothing is fetched: no links, sources, imports or urls (the SVG namespace is a name, not a fetch)
    without_namespace = page.replace('xmlns="http://www.w3.org/2000/svg"', "")
    for pattern in ("http://", "https://", "src=", "<link", "@import", "url(", "//fonts"):
        assert pattern not in without_namespace, pattern


def test_long_texts_are_cut_with_a_marker_and_empty_ones_marked():
    page = render_html(sample_report())
    assert "ж" * TEXT_LIMIT + '<span class="cut">… [+4700 chars]</span>' in page
    assert "ж" * (TEXT_LIMIT + 1) not in page
    assert '<span class="empty">(empty)</span>' in page
    # compact JSON
    assert "{&quot;boxes&quot;:[[1,2,3,4]],&quot;label&quot;:&quot;&lt;b&gt;cat&lt;/b&gt;&quot;}" in page


def test_header_table_suite_and_sections():
    report = sample_report()
    page = render_html(report)
    for text in ("node-1", "Linux-6.1-x86_64",
                 "<code>gpumetrics evaluate configs/demo.yaml --html &#x27;a b.html&#x27;</code>",
                 "2026-01-02T03:04:05+00:00", "torch", "2.14.1", "combined score <strong>2.6174</strong>",
                 "missing tasks: VisualQA", "hidden tasks not supplied: Hidden2", "0.1234 ↓", "1.4400 ↑",
                 "cer|preset:aij2022|version:0.1.0"):
        assert text in page, text
    # the COCO table keys get one row each under their task, in the registry's order
    keys = re.findall(r'<tr class="key"><td>(\w+)</td>', page)
    assert keys == ["Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "METEOR", "ROUGE_L", "CIDEr"]
    assert page.count('<section class="task"') == len(report["tasks"])
    assert page.count('class="note no-samples"') == 2  # COCO-captions and Hidden1 carry no samples
    assert "Per-sample scores are not available for metric supplied." in page
    assert "not in the bins: 2 above the last edge, 1 NaN" in page


def test_reports_without_new_fields_render():
    old = sample_report(task_count=3)
    del old["run"]
    for task in old["tasks"]:
        task.pop("samples", None)
    page = render_html(old)
    assert "node-1" not in page and "<svg" not in page
    assert page.count("Per-sample scores are not available") == 3
    assert "</html>" in render_html({}) and "</html>" in render_html({"tasks": [{"name": "bare"}], "suite": None})
    with pytest.raises(TypeError, match="`report`"):
        render_html([old])


def test_histogram_has_one_bar_per_bin_scaled_to_the_tallest():
    svg = histogram_svg({"edges": [0, 0.25, 0.5, 0.75, 1.0], "counts": [4, 0, 8, 2]})
    heights = [float(h) for h in re.findall(r'<rect class="bar"[^>]* height="([\d.]+)"', svg)]
    assert len(heights) == 4
    assert heights[2] == max(heights) > 0 and heights[1] == 0
    assert heights[0] == pytest.approx(heights[2] / 2)
    page = render_html(sample_report(task_count=5))
    bins = sum(len(t["samples"]["histogram"]["counts"]) for t in sample_report(task_count=5)["tasks"] if "samples" in t)
    assert page.count('<rect class="bar"') == bins
    for bad in ({"edges": [0, 1], "counts": [1, 2]}, {"edges": [0], "counts": []}, {}):
        with pytest.raises(ValueError, match="`histogram`"):
            histogram_svg(bad)


def test_lone_surrogate_does_not_break_the_write(tmp_path):
    report = sample_report(task_count=1)
    report["tasks"][0]["samples"]["worst"][0]["prediction"] = "bad \ud800 text"
    path = write_html_report(report, tmp_path / "r.html")
    assert "bad ? text" in path.read_text(encoding="utf-8")


def test_write_is_atomic_a_failed_render_leaves_the_previous_page(tmp_path):
    path = tmp_path / "out" / "report.html"
    write_html_report(sample_report(task_count=2), path)
    before = path.read_text(encoding="utf-8")
    with pytest.raises(TypeError):
        write_html_report("not a report", path)  # type: ignore[arg-type]
    assert path.read_text(encoding="utf-8") == before
    assert [p.name for p in path.parent.iterdir()] == ["report.html"]


# ----------------------------------------------------------------------------------------------------- the CLI


def test_evaluate_html_and_report_subcommand(tmp_path, capsys):
    json_path, html_path = tmp_path / "r.json", tmp_path / "r.html"
    code = cli.main(["evaluate", str(ROOT / "configs" / "demo.yaml"), "-o", str(json_path), "--html", str(html_path)])
    out = capsys.readouterr().out
    assert code == 0 and f"HTML report written to {html_path}" in out.replace("\n", "")
    page = html_path.read_text(encoding="utf-8")
    report = json.loads(json_path.read_text(encoding="utf-8"))
    for task in report["tasks"]:
        assert f"<h2>{task['name']}</h2>" in page and task["signature"] in page
        # --html collects the per-sample summaries: every demo task but CIDEr (corpus document frequency) has them
        if task["metric"] == "cider":
            assert "samples" not in task and "Per-sample scores are not available for metric cider" in page
            continue
        samples = task["samples"]
        assert sum(samples["histogram"]["counts"]) + samples["histogram"]["below"] + samples["histogram"]["above"] \
            + samples["histogram"]["nan"] == task["counts"]["n"]
        assert 0 < len(samples["worst"]) <= 10
        assert html.escape(samples["worst"][0]["id"]) in page
    again = tmp_path / "again.html"
    assert cli.main(["report", str(json_path), "--html", str(again)]) == 0
    assert again.read_text(encoding="utf-8") == page  # the page is a function of the JSON report alone


@pytest.mark.parametrize("content, message", [("[1, 2]", "not a gpumetrics JSON report"),
                                              ("<html>", "not a JSON file")])
def test_report_subcommand_rejects_other_files(tmp_path, capsys, content, message):
    path = tmp_path / "x.json"
    path.write_text(content, encoding="utf-8")
    assert cli.main(["report", str(path), "--html", str(tmp_path / "x.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpumetrics report: error: ") and str(path) in err and message in err
    assert not (tmp_path / "x.html").exists()


# ------------------------------------------------------------------------------------------------- in a browser


def _chromium() -> str:
    return shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium (the Debian package) driven by playwright; skipped where absent, unless ``$CI`` is set."""
    reason = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        reason = "the playwright package is not installed (pip install -e '.[test]')"
    if reason is None and not os.access(_chromium(), os.X_OK):
        reason = "no chromium executable (apt-get install chromium; .ci/run installs it)"
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"browser test cannot run in CI: {reason}")
        pytest.skip(reason)
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=_chromium(), headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def _is_blank(png: bytes) -> bool:
    """A screenshot with (almost) one colour: an empty or unrendered page."""
    from PIL import Image, ImageStat

    image = Image.open(io.BytesIO(png)).convert("RGB")
    spread = max(ImageStat.Stat(image).stddev)
    colours = image.getcolors(maxcolors=1 << 16)
    return spread < 8 or (colours is not None and len(colours) < 16)


def _open(browser, path: Path):
    """A page showing ``path``, with the console errors, page errors, dialogs and requests it produced."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    seen = {"console": [], "pageerror": [], "dialog": [], "request": []}
    page.on("console", lambda message: seen["console"].append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: seen["pageerror"].append(str(error)))
    page.on("dialog", lambda dialog: (seen["dialog"].append(dialog.message), dialog.dismiss()))
    page.on("request", lambda request: seen["request"].append(request.url))
    page.goto(path.as_uri(), wait_until="load")
    return page, seen


def test_page_renders_in_chromium(browser, tmp_path):
    report = sample_report()
    path = write_html_report(report, tmp_path / "report.html")
    page, seen = _open(browser, path)
    try:
        assert not seen["pageerror"] and not [m for m in seen["console"] if m.startswith(("error", "warning"))], seen
        assert seen["request"] == [path.as_uri()], "the page fetched something besides itself"
        assert not seen["dialog"] and page.evaluate("document.scripts.length") == 0  # the escaped alert never ran
        text = page.inner_text("body")
        for expected in (SCRIPT, "combined score", "demo & co", "node-1", *UNICODE_TEXTS,
                         "Per-sample scores are not available for metric supplied.",
                         *(t["name"] for t in report["tasks"])):
            assert expected in text, expected
        assert page.locator("svg.histogram rect.bar").count() == sum(
            len(t["samples"]["histogram"]["counts"]) for t in report["tasks"] if "samples" in t)
        tallest = page.locator("svg.histogram").first.locator("rect.bar").nth(3).bounding_box()
        assert tallest is not None and tallest["height"] > 50  # the SVG laid out at its size
        # a 5000-character word wraps inside its cell instead of widening the page
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
        assert not _is_blank(page.screenshot(full_page=False))
    finally:
        page.close()


def test_blank_check_catches_an_empty_page(browser, tmp_path):
    empty = tmp_path / "empty.html"
    empty.write_text("<!DOCTYPE html><title>x</title>", encoding="utf-8")
    page, seen = _open(browser, empty)
    try:
        assert _is_blank(page.screenshot())
    finally:
        page.close()


def test_console_error_is_seen(browser, tmp_path):
    """The listener the page test relies on does report errors (so an empty list there means something)."""
    broken = tmp_path / "broken.html"
    broken.write_text("<!DOCTYPE html><script>undefined_function()</script>", encoding="utf-8")
    page, seen = _open(browser, broken)
    page.close()
    assert seen["pageerror"] and "undefined_function" in seen["pageerror"][0]


def test_old_report_renders_in_chromium(browser, tmp_path):
    old = copy.deepcopy(sample_report(task_count=3))
    del old["run"]
    for task in old["tasks"]:
        task.pop("samples", None)
    page, seen = _open(browser, write_html_report(old, tmp_path / "old.html"))
    try:
        assert not seen["pageerror"] and not [m for m in seen["console"] if m.startswith("error")], seen
        assert page.locator("p.no-samples").count() == 3
        assert not _is_blank(page.screenshot())
    finally:
        page.close()

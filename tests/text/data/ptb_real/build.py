"""Rebuild the PTB real-text corpus and its golden tokens (needs java; run from the repository root):

    PYTHONPATH=$PWD python tests/text/data/ptb_real/build.py

Writes ``real.txt.gz`` (lines of real text from permissively licensed sources on disk, see README.md),
``family.txt.gz`` (template lines for each lexer rule family) and ``*.golden.txt.gz``: for each line, the string
pycocoevalcap's ``PTBTokenizer.tokenize`` returns for it when the whole file is one call (the Java tool's tokens,
lowercased, punctuation removed, joined by spaces).
"""

from __future__ import annotations

import ast
import gzip
import html.entities
import random
import re
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).parent
SITE = Path(sysconfig.get_paths()["purelib"])
# METADATA (the package's README) of packages under permissive licences: name prefix -> licence
METADATA = {
    "yarl": "Apache-2.0", "fonttools": "MIT", "pydantic-": "MIT", "tabulate": "MIT", "charset_normalizer": "MIT",
    "sacrebleu": "Apache-2.0", "razdel": "MIT", "rich-": "MIT", "ftfy": "Apache-2.0", "nltk": "Apache-2.0",
    "typer": "MIT", "jinja2": "BSD-3-Clause", "click": "BSD-3-Clause", "lxml": "BSD-3-Clause",
    "markdown_it_py": "MIT", "defusedxml": "PSF-2.0", "orjson": "Apache-2.0 OR MIT", "wcwidth": "MIT",
    "huggingface_hub": "Apache-2.0", "transformers": "Apache-2.0", "markupsafe": "BSD-3-Clause",
    "rapidfuzz": "MIT", "httpx2": "BSD-3-Clause", "youtokentome": "MIT", "aiohappyeyeballs": "PSF-2.0",
    "lightning-": "Apache-2.0", "torchmetrics": "Apache-2.0", "timm": "Apache-2.0", "open_clip": "MIT",
    "narwhals": "MIT", "ranx": "MIT", "jiwer": "Apache-2.0", "tree_sitter-": "MIT", "pandas": "BSD-3-Clause",
    "numpy": "BSD-3-Clause", "idna": "BSD-3-Clause", "attrs": "MIT", "cramjam": "MIT", "smart_open": "MIT",
}
LICENSES = ["Apache-2.0", "BSD", "MPL-2.0", "CC0-1.0"]  # (not GPL / LGPL / Artistic: verbatim copies only)
# pycocoevalcap writes one caption per line ('\n' replaced by ' '); the Java lexer also ends a line at these
_LINE_BREAKS = re.compile("[\r\x0b\x0c\x85\u2028\u2029]")


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.split("\n") if line.strip() and not _LINE_BREAKS.search(line)]


def real_lines() -> tuple[list[str], list[tuple[str, str, int]]]:
    import pydoc_data.topics

    sources: list[tuple[str, str, list[str]]] = []
    topics = _lines("\n".join(pydoc_data.topics.topics[key] for key in sorted(pydoc_data.topics.topics)))
    sources.append(("Python 3.11 pydoc_data/topics.py", "PSF-2.0", topics))
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    docstrings: list[str] = []
    for path in sorted(stdlib.glob("*.py")) + sorted(stdlib.glob("[ehux]*/*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node, clean=True)
                if doc:
                    docstrings += _lines(doc)
    sources.append((f"Python {sys.version_info[0]}.{sys.version_info[1]} standard library docstrings "
                    "(*.py, email/ html/ http/ urllib/ xml/ ...)", "PSF-2.0", docstrings))
    for prefix, licence in METADATA.items():
        for path in sorted(SITE.glob(f"{prefix}*.dist-info/METADATA")):
            body = path.read_text(encoding="utf-8", errors="strict").split("\n\n", 1)[-1]
            sources.append((f"{path.parent.name}/METADATA", licence, _lines(body)))
    for name in LICENSES:
        path = Path("/usr/share/common-licenses") / name
        if path.exists():
            sources.append((str(path), f"licence text ({name}), verbatim", _lines(path.read_text(encoding="utf-8"))))
    seen: set[str] = set()
    out: list[str] = []
    table = []
    for name, licence, lines in sources:
        count = 0
        for line in lines:
            if line not in seen:
                seen.add(line)
                out.append(line)
                count += 1
        table.append((name, licence, count))
    return out, table


def family_lines() -> list[str]:
    """Lines built from templates, one group per lexer rule family (deterministic)."""
    rng = random.Random(28)
    words = "the dog see a man x The A Cat 5 1,000 http://x.org/a www.x.com".split()
    out: list[str] = []
    # entities: every HTML5 name with ';', numeric decimal / hex, glued to words and numbers
    names = sorted({name.rstrip(";") for name in html.entities.html5})
    for name in names:
        out.append(f"a &{name}; b x&{name};y 5&{name}; &{name}x")
    for number in list(range(0, 300, 7)) + [8211, 8212, 8216, 8217, 8220, 8221, 8230, 9731, 65533, 123456]:
        out.append(f"a &#{number}; b x&#{number};y &#x{number:x}; &#{number} c 5&#{number};5 &#{number};&#39;")
    out += [f"{w}&amp;{v} &AMP;{w} &lt;{v}&gt; &quot;{w}&quot; &apos;{v} &nbsp;{w}" for w in words for v in words[:4]]
    # backslash before every ASCII character and a few others
    for char in [chr(c) for c in range(33, 127)] + list("«»“”‘’–—…€£ſßé猫ж"):
        out.append(f"512 \\{char} 1024 a\\{char}b \\{char}\\{char} x \\{char}{char} \\\\{char} end")
    out += ["a \\* b \\*\\* c \\*\\*\\* d \\*\\*\\*\\* e *\\* f \\** g", "\\/ a\\/b 1\\/2 x\\/y\\/z \\\\/ \\"]
    # URLs and URL-like fragments beside backquotes, quotes, @, commas, brackets
    urls = ["http://", "https://", "http://x", "http://x.org", "http://x.org/a", "https://x.org/a#h", "www.x.com",
            "x.org/ab", "ftp://x.org", "http://@", "http://x.org/?a=b&c=d", "HTTP://X.ORG", "mailto:a@b.com"]
    marks = ["`", "``", "'", "''", '"', ",", "@", "(", ")", "<", ">", "[", "]", "{", "}", ".", "!", "?", "-", "*",
             "’", "”", "#", "/", ";", ":", "|"]
    for url in urls:
        for left in marks:
            out.append(f"see {left}{url}{left} and {url}{left}x, {left}{url} y")
        out.append(f"x `{url}` y ``{url}'' `{url}', z {url}#h', x {url}',x {url}`s")
    # digit groups with / and -
    for _ in range(250):
        parts = [str(rng.randint(0, 10 ** rng.randint(1, 8))).zfill(rng.choice([1, 2, 2, 3, 4])) for _ in range(4)]
        seps = [rng.choice("/-/- .,:") for _ in range(3)]
        out.append("x " + "".join(p + s for p, s in zip(parts, seps + [""])) + " " + rng.choice(words))
    # SGML-like tags with non-ASCII content
    contents = ["《》", "猫", "жук", "é", "ſ", "«x»", "“q”", "a b", "x=《y》", "a='《'", 'b="ж"', "…", "¿"]
    for content in contents:
        out.append(f"x <{content}> <a {content}> <a{content}> </{content}> <!{content}> <?{content}?> <b>{content}</b>")
    # historical letters and apostrophes / quotes before and after them
    letters = "ſ ƿ ȝ þ ð æ œ ꝛ ꝺ ꞇ ı ĸ ŉ ǆ ǈ ǲ ȣ ß ȷ ɂ ʼn ꜵ Ꝥ".split()
    for letter in letters:
        out.append(f"'{letter} ’{letter} x'{letter} {letter}'s {letter}n't '{letter}{letter} d'{letter}{letter} "
                   f"O'{letter}x {letter}.{letter}. `{letter}' «{letter}»")
    # CJK, Cyrillic, Greek, Arabic prose with punctuation
    out += ["我们的猫在窗户上睡觉。「猫」、『犬』（いぬ）！ＡＢＣ１２３", "Кошка сидит на окне, а собака — во дворе.",
            "Ἐν ἀρχῇ ἦν ὁ λόγος. ΣΟΦΟΣ σοφός", "مرحبا بالعالم، كيف حالك؟", "こんにちは、世界！「テスト」です。",
            "Съешь же ещё этих мягких французских булок, да выпей чаю.", "한국어 문장입니다. 《책》 〈장〉"]
    # the families glued together at random (seeded): fragments of every rule family, half of them glued
    fragments = [
        "&#8230;", "&#39;", "&eacute;", "&Uuml;", "&apos;", "&APOS;", "&amp;", "&lt;", "&gt;", "&quot;", "&QUOT;",
        "&mdash;", "&ndash;", "&odq;", "&nbsp;", "&copy;", "&#x27;", "&MD;", "\\*", "\\/", "\\", "\\\\", "`", "``",
        "'", "''", '"', "@", ",", "http://", "https://x.org/a#h", "www.x.com", "x.org/ab", "http://x.org/a",
        "a@b.com", "06/20", "-5918383", "12-25-2003", "1/2", "2 1/2", "555-1234", "<b>", "</b>", "<a href='x'>",
        "<《》>", "《", "》", "ſ", "þ", "æ", "œ", "猫", "жук", "é", "ß", "dog", "The", "a", "5", "1,000", "3.5", "x",
        "Mr.", "U.S.", "'s", "n't", "don't", "o'clock", "(", ")", "[", "]", "{", "}", "-", "--", ".", "!", "?", ";",
        ":", "*", "#", "#tag", "@user", "$", "%", "+", "=", "_", "~", "^", "|", "’", "‘", "“", "”", "«", "»", "…",
        "—", "–", "€", "£", "½", "²", "'90s", ":)", ":d", "^_^", "C++", "AT&T", "&",
    ]
    more = [
        "\\n", '\\"', "\\t", "\\(", "\\.", "\\@", "\\`", "\\&", "`x`", "``x``", "<p>", "<br/>",
        '<a href="http://x.org/a">', "<img src='a.png'/>", "<!-- c -->", "<?xml v?>", "&#160;", "&#x2014;", "&hellip;",
        "&rsquo;", "&lsquo;", "&ldquo;", "&Ouml;", "&ouml;s", "ſ&lsquo;", "K&MD;", "e.g.", "i.e.", "etc.", "No.",
        "Fig.",
        "b.c.", "cannot", "gonna", "3.x", "a.jpg", "foo.py", "(555) 123-4567", "+1 555 123 4567", "1/2/2003",
        "06/20/2003", "5-6", "x86", "10:30", "$5", "US$5", "50%", "a_b", "__init__", "@decorator", "a.b.c", "x-ray",
        "O'Neil", "y'all", "'tis", "'til", "'em", "rock'n'roll", "Ꝛ", "ȝ", "ð", "İ", "ı", "K", "Ǆ", "ǅ", "Ϊ", "ΣΟΦΟΣ",
        "ﬁ", "Ⅻ", "①", "。", "、", "「", "」", "：", "！", "\u3000",
    ]
    for count, pool in ((6000, fragments), (4000, fragments + more)):
        for _ in range(count):
            parts: list[str] = []
            for _ in range(rng.randint(1, 10)):
                piece = rng.choice(pool)
                if parts and rng.random() < 0.5:
                    parts[-1] += piece
                else:
                    parts.append(piece)
            out.append(" ".join(parts))
    return out


def java_strings(lines: list[str]) -> list[str]:
    from pycocoevalcap.tokenizer.ptbtokenizer import PTBTokenizer

    result = PTBTokenizer().tokenize({i: [{"caption": line}] for i, line in enumerate(lines)})
    return [result[i][0] for i in range(len(lines))]


def write(name: str, lines: list[str]) -> None:
    golden = java_strings(lines)
    assert len(golden) == len(lines)
    for suffix, rows in (("txt.gz", lines), ("golden.txt.gz", golden)):
        with gzip.open(HERE / f"{name}.{suffix}", "wt", encoding="utf-8", compresslevel=9) as handle:
            handle.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    real, table = real_lines()
    for name, licence, count in table:
        print(f"| {name} | {licence} | {count} |")
    print("real lines:", len(real))
    family = family_lines()
    print("family lines:", len(family))
    if "--dry" not in sys.argv:
        write("real", real)
        write("family", family)

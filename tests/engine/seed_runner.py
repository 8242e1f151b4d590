"""Runs the seed documents' programs on `engine` with only their imports changed.

Code is executed statement by statement like a notebook or doctest session
(an expression statement prints its repr), and the printed text is compared
with the documented output: text exactly (whitespace folded), numbers to
float32 tolerance.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
from dataclasses import dataclass
from pathlib import Path

# shared/seeds beside the checkout is the reference; the copy in the repo lets any clone run.
SEEDS = Path(__file__).resolve().parents[3] / "shared" / "seeds"
if not (SEEDS / "cell_and_parameter.md").is_file():
    SEEDS = Path(__file__).resolve().parent / "seeds"

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


@dataclass
class Example:
    source: str  # code with imports already changed
    expected: str | None  # documented output, None when the document shows none
    origin: str  # where in the seed it comes from


def change_imports(code: str) -> str:
    """`mindspore` -> `engine` on import lines only, as a user porting the program would."""
    out = []
    for line in code.splitlines():
        stripped = line.strip()
        if stripped.startswith(("import mindspore", "from mindspore")):
            if re.fullmatch(r"\s*import mindspore\s*", line):
                line = line.replace("import mindspore", "import engine as mindspore")
            else:
                line = line.replace("mindspore", "engine")
        out.append(line)
    return "\n".join(out)


def markdown_examples(path: Path) -> list[Example]:
    """Each ```python block with the ```text block that follows it (if any)."""
    text = path.read_text(encoding="utf-8")
    blocks = re.findall(r"```(\w+)\n(.*?)```", text, flags=re.S)
    examples = []
    for i, (lang, body) in enumerate(blocks):
        if lang != "python":
            continue
        expected = None
        if i + 1 < len(blocks) and blocks[i + 1][0] == "text":
            expected = blocks[i + 1][1]
        examples.append(Example(change_imports(body), expected, f"{path.name} block {i}"))
    return examples


def doctest_examples(path: Path) -> list[Example]:
    """`>>>` sessions in an API page: each statement with the output printed after it."""
    lines = path.read_text(encoding="utf-8").splitlines()
    examples: list[Example] = []
    code: list[str] = []
    output: list[str] = []

    def flush():
        if code:
            examples.append(
                Example(change_imports("\n".join(code)), "\n".join(output), f"{path.name}")
            )

    in_session = False
    for line in lines:
        if line.startswith(">>> "):
            if output or (code and not line.startswith("...")):
                flush()
                code, output = [], []
            in_session = True
            code.append(line[4:])
        elif line.startswith("...") and in_session:
            code.append(line[4:])
        elif in_session and line.strip():
            output.append(line)
    flush()
    return examples


def run(example: Example, namespace: dict) -> str:
    """Execute like a notebook cell (only a final expression shows its repr); return the output.

    A doctest example is a single statement, so it echoes as in a `>>>` session.
    """
    tree = ast.parse(example.source)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        body = tree.body
        if body and isinstance(body[-1], ast.Expr):
            exec(compile(ast.Module(body=body[:-1], type_ignores=[]), example.origin, "exec"),
                 namespace)
            last = ast.Interactive(body=[body[-1]])
            exec(compile(last, example.origin, "single"), namespace)
        else:
            exec(compile(tree, example.origin, "exec"), namespace)
    return buf.getvalue()


def split_numbers(text: str) -> tuple[list[str], list[float]]:
    words = []
    numbers = []
    pos = 0
    for m in _NUMBER.finditer(text):
        words.append(text[pos : m.start()])
        numbers.append(float(m.group()))
        pos = m.end()
    words.append(text[pos:])
    return ["".join(w.split()) for w in words], numbers


def compare(actual: str, expected: str, *, random_numbers: bool = False) -> str | None:
    """None when they agree; otherwise a readable reason."""
    aw, an = split_numbers(actual)
    ew, en = split_numbers(expected)
    if aw != ew:
        return f"text differs:\n--- documented\n{expected}\n--- printed\n{actual}"
    if len(an) != len(en):
        return f"number count differs:\n--- documented\n{expected}\n--- printed\n{actual}"
    if random_numbers:
        return None
    for a, e in zip(an, en, strict=True):
        if abs(a - e) > 1e-6 + 1e-5 * abs(e):
            return f"{a} != {e}:\n--- documented\n{expected}\n--- printed\n{actual}"
    return None

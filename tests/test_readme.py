"""The README's engine example runs as printed."""

from __future__ import annotations

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def test_readme_engine_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    assert blocks, "the README shows an engine example"
    namespace: dict = {"__name__": "__readme__"}
    exec(compile(blocks[0], "README.md", "exec"), namespace)
    assert capsys.readouterr().out.strip() == "(32, 16)"  # the forward hook fired once
    assert len(namespace["grads"]) == 4
    assert not namespace["net"][1]._hooked  # handle.remove() detached it


def test_readme_quick_start_is_two_commands():
    text = README.read_text(encoding="utf-8")
    quick = text.split("## Quick start", 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
    commands = [line for line in quick.splitlines() if line.strip()]
    assert len(commands) == 2
    assert "cellwright resources/examples/spiral_mlp.cwproj" in commands[0]
    assert commands[1] == "scripts/test.sh"
    assert (README.parent / "resources/examples/spiral_mlp.cwproj").is_file()

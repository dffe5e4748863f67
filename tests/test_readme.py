"""The README's examples run, and CI runs the README's test command."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def code_blocks(language: str) -> list[str]:
    """The fenced blocks of the README whose fence names ``language`` ("" for none)."""
    blocks, current, inside = [], [], None
    for line in README.splitlines():
        fence = re.fullmatch(r"```(\w*)", line.strip())
        if fence and inside is None:
            inside, current = fence.group(1), []
        elif fence:
            if inside == language:
                blocks.append("\n".join(current) + "\n")
            inside = None
        elif inside is not None:
            current.append(line)
    return blocks


def test_ci_runs_the_readme_test_command():
    commands = code_blocks("bash")
    test_command = next(c.strip() for c in commands if "pytest" in c)
    assert test_command in (ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize("block", code_blocks("python"), ids=lambda b: b.splitlines()[-1][:40])
def test_python_examples_run(block):
    result = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr


def test_command_line_examples_run():
    blocks = [b for b in code_blocks("") if b.lstrip().startswith("spieltisch")]
    assert blocks
    for line in "".join(blocks).strip().splitlines():
        command = line.split("#")[0].split()
        command = [sys.executable, "-m", "spieltisch.train.cli", *command[1:]]
        result = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert result.returncode == 0, (line, result.stderr)

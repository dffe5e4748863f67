"""The README's and the docs' examples run, and CI runs the README's test command.

Which code blocks run:

* README.md: every ``python`` block, and every unlabelled block whose lines are ``spieltisch``
  commands (the README is a newcomer's path: all of it must work).
* docs/*.md: the blocks right after a ``<!-- runnable -->`` line (the docs also show long
  commands, such as whole training runs, that are not meant to run in the tests).

A ``python`` block runs as a script; a command block runs each line (comments after ``#`` are
dropped) as ``python -m spieltisch.train.cli ...``.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
DOCS = sorted((ROOT / "docs").glob("*.md"))
RUNNABLE = "<!-- runnable -->"


def code_blocks(language: str, text: str = README, marked_only: bool = False) -> list[str]:
    """The fenced blocks of ``text`` whose fence names ``language`` ("" for none); with
    ``marked_only``, only those right after a ``<!-- runnable -->`` line."""
    blocks, current, inside, marked, previous = [], [], None, False, ""
    for line in text.splitlines():
        fence = re.fullmatch(r"```(\w*)", line.strip())
        if fence and inside is None:
            inside, current, marked = fence.group(1), [], previous.strip() == RUNNABLE
        elif fence:
            if inside == language and (marked or not marked_only):
                blocks.append("\n".join(current) + "\n")
            inside = None
        elif inside is not None:
            current.append(line)
        previous = line
    return blocks


def _doc_blocks(language: str) -> list[tuple[str, str]]:
    return [
        (path.name, block)
        for path in DOCS
        for block in code_blocks(language, path.read_text(), marked_only=True)
    ]


def _run_python(block: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", block], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert result.returncode == 0, result.stderr


def _run_commands(blocks: list[str]) -> None:
    for line in "".join(blocks).strip().splitlines():
        command = line.split("#")[0].split()
        assert command[0] == "spieltisch", line
        command = [sys.executable, "-m", "spieltisch.train.cli", *command[1:]]
        result = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=ROOT)
        assert result.returncode == 0, (line, result.stderr)


def test_ci_runs_the_readme_test_command():
    commands = code_blocks("bash")
    test_command = next(c.strip() for c in commands if "pytest" in c)
    assert test_command in (ROOT / ".ci" / "run").read_text()


@pytest.mark.parametrize("block", code_blocks("python"), ids=lambda b: b.splitlines()[-1][:40])
def test_python_examples_run(block):
    _run_python(block)


def test_command_line_examples_run():
    blocks = [b for b in code_blocks("") if b.lstrip().startswith("spieltisch")]
    assert blocks
    _run_commands(blocks)


@pytest.mark.parametrize(
    "where,block", _doc_blocks("python"), ids=lambda x: x if x.endswith(".md") else ""
)
def test_docs_python_examples_run(where, block):
    _run_python(block)


@pytest.mark.parametrize(
    "where,block", _doc_blocks(""), ids=lambda x: x if x.endswith(".md") else ""
)
def test_docs_command_line_examples_run(where, block):
    _run_commands([block])


def test_runnable_markers_are_followed_by_a_block():
    for path in DOCS:
        lines = path.read_text().splitlines()
        for i, line in enumerate(lines):
            if line.strip() == RUNNABLE:
                assert i + 1 < len(lines) and lines[i + 1].startswith("```"), (path.name, i + 1)

"""The documentation is consistent with the code: generated tables are current, the command
line's help works for every command and the docs mention every command and option."""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import re
from pathlib import Path

import pytest
from spieltisch.train.cli import build_parser

ROOT = Path(__file__).resolve().parent.parent


def _make_tables():
    spec = importlib.util.spec_from_file_location("make_tables", ROOT / "docs" / "make_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def test_generated_tables_are_current():
    stale = _make_tables().stale_regions()
    assert not stale, f"{stale}: run python docs/make_tables.py"


def test_every_table_region_is_known_and_closed():
    tables = _make_tables()
    for rel in tables.DOC_FILES:
        path = ROOT / rel
        if not path.exists():
            continue
        text = path.read_text()
        opened = re.findall(r"<!-- table:([\w-]+) -->", text)
        closed = re.findall(r"<!-- /table:([\w-]+) -->", text)
        assert sorted(opened) == sorted(closed), rel
        assert set(opened) <= set(tables.TABLES), rel


def test_tables_never_invent_results(tmp_path, monkeypatch):
    """Without any recorded results every table says that nothing is recorded."""
    tables = _make_tables()
    monkeypatch.setattr(tables, "RESULTS", tmp_path)
    monkeypatch.setattr(tables, "PRETRAINED", tmp_path)
    for name, make in tables.TABLES.items():
        if name == "envs":  # read from the envs themselves
            continue
        text = make("")
        assert not re.search(r"\d\.\d", text), (name, text)


def _help(argv: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exit_info:
        build_parser().parse_args(argv)
    assert exit_info.value.code == 0
    return out.getvalue()


def test_main_help_lists_every_command():
    text = _help(["--help"])
    for name in _subparsers():
        assert name in text


@pytest.mark.parametrize("command", sorted(_subparsers()))
def test_command_help(command):
    text = _help([command, "--help"])
    assert f"spieltisch {command}" in text
    assert "%%" not in text  # an escaped percent sign where argparse does not format
    for action in _subparsers()[command]._actions:
        if action.option_strings and action.dest != "help":
            assert action.help, f"spieltisch {command} {action.option_strings}: no help text"


@pytest.mark.parametrize("command", sorted(_subparsers()))
def test_docs_mention_every_command_and_option(command):
    api = (ROOT / "docs" / "api.md").read_text()
    readme = (ROOT / "README.md").read_text()
    assert f"spieltisch {command}" in readme
    assert f"spieltisch {command}" in api
    for action in _subparsers()[command]._actions:
        if action.option_strings and action.dest != "help":
            mentioned = [o for o in action.option_strings if f"`{o}" in api or f"{o} " in api]
            assert mentioned, (command, action.option_strings)


def test_unknown_names_list_the_valid_ones(capsys):
    from spieltisch.train.cli import main

    assert main(["play", "kalaha", "--agents", "nobody", "random"]) == 2
    err = capsys.readouterr().err
    assert "alphabeta" in err and "pretrained:" in err and "checkpoint:" in err
    with pytest.raises(SystemExit):
        main(["play", "chess"])
    assert "kalaha" in capsys.readouterr().err
    assert main(["eval", "kalaha", "--agents", "nobody", "random", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "alphabeta" in err and "%" not in err  # named before any game (and progress bar)
    assert main(["play", "kalaha", "-o", "pitz=4"]) == 2
    assert "pits" in capsys.readouterr().err


def test_a_missing_config_lists_the_shipped_ones(capsys, monkeypatch):
    from spieltisch.train.cli import main

    monkeypatch.chdir(ROOT)
    assert main(["train", "configs/no_such_config.yaml"]) == 2
    assert "configs/kalaha_ppo.yaml" in capsys.readouterr().err

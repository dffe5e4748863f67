"""``spieltisch play`` with a person (``human``), driven by scripted stdin."""

from __future__ import annotations

import io

import pytest
from spieltisch.train.cli import main


@pytest.mark.parametrize(
    ("game", "options"),
    [("kalaha", ["-o", "pits=3", "-o", "seeds=2"]), ("hus", []), ("hilo", []), ("backgammon", [])],
)
def test_human_plays_with_bad_input_reasked(
    game: str, options: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    # Bad input first, then always the first listed move; the game must finish or the input
    # run out (then the game is abandoned cleanly, exit 0).
    script = "hello\n0\n999\n" + "1\n" * 400
    monkeypatch.setattr("sys.stdin", io.StringIO(script))
    assert main(["play", game, "--agents", "human", "random", *options]) == 0
    out = capsys.readouterr().out
    assert "not a legal move: 'hello'" in out
    assert "not a legal move: '0'" in out
    assert "not a legal move: '999'" in out
    assert "Your move:" in out
    assert "game 1 over" in out or "game abandoned" in out


def test_agents_demo_still_prints_boards(capsys: pytest.CaptureFixture) -> None:
    assert main(["play", "kalaha", "--agents", "random", "random"]) == 0
    out = capsys.readouterr().out
    assert "stores:" in out and "game 1 over" in out

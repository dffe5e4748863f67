"""Backgammon as a user sees it outside training: ``spieltisch rollout``'s limits and game
records that re-import to the same game."""

from __future__ import annotations

import pytest
from spieltisch.agents.backgammon.rollout import GAMES_LIMIT, rollout
from spieltisch.envs import make
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.engine import BackgammonState
from spieltisch.envs.backgammon.records import (
    GameRecord,
    RecordFormatError,
    parse_mat,
    parse_sgf,
    record_from_env_moves,
)
from spieltisch.train.cli import main

RACE = "27aVAABt21oAAA 0 roll"


def test_rollout_refuses_a_huge_games_count(capsys):
    # The per-game arrays were allocated up front: numpy's MemoryError, a traceback, exit 1.
    with pytest.raises(ValueError, match="games must be below"):
        rollout(RACE, games=10**12)
    with pytest.raises(ValueError, match="games must be below"):
        rollout(RACE, games=GAMES_LIMIT)
    argv = ["rollout", "backgammon", "--position", RACE, "--no-progress"]
    assert main([*argv, "--games", str(10**12)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("spieltisch rollout: --games must be below 10**7")


def _doubling_game(max_cube: int) -> tuple[GameRecord, BackgammonState]:
    """A game in which every double that may be offered is offered and taken (the cube reaches
    ``max_cube``), the checkers played by the first legal action."""
    options = {"cube": True, "max_cube": max_cube}
    env = make("backgammon", **options)
    env.reset(seed=3)
    raw = env.unwrapped
    moves = []
    while not raw.state.is_terminal():
        legal = raw.state.legal_actions()
        action = k.DOUBLE if k.DOUBLE in legal else k.TAKE if k.TAKE in legal else int(legal[0])
        moves.append({"seat": raw.state.current_player, "action": int(action)})
        env.step(action)
    assert raw.state.cube()[0] == max_cube
    return record_from_env_moves(options, 3, None, moves), raw.state


@pytest.mark.parametrize("max_cube", [4, 128])
def test_sgf_keeps_the_cube_limit(max_cube):
    # SGF did not write the cube limit: read back with 64, a game whose cube passed 64 did not
    # replay ("cannot double now") and one with a lower limit replayed with other actions.
    record, final = _doubling_game(max_cube)
    expected = record.replay()
    for again in (parse_mat(record.to_mat())[0], parse_sgf(record.to_sgf())[0]):
        assert again.max_cube == max_cube
        state, actions = again.replay()
        assert state.to_text() == final.to_text() and actions == expected[1]


def test_sgf_of_a_match_is_refused():
    # parse_mat refuses a match (the engine plays money games); parse_sgf took one silently.
    money = "(;FF[4]GM[6]MI[length:0][game:0][ws:0][bs:0]RU[NoCube];W[31hefe])"
    assert parse_sgf(money)[0].replay()[0].to_text() == "sGfwATDgc/ABMA 1 roll"
    with pytest.raises(RecordFormatError, match="a 7 point match"):
        parse_sgf(money.replace("length:0", "length:7"))
    with pytest.raises(RecordFormatError, match="a 7 point match"):
        parse_mat(" 7 point match\n\n Game 1\n a : 0     b : 0\n  1) 31: 8/5 6/5\n")

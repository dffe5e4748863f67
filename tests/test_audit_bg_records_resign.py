"""Backgammon records of games that end early (resignation, forfeit) as GNU Backgammon writes
them, bad records refused naming the line, round trips of random games, and the rollout of a
position already over (nothing played, nothing batched)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from spieltisch.agents.backgammon.rollout import rollout
from spieltisch.agents.base import Agent
from spieltisch.envs import make
from spieltisch.envs.backgammon import BackgammonGame
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.records import (
    RecordFormatError,
    mat_from_env_moves,
    parse_mat,
    parse_sgf,
    record_from_env_moves,
)
from spieltisch.train.cli import main
from spieltisch.train.web.sessions import GameSession, ServerSettings

OVER = "4P8PAAAAAAAAAA 0 over"  # seat 0 has borne off all 15, seat 1 none: a gammon


def _session(agents, seed, cube=False):
    request = {"game": "backgammon", "agents": agents, "seed": seed, "options": {"cube": cube}}
    return GameSession.create(request, ServerSettings(move_time_limit=None))


def _person_turn(session, rng, choose=None):
    """A random legal turn (or ``choose(legal)``'s action at a cube decision) for the person
    to move, sent whole as the page sends it."""
    seat = session.current_seat()
    state = session.raw.state.clone()
    actions = []
    while not state.is_terminal() and state.current_player == seat and not state.is_chance_node():
        legal = [int(a) for a in state.legal_actions()]
        action = choose(legal) if choose and state.phase != k.PH_MOVE else None
        action = int(rng.choice(legal)) if action is None else action
        actions.append(action)
        state.apply(action)
    session.human_turn(actions)


def _body(text):
    return text.split(" Game 1\n")[1].rstrip("\n").splitlines()


# --- problem 1: a game that ends early -------------------------------------------------------
def test_a_resigned_web_game_ends_with_the_winners_wins_line():
    session = _session(["random", "human"], seed=3)
    rng = np.random.default_rng(0)
    while len(session.moves) < 12:
        if session.agent_specs[session.current_seat()] == "human":
            _person_turn(session, rng)
        else:
            session.agent_turn()
    session.resign(1)
    assert session.status == "resigned" and session.result == [1.0, -1.0]
    text = session.mat_record()
    last = _body(text)[-1]
    assert last == "      Wins 1 point", last  # seat 0's column, as gnubg writes it
    [record] = parse_mat(text)
    assert (record.winner, record.points) == (0, 1)
    state, _ = record.replay()  # the position resigned: whole turns only, so the board is the env's
    assert not state.is_terminal()
    assert state.board.tolist() == session.raw.state.board.tolist()


def test_a_resigned_doubled_game_wins_the_cube_and_says_so_in_sgf_too():
    session = _session(["human", "human"], seed=8, cube=True)
    rng = np.random.default_rng(1)
    doubled = False

    def choose(legal):
        nonlocal doubled
        if k.DOUBLE in legal and not doubled:
            doubled = True
            return k.DOUBLE
        return k.TAKE if k.TAKE in legal else (k.ROLL if k.ROLL in legal else None)

    while session.raw.state.cube()[0] == 1 or len(session.moves) < 10:
        _person_turn(session, rng, choose)
        assert session.status == "playing"
    seat = session.current_seat()
    session.resign(seat)
    assert session.result[1 - seat] == 2.0  # the cube's value
    text = session.mat_record()
    assert _body(text)[-1].strip() == "Wins 2 points" and "Doubles => 2" in text
    [record] = parse_mat(text)
    assert (record.winner, record.points) == (1 - seat, 2)
    mat_state, _ = record.replay()
    again = record_from_env_moves({"cube": True}, 8, None, session.moves, resigned=seat)
    sgf = again.to_sgf()
    assert f"RE[{'WB'[1 - seat]}+2R]" in sgf
    [from_sgf] = parse_sgf(sgf)
    assert from_sgf.entries[-1].resigned and (from_sgf.winner, from_sgf.points) == (1 - seat, 2)
    assert from_sgf.replay()[0] == mat_state


class _Failing(Agent):
    name = "failing"

    def act(self, observation, state=None):
        raise RuntimeError("out of ideas")


def test_a_forfeited_web_game_ends_with_the_winners_wins_line():
    session = _session(["random", "random"], seed=5)
    while len(session.moves) < 8:
        session.agent_turn()
    loser = session.current_seat()
    session.agents[loser] = _Failing()
    session.agent_turn()
    assert session.status == "forfeit"
    [record] = parse_mat(session.mat_record())
    assert (record.winner, record.points) == (1 - loser, 1)
    assert not record.replay()[0].is_terminal()


# --- round trips of random games -------------------------------------------------------------
def _random_game(seed, cube, stop=None):
    """A game of random agents in the env (the moves as the web server keeps them)."""
    env = make("backgammon", cube=cube)
    env.reset(seed=seed)
    raw = env.unwrapped
    rng = np.random.default_rng(seed)
    moves = []
    while not raw.state.is_terminal() and (stop is None or len(moves) < stop):
        action = int(rng.choice(raw.state.legal_actions()))
        moves.append({"seat": int(raw.state.current_player), "action": action})
        env.step(action)
    return moves, raw


def _turns(game, actions, record):
    """Each turn of ``actions`` played with the record's dice: (its cube actions, the position
    after it). A record holds a play as its steps, and a replay takes the first legal play
    to the same position: its actions can differ from the env's (11/6 12/7 for 12/6 11/7)."""
    rolls = iter(
        (e.dice if n or e.seat == 0 else e.dice[::-1])
        for n, e in enumerate(e for e in record.entries if e.kind == "move")
    )
    state = game.new_initial_state()
    turns, current = [], []
    for action in actions:
        if state.is_chance_node():
            roll = next(rolls, None)
            if roll is None:  # a turn the record left out (resigned while being played)
                break
            state.set_dice(*roll)
        before = state.num_turns()
        state.apply(action)
        current.append(action)
        if state.num_turns() != before or state.is_terminal() or state.phase != k.PH_MOVE:
            turns.append(([a for a in current if a >= k.ROLL], state.to_text()))
            current = []
    return turns


@pytest.mark.parametrize("cube", [False, True])
def test_random_games_finished_or_resigned_round_trip(cube):
    game = BackgammonGame(cube=cube)
    for seed in range(24):
        stop = None if seed % 2 else 10 + 3 * seed  # every other game resigned
        moves, raw = _random_game(seed, cube, stop)
        over = raw.state.is_terminal()
        resigned = None if over else seed % 2
        text = mat_from_env_moves({"cube": cube}, seed, None, moves, resigned=resigned)
        [record] = parse_mat(text)
        state, actions = record.replay()
        if over:
            assert (record.winner, record.points) == (raw.state.winner(), raw.state.points())
            assert state.to_text() == raw.state.to_text()
        else:
            assert (record.winner, record.points) == (1 - resigned, raw.forfeit_stake())
            assert not state.is_terminal()
        env_actions = [m["action"] for m in moves]
        played = _turns(game, actions, record)
        assert played == _turns(game, env_actions, record)[: len(played)]
        [from_sgf] = parse_sgf(record_from_env_moves({"cube": cube}, seed, None, moves,
                                                     resigned=resigned).to_sgf())  # fmt: skip
        assert from_sgf.entries[-1].resigned is (not over)
        assert (from_sgf.winner, from_sgf.points) == (record.winner, record.points)
        assert from_sgf.replay()[0] == state


def test_a_finished_game_cannot_be_resigned():
    moves, raw = _random_game(1, False)
    assert raw.state.is_terminal()
    with pytest.raises(ValueError, match=r"the game is over.*cannot resign"):
        mat_from_env_moves({}, 1, None, moves, resigned=0)


# --- bad records -----------------------------------------------------------------------------
def _finished_text():
    moves, _ = _random_game(1, False)
    return mat_from_env_moves({}, 1, None, moves)


def test_an_illegal_move_names_its_line():
    lines = _finished_text().splitlines()
    n = next(i for i, line in enumerate(lines) if line.startswith("  2) "))
    second = re.search(r"\s(\d\d:)", lines[n][8:]).start(1) + 8  # seat 1's column
    lines[n] = f"{'  2) 65: 14/8 14/9':<{second}}{lines[n][second:]}"  # nobody on 14
    [record] = parse_mat("\n".join(lines))
    with pytest.raises(RecordFormatError, match=rf"^line {n + 1}: entry \d+ .*14"):
        record.replay()


def test_a_wins_line_contradicting_the_moves_is_refused_naming_its_line():
    lines = _finished_text().splitlines()
    n = next(i for i, line in enumerate(lines) if "Wins" in line)
    for wrong in ("Wins 2 points", " " * 28 + "Wins 1 point"):  # the points, the seat
        bad = [*lines[:n], "     " + wrong, *lines[n + 1 :]]
        with pytest.raises(RecordFormatError, match=rf"^line {n + 1}: .*the game ended with"):
            parse_mat("\n".join(bad))[0].replay()
    twice = [*lines[: n + 1], lines[n], *lines[n + 1 :]]  # read as a second result: accepted
    with pytest.raises(RecordFormatError, match=rf"^line {n + 2}: .*result was given already"):
        parse_mat("\n".join(twice))[0].replay()
    head = "\n".join(lines[: lines.index(" Game 1") + 3])  # one move, then a resignation
    for points in (1, 2, 3):
        [record] = parse_mat(f"{head}\n      Wins {points} point{'s' * (points > 1)}\n")
        assert (record.winner, record.points) == (0, points)
        assert not record.replay()[0].is_terminal()
    with pytest.raises(RecordFormatError, match="1, 2 or 3 times the cube"):
        parse_mat(f"{head}\n      Wins 4 points\n")[0].replay()
    with pytest.raises(RecordFormatError, match="result was given already"):
        parse_mat(f"{head}\n      Wins 1 point\n{lines[lines.index(' Game 1') + 3]}\n")[0].replay()


def test_a_sgf_resignation_of_a_finished_game_is_refused():
    moves, _ = _random_game(1, False)
    sgf = record_from_env_moves({}, 1, None, moves).to_sgf()
    bad = sgf.replace("+1]", "+1R]").replace("+2]", "+2R]").replace("+3]", "+3R]")
    assert bad != sgf
    with pytest.raises(RecordFormatError, match="a resignation, but the game ended"):
        parse_sgf(bad)[0].replay()


def test_truncated_and_mis_encoded_records():
    text = _finished_text()
    lines = text.splitlines()
    n = next(i for i, line in enumerate(lines) if line.startswith("  3) "))
    cut = "\n".join([*lines[:n], lines[n][: lines[n].index("/") + 1]])  # "  3) 43: 13/"
    with pytest.raises(RecordFormatError, match=rf"^line {n + 1}: cannot read"):
        parse_mat(cut)
    with pytest.raises(RecordFormatError, match="is text, got bytes"):
        parse_mat(text.encode())
    # a byte order mark (eXtreme Gammon writes one) hid the first tag: a game without the cube
    # was read as one with it
    limit = '; [CubeLimit "1"]\n'
    [record] = parse_mat("\ufeff" + limit + text.replace(limit, ""))
    assert record.cube is False
    assert parse_mat(text.replace("\n", "\r\n")) == parse_mat(text)


# --- problem 2: the rollout of a finished position -------------------------------------------
def test_a_rollout_of_a_finished_position_plays_and_batches_nothing(capsys):
    result = rollout(OVER, games=10, seed=0)
    assert (result.played, result.batched, result.duplicate, result.stratified) == (
        False, False, False, False,
    )  # fmt: skip
    assert result.games == 10 and result.equity.mean == 2 and result.equity.se == 0
    table = result.to_table()
    assert "none played: the game is over" in table
    assert "batched" not in table and "duplicate" not in table and "rounded up" not in table
    argv = ["rollout", "backgammon", "--position", OVER, "--games", "10", "--json"]
    assert main([*argv, "--no-progress"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["batched"] is False and data["played"] is False and data["duplicate"] is False

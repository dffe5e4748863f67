"""Backgammon game records (``.mat``, SGF) and GNU Backgammon match IDs.

* Match IDs against the example of the GNU Backgammon manual, section 11.7 "A technical
  description of the Match ID" (score 2-4 in a 9 point match, player 0 holding a 2-cube,
  player 1 has rolled 52: match key bytes 41 89 2A 01 20 00 20 00 00, ID ``QYkqASAAIAAA``), and
  ``cAkAAAAAAAAA`` (money game, player 1 to roll, cube centred: the ID gnubg shows for a new
  money session, e.g. ``4HPwATDgc/ABMA:cAkAAAAAAAAA``).
* Records: 60 random games without and 60 with the cube, played in the env, written with
  :func:`mat_from_env_moves` (the env replayed with the seed for the dice), read back with
  :func:`parse_mat` and replayed on the engine to the same final position; the same for SGF.
* ``tests/data/backgammon_sample.mat``, written by hand from the format's descriptions, is read
  and replayed.
"""

from __future__ import annotations

import base64
import contextlib
from pathlib import Path

import numpy as np
import pytest
from spieltisch.envs import make
from spieltisch.envs._common.errors import PositionFormatError
from spieltisch.envs.backgammon import BackgammonGame
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.notation import (
    START_POSITION_ID,
    fields_to_match_id,
    match_id_to_fields,
)
from spieltisch.envs.backgammon.records import (
    Entry,
    GameRecord,
    RecordFormatError,
    game_to_mat,
    mat_from_env_moves,
    parse_mat,
    parse_sgf,
    record_from_actions,
    record_from_env_moves,
    records_to_mat,
)

DATA_DIR = Path(__file__).resolve().parent / "data"
MANUAL_EXAMPLE = "QYkqASAAIAAA"
MONEY_START = "cAkAAAAAAAAA"


# --- match IDs ----------------------------------------------------------------------------------
def test_match_id_of_the_manual_example():
    fields = match_id_to_fields(MANUAL_EXAMPLE)
    assert fields == {
        "cube": 2,
        "cube_owner": 0,
        "on_roll": 1,
        "crawford": False,
        "game_state": "playing",
        "turn": 1,
        "double_offered": False,
        "resign": 0,
        "dice": (5, 2),
        "match_length": 9,
        "score": (2, 4),
    }
    assert base64.b64decode(MANUAL_EXAMPLE) == bytes.fromhex("41892a012000200000")
    assert fields_to_match_id(**fields) == MANUAL_EXAMPLE
    assert (
        fields_to_match_id(
            cube=2, cube_owner=0, on_roll=1, dice=(5, 2), match_length=9, score=(2, 4)
        )
        == MANUAL_EXAMPLE
    )


def test_match_id_of_a_new_money_game():
    fields = match_id_to_fields(MONEY_START)
    assert fields["cube"] == 1 and fields["cube_owner"] is None
    assert fields["on_roll"] == fields["turn"] == 1 and fields["dice"] is None
    assert fields["game_state"] == "playing" and fields["match_length"] == 0
    assert fields_to_match_id(cube=1, on_roll=1) == MONEY_START


def test_match_id_fields_round_trip():
    rng = np.random.default_rng(5)
    for _ in range(500):
        dice = None if rng.random() < 0.3 else tuple(int(d) for d in rng.integers(1, 7, 2))
        fields = {
            "cube": int(2 ** rng.integers(0, 16)),
            "cube_owner": [None, 0, 1][rng.integers(3)],
            "on_roll": int(rng.integers(2)),
            "crawford": bool(rng.integers(2)),
            "game_state": ["none", "playing", "over", "resigned", "dropped"][rng.integers(5)],
            "turn": int(rng.integers(2)),
            "double_offered": bool(rng.integers(2)),
            "resign": int(rng.integers(4)),
            "dice": dice,
            "match_length": int(rng.integers(0, 2**15)),
            "score": (int(rng.integers(0, 2**15)), int(rng.integers(0, 2**15))),
        }
        mid = fields_to_match_id(**fields)
        assert len(mid) == 12 and match_id_to_fields(mid) == fields


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "cAkAAAAAAAA",  # 11 characters
        "cAkAAAAAAAAAA",
        "cAkAAAAAAAA!",
        12,
        "$owner=2",
        "$state=5",
        "$state=7",
        "$die1=7",
        "$die1=3",  # one die only
    ],
)
def test_bad_match_ids_are_refused(bad):
    if isinstance(bad, str) and bad.startswith("$"):
        name, value = bad[1:].split("=")
        bad = _raw_match_id(**{name: int(value)})
    with pytest.raises(PositionFormatError):
        match_id_to_fields(bad)


def _raw_match_id(owner=3, state=1, die1=0, die2=0):
    """A match ID with raw field codes, the bits placed as the manual numbers them (1-based:
    cube owner bits 5-6, game state 9-11, dice 16-18 and 19-21)."""
    key = (owner << 4) | (state << 8) | (die1 << 15) | (die2 << 18)
    return base64.b64encode(key.to_bytes(9, "little")).decode()


def test_fields_to_match_id_checks_fields():
    bad_fields = [{"cube": 3}, {"cube_owner": 2}, {"dice": (0, 3)}, {"game_state": "won"}]
    bad_fields += [{"resign": 4}, {"score": (-1, 0)}, {"on_roll": True}]
    for bad in bad_fields:
        with pytest.raises(ValueError, match=next(iter(bad))):
            fields_to_match_id(**bad)


# --- GNU Backgammon IDs as positions ------------------------------------------------------------
def test_reset_from_gnubg_ids():
    gid = f"{START_POSITION_ID}:{MONEY_START}"
    env = make("backgammon")
    env.reset(seed=1, options={"position": gid})
    state = env.unwrapped.state
    assert state.turn == 1 and state.phase == k.PH_MOVE  # seat 1 rolled at once
    assert state.position_id() == START_POSITION_ID and env.agent_selection == "player_1"
    env = make("backgammon", cube=True)
    env.reset(seed=1, options={"position": gid})
    state = env.unwrapped.state
    assert state.phase == k.PH_CUBE and state.current_player == 1 and state.cube() == (1, None)
    # the manual's match ID on the starting position: seat 1 to play 52, a 2-cube owned by seat 0
    game = BackgammonGame(cube=True)
    state = game.state_from_text(f"{START_POSITION_ID}:{MANUAL_EXAMPLE}")
    assert state.to_text() == f"{START_POSITION_ID} 1 52 cube=2@0"
    assert state.rolled() == (5, 2) and state.legal_actions()
    # a double offered: the other player decides
    mid = fields_to_match_id(cube=2, cube_owner=1, on_roll=1, turn=0, double_offered=True)
    state = game.state_from_gnubg_id(f"{START_POSITION_ID}:{mid}")
    assert state.phase == k.PH_TAKE and state.turn == 1 and state.current_player == 0


def test_bad_gnubg_ids_raise_and_change_nothing():
    env = make("backgammon")
    env.reset(seed=3)
    before = env.unwrapped.state.to_text()
    rng_before = env.unwrapped._rng.bit_generator.state
    bad = [
        f"{START_POSITION_ID}:{MANUAL_EXAMPLE}",  # a 2-cube in a game without the cube
        f"{START_POSITION_ID}:cAkAAAAAAAA",
        f"{START_POSITION_ID[:-1]}:{MONEY_START}",
        f"{START_POSITION_ID}:{fields_to_match_id(on_roll=1, resign=2)}",
        f"{START_POSITION_ID}:{fields_to_match_id(on_roll=1, turn=0)}",
        f"{START_POSITION_ID}:{fields_to_match_id(game_state='over')}",  # nobody has won
        "//////////////:" + MONEY_START,
    ]
    for text in bad:
        with pytest.raises(ValueError) as info:
            env.reset(seed=9, options={"position": text})
        assert str(info.value)
        assert env.unwrapped.state.to_text() == before
        assert env.unwrapped._rng.bit_generator.state == rng_before
    with pytest.raises(PositionFormatError, match="Crawford"):
        BackgammonGame(cube=True).state_from_gnubg_id(
            f"{START_POSITION_ID}:{fields_to_match_id(crawford=True)}"
        )
    with pytest.raises(PositionFormatError, match="max_cube"):
        BackgammonGame(cube=True, max_cube=4).state_from_gnubg_id(
            f"{START_POSITION_ID}:{fields_to_match_id(cube=8, cube_owner=0)}"
        )


def _random_states(game, n_games, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n_games):
        state = game.new_initial_state()
        yield state.clone()
        while not state.is_terminal():
            if state.is_chance_node():
                state.roll_dice(rng)
            else:
                legal = state.legal_actions()
                state.apply(int(legal[rng.integers(len(legal))]))
            yield state.clone()


def test_gnubg_id_round_trip_on_random_states():
    gnubg = None
    with contextlib.suppress(ImportError):
        import gnubg_nn as gnubg
    from spieltisch.envs.backgammon.gnubg_adapter import to_gnubg_board

    seen = set()
    for game in (BackgammonGame(), BackgammonGame(cube=True)):
        for state in _random_states(game, 8, seed=11):
            if state.phase == k.PH_MOVE and len(state.dice()) not in (2, 4):
                with pytest.raises(ValueError, match="middle of a turn"):
                    state.gnubg_id()
                continue
            if state.phase == k.PH_MOVE and len(state.dice()) == 2 and len(set(state.dice())) == 1:
                continue  # two dice left of a double: in the middle of the turn
            gid = state.gnubg_id()
            again = game.state_from_gnubg_id(gid)
            expected = state.to_text()
            if state.phase == k.PH_ROLL and game.cube and state.cube()[1] in (None, state.turn):
                # decided not to double, about to roll: gnubg's ID reads as the cube decision
                expected = expected.replace(" roll ", " cube ")
            assert again.to_text() == expected, gid
            # (a dropped game read from text has the winner as current_player, not the dropper)
            assert again == state or state.win_type() == "dropped" or expected != state.to_text()
            assert game.state_from_text(gid).to_text() == expected
            seen.add(match_id_to_fields(gid.split(":")[1])["game_state"])
            if gnubg is not None and state.phase != k.PH_OPENING and not state.is_terminal():
                assert gnubg.position_id(to_gnubg_board(state)) == gid.split(":")[0]
    assert seen == {"none", "playing", "over", "dropped"}


# --- records: round trips through the env -------------------------------------------------------
def _play(seed, cube, stop=None):
    """A random game in the env: the moves as the web server keeps them, and the env."""
    env = make("backgammon", cube=cube)
    env.reset(seed=seed)
    raw = env.unwrapped
    rng = np.random.default_rng(seed + 10_000)
    moves = []
    while not raw.state.is_terminal() and (stop is None or len(moves) < stop):
        legal = raw.state.legal_actions()
        if k.DOUBLE in legal:
            action = k.DOUBLE if rng.random() < 0.15 else k.ROLL
        elif k.TAKE in legal:
            action = k.TAKE if rng.random() < 0.8 else k.DROP
        else:
            action = int(legal[rng.integers(len(legal))])
        moves.append({"seat": raw.state.current_player, "action": int(action)})
        env.step(action)
    return moves, raw


@pytest.mark.parametrize("cube", [False, True])
def test_mat_round_trip_over_random_games(cube):
    kinds = set()
    for seed in range(60):
        moves, raw = _play(seed, cube)
        text = mat_from_env_moves({"cube": cube}, seed, None, moves)
        assert "\n\n\n" not in text.split(" Game 1")[1].rstrip("\n")  # no blank line in a game
        assert max(len(line) for line in text.splitlines()) < 128  # gnubg reads 128-byte lines
        [record] = parse_mat(text)
        assert record == record_from_env_moves({"cube": cube}, seed, None, moves)
        state, actions = record.replay()
        assert state.to_text() == raw.state.to_text()
        assert (record.winner, record.points) == (raw.state.winner(), raw.state.points())
        kinds |= {e.kind for e in record.entries}
        if seed % 4 == 0:  # SGF as well (moves without the hit marks)
            [again] = parse_sgf(record.to_sgf())
            assert again.replay()[0].to_text() == raw.state.to_text()
            assert [e.kind for e in again.entries] == [e.kind for e in record.entries]
        # the replay's own actions give the same record
        rebuilt = record_from_actions(record.game(), actions, _dice_of(record))
        assert rebuilt.replay()[0] == state
    assert kinds == ({"move", "win", "double", "take", "drop"} if cube else {"move", "win"})


def _dice_of(record):
    """The rolls of a record as the engine's chance nodes take them (opening: seat 0's die
    first)."""
    rolls = []
    for n, e in enumerate(e for e in record.entries if e.kind == "move"):
        hi, lo = e.dice
        rolls.append((hi, lo) if n or e.seat == 0 else (lo, hi))
    return rolls


def test_game_to_mat_from_actions_and_dice():
    game = BackgammonGame()
    state = game.new_initial_state()
    state.set_dice(2, 5)  # seat 1 opens with 52
    dice = [state.rolled()]
    actions = []
    for roll in [None, (4, 3), (6, 1)]:
        if roll:
            state.set_dice(*roll)
            dice.append(roll)
        play = state.legal_plays()[0]
        actions += [(state.turn, a) for a in play.actions]
        state.apply_play(0)
    text = game_to_mat(actions, dice, names=("Alice", "Bob Smith"))
    body = text.split(" 0 point match\n\n")[1]
    assert body.splitlines()[:2] == [" Game 1", " Alice : 0                      Bob_Smith : 0"]
    assert body.splitlines()[2].startswith("  1)                             52: ")
    assert body.splitlines()[3][:9] == "  2) 43: " and body.splitlines()[3][33:37] == "61: "
    [record] = parse_mat(text)
    assert record.replay()[0] == state
    assert record.names == ("Alice", "Bob_Smith") and record.cube is False
    assert '; [CubeLimit "1"]' in text


def test_layout_of_cube_actions():
    """A double, a drop and the win as gnubg's exporter lays them out."""
    entries = (
        Entry(0, "move", (6, 5), "24/18 18/13"),
        Entry(1, "double", value=2),
        Entry(0, "drop"),
        Entry(1, "win", value=1),
    )
    lines = GameRecord(entries, cube=True).to_mat().split(" Game 1\n")[1].splitlines()
    assert lines[1:] == [
        "  1) 65: 24/18 18/13              Doubles => 2",
        "  2)  Drops                       Wins 1 point",
        "",
    ]
    entries = (
        Entry(1, "move", (3, 1), "8/5 6/5"),
        Entry(0, "double", value=2),
        Entry(1, "drop"),
        Entry(0, "win", value=1),
    )
    lines = GameRecord(entries, cube=True).to_mat().split(" Game 1\n")[1].splitlines()
    assert lines[1:] == [
        "  1)                             31: 8/5 6/5",
        "  2)  Doubles => 2                Drops",
        "      Wins 1 point",
        "",
    ]


def test_unfinished_games():
    """A game cut off anywhere: the record holds the whole turns (and a pending double); a turn
    whose dice are rolled is left out."""
    for stop in range(20, 36):
        moves, raw = _play(4, cube=True, stop=stop)
        [record] = parse_mat(mat_from_env_moves({"cube": True}, 4, None, moves))
        assert record.winner is None
        state, _ = record.replay()
        live = raw.state
        if live.phase != k.PH_MOVE:
            assert state.to_text() == live.to_text()
            continue
        assert state.turn == live.turn and state.phase in (k.PH_ROLL, k.PH_CUBE)
        if len(live.dice()) == (4 if len(set(live.dice())) == 1 else 2):  # no die played yet
            assert state.board.tolist() == live.board.tolist()


def test_env_moves_are_checked():
    moves, _ = _play(2, cube=False, stop=12)
    with pytest.raises(ValueError, match="seed"):
        mat_from_env_moves({}, None, None, moves)
    wrong_seat = [dict(m) for m in moves]
    wrong_seat[5]["seat"] = 1 - wrong_seat[5]["seat"]
    with pytest.raises(ValueError, match="move 5"):
        mat_from_env_moves({}, 2, None, wrong_seat)
    with pytest.raises(ValueError, match=r"move 3: .*not legal"):  # bar/19: nobody is on the bar
        mat_from_env_moves({}, 2, None, [*moves[:3], {"seat": moves[3]["seat"], "action": 146}])
    other = next(s for s in range(10, 40) if _opener(s) != moves[0]["seat"])
    with pytest.raises(ValueError, match="move 0 is seat"):  # another seed: another opening
        mat_from_env_moves({}, other, None, moves)
    with pytest.raises(ValueError, match="'seat' and 'action'"):
        mat_from_env_moves({}, 2, None, [{"action": 1}])


def _opener(seed):
    env = make("backgammon")
    env.reset(seed=seed)
    return env.unwrapped.state.current_player


def test_only_the_standard_start_is_written():
    start = "4HPwATDgc/ABMA 1 roll"
    env = make("backgammon")
    env.reset(seed=5, options={"position": start})
    raw = env.unwrapped
    moves = []
    for _ in range(6):
        moves.append({"seat": raw.state.current_player, "action": raw.state.legal_actions()[0]})
        env.step(moves[-1]["action"])
    record = record_from_env_moves({}, 5, start, moves)
    assert record.start == start
    assert record.replay()[0].board.tolist() == raw.state.board.tolist()
    with pytest.raises(ValueError, match="standard position"):
        record.to_mat()
    with pytest.raises(ValueError, match="standard position"):
        mat_from_env_moves({}, 5, start, moves)
    with pytest.raises(ValueError, match="standard position"):
        record.to_sgf()
    # the standard start given as a position is fine
    text = mat_from_env_moves({}, 5, "4HPwATDgc/ABMA 0 open", [])
    assert parse_mat(text)[0].entries == ()


# --- reading ------------------------------------------------------------------------------------
def test_the_hand_written_sample():
    text = (DATA_DIR / "backgammon_sample.mat").read_text()
    first, second = parse_mat(text)
    assert first.names == ("Alice", "Bob") and first.score == (0, 0)
    assert first.cube and first.max_cube == 64
    assert second.score == (2, 0)
    assert [e.kind for e in first.entries].count("move") == 9
    assert first.entries[5] == Entry(0, "move", (6, 6), "")  # 66 cannot be played
    state, actions = first.replay()
    assert (state.winner(), state.points(), state.win_type()) == (0, 2, "dropped")
    assert state.cube() == (2, 0)
    assert actions.count(k.PASS) == 1 and actions.count(k.DOUBLE) == 2
    state, _ = second.replay()
    assert (state.winner(), state.points()) == (1, 1)
    # written again from the replayed actions, the games read back the same
    rebuilt = [record_from_actions(r.game(), r.replay()[1], _dice_of(r)) for r in (first, second)]
    for old, new in zip((first, second), parse_mat(records_to_mat(rebuilt)), strict=True):
        assert new.replay()[0] == old.replay()[0]
        assert new.score == old.score


def test_unreadable_records():
    with pytest.raises(RecordFormatError, match="point match"):
        parse_mat("Game 1\n")
    with pytest.raises(RecordFormatError, match="money"):
        parse_mat(" 7 point match\n\n Game 1\n a : 0  b : 0\n")
    with pytest.raises(RecordFormatError, match="line 5"):
        parse_mat(" 0 point match\n\n Game 1\n a : 0   b : 0\n  1) 31: 8/5 6/5 hello\n")
    with pytest.raises(RecordFormatError, match="line 3: the game has no"):
        parse_mat(" 0 point match\n\n Game 1\n\n")
    [record] = parse_mat(" 0 point match\n\n Game 1\n a : 0   b : 0\n  1) 31: 8/4 6/5\n")
    with pytest.raises(RecordFormatError, match=r"entry 1.*not a legal play"):
        record.replay()
    [record] = parse_mat(" 0 point match\n\n Game 1\n a : 0   b : 0\n  1) 31: 8/5 6/5\n")
    assert record.replay()[0].to_text().endswith(" 1 cube cube=1")
    with pytest.raises(RecordFormatError, match="without the cube"):
        GameRecord((*record.entries, Entry(1, "double", value=2))).replay()
    with pytest.raises(RecordFormatError, match="GM"):
        parse_sgf("(;FF[4]GM[1];W[31hefe])")
    with pytest.raises(RecordFormatError, match="GM"):  # a Go move: the game is named first
        parse_sgf("(;GM[1];B[aa])")
    with pytest.raises(RecordFormatError, match="SGF move"):
        parse_sgf("(;FF[4]GM[6];W[3hefe])")

"""Properties over many random games: checkers are conserved, the masks are exactly the legal
checker moves (checked against a naive reference generator), every game ends, the result fits
the final position, seeds reproduce games, and the batched engine equals the single-game one."""

from __future__ import annotations

import numpy as np
import pytest
from backgammon_reference import legal_plays as reference_plays
from spieltisch.envs import make_batch
from spieltisch.envs.backgammon import BackgammonGame, BackgammonState
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.batch import BackgammonBatch

GAME = BackgammonGame()
CUBE = BackgammonGame(cube=True)
MAX_STEPS = 20_000  # far above any real game; reaching it fails the test


def check_against_reference(state: BackgammonState) -> None:
    """The state's mask and plays equal the naive generator's first moves and positions."""
    me, op = state.turn, 1 - state.turn
    positions, firsts, longest = reference_plays(
        state.side(me).tolist(), state.side(op).tolist(), list(state.dice())
    )
    expected_mask = {src * 6 + die - 1 for src, die in firsts} or {k.PASS}
    assert set(state.legal_actions()) == expected_mask, state.to_text()
    assert int(state.s[k.M_MAXDEPTH]) == longest
    mine = set()
    for board in state.play_boards():
        mine.add((tuple(board[k.SIDE * me : k.SIDE * me + 26]), tuple(board[k.SIDE * op :][:26])))
    assert mine == positions, state.to_text()
    assert state.num_plays() == len(positions)


def final_result(state: BackgammonState) -> tuple[int, str]:
    """Winner and win type recomputed from the final board alone."""
    off = state.borne_off()
    winner = 0 if off[0] == 15 else 1
    loser = state.side(1 - winner)
    if loser[k.OFF] > 0:
        kind = "single"
    elif loser[18:25].sum() > 0:  # bar or the winner's home board (loser's points 19..24)
        kind = "backgammon"
    else:
        kind = "gammon"
    return winner, kind


def play_random_game(seed: int, check_every: int = 0) -> tuple[list[int], BackgammonState, int]:
    """One game with uniformly random legal checker moves; checks invariants at every step."""
    rng = np.random.default_rng(seed)
    state = GAME.new_initial_state()
    actions = []
    boards = []
    checks = 0
    for step in range(MAX_STEPS):
        if state.is_terminal():
            break
        if state.is_chance_node():
            state.roll_dice(rng)
        legal = state.legal_actions()
        assert legal and state.legal_mask().sum() == len(legal)
        assert (k.PASS in legal) == (legal == (k.PASS,))  # pass only when nothing else
        if check_every and step % check_every == 0:
            check_against_reference(state)
            checks += 1
        action = legal[int(rng.integers(len(legal)))]
        actions.append(action)
        state.apply(action)
        boards.append(state.s[: k.BOARD_SIZE].copy())
    else:
        raise AssertionError(f"game {seed} did not end within {MAX_STEPS} steps")
    sides = np.array(boards).reshape(-1, 2, k.SIDE)  # after every step
    assert (sides.sum(axis=2) == 15).all() and sides.min() >= 0  # 15 checkers each
    assert not ((sides[:, 0, :24] > 0) & (sides[:, 1, 23::-1] > 0)).any()  # one colour a point
    return actions, state, checks


def test_one_thousand_random_games_keep_every_invariant_and_end_with_a_consistent_result():
    results = {"single": 0, "gammon": 0, "backgammon": 0}
    checks = 0
    for seed in range(1000):
        _, state, n = play_random_game(seed, check_every=37)
        checks += n
        winner, kind = final_result(state)
        assert state.winner() == winner and state.win_type() == kind
        assert state.points() == {"single": 1, "gammon": 2, "backgammon": 3}[kind]
        assert state.returns()[winner] == state.points() == -state.returns()[1 - winner]
        results[kind] += 1
    assert checks > 5000
    assert all(results.values())  # random play produces every win type


def test_masks_equal_the_reference_on_doubles_and_mid_turn_states():
    rng = np.random.default_rng(99)
    checked = 0
    while checked < 600:
        state = GAME.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.roll_dice(rng)
            if state.rolled()[0] == state.rolled()[1] or len(state.dice()) == 1:
                check_against_reference(state)
                checked += 1
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])


def test_the_same_seed_gives_the_same_game():
    a, state_a, _ = play_random_game(123)
    b, state_b, _ = play_random_game(123)
    c, _, _ = play_random_game(124)
    assert a == b and state_a == state_b and a != c


def test_every_play_stepped_move_by_move_equals_the_whole_play():
    rng = np.random.default_rng(5)
    for _ in range(20):
        state = GAME.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.roll_dice(rng)
            plays = state.legal_plays()
            for play in plays:
                stepped = state.clone()
                for action in play.actions or (k.PASS,):
                    assert stepped.legal_mask()[action]
                    stepped.apply(action)
                assert stepped == play.state
            state.apply_play(int(rng.integers(len(plays))))


def test_random_cube_games_score_win_type_times_cube():
    rng = np.random.default_rng(3)
    kinds = set()
    for _ in range(300):
        state = CUBE.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.roll_dice(rng)
            legal = state.legal_actions()
            # Double rarely and take mostly, so that games also end on the board.
            if k.DOUBLE in legal:
                action = k.DOUBLE if rng.random() < 0.05 else k.ROLL
            elif k.TAKE in legal:
                action = k.TAKE if rng.random() < 0.8 else k.DROP
            else:
                action = legal[int(rng.integers(len(legal)))]
            state.apply(action)
        cube, owner = state.cube()
        kinds.add(state.win_type())
        if state.win_type() == "dropped":
            assert state.points() == cube
        else:
            assert (
                state.points()
                == cube * {"single": 1, "gammon": 2, "backgammon": 3}[final_result(state)[1]]
            )
        assert (owner is None) == (cube == 1)
    assert {"dropped", "single", "gammon"} <= kinds


@pytest.mark.parametrize("threads", [1, 2])
def test_batched_engine_equals_the_single_game_engine(threads):
    batch = BackgammonBatch(GAME, 64, seed=11, threads=threads)
    singles = [batch.state(g) for g in range(64)]
    rng = np.random.default_rng(0)
    for _ in range(MAX_STEPS):
        if batch.terminal.all():
            break
        actions = batch.sample_random_actions(rng)
        live = ~batch.terminal.copy()
        batch.step(actions)
        for g in np.flatnonzero(live):
            single = singles[g]
            single.apply(int(actions[g]))
            if single.is_chance_node():  # the batch rolled: give the single game those dice
                single.set_dice(int(batch.states[g, k.M_ROLL]), int(batch.states[g, k.M_ROLL + 1]))
            assert np.array_equal(single.s, batch.states[g]), g
            assert np.array_equal(single.legal_mask(), batch.legal_mask[g])
            assert single.is_terminal() == batch.terminal[g]
    assert batch.terminal.all()
    assert np.array_equal(batch.returns(), np.array([s.returns() for s in singles]))


def test_batched_plays_equal_the_single_game_plays():
    batch = BackgammonBatch(GAME, 32, seed=4, threads=2)
    rng = np.random.default_rng(1)
    while not batch.terminal.all():
        offsets, boards, actions = batch.legal_plays()
        counts = np.diff(offsets)
        choices = np.zeros(32, dtype=np.int64)
        expected = []
        for g in range(32):
            single = batch.state(g)
            assert counts[g] == single.num_plays()
            if counts[g]:
                assert np.array_equal(boards[offsets[g] : offsets[g + 1]], single.play_boards())
                for i in range(counts[g]):
                    row = actions[offsets[g] + i]
                    assert tuple(int(a) for a in row if a >= 0) == single.play_actions(i)
                choices[g] = rng.integers(counts[g])
                single.apply_play(int(choices[g]))
            expected.append(single)
        batch.step_plays(choices)
        for g in range(32):
            # Compare the positions after the plays (the batch then rolls the next dice).
            assert np.array_equal(batch.states[g, : k.BOARD_SIZE], expected[g].board)
    with pytest.raises(TypeError, match="one integer play index per game"):
        batch.step_plays(np.zeros(31, dtype=np.int64))
    batch.reset()
    offsets, _, _ = batch.legal_plays()
    before = batch.states.copy()
    bad = np.zeros(32, dtype=np.int64)
    bad[5] = offsets[6] - offsets[5]  # one past the last play of game 5
    with pytest.raises(ValueError, match="game 5: play index"):
        batch.step_plays(bad)
    assert np.array_equal(batch.states, before)


def test_batch_random_plays_finish_games_and_bad_batch_actions_change_nothing():
    batch = BackgammonBatch(GAME, 50, seed=8)
    before = batch.states.copy()
    bad = batch.sample_random_actions(np.random.default_rng(0))
    bad[7] = k.PASS if batch.legal_mask[7, k.PASS] == 0 else 0
    with pytest.raises(ValueError, match="game 7"):
        batch.step(bad)
    assert np.array_equal(batch.states, before)
    for _ in range(MAX_STEPS):
        if batch.terminal.all():
            break
        batch.step_random_plays()
    assert batch.terminal.all()
    points = batch.states[:, k.M_POINTS]
    assert set(points.tolist()) <= {1, 2, 3}
    batch.reset()
    assert not batch.terminal.any() and (batch.states[:, k.M_PHASE] == k.PH_MOVE).all()


def test_batch_masks_after_whole_play_steps_equal_the_single_game_masks():
    batch = BackgammonBatch(CUBE, 40, seed=21, threads=2)
    rng = np.random.default_rng(2)
    for step in range(60):
        if step % 3 == 2:
            batch.step(batch.sample_random_actions(rng))
        else:
            batch.step_random_plays()  # the masks are then computed when next read
        if step % 7 == 3:
            kept = batch.states[1::2].copy()
            batch.reset(games=np.arange(0, 40, 2))  # restart the even games, the odd ones play on
            assert np.array_equal(batch.states[1::2], kept)
            assert (batch.states[0::2, k.M_TURNS] == 0).all()  # just after the opening roll
            assert (batch.states[0::2, k.M_PHASE] == k.PH_MOVE).all()
        for g in range(40):
            single = batch.state(g)
            assert np.array_equal(batch.legal_mask[g], single.legal_mask())
            assert batch.terminal[g] == single.is_terminal()


def test_batch_play_random_ends_every_game_and_does_not_depend_on_threads():
    one = BackgammonBatch(GAME, 30, seed=6, threads=1)
    two = BackgammonBatch(GAME, 30, seed=6, threads=2)
    one.play_random()
    two.play_random()
    assert one.terminal.all() and np.array_equal(one.states, two.states)
    for g in range(30):
        assert one.state(g).is_terminal()
        assert one.returns()[g, one.state(g).winner()] == one.state(g).points()
    assert not one.legal_mask.any()
    # With a generator for the decisions (the protocol's form), the dice stay the batch's: the
    # same decisions' generator on two batches of other dice seeds gives other games.
    given = [BackgammonBatch(GAME, 30, seed=s, threads=t) for s, t in ((6, 1), (6, 2), (7, 1))]
    for batch in given:
        batch.play_random(np.random.default_rng(3))
        assert batch.terminal.all()
    assert np.array_equal(given[0].states, given[1].states)
    assert not np.array_equal(given[0].states, given[2].states)
    assert not np.array_equal(given[0].states, one.states)


def test_batch_seeds_options_and_rewards():
    # reset(seed=generator) draws one 63-bit number from it to seed the batch's own generator.
    batch = make_batch("backgammon", 12, seed=0)
    batch.reset(seed=np.random.default_rng(5))
    by_hand = BackgammonBatch(GAME, 12, seed=0, threads=1)
    by_hand.rng = np.random.default_rng(int(np.random.default_rng(5).integers(0, 2**63)))
    by_hand.reset()
    assert np.array_equal(batch.states, by_hand.states)
    batch.reset(seed=7)
    assert np.array_equal(batch.states, BackgammonBatch(GAME, 12, seed=7).states)
    with pytest.raises(TypeError, match="seed"):
        batch.reset(np.arange(3))  # games are passed by name: reset(games=...)
    # Rewards as the env's option: points (the default) or their sign.
    wins = make_batch("backgammon", 40, seed=1, reward="win")
    wins.play_random()
    points = wins.points()
    assert set(np.abs(points).ravel().tolist()) <= {1.0, 2.0, 3.0}
    assert np.array_equal(wins.returns(), np.sign(points))
    assert (np.abs(points) > 1).any()  # some gammons, so the two modes differ
    cube = make_batch("backgammon", 3, cube=True, max_cube=8, max_turns=50)
    assert cube.observation_shape == (k.OBS_SIZE_CUBE,) and cube.num_actions == k.NUM_ACTIONS_CUBE
    assert cube.observe()[0].shape == (3, k.OBS_SIZE_CUBE)
    with pytest.raises(ValueError, match="unknown backgammon option"):
        make_batch("backgammon", 2, pits=4)
    with pytest.raises(ValueError, match="reward"):
        make_batch("backgammon", 2, reward="coins")

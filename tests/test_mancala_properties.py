"""Properties over many random games of Kalaha (both rule sets, several sizes) and Hus.

Stones are conserved after every move, masks equal the legal actions computed independently from
the board, every game ends, the same seed gives the same game, and the batched engine plays
exactly the same games as the single-game engine.
"""

from __future__ import annotations

import numpy as np
import pytest
from spieltisch.envs._common.batch import next_uniform, pick_from_bits, rollout_streams
from spieltisch.envs.hus import HusGame
from spieltisch.envs.hus.batch import HusBatch
from spieltisch.envs.kalaha import KalahaGame
from spieltisch.envs.kalaha.batch import KalahaBatch

GAMES = 1000
HUS_MAX_TURNS = 1000

KALAHA_GAMES = [
    KalahaGame(pits=6, seeds=6, rules="goki"),
    KalahaGame(pits=6, seeds=4, rules="standard"),
    KalahaGame(pits=4, seeds=3, rules="goki"),
    KalahaGame(pits=3, seeds=2, rules="standard"),
]


def kalaha_legal_from_board(state) -> tuple[int, ...]:
    return tuple(int(i) for i in np.flatnonzero(state.side(state.current_player)))


def hus_legal_from_board(state) -> tuple[int, ...]:
    return tuple(int(i) for i in np.flatnonzero(state.pits_by_action(state.current_player) >= 2))


def play_random(game, rng, max_turns, legal_from_board, total):
    """One random game, checking the invariants after every move; returns the action list."""
    state = game.new_initial_state()
    actions = []
    while not state.is_terminal() and len(actions) < max_turns:
        legal = state.legal_actions()
        assert legal == legal_from_board(state)
        assert tuple(np.flatnonzero(state.legal_mask())) == legal
        action = int(rng.choice(legal))
        state.apply(action)
        actions.append(action)
        assert int(state.board.sum()) == total
        assert state.board.min() >= 0
    if state.is_terminal():
        assert state.legal_actions() == ()
        assert not state.legal_mask().any()
    return actions, state


@pytest.mark.parametrize("game", KALAHA_GAMES, ids=lambda g: f"{g.rules}-{g.pits}x{g.seeds}")
def test_kalaha_random_games(game):
    rng = np.random.default_rng(0)
    bound = game.total_stones * (2 * game.pits + 1)  # every move puts a stone nearer a store
    for _ in range(GAMES):
        _, state = play_random(game, rng, bound, kalaha_legal_from_board, game.total_stones)
        assert state.is_terminal(), "a Kalaha game must end"
        s0, s1 = state.stores()
        assert s0 + s1 == game.total_stones
        assert state.returns()[0] == float(np.sign(s0 - s1))


def test_hus_random_games():
    rng = np.random.default_rng(0)
    game = HusGame()
    ended = 0
    for _ in range(GAMES):
        actions, state = play_random(game, rng, HUS_MAX_TURNS, hus_legal_from_board, 48)
        if state.is_terminal():
            ended += 1
            w = state.winner()
            assert state.stones(w) + state.stones(1 - w) == 48
            assert not any(state.pits_by_action(1 - w) >= 2)  # the loser cannot move
            assert state.points() in (state.stones(w), 2 * state.stones(w))
        else:
            assert len(actions) == HUS_MAX_TURNS  # truncated by the env's guard
    assert ended >= 0.95 * GAMES  # random Hus games end; a few may cycle past max_turns


@pytest.mark.parametrize("game_name", ["kalaha", "hus"])
def test_same_seed_same_game(game_name):
    from spieltisch.agents import RandomAgent
    from spieltisch.agents.arena.match import play_game
    from spieltisch.envs import make

    def run(seed):
        env = make(game_name, random_start=True, max_turns=200)
        agents = {a: RandomAgent(seed + i) for i, a in enumerate(env.possible_agents)}
        record = play_game(env, agents, seed=seed)
        return record.moves, record.rewards, env.unwrapped.state.to_text()

    runs = [run(seed) for seed in range(10)]
    assert runs == [run(seed) for seed in range(10)]
    assert len({str(moves) for moves, *_ in runs}) == 10  # and seeds do matter


def check_batch_equals_single(batch, game, num_steps_cap):
    rng = np.random.default_rng(1)
    histories = [[] for _ in range(batch.num_games)]
    steps = 0
    while not batch.terminal.all() and steps < num_steps_cap:
        actions = batch.sample_random_actions(rng)
        for g in np.flatnonzero(~batch.terminal):
            histories[g].append(int(actions[g]))
        batch.step(actions)
        steps += 1
    for g, history in enumerate(histories):
        state = game.new_initial_state()
        for action in history:
            state.apply(action)
        assert np.array_equal(state.board, batch.boards[g])
        assert state.is_terminal() == bool(batch.terminal[g])
        assert batch.state(g) == state
        assert np.array_equal(batch.legal_mask[g], state.legal_mask())
        if state.is_terminal():
            assert tuple(batch.returns()[g]) == state.returns()


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("game", KALAHA_GAMES[:2], ids=lambda g: f"{g.rules}-{g.pits}x{g.seeds}")
def test_kalaha_batch_equals_single(game, threads):
    check_batch_equals_single(KalahaBatch(game, GAMES, threads=threads), game, 10_000)


@pytest.mark.parametrize("threads", [1, 3])
def test_hus_batch_equals_single(threads):
    game = HusGame()
    check_batch_equals_single(HusBatch(game, GAMES, threads=threads), game, HUS_MAX_TURNS)


def make_batch(game_name: str, num_games: int, threads: int | None = None):
    if game_name == "kalaha":
        return KalahaBatch(KalahaGame(pits=6, seeds=4, rules="standard"), num_games, threads)
    return HusBatch(HusGame(), num_games, threads)


def batch_arrays(batch) -> tuple[np.ndarray, ...]:
    return tuple(getattr(batch, name).copy() for name in batch.state_arrays)


def step_from_streams(batch, streams: np.ndarray) -> None:
    """One move in every unfinished game, picked from the next number of its stream."""
    actions = np.zeros(batch.num_games, dtype=np.int64)
    weights = 1 << np.arange(batch.legal_mask.shape[1], dtype=np.int64)
    for g in np.flatnonzero(~batch.terminal):
        bits = int(batch.legal_mask[g].astype(np.int64) @ weights)
        actions[g] = pick_from_bits(bits, next_uniform(streams, g))
    batch.step(actions)


@pytest.mark.parametrize("game_name", ["kalaha", "hus"])
def test_play_random_is_the_step_loop_on_any_number_of_threads(game_name):
    # The compiled rollout picks each move as sample_random_actions does, from the next number
    # of the game's own stream, so a step loop fed from the same streams ends where it ends.
    stepped = make_batch(game_name, 300, threads=1)
    streams = rollout_streams(np.random.default_rng(5), 300)
    for _ in range(HUS_MAX_TURNS):
        if stepped.terminal.all():
            break
        step_from_streams(stepped, streams)
    results = []
    for threads in (1, 2, 3):
        rolled = make_batch(game_name, 300, threads=threads)
        rolled.play_random(np.random.default_rng(5), max_moves=HUS_MAX_TURNS)
        results.append(batch_arrays(rolled))
    for arrays in results:
        for ours, theirs in zip(arrays, batch_arrays(stepped), strict=True):
            assert np.array_equal(ours, theirs)
    assert results[0][2].all()  # every game ended (terminal is the third state array)
    # Another seed plays other games; max_moves stops every game after that many moves.
    other = make_batch(game_name, 300, threads=2)
    other.play_random(np.random.default_rng(6), max_moves=HUS_MAX_TURNS)
    assert not np.array_equal(other.boards, stepped.boards)
    short = make_batch(game_name, 300, threads=2)
    short.play_random(np.random.default_rng(5), max_moves=3)
    replay = make_batch(game_name, 300, threads=1)
    streams = rollout_streams(np.random.default_rng(5), 300)
    for _ in range(3):
        step_from_streams(replay, streams)
    for ours, theirs in zip(batch_arrays(short), batch_arrays(replay), strict=True):
        assert np.array_equal(ours, theirs)


def test_rollout_streams_are_uniform_and_distinct():
    streams = rollout_streams(np.random.default_rng(0), 1000)
    assert streams.dtype == np.uint64 and len(set(streams.tolist())) == 1000
    draws = np.array([[next_uniform(streams, g) for _ in range(50)] for g in range(1000)])
    assert ((draws >= 0) & (draws < 1)).all()
    # 50,000 draws: mean 0.5 and 10 equal bins within a few standard errors
    assert abs(draws.mean() - 0.5) < 4 * np.sqrt(1 / 12 / draws.size)
    counts = np.bincount((draws * 10).astype(int).ravel(), minlength=10)
    assert (np.abs(counts - 5000) < 4 * np.sqrt(5000)).all()
    again = rollout_streams(np.random.default_rng(0), 1000)
    assert np.array_equal(again, rollout_streams(np.random.default_rng(0), 1000))


@pytest.mark.parametrize("game_name", ["kalaha", "hus"])
def test_partial_reset_restarts_only_the_named_games(game_name):
    batch = make_batch(game_name, 40, threads=2)
    fresh = batch_arrays(batch)
    batch.play_random(np.random.default_rng(1), max_moves=6)
    played = batch_arrays(batch)
    even = np.arange(0, 40, 2)
    batch.reset(games=even)
    flags = np.zeros(40, dtype=bool)
    flags[even] = True
    for now, before, start in zip(batch_arrays(batch), played, fresh, strict=True):
        assert np.array_equal(now[flags], start[flags])
        assert np.array_equal(now[~flags], before[~flags])
    batch.reset(games=~flags, first_player=1)
    assert (batch.current_player[~flags] == 1).all()
    assert batch.legal_mask[~flags].any(axis=1).all()


@pytest.mark.parametrize("game_name", ["kalaha", "hus"])
def test_bad_batch_arguments_raise_and_change_nothing(game_name):
    batch = make_batch(game_name, 8)
    batch.play_random(np.random.default_rng(2), max_moves=3)
    before = batch_arrays(batch)
    with pytest.raises(ValueError, match="shape"):
        batch.reset(games=np.ones(5, dtype=bool))
    with pytest.raises(IndexError):
        batch.reset(games=np.array([8]))
    with pytest.raises(ValueError, match="first_player must be 0 or 1"):
        batch.reset(first_player=2)
    with pytest.raises(ValueError, match="max_moves"):
        batch.play_random(np.random.default_rng(0), max_moves=-1)
    for now, then in zip(batch_arrays(batch), before, strict=True):
        assert np.array_equal(now, then)
    with pytest.raises(ValueError, match=r"threads must be 1\.\.1024"):
        make_batch(game_name, 8, threads=0)
    with pytest.raises(TypeError, match="threads must be an integer"):
        make_batch(game_name, 8, threads=2.0)


def test_pick_from_bits_picks_as_the_mask_sampler_does():
    from spieltisch.envs._common.batch import _pick_legal, pick_from_bits

    rng = np.random.default_rng(3)
    masks = (rng.random((2000, 16)) < rng.random((2000, 1))).astype(np.int8)
    uniforms = rng.random(2000)
    from_masks = np.empty(2000, dtype=np.int64)
    _pick_legal(masks, uniforms, from_masks)
    for g in range(2000):
        bits = int(sum(1 << a for a in np.flatnonzero(masks[g])))
        expected = from_masks[g] if masks[g].any() else -1
        assert pick_from_bits(bits, uniforms[g]) == expected


def test_batch_rejects_illegal_actions_and_changes_nothing():
    from spieltisch.envs._common.errors import ActionTypeError, IllegalActionError

    batch = KalahaBatch(KalahaGame(), 4)
    # Game 0: pit 0's 6 stones end in the store, so seat 0 moves again with pit 0 empty.
    batch.step(np.array([0, 1, 2, 3]))
    assert batch.current_player[0] == 0
    before = (batch.boards.copy(), batch.current_player.copy(), batch.terminal.copy())
    with pytest.raises(
        IllegalActionError, match=r"game 0: action 0 is illegal; legal actions: \[1, 2"
    ):
        batch.step(np.array([0, 1, 1, 1]))
    with pytest.raises(IllegalActionError, match="game 2: action 6 is out of range"):
        batch.step(np.array([1, 1, 6, 1]))
    with pytest.raises(ActionTypeError, match="shape"):
        batch.step(np.array([1, 1]))
    with pytest.raises(ActionTypeError, match="integers"):
        batch.step(np.array([1.0, 1.0, 1.0, 1.0]))
    assert np.array_equal(batch.boards, before[0])
    assert np.array_equal(batch.current_player, before[1])
    assert np.array_equal(batch.terminal, before[2])

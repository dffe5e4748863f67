"""One contract every batched engine honours (as ``test_env_contract.py`` is for the envs).

It runs for every game in ``spieltisch.envs.BATCHES`` through ``make_batch`` only, so a trainer or
search written against :class:`~spieltisch.envs._common.batch.BatchedGame` works for all four:
the batch equals the single-game engine move for move over random games, its observation and
mask equal the env's, the same seed gives the same games, save/load, clone, pickle and deepcopy
round-trip, bad
actions raise and change nothing, and finished games stay finished.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
from spieltisch.envs import BATCHES, make, make_batch
from spieltisch.envs._common.batch import BatchedGame
from spieltisch.envs._common.errors import IllegalActionError

CASES = [
    ("kalaha", {}),
    ("kalaha", {"pits": 4, "seeds": 3, "rules": "standard"}),
    ("hus", {}),
    ("backgammon", {}),
    ("hilo", {}),
    ("hilo", {"num_players": 4}),
]
IDS = [f"{g}-{'custom' if o else 'default'}" for g, o in CASES]
NUM_GAMES = 6
#: games whose turns are compared with the single engine, move for move
COMPARED = 3


def test_every_game_has_a_case() -> None:
    assert {game for game, _ in CASES} == set(BATCHES)


def random_actions(batch: BatchedGame, rng: np.random.Generator) -> np.ndarray:
    return batch.sample_random_actions(rng)


def single_step(game: str, state, action: int, after) -> None:
    """Play ``action`` on the single-game ``state``; the chance that followed in the batch (a
    backgammon roll) is copied from ``after``, the batch's resulting state, so both can be
    compared. HiLo's draws come from a generator that is part of its state, so none is copied."""
    state.apply(action)
    if game == "backgammon" and not state.is_terminal() and state.is_chance_node():
        state.set_dice(*after.rolled())


def play_out(batch: BatchedGame, rng: np.random.Generator, limit: int = 5000) -> int:
    for step in range(limit):
        if batch.terminal.all():
            return step
        batch.step(random_actions(batch, rng))
    raise AssertionError(f"{batch.game_name}: games did not end within {limit} steps")


@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
def test_shapes_and_types(game: str, options: dict) -> None:
    batch = make_batch(game, NUM_GAMES, seed=1, **options)
    assert isinstance(batch, BatchedGame)
    assert batch.game_name == game
    assert batch.num_games == NUM_GAMES
    env = make(game, **options)
    assert batch.num_actions == env.action_space(env.possible_agents[0]).n
    obs_space = env.observation_space(env.possible_agents[0])["observation"]
    assert batch.observation_shape == obs_space.shape
    assert batch.num_players == len(env.possible_agents)
    assert batch.observation_scale > 0
    batch.reset(seed=3)
    obs, mask = batch.observe()
    assert obs.shape == (NUM_GAMES, *batch.observation_shape) and obs.dtype == np.float32
    assert mask.shape == (NUM_GAMES, batch.num_actions) and mask.dtype == np.int8
    assert mask.sum(axis=1).min() >= 1
    player = batch.current_player
    assert player.shape == (NUM_GAMES,) and player.dtype == np.int64
    assert ((player >= 0) & (player < batch.num_players)).all()
    assert batch.terminal.shape == (NUM_GAMES,) and not batch.terminal.any()
    returns = batch.returns()
    assert returns.shape == (NUM_GAMES, batch.num_players) and returns.dtype == np.float64
    assert not returns.any()


@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
def test_batch_equals_single_engine_and_env_observations(game: str, options: dict) -> None:
    rng = np.random.default_rng(11)
    batch = make_batch(game, NUM_GAMES, seed=5, **options)
    batch.reset(seed=5)
    env = make(game, **options).unwrapped
    env.reset(seed=0)
    compared = 0
    while not batch.terminal.all():
        obs, mask = batch.observe()
        player = batch.current_player
        before = [batch.state(g) for g in range(COMPARED)]
        for g in range(COMPARED):
            if batch.terminal[g]:
                continue
            env.state = before[g].clone()
            np.testing.assert_array_equal(obs[g], env._observation(int(player[g])))
            np.testing.assert_array_equal(mask[g], before[g].legal_mask())
            assert int(player[g]) == before[g].current_player
        actions = random_actions(batch, rng)
        batch.step(actions)
        for g in range(COMPARED):
            if before[g].is_terminal():
                assert batch.state(g) == before[g], "a finished game changed"
                continue
            after = batch.state(g)
            single_step(game, before[g], int(actions[g]), after)
            assert after == before[g], f"game {g} differs from the single engine"
            compared += 1
    assert compared > 20
    returns = batch.returns()
    for g in range(NUM_GAMES):
        np.testing.assert_allclose(returns[g], batch.state(g).returns())
    _, mask = batch.observe()
    assert not mask.any(), "finished games must have no legal action"


@pytest.mark.parametrize("game", sorted(BATCHES))
def test_a_bad_number_of_games_or_seed_is_named_alike_by_every_batch(game: str) -> None:
    # (Kalaha and Hus took 2.0, and gave numpy's words for True)
    for bad, error in ((True, TypeError), (2.0, TypeError), ("4", TypeError), (0, ValueError)):
        with pytest.raises(error, match="num_games must be"):
            make_batch(game, bad, seed=0)
    # a bad seed too (Kalaha and Hus, without chance, took "x" and -1; the others gave
    # numpy's words, and took True)
    for bad, error in (("x", TypeError), (1.5, TypeError), (True, TypeError), (-1, ValueError)):
        with pytest.raises(error, match="seed must be"):
            make_batch(game, 4, seed=bad)
        with pytest.raises(error, match="seed must be"):
            make_batch(game, 4, seed=0).reset(seed=bad)


@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
def test_same_seed_same_games(game: str, options: dict) -> None:
    runs = []
    for _ in range(2):
        batch = make_batch(game, NUM_GAMES, seed=9, **options)
        batch.reset(seed=np.random.default_rng(4))
        play_out(batch, np.random.default_rng(8))
        runs.append([batch.state(g) for g in range(NUM_GAMES)])
    assert runs[0] == runs[1]


@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
def test_save_load_and_clone_round_trip(game: str, options: dict) -> None:
    rng = np.random.default_rng(2)
    batch = make_batch(game, NUM_GAMES, seed=2, **options)
    batch.reset(seed=2)
    for _ in range(5):
        batch.step(random_actions(batch, rng))
    saved = batch.save()
    states = [batch.state(g) for g in range(NUM_GAMES)]
    twin = batch.clone()
    # pickle and deepcopy too (to a process, a Ray worker): batches with compute threads
    # could not be pickled at all (a queue of their threads)
    pickled = pickle.loads(pickle.dumps(batch))
    copied = copy.deepcopy(batch)
    actions = [random_actions(batch, np.random.default_rng(30 + i)) for i in range(8)]

    def continue_from(b: BatchedGame) -> list:
        for a in actions:
            a = np.where(b.terminal, 0, a)
            if b.terminal.all():
                break
            b.step(_legalised(b, a))
        return [b.state(g) for g in range(NUM_GAMES)]

    first = continue_from(batch)
    batch.load(saved)
    assert [batch.state(g) for g in range(NUM_GAMES)] == states
    assert continue_from(batch) == first  # the generator came back too: same chance
    assert continue_from(twin) == first
    assert continue_from(pickled) == first
    assert continue_from(copied) == first


def _legalised(batch: BatchedGame, actions: np.ndarray) -> np.ndarray:
    """``actions`` where legal, else the first legal action (so both copies get the same)."""
    _, mask = batch.observe()
    out = actions.copy()
    for g in range(batch.num_games):
        if not batch.terminal[g] and not mask[g, out[g]]:
            out[g] = int(np.flatnonzero(mask[g])[0])
    return out


@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
def test_bad_action_raises_and_changes_nothing(game: str, options: dict) -> None:
    batch = make_batch(game, NUM_GAMES, seed=3, **options)
    batch.reset(seed=3)
    saved = [batch.state(g) for g in range(NUM_GAMES)]
    _, mask = batch.observe()
    actions = batch.sample_random_actions(np.random.default_rng(0))
    illegal = np.flatnonzero(mask[2] == 0)
    if illegal.size:
        bad = actions.copy()
        bad[2] = illegal[0]
        with pytest.raises(IllegalActionError, match="game 2"):
            batch.step(bad)
        assert [batch.state(g) for g in range(NUM_GAMES)] == saved
    out_of_range = actions.copy()
    out_of_range[1] = batch.num_actions
    with pytest.raises(IllegalActionError, match="game 1"):
        batch.step(out_of_range)
    with pytest.raises((TypeError, ValueError)):
        batch.step(actions[:-1])
    assert [batch.state(g) for g in range(NUM_GAMES)] == saved


@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
def test_reset_of_some_games_checks_which(game: str, options: dict) -> None:
    batch = make_batch(game, NUM_GAMES, seed=4, **options)
    batch.reset(seed=4)
    rng = np.random.default_rng(4)
    for _ in range(3):
        batch.step(random_actions(batch, rng))
    saved = [batch.state(g) for g in range(NUM_GAMES)]
    # Once backgammon reset game 0 for [True] and game 2 for [2.9]; Kalaha refused [] with an
    # IndexError; -1 meant the last game.
    for games in ([True], [2.9], [-1], [NUM_GAMES], [[0, 1]], np.ones(NUM_GAMES - 1, bool)):
        with pytest.raises((ValueError, IndexError), match="games"):
            batch.reset(seed=99, games=games)
        assert [batch.state(g) for g in range(NUM_GAMES)] == saved
    batch.reset(games=[])
    assert [batch.state(g) for g in range(NUM_GAMES)] == saved
    batch.reset(games=[1, 3])
    assert [batch.state(g) for g in (0, 2, 4, 5)] == [saved[g] for g in (0, 2, 4, 5)]


@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
def test_finished_games_stay_finished(game: str, options: dict) -> None:
    rng = np.random.default_rng(6)
    batch = make_batch(game, NUM_GAMES, seed=6, **options)
    batch.reset(seed=6)
    finished: dict[int, object] = {}
    returns_at_end: dict[int, np.ndarray] = {}
    while not batch.terminal.all():
        batch.step(random_actions(batch, rng))
        for g in np.flatnonzero(batch.terminal):
            g = int(g)
            if g in finished:
                assert batch.state(g) == finished[g]
                np.testing.assert_array_equal(batch.returns()[g], returns_at_end[g])
            else:
                finished[g] = batch.state(g)
                returns_at_end[g] = batch.returns()[g].copy()
                if game == "backgammon":  # no draws: a finished game has a winner
                    assert returns_at_end[g].any()
    batch.reset(seed=7, games=np.array([0]))
    assert not batch.terminal[0] and batch.terminal[1:].all()
    assert not batch.returns()[0].any()


def successors(game: str, state, after) -> list:
    """The states one move from ``state``, with the chance that followed as in ``after``."""
    moves = (
        [play.actions for play in state.legal_plays()]
        if game == "backgammon"
        else [(int(a),) for a in np.flatnonzero(state.legal_mask())]
    )
    out = []
    for actions in moves:
        successor = state.clone()
        for action in actions[:-1]:
            successor.apply(action)
        single_step(game, successor, actions[-1], after)
        out.append(successor)
    return out


@pytest.mark.parametrize(("game", "options"), CASES, ids=IDS)
def test_play_random_moves_legally_as_far_as_asked_and_ends_every_game(
    game: str, options: dict
) -> None:
    batch = make_batch(game, NUM_GAMES, seed=3, **options)
    start = [batch.state(g) for g in range(NUM_GAMES)]
    # Bad budgets are refused before anything changes; a budget of 0 plays nothing.
    for bad, error in ((-1, ValueError), (1.5, TypeError), (True, TypeError), ("2", TypeError)):
        with pytest.raises(error, match="max_moves must be"):
            batch.play_random(np.random.default_rng(0), max_moves=bad)
    batch.play_random(np.random.default_rng(0), max_moves=0)
    assert [batch.state(g) for g in range(NUM_GAMES)] == start
    # One move: every game is one legal action (backgammon: one whole play) and its chance away
    # from where it was.
    batch.play_random(np.random.default_rng(1), max_moves=1)
    for g in range(NUM_GAMES):
        after = batch.state(g)
        assert after in successors(game, start[g], after), f"game {g} made not one legal move"
    # No limit: every game ends, with the single engine's results.
    batch.play_random(np.random.default_rng(2))
    assert batch.terminal.all() and not batch.observe()[1].any()
    for g in range(NUM_GAMES):
        np.testing.assert_allclose(batch.returns()[g], batch.state(g).returns())
    # The same generator gives the same games.
    again = make_batch(game, NUM_GAMES, seed=3, **options)
    again.play_random(np.random.default_rng(1), max_moves=1)
    again.play_random(np.random.default_rng(2))
    assert [again.state(g) for g in range(NUM_GAMES)] == [batch.state(g) for g in range(NUM_GAMES)]

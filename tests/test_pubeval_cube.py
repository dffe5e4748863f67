"""pubeval's cubeless probabilities (agents/backgammon/pubeval.py, release/fit_pubeval_cube.py):
the shipped result model is valid, positions map to their bin, won positions are exact, the
counting recovers known frequencies, and the pubeval agent's cube decisions follow Janowski's
formulas from those probabilities."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from spieltisch.agents.backgammon import cube as cb
from spieltisch.agents.backgammon import pubeval
from spieltisch.agents.backgammon.baselines import board_sides
from spieltisch.agents.registry import make_agent
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.engine import BackgammonGame

RACE = "4P8PAADf9wEAAA 0 {} cube=1"  # seat 0: 15 checkers on its 1..3 points; seat 1: all on its 6
_SCRIPT = Path(__file__).resolve().parents[1] / "release" / "fit_pubeval_cube.py"


def _fit_script():
    spec = importlib.util.spec_from_file_location("fit_pubeval_cube", _SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_shipped_model_is_valid_and_races_follow_the_pip_lead() -> None:
    model = pubeval.calibration()
    for kind in ("race", "contact"):
        edges, results = model[kind]
        assert results.shape == (edges.size + 1, 6) and np.all(np.diff(edges) > 0)
        assert np.allclose(results.sum(axis=1), 1.0) and np.all(results > 0)
    _, race = model["race"]
    wins = race[:, 3:].sum(axis=1)
    assert wins[0] < 0.1 and wins[-1] > 0.9  # far behind in the race loses, far ahead wins
    assert np.diff(wins).min() > -0.01  # and in between the wins rise with the lead


def test_features_of_drawn_positions() -> None:
    game = BackgammonGame(cube=True)
    state = game.state_from_text(RACE.format("roll"))
    own, other = board_sides(state.board, 0)
    pips = state.pip_counts()  # the engine's own count: seat 0 on its 1..3 points, seat 1 all on 6
    assert pips[1] == 90
    lead = (pips[1] - pips[0]) / np.sqrt(pips[0] + pips[1])
    assert bool(pubeval.is_race(own, other))
    assert float(pubeval.cube_feature(own, other, True)) == pytest.approx(lead)
    start = game.new_initial_state().board
    own, other = board_sides(start, 0)
    assert float(pubeval.cube_feature(own, other, False)) == pytest.approx(
        float(pubeval.score(own, other, race=False))
    )


def test_values_map_to_their_bin() -> None:
    rows = np.eye(6)[[0, 2, 5]]  # bin 0 -> lose a backgammon, 1 -> lose single, 2 -> win bg
    model = {"race": (np.array([0.0, 1.0]), rows), "contact": (np.array([5.0]), np.eye(6)[[1, 4]])}
    values = np.array([-1.0, 0.0, 0.5, 1.0, 2.0])
    race = pubeval.result_probabilities(values, True, model)
    assert race.argmax(axis=1).tolist() == [0, 2, 2, 5, 5]  # an edge value goes to the bin above
    contact = pubeval.result_probabilities(np.array([4.9, 5.0]), False, model)
    assert contact.argmax(axis=1).tolist() == [1, 4]
    mixed = pubeval.result_probabilities(values[:2], np.array([True, False]), model)
    assert mixed.argmax(axis=1).tolist() == [0, 1]


def test_probabilities_are_consistent_on_random_positions() -> None:
    rng = np.random.default_rng(5)
    game = BackgammonGame()
    seen_race = seen_contact = False
    for _ in range(20):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.roll_dice(rng)
                continue
            boards = state.play_boards()
            i = int(rng.integers(len(boards)))
            own, other = board_sides(boards[i], state.turn)
            if own.sum() > 0:
                race = bool(pubeval.is_race(*board_sides(state.board, state.turn)))
                seen_race |= race
                seen_contact |= not race
                p, wg, wbg, lg, lbg = pubeval.probabilities(own, other, race)
                assert 0 < p < 1 and 0 <= wbg <= wg <= p and 0 <= lbg <= lg <= 1 - p
            state.apply_play(i)
    assert seen_race and seen_contact


def test_a_position_won_at_the_next_roll_is_exact() -> None:
    board = np.zeros(k.BOARD_SIZE, dtype=np.int32)
    board[0], board[25] = 1, 14  # seat 0: one checker on its 1 point, 14 borne off
    board[k.SIDE + 5] = 15  # seat 1: all 15 on its 6 point, none borne off: a gammon
    state = BackgammonGame(cube=True).state_to_roll(board, 0)
    probs = make_agent("pubeval", "backgammon").position_probabilities(state)
    assert probs.tolist() == [1.0, 1.0, 0.0, 0.0, 0.0]


def test_pubeval_decides_on_the_cube_by_janowski_from_its_probabilities() -> None:
    rng = np.random.default_rng(11)
    game = BackgammonGame(cube=True)
    agent = make_agent("pubeval", "backgammon", seed=0, game_options={"cube": True})
    never = make_agent("pubeval:cube=never", "backgammon", seed=0, game_options={"cube": True})
    decisions = {k.DOUBLE: 0, k.ROLL: 0, k.TAKE: 0, k.DROP: 0}
    for _ in range(12):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                state.roll_dice(rng)
                continue
            mask = state.legal_mask()
            obs = {"observation": np.zeros(k.OBS_SIZE_CUBE), "action_mask": mask}
            if mask[k.ROLL] or mask[k.TAKE]:
                probs = agent.position_probabilities(state)
                action = agent.act(obs, state)
                if mask[k.ROLL]:
                    owner = state.cube()[1]
                    mine = cb.CENTRED if owner is None else cb.MINE
                    expected = bool(mask[k.DOUBLE]) and cb.should_double(probs, mine)
                    assert action == (k.DOUBLE if expected else k.ROLL)
                    assert never.act(obs, state) == k.ROLL
                else:
                    expected = cb.should_take(cb.flip(probs))
                    assert action == (k.TAKE if expected else k.DROP)
                    assert never.act(obs, state) == k.TAKE
                decisions[action] += 1
                state.apply(action)
            else:
                state.apply_play(int(rng.integers(state.num_plays())))
    assert decisions[k.DOUBLE] > 0 and decisions[k.ROLL] > 0  # the test saw both decisions


def test_pubeval_drops_a_lost_race_and_plays_on_from_the_start() -> None:
    game = BackgammonGame(cube=True)
    agent = make_agent("pubeval", "backgammon", seed=0, game_options={"cube": True})
    take = game.state_from_text(RACE.format("take"))
    obs = {"observation": np.zeros(k.OBS_SIZE_CUBE), "action_mask": take.legal_mask()}
    assert agent.act(obs, take) == k.DROP
    start = game.new_initial_state()
    start.roll_dice(np.random.default_rng(1))
    start.apply_play(0)
    cube = game.state_from_text(start.to_text().replace(" roll", " cube"))
    obs = {"observation": np.zeros(k.OBS_SIZE_CUBE), "action_mask": cube.legal_mask()}
    assert agent.act(obs, cube) == k.ROLL


def test_counting_recovers_known_frequencies() -> None:
    fit = _fit_script()
    rng = np.random.default_rng(3)
    features = rng.uniform(0, 2, 60_000)
    truth = np.array([[0.1, 0.2, 0.2, 0.3, 0.1, 0.1], [0.0, 0.05, 0.15, 0.4, 0.3, 0.1]])
    half = (features >= 1).astype(int)
    results = np.array([rng.choice(6, p=truth[h]) for h in half])
    edges, frequencies = fit.count_bins(features, results, bins=2)
    assert edges == pytest.approx([1.0], abs=0.02)
    assert np.abs(frequencies - truth).max() < 0.015
    assert np.allclose(frequencies.sum(axis=1), 1.0) and np.all(frequencies > 0)
    repeated, _ = fit.count_bins(np.repeat([0.0, 1.0], 50), np.tile([0, 5], 50), bins=10)
    assert repeated.size < 9  # repeated values make fewer bins
    with pytest.raises(ValueError, match="cannot fill"):
        fit.count_bins(features[:3], results[:3], bins=4)

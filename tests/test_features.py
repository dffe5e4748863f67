"""Input features beside the observation (agents/neural/features.py): Hus's move outcomes on
positions drawn as text and against the engine over random games; the network's three readers
(PyTorch, the numpy forward pass of the agents, the compiled alpha-beta's leaf value) agree; a
network with features trains, loads as an agent and searches; bad names are refused."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch
from spieltisch.agents.arena import evaluate
from spieltisch.agents.mancala.alphabeta import HUS as HUS_KIND
from spieltisch.agents.mancala.alphabeta import _net_value, net_leaf_evaluator
from spieltisch.agents.neural.checkpoint import load_checkpoint
from spieltisch.agents.neural.features import feature_set, hus_moves, hus_moves_threats
from spieltisch.agents.neural.onnx_export import export_checkpoint
from spieltisch.agents.neural.policy import ArrayPolicy, PolicyArch, PolicyNet
from spieltisch.agents.neural.value_search import value_layers
from spieltisch.agents.registry import make_agent
from spieltisch.envs.hus import HusGame
from spieltisch.envs.hus.rules import DEFAULT_MAX_SOWN, move_outcomes, observe
from spieltisch.train.alphazero import train
from spieltisch.train.config import ConfigError, build_config

HUS = HusGame()


def outcomes_of(state) -> np.ndarray:
    """``[16, 4]``: the mover's move outcomes of ``state`` from its board."""
    out = np.zeros(64, np.float32)
    move_outcomes(state.board, state.current_player, DEFAULT_MAX_SOWN, out)
    return out.reshape(16, 4)


def test_a_capture_and_a_winning_capture_drawn_as_text():
    # Only row 2 column 0 (action 8) holds 2 stones. It sows into columns 1 and 2; column 2 held
    # a stone, so it captures the 4 and 3 opposite (7 of seat 1's stones).
    state = HUS.state_from_text(
        """
        seat 1 row 1 |  1  0  3  0  0  0  0  2
        seat 1 row 2 |  0  0  4  0  0  0  0  1
        seat 0 row 2 |  2  0  1  0  0  0  0  0
        seat 0 row 1 |  0  0  0  0  0  0  0  0
        seat 0 to move
        """
    )
    out = outcomes_of(state)
    # legal, 7 stones captured, not a win (seat 1 keeps the 2 in its row 1 column 0), one reply
    assert out[8].tolist() == [1.0, 7 / 8, 0.0, 1 / 16]
    assert not np.delete(out, 8, axis=0).any()  # every other action is illegal: all zeros
    # Without the 2: the capture leaves seat 1 without a move, a win at once, no reply.
    state = HUS.state_from_text(
        """
        seat 1 row 1 |  0  0  3  0  0  0  0  0
        seat 1 row 2 |  0  0  4  0  0  0  0  0
        seat 0 row 2 |  2  0  1  0  0  0  0  0
        seat 0 row 1 |  0  0  0  0  0  0  0  0
        seat 0 to move
        """
    )
    assert outcomes_of(state)[8].tolist() == [1.0, 7 / 8, 1.0, 0.0]


def test_move_outcomes_match_the_engine_and_the_observation_over_random_games():
    rng = random.Random(3)
    obs = np.zeros(32, np.float32)
    positions = 0
    for _ in range(40):
        state = HUS.new_initial_state()
        while not state.is_terminal() and state.move_number < 200:
            seat = state.current_player
            out = outcomes_of(state)
            observe(state.board, seat, obs)
            assert np.array_equal(hus_moves(obs[None])[0], out.ravel())  # from the view alone
            threats = np.zeros(64, np.float32)  # the opponent's, as if it moved now
            move_outcomes(state.board, 1 - seat, DEFAULT_MAX_SOWN, threats)
            both = hus_moves_threats(obs[None])[0]
            assert np.array_equal(both[:64], out.ravel()) and np.array_equal(both[64:], threats)
            legal = set(state.legal_actions())
            for action in range(16):
                if action not in legal:
                    assert not out[action].any()
                    continue
                after = state.clone()
                after.apply(action)
                captured = state.stones(1 - seat) - after.stones(1 - seat)
                expected = [1.0, captured / 8, float(after.is_terminal())]
                expected.append(0.0 if after.is_terminal() else len(after.legal_actions()) / 16)
                assert out[action].tolist() == pytest.approx(expected)
            state.apply(rng.choice(sorted(legal)))
            positions += 1
    assert positions > 1000


@pytest.mark.parametrize(("features", "width"), [("hus_moves", 64), ("hus_moves_threats", 128)])
def test_the_three_readers_of_a_network_with_features_agree(features, width):
    torch.manual_seed(0)
    arch = PolicyArch(32, 16, (24, 16), 4.0, count_bins=5, features=features)
    assert arch.input_size == 32 * 6 + width
    assert PolicyArch.from_json(arch.to_json()) == arch
    net = PolicyNet(arch).eval()
    rng = random.Random(1)
    boards, obs = [], []
    for _ in range(5):
        state = HUS.new_initial_state()
        while not state.is_terminal():
            view = np.zeros(32, np.float32)
            observe(state.board, state.current_player, view)
            boards.append((state.board.copy(), state.current_player))
            obs.append(view)
            state.apply(rng.choice(state.legal_actions()))
    obs = np.array(obs)
    mask = np.ones((len(obs), 16), np.int8)
    with torch.no_grad():
        logits, values = net.forward_seats(torch.from_numpy(obs), torch.from_numpy(mask))
    array_logits, array_values = ArrayPolicy([net]).forward_seats(obs, mask)
    np.testing.assert_allclose(array_logits, logits.numpy(), atol=1e-5)
    np.testing.assert_allclose(array_values, values.numpy(), atol=1e-5)
    leaf = net_leaf_evaluator(value_layers(net), 32, 4.0, 5, features=width)
    compiled = [_net_value(HUS_KIND, board, mover, leaf) for board, mover in boards]
    np.testing.assert_allclose(compiled, values.numpy()[:, 0], atol=1e-5)
    with torch.no_grad():  # the features count: with their columns zeroed the values differ
        net.trunk[0].weight[:, 32 : 32 + width] = 0  # the features, after the 32 scaled counts
        _, blind = net.forward_seats(torch.from_numpy(obs), torch.from_numpy(mask))
    assert not torch.allclose(blind, values)


def test_bad_feature_names_are_refused():
    with pytest.raises(ValueError, match=r"unknown input features 'moves'.*hus_moves"):
        feature_set("moves")
    arch = PolicyArch(32, 16, (8,), 4.0, features="hus_moves").to_json()
    with pytest.raises(ValueError, match="unknown input features"):
        PolicyArch.from_json({**arch, "features": "moves"})
    assert "features" not in PolicyArch(32, 16).to_json()  # older records stay as they were
    with pytest.raises(ConfigError, match="'features' 'hus_moves' is not a feature set of kalaha"):
        build_config({"game": "kalaha", "algorithm": "alphazero"}, ["features=hus_moves"])
    with pytest.raises(ConfigError, match=r"its feature sets: \[.hus_moves., .hus_moves_threats."):
        build_config({"game": "hus", "algorithm": "alphazero"}, ["features=captures"])
    with pytest.raises(ValueError, match=r"features: 0, 64 .* or 128"):
        net_leaf_evaluator([(np.zeros((1, 40)), np.zeros(1))], 32, 4.0, features=8)


def test_a_network_with_move_features_trains_and_plays(tmp_path):
    cfg = build_config(
        {"game": "hus", "algorithm": "alphazero"},
        [
            f"run_dir={tmp_path / 'moves'}",
            "features=hus_moves",
            "num_games=8",
            "num_simulations=4",
            "hidden=[16]",
            "count_bins=4",
            "batch_size=32",
            "total_positions=150",
            "max_turns=60",
            "eval_interval=0",
            "final_eval_games=2",
            "progress=false",
            "tensorboard=false",
        ],
    )
    train(cfg)
    path = tmp_path / "moves" / "final"
    ckpt = load_checkpoint(path)
    assert ckpt.meta["arch"]["features"] == "hus_moves"
    assert ckpt.meta["arch"]["observation_size"] == 32
    agent = make_agent(f"checkpoint:{path}:sims=4", "hus")
    assert agent.net.arch.features == "hus_moves"
    pytest.importorskip("onnx", reason="onnx is installed by the test extra")
    meta = export_checkpoint(ckpt, tmp_path / "moves.onnx")  # the features: a third input
    assert json.loads(meta["inputs"]) == ["observation", "action_mask", "features"]
    assert meta["features"] == "hus_moves"
    options = {"max_turns": 40}
    for name in (f"checkpoint:{path}", f"checkpoint:{path}:sims=4", f"checkpoint:{path}:search=2"):
        report = evaluate("hus", [name, "random"], 1, options=options, bootstrap=0)
        assert report.pairs[0].games == 2

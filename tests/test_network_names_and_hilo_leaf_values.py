"""Network names the export refuses (an empty algo=), and the HiLo search valuing finished games
in the reward its network learnt."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from spieltisch.agents.hilo.search import HiLoSearchAgent
from spieltisch.agents.neural.onnx_export import OnnxExportError, export_onnx
from spieltisch.agents.neural.policy import PolicyArch, PolicyNet
from spieltisch.envs.hilo import HiLoGame
from spieltisch.envs.hilo.engine import coins_rewards
from spieltisch.train.cli import main

pytest.importorskip("onnx", reason="onnx is installed by the test extra")


@pytest.mark.parametrize("name", ["pretrained:hilo:algo=", "pretrained:kalaha:algo=''"])
def test_an_empty_algo_is_refused_not_exported_as_the_default(name, tmp_path, capsys):
    """``algo=`` (no value) exported the default network under that name; the agents refuse it."""
    out = tmp_path / "m.onnx"
    with pytest.raises(OnnxExportError, match="algo= needs an algorithm"):
        export_onnx(name, out)
    assert main(["export", name, "--onnx", str(out)]) == 2
    assert "algo= needs an algorithm" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def _finished_games(game: HiLoGame, count: int):
    rng = np.random.default_rng(0)
    for _ in range(count):
        state = game.new_initial_state(rng)
        while not state.is_terminal():
            state.apply(int(rng.choice(state.legal_actions())))
        yield state


def test_search_scores_finished_games_in_the_reward_the_network_learnt() -> None:
    """A network whose record names no ``reward`` was trained on the env's default, ``win``: a
    finished game is worth the seat's result. It was scored by the coins reward, so in 3-player
    games a loser with more coins than the others' mean was valued above 0."""
    game = HiLoGame(3)
    torch.manual_seed(0)
    net = PolicyNet(PolicyArch(game.observation_size, game.num_actions, (8,)))
    win = HiLoSearchAgent(net, {"num_players": 3}, samples=1, seed=0)
    coins = HiLoSearchAgent(net, {"num_players": 3, "reward": "coins"}, samples=1, seed=0)
    loser_above_mean = 0
    for state in _finished_games(game, 12):
        reward = coins_rewards(state.coins())
        for seat in range(3):
            assert win.leaf_values([state], seat)[0] == state.returns()[seat]
            assert coins.leaf_values([state], seat)[0] == np.clip(reward[seat], -1, 1)
            loser_above_mean += state.returns()[seat] < 0 < reward[seat]
    assert loser_above_mean > 0  # the games include the case the old scoring got wrong

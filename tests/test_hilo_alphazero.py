"""Gumbel search and AlphaZero for HiLo (hidden cards): searched from information sets only.

* The combined root decision (summed visits, visit-weighted Q) is the searched root's decision
  when it is fed one search's statistics.
* Decisions never depend on what the mover may not know: two real states that differ only in
  hidden cards (perturbed by ``perturb_hidden``, written independently of the engine) give the
  same action, policy and statistics, for the play-time agent and for the self-play search, in
  2- and 4-player games.
* The agent refuses a real state; the search is only handed information sets.
* A short AlphaZero run trains, resumes exactly, and its checkpoint plays as an agent.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from spieltisch.agents.base import InformationSet
from spieltisch.agents.neural.checkpoint import load_checkpoint
from spieltisch.agents.neural.determinized_search import InformationSetSearch
from spieltisch.agents.neural.gumbel_search import (
    GumbelSearch,
    GumbelSearchAgent,
    SearchConfig,
    _combined_final,
    policy_evaluator,
)
from spieltisch.agents.neural.policy import PolicyArch, PolicyNet
from spieltisch.agents.registry import make_agent
from spieltisch.envs import make_batch
from spieltisch.envs.hilo import HiLoGame
from spieltisch.train.alphazero import train
from spieltisch.train.config import ConfigError, build_config
from spieltisch.train.run_files import latest_checkpoint
from test_hilo_information import perturb_hidden, random_states
from test_train_hilo_learning import coins_vs_random


def untrained_net(batch, seed: int = 0) -> PolicyNet:
    torch.manual_seed(seed)
    arch = PolicyArch(
        observation_size=batch.observation_shape[0],
        num_actions=batch.num_actions,
        hidden=(32,),
        observation_scale=batch.observation_scale,
    )
    return PolicyNet(arch).eval()


def test_combined_decision_of_one_search_is_the_searched_roots_decision():
    batch = make_batch("kalaha", 24, pits=4, seeds=3)
    rng = np.random.default_rng(0)
    for _ in range(3):  # positions a few random moves in
        batch.step(batch.sample_random_actions(rng))
    net = untrained_net(batch)
    evaluate = policy_evaluator(net, 2)
    config = SearchConfig(num_simulations=12, max_considered=4)
    gumbel = rng.gumbel(size=(24, batch.num_actions))
    found = GumbelSearch(config).search(batch, evaluate, rng, gumbel=gumbel)
    active = ~batch.terminal
    action = np.zeros(24, dtype=np.int64)
    policy = np.zeros((24, batch.num_actions))
    mover = batch.current_player
    _combined_final(
        found.prior_logits,
        found.policy > 0,
        found.visits,
        np.nan_to_num(found.q * found.visits),
        found.network_value[np.arange(24), mover],
        gumbel,
        config.c_visit,
        config.c_scale,
        action,
        policy,
    )
    assert np.array_equal(action[active], found.action[active])
    assert np.allclose(policy[active], found.policy[active], atol=1e-12)
    assert (found.visits[active].sum(axis=1) == 12).all()


def hilo_positions(num_players: int, count: int, seed: int):
    """Mid-game HiLo states (every 7th state of random games) where the mover has a choice."""
    game = HiLoGame(num_players)
    found = []
    for i, state in enumerate(random_states(game, 40, seed)):
        if i % 7 == 3 and not state.is_terminal() and len(state.legal_actions()) > 1:
            found.append(state)
        if len(found) == count:
            break
    return game, found


@pytest.mark.parametrize("num_players", [2, 4])
def test_agent_decisions_ignore_what_the_mover_cannot_know(num_players):
    _, states = hilo_positions(num_players, 12, seed=num_players)
    batch = make_batch("hilo", 1, num_players=num_players)
    agent = GumbelSearchAgent(untrained_net(batch), "hilo", {"num_players": num_players}, 6, 0, 3)
    rng = np.random.default_rng(9)
    changed_hidden = 0
    for state in states:
        seat = state.current_player
        other = perturb_hidden(state, rng, with_hand=False)  # the mover sees its drawn card
        changed_hidden += not np.array_equal(other.s, state.s)
        decisions = []
        for real in (state, other):
            infoset = InformationSet(real, seat, np.random.default_rng(5))
            agent.reset(seed=11)
            result = agent.run_search(infoset)
            agent.reset(seed=11)
            obs = {"observation": real.observation(seat), "action_mask": real.legal_mask()}
            decisions.append((agent.act(obs, infoset), result))
        (a1, r1), (a2, r2) = decisions
        assert a1 == a2 == r1.action[0]
        assert a1 in state.legal_actions()
        for name in ("policy", "visits", "root_value"):
            assert np.array_equal(getattr(r1, name), getattr(r2, name)), name
        assert r1.visits.sum() == 6 * 3  # every determinization spent all its simulations
        assert r1.policy[0][state.legal_mask() == 0].sum() == 0.0
    assert changed_hidden >= len(states) - 1  # the perturbation really changed hidden cards


@pytest.mark.parametrize("num_players", [2, 4])
def test_self_play_search_ignores_what_the_movers_cannot_know(num_players):
    _, states = hilo_positions(num_players, 8, seed=10 + num_players)
    real = make_batch("hilo", len(states), num_players=num_players)
    twin = make_batch("hilo", len(states), num_players=num_players)
    rng = np.random.default_rng(1)
    for g, state in enumerate(states):
        real.set_state(g, state)
        twin.set_state(g, perturb_hidden(state, rng, with_hand=False))
    assert not np.array_equal(real.states, twin.states)
    net = untrained_net(real)
    search = InformationSetSearch(
        SearchConfig(num_simulations=4),
        2,
        lambda n: make_batch("hilo", n, num_players=num_players),
    )
    evaluate = policy_evaluator(net, num_players)
    ours = search.search(real, evaluate, np.random.default_rng(3))
    theirs = search.search(twin, evaluate, np.random.default_rng(3))
    for name in ("action", "policy", "visits", "root_value", "prior_logits"):
        assert np.array_equal(getattr(ours, name), getattr(theirs, name)), name
    legal = real.legal_mask != 0
    assert legal[np.arange(len(states)), ours.action].all()
    assert (ours.policy[~legal] == 0).all()


def test_information_set_search_of_some_rows_is_the_search_of_those_games_alone():
    """``rows``: only those games' information sets are built and searched, as if the batch
    held those games alone; the other rows are zeros."""
    _, states = hilo_positions(3, 9, seed=21)
    batch = make_batch("hilo", len(states), num_players=3)
    for g, state in enumerate(states):
        batch.set_state(g, state)
    rows = np.array([1, 4, 8])
    alone = make_batch("hilo", len(rows), num_players=3)
    for i, g in enumerate(rows):
        alone.set_state(i, states[g])
    net = untrained_net(batch)
    search = InformationSetSearch(
        SearchConfig(num_simulations=4), 2, lambda n: make_batch("hilo", n, num_players=3)
    )
    evaluate = policy_evaluator(net, 3)
    part = search.search(batch, evaluate, np.random.default_rng(4), rows=rows)
    ours = search.search(alone, evaluate, np.random.default_rng(4))
    for name in ("action", "policy", "visits", "root_value", "prior_logits"):
        assert np.array_equal(getattr(part, name)[rows], getattr(ours, name)), name
    others = np.setdiff1d(np.arange(len(states)), rows)
    assert not part.visits[others].any() and not part.policy[others].any()


def test_the_agent_refuses_a_real_state_and_bad_parameters():
    batch = make_batch("hilo", 1)
    agent = GumbelSearchAgent(untrained_net(batch), "hilo", {}, 4)
    state = HiLoGame(2).new_initial_state(0)
    with pytest.raises(TypeError, match="InformationSet"):
        agent.run_search(state)
    with pytest.raises(ValueError, match="dets must be"):
        GumbelSearchAgent(untrained_net(batch), "hilo", {}, 4, dets=0)
    kalaha = make_batch("kalaha", 1)
    with pytest.raises(ValueError, match="dets=D is for HiLo"):
        GumbelSearchAgent(untrained_net(kalaha), "kalaha", {}, 4, dets=2)
    with pytest.raises(ValueError, match="determinizations must be at least 1"):
        InformationSetSearch(SearchConfig(), 0, lambda n: make_batch("hilo", n))


def config(tmp_path: Path, name: str, *extra: str):
    return build_config(
        {"game": "hilo", "algorithm": "alphazero", "game_options": {"num_players": 2}},
        [
            f"run_dir={tmp_path / name}",
            "num_games=8",
            "num_simulations=4",
            "determinizations=2",
            "hidden=[32]",
            "batch_size=64",
            "total_positions=100000",
            "max_turns=400",
            "checkpoint_interval=1",
            "eval_interval=0",
            "final_eval_games=4",
            "progress=false",
            "tensorboard=false",
            *extra,
        ],
    )


def test_killed_and_resumed_hilo_run_equals_uninterrupted_run(tmp_path):
    whole = config(tmp_path, "whole", "total_positions=1500")
    train(whole)
    killed = config(tmp_path, "resumed", "total_positions=1500", "stop_after_iterations=1")
    train(killed)
    train(config(tmp_path, "resumed", "total_positions=1500"), resume=True)
    a = load_checkpoint(latest_checkpoint(tmp_path / "whole")).tensors
    b = load_checkpoint(latest_checkpoint(tmp_path / "resumed")).tensors
    assert a.keys() == b.keys()
    for key in a:
        assert torch.equal(a[key], b[key]), key
    # the policy plays as an agent, raw and with search from information sets
    for name in ("", ":sims=4,dets=2"):
        agent = make_agent(f"checkpoint:{tmp_path / 'whole' / 'final'}{name}", "hilo")
        state = HiLoGame(2).new_initial_state(3)
        seat = state.current_player
        obs = {"observation": state.observation(seat), "action_mask": state.legal_mask()}
        assert agent.act(obs, InformationSet(state, seat, np.random.default_rng(0))) in (
            state.legal_actions()
        )


@pytest.mark.parametrize(
    ("override", "words"),
    [("determinizations=0", "determinizations"), ("determinizations=1.5", "determinizations")],
)
def test_bad_hilo_config_values_are_refused(tmp_path, override, words):
    with pytest.raises(ConfigError, match=words):
        config(tmp_path, "bad", override)


def test_short_hilo_run_learns_against_random(tmp_path):
    """About 25 s: 20,000 self-play positions (8 simulations, 2 determinizations) take the raw
    network from par to clearly beating random, in wins and in coins, on the same deals."""
    learn = "num_games=32", "num_simulations=8", "hidden=[64]", "batch_size=128", "lr=0.003"
    opponents = "eval_opponents=[random]", "final_eval_games=400", "max_turns=500"
    trained = train(config(tmp_path, "learn", "total_positions=20000", *learn, *opponents))
    untrained = train(config(tmp_path, "untrained", "total_positions=1", *learn, *opponents))
    after, before = (r["final_eval"]["vs_random"] for r in (trained, untrained))
    # measured, training seeds 0 / 1 / 2: score 0.700 / 0.698 / 0.679 (95% interval about
    # +-0.045); coins +1.84 / +1.57 / +2.20 against -0.03 to +0.07 untrained
    assert after["score"] >= 0.6, after
    assert after["score"] >= before["score"] + 0.1, (after, before)
    nets = [load_checkpoint(tmp_path / name / "final").policy() for name in ("learn", "untrained")]
    coins = [coins_vs_random(net, 400, 123) for net in nets]
    assert coins[0] >= coins[1] + 0.8, coins


def test_four_player_run_with_per_seat_values_resumes_exactly_and_plays(tmp_path):
    """``value_per_seat``: the net predicts every seat's result; the replay buffer's targets
    are zero-sum rows from the mover on, a killed run resumes bit for bit, and the checkpoint
    searches with its own per-seat values."""
    four = "game_options.num_players=4", "value_per_seat=true", "total_positions=900"
    whole = config(tmp_path, "whole", *four)
    train(whole)
    train(config(tmp_path, "resumed", *four, "stop_after_iterations=1"))
    train(config(tmp_path, "resumed", *four), resume=True)
    a = load_checkpoint(latest_checkpoint(tmp_path / "whole"))
    b = load_checkpoint(latest_checkpoint(tmp_path / "resumed"))
    for key in a.tensors:
        assert torch.equal(a.tensors[key], b.tensors[key]), key
    targets = a.tensors["replay.value"].numpy()
    assert targets.shape[1] == 4 and len(targets) >= 900
    np.testing.assert_allclose(targets.sum(axis=1), 0.0, atol=1e-6)  # k winners 1/k each
    assert (targets.max(axis=1) > 0).mean() > 0.9  # nearly every game has a winner
    final = load_checkpoint(tmp_path / "whole" / "final")
    assert final.meta["arch"]["value_outputs"] == 4
    name = f"checkpoint:{tmp_path / 'whole' / 'final'}:sims=4,dets=2"
    agent = make_agent(name, "hilo", game_options={"num_players": 4})
    state = HiLoGame(4).new_initial_state(1)
    seat = state.current_player
    obs = {"observation": state.observation(seat), "action_mask": state.legal_mask()}
    infoset = InformationSet(state, seat, np.random.default_rng(0))
    assert agent.act(obs, infoset) in state.legal_actions()

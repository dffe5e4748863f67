"""HiLo search agent (``pretrained:hilo:search=S``): legal, reproducible, blind to hidden cards."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from spieltisch.agents.arena import play_table
from spieltisch.agents.arena.match import play_game
from spieltisch.agents.base import InformationSet
from spieltisch.agents.hilo.search import HiLoSearchAgent
from spieltisch.agents.neural.policy import PolicyArch, PolicyNet
from spieltisch.agents.registry import make_agent
from spieltisch.envs import make
from spieltisch.envs.hilo.engine import HiLoGame


def random_state(game: HiLoGame, seed: int, moves: int):
    """A state after ``moves`` random actions (or earlier, if the game ends)."""
    rng = np.random.default_rng(seed)
    state = game.new_initial_state(seed)
    for _ in range(moves):
        if state.is_terminal():
            break
        state.apply(int(rng.choice(state.legal_actions())))
    return state


def untrained_net(game: HiLoGame, seed: int = 0) -> PolicyNet:
    torch.manual_seed(seed)
    return PolicyNet(PolicyArch(game.observation_size, game.num_actions, (32,)))


def test_registry_builds_the_search_agent_and_checks_parameters() -> None:
    agent = make_agent("pretrained:hilo:search=4", "hilo", seed=0)
    assert isinstance(agent, HiLoSearchAgent) and agent.samples == 4
    agent = make_agent("pretrained:hilo:search=2,weight=0.5", "hilo", seed=0)
    assert agent.value_weight == 0.5 and agent.name == "pretrained:hilo:search=2,weight=0.5"
    with pytest.raises(ValueError, match="positive integer"):
        make_agent("pretrained:hilo:search=0", "hilo")
    with pytest.raises(ValueError, match="'search' and 'weight'"):
        make_agent("pretrained:hilo:search=2,leaves=10", "hilo")
    with pytest.raises(ValueError, match="'weight' is for HiLo search"):
        make_agent("pretrained:kalaha:search=2,weight=1", "kalaha")
    # (a NaN weight was accepted and then forfeited every game; true was read as 1.0)
    for weight in ("nan", "inf", "abc", "true"):
        with pytest.raises(ValueError, match="weight must be a"):
            make_agent(f"pretrained:hilo:search=2,weight={weight}", "hilo")
    with pytest.raises(ValueError, match="weight must be a finite number"):
        HiLoSearchAgent(untrained_net(HiLoGame()), {}, 2, value_weight=float("nan"))


def test_search_plays_only_legal_moves_and_is_reproducible() -> None:
    # the arena raises AgentFailure on an illegal action or an exception of an agent
    runs = [play_table("hilo", ["pretrained:hilo:search=2", "random"], seeds=2, seed=5)]
    runs.append(play_table("hilo", ["pretrained:hilo:search=2", "random"], seeds=2, seed=5))
    assert all(r.error is None for r in runs[0]) and len(runs[0]) == 4
    assert [(r.rewards, r.moves) for r in runs[0]] == [(r.rewards, r.moves) for r in runs[1]]
    # the same seed gives the same moves, move by move
    env = make("hilo")
    moves = []
    for _ in range(2):
        agents = {
            "player_0": make_agent("pretrained:hilo:search=2", "hilo", seed=3),
            "player_1": make_agent("random", "hilo", seed=4),
        }
        moves.append(play_game(env, agents, seed=9).moves)
    assert moves[0] == moves[1]


@pytest.mark.parametrize("players", [3, 4])
def test_search_with_more_players(players: int) -> None:
    game = HiLoGame(num_players=players)
    agent = HiLoSearchAgent(untrained_net(game), {"num_players": players}, samples=2, seed=0)
    env = make("hilo", num_players=players)
    agents = {a: make_agent("random", "hilo", seed=i) for i, a in enumerate(env.possible_agents)}
    agents["player_1"] = agent
    record = play_game(env, agents, seed=2)  # play_game's env raises on an illegal action
    assert sum(1 for name, _ in record.moves if name == "player_1") > 5


def test_leaf_values_do_not_depend_on_hidden_cards() -> None:
    """The value head is fed what the player to move would observe: resampling everything that
    player cannot see (face-down cards, pile order, ...) leaves every leaf value unchanged."""
    game = HiLoGame()
    agent = HiLoSearchAgent(untrained_net(game), {"num_players": 2}, samples=2, seed=0)
    checked = 0
    for seed in range(20):
        state = random_state(game, seed, moves=10 + seed)
        if state.is_terminal():
            continue
        mover = state.current_player
        other = state.sample_consistent(mover, seed)
        hidden = ~state.face_up(0)
        assert hidden.any() and not np.array_equal(state.layout(0), other.layout(0))
        for seat in range(2):  # one state per call: batched rows may differ in the last bit
            assert agent.leaf_values([state], seat) == agent.leaf_values([other], seat)
        checked += 1
    assert checked >= 10


def test_action_depends_only_on_the_information_set_and_seed() -> None:
    """Two real states that differ only in hidden cards give information sets that the agent
    cannot tell apart; with a sampler that ignores the real arrangement (the same stand-in) the
    same seed gives the same action, and the scores are the same."""
    game = HiLoGame()
    net = untrained_net(game)
    for seed in range(6):
        state = random_state(game, seed, moves=6 + 3 * seed)
        if state.is_terminal():
            continue
        seat = state.current_player
        twin = state.sample_consistent(seat, 100 + seed)  # same knowledge, other hidden cards
        assert twin.view(seat) == state.view(seat)
        infos = [InformationSet(s, seat, np.random.default_rng(7)) for s in (state, twin)]
        infos[1]._stand_in = infos[0]._stand_in.clone()  # the sampler's input, made equal
        obs = {"observation": state.observation(seat), "action_mask": state.legal_mask()}
        assert np.array_equal(obs["observation"], twin.observation(seat))
        actions = [
            HiLoSearchAgent(net, {"num_players": 2}, samples=3, seed=11).act(obs, info)
            for info in infos
        ]
        assert actions[0] == actions[1]


def test_a_per_seat_value_head_gives_each_seat_its_own_value() -> None:
    """With one value output per seat (AlphaZero's ``value_per_seat``) a leaf is worth the
    output of the agent's seat, counted from the player to move there."""
    game = HiLoGame(num_players=4)
    torch.manual_seed(2)
    net = PolicyNet(PolicyArch(game.observation_size, game.num_actions, (32,), value_outputs=4))
    agent = HiLoSearchAgent(net, {"num_players": 4}, samples=2, seed=0)
    states = [random_state(game, seed, moves=6 + seed) for seed in range(6)]
    states = [s for s in states if not s.is_terminal()]
    obs = torch.from_numpy(np.stack([s.observation(s.current_player) for s in states]))
    with torch.no_grad():
        outputs = net.seat_values(obs).numpy()
    for seat in range(4):
        got = agent.leaf_values(states, seat)
        own = [(seat - s.current_player) % 4 for s in states]
        np.testing.assert_allclose(got, outputs[np.arange(len(states)), own], rtol=1e-6)
    assert len({s.current_player for s in states}) > 1  # several movers seen


def test_the_value_weight_defaults_to_the_one_the_checkpoint_recommends(tmp_path) -> None:
    from spieltisch.agents.neural.checkpoint import save_checkpoint

    game = HiLoGame()
    net = untrained_net(game)
    tensors = {f"model.{k}": v for k, v in net.state_dict().items()}
    base = {"game": "hilo", "game_options": {"num_players": 2}, "arch": net.arch.to_json()}
    save_checkpoint(tmp_path / "plain", base, tensors)
    save_checkpoint(tmp_path / "tuned", {**base, "search_value_weight": 2.0}, tensors)
    plain = make_agent(f"checkpoint:{tmp_path / 'plain'}:search=2", "hilo")
    tuned = make_agent(f"checkpoint:{tmp_path / 'tuned'}:search=2", "hilo")
    given = make_agent(f"checkpoint:{tmp_path / 'tuned'}:search=2,weight=0", "hilo")
    assert (plain.value_weight, tuned.value_weight, given.value_weight) == (0.5, 2.0, 0.0)

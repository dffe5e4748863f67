"""Neural policies: masking never gives an illegal action or a NaN; agents play legal moves."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from spieltisch.agents.arena.match import play_game
from spieltisch.agents.neural.policy import (
    MASKED_LOGIT,
    SIGMOID_TANH_MIN_SIZE,
    ArrayPolicy,
    NeuralAgent,
    PolicyArch,
    PolicyNet,
    masked_logits,
    sample_masked,
    tanh,
)
from spieltisch.agents.registry import make_agent
from spieltisch.envs import make


def random_masks(rng: np.random.Generator, n: int, a: int) -> np.ndarray:
    masks = (rng.random((n, a)) < rng.random((n, 1))).astype(np.int8)
    # every row keeps at least one legal action; many keep exactly one
    only = rng.integers(0, a, size=n)
    single = rng.random(n) < 0.3
    masks[single] = 0
    masks[np.arange(n), only] = 1
    return masks


def test_masked_distribution_has_no_nan_and_no_illegal_mass() -> None:
    rng = np.random.default_rng(0)
    torch.manual_seed(0)
    arch = PolicyArch(observation_size=10, num_actions=7, hidden=(16,))
    net = PolicyNet(arch)
    obs = torch.from_numpy(rng.normal(size=(500, 10)).astype(np.float32) * 100)
    masks = random_masks(rng, 500, 7)
    logits, value = net(obs, torch.from_numpy(masks))
    logp = torch.log_softmax(logits, dim=-1)
    probs = logp.exp()
    entropy = -(probs * logp).sum(-1)
    assert torch.isfinite(logits).all() and torch.isfinite(logp).all()
    assert torch.isfinite(entropy).all() and torch.isfinite(value).all()
    assert (probs[torch.from_numpy(masks) == 0] == 0).all()
    # exactly one legal action: probability 1, entropy 0
    single = masks.sum(1) == 1
    assert torch.allclose(probs[single].max(-1).values, torch.ones(int(single.sum())))
    # gradients stay finite too
    (logp.gather(1, torch.from_numpy(masks.argmax(1))[:, None]).sum() + entropy.sum()).backward()
    assert all(p.grad is None or torch.isfinite(p.grad).all() for p in net.parameters())


def test_extreme_logits_still_pick_legal_actions() -> None:
    rng = np.random.default_rng(1)
    masks = random_masks(rng, 2000, 6)
    raw = torch.from_numpy(rng.normal(size=(2000, 6)) * 1e6).float()
    raw[:, 0] = 1e30  # an illegal action with a huge logit must still be excluded
    logits = masked_logits(raw, torch.from_numpy(masks)).numpy().astype(np.float64)
    for greedy in (False, True):
        actions = sample_masked(logits, rng, greedy=greedy)
        assert (masks[np.arange(2000), actions] == 1).all()
    assert -np.inf < MASKED_LOGIT


@pytest.mark.parametrize(
    ("game", "options"), [("kalaha", {"pits": 4, "seeds": 3}), ("hus", {}), ("hilo", {})]
)
def test_untrained_neural_agent_plays_legal_games(game: str, options: dict) -> None:
    from spieltisch.envs import make_batch

    games = make_batch(game, 1, **options)
    torch.manual_seed(0)
    (size,) = games.observation_shape
    arch = PolicyArch(size, games.num_actions, (32,), games.observation_scale)
    env = make(game, **options)
    for greedy in (True, False):
        agents = {
            a: NeuralAgent(PolicyNet(arch), seed=i, greedy=greedy)
            for i, a in enumerate(env.possible_agents)
        }
        record = play_game(env, agents, seed=3)
        assert record.num_moves > 0


def test_registry_rejects_unknown_prefixed_agents(tmp_path) -> None:
    with pytest.raises(ValueError, match="no pretrained agent 'hilo_3p'"):
        make_agent("pretrained:hilo", "hilo", game_options={"num_players": 3})
    with pytest.raises(ValueError, match="does not exist"):
        make_agent(f"checkpoint:{tmp_path / 'nothing'}", "kalaha")
    with pytest.raises(ValueError, match="not for"):
        make_agent("pretrained:hus", "kalaha")
    with pytest.raises(ValueError, match=r"algo= takes \['td', 'td_features', 'td_long'\]"):
        make_agent("pretrained:backgammon:algo=nope", "backgammon")


def test_prefixed_agent_parameters_may_follow_colons_as_well_as_commas() -> None:
    """``pretrained:backgammon:algo=td_long:ply=2`` is ``...:algo=td_long,ply=2`` (the colon
    form used to name a game ``backgammon:algo=td_long``)."""
    colon = make_agent("pretrained:backgammon:algo=td_features:ply=2,keep=3", "backgammon")
    comma = make_agent("pretrained:backgammon:algo=td_features,ply=2,keep=3", "backgammon")
    assert (colon.ply, colon.keep) == (comma.ply, comma.keep) == (2, 3)
    assert colon.params.keys() == comma.params.keys()
    for name in colon.params:  # the features net, not the default one
        assert np.array_equal(colon.params[name], comma.params[name])
    assert "rb1" in colon.params
    with pytest.raises(ValueError, match="'algo' is given twice"):
        make_agent("pretrained:backgammon:algo=td_features:algo=td_long", "backgammon")


def test_pretrained_kalaha_picks_the_agent_of_the_board() -> None:
    """Kalah(6,4) has its own shipped agent (the board the solver judges from the start)."""
    from spieltisch.agents.neural.agents import pretrained_name

    assert pretrained_name("kalaha", {}) == "kalaha"
    assert pretrained_name("kalaha", {"seeds": 6}) == "kalaha"
    assert pretrained_name("kalaha", {"seeds": 4}) == "kalaha_6x4"
    agent = make_agent("pretrained:kalaha", "kalaha", game_options={"seeds": 4})
    env = make("kalaha", seeds=4)
    record = play_game(env, {"player_0": agent, "player_1": make_agent("random", "kalaha")}, seed=1)
    assert record.num_moves > 0
    with pytest.raises(ValueError, match="rules"):
        make_agent("pretrained:kalaha", "kalaha", game_options={"seeds": 4, "rules": "standard"})


def test_a_per_seat_value_head_reads_the_movers_value_first() -> None:
    torch.manual_seed(3)
    arch = PolicyArch(observation_size=6, num_actions=3, hidden=(8,), value_outputs=4)
    assert PolicyArch.from_json(arch.to_json()) == arch
    older = {k: v for k, v in arch.to_json().items() if k != "value_outputs"}
    assert PolicyArch.from_json(older).value_outputs == 1  # checkpoints before the field
    for bad in (0, 5, 1.5, True):
        with pytest.raises(ValueError, match="value_outputs must be an integer from 1 to 4"):
            PolicyArch.from_json({**arch.to_json(), "value_outputs": bad})
    net = PolicyNet(arch)
    obs, mask = torch.randn(5, 6), torch.ones(5, 3, dtype=torch.int8)
    logits, seats = net.forward_seats(obs, mask)
    assert seats.shape == (5, 4) and (seats.abs() < 1).all()
    plain_logits, value = net(obs, mask)
    assert torch.equal(plain_logits, logits) and torch.equal(value, seats[:, 0])
    assert torch.allclose(net.value(obs), seats[:, 0])


def test_fast_tanh_is_torch_tanh_within_2e7_and_has_its_gradient() -> None:
    """The CPU tanh of the networks (``2 sigmoid(2x) - 1``) against ``torch.tanh``: values over
    the whole range (saturated ends, the steep middle, exact 0), and the gradient."""
    x = torch.cat([torch.linspace(-20, 20, 400_001), torch.tensor([0.0, 1e-30, -1e-30])])
    assert (tanh(x) - torch.tanh(x)).abs().max() <= 2.5e-7
    assert tanh(x)[-3].item() == 0.0
    # small tensors (an opponent's few rows), where one kernel beats three, are torch's tanh
    small = torch.linspace(-5, 5, SIGMOID_TANH_MIN_SIZE - 1)
    assert torch.equal(tanh(small), torch.tanh(small))
    a = x.clone().requires_grad_(True)
    b = x.clone().requires_grad_(True)
    tanh(a).pow(3).sum().backward()
    torch.tanh(b).pow(3).sum().backward()
    assert torch.allclose(a.grad, b.grad, atol=2e-6)
    # inference (no autograd function) gives the same values as training
    with torch.no_grad():
        inference = tanh(x)
    assert torch.equal(inference, tanh(x.clone().requires_grad_(True)).detach())


def test_policy_net_matches_the_same_net_with_torch_tanh(monkeypatch) -> None:
    """A PolicyNet's outputs and parameter gradients with the fast tanh equal those with
    ``torch.tanh`` up to float32 rounding (residual blocks included)."""
    import spieltisch.agents.neural.policy as policy

    torch.manual_seed(0)
    net = PolicyNet(PolicyArch(14, 6, (64, 64), 6.0, residual_blocks=1))
    obs = torch.rand(256, 14) * 12
    mask = torch.ones(256, 6, dtype=torch.int8)

    def outputs_and_grads() -> list[torch.Tensor]:
        net.zero_grad()
        logits, value = net(obs, mask)
        (logits.logsumexp(-1).sum() + value.pow(2).sum()).backward()
        return [logits.detach(), value.detach(), *(p.grad.clone() for p in net.parameters())]

    fast = outputs_and_grads()
    monkeypatch.setattr(policy, "tanh", torch.tanh)
    exact = outputs_and_grads()
    for a, b in zip(fast, exact, strict=True):
        assert torch.allclose(a, b, rtol=1e-4, atol=1e-5), (a - b).abs().max()


@pytest.mark.parametrize(
    "arch",
    [
        PolicyArch(14, 6, (32, 32), 6.0),
        PolicyArch(14, 6, (32,), 6.0, count_bins=8, residual_blocks=2, value_outputs=2),
    ],
)
def test_array_policy_is_the_nets_forward_pass(arch: PolicyArch) -> None:
    """``ArrayPolicy`` (numpy, for acting) gives the net's logits and values up to float32
    rounding (count one-hots and residual blocks included), sees the net's later weight
    updates, and stacked over several nets gives slice k net k's outputs on its rows."""
    torch.manual_seed(1)
    nets = [PolicyNet(arch) for _ in range(3)]
    for net in nets:  # sharper policies than the near-uniform initial ones
        torch.nn.init.normal_(net.policy_head.weight, std=1.0)
    obs = torch.randint(0, 12, (3, 5, 14)).float()
    mask = torch.from_numpy(random_masks(np.random.default_rng(2), 15, 6)).reshape(3, 5, 6)

    def close(array: np.ndarray, tensor: torch.Tensor) -> bool:
        return np.allclose(array, tensor.detach().numpy(), rtol=1e-5, atol=1e-5)

    single = ArrayPolicy(nets[:1])
    logits, values = single.forward_seats(obs[0].numpy(), mask[0].numpy())
    want_logits, want_values = nets[0].forward_seats(obs[0], mask[0])
    assert close(logits, want_logits) and close(values, want_values)
    assert (logits[mask[0].numpy() == 0] == MASKED_LOGIT).all()
    with torch.no_grad():  # an optimizer step changes the parameters in place
        for parameter in nets[0].parameters():
            parameter.add_(0.1)
    logits, values = single.forward_seats(obs[0].numpy(), mask[0].numpy())
    assert close(logits, nets[0].forward_seats(obs[0], mask[0])[0])

    logits, values = ArrayPolicy(nets).forward_seats(obs.numpy(), mask.numpy())
    for k, net in enumerate(nets):
        own_logits, own_values = net.forward_seats(obs[k], mask[k])
        assert close(logits[k], own_logits) and close(values[k], own_values)
    assert not np.allclose(logits[1], logits[2])  # the nets differ, and so do their slices
    with pytest.raises(ValueError, match="one architecture"):
        ArrayPolicy([nets[0], PolicyNet(PolicyArch(14, 6, (16,), 6.0))])
    with pytest.raises(ValueError, match="at least one"):
        ArrayPolicy([])


@pytest.mark.parametrize(
    ("name", "game", "options"),
    [
        ("pretrained:kalaha:algo=ppo,search=4", "kalaha", {"seeds": 4}),
        ("pretrained:hus:algo=alphazero_moves", "hus", {}),
        ("pretrained:backgammon:algo=td_long", "backgammon", {}),
    ],
)
def test_a_shipped_agent_beside_the_default_keeps_its_algo_in_its_name(name, game, options):
    # play and the arena showed pretrained:kalaha:search=4 for both of two different agents
    assert make_agent(name, game, seed=0, game_options=options).name == name

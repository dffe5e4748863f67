"""Who plays the seats the learner does not: opponents over the batched games.

Every opponent answers one call, ``actions(games, idx, obs, mask, mover, rng)``: the actions of
games ``idx`` (their observations, masks and movers given), drawn with ``rng`` where they are
random. Three kinds:

* :class:`RandomOpponent` -- a uniformly random legal move;
* :class:`PolicyOpponent` -- a network (a past snapshot of the learner, or any trained policy),
  sampling from its masked policy (``greedy=False``) or playing its most likely move;
* :class:`ScriptedOpponent` -- any agent of the arena by name (``greedy``, ``alphabeta:depth=2``,
  ``heuristic``, ``pubeval``, ...), called game by game with what the arena would give it (the
  engine state in perfect-information games, an information set of its seat in HiLo).

The training loop, its evaluations and distributed rollout workers all use these, so an
opponent behaves the same everywhere.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from spieltisch.agents.neural.policy import PolicyNet, sample_masked


def policy_step(
    net: PolicyNet, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator, greedy: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Actions, their log-probabilities and the values for a batch of positions."""
    with torch.inference_mode():  # as no_grad, with less bookkeeping per op (small batches)
        logits, value = net(torch.from_numpy(obs), torch.from_numpy(mask))
        logp_all = torch.log_softmax(logits, dim=-1)
    actions = sample_masked(logits.numpy().astype(np.float64), rng, greedy)
    logp = logp_all.numpy()[np.arange(len(actions)), actions]
    return actions, logp, value.numpy()


def random_step(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of ``mask``."""
    return sample_masked(np.where(mask > 0, 0.0, -1e9), rng)


class RandomOpponent:
    name = "random"

    def actions(self, games: Any, idx, obs, mask, mover, rng: np.random.Generator) -> np.ndarray:
        return random_step(mask, rng)


class PolicyOpponent:
    def __init__(self, net: PolicyNet, greedy: bool = False, name: str = "policy") -> None:
        self.net = net.eval()
        self.greedy = greedy
        self.name = name

    def actions(self, games: Any, idx, obs, mask, mover, rng: np.random.Generator) -> np.ndarray:
        return policy_step(self.net, obs, mask, rng, self.greedy)[0]


class ScriptedOpponent:
    """An arena agent playing in the batched games, one game at a time (so it is as slow as
    the agent: keep search depths small for training)."""

    def __init__(self, name: str, game: str, game_options: dict[str, Any]) -> None:
        from spieltisch.agents.registry import make_agent
        from spieltisch.envs import perfect_information

        self.name = name
        self.agent = make_agent(name, game, seed=0, game_options=game_options)
        self.perfect_information = perfect_information(game)

    def reseed(self, rng: np.random.Generator) -> None:
        """Draw the agent's seed from ``rng``: a resumed run replays the same opponent moves."""
        self.agent.reset(int(rng.integers(0, 2**31)))

    def actions(self, games: Any, idx, obs, mask, mover, rng: np.random.Generator) -> np.ndarray:
        from spieltisch.agents.base import InformationSet

        out = np.zeros(len(idx), dtype=np.int64)
        for k, g in enumerate(idx):
            state = games.state(int(g))
            if not self.perfect_information:
                state = InformationSet(state, int(mover[k]), rng)
            observation = {"observation": obs[k], "action_mask": mask[k]}
            out[k] = self.agent.act(observation, state)
        return out


Opponent = RandomOpponent | PolicyOpponent | ScriptedOpponent

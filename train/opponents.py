"""Who plays the seats the learner does not: opponents over the batched games.

Every opponent answers one call, ``actions(games, idx, obs, mask, mover, rng)``: the actions of
games ``idx`` (their observations, masks and movers given), drawn with ``rng`` where they are
random. Three kinds:

* :class:`RandomOpponent` -- a uniformly random legal move;
* :class:`PoolMember` -- one of the networks of a :class:`PolicyPool` (the learner's past
  snapshots), sampling from its masked policy; :func:`opponent_actions` plays all members of
  a pool in one forward pass;
* :class:`ScriptedOpponent` -- any agent of the arena by name (``greedy``, ``alphabeta:depth=2``,
  ``heuristic``, ``pubeval``, ...), called game by game with what the arena would give it (the
  engine state in perfect-information games, an information set of its seat in HiLo); the
  mancala searches answer all their games in one compiled call.

The training loop, its evaluations and distributed rollout workers all use these, so an
opponent behaves the same everywhere.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from spieltisch.agents.neural.policy import ArrayPolicy, PolicyNet, sample_masked


def policy_step(
    net: PolicyNet | ArrayPolicy,
    obs: np.ndarray,
    mask: np.ndarray,
    rng: np.random.Generator,
    greedy: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Actions, their log-probabilities and the mover's values for a batch of positions, by
    the net's forward pass in numpy (:class:`ArrayPolicy`: a loop that acts many times builds
    it once and passes it)."""
    policy = net if isinstance(net, ArrayPolicy) else ArrayPolicy([net])
    logits, values = policy.forward_seats(obs, mask)
    logits = logits.astype(np.float64)
    actions = sample_masked(logits, rng, greedy)
    chosen = logits[np.arange(len(actions)), actions]
    top = logits.max(axis=1)
    logp = chosen - top - np.log(np.exp(logits - top[:, None]).sum(axis=1))  # log softmax
    return actions, logp.astype(np.float32), values[:, 0]


def random_step(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A uniformly random legal action per row of ``mask``."""
    return sample_masked(np.where(mask > 0, 0.0, -1e9), rng)


class RandomOpponent:
    name = "random"

    def actions(self, games: Any, idx, obs, mask, mover, rng: np.random.Generator) -> np.ndarray:
        return random_step(mask, rng)


class PolicyPool:
    """Networks of one architecture that sample their moves together: one stacked forward
    pass (:class:`~spieltisch.agents.neural.policy.ArrayPolicy`) for every member's rows (each
    member's rows padded to the most any member has), where one pass per member cost K times
    the fixed cost of a small forward pass."""

    def __init__(self, nets: list[PolicyNet]) -> None:
        self.stacked = ArrayPolicy(nets)
        self.size = len(nets)

    def members(self) -> list[PoolMember]:
        return [PoolMember(self, k) for k in range(self.size)]

    def actions(self, obs: np.ndarray, mask: np.ndarray, member: np.ndarray, rng) -> np.ndarray:
        """Row i sampled from the policy of member ``member[i]``."""
        order = np.argsort(member, kind="stable")
        counts = np.bincount(member, minlength=self.size)
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        slot = np.empty(len(member), dtype=np.int64)  # each row's place among its member's rows
        slot[order] = np.arange(len(member)) - starts[member[order]]
        rows = int(counts.max())
        padded_obs = np.zeros((self.size, rows, obs.shape[1]), dtype=obs.dtype)
        padded_mask = np.ones((self.size, rows, mask.shape[1]), dtype=mask.dtype)
        padded_obs[member, slot] = obs
        padded_mask[member, slot] = mask
        logits, _ = self.stacked.forward_seats(padded_obs, padded_mask)
        return sample_masked(logits[member, slot].astype(np.float64), rng)


class PoolMember:
    """Member ``index`` of a :class:`PolicyPool`, as an opponent of its own (sampling)."""

    def __init__(self, pool: PolicyPool, index: int, name: str = "policy") -> None:
        self.pool = pool
        self.index = index
        self.name = name

    def actions(self, games: Any, idx, obs, mask, mover, rng: np.random.Generator) -> np.ndarray:
        return self.pool.actions(obs, mask, np.full(len(idx), self.index), rng)


class ScriptedOpponent:
    """An arena agent playing in the batched games, one game at a time (so it is as slow as
    the agent: keep search depths small for training). The mancala searches (``greedy``,
    ``alphabeta:depth=N``) read the batch's boards and answer all games in one compiled call
    (:meth:`~spieltisch.agents.mancala.alphabeta.MancalaSearchAgent.act_boards`)."""

    def __init__(self, name: str, game: str, game_options: dict[str, Any]) -> None:
        from spieltisch.agents.registry import make_agent
        from spieltisch.envs import perfect_information

        self.name = name
        self.agent = make_agent(name, game, seed=0, game_options=game_options)
        self.perfect_information = perfect_information(game)
        self.batched = hasattr(self.agent, "act_boards") and self.agent.time_limit is None

    def reseed(self, rng: np.random.Generator) -> None:
        """Draw the agent's seed from ``rng``: a resumed run replays the same opponent moves."""
        self.agent.reset(int(rng.integers(0, 2**31)))

    def actions(self, games: Any, idx, obs, mask, mover, rng: np.random.Generator) -> np.ndarray:
        from spieltisch.agents.base import InformationSet

        if self.batched and hasattr(games, "boards"):  # a mancala search: one compiled call
            return self.agent.act_boards(games.boards[idx], mover, mask)
        out = np.zeros(len(idx), dtype=np.int64)
        for k, g in enumerate(idx):
            state = games.state(int(g))
            if not self.perfect_information:
                state = InformationSet(state, int(mover[k]), rng)
            observation = {"observation": obs[k], "action_mask": mask[k]}
            out[k] = self.agent.act(observation, state)
        return out


Opponent = RandomOpponent | PoolMember | ScriptedOpponent


def scripted_opponents(cfg: Any) -> list[ScriptedOpponent]:
    """The permanent baseline opponents of a training config (``pool_baselines``, arena names),
    built once per trainer or worker and reseeded from the run's generator each iteration."""
    return [ScriptedOpponent(name, cfg.game, dict(cfg.game_options)) for name in cfg.pool_baselines]


def opponent_actions(
    opponents: list[Opponent],
    which: np.ndarray,
    games: Any,
    idx: np.ndarray,
    obs: np.ndarray,
    mask: np.ndarray,
    mover: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    """The actions of games ``idx``, game i played by ``opponents[which[i]]``: each opponent
    answers for its games, the members of one :class:`PolicyPool` all in one call."""
    out = np.zeros(len(idx), dtype=np.int64)
    member = np.zeros(len(idx), dtype=np.int64)  # the pool member playing each pooled row
    pooled: dict[int, tuple[PolicyPool, list[np.ndarray]]] = {}
    for k in np.unique(which):
        rows = np.flatnonzero(which == k)
        opponent = opponents[k]
        if isinstance(opponent, PoolMember):  # answered below, with its pool's other members
            member[rows] = opponent.index
            pooled.setdefault(id(opponent.pool), (opponent.pool, []))[1].append(rows)
        else:
            out[rows] = opponent.actions(games, idx[rows], obs[rows], mask[rows], mover[rows], rng)
    for pool, parts in pooled.values():
        rows = np.concatenate(parts)
        out[rows] = pool.actions(obs[rows], mask[rows], member[rows], rng)
    return out

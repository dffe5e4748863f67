"""Search at play time for HiLo over a trained network: ``pretrained:hilo:search=16``.

HiLo hides cards, so the minimax of :mod:`spieltisch.agents.neural.value_search` does not
apply. This agent searches the way the ``heuristic`` baseline samples (information-set
sampling), but looks to the end of its own turn and scores the result by coins plus the
network's value head:

1. Draw ``samples`` full states consistent with what the seat knows
   (:meth:`~spieltisch.agents.base.InformationSet.sample`; the real hidden cards are never seen).
2. In every sample, play each legal action and, where the same player decides again in this
   turn (take or draw, then place or discard-and-reveal; a wizard's two steps; a phoenix reveal),
   each follow-up decision (``expand=1``: one follow-up level, as the heuristic looks one
   decision further); any later decisions of the own turn (rare: effects after a follow-up) are
   played by the policy head's most likely action, so every leaf is the end of the own turn.
3. Score each end-of-turn position (a *leaf*) from the agent's side::

       score = coins + value_weight * value

   ``coins``: the agent's coins minus the mean of the others' (the ``coins`` reward), on the
   sampled layouts, face-down cards counted at their sampled values (as the heuristic does; the
   average over samples is an expectation). ``value``: the value head, fed the observation of the
   player to move at the leaf (``state.observation(mover)``: what that seat would see there; no
   face-down card, nobody else's drawn card, no pile order). The head predicts the mover's final
   reward; the coins reward is zero-sum, so with 2 players the agent's value is minus the
   mover's, and with ``n`` players the agent takes ``-value / (n - 1)`` (the mover's loss shared
   equally by the others: a rough guess). A network with one value output per seat (AlphaZero's
   ``value_per_seat``) gives the agent's own seat's value instead. A finished game is scored
   exactly in the reward the network was trained on (the checkpoint's ``reward`` option, the
   env's default ``win`` when it names none: the seat's result; ``coins``: its coins reward,
   clipped to the head's range [-1, 1]; a per-seat head, learnt from results: the seat's
   result).
4. Follow-up decisions are taken by the same score, but *without clairvoyance*: follow-up
   positions that the agent cannot tell apart (the same actions so far and the same
   observation of the seat, across samples) share one choice, the one with the best mean score
   over them; a leaf's card turned up by a reveal is therefore not known before choosing.
5. The action with the best mean score over the samples is played; ties go to the action the
   policy head prefers. Deterministic given the agent's seed.

Why this blend: the PPO net's value head alone is a weak evaluator (it was trained on coin
differences far outside its [-1, 1] range). Measured with that net (then ``pretrained:hilo``,
now ``pretrained:hilo:algo=ppo``) against ``heuristic``, 100 games each (``spieltisch eval hilo
--agents pretrained:hilo:algo=ppo,search=16,weight=W heuristic --seeds 50``),
wins / draws / losses: ``weight=0`` (coins only; the net still breaks ties and plays deeper
follow-ups) 70 / 13 / 17, ``weight=0.5`` 80 / 8 / 12, ``weight=2`` 66 / 12 / 22, value only
(``weight=1000``) 55 / 12 / 33; the raw policy wins 16.9%. Hence the default ``weight=0.5``
(:data:`DEFAULT_VALUE_WEIGHT`). Over 1,000 games (``--seeds 500``) the difference is small:
``weight=0.5`` 738 / 80 / 182, ``weight=0`` 725 / 79 / 196, so most of the strength is the
search's, not the value head's (``agents/pretrained/hilo_ppo.json``). The AlphaZero network
that is now ``pretrained:hilo`` (its value head predicts the result) records the weight chosen
for it, ``search_value_weight`` = 2 in its metadata, which :func:`hilo_search_agent` uses when
``weight`` is not given.
Cost: about 1 s of CPU per game with 16 samples (2 players).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from spieltisch.agents.base import Agent, InformationSet, legal_actions_of
from spieltisch.agents.neural.policy import PolicyNet
from spieltisch.agents.neural.value_search import choose_searched_action
from spieltisch.envs import options_with_defaults
from spieltisch.envs.hilo.engine import coins_rewards

#: coins one unit of the value head is worth in the leaf score (see the module docstring)
DEFAULT_VALUE_WEIGHT = 0.5

#: the most samples a move (``search=N``): a tenth of ``search=10000``'s 14 GB and 76 s at
#: the worst move of a game (``search=10**12`` would never have moved)
MAX_SEARCH_SAMPLES = 1000


class HiLoSearchAgent(Agent):
    """Information-set sampling to the end of the own turn, leaves scored by coins plus the
    network's value (see the module docstring)."""

    def __init__(
        self,
        net: PolicyNet,
        game_options: dict[str, Any],
        samples: int = 16,
        value_weight: float = DEFAULT_VALUE_WEIGHT,
        expand: int = 1,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed)
        if not isinstance(samples, int) or isinstance(samples, bool) or samples < 1:
            raise ValueError(f"search samples must be a positive integer, got {samples!r}")
        if samples > MAX_SEARCH_SAMPLES:
            raise ValueError(
                f"search samples must be at most {MAX_SEARCH_SAMPLES:,} per move, got {samples!r}"
            )
        self.net = net.eval()
        self.num_players = int(game_options.get("num_players", 2))
        # the reward the value head learnt: a record without one was trained on the env's default
        # ("win"; assuming "coins" valued a 3-4 player loss with more coins than the mean as > 0)
        self.reward = str(options_with_defaults("hilo", game_options)["reward"])
        self.samples = samples
        if isinstance(value_weight, bool) or not isinstance(value_weight, int | float):
            raise ValueError(f"weight must be a number, got {value_weight!r}")
        if not math.isfinite(value_weight):
            raise ValueError(f"weight must be a finite number, got {value_weight!r}")
        if value_weight < 0:  # (it played for the results its value head rates worst)
            raise ValueError(f"weight must be at least 0 (0: coins alone), got {value_weight!r}")
        self.value_weight = float(value_weight)
        self.expand = int(expand)
        self.name = f"search{samples}"

    # --- leaves -------------------------------------------------------------------------------
    def _exact(self, state: Any, seat: int) -> float:
        """The finished game's result for ``seat`` in the network's reward."""
        if self.reward == "win" or self.net.arch.value_outputs > 1:
            return float(state.returns()[seat])
        return _coins_reward(state, seat)

    def leaf_values(self, states: list[Any], seat: int) -> np.ndarray:
        """The value head's estimate of ``seat``'s final reward at each state, from the
        observation of the player to move there (exact, clipped to [-1, 1], when finished)."""
        out = np.zeros(len(states))
        rows, obs = [], []
        for k, s in enumerate(states):
            if s.is_terminal():
                out[k] = float(np.clip(self._exact(s, seat), -1.0, 1.0))
            else:
                rows.append(k)
                obs.append(s.observation(s.current_player))
        if not rows:
            return out
        movers = np.array([states[k].current_player for k in rows])
        x = torch.from_numpy(np.stack(obs))
        with torch.no_grad():
            if self.net.arch.value_outputs > 1:  # one per seat, from the mover on
                own = (seat - movers) % self.num_players
                values = self.net.seat_values(x).numpy().astype(np.float64)
                out[rows] = values[np.arange(len(rows)), own]
                return out
            v = self.net.value(x).numpy().astype(np.float64)
        share = -1.0 / (self.num_players - 1)
        out[rows] = np.where(movers == seat, v, share * v)
        return out

    def leaf_scores(self, states: list[Any], seat: int) -> np.ndarray:
        coins = np.array([_coins_reward(s, seat) for s in states])
        if self.value_weight == 0.0:
            return coins
        return coins + self.value_weight * self.leaf_values(states, seat)

    # --- search -------------------------------------------------------------------------------
    def action_scores(self, legal: np.ndarray, infoset: InformationSet) -> np.ndarray:
        """Mean score over the samples of every legal action (in the order of ``legal``)."""
        seat = infoset.seat
        # the tree, flat: per node its parent (-1: a root action), action, state, depth
        parent: list[int] = []
        action: list[int] = []
        states: list[Any] = []
        depth: list[int] = []
        root_of: list[int] = []  # index in legal of each depth-1 node
        for _ in range(self.samples):
            sample = infoset.sample(self.rng)
            for i, a in enumerate(legal):
                parent.append(-1)
                action.append(int(a))
                states.append(sample.child(int(a)))
                depth.append(1)
                root_of.append(i)
        children: dict[int, list[int]] = {}
        n = 0
        while n < len(states):  # breadth first: expand own follow-up decisions
            s = states[n]
            if depth[n] <= self.expand and not s.is_terminal() and s.current_player == seat:
                kids = children.setdefault(n, [])
                for a in s.legal_actions():
                    kids.append(len(states))
                    parent.append(n)
                    action.append(a)
                    states.append(s.child(a))
                    depth.append(depth[n] + 1)
            n += 1
        leaves = [i for i in range(len(states)) if i not in children]
        self._finish_turn([states[i] for i in leaves], seat)
        value = np.zeros(len(states))
        value[leaves] = self.leaf_scores([states[i] for i in leaves], seat)
        # back up, deepest first; follow-ups the agent cannot tell apart share one choice
        for d in range(max(depth), 0, -1):
            groups: dict[tuple, list[int]] = {}
            for node in children:
                if depth[node] == d:
                    key = (
                        _path(node, parent, action),
                        states[node].observation(seat).tobytes(),
                        tuple(action[c] for c in children[node]),
                    )
                    groups.setdefault(key, []).append(node)
            for members in groups.values():
                kids = [children[m] for m in members]
                mean = np.mean([[value[c] for c in ks] for ks in kids], axis=0)
                best = int(np.argmax(mean))
                for m, ks in zip(members, kids, strict=True):
                    value[m] = value[ks[best]]
        totals = np.bincount(root_of, weights=value[: len(root_of)], minlength=legal.size)
        return totals / self.samples

    def _finish_turn(self, states: list[Any], seat: int) -> None:
        """Play ``seat``'s remaining decisions of this turn in each state (in place) with the
        policy head's most likely action (from the seat's own observation there)."""
        pending = [s for s in states if not s.is_terminal() and s.current_player == seat]
        for _ in range(4 * 12):  # a turn has at most a few decisions per card
            if not pending:
                return
            obs = torch.from_numpy(np.stack([s.observation(seat) for s in pending]))
            mask = torch.from_numpy(np.stack([s.legal_mask() for s in pending]))
            with torch.no_grad():
                logits, _ = self.net(obs, mask)
            for s, a in zip(pending, logits.argmax(dim=1).tolist(), strict=True):
                s.apply(int(a))
            pending = [s for s in pending if not s.is_terminal() and s.current_player == seat]
        raise RuntimeError("a HiLo turn did not end")  # cannot happen: effects use up cards

    def act(self, observation: dict[str, np.ndarray], state: Any | None = None) -> int:
        legal = legal_actions_of(observation)
        if legal.size == 1:
            return int(legal[0])
        if not isinstance(state, InformationSet):
            raise ValueError(f"{self.name} needs the seat's information set (HiLo)")
        return choose_searched_action(
            self.net, observation, lambda: (legal, self.action_scores(legal, state))
        )


def hilo_search_agent(ckpt: Any, params: dict[str, Any], seed: int | None) -> HiLoSearchAgent:
    """The agent ``pretrained:hilo:search=S[,weight=W]`` of a loaded checkpoint; without
    ``weight``, the one its metadata recommends (``search_value_weight``, chosen for that
    network's value head), else :data:`DEFAULT_VALUE_WEIGHT`."""
    unknown = set(params) - {"search", "weight"}
    if unknown:
        raise ValueError(f"HiLo search takes 'search' and 'weight'; got {sorted(unknown)}")
    weight = params.get("weight", ckpt.meta.get("search_value_weight", DEFAULT_VALUE_WEIGHT))
    return HiLoSearchAgent(
        ckpt.policy(), ckpt.game_options, params["search"], value_weight=weight, seed=seed
    )


def _coins_reward(state: Any, seat: int) -> float:
    """``seat``'s coins minus the mean of the others' (face-down cards at their values)."""
    return float(coins_rewards(state.coins())[seat])


def _path(node: int, parent: list[int], action: list[int]) -> tuple[int, ...]:
    """The actions from the root to ``node``."""
    out = []
    while node >= 0:
        out.append(action[node])
        node = parent[node]
    return tuple(reversed(out))

"""HiLo baselines: ``heuristic`` (and ``greedy``, the same agent with fewer samples).

``heuristic`` chooses by expected coins, estimated by information-set sampling: it draws
``samples`` full states consistent with what its seat knows (:class:`~.base.InformationSet`,
which never holds the real hidden cards), plays each legal action on every sample, and scores
the result as its own coins minus the best opponent's coins (face-down cards counted at the
sampled values, so the average is an expectation over what it cannot see). When the action
leaves the same player to decide again (take or draw a card, then place it; a wizard's first
step), it looks one decision further and takes the best follow-up in that sample. Ties are
broken at random with the agent's own generator. Options: ``heuristic:samples=16``.

``greedy``: ``heuristic:samples=4`` (a cheaper, noisier one-step lookahead).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from spieltisch.agents.base import Agent, InformationSet, legal_actions_of


def _score(state: Any, seat: int) -> float:
    coins = state.coins()
    others = [c for p, c in enumerate(coins) if p != seat]
    return float(coins[seat] - max(others))


#: the most ``samples`` a move: a few seconds (``samples=10**12`` would never have moved)
MAX_SAMPLES = 10_000


class HiLoHeuristicAgent(Agent):
    """Expected-coins lookahead over sampled consistent states (see the module docstring)."""

    def __init__(self, seed: int | None = None, samples: int = 16, name: str = "heuristic"):
        super().__init__(seed)
        if isinstance(samples, bool) or not isinstance(samples, int | np.integer) or samples < 1:
            raise ValueError(f"samples must be a whole number of at least 1, got {samples!r}")
        if samples > MAX_SAMPLES:
            raise ValueError(f"samples must be at most {MAX_SAMPLES:,} per move, got {samples!r}")
        self.samples = int(samples)
        self.name = name

    def _value(self, state: Any, seat: int, action: int, depth: int) -> float:
        child = state.child(action)
        if child.is_terminal() or depth == 0 or child.current_player != seat:
            return _score(child, seat)
        return max(self._value(child, seat, a, depth - 1) for a in child.legal_actions())

    def act(self, observation: dict[str, np.ndarray], state: Any | None = None) -> int:
        legal = legal_actions_of(observation)
        if not isinstance(state, InformationSet):
            # (it played at random here, silently: a user passing agent_state(), None in HiLo,
            # measured a random player under this agent's name)
            raise ValueError(
                f"{self.name} needs the seat's information set (HiLo): pass "
                "spieltisch.agents.arena.match.agent_input(env.unwrapped, agent_name, rng)"
            )
        if legal.size == 1:
            return int(self.rng.choice(legal))
        return self.pick(legal, self.action_totals(legal, state))

    def action_totals(self, legal: np.ndarray, infoset: InformationSet) -> np.ndarray:
        """Every legal action's score (own coins minus the best opponent's after it, with the
        best follow-up) summed over ``samples`` states drawn from ``infoset`` with the agent's
        generator (in the order of ``legal``)."""
        seat = infoset.seat
        totals = np.zeros(legal.size)
        for _ in range(self.samples):
            sample = infoset.sample(self.rng)
            for i, a in enumerate(legal):
                totals[i] += self._value(sample, seat, int(a), 1)
        return totals

    def pick(self, legal: np.ndarray, totals: np.ndarray) -> int:
        """The action :meth:`act` plays for these totals: the best, ties at random."""
        best = np.flatnonzero(totals >= totals.max() - 1e-9)
        return int(legal[self.rng.choice(best)])


def _heuristic(options: dict[str, Any], seed: int | None, samples: int = 16) -> Agent:
    return HiLoHeuristicAgent(seed, samples=samples)


def _greedy(options: dict[str, Any], seed: int | None, samples: int = 4) -> Agent:
    return HiLoHeuristicAgent(seed, samples=samples, name="greedy")


AGENTS = {"heuristic": _heuristic, "greedy": _greedy}

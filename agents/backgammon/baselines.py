"""Backgammon baselines: ``pubeval``, ``gnubg`` and ``greedy``.

All three choose a whole *play* for the roll (among the distinct legal plays,
:meth:`BackgammonState.play_boards`) and then return its checker moves one per call, as the
env asks for them (a turn is several env steps). Cube decisions, if the cube is on: never
double, always take.

* ``pubeval`` -- Tesauro's published linear evaluation ("pubeval", 1993), with its weights as
  data (:mod:`spieltisch.agents.backgammon.pubeval`, ``agents/data/pubeval.json``): the play whose
  resulting position scores highest for the mover (first of equal scores).
* ``gnubg`` -- GNU Backgammon's neural net through :mod:`spieltisch.envs.backgammon.gnubg_adapter`,
  0-ply by default; ``gnubg:plies=1`` (or 2) searches deeper (much slower).
* ``greedy`` -- the play that maximises the pip-count lead (opponent's pips minus own pips after
  the play, so hits count), then fewest own blots; remaining ties at random.

``gnubg`` needs the optional ``gnubg-nn`` package.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from spieltisch.agents.backgammon import pubeval
from spieltisch.agents.base import Agent, legal_actions_of
from spieltisch.envs.backgammon import gnubg_adapter as ga
from spieltisch.envs.backgammon import rules as k


class BackgammonPlayAgent(Agent):
    """Base of agents that pick a whole play; subclasses implement :meth:`choose_play`."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self._plan: list[int] = []
        self._plan_turn: int | None = None
        self._target: np.ndarray | None = None

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._plan = []
        self._target = None

    def choose_play(self, state: Any) -> int:
        """Index into ``state.play_boards()`` of the play to make."""
        raise NotImplementedError

    def act(self, observation: dict[str, np.ndarray], state: Any | None = None) -> int:
        legal = legal_actions_of(observation)
        mask = observation["action_mask"]
        if len(mask) > k.ROLL and mask[k.ROLL]:
            return k.ROLL  # never double
        if len(mask) > k.TAKE and mask[k.TAKE]:
            return k.TAKE  # always take
        turn = state.num_turns() if state is not None else None
        if self._plan and self._plan_turn == turn and mask[self._plan[0]]:
            return self._plan.pop(0)
        if legal.size == 1 and (state is None or state.num_plays() <= 1):
            self._plan = []
            return int(legal[0])
        if state is None:
            raise ValueError(f"{self.name} needs the game state (a perfect-information game)")
        boards = state.play_boards()
        index = -1
        if self._target is not None and self._plan_turn == turn:
            # Mid-turn with the plan used up: continue towards the chosen resulting board.
            hits = np.flatnonzero((boards == self._target).all(axis=1))
            index = int(hits[0]) if hits.size else -1
        if index < 0:
            index = self.choose_play(state)
            self._target = boards[index].copy()
        actions = list(state.play_actions(index)) or [k.PASS]
        self._plan = actions[1:]
        self._plan_turn = turn
        return actions[0]


def _blots(boards: np.ndarray, seat: int) -> np.ndarray:
    own = boards[:, k.SIDE * seat : k.SIDE * seat + 24]
    return (own == 1).sum(axis=1)


def _pips(boards: np.ndarray, seat: int) -> np.ndarray:
    weights = np.arange(1, 26)
    return boards[:, k.SIDE * seat : k.SIDE * seat + 25].astype(np.int64) @ weights


class GreedyBackgammonAgent(BackgammonPlayAgent):
    """Pip-count greedy (see the module docstring)."""

    name = "greedy"

    def choose_play(self, state: Any) -> int:
        boards = state.play_boards()
        seat = state.turn
        score = (_pips(boards, 1 - seat) - _pips(boards, seat)) * 16 - _blots(boards, seat)
        best = np.flatnonzero(score == score.max())
        return int(self.rng.choice(best))


def _apply_gnubg_moves(board: list[list[int]], moves: list[int]) -> list[list[int]]:
    """gnubg's ``[not on roll, on roll]`` board after the mover's ``from, to`` pairs as
    ``pub_best_move`` gives them: 0-based indices of the mover's view (24 = the bar, a negative
    ``to`` = borne off)."""
    opp, me = list(board[0]), list(board[1])
    for i in range(0, len(moves), 2):
        src, dst = moves[i], moves[i + 1]
        me[src] -= 1
        if dst >= 0:
            me[dst] += 1
            if opp[23 - dst] == 1:  # the mover's index dst is the opponent's index 23 - dst
                opp[23 - dst] = 0
                opp[24] += 1
    return [opp, me]


def _play_index_of_board(state: Any, target: list[list[int]]) -> int:
    boards = state.play_boards()
    seat = state.turn
    for i in range(len(boards)):
        if ga.board_to_gnubg(boards[i], seat) == target:
            return i
    raise RuntimeError("gnubg's pubeval play is not one of our legal plays")  # pragma: no cover


def _mid_turn(state: Any) -> bool:
    """True when part of the roll has been played already (by someone else's choice, e.g. the
    arena's random opening plies): gnubg's move generators need the whole roll."""
    rolled = state.rolled()
    whole = (rolled[0],) * 4 if rolled[0] == rolled[1] else tuple(sorted(rolled, reverse=True))
    return tuple(state.dice()) != whole


class PubevalAgent(BackgammonPlayAgent):
    """Tesauro's pubeval: the legal play whose resulting position scores highest."""

    name = "pubeval"

    def choose_play(self, state: Any) -> int:
        if state.num_plays() <= 1:
            return 0
        before, after = state.board, state.play_boards()
        own = slice(k.SIDE * state.turn, k.SIDE * state.turn + 25)
        other = slice(k.SIDE * (1 - state.turn), k.SIDE * (1 - state.turn) + 25)
        return pubeval.best_play(before[own], before[other], after[:, own], after[:, other])


class GnubgAgent(BackgammonPlayAgent):
    """GNU Backgammon's neural net at ``plies`` (0 = the plain net)."""

    name = "gnubg"

    def __init__(self, seed: int | None = None, plies: int = 0) -> None:
        super().__init__(seed)
        if plies not in (0, 1, 2, 3):
            raise ValueError(f"plies must be 0..3, got {plies}")
        self.plies = int(plies)

    def choose_play(self, state: Any) -> int:
        if state.num_plays() <= 1:
            return 0
        if _mid_turn(state):  # gnubg needs the whole roll: fall back to the pip count
            return GreedyBackgammonAgent.choose_play(self, state)  # type: ignore[arg-type]
        return ga.best_play_index(state, self.plies)


def _greedy(options: dict[str, Any], seed: int | None) -> Agent:
    return GreedyBackgammonAgent(seed)


def _pubeval(options: dict[str, Any], seed: int | None) -> Agent:
    return PubevalAgent(seed)


def _gnubg(options: dict[str, Any], seed: int | None, plies: int = 0) -> Agent:
    ga.gnubg()  # a clear ImportError now rather than at the first move
    return GnubgAgent(seed, plies=plies)


AGENTS = {"greedy": _greedy, "pubeval": _pubeval, "gnubg": _gnubg}

"""Backgammon baselines: ``pubeval``, ``gnubg`` and ``greedy``.

All three choose a whole *play* for the roll (among the distinct legal plays,
:meth:`BackgammonState.play_boards`) and then return its checker moves one per call, as the
env asks for them (a turn is several env steps).

Cube decisions, if the env has the cube (``cube=True``): an agent that can estimate the
probabilities of the position before its roll
(:meth:`BackgammonPlayAgent.position_probabilities`: ``gnubg`` and the TD nets) decides with
Janowski's formulas (:mod:`spieltisch.agents.backgammon.cube`) by default, with the agent
parameters ``cube=janowski|never`` and ``cube_life=0.68`` (e.g. ``gnubg:plies=0,cube_life=0.7``);
``cube=never`` never doubles and always takes. ``pubeval`` decides by the same formulas from
probabilities fitted to its self-play results (:func:`.pubeval.probabilities`); ``greedy``
and ``random`` have no probabilities: they never double and always take. Without the cube these
decisions never come up, so cubeless play is the same whatever the cube policy.

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

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
from spieltisch.agents.backgammon import cube as cb
from spieltisch.agents.backgammon import pubeval
from spieltisch.agents.base import Agent, legal_actions_of
from spieltisch.envs.backgammon import gnubg_adapter as ga
from spieltisch.envs.backgammon import rules as k


class BackgammonPlayAgent(Agent):
    """Base of agents that pick a whole play; subclasses implement :meth:`choose_play`.

    Cube decisions (cube games): with ``cube_policy == "janowski"`` and
    :meth:`position_probabilities` implemented, by :func:`.cube.should_double` and
    :func:`.cube.should_take` with cube life ``cube_life``; otherwise never double, always
    take. Set both with :meth:`set_cube`."""

    #: ``"janowski"`` (decide by :mod:`.cube`) or ``"never"`` (never double, always take)
    cube_policy: str = "janowski"
    #: Janowski's cube life ``x`` (:data:`.cube.DEFAULT_CUBE_LIFE`)
    cube_life: float = cb.DEFAULT_CUBE_LIFE

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self._plan: list[tuple[int, np.ndarray]] = []  # the moves left, each with its board
        self._plan_turn: int | None = None
        self._target: np.ndarray | None = None

    def set_cube(self, cube: str = "janowski", cube_life: float = cb.DEFAULT_CUBE_LIFE) -> None:
        """Choose the cube policy (:data:`.cube.POLICIES`) and the cube life (0..1)."""
        if cube not in cb.POLICIES:
            raise ValueError(f"cube must be one of {cb.POLICIES}, got {cube!r}")
        if isinstance(cube_life, bool) or not isinstance(cube_life, int | float):
            raise ValueError(f"cube_life must be a number from 0 to 1, got {cube_life!r}")
        if not 0.0 <= cube_life <= 1.0:
            raise ValueError(f"cube_life must be a number from 0 to 1, got {cube_life!r}")
        self.cube_policy = cube
        self.cube_life = float(cube_life)

    def position_probabilities(self, state: Any) -> Sequence[float] | None:
        """The cubeless probabilities ``(win, win gammon, win backgammon, lose gammon, lose
        backgammon)`` of the player on turn of ``state`` *before its roll* (a cube decision or
        a pending double: the doubler), or None when the agent has none (then it never doubles
        and always takes). Must not draw from the agent's generator."""
        return None

    def cube_action(self, state: Any, mask: np.ndarray) -> int:
        """The cube action for a mask that allows ROLL/DOUBLE or TAKE/DROP."""
        doubling = bool(mask[k.ROLL])
        probs = None
        if self.cube_policy == "janowski" and state is not None:
            probs = self.position_probabilities(state)
        if probs is None:
            return k.ROLL if doubling else k.TAKE
        if doubling:
            owner = state.cube()[1]
            mine = cb.CENTRED if owner is None else cb.MINE if owner == state.turn else cb.THEIRS
            wants = mask[k.DOUBLE] and cb.should_double(probs, mine, self.cube_life)
            return k.DOUBLE if wants else k.ROLL
        return k.TAKE if cb.should_take(cb.flip(probs), self.cube_life) else k.DROP

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
        if len(mask) > k.ROLL and (mask[k.ROLL] or mask[k.TAKE]):
            return self.cube_action(state, mask)
        turn = state.num_turns() if state is not None else None
        if self._plan and self._plan_turn == turn:
            action, board = self._plan[0]
            # only on the planned way: a checker moved otherwise (the agent as an advisor, an
            # exploration move) makes the rest of the plan stale, even where it is still legal
            if mask[action] and np.array_equal(state.board, board):
                self._plan.pop(0)
                return action
        if legal.size == 1 and (state is None or state.num_plays() <= 1):
            self._plan = []
            return int(legal[0])
        if state is None:
            raise ValueError(f"{self.name} needs the game state (a perfect-information game)")
        boards = state.play_boards()
        index = self._target_index(boards, turn)
        if index < 0:
            index = self.choose_play(state)
            self._target = boards[index].copy()
        actions = list(state.play_actions(index)) or [k.PASS]
        self._plan = self._planned_way(state, actions)
        self._plan_turn = turn
        return actions[0]

    @staticmethod
    def _planned_way(state: Any, actions: list[int]) -> list[tuple[int, np.ndarray]]:
        """The moves after the first, each with the board it will be asked on."""
        way = state.clone()
        steps = []
        for action, following in itertools.pairwise(actions):
            way.apply(action)
            steps.append((following, way.board.copy()))
        return steps

    def _target_index(self, boards: np.ndarray, turn: int | None) -> int:
        """Mid-turn: the index of the play (rows of ``boards``) that leads to the board chosen
        earlier this turn; -1 if there is none."""
        if self._target is None or self._plan_turn != turn:
            return -1
        hits = np.flatnonzero((boards == self._target).all(axis=1))
        return int(hits[0]) if hits.size else -1

    def planned_play(self, state: Any) -> int:
        """Index into ``state.legal_plays()`` of the play :meth:`act` makes now (a state with
        checkers to move): the rest of the play chosen earlier this turn, else
        :meth:`choose_play` (which may draw from the agent's generator). Changes no plan."""
        index = self._target_index(state.play_boards(), state.num_turns())
        return index if index >= 0 else self.choose_play(state)


def board_sides(board: np.ndarray, seat: int) -> tuple[np.ndarray, np.ndarray]:
    """``(own, other)``: the 25 counts (points 1..24 from each side's own view, then the bar) of
    ``seat`` and of its opponent in engine boards ``(..., 52)``, as pubeval reads them (views)."""
    own = board[..., k.SIDE * seat : k.SIDE * seat + 25]
    other = board[..., k.SIDE * (1 - seat) : k.SIDE * (1 - seat) + 25]
    return own, other


def _blots(boards: np.ndarray, seat: int) -> np.ndarray:
    own = boards[:, k.SIDE * seat : k.SIDE * seat + 24]
    return (own == 1).sum(axis=1)


def _pips(boards: np.ndarray, seat: int) -> np.ndarray:
    weights = np.arange(1, 26)
    return boards[:, k.SIDE * seat : k.SIDE * seat + 25].astype(np.int64) @ weights


def greedy_terms(boards: np.ndarray, seat: int) -> tuple[np.ndarray, np.ndarray]:
    """``(pip lead, blots)`` of ``seat`` after each play (rows of ``boards``): the opponent's
    pips minus the own, and the own single checkers; ``greedy`` maximises ``16 * lead - blots``."""
    return _pips(boards, 1 - seat) - _pips(boards, seat), _blots(boards, seat)


class GreedyBackgammonAgent(BackgammonPlayAgent):
    """Pip-count greedy (see the module docstring)."""

    name = "greedy"

    def choose_play(self, state: Any) -> int:
        lead, blots = greedy_terms(state.play_boards(), state.turn)
        score = lead * 16 - blots
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
        return int(np.argmax(self.play_scores(state)))

    def play_scores(self, state: Any, boards: np.ndarray | None = None) -> np.ndarray:
        """pubeval's score of every legal play of ``state`` (:func:`pubeval.play_scores`);
        ``boards``: ``state.play_boards()`` if the caller has them already."""
        after = state.play_boards() if boards is None else boards
        before = board_sides(state.board, state.turn)
        return pubeval.play_scores(*before, *board_sides(after, state.turn))

    def position_probabilities(self, state: Any) -> np.ndarray:
        """The player on turn's probabilities before its roll: over the 21 rolls, those of the
        play pubeval makes (:func:`.pubeval.probabilities` of its score; exact for a won game)."""

        def best(rolled: Any) -> np.ndarray:
            boards = rolled.play_boards()
            scores = self.play_scores(rolled, boards)
            i = int(np.argmax(scores))
            board, mover = boards[i], rolled.turn
            if scores[i] >= pubeval.WON:
                result = k.win_type(board, mover)
                return np.array(
                    [1.0, result >= k.RESULT_GAMMON, result >= k.RESULT_BACKGAMMON, 0, 0]
                )
            race = bool(pubeval.is_race(*board_sides(rolled.board, mover)))
            return pubeval.probabilities(*board_sides(board, mover), race)

        return cb.roll_average(state, best)


class GnubgAgent(BackgammonPlayAgent):
    """GNU Backgammon's neural net at ``plies`` (0 = the plain net)."""

    name = "gnubg"

    def __init__(self, seed: int | None = None, plies: int = 0) -> None:
        super().__init__(seed)
        if isinstance(plies, bool) or plies not in (0, 1, 2, 3):
            raise ValueError(f"plies must be 0..3, got {plies!r}")
        self.plies = int(plies)

    def choose_play(self, state: Any) -> int:
        if state.num_plays() <= 1:
            return 0
        if _mid_turn(state):  # gnubg needs the whole roll: fall back to the pip count
            return GreedyBackgammonAgent.choose_play(self, state)  # type: ignore[arg-type]
        return ga.best_play_index(state, self.plies)

    def position_probabilities(self, state: Any) -> tuple[float, ...]:
        """gnubg's evaluation at ``plies`` of the position with the player on turn to roll."""
        return ga.evaluate(state, state.turn, self.plies)


def _greedy(options: dict[str, Any], seed: int | None) -> Agent:
    return GreedyBackgammonAgent(seed)


def _pubeval(
    options: dict[str, Any],
    seed: int | None,
    cube: str = "janowski",
    cube_life: float = cb.DEFAULT_CUBE_LIFE,
) -> Agent:
    agent = PubevalAgent(seed)
    agent.set_cube(cube, cube_life)
    return agent


def _gnubg(
    options: dict[str, Any],
    seed: int | None,
    plies: int = 0,
    cube: str = "janowski",
    cube_life: float = cb.DEFAULT_CUBE_LIFE,
) -> Agent:
    ga.gnubg()  # a clear ImportError now rather than at the first move
    agent = GnubgAgent(seed, plies=plies)
    agent.set_cube(cube, cube_life)
    return agent


AGENTS = {"greedy": _greedy, "pubeval": _pubeval, "gnubg": _gnubg}

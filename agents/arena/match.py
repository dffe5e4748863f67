"""Playing one game between agents in any spieltisch env (used by ``play`` and the arena), and
the time limit of an agent's move (:class:`MoveTimer`).

A game can end by *forfeit* (``play_game(..., forfeit=True)``): an agent that raises, returns an
illegal action or runs over its time limit loses the game on the spot. The loser gets -1 and
every other seat ``+1 / (n - 1)`` (+1 in a two-player game), whatever the game's own scoring
(backgammon's points, HiLo's ``reward="coins"``): a forfeit is one plain lost game.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from spieltisch.agents.base import Agent, InformationSet
from spieltisch.agents.human import HumanQuit

# The first move of an agent in a process may compile numba code or load a network or a
# database: it gets at least this long (seconds) before it counts as over the time limit.
FIRST_MOVE_SECONDS = 300.0

# Why an agent forfeited a game (the keys of the arena's report).
FORFEIT_REASONS = ("time_limit", "raised", "illegal_action")


@dataclass(frozen=True)
class Forfeit:
    """``agent`` (an env agent name) lost the game: it ran over the time limit, raised, or chose
    an illegal action (``reason``, one of :data:`FORFEIT_REASONS`); ``message`` names it and
    says what happened."""

    agent: str
    reason: str
    message: str


@dataclass
class GameRecord:
    """The outcome of one game: final rewards and infos per agent, the moves, the turn count,
    and the :class:`Forfeit` that ended it early (None for a game played to its end)."""

    rewards: dict[str, float]
    infos: dict[str, dict[str, Any]]
    moves: list[tuple[str, int]] = field(default_factory=list)
    truncated: bool = False
    forfeit: Forfeit | None = None

    @property
    def num_moves(self) -> int:
        return len(self.moves)


def forfeit_rewards(agent_names: Sequence[Any], loser: Any, stake: float = 1.0) -> dict[Any, float]:
    """The rewards of a game lost by forfeit or resignation: ``-stake`` for ``loser``,
    ``stake / (n - 1)`` for each other agent (so they sum to zero). ``stake``: the env's
    :meth:`~spieltisch.envs._common.aec.TurnBasedEnv.forfeit_stake` when the game ended (1, or
    backgammon's cube value)."""
    share = stake / (len(agent_names) - 1)
    return {a: -stake if a == loser else share for a in agent_names}


class MoveTimeout(Exception):
    """A move ran over its time limit (``limit`` seconds; ``elapsed`` None when it was still
    running at the deadline)."""

    def __init__(self, limit: float, elapsed: float | None) -> None:
        self.limit = limit
        self.elapsed = elapsed
        took = "did not return" if elapsed is None else f"took {elapsed:.2f} s"
        super().__init__(f"{took}, over the time limit of {limit:g} s for a move")


class MoveClock(Protocol):
    """Where a watched process marks the move in progress (see
    :class:`spieltisch.agents.arena.workers.SharedMoveClock`)."""

    def start(self, seat: int, limit: float, moves: int, stake: float) -> None: ...

    def stop(self) -> None: ...


class MoveTimer:
    """The time limit of agents' moves, and how it is enforced.

    ``seconds``: the limit of one :meth:`Agent.act` call, wall-clock (None: no limit). The first
    move of each agent under this timer gets ``first_move_seconds`` instead (at least
    ``seconds``; default the larger of ``seconds`` and :data:`FIRST_MOVE_SECONDS`), for the
    compiling and loading that first moves do. ``exempt``: env agent names without a limit (a
    person at the terminal).

    Enforcement: without ``clock``, a limited move runs in a daemon thread and the caller stops
    waiting for it at the deadline (the thread cannot be killed; it is abandoned, and ends with
    the process). With ``clock`` (the arena's worker processes), the move runs in the calling
    thread and is marked on the clock, and the process watching the clock kills this one at
    the deadline. Either way a move that returns after its limit is over it.
    """

    def __init__(
        self,
        seconds: float | None,
        first_move_seconds: float | None = None,
        exempt: Collection[str] = (),
        clock: MoveClock | None = None,
    ) -> None:
        for name, value in (("seconds", seconds), ("first_move_seconds", first_move_seconds)):
            if value is not None and not value > 0:
                raise ValueError(f"a move time limit must be positive seconds, got {name}={value}")
        self.seconds = seconds
        first = FIRST_MOVE_SECONDS if first_move_seconds is None else first_move_seconds
        self.first_move_seconds = None if seconds is None else max(seconds, first)
        self.exempt = frozenset(exempt)
        self.clock = clock
        self._moved: set[int] = set()  # id() of the agents that have started a move

    def limit(self, agent_name: str, agent: Agent) -> float | None:
        """The limit of ``agent``'s next move in seat ``agent_name`` (None: no limit)."""
        if self.seconds is None or agent_name in self.exempt:
            return None
        return self.seconds if id(agent) in self._moved else self.first_move_seconds

    def act(
        self,
        agent_name: str,
        agent: Agent,
        observation: dict[str, np.ndarray],
        state: Any,
        seat: int = 0,
        moves: int = 0,
        stake: float = 1.0,
    ) -> Any:
        """``agent.act(observation, state)`` within the limit; raises :class:`MoveTimeout`
        when over it, and whatever ``act`` raised. ``seat``, ``moves`` (moves played so far)
        and ``stake`` (what losing the game by forfeit now costs) go to the clock."""
        limit = self.limit(agent_name, agent)
        if limit is None:
            return agent.act(observation, state)
        self._moved.add(id(agent))
        start = time.monotonic()
        if self.clock is not None:
            self.clock.start(seat, limit, moves, stake)
            try:
                action = agent.act(observation, state)
            finally:
                self.clock.stop()
        else:
            action = _call_with_deadline(
                lambda: agent.act(observation, state), limit, f"move of {agent_name}"
            )
        elapsed = time.monotonic() - start
        if elapsed > limit:
            raise MoveTimeout(limit, elapsed)
        return action


def _call_with_deadline(fn: Callable[[], Any], limit: float, name: str) -> Any:
    """``fn()`` in a daemon thread; raises :class:`MoveTimeout` if it has not returned after
    ``limit`` seconds (the thread is left running), re-raises what it raised."""
    box: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            box.append((True, fn()))
        except BaseException as err:  # handed to the waiting thread, which re-raises it
            box.append((False, err))

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    thread.join(limit)
    if thread.is_alive() or not box:
        raise MoveTimeout(limit, None)
    ok, value = box[0]
    if not ok:
        raise value
    return value


def illegal_action_problem(action: Any, mask: np.ndarray) -> str | None:
    """Why ``action`` is not a legal action of ``mask`` (None if it is)."""
    if (
        isinstance(action, bool)
        or not isinstance(action, int | np.integer)
        or not 0 <= action < len(mask)
        or not mask[action]
    ):
        return f"the illegal action {action!r} (legal: {np.flatnonzero(mask).tolist()})"
    return None


def agent_input(raw: Any, agent_name: str, rng: np.random.Generator) -> Any:
    """The ``state`` argument for ``agent_name``'s :meth:`Agent.act`: a copy of the engine state
    in perfect-information games, an :class:`InformationSet` of its seat where the engine can
    sample consistent states (HiLo), else None. ``rng`` draws the information set's stand-in."""
    if raw.perfect_information:
        return raw.agent_state()
    state = getattr(raw, "state", None)
    if state is not None and hasattr(state, "sample_consistent"):
        return InformationSet(state, raw.seat_of(agent_name), rng)
    return None


def play_game(
    env: Any,
    agents: Mapping[str, Agent],
    seed: int | None = None,
    on_move: Callable[[str, int], None] | None = None,
    opening_plies: int = 0,
    reset: bool = True,
    timer: MoveTimer | None = None,
    forfeit: bool = False,
    labels: Mapping[str, str] | None = None,
) -> GameRecord:
    """Play one game of ``env`` (an AEC env) with ``agents[agent_name]`` choosing the moves.

    Each agent gets its seat's observation and what :func:`agent_input` gives it (a copy of the
    engine state in perfect-information games, an information set in HiLo); never hidden
    information. ``opening_plies``: the first plies are random legal moves made by the table
    (drawn from a generator seeded by ``seed``, the same whoever sits where), to vary the games
    of deterministic agents. ``reset=False``: the env has been reset already.

    ``timer``: the time limit of the agents' moves (:class:`MoveTimer`; none by default).
    ``forfeit``: an agent that raises, returns an illegal action or runs over the time limit
    loses the game by forfeit (the record's ``forfeit`` says who and why, its rewards are
    :func:`forfeit_rewards`; a person's :class:`HumanQuit` still ends the game by propagating);
    without it, what the agent raised propagates, an illegal action raises in ``env.step`` and
    a timeout raises :class:`MoveTimeout`. ``labels``: how messages name each agent (default
    ``"<agent_name> (<agent.name>)"``).
    """
    if reset:
        env.reset(seed=seed)
    raw = env.unwrapped
    side_rng = np.random.default_rng([0 if seed is None else seed, 7])
    opening_left = opening_plies
    rewards = {a: 0.0 for a in env.possible_agents}
    infos: dict[str, dict[str, Any]] = {}
    moves: list[tuple[str, int]] = []
    truncated = False
    for agent_name in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        rewards[agent_name] = reward
        if termination or truncation:
            infos[agent_name] = info
            truncated = truncated or truncation
            env.step(None)
            continue
        if opening_left > 0:
            opening_left -= 1
            action = int(side_rng.choice(np.flatnonzero(observation["action_mask"])))
        else:
            agent = agents[agent_name]
            state = agent_input(raw, agent_name, side_rng)
            try:
                if timer is None:
                    action = agent.act(observation, state)
                else:
                    seat = env.possible_agents.index(agent_name)
                    action = timer.act(
                        agent_name, agent, observation, state, seat, len(moves),
                        raw.forfeit_stake(),
                    )  # fmt: skip
            except HumanQuit:
                raise
            except Exception as err:
                if not forfeit:
                    raise
                label = _label(labels, agent_name, agent)
                if isinstance(err, MoveTimeout):
                    lost = Forfeit(agent_name, "time_limit", f"agent {label} {err}")
                else:
                    message = f"agent {label} raised {type(err).__name__}: {err}"
                    lost = Forfeit(agent_name, "raised", message)
                return _forfeited(env, lost, moves)
            problem = illegal_action_problem(action, observation["action_mask"])
            if forfeit and problem is not None:
                message = f"agent {_label(labels, agent_name, agent)} played {problem}"
                return _forfeited(env, Forfeit(agent_name, "illegal_action", message), moves)
            action = int(action) if problem is None else action
        moves.append((agent_name, action))
        env.step(action)
        if on_move is not None:
            on_move(agent_name, action)
    return GameRecord(rewards=rewards, infos=infos, moves=moves, truncated=truncated)


def _label(labels: Mapping[str, str] | None, agent_name: str, agent: Agent) -> str:
    if labels is not None and agent_name in labels:
        return labels[agent_name]
    return f"{agent_name} ({agent.name})"


def _forfeited(env: Any, lost: Forfeit, moves: list[tuple[str, int]]) -> GameRecord:
    rewards = forfeit_rewards(env.possible_agents, lost.agent, env.unwrapped.forfeit_stake())
    return GameRecord(rewards=rewards, infos={}, moves=moves, forfeit=lost)

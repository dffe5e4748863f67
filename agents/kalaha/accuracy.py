"""How well an agent plays Kalaha, measured against perfect play.

:func:`move_accuracy` plays games of the agent against baseline agents (both seats) and against
itself, records every position where the agent moved, and asks the exact solver
(:mod:`.kalaha_solver`) about each: was the move optimal, and how much game value did it lose?

The loss of a move is ``value(position) - value(move)`` in stones of final store difference, from
the mover's view (0 for an optimal move, never negative). The report gives the share of optimal
moves and the mean loss per move, overall and per opponent.

Boards too big to solve from the start (Kalah(6,6) for an agent trained there) can be measured on
their later positions only: ``max_stones`` judges just the positions with at most that many
stones left in the pits (the others are counted as ``skipped``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from spieltisch.agents.arena.match import play_game
from spieltisch.agents.base import Agent
from spieltisch.agents.kalaha.solver import KalahaSolver
from spieltisch.agents.registry import make_agent
from spieltisch.envs import make
from spieltisch.envs.kalaha.engine import KalahaGame, KalahaState


@dataclass
class AccuracyStats:
    """Counts over the agent's moves (in games against one opponent, or all together)."""

    games: int = 0
    moves: int = 0
    optimal: int = 0
    total_loss: int = 0
    forced: int = 0  # moves with a single legal choice (counted in moves, always optimal)
    skipped: int = 0  # moves not judged: more stones left than ``max_stones``

    @property
    def optimal_share(self) -> float:
        return self.optimal / self.moves if self.moves else float("nan")

    @property
    def mean_loss(self) -> float:
        return self.total_loss / self.moves if self.moves else float("nan")

    def add(self, other: AccuracyStats) -> None:
        self.games += other.games
        self.moves += other.moves
        self.optimal += other.optimal
        self.total_loss += other.total_loss
        self.forced += other.forced
        self.skipped += other.skipped

    def as_dict(self) -> dict[str, Any]:
        """The counts and the two shares; the shares are None (JSON null) when no move was
        judged (NaN, written as is, was not JSON)."""
        judged = self.moves > 0
        return {
            **asdict(self),
            "optimal_share": self.optimal_share if judged else None,
            "mean_loss": self.mean_loss if judged else None,
        }

    def describe(self, loss_unit: str = "") -> str:
        """``"97.5% optimal, mean loss 0.031"`` (with ``loss_unit`` after it), or that no
        move was judged (it printed ``nan%``)."""
        if not self.moves:
            return "no moves judged"
        return f"{100 * self.optimal_share:.1f}% optimal, mean loss {self.mean_loss:.3f}{loss_unit}"


@dataclass
class AccuracyReport:
    """The result of :func:`move_accuracy`: totals and a breakdown by opponent."""

    agent: str
    game: dict[str, Any]
    total: AccuracyStats = field(default_factory=AccuracyStats)
    by_opponent: dict[str, AccuracyStats] = field(default_factory=dict)
    seconds: float = 0.0
    max_stones: int | None = None
    opening_plies: int = 0
    #: games whose moves by the agent differed from every other game's (against the same
    #: opponent, from the same seat): deterministic agents repeat games, so this, not the
    #: number of moves, says how much was sampled
    distinct_games: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "game": self.game,
            "total": self.total.as_dict(),
            "by_opponent": {k: v.as_dict() for k, v in self.by_opponent.items()},
            "seconds": self.seconds,
            "max_stones": self.max_stones,
            "opening_plies": self.opening_plies,
            "distinct_games": self.distinct_games,
        }

    def summary(self) -> str:
        lines = [
            f"{self.agent} on Kalah({self.game['pits']},{self.game['seeds']}) "
            f"{self.game['rules']}: {self.total.moves} moves in {self.total.games} games, "
            f"{self.total.describe(' stones per move')}"
            + (f", {self.opening_plies} random opening plies a game" if self.opening_plies else "")
            + (
                f" (positions with at most {self.max_stones} stones left; "
                f"{self.total.skipped} earlier moves not judged)"
                if self.max_stones is not None
                else ""
            )
        ]
        for name, s in self.by_opponent.items():
            distinct = self.distinct_games.get(name)
            lines.append(
                f"  vs {name}: {s.moves} moves in {s.games} games"
                + (f" ({distinct} distinct)" if distinct is not None else "")
                + f", {s.describe()}"
            )
        return "\n".join(lines)


class MoveRecorder(Agent):
    """Wraps an agent and keeps every (observation, position, move) it played (copies: the
    wrapped agent cannot change them)."""

    def __init__(self, inner: Agent) -> None:
        super().__init__()
        self.inner = inner
        self.name = inner.name
        self.record: list[tuple[dict[str, np.ndarray], KalahaState, int]] = []

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset(seed)

    def act(self, observation: dict, state: Any | None = None) -> int:
        action = self.inner.act(observation, None if state is None else state.clone())
        kept = {key: np.array(value) for key, value in observation.items()}
        self.record.append((kept, state, int(action)))
        return action


def _stones_in_pits(state: KalahaState) -> int:
    return int(state.board.sum()) - sum(state.stores())


def judge_move(solver: KalahaSolver, state: KalahaState, action: int) -> tuple[bool, int]:
    """(was ``action`` optimal in ``state``, the game value it lost) according to ``solver``."""
    result = solver.solve(state)
    if action in result.optimal_moves:
        return True, 0
    child = state.child(action)
    v = solver.value(child)
    if child.current_player != state.current_player:
        v = -v  # the opponent moves next: their value is the negation of ours
    return False, result.value - v


def move_accuracy(
    agent: str | Callable[[int], Agent],
    game: KalahaGame | None = None,
    games: int = 10,
    opponents: Iterable[str] = ("random",),
    self_play: bool = True,
    seed: int = 0,
    solver: KalahaSolver | None = None,
    progress: Callable[[str], None] | None = None,
    max_stones: int | None = None,
    opening_plies: int = 0,
) -> AccuracyReport:
    """Share of optimal moves and mean value loss per move of ``agent`` on ``game``.

    ``agent``: a registered agent name, or a function ``seed -> Agent``. Plays ``games`` games
    against each of ``opponents`` (registered names; the agent takes seat 0 in even games and
    seat 1 in odd ones) and, if ``self_play``, ``games`` games against itself (both seats'
    moves count). Every move of the agent is judged by ``solver`` (a new one with default
    settings if not given). ``max_stones``: judge only positions with at most this many stones
    in the pits (for boards whose early positions are too big to solve). ``opening_plies``:
    each game starts with that many random moves made by the table (drawn from the game's
    seed, not judged), as in the arena: without them a deterministic agent against a
    deterministic opponent replays a few games over and over (``distinct_games`` counts them).
    """
    if opening_plies < 0:
        raise ValueError(f"opening_plies must be at least 0, got {opening_plies}")
    game = game or KalahaGame(6, 4, "goki")
    options = {"pits": game.pits, "seeds": game.seeds, "rules": game.rules}
    solver = solver or KalahaSolver(game)
    if isinstance(agent, str):
        name = agent

        def new_agent(s: int) -> Agent:
            return make_agent(name, "kalaha", seed=s, game_options=options)

    else:
        new_agent = agent
        name = getattr(agent(0), "name", "agent")

    env = make("kalaha", **options)
    report = AccuracyReport(
        agent=name, game=options, max_stones=max_stones, opening_plies=opening_plies
    )
    t0 = time.perf_counter()
    matchups = [(o, False) for o in opponents] + ([("self", True)] if self_play else [])
    for opponent, is_self in matchups:
        stats = AccuracyStats()
        played: set[tuple[int, tuple[tuple[bytes, int], ...]]] = set()
        for g in range(games):
            game_seed = seed + 1000 * g
            me = MoveRecorder(new_agent(game_seed))
            if is_self:
                other: Agent = MoveRecorder(new_agent(game_seed + 1))
            else:
                other = make_agent(opponent, "kalaha", seed=game_seed + 1, game_options=options)
            seats = [me, other] if g % 2 == 0 or is_self else [other, me]
            play_game(
                env,
                dict(zip(env.possible_agents, seats, strict=True)),
                seed=game_seed,
                opening_plies=opening_plies,
            )
            seat = seats.index(me)
            played.add((seat, tuple((st.board.tobytes(), a) for _, st, a in me.record)))
            recorders = [me, other] if is_self else [me]
            for rec in recorders:
                for _, state, action in rec.record:
                    if max_stones is not None and _stones_in_pits(state) > max_stones:
                        stats.skipped += 1
                        continue
                    stats.moves += 1
                    if len(state.legal_actions()) == 1:
                        stats.forced += 1
                    ok, loss = judge_move(solver, state, action)
                    stats.optimal += ok
                    stats.total_loss += loss
            stats.games += 1
            if progress is not None:
                progress(
                    f"  vs {opponent}: game {g + 1}/{games}, {stats.moves} moves judged, "
                    f"{stats.describe()}, {time.perf_counter() - t0:.1f} s"
                )
        report.by_opponent[opponent] = stats
        report.distinct_games[opponent] = len(played)
        report.total.add(stats)
    report.seconds = time.perf_counter() - t0
    return report

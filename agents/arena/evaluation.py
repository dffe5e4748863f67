"""The evaluation arena: agents play each other with swapped seats and paired chance.

A *table* is a list of agents (by name, ``NAME:KEY=VALUE,...``) for one game. For every seed
``seed, seed + 1, ..., seed + seeds - 1`` the table plays one game per seat order (both orders
for two players), every game of a seed from the same env seed. An n-player table (HiLo with 3
or 4 players, ``mode="table"``) plays every *distinct* seat order: orders that put the same
agent names in the same seats are one order, so ``search heuristic heuristic heuristic`` plays
4 games per seed (the searcher in each seat), not 24, and the summary has one row per name
(its games in every seat it held). What this replays (checked in ``tests/test_arena.py``):

* Backgammon: the env rolls every die (the opening roll included) from its generator seeded by
  ``reset(seed=)``, one roll per turn whatever was played, so the games of a seed see the same
  sequence of rolls, turn by turn: with the seats swapped, each agent gets the dice its opponent
  had (the opening roll decides which *seat* starts, so the agent in that seat starts in both).
  The games diverge in length, so the rolls after the shorter game ends are not compared.
* HiLo: the shuffle and deal come from the seed: with the seats swapped each agent gets the
  layout and starting position the other had, and the draw pile is in the same order. Later
  chance (reshuffling a used-up draw pile) uses the game's generator after different play, so
  it is not paired.
* Kalaha and Hus have no chance. Deterministic agents would repeat one game, so the arena can
  play ``opening_plies`` random moves for the table first (drawn from the seed, the same moves
  in every seat order), and the search baselines break ties at random (agent seeds come from
  the game seed and the agent's index in the table).

Games run in worker processes (``workers``), with a tqdm progress bar; the results are sorted
by (seed, seat order), so a run is reproducible from its seed whatever the number of workers
(agents with time limits excepted). An agent that raises or plays an illegal move stops its
game; the arena then raises :class:`AgentFailure` naming the agent.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from spieltisch.agents.arena import stats
from spieltisch.agents.arena.match import play_game
from spieltisch.agents.arena.provenance import machine_info
from spieltisch.agents.arena.report import to_markdown
from spieltisch.agents.base import Agent
from spieltisch.agents.registry import check_agent_name, make_agent


class AgentFailure(RuntimeError):
    """An agent raised or played an illegal move; the message names it."""


@dataclass
class GameResult:
    """One arena game. ``order[seat]`` = index (into the table) of the agent in that seat;
    ``rewards[i]`` = final reward of table agent ``i``."""

    seed: int
    order: tuple[int, ...]
    rewards: tuple[float, ...]
    moves: int
    truncated: bool = False
    win_type: str | None = None
    error: str | None = None


class _Checked(Agent):
    """Wraps an agent: exceptions and illegal moves become :class:`AgentFailure` with its name."""

    def __init__(self, inner: Agent, label: str) -> None:
        self.inner = inner
        self.label = label
        self.name = inner.name

    def reset(self, seed: int | None = None) -> None:
        self.inner.reset(seed)

    def act(self, observation: dict[str, np.ndarray], state: Any | None = None) -> int:
        try:
            action = self.inner.act(observation, state)
        except Exception as err:
            raise AgentFailure(f"agent {self.label} raised {type(err).__name__}: {err}") from err
        mask = observation["action_mask"]
        if (
            isinstance(action, bool)
            or not isinstance(action, int | np.integer)
            or not 0 <= action < len(mask)
            or not mask[action]
        ):
            legal = np.flatnonzero(mask).tolist()
            raise AgentFailure(
                f"agent {self.label} played the illegal action {action!r} (legal: {legal})"
            )
        return int(action)


def _agent_seed(game_seed: int, index: int) -> int:
    return int(np.random.SeedSequence([game_seed, index, 99]).generate_state(1)[0])


def _worker_init() -> None:
    """Runs first in every forked worker. A torch thread pool inherited through fork is
    unusable (the first parallel op would wait forever): the worker keeps torch on its own
    thread, which is also right when every core runs a worker."""
    import sys

    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def _run_tasks(
    game: str,
    specs: Sequence[str],
    options: dict[str, Any],
    tasks: Sequence[tuple[int, tuple[int, ...]]],
    opening_plies: int,
) -> list[GameResult]:
    """Play ``tasks`` = (seed, seat order) games; runs in a worker process."""
    from spieltisch.envs import make

    env = make(game, **options)
    agents = [
        _Checked(make_agent(spec, game, seed=i, game_options=options), f"{spec!r} (#{i})")
        for i, spec in enumerate(specs)
    ]
    names = env.possible_agents
    out = []
    for seed, order in tasks:
        seated = {names[seat]: agents[i] for seat, i in enumerate(order)}
        for i, agent in enumerate(agents):
            agent.reset(_agent_seed(seed, i))
        try:
            record = play_game(env, seated, seed=seed, opening_plies=opening_plies)
        except AgentFailure as err:
            out.append(GameResult(seed, order, (0.0,) * len(specs), 0, error=str(err)))
            continue
        rewards = [0.0] * len(specs)
        for seat, i in enumerate(order):
            rewards[i] = float(record.rewards[names[seat]])
        win_type = None
        for info in record.infos.values():
            win_type = info.get("win_type", win_type)
        out.append(
            GameResult(seed, order, tuple(rewards), record.num_moves, record.truncated, win_type)
        )
    return out


def play_table(
    game: str,
    specs: Sequence[str],
    seeds: int,
    seed: int = 0,
    options: dict[str, Any] | None = None,
    opening_plies: int = 0,
    workers: int = 1,
    progress: bool = False,
    num_seats: int | None = None,
    distinct_orders: bool = False,
) -> list[GameResult]:
    """Play ``seeds`` seeds x every seat order of the agents ``specs`` (one per seat), or
    with ``distinct_orders`` only the orders that differ in which *names* sit where.

    Raises :class:`AgentFailure` (naming the agents) if any agent failed.
    """
    options = dict(options or {})
    n = len(specs) if num_seats is None else num_seats
    if len(specs) != n:
        raise ValueError(f"{game} with these options seats {n} agents, got {len(specs)}")
    orders = seat_orders(specs, distinct_orders)
    tasks = [(seed + s, order) for s in range(seeds) for order in orders]
    results: list[GameResult] = []
    if workers <= 1 or len(tasks) < 4:
        bar = _bar(len(tasks), progress, specs)
        for task in tasks:
            results.extend(_run_tasks(game, specs, options, [task], opening_plies))
            bar.update(1)
        bar.close()
    else:
        bar = _bar(len(tasks), progress, specs)
        # The first game in this process: compiles (or loads) the agents' numba code once,
        # before the workers are forked, so they inherit it.
        results.extend(_run_tasks(game, specs, options, tasks[:1], opening_plies))
        bar.update(1)
        rest = tasks[1:]
        chunk = max(1, min(64, math.ceil(len(rest) / (workers * 8))))
        chunks = [rest[i : i + chunk] for i in range(0, len(rest), chunk)]
        with ProcessPoolExecutor(max_workers=workers, initializer=_worker_init) as pool:
            futures = {
                pool.submit(_run_tasks, game, list(specs), options, c, opening_plies): len(c)
                for c in chunks
            }
            for future in as_completed(futures):
                results.extend(future.result())
                bar.update(futures[future])
        bar.close()
    results.sort(key=lambda r: (r.seed, r.order))
    errors = sorted({r.error for r in results if r.error})
    if errors:
        raise AgentFailure("; ".join(errors[:5]) + (" ..." if len(errors) > 5 else ""))
    return results


def seat_orders(specs: Sequence[str], distinct: bool = False) -> list[tuple[int, ...]]:
    """Every seat order of the table (``order[seat]`` = agent index), in lexicographic order;
    with ``distinct``, the first of the orders that seat the same names in the same seats."""
    orders = list(itertools.permutations(range(len(specs))))
    if not distinct:
        return orders
    seen: set[tuple[str, ...]] = set()
    out = []
    for order in orders:
        names = tuple(specs[i] for i in order)
        if names not in seen:
            seen.add(names)
            out.append(order)
    return out


def _bar(total: int, enabled: bool, specs: Sequence[str]) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, disable=not enabled, desc=" vs ".join(specs), unit="game")


# --- summaries ----------------------------------------------------------------------------------
@dataclass
class PairSummary:
    """Results of ``agent`` against ``opponent`` (from ``agent``'s side)."""

    agent: str
    opponent: str
    games: int
    wins: int
    draws: int
    losses: int
    score: float  # (wins + draws / 2) / games
    score_low: float
    score_high: float
    win_rate: float
    win_low: float
    win_high: float
    mean_reward: float  # points per game in backgammon
    reward_low: float
    reward_high: float
    truncated: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def summarize_pair(results: Sequence[GameResult], names: tuple[str, str]) -> PairSummary:
    """Summary of a two-agent table, from table agent 0's side. Reward intervals treat the
    games of one seed as one paired observation."""
    r = np.array([g.rewards[0] for g in results], dtype=np.float64)
    n = int(r.size)
    wins = int((r > 0).sum())
    draws = int((r == 0).sum())
    losses = int((r < 0).sum())
    score = (wins + 0.5 * draws) / n if n else 0.0
    s_lo, s_hi = stats.wilson(wins + 0.5 * draws, n)
    w_lo, w_hi = stats.wilson(wins, n)
    by_seed: dict[int, list[float]] = {}
    for g in results:
        by_seed.setdefault(g.seed, []).append(g.rewards[0])
    mean, lo, hi = stats.paired_mean_interval([float(np.mean(v)) for v in by_seed.values()])
    extra: dict[str, Any] = {}
    types = [g.win_type for g in results]
    if any(t is not None for t in types):
        for label, kinds in (("gammon", ("gammon", "backgammon")), ("backgammon", ("backgammon",))):
            won = sum(1 for g in results if g.win_type in kinds and g.rewards[0] > 0)
            lost = sum(1 for g in results if g.win_type in kinds and g.rewards[0] < 0)
            extra[f"{label}_won_rate"] = won / n
            extra[f"{label}_won_ci"] = stats.wilson(won, n)
            extra[f"{label}_lost_rate"] = lost / n
            extra[f"{label}_lost_ci"] = stats.wilson(lost, n)
    extra["mean_moves"] = float(np.mean([g.moves for g in results])) if n else 0.0
    return PairSummary(
        agent=names[0],
        opponent=names[1],
        games=n,
        wins=wins,
        draws=draws,
        losses=losses,
        score=score,
        score_low=s_lo,
        score_high=s_hi,
        win_rate=wins / n if n else 0.0,
        win_low=w_lo,
        win_high=w_hi,
        mean_reward=mean,
        reward_low=lo,
        reward_high=hi,
        truncated=sum(g.truncated for g in results),
        extra=extra,
    )


@dataclass
class ArenaReport:
    game: str
    agents: list[str]
    mode: str
    seeds: int
    seed: int
    options: dict[str, Any]
    opening_plies: int
    pairs: list[PairSummary]
    ratings: dict[str, dict[str, float]] | None = None
    table: list[dict[str, Any]] | None = None  # n-player tables (HiLo): per agent
    machine: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, default=_json_default)

    def to_markdown(self) -> str:
        return to_markdown(self)


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.integer | np.floating):
        return obj.item()
    if isinstance(obj, tuple):
        return list(obj)
    raise TypeError(f"not JSON serializable: {obj!r}")


def pairings(agents: Sequence[str], mode: str) -> list[tuple[int, int]]:
    """Index pairs to play: ``pair`` (exactly two agents), ``round-robin`` (every pair) or
    ``one-vs-all`` (the first against each of the others)."""
    m = len(agents)
    if mode == "pair":
        if m != 2:
            raise ValueError(f"mode 'pair' needs exactly 2 agents, got {m}")
        return [(0, 1)]
    if mode == "round-robin":
        if m < 2:
            raise ValueError("a round robin needs at least 2 agents")
        return list(itertools.combinations(range(m), 2))
    if mode == "one-vs-all":
        if m < 2:
            raise ValueError("mode 'one-vs-all' needs at least 2 agents")
        return [(0, j) for j in range(1, m)]
    raise ValueError(f"mode must be pair, round-robin or one-vs-all, got {mode!r}")


def evaluate(
    game: str,
    agents: Sequence[str],
    seeds: int,
    seed: int = 0,
    mode: str = "pair",
    options: dict[str, Any] | None = None,
    opening_plies: int = 0,
    workers: int = 1,
    progress: bool = False,
    bootstrap: int = 200,
) -> ArenaReport:
    """Run the arena: ``seeds`` seeds x both seat orders per pair of agents (see
    :func:`pairings`), or, for a HiLo table of more than two players (``mode="table"``), all
    seat orders of the listed agents. Raises ValueError listing the valid agents for an unknown
    agent name, before any game starts."""
    options = dict(options or {})
    for spec in agents:
        check_agent_name(spec, game)
    from spieltisch.envs import make

    num_seats = len(make(game, **options).possible_agents)
    if num_seats > 2 or mode == "table":
        results = play_table(
            game, agents, seeds, seed, options, opening_plies, workers, progress, num_seats,
            distinct_orders=True,
        )  # fmt: skip
        return ArenaReport(
            game, list(agents), "table", seeds, seed, options, opening_plies, [],
            table=summarize_table(results, agents), machine=machine_info(),
        )  # fmt: skip
    pairs: list[PairSummary] = []
    outcomes: list[tuple[int, int, float]] = []
    for i, j in pairings(agents, mode):
        results = play_table(
            game, [agents[i], agents[j]], seeds, seed, options, opening_plies, workers, progress
        )
        pairs.append(summarize_pair(results, (agents[i], agents[j])))
        outcomes.extend((i, j, 1.0 if g.rewards[0] > 0 else 0.5 if g.rewards[0] == 0 else 0.0)
                        for g in results)  # fmt: skip
    ratings = None
    if mode == "round-robin" and len(agents) > 2:
        r, lo, hi = stats.bootstrap_ratings(
            outcomes, len(agents), np.random.default_rng(seed), samples=bootstrap
        )
        ratings = {
            f"{a} (#{k})" if agents.count(a) > 1 else a: {
                "elo": float(r[k]), "low": float(lo[k]), "high": float(hi[k])
            }
            for k, a in enumerate(agents)
        }  # fmt: skip
    return ArenaReport(
        game, list(agents), mode, seeds, seed, options, opening_plies, pairs, ratings,
        machine=machine_info(),
    )  # fmt: skip


def summarize_table(results: Sequence[GameResult], agents: Sequence[str]) -> list[dict[str, Any]]:
    """One row per agent name of an n-player table (agents listed twice or more pooled over
    their seats, ``seats`` says how many): games (one per seat held), wins (a shared win
    counts), draws (a zero reward: everybody tied, or truncated), losses, mean reward with
    interval (each seed's games averaged first)."""
    out = []
    for name in dict.fromkeys(agents):
        indices = [i for i, a in enumerate(agents) if a == name]
        r = np.array([g.rewards[i] for g in results for i in indices], dtype=np.float64)
        n = int(r.size)
        wins = int((r > 0).sum())
        by_seed: dict[int, list[float]] = {}
        for g in results:
            by_seed.setdefault(g.seed, []).extend(g.rewards[i] for i in indices)
        mean, lo, hi = stats.mean_interval([float(np.mean(v)) for v in by_seed.values()])
        wl, wh = stats.wilson(wins, n)
        out.append(
            {
                "agent": name, "index": indices[0], "seats": len(indices), "games": n,
                "wins": wins, "draws": int((r == 0).sum()), "losses": int((r < 0).sum()),
                "win_rate": wins / n if n else 0.0, "win_low": wl, "win_high": wh,
                "mean_reward": mean, "reward_low": lo, "reward_high": hi,
            }
        )  # fmt: skip
    return out

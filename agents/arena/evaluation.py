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
(agents with time limits excepted).

An agent that raises, plays an illegal move or runs over ``move_time_limit`` loses that game by
forfeit (:mod:`.match`: -1 for it, the others share +1) and the evaluation goes on; the report
counts each agent's forfeits by reason (``fail_fast=True`` raises :class:`AgentFailure` at the
first one instead). With a time limit every game after the first is played in a worker process
that is killed when a move runs past its limit (:mod:`.workers`); the first game is played in
this process, each agent's first move with the longer ``first_move_time_limit`` (compiling,
loading), so that the workers forked afterwards inherit the warmed-up agents.
"""

from __future__ import annotations

import functools
import itertools
import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from spieltisch.agents.arena import stats
from spieltisch.agents.arena import workers as watched
from spieltisch.agents.arena.journal import ArenaJournal
from spieltisch.agents.arena.match import (
    FORFEIT_REASONS,
    MoveTimer,
    forfeit_rewards,
    play_game,
)
from spieltisch.agents.arena.provenance import machine_info, peak_rss_gib
from spieltisch.agents.arena.report import to_markdown
from spieltisch.agents.files import check_output_path
from spieltisch.agents.registry import check_agent_name, make_agent
from spieltisch.envs import GAMES, options_with_defaults, reward_bounds


class AgentFailure(RuntimeError):
    """An agent forfeited a game with ``fail_fast``: it raised, played an illegal move or ran
    over the time limit; the message names it."""


@dataclass
class GameResult:
    """One arena game. ``order[seat]`` = index (into the table) of the agent in that seat;
    ``rewards[i]`` = final reward of table agent ``i``. A game lost by forfeit has
    ``forfeit`` = the index of the agent that lost it, ``forfeit_reason`` (one of
    ``match.FORFEIT_REASONS``), ``error`` (what happened) and ``win_type`` ``"forfeit"``."""

    seed: int
    order: tuple[int, ...]
    rewards: tuple[float, ...]
    moves: int
    truncated: bool = False
    win_type: str | None = None
    error: str | None = None
    forfeit: int | None = None
    forfeit_reason: str | None = None
    #: backgammon with the cube: ``(doubles, takes, drops)`` of each table agent (else None)
    cube_actions: tuple[tuple[int, int, int], ...] | None = None

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> GameResult:
        """The result ``asdict`` wrote as JSON (its tuples read back as lists)."""
        cube = d.get("cube_actions")
        return cls(**{
            **d, "order": tuple(d["order"]), "rewards": tuple(d["rewards"]),
            "cube_actions": None if cube is None else tuple(tuple(c) for c in cube),
        })  # fmt: skip


def _cube_actions(
    game: str, options: dict[str, Any], moves: Sequence[tuple[str, int]], seats: dict[str, int]
) -> tuple[tuple[int, int, int], ...] | None:
    """``(doubles, takes, drops)`` per table agent (``seats``: env agent name -> table index)
    in a backgammon game with the cube; None for other games."""
    if game != "backgammon" or not options.get("cube"):
        return None
    from spieltisch.envs.backgammon import rules as bg

    counts = [[0, 0, 0] for _ in seats]
    for name, action in moves:
        if action in (bg.DOUBLE, bg.TAKE, bg.DROP):
            counts[seats[name]][action - bg.DOUBLE] += 1
    return tuple((a, b, c) for a, b, c in counts)


def _agent_seed(game_seed: int, index: int) -> int:
    return int(np.random.SeedSequence([game_seed, index, 99]).generate_state(1)[0])


def _label(specs: Sequence[str], index: int) -> str:
    return f"{specs[index]!r} (#{index})"


class _Table:
    """The env and the agents (one per table entry) of a table in one process."""

    def __init__(self, game: str, specs: Sequence[str], options: dict[str, Any]) -> None:
        from spieltisch.envs import make

        self.game = game
        self.options = options
        self.specs = list(specs)
        self.env = make(game, **options)
        self.agents = [self._make(i) for i in range(len(specs))]

    def _make(self, i: int) -> Any:
        return make_agent(self.specs[i], self.game, seed=i, game_options=self.options)

    def play(
        self, task: tuple[int, tuple[int, ...]], opening_plies: int, timer: MoveTimer
    ) -> GameResult:
        """Play one (seed, seat order) game; a forfeit is scored, not raised."""
        seed, order = task
        names = self.env.possible_agents
        seated = {names[seat]: self.agents[i] for seat, i in enumerate(order)}
        labels = {names[seat]: _label(self.specs, i) for seat, i in enumerate(order)}
        for i, agent in enumerate(self.agents):
            agent.reset(_agent_seed(seed, i))
        record = play_game(
            self.env, seated, seed=seed, opening_plies=opening_plies, timer=timer, forfeit=True,
            labels=labels,
        )  # fmt: skip
        rewards = [0.0] * len(self.specs)
        for seat, i in enumerate(order):
            rewards[i] = float(record.rewards[names[seat]])
        if record.forfeit is not None:
            lost = record.forfeit
            index = order[names.index(lost.agent)]
            if lost.reason == "time_limit" and timer.clock is None:
                # its move goes on in an abandoned thread, which may hold the agent's locks:
                # the next games (and the workers forked from here) get a fresh agent
                self.agents[index] = self._make(index)
            return GameResult(
                seed, order, tuple(rewards), record.num_moves, win_type="forfeit",
                error=lost.message, forfeit=index, forfeit_reason=lost.reason,
            )  # fmt: skip
        win_type = None
        for info in record.infos.values():
            win_type = info.get("win_type", win_type)
        seats = {names[seat]: i for seat, i in enumerate(order)}
        return GameResult(
            seed, order, tuple(rewards), record.num_moves, record.truncated, win_type,
            cube_actions=_cube_actions(self.game, self.options, record.moves, seats),
        )  # fmt: skip


def _worker_player(
    game: str,
    specs: Sequence[str],
    options: dict[str, Any],
    opening_plies: int,
    seconds: float | None,
    first_move_seconds: float | None,
    table: _Table | None,
    clock: watched.SharedMoveClock,
) -> Any:
    """Runs in a worker: the function that plays one task there. ``table``: the parent's,
    inherited through fork with its agents warmed up (None: build one here)."""
    if table is None:
        table = _Table(game, specs, options)
    timer = MoveTimer(seconds, first_move_seconds, clock=clock)
    return lambda task: table.play(task, opening_plies, timer)


def _lost_in_worker(
    specs: Sequence[str], task: tuple[int, tuple[int, ...]], move: watched.MoveInProgress, why: str
) -> GameResult:
    """The result of a game whose worker was killed past a move's limit, or died in a move."""
    seed, order = task
    index = order[move.seat]
    seats = [str(seat) for seat in range(len(order))]
    by_seat = forfeit_rewards(seats, str(move.seat), move.stake)
    rewards = [0.0] * len(specs)
    for seat, i in enumerate(order):
        rewards[i] = by_seat[str(seat)]
    if why == "time_limit":
        message = f"agent {_label(specs, index)} did not return, over the time limit of "
        message += f"{move.limit:g} s for a move"
        reason = "time_limit"
    else:
        message = f"agent {_label(specs, index)} raised: its worker process {why} in its move"
        reason = "raised"
    return GameResult(
        seed, order, tuple(rewards), move.moves, win_type="forfeit", error=message,
        forfeit=index, forfeit_reason=reason,
    )  # fmt: skip


def check_table_counts(seeds: int, seed: int, opening_plies: int, workers: int) -> None:
    """ValueError naming a count an arena run cannot use: ``seeds`` and ``workers`` at least 1,
    ``seed`` (the first) and ``opening_plies`` at least 0 (0 seeds played no game and reported
    a score of 0; a negative seed failed in the first game)."""
    for name, value, least in (
        ("seeds", seeds, 1),
        ("seed", seed, 0),
        ("opening_plies", opening_plies, 0),
        ("workers", workers, 1),
    ):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
            raise ValueError(f"{name} must be an integer of at least {least}, got {value!r}")


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
    move_time_limit: float | None = None,
    first_move_time_limit: float | None = None,
    fail_fast: bool = False,
    journal: ArenaJournal | None = None,
) -> list[GameResult]:
    """Play ``seeds`` seeds x every seat order of the agents ``specs`` (one per seat), or
    with ``distinct_orders`` only the orders that differ in which *names* sit where.
    ``journal``: the games it records for this table are taken as played, and each game played
    is recorded in it (:mod:`.journal`).

    ``move_time_limit``: seconds an agent may take for a move (None: no limit);
    ``first_move_time_limit``: for each agent's first move in the first game (default the
    larger of the limit and ``match.FIRST_MOVE_SECONDS``). A game an agent forfeits (see the
    module docstring) is scored as lost by it; with ``fail_fast`` the first forfeit raises
    :class:`AgentFailure` naming the agent instead.
    """
    options = dict(options or {})
    check_table_counts(seeds, seed, opening_plies, workers)
    n = len(specs) if num_seats is None else num_seats
    if len(specs) != n:
        raise ValueError(f"{game} with these options seats {n} agents, got {len(specs)}")
    orders = seat_orders(specs, distinct_orders)
    tasks = [(seed + s, order) for s in range(seeds) for order in orders]
    timer = MoveTimer(move_time_limit, first_move_time_limit)  # checks the limits first
    results: list[GameResult] = []
    if journal is not None:  # the games recorded are not played again
        recorded = [GameResult.from_json(r) for r in journal.recorded(list(specs))]
        wanted = set(tasks)
        results, done = [], set()
        for r in recorded:  # each game once: a journal may record one twice (older versions)
            if (r.seed, r.order) in wanted and (r.seed, r.order) not in done:
                results.append(r)
                done.add((r.seed, r.order))
        tasks = [task for task in tasks if task not in done]
    bar = _bar(len(tasks) + len(results), progress, specs)
    bar.update(len(results))

    def take(result: GameResult) -> bool:
        """Keep ``result``; True when the table stops here (a forfeit with ``fail_fast``)."""
        results.append(result)
        if journal is not None:
            journal.append(list(specs), asdict(result))
        bar.update(1)
        return fail_fast and result.forfeit is not None

    try:
        # The first game in this process: compiles (or loads) the agents' numba code and
        # networks once, before any worker is forked, so they inherit it.
        table = _Table(game, specs, options)
        stopped = not tasks or take(table.play(tasks[0], opening_plies, timer))
        rest = [] if stopped else tasks[1:]
        if rest and ((workers > 1 and len(tasks) >= 4) or move_time_limit is not None):
            first = move_time_limit if watched.CAN_FORK else first_move_time_limit
            player = functools.partial(
                _worker_player, game, list(specs), options, opening_plies, move_time_limit,
                first, table if watched.CAN_FORK else None,
            )  # fmt: skip
            lost = functools.partial(_lost_in_worker, list(specs))
            watched.run_watched(rest, player, workers, lost, take)
        else:
            for task in rest:
                if take(table.play(task, opening_plies, timer)):
                    break
    finally:
        bar.close()
    failed = [r for r in results if r.forfeit is not None]
    if fail_fast and failed:
        raise AgentFailure(failed[0].error)
    results.sort(key=lambda r: (r.seed, r.order))
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


def seed_outcomes(rewards_by_seed: dict[int, list[float]]) -> dict[str, int]:
    """How the seeds' seat orders went for the agent: ``seeds_won_every_order`` (it won every
    game of the seed), ``seeds_lost_every_order`` and ``seeds_split`` (the rest). Where the seat
    decides most games (Hus between good players: the same agent wins as the favoured seat
    either way round), most seeds are split and only the difference of the other two moves the
    score from 0.5: score = 0.5 + (won - lost) / (2 * seeds) without draws."""
    won = sum(1 for r in rewards_by_seed.values() if min(r) > 0)
    lost = sum(1 for r in rewards_by_seed.values() if max(r) < 0)
    return {
        "seeds_won_every_order": won,
        "seeds_lost_every_order": lost,
        "seeds_split": len(rewards_by_seed) - won - lost,
    }


def summarize_pair(
    results: Sequence[GameResult],
    names: tuple[str, str],
    reward_bounds: tuple[float, float] | None = None,
) -> PairSummary:
    """Summary of a two-agent table, from table agent 0's side. Reward intervals treat the
    games of one seed as one paired observation, clipped to ``reward_bounds`` (the least and
    greatest reward of a game: :func:`spieltisch.envs.reward_bounds`)."""
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
    mean, lo, hi = stats.paired_mean_interval(
        [float(np.mean(v)) for v in by_seed.values()], bounds=reward_bounds
    )
    extra: dict[str, Any] = {}
    types = [g.win_type for g in results]
    if any(t not in (None, "forfeit") for t in types):
        for label, kinds in (("gammon", ("gammon", "backgammon")), ("backgammon", ("backgammon",))):
            won = sum(1 for g in results if g.win_type in kinds and g.rewards[0] > 0)
            lost = sum(1 for g in results if g.win_type in kinds and g.rewards[0] < 0)
            extra[f"{label}_won_rate"] = won / n
            extra[f"{label}_won_ci"] = stats.wilson(won, n)
            extra[f"{label}_lost_rate"] = lost / n
            extra[f"{label}_lost_ci"] = stats.wilson(lost, n)
    extra["mean_moves"] = float(np.mean([g.moves for g in results])) if n else 0.0
    extra.update(seed_outcomes(by_seed))
    cubed = [g.cube_actions for g in results if g.cube_actions is not None]
    if cubed:  # backgammon with the cube: how often each side doubled, took and dropped
        for side, index in (("agent", 0), ("opponent", 1)):
            totals = np.sum([c[index] for c in cubed], axis=0)
            names3 = ("doubles", "takes", "drops")
            extra[f"{side}_cube"] = {key: int(v) for key, v in zip(names3, totals, strict=True)}
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
    move_time_limit: float | None = None
    # one row per agent that forfeited a game: its name, its games lost by forfeit per reason,
    # and the first message (see summarize_forfeits)
    forfeits: list[dict[str, Any]] = field(default_factory=list)
    #: the most resident memory the evaluation held (this process or a worker it waited for)
    peak_rss_gib: float | None = None

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
    mode: str | None = None,
    options: dict[str, Any] | None = None,
    opening_plies: int = 0,
    workers: int = 1,
    progress: bool = False,
    bootstrap: int = 200,
    move_time_limit: float | None = None,
    first_move_time_limit: float | None = None,
    fail_fast: bool = False,
    journal: str | os.PathLike | None = None,
) -> ArenaReport:
    """Run the arena: ``seeds`` seeds x both seat orders per pair of agents (see
    :func:`pairings`), or, for a HiLo table of more than two players (``mode="table"``), all
    seat orders of the listed agents. ``mode`` None: ``table`` for a table of more than two
    seats, else ``pair`` for two agents and ``round-robin`` for more (a pairing mode for a
    bigger table is refused). Raises ValueError before any game starts for an agent
    that cannot be made (an unknown name, listing the valid agents; a bad parameter; a missing
    checkpoint). ``move_time_limit``, ``first_move_time_limit`` and
    ``fail_fast``: see :func:`play_table`; the report's ``forfeits`` counts the games each agent
    lost by forfeit. ``journal``: a file recording every game as it ends (:mod:`.journal`);
    run again with it, an evaluation that was killed plays only the games not recorded."""
    options = dict(options or {})
    check_table_counts(seeds, seed, opening_plies, workers)
    for spec in agents:  # unattended: a person plays with spieltisch play
        check_agent_name(spec, game, human=False)
    from spieltisch.envs import make

    num_seats = len(make(game, **options).possible_agents)
    if mode is None:
        mode = "table" if num_seats > 2 else "pair" if len(agents) == 2 else "round-robin"
    elif num_seats > 2 and mode != "table":  # (it was played as a table, under another name)
        raise ValueError(
            f"mode {mode!r} pairs two agents; {game} with these options seats {num_seats}: "
            "use mode 'table' (the default there)"
        )
    # Each agent built once here, so a bad parameter or a missing checkpoint fails before the
    # first game, not after the pairs before it have played (the workers build their own).
    for spec in dict.fromkeys(agents):
        make_agent(spec, game, seed=0, game_options=options)
    MoveTimer(move_time_limit, first_move_time_limit)  # bad limits fail before any game
    table_mode = mode == "table"
    bounds = reward_bounds(game, options)
    # the table's shape is checked before the journal is written (a refused run wrote its header)
    if table_mode and len(agents) != num_seats:
        raise ValueError(f"{game} with these options seats {num_seats} agents, got {len(agents)}")
    to_pair = [] if table_mode else pairings(agents, mode)
    record = None
    if journal is not None:  # what makes the games recorded the same games as these
        header = {"game": game, "options": options, "opening_plies": opening_plies,
                  "move_time_limit": move_time_limit}  # fmt: skip
        record = ArenaJournal(check_output_path(journal), header, same=_same_games)
    limits = {
        "move_time_limit": move_time_limit, "first_move_time_limit": first_move_time_limit,
        "fail_fast": fail_fast, "journal": record,
    }  # fmt: skip
    if table_mode:
        results = play_table(
            game, agents, seeds, seed, options, opening_plies, workers, progress, num_seats,
            distinct_orders=True, **limits,
        )  # fmt: skip
        return ArenaReport(
            game, list(agents), "table", seeds, seed, options, opening_plies, [],
            table=summarize_table(results, agents, bounds), machine=machine_info(),
            move_time_limit=move_time_limit, peak_rss_gib=peak_rss_gib(),
            forfeits=summarize_forfeits([(r, list(range(len(agents)))) for r in results], agents),
        )  # fmt: skip
    pairs: list[PairSummary] = []
    outcomes: list[tuple[int, int, float]] = []
    played: list[tuple[GameResult, list[int]]] = []
    for i, j in to_pair:
        results = play_table(
            game, [agents[i], agents[j]], seeds, seed, options, opening_plies, workers, progress,
            **limits,
        )  # fmt: skip
        pairs.append(summarize_pair(results, (agents[i], agents[j]), bounds))
        outcomes.extend((i, j, 1.0 if g.rewards[0] > 0 else 0.5 if g.rewards[0] == 0 else 0.0)
                        for g in results)  # fmt: skip
        played.extend((g, [i, j]) for g in results)
    ratings = None
    if mode == "round-robin" and len(agents) > 2:
        r, lo, hi = stats.bootstrap_ratings(
            outcomes, len(agents), np.random.default_rng(seed), samples=bootstrap
        )
        ratings = {
            _name(agents, k): {"elo": float(r[k]), "low": float(lo[k]), "high": float(hi[k])}
            for k in range(len(agents))
        }
    return ArenaReport(
        game, list(agents), mode, seeds, seed, options, opening_plies, pairs, ratings,
        machine=machine_info(), move_time_limit=move_time_limit,
        forfeits=summarize_forfeits(played, agents), peak_rss_gib=peak_rss_gib(),
    )  # fmt: skip


def _name(agents: Sequence[str], k: int) -> str:
    """Agent ``k``'s name in a report: its name, with ``(#k)`` where the name is listed twice."""
    return f"{agents[k]} (#{k})" if agents.count(agents[k]) > 1 else agents[k]


def summarize_forfeits(
    played: Sequence[tuple[GameResult, Sequence[int]]], agents: Sequence[str]
) -> list[dict[str, Any]]:
    """One row per agent that lost games by forfeit, in table order: ``agent`` (its report
    name), ``index``, ``games`` (games it forfeited), one count per reason of
    ``match.FORFEIT_REASONS`` and ``first`` (the message of its first forfeit, by seed).
    ``played``: each game with the table indices of its agents (a pair's two agents)."""
    rows: dict[int, dict[str, Any]] = {}
    for g, indices in sorted(played, key=lambda p: (p[0].seed, p[0].order)):
        if g.forfeit is None:
            continue
        k = indices[g.forfeit]
        row = rows.setdefault(
            k, {"agent": _name(agents, k), "index": k, "games": 0,
                **dict.fromkeys(FORFEIT_REASONS, 0), "first": g.error},
        )  # fmt: skip
        row["games"] += 1
        row[g.forfeit_reason] += 1
    return [rows[k] for k in sorted(rows)]


def summarize_table(
    results: Sequence[GameResult],
    agents: Sequence[str],
    reward_bounds: tuple[float, float] | None = None,
) -> list[dict[str, Any]]:
    """One row per agent name of an n-player table (agents listed twice or more pooled over
    their seats, ``seats`` says how many): games (one per seat held), wins (a shared win
    counts), draws (a zero reward: everybody tied, or truncated), losses, mean reward with
    interval (each seed's games averaged first; clipped to ``reward_bounds``)."""
    out = []
    for name in dict.fromkeys(agents):
        indices = [i for i, a in enumerate(agents) if a == name]
        r = np.array([g.rewards[i] for g in results for i in indices], dtype=np.float64)
        n = int(r.size)
        wins = int((r > 0).sum())
        by_seed: dict[int, list[float]] = {}
        for g in results:
            by_seed.setdefault(g.seed, []).extend(g.rewards[i] for i in indices)
        mean, lo, hi = stats.mean_interval(
            [float(np.mean(v)) for v in by_seed.values()], bounds=reward_bounds
        )
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


def _same_games(header: dict[str, Any]) -> dict[str, Any]:
    """A journal header as compared: the game's options with their defaults filled in, so that
    ``-o pits=6`` (Kalaha's default) and no option are the same games."""
    if not isinstance(header.get("options"), dict) or header.get("game") not in GAMES:
        return header
    return {**header, "options": options_with_defaults(header["game"], header["options"])}

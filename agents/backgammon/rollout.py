"""Backgammon rollouts: a position's value estimated by playing it to the end many times.

::

    from spieltisch.agents.backgammon.rollout import rollout

    result = rollout("4HPwATDgc/ABMA 0 roll", "pretrained:backgammon", games=1296, seed=0)
    print(result.to_table())        # win / gammon / backgammon for both sides, equity, +- s.e.
    result.win.mean, result.win.se, result.equity.interval()

The position is an engine state or text: the engine notation of
:meth:`~spieltisch.envs.backgammon.engine.BackgammonState.to_text` (``"<position ID> <seat>
roll"`` for a seat about to roll, ``"<position ID> <seat> 31"`` for a seat about to play 3-1,
``"<position ID> <winner> over"`` for a finished game), or a bare GNU Backgammon position ID
(its player on roll as seat 0, about to roll; as
:meth:`~spieltisch.envs.backgammon.engine.BackgammonGame.state_from_position_id`). Rollouts are
cubeless (no doubling cube). Every result is from the view of the **player on roll** (the seat
on turn in the text): the probabilities that it wins, wins a gammon, wins a backgammon, loses a
gammon and loses a backgammon (a gammon counts backgammons too, as GNU Backgammon's outputs do)
and its cubeless equity, points per game (single 1, gammon 2, backgammon 3), each with its
standard error.

Agents: a name the registry knows (:func:`spieltisch.agents.registry.make_agent`: ``pubeval``,
``gnubg``, ``pretrained:backgammon``, ``checkpoint:PATH``, ...), an :class:`Agent`, or a pair
``(agent of the player on roll, agent of its opponent)``. The TD value nets at 1 ply (the
shipped ``pretrained:backgammon``, TD checkpoints; not with ``bearoff=true``) play
**batched**: many games at once on the batched engine
(:class:`~spieltisch.envs.backgammon.batch.BackgammonBatch`), every game's legal plays valued
in one call of the net per ply. Any other agent plays game by game through
the agent protocol (``agent.act(observation, state)``, one checker move per call, as the arena
plays). Both ways play the same games from the same seed: a TD net gives identical results
batched or not.

Many positions at once (training targets, :mod:`spieltisch.train.rollout_targets`):
:func:`rollout_positions` rolls out a list of positions about to roll with one TD net, the games
of many positions side by side on the batched engine (each position exactly as :func:`rollout`
would), and :func:`self_play_afterstates` draws such positions from the net's own games.

Variance reduction (each can be switched off, ``stratify=False``, ``duplicate=False``):

* **Stratified first roll.** The first random roll of every game (the roll of the player on
  roll when it is about to roll; the opponent's first roll when the position already has dice
  to play) is not drawn at random: the games are split evenly over the 36 ordered rolls
  (1-1, 1-2, ..., 6-6), so the luck of that roll, usually the largest single source of
  variance, is averaged out exactly. ``games`` is rounded up to a multiple of 36 (72 with
  duplicate dice; :attr:`RolloutResult.notes` says so).
* **Duplicate dice.** Within a first-roll stratum the games come in pairs that share one dice
  stream with the sides exchanged: after the stratum roll, the rolls one game gives the player
  on roll go to its opponent in the twin game and the other way round (a pair of rolls swaps
  places, so each side's turns see the other's dice). Good dice for one side in one game are
  good dice for the other side in the twin, so the pair's results are negatively correlated
  where the dice dominate (races, and contact positions to a lesser degree), and the pair mean
  varies less than two independent games. (Pairs *across* strata deliberately share nothing:
  common dice there would correlate the strata positively and add variance.)
* **Truncation** (``truncate=N``, off by default): each game stops after ``N`` plies (turns)
  and is scored with the net's own five probabilities of the afterstate of the ``N``-th play
  (from its mover's view, turned to the player on roll's; a ``bearoff=true`` agent's are the
  bear-off database's in a bear-off), so a game costs at most ``N`` plies
  and the dice of the rest of the game add no variance; the estimate then carries the net's
  bias. Only agents with a value estimate can do this: the TD value nets (each side's play
  scored by its own net); any other agent is refused with a ValueError. ``truncate=1`` with a
  position about to roll is the exact 1-ply average over the 36 rolls (standard error 0 from
  two units per roll on, 144 games).

Measured (the shipped net; spread of the equity over repeated rollouts with different seeds,
which the reported standard errors matched within the measurement's own noise of 10-15%): in a
bear-off race (``"27aVAABt21oAAA 0 roll"``, 73 pips against 67; 40 rollouts of 360 games per
design) the standard deviation of the equity was 0.051 plain, 0.046 stratified, 0.027 with
duplicate dice and 0.033 with both: duplicate dice cut the variance about 3x there, the first
roll's stratification about 1.2x. From the opening position (``"4HPwATDgc/ABMA 0 roll"``; 100
rollouts of 144 games) 0.120 plain against 0.097 with both: about 1.5x, and the reported errors
suggest less (1.1x); in contact play the later dice dominate and their luck is not exchanged
as cleanly. Truncation (``truncate=2..8``) cut the race's error about 3x more, at the cost of
the net's bias.

Standard errors. The sampling unit is a pair of duplicate games (their mean), or a game without
duplicate dice; units are independent across and within strata (each unit's dice come from its
own seeded stream). The estimate is the mean of the 36 stratum means (every ordered roll has
probability 1/36 and the same number of units), ``ybar = sum_h W_h ybar_h``, and its variance
the stratified-sampling formula ``Var(ybar) = sum_h W_h^2 s_h^2 / n_h``, with ``s_h^2`` the
sample variance (``n_h - 1``) of the ``n_h`` units of stratum ``h``; the standard error is its
square root, and the 95% interval ``mean +- 1.96 s.e.`` (:meth:`Estimate.interval`). The strata
``h`` of this formula are the 21 *distinct* rolls: a roll and its reverse (2-1, 1-2) are the
same dice to play, so their units are one sample of one stratum of weight ``W_h = 2/36``; a
double is a stratum of weight ``1/36``. With a single unit per ordered roll (``s_h`` of a
double cannot be estimated) the doubles are collapsed in pairs (1-1 with 2-2, 3-3 with 4-4,
5-5 with 6-6: collapsed strata, which counts the difference between the two doubles as
variance, so the error is if anything too large). The equity's error is computed from the
units' equities, so it includes the covariance of the outcomes. Without stratification it is
the simple random-sampling formula ``s^2 / n`` over the ``n`` units (NaN for a single unit).
Games that cannot vary (a finished position, every game of a stratum decided the same way)
have standard error 0, except that with one unit per ordered roll two collapsed doubles that
went differently count as variance (e.g. a position the first roll decides, 27/36 exactly,
reports a standard error of 0.028 at 72 games and 0 at 144).

Reproducibility: the dice of unit ``u`` of stratum ``h`` come from
``numpy.random.default_rng([seed, h, u, block])`` (64 rolls per block), so a seed reproduces the
rollout exactly, whatever ``batch_size``, ``threads`` or the way the games are played; agents
with their own randomness are reset with a seed per game.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from spieltisch.agents.arena.stats import Z95
from spieltisch.agents.backgammon.bearoff import afterstate_outputs as bearoff_afterstate_outputs
from spieltisch.agents.backgammon.bearoff import is_bearoff
from spieltisch.agents.backgammon.cube import flip
from spieltisch.agents.backgammon.td_value import TDValueAgent, evaluate_boards, outputs_of
from spieltisch.agents.base import Agent
from spieltisch.agents.registry import check_agent_name, make_agent
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.batch import BackgammonBatch
from spieltisch.envs.backgammon.engine import BackgammonGame, BackgammonState

#: the agent of ``spieltisch rollout`` (the shipped TD value net)
DEFAULT_AGENT = "pretrained:backgammon"
#: the ordered rolls the first random roll is stratified over
NUM_ROLLS = 36
#: the five outcome probabilities, from the player on roll's view (gammons count backgammons)
OUTCOMES = ("win", "win_gammon", "win_backgammon", "lose_gammon", "lose_backgammon")
_BLOCK = 64  # dice per block of a unit's stream
_NO_STRATUM = NUM_ROLLS  # the stream key's stratum without stratification
#: a game still running after this many plies is an error (a guard, as the env's max_turns)
MAX_PLIES = 10_000


# ----------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Estimate:
    """A rollout estimate: ``mean`` and its standard error ``se`` (NaN when it cannot be
    estimated: a single sampling unit); ``bounds``: the values it can take (0..1 for a
    probability, -3..3 for the equity), which clip its interval."""

    mean: float
    se: float
    bounds: tuple[float, float] = (-math.inf, math.inf)

    def interval(self, z: float = Z95) -> tuple[float, float]:
        """The normal-approximation interval ``mean +- z * se`` (95% by default), clipped to
        ``bounds``."""
        low, high = self.bounds
        return (max(low, self.mean - z * self.se), min(high, self.mean + z * self.se))


@dataclass(frozen=True)
class RolloutResult:
    """What :func:`rollout` returns; every estimate is from the view of ``player``, the seat
    on roll in ``position``. ``win_gammon`` counts backgammons too (and ``lose_gammon``).

    ``games``: games played (``games_requested`` rounded up for stratification and duplicate
    dice; ``notes`` say so). ``first_rolls``: games per first random roll (36 counts for the
    ordered rolls 1-1, 1-2, ..., 6-6; empty without stratification or when no roll is left).
    ``batched``: played on the batched engine (else game by game). ``played``: False when the
    position is already over: no game is played, every estimate is the exact result, ``games``
    the games asked for, and ``batched``, ``stratified`` and ``duplicate`` are False."""

    position: str
    player: int
    agents: tuple[str, str]
    win: Estimate
    win_gammon: Estimate
    win_backgammon: Estimate
    lose_gammon: Estimate
    lose_backgammon: Estimate
    equity: Estimate
    games: int
    games_requested: int
    seconds: float
    seed: int
    truncate: int | None
    stratified: bool
    duplicate: bool
    batched: bool
    first_rolls: tuple[int, ...]
    notes: tuple[str, ...] = ()
    played: bool = True

    @property
    def lose(self) -> Estimate:
        """The opponent's probability of winning (``1 - win``, the same error)."""
        return Estimate(1.0 - self.win.mean, self.win.se, self.win.bounds)

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds if self.seconds > 0 else math.inf

    def to_dict(self) -> dict[str, Any]:
        """Plain data (for JSON): the fields, each estimate as ``{"mean", "se", "low",
        "high"}`` (95% interval), plus ``lose`` and ``games_per_second``."""
        data = asdict(self)
        for name in (*OUTCOMES, "equity", "lose"):
            est = getattr(self, name)
            low, high = est.interval()
            data[name] = {
                "mean": est.mean,
                "se": _num(est.se),
                "low": _num(low),
                "high": _num(high),
            }
        data["agents"] = list(self.agents)
        data["first_rolls"] = list(self.first_rolls)
        data["notes"] = list(self.notes)
        data["games_per_second"] = _num(self.games_per_second)
        return data

    def to_table(self) -> str:
        """The result as a small text table: win, gammon, backgammon for both sides and the
        equity, each with its standard error and 95% interval; then games and time."""
        me, other = self.player, 1 - self.player
        both = self.agents[0] if self.agents[0] == self.agents[1] else None
        who = f"{both} for both sides" if both else f"{self.agents[0]} vs {self.agents[1]}"
        lines = [
            f"rollout of {self.position}: seat {me} on roll; {who}",
            "",
            f"{'':28}{'estimate':>9}{'s.e.':>9}   95% interval",
        ]
        rows = [
            (f"seat {me} (on roll) wins", self.win),
            ("  a gammon (or backgammon)", self.win_gammon),
            ("  a backgammon", self.win_backgammon),
            (f"seat {other} wins", self.lose),
            ("  a gammon (or backgammon)", self.lose_gammon),
            ("  a backgammon", self.lose_backgammon),
        ]
        for label, est in rows:
            lines.append(_row(label, est, signed=False))
        lines.append(_row(f"equity of seat {me}", self.equity, signed=True))
        lines.append(f"{'':28}(cubeless, points per game: single 1, gammon 2, backgammon 3)")
        how = [] if self.played else ["none played: the game is over"]
        if self.first_rolls:
            how.append(f"{NUM_ROLLS} first rolls x {self.first_rolls[0]}")
        if self.duplicate:
            how.append("duplicate dice in pairs")
        if self.truncate is not None:
            how.append(f"truncated after {self.truncate} plies")
        if self.played:
            how.append("batched" if self.batched else "game by game")
        lines += [
            "",
            f"{self.games} games ({', '.join(how)}), seed {self.seed}, {self.seconds:.1f} s "
            f"({self.games_per_second:.0f} games/s)",
        ]
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)


def _num(x: float) -> float | None:
    return None if math.isnan(x) else x


def _row(label: str, est: Estimate, signed: bool) -> str:
    fmt = "{:+.4f}" if signed else "{:.4f}"
    if math.isnan(est.se):
        return f"{label:28}{fmt.format(est.mean):>9}{'n/a':>9}"
    low, high = est.interval()
    return (
        f"{label:28}{fmt.format(est.mean):>9}{est.se:>9.4f}   "
        f"{fmt.format(low)} .. {fmt.format(high)}"
    )


# ----------------------------------------------------------------------------------------------
# Inputs
# ----------------------------------------------------------------------------------------------
def parse_position(position: BackgammonState | str) -> BackgammonState:
    """The state to roll out: a copy of an engine state, or one read from text (anything
    :meth:`BackgammonGame.state_from_text` reads, or a bare GNU Backgammon position ID: its
    player on roll as seat 0, about to roll). Raises ValueError naming the problem (the cube, a
    position before the opening roll)."""
    if isinstance(position, BackgammonState):
        if position.game.cube:
            raise ValueError(
                "rollouts are cubeless: give a state of BackgammonGame() (no cube), or its text"
            )
        state = position.clone()
    elif isinstance(position, str):
        fields = position.split()
        game = BackgammonGame()
        try:
            if len(fields) == 1 and ":" not in fields[0]:  # "ID:MATCHID": state_from_text
                state = game.state_from_position_id(fields[0])
            else:
                state = game.state_from_text(" ".join(fields))
        except ValueError as err:
            raise ValueError(
                f"bad position {position!r}: {err}. Expected '<position ID> <seat on roll> roll' "
                "(e.g. '4HPwATDgc/ABMA 0 roll'), the dice to play instead of 'roll' (e.g. "
                "'4HPwATDgc/ABMA 0 31'), or a GNU Backgammon position ID; rollouts are cubeless"
            ) from None
    else:
        raise TypeError(f"a position is a BackgammonState or text, got {type(position).__name__}")
    if state.phase == k.PH_OPENING:
        raise ValueError(
            "the position is before the opening roll, where nobody is on roll yet: give the "
            "seat on roll, e.g. '4HPwATDgc/ABMA 0 roll' (or the opening roll's dice, "
            "'4HPwATDgc/ABMA 0 31')"
        )
    if state.phase not in (k.PH_ROLL, k.PH_MOVE, k.PH_OVER):  # pragma: no cover - cube phases
        raise ValueError("rollouts are cubeless: the position may not wait for a cube decision")
    return state


def resolve_agents(
    agents: str | Agent | Sequence[str | Agent], seed: int | None = None
) -> tuple[Agent, Agent]:
    """``(agent of the player on roll, agent of its opponent)`` from a name, an agent or a
    pair of them (names through :func:`~spieltisch.agents.registry.make_agent`; ``human`` is
    refused). Raises ValueError naming the problem."""
    if isinstance(agents, str | Agent):
        specs: tuple[Any, ...] = (agents, agents)
    elif isinstance(agents, Sequence) and len(agents) == 2:
        specs = tuple(agents)
    else:
        raise TypeError(
            "agents must be an agent name, an Agent, or a pair (player on roll's, opponent's)"
        )
    out: list[Agent] = []
    for i, spec in enumerate(specs):
        if isinstance(spec, Agent):
            out.append(spec)
        elif isinstance(spec, str):
            check_agent_name(spec, "backgammon", human=False)
            out.append(make_agent(spec, "backgammon", seed=None if seed is None else seed + i))
        else:
            raise TypeError(f"an agent is a name or an Agent, got {type(spec).__name__}")
    return out[0], out[1]


def _batchable(agent: Agent) -> bool:
    # Exactly the 1-ply net: exact bear-offs (``bearoff=True``) and subclasses that choose
    # otherwise (the chance-node search, ``sims=N``) play game by game, as the agent plays.
    return type(agent) is TDValueAgent and agent.ply == 1 and not agent.bearoff


#: seeds are int64 in the dice streams (``default_rng([seed, ...])`` per block)
SEED_LIMIT = 2**63
#: games of one rollout are fewer than this: the per-game arrays (about 200 bytes a game) are
#: allocated up front, so a mistyped huge count failed with numpy's MemoryError
GAMES_LIMIT = 10**7


def _check_int(name: str, value: object, low: int, high: int | None = None) -> int:
    """``value`` as an int in ``low <= value < high`` (no upper bound without ``high``)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    if high is not None and value >= high:
        raise ValueError(f"{name} must be below {high}, got {value!r}")
    return int(value)


# ----------------------------------------------------------------------------------------------
# Dice
# ----------------------------------------------------------------------------------------------
def roll_dice(roll: int) -> tuple[int, int]:
    """The ordered roll ``0..35`` as dice: ``(roll // 6 + 1, roll % 6 + 1)`` (the batched
    engine's reading of a roll number, :func:`~spieltisch.envs.backgammon.rules.dice_of`)."""
    return roll // 6 + 1, roll % 6 + 1


class _DiceStreams:
    """The random rolls of a set of games: roll ``q`` (0, 1, ... : the ``q``-th random roll of
    the game) is the game's stratum for ``q = 0`` when stratified, else position ``p`` of its
    unit's stream, ``p = q - 1`` (``q`` unstratified) with the pair swap ``p ^ 1`` for the twin
    game of a duplicate pair. A stream is 64-roll blocks, block ``b`` of unit ``(h, u)`` drawn
    from ``default_rng([seed, h, u, b])``; ``seed`` is one for all games or one per game (the
    games of several positions rolled out at once, :func:`rollout_positions`)."""

    def __init__(
        self,
        seed: int | np.ndarray,
        strata: np.ndarray,
        units: np.ndarray,
        swaps: np.ndarray,
        stratified: bool,
    ) -> None:
        self.seeds = np.broadcast_to(np.asarray(seed, dtype=np.int64), strata.shape)
        self.strata = strata
        self.units = units
        self.swaps = swaps
        self.stratified = stratified
        self._rows = np.arange(len(strata))
        self._blocks: list[np.ndarray] = []

    def _block(self, b: int) -> np.ndarray:
        while len(self._blocks) <= b:
            bb = len(self._blocks)
            drawn: dict[tuple[int, int], np.ndarray] = {}
            block = np.empty((len(self.strata), _BLOCK), dtype=np.int64)
            keys = zip(self.seeds.tolist(), self.strata.tolist(), self.units.tolist(), strict=True)
            for g, key in enumerate(keys):
                if key not in drawn:
                    rng = np.random.default_rng([*key, bb])
                    drawn[key] = rng.integers(0, NUM_ROLLS, size=_BLOCK)
                block[g] = drawn[key]
            self._blocks.append(block)
        return self._blocks[b]

    def rolls(self, q: int) -> np.ndarray:
        """Every game's ``q``-th random roll (numbers 0..35, see :func:`roll_dice`)."""
        if self.stratified:
            if q == 0:
                return self.strata.copy()
            q -= 1
        pos = q ^ self.swaps  # 64 is even: a pair's two positions lie in the same block
        return self._block(q // _BLOCK)[self._rows, pos % _BLOCK]


def _design(games: int, stratify: bool, duplicate: bool) -> tuple[np.ndarray, ...]:
    """Per game index: stratum, unit (within the stratum) and pair swap. Games cycle through
    the strata (game ``i`` is in stratum ``i % 36``), so every prefix of whole rounds is
    balanced."""
    i = np.arange(games, dtype=np.int64)
    if stratify:
        strata, rep = i % NUM_ROLLS, i // NUM_ROLLS
    else:
        strata, rep = np.full(games, _NO_STRATUM, dtype=np.int64), i
    if duplicate:
        return strata, rep // 2, rep % 2
    return strata, rep, np.zeros(games, dtype=np.int64)


# ----------------------------------------------------------------------------------------------
# Outcomes
# ----------------------------------------------------------------------------------------------
def _result_outcome(winner: int, result: int, player: int) -> np.ndarray:
    """The five outcomes (0/1) of a finished game for ``player``."""
    out = np.zeros(5)
    gammon, backgammon = result >= k.RESULT_GAMMON, result >= k.RESULT_BACKGAMMON
    if winner == player:
        out[:3] = (1.0, gammon, backgammon)
    else:
        out[3:] = (gammon, backgammon)
    return out


def _afterstate_outcome(
    params: dict[str, np.ndarray], board: np.ndarray, mover: int, player: int, bearoff: bool = False
) -> np.ndarray:
    """The net's five probabilities of afterstate ``board`` (``mover`` just played), for
    ``player``: the exact result when the mover has borne off every checker, and with
    ``bearoff`` the bear-off database's in a bear-off (as a ``bearoff=True`` agent values it)."""
    board = np.ascontiguousarray(board[: k.BOARD_SIZE], dtype=np.int32)
    if board[k.SIDE * mover + k.OFF] == k.CHECKERS:
        return _result_outcome(mover, int(k.win_type(board, mover)), player)
    if bearoff and is_bearoff(board):
        y = bearoff_afterstate_outputs(board[None], mover)[0][0]
    else:
        y = np.asarray(outputs_of(params, board, mover), dtype=np.float64)
    if mover == player:
        return y.copy()
    return np.array(flip(y))


def _equity(outcomes: np.ndarray) -> np.ndarray:
    w, wg, wb, lg, lb = outcomes.T
    return 2.0 * w - 1.0 + wg + wb - lg - lb


# ----------------------------------------------------------------------------------------------
# Playing the games
# ----------------------------------------------------------------------------------------------
def _first_max(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Per game (rows ``offsets[g]:offsets[g + 1]`` of ``values``): the index of its first
    highest value (0 for games without plays)."""
    counts = np.diff(offsets)
    choices = np.zeros(len(counts), dtype=np.int64)
    has = counts > 0
    if not has.any():
        return choices
    starts = offsets[:-1][has]
    top = np.maximum.reduceat(values, starts)
    idx = np.where(values == np.repeat(top, counts[has]), np.arange(len(values)), len(values))
    choices[has] = np.minimum.reduceat(idx, starts) - starts
    return choices


class _Evaluator:
    """The movers' nets over a ply's afterstates, split over ``threads`` (the kernels release
    the GIL)."""

    def __init__(self, seat_params: tuple[dict, dict], threads: int) -> None:
        self.seat_params = seat_params
        self.threads = threads
        self.pool = ThreadPoolExecutor(threads) if threads > 1 else None

    def __call__(self, boards: np.ndarray, movers: np.ndarray) -> np.ndarray:
        values = np.zeros(len(boards))
        for seat in (0, 1):
            rows = np.flatnonzero(movers == seat)
            if rows.size:
                values[rows] = self._values(boards[rows], seat)
        return values

    def _values(self, boards: np.ndarray, seat: int) -> np.ndarray:
        params = self.seat_params[seat]
        if self.pool is None or len(boards) < 64 * self.threads:
            return evaluate_boards(params, boards, seat)
        parts = np.array_split(boards, self.threads)
        return np.concatenate(
            list(self.pool.map(lambda b: evaluate_boards(params, b, seat), parts))
        )

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown()


def _play_batched(
    starts: Sequence[BackgammonState],
    players: np.ndarray,
    first_turn: int,
    evaluate: _Evaluator,
    dice: _DiceStreams,
    truncate: int | None,
    threads: int,
    on_games: Callable[[int], None],
) -> np.ndarray:
    """The outcomes ``(n, 5)`` of ``dice``'s games, game ``g`` from ``starts[g]`` for the seat
    ``players[g]``, all played at once on the batched engine: every ply, each unfinished game's
    legal plays are valued by its mover's net and the first best is played; ``first_turn`` is
    the ply of the first random roll of every start (0: about to roll; 1: it has dice to
    play)."""
    n = len(dice.strata)
    batch = BackgammonBatch(starts[0].game, n, seed=0, threads=threads)
    try:
        first = dice.rolls(0) if first_turn == 0 else None
        for g in range(n):
            state = starts[g].clone()
            if first is not None:
                state.set_dice(*roll_dice(int(first[g])))
            batch.set_state(g, state)
        outcomes = np.zeros((n, 5))
        recorded = np.zeros(n, dtype=bool)
        reported = 0
        ply = 0
        while not batch.terminal.all():
            offsets, boards, _ = batch.legal_plays()
            movers = batch.states[:, k.M_TURN].astype(np.int64)
            row_movers = np.repeat(movers, np.diff(offsets))
            choices = _first_max(evaluate(boards, row_movers), offsets)
            if truncate is not None and ply + 1 >= truncate:
                for g in np.flatnonzero(~batch.terminal):
                    params = evaluate.seat_params[movers[g]]
                    board = boards[offsets[g] + choices[g]]
                    outcomes[g] = _afterstate_outcome(
                        params, board, int(movers[g]), int(players[g])
                    )
                    recorded[g] = True
                break
            batch.step_plays(choices, rolls=dice.rolls(ply + 1 - first_turn))
            ply += 1
            if ply >= MAX_PLIES and not batch.terminal.all():
                g = int(np.flatnonzero(~batch.terminal)[0])
                raise RuntimeError(f"a game from {starts[g].to_text()} ran past {MAX_PLIES} plies")
            done = np.flatnonzero(batch.terminal & ~recorded)
            for g in done:
                s = batch.states[g]
                outcomes[g] = _result_outcome(
                    int(s[k.M_WINNER]), int(s[k.M_RESULT]), int(players[g])
                )
            recorded[done] = True
            on_games(len(done))
            reported += len(done)
        on_games(n - reported)  # the games scored at the truncation
        return outcomes
    finally:
        batch.close()


def _play_one(
    start: BackgammonState,
    player: int,
    first_turn: int,
    seat_agents: tuple[Agent, Agent],
    dice: _DiceStreams,
    truncate: int | None,
    agent_seed: int,
) -> np.ndarray:
    """One game (``dice`` holds just it) played through the agent protocol, as the arena plays:
    each decision is ``agent.act(observation, copy of the state)``, one checker move a call."""
    state = start.clone()
    for agent in {id(a): a for a in seat_agents}.values():
        agent.reset(seed=agent_seed)
    observation = np.empty(k.OBS_SIZE, dtype=np.float32)
    plies = 0
    while not state.is_terminal():
        if state.is_chance_node():
            if truncate is not None and plies >= truncate:
                mover = 1 - state.turn
                agent = seat_agents[mover]
                return _afterstate_outcome(
                    agent.params,
                    state.s,
                    mover,
                    player,
                    agent.bearoff,  # type: ignore[attr-defined]
                )
            state.set_dice(*roll_dice(int(dice.rolls(plies - first_turn)[0])))
        seat = state.current_player
        agent = seat_agents[seat]
        mask = state.legal_mask()
        k.observe(state.s, seat, observation)
        action = agent.act({"observation": observation.copy(), "action_mask": mask}, state.clone())
        if (
            isinstance(action, bool)
            or not isinstance(action, int | np.integer)
            or not 0 <= action < len(mask)
            or not mask[action]
        ):
            raise RuntimeError(
                f"agent {agent.name} played the illegal action {action!r} in {state.to_text()}"
            )
        state.apply(int(action))
        if state.is_terminal() or state.is_chance_node():
            plies += 1
            if plies >= MAX_PLIES and not state.is_terminal():
                raise RuntimeError(f"a game from {start.to_text()} ran past {MAX_PLIES} plies")
    return _result_outcome(int(state.s[k.M_WINNER]), int(state.s[k.M_RESULT]), player)


# ----------------------------------------------------------------------------------------------
# Statistics
# ----------------------------------------------------------------------------------------------
def _variance_groups(stratified: bool, per_stratum: int) -> list[tuple[float, list[int]]]:
    """The strata of the variance formula as ``(weight, ordered rolls)``: the 21 distinct rolls
    (a roll and its reverse, e.g. 2-1 and 1-2, are the same dice to play, so their games are
    one stratum of weight 2/36; a double is one of weight 1/36). With one unit per ordered roll
    the doubles, alone in their strata, are collapsed in pairs (1-1 with 2-2, 3-3 with 4-4,
    5-5 with 6-6). None without stratification."""
    if not stratified:
        return []
    groups: list[tuple[float, list[int]]] = []
    for a in range(6):
        for b in range(a + 1, 6):
            groups.append((2 / NUM_ROLLS, [6 * a + b, 6 * b + a]))
    doubles = [7 * a for a in range(6)]
    if per_stratum >= 2:
        groups += [(1 / NUM_ROLLS, [d]) for d in doubles]
    else:
        groups += [(2 / NUM_ROLLS, doubles[i : i + 2]) for i in range(0, 6, 2)]
    return groups


def _estimates(
    values: np.ndarray, strata: np.ndarray, units: np.ndarray, stratified: bool
) -> list[Estimate]:
    """Mean and standard error of each column of ``values`` (one row per game) by the
    stratified formula over sampling units (see the module docstring)."""
    keys = strata * (int(units.max()) + 1) + units
    _, unit_of, sizes = np.unique(keys, return_inverse=True, return_counts=True)
    unit_values = np.zeros((len(sizes), values.shape[1]))
    np.add.at(unit_values, unit_of, values)
    unit_values /= sizes[:, None]
    unit_strata = np.zeros(len(sizes), dtype=np.int64)
    unit_strata[unit_of] = strata
    means = values.mean(axis=0)
    groups = _variance_groups(stratified, len(sizes) // NUM_ROLLS)
    if groups:
        var = np.zeros(values.shape[1])
        for weight, rolls in groups:
            group = unit_values[np.isin(unit_strata, rolls)]
            var += weight**2 * group.var(axis=0, ddof=1) / len(group)
    elif len(sizes) >= 2:
        var = unit_values.var(axis=0, ddof=1) / len(sizes)
    else:
        var = np.full(values.shape[1], np.nan)
    se = np.sqrt(np.maximum(var, 0.0))
    bounds = [(0.0, 1.0)] * 5 + [(-3.0, 3.0)]  # the five probabilities, the equity
    return [Estimate(float(m), float(e), b) for m, e, b in zip(means, se, bounds, strict=True)]


# ----------------------------------------------------------------------------------------------
# The rollout
# ----------------------------------------------------------------------------------------------
def rollout(
    position: BackgammonState | str,
    agents: str | Agent | Sequence[str | Agent] = DEFAULT_AGENT,
    games: int = 1296,
    seed: int = 0,
    truncate: int | None = None,
    *,
    stratify: bool = True,
    duplicate: bool = True,
    batched: bool | None = None,
    threads: int = 1,
    batch_size: int = 576,
    progress: Callable[[int, int], None] | None = None,
) -> RolloutResult:
    """Roll ``position`` out: play ``games`` games from it to the end with ``agents`` and
    average their results, from the view of the player on roll (see the module docstring for
    positions, agents, the variance reduction and the standard errors).

    ``games``: at least 1 and below :data:`GAMES_LIMIT`, rounded up to a multiple of 36 with
    ``stratify`` (72 with ``duplicate`` too; 2 with ``duplicate`` alone). ``seed``: a
    non-negative integer; the same seed gives the same result. ``truncate``: stop each game
    after that many plies (at least 1) and score it with the net's probabilities (TD value nets
    only). ``batched``: None plays batched when both agents are 1-ply TD value nets, True
    requires it, False plays game by game. ``threads``: threads of the batched engine and of
    the net. ``batch_size``: games on the batched engine at once (memory; the result does not
    depend on it). ``progress``: called with ``(games finished, games)`` as games finish.
    Raises ValueError (TypeError) naming a bad position, agent or number."""
    started = time.perf_counter()
    requested = _check_int("games", games, 1, GAMES_LIMIT)
    seed = _check_int("seed", seed, 0, SEED_LIMIT)
    if truncate is not None:
        truncate = _check_int("truncate", truncate, 1)
    threads = _check_int("threads", threads, 1)
    batch_size = _check_int("batch_size", batch_size, 1)
    start = parse_position(position)
    seat_agents_rel = resolve_agents(agents, seed)
    player = start.turn
    by_seat = (
        seat_agents_rel if player == 0 else (seat_agents_rel[1], seat_agents_rel[0])
    )  # seat 0's, seat 1's
    names = (seat_agents_rel[0].name, seat_agents_rel[1].name)
    if truncate is not None:
        bad = [a.name for a in seat_agents_rel if not isinstance(a, TDValueAgent)]
        if bad:
            raise ValueError(
                f"truncate scores a game with the agent's value estimate: {bad[0]} has none (only "
                "the TD value nets do: pretrained:backgammon, checkpoint:<a TD run>); roll out "
                "without truncate"
            )
    can_batch = all(_batchable(a) for a in seat_agents_rel)
    if batched is None:
        batched = can_batch
    elif batched and not can_batch:
        raise ValueError(
            "batched rollouts need 1-ply TD value nets for both sides (pretrained:backgammon, "
            f"checkpoint:<a TD run>); got {names[0]} and {names[1]}"
        )
    if threads > 1 and not batched:
        # Game-by-game rollouts run on one thread: more would be silently ignored.
        raise ValueError(
            f"threads={threads} needs a batched rollout (1-ply TD value nets for both sides: "
            f"pretrained:backgammon, checkpoint:<a TD run>); {names[0]} and {names[1]} play "
            "game by game on one thread"
        )

    notes: list[str] = []
    played = not start.is_terminal()
    if not played:  # nothing is played: no dice, no batch (the result said batched, duplicate)
        stratify = duplicate = batched = False
    group = (NUM_ROLLS if stratify else 1) * (2 if duplicate else 1)
    total = -(-requested // group) * group
    if total != requested:
        why = " x ".join(
            ([f"{NUM_ROLLS} first rolls"] if stratify else [])
            + (["pairs of duplicate dice"] if duplicate else [])
        )
        notes.append(f"games rounded up from {requested} to {total} (a multiple of {group}: {why})")
    strata, units, swaps = _design(total, stratify, duplicate)
    first_turn = 0 if start.is_chance_node() else 1

    done = [0]

    def on_games(count: int) -> None:
        if count and progress is not None:
            done[0] += count
            progress(done[0], total)

    if progress is not None:
        progress(0, total)

    if not played:
        outcomes = np.tile(_result_outcome(player, int(start.s[k.M_RESULT]), player), (total, 1))
        notes.append("the game is over: the result is exact (no game was played)")
        on_games(total)
    else:
        outcomes = np.zeros((total, 5))
        if batched:
            evaluate = _Evaluator(tuple(a.params for a in by_seat), threads)  # type: ignore[attr-defined]
            try:
                for lo in range(0, total, batch_size):
                    hi = min(lo + batch_size, total)
                    dice = _DiceStreams(seed, strata[lo:hi], units[lo:hi], swaps[lo:hi], stratify)
                    outcomes[lo:hi] = _play_batched(
                        [start] * (hi - lo), np.full(hi - lo, player), first_turn, evaluate,
                        dice, truncate, threads, on_games,
                    )  # fmt: skip
            finally:
                evaluate.close()
        else:
            for i in range(total):
                dice = _DiceStreams(
                    seed, strata[i : i + 1], units[i : i + 1], swaps[i : i + 1], stratify
                )
                agent_seed = int(np.random.SeedSequence([seed, i]).generate_state(1)[0])
                outcomes[i] = _play_one(
                    start, player, first_turn, by_seat, dice, truncate, agent_seed
                )
                on_games(1)
    values = np.column_stack([outcomes, _equity(outcomes)])
    est = _estimates(values, strata, units, stratify)
    first_rolls: tuple[int, ...] = ()
    if stratify:
        first_rolls = tuple(np.bincount(strata, minlength=NUM_ROLLS).tolist())
    return RolloutResult(
        position=start.to_text(),
        player=player,
        agents=names,
        win=est[0],
        win_gammon=est[1],
        win_backgammon=est[2],
        lose_gammon=est[3],
        lose_backgammon=est[4],
        equity=est[5],
        games=total,
        games_requested=requested,
        seconds=time.perf_counter() - started,
        seed=seed,
        truncate=truncate,
        stratified=stratify,
        duplicate=duplicate,
        batched=bool(batched),
        first_rolls=first_rolls,
        notes=tuple(notes),
        played=played,
    )


def rollout_positions(
    positions: Sequence[BackgammonState],
    params: dict[str, np.ndarray],
    games: int,
    seeds: Sequence[int] | np.ndarray,
    truncate: int | None = None,
    *,
    threads: int = 1,
    batch_size: int = 4608,
    progress: Callable[[int], None] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Roll out many positions at once with one TD value net for both sides (rollout targets
    for training, :mod:`spieltisch.train.rollout_targets`): each position ``games`` games with
    a stratified first roll and duplicate dice (as :func:`rollout`; ``games`` a multiple of 72),
    position ``i``'s dice from ``seeds[i]``, the games of many positions side by side on the
    batched engine (``batch_size`` games at once; the result does not depend on it).

    Every position must be about to roll (an afterstate: its player on roll is the opponent of
    the seat that just played). Returns ``(means, equity_se)``: ``(P, 5)`` the five outcome
    probabilities for the player on roll (win, win gammon, win backgammon, lose gammon, lose
    backgammon) and ``(P,)`` the standard error of its equity. ``progress``: called with the
    number of positions finished so far. Position ``i`` gives exactly what ``rollout(positions[i],
    <the net>, games, seeds[i], truncate)`` gives."""
    games = _check_int("games", games, 1)
    if games % (2 * NUM_ROLLS):
        raise ValueError(f"games must be a multiple of {2 * NUM_ROLLS}, got {games}")
    if truncate is not None:
        truncate = _check_int("truncate", truncate, 1)
    batch_size = _check_int("batch_size", batch_size, 1)
    seeds = np.asarray(seeds, dtype=np.int64)
    if seeds.shape != (len(positions),) or (seeds < 0).any():
        raise ValueError("seeds: one non-negative integer per position")
    for state in positions:
        if state.is_terminal() or not state.is_chance_node():
            raise ValueError(
                f"rollout_positions needs positions about to roll, got {state.to_text()}"
            )
    strata, units, swaps = _design(games, stratify=True, duplicate=True)
    per_batch = max(1, batch_size // games)
    means = np.zeros((len(positions), 5))
    se = np.zeros(len(positions))
    evaluate = _Evaluator((params, params), threads)
    try:
        for lo in range(0, len(positions), per_batch):
            chunk = list(positions[lo : lo + per_batch])
            n = len(chunk)
            starts = [state for state in chunk for _ in range(games)]
            players = np.repeat([state.turn for state in chunk], games)
            dice = _DiceStreams(
                np.repeat(seeds[lo : lo + n], games), np.tile(strata, n), np.tile(units, n),
                np.tile(swaps, n), stratified=True,
            )  # fmt: skip
            outcomes = _play_batched(
                starts, players, 0, evaluate, dice, truncate, threads, lambda _: None
            )
            for i in range(n):
                rows = slice(i * games, (i + 1) * games)
                values = np.column_stack([outcomes[rows], _equity(outcomes[rows])])
                est = _estimates(values, strata, units, stratified=True)
                means[lo + i] = [e.mean for e in est[:5]]
                se[lo + i] = est[5].se
            if progress is not None:
                progress(lo + n)
    finally:
        evaluate.close()
    return means, se


def self_play_afterstates(
    params: dict[str, np.ndarray],
    count: int,
    sample_prob: float,
    rng: np.random.Generator,
    num_games: int = 128,
    threads: int = 1,
) -> list[BackgammonState]:
    """``count`` positions from self-play of the TD value net ``params`` (both seats greedy at
    1 ply, the dice from ``rng``, ``num_games`` games side by side, a finished game started
    again): every afterstate of a play is kept with probability ``sample_prob``, as the
    position with the other seat about to roll (what :func:`rollout_positions` takes; a play
    that ends the game is never kept: its value is exact)."""
    count = _check_int("count", count, 1)
    if not 0.0 < sample_prob <= 1.0:
        raise ValueError(f"sample_prob must be in (0, 1], got {sample_prob!r}")
    game = BackgammonGame()
    batch = BackgammonBatch(game, num_games, seed=int(rng.integers(0, 2**63)), threads=threads)
    evaluate = _Evaluator((params, params), threads)
    kept: list[BackgammonState] = []
    try:
        while len(kept) < count:
            offsets, boards, _ = batch.legal_plays()
            movers = batch.states[:, k.M_TURN].astype(np.int64)
            choices = _first_max(evaluate(boards, np.repeat(movers, np.diff(offsets))), offsets)
            take = (np.diff(offsets) > 0) & (rng.random(num_games) < sample_prob)
            for g in np.flatnonzero(take):
                board, mover = boards[offsets[g] + choices[g]].astype(np.int32), int(movers[g])
                if board[k.SIDE * mover + k.OFF] < k.CHECKERS and len(kept) < count:
                    kept.append(game.state_to_roll(board, 1 - mover))
            batch.step_plays(choices)
            if batch.terminal.any():
                batch.reset(games=batch.terminal.copy())
    finally:
        evaluate.close()
        batch.close()
    return kept

"""Games in progress on the server: one :class:`GameSession` per game, kept in a
:class:`SessionStore`.

A session holds the env, the agents of its seats and the moves so far. Every change goes through
one of its methods under the session's lock, and every input is checked on a copy of the state
before the env is touched, so a refused request changes nothing. A *turn* is what one request
plays: one action in Kalaha, Hus and HiLo (an extra turn in Kalaha is a new turn), and in
backgammon all checker moves of one roll (or one cube action), so a person can take back moves
on the page until the roll is used up and only then sends it.

Agents run under :class:`~spieltisch.agents.arena.match.MoveTimer`: one that runs over its time
limit, raises or plays an illegal action loses the game by forfeit with a message, and the server
goes on. Agents are made only by name through the registry; ``checkpoint:PATH`` only under the
folder the server was started with.
"""

from __future__ import annotations

import gc
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from spieltisch.agents.arena.match import (
    MoveTimeout,
    MoveTimer,
    _call_with_deadline,
    agent_input,
    forfeit_rewards,
    illegal_action_problem,
)
from spieltisch.agents.arena.provenance import resident_bytes
from spieltisch.agents.base import Agent, InformationSet
from spieltisch.agents.human import move_label
from spieltisch.agents.neural.agents import split_parameters
from spieltisch.agents.registry import (
    PREFIX_AGENT_MODULES,
    check_agent_name,
    make_agent,
    parse_agent_name,
)
from spieltisch.envs import GAMES, make, options_with_defaults
from spieltisch.train.web.boards import board_view, check_web_options, legal_moves


class RequestError(ValueError):
    """A request the server refuses; ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class ServerSettings:
    """What the server was started with.

    ``move_time_limit``: seconds an agent may take for one move (its first move in the session
    gets ``first_move_time_limit``, for compiling and loading); ``analysis_time_limit``: seconds
    for one analysis; ``checkpoint_root``: the folder ``checkpoint:PATH`` agents must lie in (None:
    no ``checkpoint:`` agents); ``max_sessions``: games kept at once (the longest unused one is
    dropped first); ``max_memory_gib``: while the server holds more resident memory than this,
    the games unused for longest are dropped (None: no bound; where the memory cannot be read,
    none either); ``session_ttl``: seconds an unused game is kept; ``allowed_hosts``: below.
    ``move_time_limit`` None: agents' moves have no limit."""

    move_time_limit: float | None = 10.0  # None: no limit (--move-time-limit 0)
    first_move_time_limit: float = 120.0
    analysis_time_limit: float = 10.0
    checkpoint_root: Path | None = None
    max_sessions: int = 500
    max_memory_gib: float | None = None  # (spieltisch serve: --max-memory, 8 GiB)
    session_ttl: float = 6 * 3600.0
    allowed_hosts: tuple[str, ...] | None = None
    """the names the server answers to in the Host header (None: any): a page elsewhere that
    points its own name at this machine (DNS rebinding) is refused"""


#: the largest search a request may ask of an agent: the search is built before any time
#: limit applies (sims=100000000 allocated 12.7 GiB), and a move over its limit is abandoned in
#: a thread that still computes
AGENT_PARAMETER_LIMITS = {
    "sims": 4096, "dets": 64, "search": 16, "depth": 16, "leaves": 10**6,
    "tt_bits": 22,  # the table is allocated and cleared: tt_bits=28 took 10.7 GB per game
}  # fmt: skip
#: the most stones (both sides) of a Kalaha board the solver agent ``perfect`` may play here:
#: Kalah(6,4)'s 48 (its first moves take tens of seconds; Kalah(6,6) is out of its reach, and
#: the abandoned solve went on at a full core after the forfeit)
PERFECT_MAX_STONES = 48
#: who analyses a person's seat where no shipped network fits the board (a Kalaha board of 4
#: pits, say); HiLo's person is always analysed by ``heuristic``
FALLBACK_ANALYSTS = {"kalaha": "alphabeta", "hus": "alphabeta", "backgammon": "pubeval"}


def _check_agent(spec: Any, game: str, options: dict[str, Any], settings: ServerSettings) -> str:
    if not isinstance(spec, str) or not spec:
        raise RequestError(f"an agent is a name such as 'random' or 'human', got {spec!r}")
    try:
        base = check_agent_name(spec, game)
        prefix, _, value = spec.partition(":")
        params = (
            split_parameters(prefix, value)[1]
            if prefix in PREFIX_AGENT_MODULES
            else parse_agent_name(spec)[1]
        )
    except ValueError as err:
        raise RequestError(str(err)) from None
    # (time: an alpha-beta move's seconds; beyond the move's limit it forfeits and searches on)
    limits = dict(AGENT_PARAMETER_LIMITS)
    if settings.move_time_limit is not None:  # (None, no limit, was compared: a 500)
        limits["time"] = settings.move_time_limit
    for key, limit in limits.items():
        value = params.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and value > limit:
            raise RequestError(f"agent {spec!r}: {key} is at most {limit:g} here, got {value}")
    if base == "perfect":
        board = options_with_defaults(game, options)
        stones = 2 * board["pits"] * board["seeds"]
        if stones > PERFECT_MAX_STONES:
            raise RequestError(
                f"perfect solves boards of at most {PERFECT_MAX_STONES} stones here (Kalah(6,4)); "
                f"this one has {stones}: try alphabeta, or a smaller board"
            )
    if base == "checkpoint" and settings.checkpoint_root is None:
        raise RequestError(
            "checkpoint: agents are off: start the server with --checkpoint-dir DIR to play "
            "checkpoints under DIR"
        )
    return spec


def _make_agent(spec: str, game: str, seed: int, options: dict, settings: ServerSettings) -> Agent:
    if spec == "human":
        return HumanSeat()
    try:
        return make_agent(spec, game, seed, options, checkpoint_root=settings.checkpoint_root)
    except (ValueError, TypeError, OSError) as err:
        message = str(err)
        named = repr(spec) in message or message.startswith((spec, spec.partition(":")[0] + ":"))
        if not named:  # (an agent's own errors name it: it was named twice)
            message = f"agent {spec!r}: {message}"
        raise RequestError(message) from None


class HumanSeat(Agent):
    """A seat whose moves come from the page (never asked to act by the server)."""

    name = "human"

    def act(self, observation: dict[str, np.ndarray], state: Any | None = None) -> int:
        raise RuntimeError("a person's moves come from the page")


@dataclass
class GameSession:
    """One game on the server (see the module docstring). Built by :meth:`create`."""

    id: str
    game: str
    options: dict[str, Any]
    agent_specs: list[str]
    seed: int
    position: str | None
    settings: ServerSettings
    env: Any = None
    agents: list[Agent] = field(default_factory=list)
    timer: MoveTimer | None = None
    moves: list[dict[str, Any]] = field(default_factory=list)
    status: str = "playing"  # "playing", "over", "truncated", "resigned", "forfeit"
    message: str | None = None
    result: list[float] | None = None
    analysts: dict[str, Agent] = field(default_factory=dict)
    #: who analyses a person's seat, once the shipped network was found not to fit the board
    #: (None: try it; it was loaded and refused again on every analysis)
    fallback_analyst: str | None = None
    states_before: list[Any] = field(default_factory=list)  # Hus: the state before each move
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: held while an analysis (Kalaha's solver: the other slot) computes, past its request when
    #: that timed out (a thread cannot be stopped): the next one waits for it instead of running
    #: the same analyst beside it
    analysis_slot: threading.Semaphore = field(default_factory=threading.BoundedSemaphore)  # 1
    solver_slot: threading.Semaphore = field(default_factory=threading.BoundedSemaphore)  # Kalaha
    last_used: float = field(default_factory=time.monotonic)
    side_rng: np.random.Generator = field(default_factory=np.random.default_rng)

    # --- building ------------------------------------------------------------------------------
    @classmethod
    def create(cls, request: Any, settings: ServerSettings) -> GameSession:
        """A new game from a request body ``{"game", "options", "agents", "seed", "position"}``;
        raises :class:`RequestError` naming what is wrong."""
        if not isinstance(request, dict):
            raise RequestError("the request body must be a JSON object")
        unknown = set(request) - {"game", "options", "agents", "seed", "position"}
        if unknown:
            raise RequestError(
                f"unknown fields {sorted(unknown)}; a new game takes game, options, agents, "
                "seed and position"
            )
        game = request.get("game")
        if not isinstance(game, str) or game not in GAMES:  # (a list was a 500: unhashable)
            raise RequestError(f"unknown game {game!r}; games are {sorted(GAMES)}", 404)
        options = request.get("options")
        try:
            options = check_web_options(game, {} if options is None else options)
        except ValueError as err:
            raise RequestError(str(err)) from None
        seed = request.get("seed")
        if seed is None:  # 63 bits: too many to search for the deal that fits the cards seen
            seed = secrets.randbelow(2**63 - 2**20)  # (agents get seed + seat: below 2**63)
        if isinstance(seed, str) and seed.isascii() and seed.isdigit() and len(seed) <= 20:
            seed = int(seed)  # the page sends the digits: a JavaScript number rounds above 2**53
            # (and int() of over 4300 digits raised ValueError: a 500)
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
            shown = repr(seed) if len(repr(seed)) <= 40 else f"{repr(seed)[:30]}..."
            raise RequestError(f"seed must be a whole number from 0 to 2**63 - 1, got {shown}")
        position = request.get("position")
        if position is not None and (not isinstance(position, str) or len(position) > 2000):
            raise RequestError("position must be the game's position notation (text)")
        try:
            env = make(game, illegal_action="raise", **options)
        except (ValueError, TypeError) as err:
            raise RequestError(str(err)) from None
        specs = request.get("agents")
        seats = len(env.possible_agents)
        if not isinstance(specs, list) or len(specs) != seats:
            raise RequestError(f"{game} needs a list of {seats} agents, one per seat")
        specs = [_check_agent(s, game, options, settings) for s in specs]
        if game == "hilo" and specs.count("human") > 1:
            raise RequestError("HiLo hides cards: at most one person can sit at the table")
        session = cls(
            id=secrets.token_urlsafe(16),
            game=game,
            options=options,
            agent_specs=specs,
            seed=seed,
            position=position,
            settings=settings,
            env=env,
        )
        try:
            env.reset(seed=seed, options=None if position is None else {"position": position})
        except (ValueError, TypeError) as err:
            raise RequestError(f"position: {err}") from None
        session.agents = [
            _make_agent(spec, game, seed + i, options, settings) for i, spec in enumerate(specs)
        ]
        for i, agent in enumerate(session.agents):
            agent.reset(seed + i)
        people = [env.possible_agents[i] for i, s in enumerate(specs) if s == "human"]
        session.timer = MoveTimer(
            settings.move_time_limit, settings.first_move_time_limit, exempt=people
        )
        session.side_rng = np.random.default_rng([seed, 7])
        session._check_over()
        return session

    # --- reading -------------------------------------------------------------------------------
    @property
    def raw(self) -> Any:
        return self.env.unwrapped

    @property
    def humans(self) -> list[int]:
        return [i for i, s in enumerate(self.agent_specs) if s == "human"]

    @property
    def viewer(self) -> int | None:
        """Whose knowledge the page shows in HiLo: the one person's seat, else the public's."""
        humans = self.humans
        return humans[0] if len(humans) == 1 else None

    def current_seat(self) -> int | None:
        if self.status != "playing":
            return None
        return int(self.raw.state.current_player)

    def view(self) -> dict[str, Any]:
        """Everything the page shows, as JSON data. HiLo: only what :attr:`viewer` knows."""
        seat = self.current_seat()
        state = self.raw.state
        human_to_move = seat is not None and self.agent_specs[seat] == "human"
        legal: list[dict[str, Any]] = []
        if human_to_move:
            legal = legal_moves(self.game, state.legal_mask(), seat, self.options)
        data: dict[str, Any] = {
            "id": self.id,
            "game": self.game,
            "options": self.options,
            "seats": [
                {"seat": i, "agent": spec, "name": self.agents[i].name, "human": spec == "human"}
                for i, spec in enumerate(self.agent_specs)
            ],
            "to_move": seat,
            "human_to_move": human_to_move,
            "status": self.status,
            "message": self.message,
            "result": self.result,
            "board": board_view(self.game, state, self.viewer),
            "legal": legal,
            "moves": [dict(m) for m in self.moves],
            "viewer": self.viewer,
            "from_position": self.position is not None,
        }
        if self.game != "hilo":  # HiLo's notation holds every hidden card
            data["position"] = state.to_text()
        return data

    def record(self) -> dict[str, Any]:
        """The game record (JSON): the game, options, agents, start, moves and result; replaying
        the moves from the start reproduces the game. HiLo's record has no seed or start
        position while the game is on (they fix the hidden cards), nor has any game's record
        its seed while a person plays it (it fixes backgammon's dice to come and the agents'
        random choices: a download mid-game told a person every roll ahead)."""
        data: dict[str, Any] = {
            "format": "spieltisch-game-record/1",
            "game": self.game,
            "env": GAMES[self.game],
            "options": self.options,
            "agents": list(self.agent_specs),
            "moves": [dict(m) for m in self.moves],
            "status": self.status,
            "result": self.result,
            "message": self.message,
        }
        on = self.status == "playing"
        if not on or (self.game != "hilo" and not self.humans):
            data["seed"] = self.seed
        if not on or self.game != "hilo":
            data["start_position"] = self.position
        if self.game == "backgammon":
            data["position_id"] = self.raw.state.position_id()
        return data

    def mat_record(self) -> str:
        """The backgammon game in GNU Backgammon's ``.mat`` match format (it imports it; a game
        resigned or forfeited ends with the winner's ``Wins N point(s)``, N the points awarded);
        RequestError for other games and for games not started from the opening."""
        if self.game != "backgammon":
            raise RequestError("the .mat format is for backgammon games")
        from spieltisch.envs.backgammon.records import mat_from_env_moves

        names = [f"seat{i}_{spec}" for i, spec in enumerate(self.agent_specs)]
        lost = None  # the seat that resigned or forfeited (_lose: its result is the lowest)
        if self.status in ("resigned", "forfeit"):
            lost = self.result.index(min(self.result))
        try:
            return mat_from_env_moves(self.options, self.seed, self.position, self.moves,
                                      names=names, resigned=lost)  # fmt: skip
        except ValueError as err:
            raise RequestError(f"no .mat record: {err}") from None

    # --- playing -------------------------------------------------------------------------------
    def human_turn(self, actions: Any) -> None:
        """Play a person's turn (see the module docstring); raises :class:`RequestError` and
        changes nothing if it is not a person's turn or the actions are not a legal turn."""
        seat = self._seat_to_move()
        if self.agent_specs[seat] != "human":
            raise RequestError(f"it is the turn of seat {seat}, an agent, not a person", 409)
        actions = self._checked_turn(actions, seat)
        for action in actions:
            self._step(seat, action)

    def preview(self, actions: Any) -> dict[str, Any]:
        """A backgammon turn in progress on the page: the board after the checker moves
        ``actions`` (not all of the roll) and the legal moves then; changes nothing."""
        seat = self._seat_to_move()
        if self.game != "backgammon":
            raise RequestError("previews are for backgammon turns (several checker moves)")
        if self.agent_specs[seat] != "human":
            raise RequestError(f"it is the turn of seat {seat}, an agent, not a person", 409)
        state = self._played_copy(actions, seat, complete=False)
        done = state.current_player != seat or state.is_terminal() or _chance(state)
        mask = np.zeros(state.game.num_actions, np.int8) if done else state.legal_mask()
        return {
            "board": board_view(self.game, state),
            "legal": legal_moves(self.game, mask, seat, self.options),
            "complete": bool(done),
        }

    def agent_turn(self) -> None:
        """Let the agent to move play its turn, within its time limit; one that fails loses the
        game by forfeit (the session's ``message`` says why)."""
        seat = self._seat_to_move()
        if self.agent_specs[seat] == "human":
            raise RequestError(f"it is the turn of seat {seat}, a person", 409)
        name = self.env.possible_agents[seat]
        agent = self.agents[seat]
        turn = self._turn_key()
        while self.status == "playing" and self.current_seat() == seat and self._turn_key() == turn:
            observation = self.env.observe(name)
            state = agent_input(self.raw, name, self.side_rng)
            label = f"seat {seat} ({self.agent_specs[seat]})"
            try:
                action = self.timer.act(name, agent, observation, state, seat, len(self.moves))
            except MoveTimeout as err:
                return self._forfeit(seat, f"agent {label} {err}")
            except Exception as err:  # a failing agent ends its game, never the server
                return self._forfeit(seat, f"agent {label} raised {type(err).__name__}: {err}")
            problem = illegal_action_problem(action, observation["action_mask"])
            if problem is not None:
                return self._forfeit(seat, f"agent {label} played {problem}")
            self._step(seat, int(action))

    def resign(self, seat: Any) -> None:
        """A person resigns the game for their ``seat``."""
        if self.status != "playing":
            raise RequestError("the game is over already", 409)
        if isinstance(seat, bool) or not isinstance(seat, int) or seat not in self.humans:
            # (True and 0.0 passed as seats 1 and 0, and went into the result's text)
            raise RequestError(f"only a person's seat can resign; people sit at {self.humans}")
        self._lose(seat, "resigned", f"seat {seat} resigned")

    def analyst(self, spec: str | None) -> tuple[Agent, str, bool]:
        """The agent whose thoughts the analysis shows: ``spec``, or by default the agent of the
        seat to move (a person's seat: the game's shipped network, or where none fits the board
        :data:`FALLBACK_ANALYSTS`' agent; HiLo: ``heuristic``), its name, and whether it is new
        (made now: its first analysis may compile or load). Made once per session."""
        seat = self._seat_to_move()
        shipped = None
        if spec is None:
            spec = self.agent_specs[seat]
            if spec == "human" and self.fallback_analyst is not None:
                spec = self.fallback_analyst
            elif spec == "human":
                spec = shipped = f"pretrained:{self.game}" if self.game != "hilo" else "heuristic"
        spec = _check_agent(spec, self.game, self.options, self.settings)
        if spec == "human":
            raise RequestError("a person cannot be analysed; name an agent")
        new = spec not in self.analysts
        if new:
            if len(self.analysts) >= 8:
                raise RequestError("at most 8 analysing agents per game")
            try:
                self.analysts[spec] = _make_agent(spec, self.game, self.seed, self.options,
                                                  self.settings)  # fmt: skip
            except RequestError:
                if shipped is None or self.game not in FALLBACK_ANALYSTS:
                    raise
                self.fallback_analyst = FALLBACK_ANALYSTS[self.game]  # no network fits the board
                return self.analyst(self.fallback_analyst)
        return self.analysts[spec], spec, new

    def analysis_input(self) -> tuple[dict[str, np.ndarray], Any, int]:
        """What an analysing agent may see of the seat to move: its observation and a copy of
        the state (HiLo: the information set of the seat the page shows, and only that one)."""
        seat = self._seat_to_move()
        if self.game == "hilo" and seat != self.viewer:
            raise RequestError(
                "HiLo hides cards: the analysis covers only the seat of the person at the table, "
                "on their turn"
            )
        name = self.env.possible_agents[seat]
        observation = self.env.observe(name)
        if self.raw.perfect_information:
            return observation, self.raw.agent_state(), seat
        return observation, InformationSet(self.raw.state, seat, self.side_rng), seat

    # --- helpers -------------------------------------------------------------------------------
    def _seat_to_move(self) -> int:
        seat = self.current_seat()
        if seat is None:
            raise RequestError(f"the game is over ({self.status})", 409)
        return seat

    def _turn_key(self) -> Any:
        state = self.raw.state
        return state.num_turns() if self.game == "backgammon" else len(self.moves)

    def _checked_turn(self, actions: Any, seat: int) -> list[int]:
        if not isinstance(actions, list) or not actions:
            raise RequestError('a turn is a non-empty list of actions: {"actions": [3]}')
        if self.game != "backgammon" and len(actions) != 1:
            raise RequestError(f"a {self.game} turn is one action, got {len(actions)}")
        self._played_copy(actions, seat, complete=True)
        return [int(a) for a in actions]

    def _played_copy(self, actions: Any, seat: int, complete: bool) -> Any:
        """A copy of the state with ``actions`` played by ``seat``; raises RequestError if one is
        illegal, comes after the turn ended or (``complete``) a backgammon roll is left half
        played."""
        if not isinstance(actions, list) or len(actions) > 8:
            raise RequestError("actions must be a list of at most 8 action numbers")
        state = self.raw.state.clone()
        for i, action in enumerate(actions):
            if isinstance(action, bool) or not isinstance(action, int):
                raise RequestError(f"an action is a whole number, got {action!r}")
            if state.is_terminal() or state.current_player != seat or _chance(state):
                raise RequestError(f"action {i + 1} of {len(actions)} comes after the turn ended")
            problem = illegal_action_problem(action, state.legal_mask())
            if problem is not None:
                raise RequestError(f"action {i + 1} of {len(actions)} is {problem}", 422)
            state.apply(action)
        if complete and self.game == "backgammon" and not state.is_terminal():
            checker_moves = any(a <= 150 for a in actions)  # 150 = pass
            mid_roll = state.current_player == seat and not _chance(state)
            if checker_moves and mid_roll and state.dice():
                raise RequestError(
                    f"the roll is not played out: dice {list(state.dice())} are left", 422
                )
        return state

    def _step(self, seat: int, action: int) -> None:
        label = move_label(self.game, action, seat, self.options)
        if self.game == "hus":  # for showing the sowing of this move stone by stone
            self.states_before.append(self.raw.state.clone())
        self.env.step(action)
        self.moves.append({"seat": seat, "action": action, "label": label})
        self._check_over()

    def _check_over(self) -> None:
        env = self.env
        if not env.agents:
            return
        name = env.agent_selection
        if env.terminations[name] or env.truncations[name]:
            self.result = [float(env.rewards.get(a, 0.0)) + 0.0 for a in env.possible_agents]
            self.status = "truncated" if env.truncations[name] else "over"
            self.message = _result_message(self.result, self.status)

    def _forfeit(self, seat: int, message: str) -> None:
        self._lose(seat, "forfeit", f"{message}; seat {seat} loses by forfeit")

    def _lose(self, seat: int, status: str, message: str) -> None:
        """End the game early, lost by ``seat`` (the arena's forfeit rewards: backgammon's cube
        raises the stake)."""
        rewards = forfeit_rewards(range(len(self.agents)), seat, self.env.unwrapped.forfeit_stake())
        self.result = [float(rewards[i]) for i in range(len(self.agents))]
        self.status, self.message = status, message


def _chance(state: Any) -> bool:
    """True when chance (backgammon's dice) acts next."""
    return bool(getattr(state, "is_chance_node", bool)())


def _result_message(result: list[float], status: str) -> str:
    if status == "truncated":
        return "the game was cut off at the turn limit"
    best = max(result)
    winners = [i for i, r in enumerate(result) if r == best]
    if len(winners) == len(result):
        return "a draw"
    return f"seat {winners[0]} wins" if len(winners) == 1 else f"seats {winners} share the win"


def run_with_limit(fn: Any, seconds: float, what: str) -> Any:
    """``fn()``, raising :class:`RequestError` (504) if it takes longer than ``seconds``."""
    try:
        return _call_with_deadline(fn, seconds, what)
    except MoveTimeout:
        raise RequestError(f"{what} took longer than {seconds:g} s", 504) from None


class SessionStore:
    """The server's games by id, at most ``settings.max_sessions``; the longest unused game
    goes first when full or while the server holds more than ``settings.max_memory_gib`` (a
    game's agents can hold hundreds of MB: a count alone let a few hundred games exhaust the
    machine), and games unused for ``settings.session_ttl`` seconds are dropped."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self._sessions: OrderedDict[str, GameSession] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    def add(self, session: GameSession) -> None:
        with self._lock:
            self._expire()
            while len(self._sessions) >= self.settings.max_sessions:
                self._sessions.popitem(last=False)
            self._sessions[session.id] = session
            self._fit_memory(keep=session.id)

    def get(self, session_id: str) -> GameSession:
        with self._lock:
            self._expire()  # (only new games expired old ones: an idle server kept them all)
            self._fit_memory(keep=session_id)  # (analysts are made after the game is added)
            session = self._sessions.get(session_id)
            if session is None:
                raise RequestError(
                    f"no game {session_id!r} on this server (over, expired, or dropped to free "
                    "memory)",
                    404,
                )
            self._sessions.move_to_end(session_id)
            session.last_used = time.monotonic()
            return session

    def remove(self, session_id: str) -> None:
        with self._lock:
            if self._sessions.pop(session_id, None) is None:
                raise RequestError(f"no game {session_id!r} on this server", 404)

    def _fit_memory(self, keep: str) -> None:
        """Drop the games unused for longest, never ``keep``, while the server holds more
        resident memory than ``settings.max_memory_gib``."""
        if self.settings.max_memory_gib is None:
            return
        limit = self.settings.max_memory_gib * 2**30
        used = resident_bytes()
        while used is not None and used > limit:
            victim = next((k for k in self._sessions if k != keep), None)
            if victim is None:
                return
            del self._sessions[victim]
            gc.collect()  # (a game's agents and env can hold each other: free them now)
            used = resident_bytes()

    def _expire(self) -> None:
        cutoff = time.monotonic() - self.settings.session_ttl
        for key in [k for k, s in self._sessions.items() if s.last_used < cutoff]:
            del self._sessions[key]

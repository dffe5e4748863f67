"""The PettingZoo AEC glue shared by every spieltisch game.

A game env subclasses :class:`TurnBasedEnv` and supplies the game-specific parts (building a state,
the observation of one seat, the final rewards and infos, drawing the board). Everything else
lives here once: agents and seats, the seeded generator, turn order, reward bookkeeping (every
agent, the loser too, sees its final reward through ``last()``), truncation, bad-input errors
and render dispatch.

Seats and agents: the engine numbers players by *seat* (seat 0 moves first); PettingZoo names
them ``player_0 .. player_{n-1}``. Normally ``player_i`` sits in seat ``i``; with
``random_start=True`` the agents are rotated by a seeded random offset, so that a random agent
moves first. ``infos[agent]["seat"]`` always says which seat an agent has.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any, ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from spieltisch.envs._common.errors import ActionTypeError, GameOverError, IllegalActionError
from spieltisch.envs._common.notation import check_action
from spieltisch.envs._common.options import closest_name

RENDER_MODES = ("human", "ansi", "rgb_array")
ILLEGAL_ACTION_POLICIES = ("raise", "terminate")


class TurnBasedEnv(AECEnv):
    """Base class of the spieltisch AEC environments (see the module docstring)."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": list(RENDER_MODES),
        "is_parallelizable": False,
        "render_fps": 2,
    }

    #: number of actions (the size of the Discrete action space)
    num_actions: int
    #: shape, dtype and bounds of the "observation" entry
    observation_shape: tuple[int, ...]
    observation_dtype: type = np.float32
    observation_low: float = 0.0
    observation_high: float = np.inf
    #: False for games with hidden information: agents then get no engine state
    perfect_information: bool = True

    def __init__(
        self,
        num_players: int = 2,
        render_mode: str | None = None,
        max_turns: int = 1000,
        random_start: bool = False,
    ) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(
                f"render_mode must be one of {RENDER_MODES} or None, got {render_mode!r}"
            )
        if isinstance(max_turns, bool) or not isinstance(max_turns, int | np.integer):
            raise TypeError(f"max_turns must be an integer, got {max_turns!r}")
        if max_turns < 1:
            raise ValueError(f"max_turns must be at least 1, got {max_turns}")
        if not isinstance(random_start, bool):
            raise TypeError(f"random_start must be True or False, got {random_start!r}")
        self.render_mode = render_mode
        self.max_turns = int(max_turns)
        self.random_start = random_start
        self.num_players = num_players
        self.possible_agents = [f"player_{i}" for i in range(num_players)]
        self.action_spaces = {a: spaces.Discrete(self.num_actions) for a in self.possible_agents}
        observation_box = spaces.Box(
            low=self.observation_low,
            high=self.observation_high,
            shape=self.observation_shape,
            dtype=self.observation_dtype,
        )
        mask_box = spaces.Box(0, 1, shape=(self.num_actions,), dtype=np.int8)
        self.observation_spaces = {
            a: spaces.Dict({"observation": observation_box, "action_mask": mask_box})
            for a in self.possible_agents
        }
        self._rng = np.random.default_rng()
        self.state = None
        self.agents = []

    # --- hooks for the game ----------------------------------------------------------------------
    def _new_state(self) -> Any:
        """A fresh engine state with seat 0 to move (use ``self._rng`` for any chance)."""
        raise NotImplementedError

    def _state_from_text(self, text: str) -> Any:
        """An engine state from the game's position notation.

        Used by ``reset(options={"position": text})``.
        """
        raise NotImplementedError(f"{type(self).__name__} cannot start from a position")

    def _observation(self, seat: int) -> np.ndarray:
        """The "observation" entry for ``seat``, from that seat's point of view."""
        raise NotImplementedError

    def _final_rewards(self) -> list[float]:
        """Reward per seat once the game is over."""
        raise NotImplementedError

    def _final_info(self, seat: int) -> dict[str, Any]:
        """Extra info for ``seat`` once the game is over (scores, points, ...)."""
        return {}

    def forfeit_stake(self) -> float:
        """What a game lost early (resigned, or forfeited by an agent) costs its loser now, for
        the arena's and the web server's forfeit rewards: 1 by default; backgammon's cube
        raises it."""
        return 1.0

    def _truncation_rewards(self) -> list[float]:
        """Reward per seat when the game is cut off at ``max_turns`` (a draw by default)."""
        return [0.0] * self.num_players

    def _chance_of_position(self, state: Any, text: str) -> None:
        """A state read from ``text`` at reset, after ``seed`` took effect: games whose states
        carry their own generator give it one from the env's here when the text names none."""

    def _after_move(self) -> None:
        """Called after every move and after reset: resolve chance events here (dice, draws)."""

    def _render_text(self) -> str:
        raise NotImplementedError

    def _render_rgb(self) -> np.ndarray:
        raise NotImplementedError

    # --- PettingZoo API --------------------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        position = None
        if options:
            unknown = sorted(set(options) - {"position"})
            if unknown:
                # PettingZoo's api_test passes made-up options, so these warn instead of raising.
                warnings.warn(
                    f"reset() ignores unknown options {unknown}; the only reset option is "
                    "'position' (game options go to the env's constructor)",
                    stacklevel=2,
                )
            position = options.get("position")
        # Read the position first: a bad one raises and leaves the env (generator too) as it was.
        state = None if position is None else self._state_from_text(position)
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        if state is not None:
            self._chance_of_position(state, position)
        offset = int(self._rng.integers(self.num_players)) if self.random_start else 0
        self._seat_of = {
            agent: (i + offset) % self.num_players for i, agent in enumerate(self.possible_agents)
        }
        self._agent_of_seat = {seat: agent for agent, seat in self._seat_of.items()}
        self.state = self._new_state() if state is None else state
        self.num_turns = 0
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {"seat": self._seat_of[a]} for a in self.agents}
        self._skip_agent_selection = None
        self._after_move()
        if self.state.is_terminal():
            # A finished position: every agent ends at once with its final reward, so that an
            # agent_iter loop steps each with None and stops.
            self.agent_selection = self._agent_of_seat.get(
                self.state.current_player, self.possible_agents[0]
            )
            self._end_game()
            self._accumulate_rewards()
        else:
            self.agent_selection = self._agent_of_seat[self.state.current_player]
        if self.render_mode == "human":
            self.render()

    def agent_state(self) -> Any | None:
        """What an agent may see of the engine: a copy of the state in perfect-information
        games (so search agents can look ahead), ``None`` where information is hidden."""
        return self.state.clone() if self.perfect_information else None

    def seat_of(self, agent: str) -> int:
        """The engine seat of ``agent`` (seat 0 moves first)."""
        return self._seat_of[agent]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        seat = self._seat_of[agent]
        live = agent in self.agents and not (self.terminations[agent] or self.truncations[agent])
        if live and self.state.current_player == seat:
            mask = np.asarray(self.state.legal_mask(), dtype=np.int8)
        else:
            mask = np.zeros(self.num_actions, dtype=np.int8)
        return {"observation": self._observation(seat), "action_mask": mask}

    def step(self, action: Any) -> None:
        if self.state is None:
            raise GameOverError("call reset() before step()")
        if not self.agents:
            raise GameOverError("the game is over and every agent has left; call reset()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise GameOverError(
                    f"the game is over for {agent}; step(None) removes it (as PettingZoo's "
                    f"agent_iter loop does), or call reset() to play again, got action {action!r}"
                )
            self._was_dead_step(action)
            return
        action = self._checked_action(agent, action)
        try:
            self.state.apply(action)
        except (IllegalActionError, ActionTypeError) as err:
            raise type(err)(f"{agent}: {err}") from None

        self._cumulative_rewards[agent] = 0.0
        self.num_turns += 1
        self._after_move()
        if self.state.is_terminal():
            self._end_game()
        elif self.num_turns >= self.max_turns:
            final = self._truncation_rewards()
            for a in self.agents:
                seat = self._seat_of[a]
                self.rewards[a] = float(final[seat])
                self.truncations[a] = True
                self.infos[a] = {"seat": seat, "truncated_at_turn": self.num_turns}
        else:
            self.agent_selection = self._agent_of_seat[self.state.current_player]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _checked_action(self, agent: str, action: Any) -> int:
        """``action`` of the live ``agent`` as an int of the action space; the clear error of a
        value that is no action (None, a float, a bool, out of range) names the agent."""
        if action is None:
            raise ActionTypeError(f"{agent} must play an action, got None")
        try:
            return check_action(action, self.num_actions)
        except (IllegalActionError, ActionTypeError) as err:
            raise type(err)(f"{agent}: {err}") from None

    def _end_game(self) -> None:
        """Every agent terminated with its final reward and info (the game is over)."""
        final = self._final_rewards()
        for a in self.agents:
            seat = self._seat_of[a]
            self.rewards[a] = float(final[seat])
            self.terminations[a] = True
            self.infos[a] = {"seat": seat, **self._final_info(seat)}

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            raise ValueError(
                "render() needs a render_mode; create the env with render_mode='ansi', "
                "'rgb_array' or 'human'"
            )
        if self.state is None:
            raise GameOverError("call reset() before render()")
        if self.render_mode == "rgb_array":
            return self._render_rgb()
        text = self._render_text()
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self) -> None:
        pass


def make_wrapped(raw_cls: type[AECEnv], illegal_action: str, options: dict[str, Any]) -> AECEnv:
    """``raw_cls(**options)`` inside PettingZoo's standard wrappers; unknown options are named."""
    # (illegal_action is env()'s own option: listed as accepted, never passed on)
    accepted = [p for p in inspect.signature(raw_cls.__init__).parameters if p != "self"]
    accepted.append("illegal_action")
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        name = raw_cls.metadata.get("name", raw_cls.__name__)
        meant = [
            f"{key!r}: did you mean {close!r}?"
            for key in unknown
            if (close := closest_name(key, accepted))
        ]
        hint = f" ({'; '.join(meant)})" if meant else ""
        raise TypeError(f"unknown option(s) {unknown} for {name}{hint}; options are {accepted}")
    return wrap_env(raw_cls(**options), illegal_action)


def wrap_env(raw: AECEnv, illegal_action: str = "raise") -> AECEnv:
    """PettingZoo's standard wrappers around ``raw``.

    ``illegal_action="raise"`` (default): an illegal action raises a clear error and changes
    nothing. ``"terminate"``: PettingZoo classic's convention, the game ends with reward -1 for
    the agent that played it (``TerminateIllegalWrapper``).
    """
    if illegal_action not in ILLEGAL_ACTION_POLICIES:
        raise ValueError(
            f"illegal_action must be one of {ILLEGAL_ACTION_POLICIES}, got {illegal_action!r}"
        )
    env = raw
    if illegal_action == "terminate":
        env = _TerminateIllegal(env, illegal_reward=-1)
    return _OrderEnforcing(env)


class _TerminateIllegal(wrappers.TerminateIllegalWrapper):
    """PettingZoo's termination on a masked action, for actions of the action space only: a
    value that is no action at all (a float, a bool, a negative or too large number) raises
    the same clear error as with ``illegal_action="raise"`` and changes nothing (PettingZoo
    would index the mask with it: numpy errors, or -1 read as the last action)."""

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.agents and not (self.terminations[agent] or self.truncations[agent]):
            action = self.unwrapped._checked_action(agent, action)
        super().step(action)


class _OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order enforcing, except that stepping a finished game raises (PettingZoo
    only logs a warning, which lets a broken loop run on unnoticed)."""

    def step(self, action: Any) -> None:
        if self._has_reset and not self.agents:
            raise GameOverError("the game is over and every agent has left; call reset()")
        super().step(action)

    def state(self) -> np.ndarray:
        """PettingZoo's global state array, which these envs do not define: NotImplementedError,
        as ``AECEnv.state`` raises (the raw env's attribute ``state``, the engine state, hid
        that method, and ``env.state()`` raised TypeError: the state is not callable)."""
        raise NotImplementedError(
            f"{self.metadata.get('name', 'this env')} has no global state array; the engine "
            "state is env.unwrapped.state (for spectators: it holds any hidden cards)"
        )

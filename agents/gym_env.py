"""Gymnasium single-agent view of any spieltisch game: your seat against fixed opponents.

::

    from spieltisch.agents.gym_env import make_gym
    env = make_gym("kalaha", opponents=["random"], seat="random", seed=0, pits=4, seeds=3)
    obs, info = env.reset()
    obs, reward, terminated, truncated, info = env.step(int(info["action_mask"].argmax()))

The other seats are played by *opponents*: agent names as the arena knows them (``random``,
``greedy``, ``alphabeta:depth=2``, ``pretrained:kalaha``, ``checkpoint:<path>``) or
:class:`~spieltisch.agents.base.Agent` objects. With one opponent for a game of more players
(HiLo with ``num_players=4``) every other seat gets its own copy of that agent.

| | |
|---|---|
| Observation | ``Box``: the PettingZoo env's ``"observation"`` vector of your seat (no dict) |
| Action | ``Discrete(num_actions)``, the env's action of your seat |
| Action mask | ``env.action_masks()`` (bool, what sb3-contrib's ``MaskablePPO`` calls) and ``info["action_mask"]`` (int8) |
| Reward | 0 until the game ends, then the final reward of your seat (the env's ``reward`` option); 0 on truncation |
| ``terminated`` / ``truncated`` | the game ended / was cut off at the env's ``max_turns`` |
| Info | ``seat`` (your engine seat, 0 moves first), ``action_mask``, ``opponent_moves`` (opponent moves since your last action), at the end the env's final infos (scores, winner) |
| Render | the env's ``render_mode``; in HiLo from your seat's view (your drawn card shown, the others' hidden) unless ``render_view`` is given |

How turns are handled: after ``reset`` and after each of your actions the opponents move until
it is your turn again or the game is over, so one ``step`` may cover several opponent moves
(e.g. opponents moving first, Kalaha's extra turns of the opponent) and consecutive steps may
both be yours (your own extra turns). Chance (backgammon dice, HiLo cards) is resolved by the
env itself from its seeded generator. An illegal action raises
:class:`~spieltisch.envs._common.errors.IllegalActionError` naming the legal ones; nothing
changes. ``illegal_action="lose"`` instead ends the episode with reward -1 for you
(``info["illegal_action"]`` is True), PettingZoo classic's convention; Gymnasium's ``check_env``
steps unmasked random actions and needs this mode. Opponents get what the arena gives them: a
copy of the engine state in perfect-information games, an information set in HiLo.

Seeding: ``reset(seed=s)`` (or ``make_gym(..., seed=s)`` for a first reset without one) fixes the env's
chance, the random seat, and the opponents' random choices; the same seed replays the same
episode for the same actions.
"""

# ruff: noqa: E501  (the docstring table rows cannot be wrapped)
from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from spieltisch.envs._common.errors import GameOverError, IllegalActionError
from spieltisch.envs._common.notation import check_action

#: resets that end before your first move (degenerate rules options) are redealt this often
_MAX_REDEALS = 100


class SingleAgentEnv(gym.Env):
    """One seat of a spieltisch game as a Gymnasium env; see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["human", "ansi", "rgb_array"]}

    def __init__(
        self,
        game: str,
        opponents: Sequence[Any] = ("random",),
        seat: int | str = 0,
        seed: int | None = None,
        render_mode: str | None = None,
        illegal_action: str = "raise",
        **game_options: Any,
    ) -> None:
        from spieltisch.envs import make

        if illegal_action not in ("raise", "lose"):
            raise ValueError(f"illegal_action must be 'raise' or 'lose', got {illegal_action!r}")
        self.illegal_action = illegal_action
        self.game = game
        self.game_options = dict(game_options)
        self.render_mode = render_mode
        self._aec = make(game, render_mode=render_mode, **game_options)
        self._raw = self._aec.unwrapped
        # the game's frame rate (Gymnasium's env checker warned that none was declared)
        self.metadata = {**self.metadata, "render_fps": self._raw.metadata["render_fps"]}
        players = self._raw.num_players
        whole = isinstance(seat, int | np.integer) and not isinstance(seat, bool)  # (True: seat 1)
        if not (seat == "random" or (whole and 0 <= seat < players)):
            raise ValueError(f"seat must be 0..{players - 1} or 'random', got {seat!r}")
        self.seat_option = seat if seat == "random" else int(seat)
        self.opponents = self._build_opponents(opponents, players - 1)
        agent = self._raw.possible_agents[0]
        box = self._raw.observation_space(agent)["observation"]
        self.observation_space = box
        self.action_space = spaces.Discrete(self._raw.num_actions)
        self._seed = seed
        self._side_rng = np.random.default_rng(seed)
        self.seat = 0 if seat == "random" else int(seat)
        self._me = ""
        self._mask = np.zeros(self._raw.num_actions, dtype=np.int8)
        self._done = True

    def _build_opponents(self, opponents: Sequence[Any], count: int) -> list[Any]:
        from spieltisch.agents.base import Agent
        from spieltisch.agents.registry import make_agent

        if isinstance(opponents, str | Agent):
            opponents = [opponents]
        opponents = list(opponents)
        if count == 0:
            return []
        if len(opponents) == 1 and isinstance(opponents[0], Agent):
            # One object fills one seat: the other seats get copies (each reseeded at reset).
            opponents = opponents + [copy.deepcopy(opponents[0]) for _ in range(count - 1)]
        elif len(opponents) == 1:
            opponents = opponents * count
        if len(opponents) != count:
            raise ValueError(
                f"{self.game} with these options has {count} opponent seat(s); "
                f"give 1 or {count} opponents, got {len(opponents)}"
            )
        built = []
        for i, opp in enumerate(opponents):
            if isinstance(opp, Agent):
                if any(opp is b for b in built):
                    raise ValueError("give a separate Agent object for each opponent seat")
                built.append(opp)
            elif isinstance(opp, str):
                built.append(make_agent(opp, self.game, seed=i, game_options=self.game_options))
            else:
                raise TypeError(f"an opponent is an agent name or an Agent, got {opp!r}")
        return built

    # --- Gymnasium API ---------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        if seed is None:
            seed = self._seed  # the constructor's seed seeds the first reset, if none is given
        self._seed = None  # (a later reset(seed=None) continues, as Gymnasium's envs do)
        super().reset(seed=seed)
        # a given position is the same in every deal: no redeal (100 tries, then "deals")
        fixed = options is not None and options.get("position") is not None
        for _ in range(1 if fixed else _MAX_REDEALS):
            env_seed, side_seed, *opp_seeds = self.np_random.integers(
                0, 2**63, size=2 + len(self.opponents)
            )
            self._side_rng = np.random.default_rng(int(side_seed))
            players = self._raw.num_players
            if self.seat_option == "random":
                self.seat = int(self.np_random.integers(players))
            self._aec.reset(seed=int(env_seed), options=options)
            agents = self._raw.possible_agents
            self._me = next(a for a in agents if self._raw.seat_of(a) == self.seat)
            if "render_view" not in self.game_options and hasattr(self._raw, "render_view"):
                self._raw.render_view = self._me  # you see what your seat knows (your drawn card)
            others = [a for a in agents if a != self._me]
            self._opponent_of = dict(zip(others, self.opponents, strict=True))
            for opp, s in zip(self.opponents, opp_seeds, strict=True):
                opp.reset(int(s))
            self._done = False
            moves, _ = self._play_opponents()
            if not self._done:
                return self._observe(), self._info(moves)
        if fixed:
            raise ValueError(
                f"the position {options['position']!r} ends before seat {self.seat} moves "
                "(over already, or the opponents' moves from it finished the game)"
            )
        raise RuntimeError(
            f"{self.game} with options {self.game_options}: the game ended before seat "
            f"{self.seat} could move in {_MAX_REDEALS} deals"
        )

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise GameOverError("the episode is over; call reset()")
        try:
            a = check_action(action, len(self._mask))  # a float or a bool is no action
        except IllegalActionError:
            a = -1  # out of range: illegal, as a masked action
        if a < 0 or not self._mask[a]:
            legal = np.flatnonzero(self._mask).tolist()
            if self.illegal_action == "lose":
                obs = self._observe()
                info = self._info(0)
                self._done = True
                self._mask = np.zeros_like(self._mask)
                info.update(illegal_action=True, action_mask=self._mask.copy())
                return obs, -1.0, True, False, info
            raise IllegalActionError(
                f"action {action!r} is not legal for seat {self.seat}; legal actions: {legal}"
            )
        self._aec.step(a)
        moves, reward = self._play_opponents()
        obs = self._observe()
        terminated = truncated = False
        if self._done:
            _, terminated, truncated, _ = self._final
        return obs, reward, terminated, truncated, self._info(moves)

    def action_masks(self) -> np.ndarray:
        """Legal actions of your seat now (bool); all False once the episode is over."""
        return self._mask.astype(bool)

    def render(self) -> Any:
        return self._aec.render()

    def close(self) -> None:
        self._aec.close()

    # --- internals -------------------------------------------------------------------------------
    def _play_opponents(self) -> tuple[int, float]:
        """Opponents move until it is our turn or the game is over; returns (moves, our reward).

        The PettingZoo loop: a finished game makes every agent step(None) in turn; our final
        reward is read from ``last()`` when it is our turn to leave.
        """
        from spieltisch.agents.arena.match import agent_input

        moves, reward = 0, 0.0
        env, raw = self._aec, self._raw
        while env.agents:
            agent = env.agent_selection
            observation, rew, termination, truncation, info = env.last()
            if termination or truncation:
                if agent == self._me:
                    # our last look at the game: the agent's entries go with step(None)
                    reward = float(rew)
                    self._final = (observation, bool(termination), bool(truncation), dict(info))
                env.step(None)
                continue
            if agent == self._me:
                break
            opp = self._opponent_of[agent]
            env.step(int(opp.act(observation, agent_input(raw, agent, self._side_rng))))
            moves += 1
        self._done = not env.agents
        return moves, reward

    def _observe(self) -> np.ndarray:
        if self._done:
            obs = self._final[0]
            self._mask = np.zeros_like(self._mask)
        else:
            obs = self._aec.observe(self._me)
            self._mask = np.asarray(obs["action_mask"], dtype=np.int8)
        return np.asarray(obs["observation"], dtype=self.observation_space.dtype)

    def _info(self, opponent_moves: int) -> dict[str, Any]:
        info: dict[str, Any] = dict(self._final[3] if self._done else self._raw.infos[self._me])
        info.update(seat=self.seat, action_mask=self._mask.copy(), opponent_moves=opponent_moves)
        return info


def make_gym(
    game: str,
    opponents: Sequence[Any] = ("random",),
    seat: int | str = 0,
    seed: int | None = None,
    illegal_action: str = "raise",
    **game_options: Any,
) -> SingleAgentEnv:
    """A Gymnasium env of ``game`` where you play ``seat`` (0 moves first; ``"random"``: drawn
    at each reset) against ``opponents`` (agent names or Agent objects); ``game_options`` go to
    the game's env (``pits=4``, ``num_players=3``, ``render_mode="ansi"``, ...);
    ``illegal_action``: ``"raise"`` (default) or ``"lose"``."""
    return SingleAgentEnv(
        game,
        opponents=opponents,
        seat=seat,
        seed=seed,
        illegal_action=illegal_action,
        **game_options,
    )

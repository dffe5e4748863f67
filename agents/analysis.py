"""What the agent to move thinks: the numbers behind its next move, for an analysis panel.

:func:`analyse` asks an agent (any the registry makes) about the position it is given, exactly
as :meth:`~spieltisch.agents.base.Agent.act` would get it, and returns a JSON-ready dict::

    {"agent": "pretrained:kalaha", "method": "...", "value": 0.42, "value_meaning": "...",
     "columns": [{"key": "policy", "label": "policy", "format": "percent"}, ...],
     "moves": [{"action": 3, "policy": 0.71}, ...], "chosen": 3, "note": None}

* ``value``: the agent's value of the position for the player to move (None if it has none),
  ``value_meaning`` says in what units.
* ``columns``: the per-move numbers present, in display order; ``format`` is ``"percent"`` (a
  probability in 0..1), ``"number"`` or ``"int"``. A number can be None (not searched).
* ``moves``: one entry per legal action (``{"action": a, ...}``), in action order. Backgammon
  agents that choose whole plays (``greedy``, ``pubeval``, ``gnubg``, TD nets) list plays
  instead, ``{"index": i, "actions": [...], "notation": "24/18 13/8", ...}`` (``index`` into
  ``state.legal_plays()``, notation from the mover's view), best first, at most
  :data:`MAX_PLAYS` (the chosen one always among them); backgammon actions carry their
  ``notation`` too.
* ``chosen``: the action :meth:`act` plays (for whole-play backgammon agents the play's
  ``index``); None where no move is due.

The analysis calls the agents' own search and evaluation code (their ``act`` is built from the
same methods) and leaves the agent as it was: its generator is restored afterwards, searches run
on copies of transposition tables and batches, the ``state`` given is cloned first. So the move
the agent then plays is the one it would have played without the analysis, and ``chosen`` is
that move. HiLo agents are analysed from the seat's :class:`InformationSet` alone, drawing the
same samples as their ``act`` (the engine's sampler depends only on what the seat knows, so the
answer is the same for every real state the seat cannot tell apart).

:func:`solver_analysis` solves a Kalaha position exactly within a time limit (one cached
:class:`~spieltisch.agents.kalaha.solver.KalahaSolver` per board size and rule set).
"""

from __future__ import annotations

import copy
import math
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
from spieltisch.agents.base import Agent, InformationSet, RandomAgent

#: backgammon: at most this many plays are listed (the best ones, and the chosen one)
MAX_PLAYS = 20

#: the solver of :func:`solver_analysis`: a transposition table of 2**20 entries (32 MiB, plus
#: a near-database region of 2**18 entries, 8 MiB) ...
SOLVER_TT_BITS = 20
SOLVER_NEAR_BITS = 18
#: ... and an endgame database of at most this many stones (6 pits: 30 MB, built in 15-30 s
#: on two cores the first time and cached on disk, see :mod:`.kalaha.endgame`)
SOLVER_DB_STONES = 16

_PERCENT, _NUMBER, _INT = "percent", "number", "int"
_NO_EXPLANATION = "this agent does not explain its moves"


# ------------------------------------------------------------------------------------------------
# the entry point
# ------------------------------------------------------------------------------------------------
def analyse(
    agent: Agent,
    game: str,
    observation: dict[str, np.ndarray],
    state: Any,
    game_options: dict[str, Any],
) -> dict[str, Any]:
    """What ``agent`` thinks of the position it would be asked to move in: ``observation``
    and ``state`` exactly as :meth:`Agent.act` gets them (see the module docstring for the
    dict). Changes neither the agent's play nor ``state``. Not while another thread uses the
    same agent: its generator is drawn from and restored."""
    options = dict(game_options or {})
    legal = np.flatnonzero(np.asarray(observation["action_mask"]))
    if isinstance(state, InformationSet):
        own = state  # never changed: samples are new objects
    else:
        own = state.clone() if state is not None and hasattr(state, "clone") else state
    with _kept_generator(agent):
        if legal.size == 0:
            out = _result(agent, "no move is due: not this seat's turn, or the game is over")
        else:
            out = _dispatch(agent, game, observation, own, options, legal)
    out["agent"] = str(getattr(agent, "name", type(agent).__name__))
    out = _jsonable(out)
    whole = [c["key"] for c in out["columns"] if c["format"] == _INT]
    for move in out["moves"]:
        for key in whole:
            if move.get(key) is not None:
                move[key] = round(move[key])
    return out


def _dispatch(
    agent: Agent,
    game: str,
    observation: dict[str, np.ndarray],
    state: Any,
    options: dict[str, Any],
    legal: np.ndarray,
) -> dict[str, Any]:
    if _is(agent, "spieltisch.agents.backgammon.baselines", "BackgammonPlayAgent"):
        if game == "backgammon" and state is not None:
            return _backgammon_plays(agent, observation, state, legal)
    elif isinstance(agent, RandomAgent) and type(agent).act is RandomAgent.act:
        return _random(agent, game, observation, state, legal)
    elif _is(agent, "spieltisch.agents.kalaha.perfect", "PerfectAgent"):
        return _perfect(agent, observation, state, legal)
    elif _is(agent, "spieltisch.agents.mancala.alphabeta", "MancalaSearchAgent"):
        return _alphabeta(agent, game, state, legal)
    elif _is(agent, "spieltisch.agents.neural.value_search", "ValueSearchAgent"):
        return _value_search(agent, observation, state, options, legal)
    elif _is(agent, "spieltisch.agents.neural.gumbel_search", "GumbelSearchAgent"):
        return _gumbel(agent, game, observation, state, options, legal)
    elif _is(agent, "spieltisch.agents.hilo.search", "HiLoSearchAgent"):
        return _hilo_search(agent, observation, state, options, legal)
    elif _is(agent, "spieltisch.agents.hilo.heuristic", "HiLoHeuristicAgent"):
        return _hilo_heuristic(agent, game, observation, state, legal)
    elif _is(agent, "spieltisch.agents.neural.policy", "NeuralAgent"):
        return _neural(agent, game, observation, state, options, legal)
    out = _result(agent, _NO_EXPLANATION)
    out["moves"] = _action_moves(game, legal)
    return out


def _is(agent: Agent, module: str, name: str) -> bool:
    """``isinstance(agent, module.name)`` without importing ``module`` (an agent of a class
    that was never imported cannot be one)."""
    mod = sys.modules.get(module)
    return mod is not None and isinstance(agent, getattr(mod, name))


@contextmanager
def _kept_generator(agent: Agent) -> Iterator[None]:
    """Restore the agent's generator afterwards (the analysis may draw from it as act does)."""
    rng = getattr(agent, "rng", None)
    saved = rng.bit_generator.state if isinstance(rng, np.random.Generator) else None
    try:
        yield
    finally:
        if saved is not None:
            agent.rng = rng
            rng.bit_generator.state = saved


def _result(
    agent: Agent,
    method: str,
    *,
    value: float | None = None,
    value_meaning: str | None = None,
    columns: list[dict[str, str]] | None = None,
    chosen: int | None = None,
    note: str | None = None,
) -> dict[str, Any]:
    return {
        "agent": str(getattr(agent, "name", type(agent).__name__)),
        "method": method,
        "value": value,
        "value_meaning": value_meaning if value is not None else None,
        "columns": columns or [],
        "moves": [],
        "chosen": chosen,
        "note": note,
    }


def _column(key: str, label: str, fmt: str) -> dict[str, str]:
    return {"key": key, "label": label, "format": fmt}


def _action_moves(game: str, legal: np.ndarray, **columns: Any) -> list[dict[str, Any]]:
    """One entry per legal action with the given per-action numbers (arrays over ``legal``,
    or over all actions when they are longer); backgammon actions get their notation."""
    notation = None
    if game == "backgammon":
        from spieltisch.envs.backgammon.engine import describe_action

        notation = describe_action
    moves = []
    for i, a in enumerate(legal.tolist()):
        move: dict[str, Any] = {"action": int(a)}
        if notation is not None:
            move["notation"] = notation(int(a))
        for key, values in columns.items():
            values = np.asarray(values)
            move[key] = values[a] if len(values) > len(legal) else values[i]
        moves.append(move)
    return moves


def _jsonable(x: Any) -> Any:
    """Plain Python numbers, lists and dicts; NaN and infinities become None."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, bool | np.bool_):
        return bool(x)
    if isinstance(x, int | np.integer):
        return int(x)
    if isinstance(x, float | np.floating):
        return float(x) if math.isfinite(float(x)) else None
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    return x


def _softmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """Probabilities over all actions, 0 outside ``legal``."""
    z = np.asarray(logits, dtype=np.float64)[legal]
    p = np.exp(z - z.max())
    out = np.zeros(len(logits))
    out[legal] = p / p.sum()
    return out


# ------------------------------------------------------------------------------------------------
# networks: what their value means
# ------------------------------------------------------------------------------------------------
def _value_meaning(agent: Agent, game: str, options: dict[str, Any]) -> str:
    """The unit of a policy network's value head: the reward it was trained on."""
    trained = getattr(agent, "trained_options", None) or getattr(agent, "game_options", None)
    reward = dict(trained or options).get("reward")
    if game == "backgammon":
        if reward == "win":
            return "expected result for the player to move, -1 loss .. +1 win"
        return "expected points per game for the player to move (cubeless equity)"
    if game == "hilo":
        if reward == "coins":
            return (
                "expected coins reward (own coins minus the others' mean) for the player to "
                "move, squashed into -1 .. +1"
            )
        return "expected result for the player to move, -1 loss .. +1 win (wins shared)"
    if reward == "score":
        return "expected final store difference for the player to move (squashed into -1 .. +1)"
    if reward == "points":
        return "expected points for the player to move (squashed into -1 .. +1)"
    return "expected result for the player to move, -1 loss .. +1 win"


def _network(net: Any, observation: dict[str, np.ndarray]) -> tuple[np.ndarray, float]:
    """A :class:`PolicyNet`'s masked logits (float64, all actions) and value for the mover."""
    import torch

    obs = torch.as_tensor(np.asarray(observation["observation"], dtype=np.float32))[None]
    mask = torch.as_tensor(np.asarray(observation["action_mask"]))[None]
    with torch.no_grad():
        logits, value = net(obs, mask)
    return logits[0].numpy().astype(np.float64), float(value[0])


# ------------------------------------------------------------------------------------------------
# agents that choose one action
# ------------------------------------------------------------------------------------------------
def _random(
    agent: Agent, game: str, observation: dict, state: Any, legal: np.ndarray
) -> dict[str, Any]:
    out = _result(
        agent,
        "plays a uniformly random legal move",
        columns=[_column("prob", "probability", _PERCENT)],
        chosen=int(agent.act(observation, state)),
    )
    out["moves"] = _action_moves(game, legal, prob=np.full(legal.size, 1.0 / legal.size))
    if game == "backgammon":
        out["note"] = "one checker move at a time: the probability of each first move"
    return out


def _neural(
    agent: Any, game: str, observation: dict, state: Any, options: dict, legal: np.ndarray
) -> dict[str, Any]:
    logits, value = _network(agent.net, observation)
    greedy = bool(getattr(agent, "greedy", True))
    out = _result(
        agent,
        "the network's policy (its masked softmax) and its value head"
        + ("; it plays the most likely move" if greedy else "; it samples a move from the policy"),
        value=value,
        value_meaning=_value_meaning(agent, game, options),
        columns=[_column("policy", "policy", _PERCENT)],
        chosen=int(agent.act(observation, state)),
    )
    out["moves"] = _action_moves(game, legal, policy=_softmax(logits, legal))
    if game == "backgammon":
        out["note"] = "the network chooses one checker move at a time"
    return out


def _gumbel(
    agent: Any, game: str, observation: dict, state: Any, options: dict, legal: np.ndarray
) -> dict[str, Any]:
    logits, net_value = _network(agent.net, observation)
    prior = _softmax(logits, legal)
    meaning = _value_meaning(agent, game, options)
    prior_column = _column("prior", "network policy", _PERCENT)
    if agent.sims == 0 or legal.size == 1 or state is None:
        searchless = agent.sims == 0 or legal.size == 1
        out = _result(
            agent,
            "the network's policy and value head (no search: it plays the most likely move)",
            value=net_value,
            value_meaning=meaning,
            columns=[prior_column],
            chosen=int(agent.act(observation, state)) if searchless else None,
        )
        out["moves"] = _action_moves(game, legal, prior=prior)
        if agent.sims:
            out["note"] = (
                "one legal move: played without a search"
                if searchless
                else "no game state given: the search cannot run"
            )
        return out
    result = agent.run_search(state, rng=copy.deepcopy(agent.rng), batch=agent.batch.clone())
    mover = int(state.current_player)
    out = _result(
        agent,
        f"Gumbel search with {agent.sims} simulations over the network: its prior, the visits "
        "and mean value (Q) of each move, and the improved policy the search ends with",
        value=float(result.root_value[0, mover]),
        value_meaning=f"{meaning}; mean of the search's backed-up values",
        columns=[
            prior_column,
            _column("visits", "visits", _INT),
            _column("q", "Q", _NUMBER),
            _column("policy", "improved policy", _PERCENT),
        ],
        chosen=int(result.action[0]),
        note=f"network value head: {net_value:+.3f}",
    )
    out["moves"] = _action_moves(
        game, legal, prior=prior, visits=result.visits[0], q=result.q[0], policy=result.policy[0]
    )
    return out


def _value_search(
    agent: Any, observation: dict, state: Any, options: dict, legal: np.ndarray
) -> dict[str, Any]:
    from spieltisch.agents.mancala.alphabeta import VALUE_SCALE, WIN
    from spieltisch.agents.neural.value_search import choose_searched_action

    logits, net_value = _network(agent.net, observation)
    policy = _softmax(logits, legal)
    game = agent.game
    meaning = _value_meaning(agent, game, options)
    policy_column = _column("policy", "policy", _PERCENT)
    if legal.size == 1 or state is None:
        out = _result(
            agent,
            "the network's policy and value head (no search)",
            value=net_value,
            value_meaning=meaning,
            columns=[policy_column],
            chosen=int(legal[0]) if legal.size == 1 else None,
            note="one legal move: played without a search"
            if legal.size == 1
            else "no game state given: the search cannot run",
        )
        out["moves"] = _action_moves(game, legal, policy=policy)
        return out
    tt = agent.searcher.tt.copy() if agent.searcher is not None else None
    found: list[tuple[np.ndarray, np.ndarray]] = []

    def search() -> tuple[np.ndarray, np.ndarray]:
        found.append(agent.move_values(state, tt=tt))
        return found[-1]

    chosen = choose_searched_action(agent.net, observation, search)
    actions, raw = found[-1]
    values = np.full(len(logits), np.nan)
    proven = np.full(len(logits), np.nan)
    for a, v in zip(actions.tolist(), raw.tolist(), strict=True):
        if agent.searcher is None:
            values[a] = v
        elif abs(v) >= WIN // 2:  # a finished game within the horizon
            values[a], proven[a] = math.copysign(1.0, v), math.copysign(1.0, v)
        else:
            values[a] = v / VALUE_SCALE
    depth = f"{agent.depth}-ply minimax" + (
        f" (deeper while a ply has at most {agent.max_leaves:,} positions)"
        if agent.max_leaves
        else f" (up to {agent.extend} extra turns per line cost no ply)"
        if agent.extend
        else ""
    )
    columns = [_column("value", "searched value", _NUMBER), policy_column]
    if agent.searcher is not None:
        columns.insert(1, _column("proven", "proven result", _INT))
    out = _result(
        agent,
        f"{depth} over the network's value head: each move's searched value, and the policy "
        "that breaks ties",
        value=float(np.nanmax(values)),
        value_meaning=f"{meaning}; the best move's searched value",
        columns=columns,
        chosen=chosen,
        note=(
            f"network value head: {net_value:+.3f}"
            + (
                "; alpha-beta proves only that a move is worse than the best, so worse moves "
                "show upper bounds"
                if agent.searcher is not None and agent.depth > 1
                else ""
            )
            + (
                "; proven +1/-1: a won/lost game within the horizon"
                if agent.searcher is not None
                else ""
            )
        ),
    )
    moves = {"value": values, "policy": policy}
    if agent.searcher is not None:
        moves = {"value": values, "proven": proven, "policy": policy}
    out["moves"] = _action_moves(game, legal, **moves)
    return out


def _alphabeta(agent: Any, game: str, state: Any, legal: np.ndarray) -> dict[str, Any]:
    from spieltisch.agents.mancala.alphabeta import KALAHA, WIN

    units = (
        "store difference (own minus opponent's)"
        if agent.kind == KALAHA
        else "stones on the board (own minus opponent's)"
    )
    how = (
        f"iterative deepening for {agent.time_limit:g} s"
        if agent.time_limit is not None
        else f"{agent.depth}-ply alpha-beta"
    )
    if agent.depth == 1 and agent.time_limit is None:
        how = "one-move lookahead"
    columns = [_column("value", "value", _INT), _column("proven", "proven result", _INT)]
    if legal.size == 1:
        out = _result(
            agent, f"{how} over the {units}", columns=columns, chosen=int(legal[0]),
            note="one legal move: played without a search",
        )  # fmt: skip
        out["moves"] = _action_moves(game, legal, value=[None], proven=[None])
        return out
    if state is None:
        raise ValueError(f"{agent.name} needs the game state (a perfect-information game)")
    kept = agent.last_depth, agent.last_nodes
    try:
        actions, raw = agent.search_root(legal, state, tt=agent.tt.copy())
        depth = agent.last_depth
    finally:
        agent.last_depth, agent.last_nodes = kept
    chosen = int(actions[int(np.argmax(raw))])
    value = np.full(int(legal.max()) + 1, np.nan)
    proven = np.full(int(legal.max()) + 1, np.nan)
    for a, v in zip(actions.tolist(), raw.tolist(), strict=True):
        if abs(v) >= WIN // 2:  # +-WIN plus the final margin
            proven[a] = math.copysign(1, v)
            v -= int(math.copysign(WIN, v))
        value[a] = v
    best = int(raw.max())
    out = _result(
        agent,
        f"{how}: each move's {units} at the search horizon"
        + ("" if agent.depth == 1 and agent.time_limit is None else f" (depth {depth})"),
        value=float(value[chosen]),
        value_meaning=f"{units} after the best move at depth {depth}"
        + ("; a proven " + ("win" if best > 0 else "loss") if abs(best) >= WIN // 2 else ""),
        columns=columns,
        chosen=chosen,
        note=(
            "alpha-beta proves only that a move is worse than the best, so worse moves show "
            "upper bounds; "
            if agent.depth > 1 or agent.time_limit is not None
            else ""
        )
        + "proven +1/-1: the game is won/lost by force (value = final margin); equal values: "
        "ties broken at random"
        + (
            "; the move played searches to the time limit again and may reach another depth"
            if agent.time_limit is not None
            else ""
        ),
    )
    out["moves"] = _action_moves(game, legal, value=value, proven=proven)
    return out


def _perfect(agent: Any, observation: dict, state: Any, legal: np.ndarray) -> dict[str, Any]:
    position = agent.position(observation, state)
    solved = agent.solver.solve(position, move_values=True)
    chosen = int(agent.act(observation, state))  # the table holds the solve: cheap
    out = _result(
        agent,
        "exact values from the solver; it plays a random one of the optimal moves",
        value=float(solved.value),
        value_meaning="final store difference (own minus opponent's) under perfect play, exact",
        columns=[_column("value", "exact value", _INT)],
        chosen=chosen,
    )
    values = np.full(int(legal.max()) + 1, np.nan)
    for a, v in solved.move_values.items():
        values[a] = v
    out["moves"] = _action_moves("kalaha", legal, value=values)
    return out


# ------------------------------------------------------------------------------------------------
# HiLo: scores from the seat's knowledge only
# ------------------------------------------------------------------------------------------------
_SAMPLED_NOTE = "scores from {n} states sampled from what the seat knows (the same as act's)"


def _hilo_heuristic(
    agent: Any, game: str, observation: dict, state: Any, legal: np.ndarray
) -> dict[str, Any]:
    if legal.size == 1 or not isinstance(state, InformationSet):
        # (without an information set act raises, naming what it needs)
        out = _result(
            agent,
            "plays at random: one legal move",
            columns=[_column("prob", "probability", _PERCENT)],
            chosen=int(agent.act(observation, state)),
        )
        out["moves"] = _action_moves(game, legal, prob=np.full(legal.size, 1.0 / legal.size))
        return out
    totals = agent.action_totals(legal, state)
    chosen = agent.pick(legal, totals)
    scores = totals / agent.samples
    out = _result(
        agent,
        f"expected coins (own minus the best opponent's) after each move and its best "
        f"follow-up, mean over {agent.samples} sampled deals; ties broken at random",
        value=float(scores.max()),
        value_meaning="expected coins (own minus the best opponent's) after the best move",
        columns=[_column("score", "expected coins", _NUMBER)],
        chosen=chosen,
        note=_SAMPLED_NOTE.format(n=agent.samples),
    )
    out["moves"] = _action_moves(game, legal, score=scores)
    return out


def _hilo_search(
    agent: Any, observation: dict, state: Any, options: dict, legal: np.ndarray
) -> dict[str, Any]:
    from spieltisch.agents.neural.value_search import choose_searched_action

    logits, net_value = _network(agent.net, observation)
    policy = _softmax(logits, legal)
    meaning = _value_meaning(agent, "hilo", options)
    if legal.size == 1 or not isinstance(state, InformationSet):
        out = _result(
            agent,
            "the network's policy and value head (no search)",
            value=net_value,
            value_meaning=meaning,
            columns=[_column("policy", "policy", _PERCENT)],
            chosen=int(legal[0]) if legal.size == 1 else None,
            note="one legal move: played without a search"
            if legal.size == 1
            else "no information set given: the search cannot run",
        )
        out["moves"] = _action_moves("hilo", legal, policy=policy)
        return out
    found: list[np.ndarray] = []

    def search() -> tuple[np.ndarray, np.ndarray]:
        found.append(agent.action_scores(legal, state))
        return legal, found[-1]

    chosen = choose_searched_action(agent.net, observation, search)
    scores = found[-1]
    weight = agent.value_weight
    out = _result(
        agent,
        f"each move's mean score over {agent.samples} sampled deals, looking to the end of the "
        f"own turn: coins reward + {weight:g} x the value head at the end; ties go to the policy",
        value=float(scores.max()),
        value_meaning=(
            "coins reward (own coins minus the others' mean) plus "
            f"{weight:g} x value head, after the best move"
        ),
        columns=[_column("score", "search score", _NUMBER), _column("policy", "policy", _PERCENT)],
        chosen=chosen,
        note=_SAMPLED_NOTE.format(n=agent.samples) + f"; network value head: {net_value:+.3f}",
    )
    out["moves"] = _action_moves("hilo", legal, score=scores, policy=policy)
    return out


# ------------------------------------------------------------------------------------------------
# backgammon: whole plays
# ------------------------------------------------------------------------------------------------
_PROB_COLUMNS = [
    _column("win", "win", _PERCENT),
    _column("win_gammon", "win gammon+", _PERCENT),
    _column("win_backgammon", "win backgammon", _PERCENT),
    _column("lose_gammon", "lose gammon+", _PERCENT),
    _column("lose_backgammon", "lose backgammon", _PERCENT),
]


def _outputs_columns(outputs: np.ndarray) -> dict[str, np.ndarray]:
    """Five outputs per play (win, win gammon+, win bg, lose gammon+, lose bg) by column."""
    return {c["key"]: outputs[:, i] for i, c in enumerate(_PROB_COLUMNS)}


def _equity(outputs: np.ndarray) -> np.ndarray:
    """Cubeless equity of outputs rows (as ``td_value.equity``)."""
    y = outputs
    return 2.0 * y[:, 0] - 1.0 + y[:, 1] + y[:, 2] - y[:, 3] - y[:, 4]


def _backgammon_plays(
    agent: Any, observation: dict, state: Any, legal: np.ndarray
) -> dict[str, Any]:
    from spieltisch.envs.backgammon import rules as k

    if state.phase != k.PH_MOVE:  # cube decisions: Janowski's formulas or never/always
        probs = None
        if getattr(agent, "cube_policy", None) == "janowski":
            probs = agent.position_probabilities(state.clone())
        if probs is None:
            method = "cube decisions by rule: it never doubles and always takes"
            note = "a cube decision: no evaluation"
        else:
            p, wg, wbg, lg, lbg = (float(v) for v in probs)
            method = (
                f"cube decisions by Janowski's formulas (cube life {agent.cube_life:g}) from its "
                "cubeless probabilities of the player on roll"
            )
            note = (
                f"win {p:.1%} (gammon {wg:.1%}, backgammon {wbg:.1%}), "
                f"lose gammon {lg:.1%} (backgammon {lbg:.1%})"
            )
        out = _result(
            agent, method, chosen=int(copy.deepcopy(agent).act(observation, state.clone())),
            note=note,
        )  # fmt: skip
        out["moves"] = _action_moves("backgammon", legal)
        return out
    plays = state.legal_plays()
    if len(plays) <= 1 and not (plays and plays[0].actions):
        out = _result(
            agent, "nothing to choose", chosen=int(legal[0]),
            note="no legal move: the roll cannot be played",
        )  # fmt: skip
        out["moves"] = _action_moves("backgammon", legal)
        return out
    seat = state.turn
    boards = state.play_boards()
    chosen = int(agent.planned_play(state))
    columns: dict[str, np.ndarray]
    value_meaning = "cubeless equity (points per game) of the best play for the player to move"
    note = None
    if _is(agent, "spieltisch.agents.backgammon.td_value", "TDValueAgent"):
        columns, order_by, shown, method, value, note = _td_plays(agent, state, boards, chosen)
    elif _is(agent, "spieltisch.agents.backgammon.baselines", "GnubgAgent"):
        outputs = _gnubg_outputs(plays, seat)
        columns = {"equity": _equity(outputs), **_outputs_columns(outputs)}
        order_by = columns["equity"]
        shown = [_column("equity", "equity", _NUMBER), *_PROB_COLUMNS]
        method = "GNU Backgammon's 0-ply evaluation of the position after each play"
        value = float(order_by.max())
        if agent.plies:
            note = f"the agent chooses with a {agent.plies}-ply search; the numbers are 0-ply"
    elif _is(agent, "spieltisch.agents.backgammon.baselines", "PubevalAgent"):
        scores = agent.play_scores(state)
        columns = {"score": scores}
        order_by = scores
        shown = [_column("score", "pubeval score", _NUMBER)]
        method = "Tesauro's pubeval score of the position after each play (higher is better)"
        value, value_meaning = None, None
    elif _is(agent, "spieltisch.agents.backgammon.baselines", "GreedyBackgammonAgent"):
        from spieltisch.agents.backgammon.baselines import greedy_terms

        lead, blots = greedy_terms(boards, seat)
        columns = {"pip_lead": lead, "blots": blots}
        order_by = lead * 16.0 - blots
        shown = [_column("pip_lead", "pip lead", _INT), _column("blots", "blots", _INT)]
        method = "pip-count lead after each play (opponent's pips minus own), then fewest blots"
        value, value_meaning = None, None
        note = "equal plays: ties broken at random"
    else:  # another whole-play agent: its choice only
        columns, order_by, shown = {}, np.zeros(len(plays)), []
        method, value, value_meaning = _NO_EXPLANATION, None, None
    if len(plays) == 1:
        note = "one legal play"
    out = _result(
        agent, method, value=value, value_meaning=value_meaning, columns=shown, chosen=chosen,
        note=note,
    )  # fmt: skip
    order = sorted(range(len(plays)), key=lambda i: (-order_by[i], i))
    capped = order[:MAX_PLAYS]
    if chosen not in capped:
        capped[-1] = chosen
    out["moves"] = [
        {
            "index": i,
            "actions": list(plays[i].actions),
            "notation": plays[i].notation,
            **{key: values[i] for key, values in columns.items()},
        }
        for i in capped
    ]
    if len(plays) > MAX_PLAYS:
        extra = f"the best {MAX_PLAYS} of {len(plays)} legal plays are listed"
        out["note"] = f"{out['note']}; {extra}" if out["note"] else extra
    return out


def _td_plays(agent: Any, state: Any, boards: np.ndarray, chosen: int) -> tuple:
    """``(columns, order_by, shown, method, value, note)`` of a TD agent's plays: the net's
    outputs after each play (a bear-off's exact ones with ``bearoff``) and what the agent ranks
    by: its lookahead's equities (``ply`` 2 or 3), or the chance-node search's visits, values
    and improved policy (``sims``)."""
    from spieltisch.agents.backgammon.td_value import afterstate_outputs

    seat = state.turn
    outputs = afterstate_outputs(agent.params, boards, seat)
    method = "the TD network's estimate of the position after each play"
    note = None
    if agent.bearoff:
        from spieltisch.agents.backgammon import bearoff

        exact_outputs, exact = bearoff.afterstate_outputs(boards, seat)
        outputs[exact] = exact_outputs[exact]
        if exact.any():
            method += "; plays into a bear-off: exact, from the bear-off database"
    columns = {"equity": _equity(outputs), **_outputs_columns(outputs)}
    order_by = columns["equity"]
    shown = [_column("equity", "equity", _NUMBER), *_PROB_COLUMNS]
    if _is(agent, "spieltisch.agents.backgammon.chance_search", "TDSearchAgent"):
        result = agent.run_search(state)
        rows = slice(int(result.offsets[0]), int(result.offsets[1]))
        searched = {"visits": result.visits[rows], "q": result.q[rows],
                    "policy": result.policy[rows]}  # fmt: skip
        columns = {**searched, **columns}
        order_by = searched["policy"]
        shown = [
            _column("visits", "visits", _INT), _column("q", "Q", _NUMBER),
            _column("policy", "improved policy", _PERCENT), *shown,
        ]  # fmt: skip
        method = (
            f"chance-node search with {agent.sims} simulations over the TD network (the dice "
            "as chance nodes): the visits and mean value (Q) of each play and the improved "
            "policy it ends with, beside the network's estimate after each play"
        )
        return columns, order_by, shown, method, float(result.root_value[0, seat]), note
    if agent.ply > 1:
        ranked = agent.play_values(state)
        key = f"equity_{agent.ply}ply"
        columns = {key: np.where(ranked > -500.0, ranked, np.nan), **columns}
        order_by = ranked
        shown.insert(0, _column(key, f"{agent.ply}-ply equity", _NUMBER))
        replies = (
            "1-ply best replies"
            if agent.ply == 2
            else (f"best replies by 2-ply value among their {agent.reply_keep} best by 1-ply value")
        )
        method += (
            f"; {agent.ply}-ply: the {agent.keep} best plays by 1-ply value averaged over the "
            f"opponent's 21 rolls and its {replies}"
        )
    elif agent.bearoff:
        order_by = agent.play_values(state)
    return columns, order_by, shown, method, float(order_by[chosen]), note


def _gnubg_outputs(plays: list, seat: int) -> np.ndarray:
    """GNU Backgammon's 0-ply outputs for the mover (win, win gammon+, win bg, lose gammon+,
    lose bg) after each play: its evaluation with the opponent on roll, seen from the mover;
    a play that bears off the last checker: the exact result."""
    from spieltisch.envs.backgammon import gnubg_adapter as ga
    from spieltisch.envs.backgammon import rules as k

    out = np.zeros((len(plays), 5))
    for i, play in enumerate(plays):
        after = play.state
        if after.is_terminal():
            result = int(after.s[k.M_RESULT])
            won = after.winner() == seat
            gammon, backgammon = result >= k.RESULT_GAMMON, result >= k.RESULT_BACKGAMMON
            out[i] = (1, gammon, backgammon, 0, 0) if won else (0, 0, 0, gammon, backgammon)
            continue
        w, wg, wbg, lg, lbg = ga.evaluate(after, on_roll=1 - seat, plies=0)
        out[i] = (1.0 - w, lg, lbg, wg, wbg)
    return out


# ------------------------------------------------------------------------------------------------
# the Kalaha solver
# ------------------------------------------------------------------------------------------------
_SOLVERS: dict[tuple[int, str], tuple[Any, threading.Lock]] = {}
_SOLVERS_LOCK = threading.Lock()


def _solver_for(game: Any) -> tuple[Any, threading.Lock]:
    """The cached solver of ``game``'s board size and rule set (built on first use), with the
    lock that keeps its solves one at a time."""
    from spieltisch.agents.kalaha.solver import KalahaSolver, default_db_stones
    from spieltisch.envs.kalaha.engine import KalahaGame

    key = (int(game.pits), str(game.rules))
    with _SOLVERS_LOCK:
        if key not in _SOLVERS:
            db_stones = min(default_db_stones(game.pits), SOLVER_DB_STONES)
            solver = KalahaSolver(
                KalahaGame(game.pits, game.seeds, game.rules),
                db_stones=db_stones,
                tt_bits=SOLVER_TT_BITS,
                near_bits=SOLVER_NEAR_BITS,
            )
            _SOLVERS[key] = (solver, threading.Lock())
        return _SOLVERS[key]


def solver_analysis(state: Any, time_limit: float = 1.0) -> dict[str, Any]:
    """The exact values of a Kalaha position (a ``KalahaState``), if the solver finds them
    within ``time_limit`` seconds: ``{"solved": True, "value": V, "moves": [{"action": a,
    "value": v}, ...], "optimal": [a, ...]}`` (values: the final store difference, own minus
    opponent's, under perfect play, for the player to move), else ``{"solved": False, "note":
    "not solved within 1 s (N stones left)"}``.

    One solver per (pits, rules) is kept for the process (a 32 MiB transposition table plus
    8 MiB, and an endgame database of up to :data:`SOLVER_DB_STONES` stones), so the
    positions of one game reuse each other's work; solves run one at a time. The first call
    on a board size loads the database from the disk cache (6 pits: about 0.5 s with the
    solve) or, the very first time on a machine, builds and caches it (6 pits: 15 s on two
    idle cores, 30 s on a busy machine; 4 pits: under a second), so a server should make one
    call at start-up; the compiled search itself is cached by numba."""
    from spieltisch.agents.kalaha.solver import SolveInterrupted

    solver, lock = _solver_for(state.game)
    with lock:
        try:
            solved = solver.solve(state, move_values=True, time_limit=time_limit)
        except SolveInterrupted as stop:
            pits = state.game.pits
            stones = int(state.board[:pits].sum() + state.board[pits + 1 : 2 * pits + 1].sum())
            note = f"not solved within {time_limit:g} s ({stones} stones left)"
            stores = state.board[pits], state.board[2 * pits + 1]
            mover = int(state.current_player)
            diff = int(stores[mover] - stores[1 - mover])
            if stop.value_known:
                note += f"; value {stop.lower:+d}, not yet every move's"
            elif stop.lower > diff - stones or stop.upper < diff + stones:
                note += f"; proven {stop.lower:+d} <= value <= {stop.upper:+d}"
            return {"solved": False, "note": note}
    moves = [{"action": int(a), "value": int(v)} for a, v in sorted(solved.move_values.items())]
    return {
        "solved": True,
        "value": int(solved.value),
        "moves": moves,
        "optimal": [int(a) for a in solved.optimal_moves],
    }


__all__ = ["MAX_PLAYS", "analyse", "solver_analysis"]

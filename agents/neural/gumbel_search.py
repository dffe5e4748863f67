"""Gumbel tree search over many games at once (Danihelka et al., "Policy improvement by planning
with Gumbel", ICLR 2022): the search of ``algorithm: alphazero`` training and of ``sims=N`` agents.

One search runs for every game of a :class:`~spieltisch.envs._common.batch.BatchedGame` (the
roots) at once; each simulation descends one path per game, expands one leaf per game, evaluates
all new leaves in one network call and backs the values up. The rules come only from the
protocol (``step``, ``observe``, ``returns``, ``save``/``load``), so the search serves every game;
the tree is numpy arrays, the selection and backup loops are compiled with numba.

**Values are vectors**, one return per seat (``value_sum[..., seat]``), so two-player zero-sum
games, games of 3 or 4 players and (with sampled chance) dice games use the same code. At a node
where seat ``m`` moves, the value of a child is ``q = value_sum[child, m] / visits[child]``.

**Root** (paper, section 4): draw ``g(a) ~ Gumbel(0, 1)`` (times ``gumbel_scale``) for every legal
action; Sequential Halving spends the ``num_simulations`` on the ``m = min(max_considered, legal)``
actions with the largest ``g(a) + logits(a)``, in ``ceil(log2 m)`` phases that each halve the
candidates, ranking them by ``g(a) + logits(a) + sigma(q(a))``. It is run table-driven: the
simulation ``k`` visits the best-scoring action among those whose visit count equals the
``k``-th entry of :func:`considered_visits` (an action leaves the race by falling behind). The
action played is the best-scoring action among the most visited.

**Completed Q and sigma** (equations 10, 33 and appendix D): a child not visited gets the
mixed value ``v_mix = (v_hat + N * sum_b pi(b) q(b) / sum_b pi(b)) / (1 + N)`` (sums over visited
children, ``N`` their total visits, ``v_hat`` the node's own network value); completed Q values
are rescaled to [0, 1] by their min and max at the node, then
``sigma(q) = (c_visit + max_b N(b)) * c_scale * q``.

**Improved policy** (equation 11): ``pi' = softmax(logits + sigma(completedQ))`` over the legal
actions: the policy target of training, no mass on illegal actions.

**Interior nodes** (equation 14): the action maximising ``pi'(a) - N(a) / (1 + sum_b N(b))``:
deterministic, visits follow the improved policy.

A finished game is never expanded: a path that reaches a finished position backs up its exact
result again (the protocol's ``returns()``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from spieltisch.agents.base import Agent, legal_actions_of
from spieltisch.envs import make_batch, perfect_information
from spieltisch.envs._common.batch import BatchedGame

#: ``(obs [n, obs], mask [n, A]) -> (logits [n, A], values [n, num_players])``: the network's
#: prior logits (any value at illegal actions) and the expected return of every seat, seat 0 of
#: the vector being the player to move, then the following seats in turn order
Evaluator = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]

_LOW_LOGIT = -1.0e9

#: the most simulations a playing agent searches a move (``sims=N``; HiLo: ``sims`` times
#: ``dets``): about 10 s a Kalaha move on a CPU core; the search's tables grow with it
#: (``sims=10**12`` asked numpy for 124 TiB)
MAX_SIMULATIONS = 100_000


def considered_visits(max_considered: int, num_simulations: int) -> np.ndarray:
    """Sequential Halving as a sequence: before simulation ``k`` the root visits an action whose
    visit count is ``out[k]`` (the paper's schedule with ``max_considered`` candidates: each of
    ``ceil(log2 m)`` phases gives every remaining candidate ``max(1, n // (log2 m * remaining))``
    more visits, then halves them, never below 2)."""
    if max_considered <= 1:
        return np.arange(num_simulations, dtype=np.int64)
    log2max = math.ceil(math.log2(max_considered))
    sequence: list[int] = []
    visits = [0] * max_considered
    considered = max_considered
    while len(sequence) < num_simulations:
        extra = max(1, num_simulations // (log2max * considered))
        for _ in range(extra):
            sequence.extend(visits[:considered])
            for i in range(considered):
                visits[i] += 1
        considered = max(2, considered // 2)
    return np.asarray(sequence[:num_simulations], dtype=np.int64)


def considered_visits_table(max_considered: int, num_simulations: int) -> np.ndarray:
    """Row ``m`` is :func:`considered_visits` for ``m`` candidates (``m`` = 0 .. max_considered),
    so a node with fewer legal actions than ``max_considered`` uses its own schedule."""
    table = np.zeros((max_considered + 1, max(num_simulations, 1)), dtype=np.int64)
    for m in range(max_considered + 1):
        table[m, :num_simulations] = considered_visits(m, num_simulations)
    return table


@numba.njit(cache=True, nogil=True)
def _softmax_legal(logits, legal, out):
    best = -np.inf
    for a in range(logits.shape[0]):
        if legal[a] and logits[a] > best:
            best = logits[a]
    total = 0.0
    for a in range(logits.shape[0]):
        out[a] = math.exp(logits[a] - best) if legal[a] else 0.0
        total += out[a]
    for a in range(logits.shape[0]):
        out[a] /= total


@numba.njit(cache=True, nogil=True)
def _sigma_completed_q(
    children, legal, logits, visits, value_sum, raw_value, seat, node, c_visit, c_scale, probs, out
):
    """``out[a] = sigma(completedQ(a))`` at ``node`` for the mover ``seat`` (legal actions; the
    rest 0); ``probs`` receives the prior policy."""
    num_actions = logits.shape[0]
    _softmax_legal(logits, legal, probs)
    total_visits = 0
    max_visits = 0
    sum_probs = 0.0
    weighted_q = 0.0
    for a in range(num_actions):
        c = children[a]
        if legal[a] and c >= 0 and visits[c] > 0:
            q = value_sum[c, seat] / visits[c]
            total_visits += visits[c]
            max_visits = max(max_visits, visits[c])
            p = max(probs[a], 1e-30)
            sum_probs += p
            weighted_q += p * q
    mixed = raw_value[node, seat]
    if total_visits > 0:
        mixed = (mixed + total_visits * weighted_q / sum_probs) / (total_visits + 1)
    low = np.inf
    high = -np.inf
    for a in range(num_actions):
        if not legal[a]:
            out[a] = 0.0
            continue
        c = children[a]
        q = value_sum[c, seat] / visits[c] if c >= 0 and visits[c] > 0 else mixed
        out[a] = q
        low = min(low, q)
        high = max(high, q)
    scale = (c_visit + max_visits) * c_scale
    spread = max(high - low, 1e-8)
    for a in range(num_actions):
        if legal[a]:
            out[a] = scale * (out[a] - low) / spread


@numba.njit(cache=True, nogil=True)
def _root_score(logits, legal, gumbel, sigma, child_visits, considered, out):
    """Sequential Halving's score: ``g + logits + sigma`` for the legal actions visited exactly
    ``considered`` times, -inf elsewhere."""
    best = -np.inf
    for a in range(logits.shape[0]):
        if legal[a] and logits[a] > best:
            best = logits[a]
    for a in range(logits.shape[0]):
        if legal[a] and child_visits[a] == considered:
            out[a] = max(_LOW_LOGIT, gumbel[a] + logits[a] - best + sigma[a])
        else:
            out[a] = -np.inf


@numba.njit(cache=True, nogil=True)
def _child_visits(children, visits, out):
    for a in range(children.shape[0]):
        c = children[a]
        out[a] = visits[c] if c >= 0 else 0


@numba.njit(cache=True, nogil=True)
def _select(
    children,
    legal,
    logits,
    visits,
    value_sum,
    raw_value,
    mover,
    terminal,
    gumbel,
    table,
    max_considered,
    c_visit,
    c_scale,
    active,
    parent_out,
    action_out,
):
    """One path per active game: ``(parent, action)`` of the leaf to expand, or
    ``(finished node, -1)`` when the path ends in a finished position."""
    num_games, _, num_actions = logits.shape
    probs = np.empty(num_actions)
    sigma = np.empty(num_actions)
    score = np.empty(num_actions)
    child_visits = np.empty(num_actions, dtype=np.int64)
    for g in range(num_games):
        parent_out[g] = 0
        action_out[g] = -1
        if not active[g]:
            continue
        node = 0
        while True:
            seat = mover[g, node]
            _sigma_completed_q(
                children[g, node],
                legal[g, node],
                logits[g, node],
                visits[g],
                value_sum[g],
                raw_value[g],
                seat,
                node,
                c_visit,
                c_scale,
                probs,
                sigma,
            )
            _child_visits(children[g, node], visits[g], child_visits)
            if node == 0:
                num_legal = 0
                done = 0
                for a in range(num_actions):
                    num_legal += legal[g, 0, a]
                    done += child_visits[a]
                m = min(max_considered, num_legal)
                considered = table[m, min(done, table.shape[1] - 1)]
                _root_score(
                    logits[g, 0], legal[g, 0], gumbel[g], sigma, child_visits, considered, score
                )
                action = np.argmax(score)
                if score[action] == -np.inf:  # past the schedule: the most visited candidates
                    _root_score(
                        logits[g, 0],
                        legal[g, 0],
                        gumbel[g],
                        sigma,
                        child_visits,
                        child_visits.max(),
                        score,
                    )
                    action = np.argmax(score)
            else:
                # improved policy minus the visit share (equation 14)
                for a in range(num_actions):
                    sigma[a] += logits[g, node, a]
                _softmax_legal(sigma, legal[g, node], probs)
                total = 0
                for a in range(num_actions):
                    total += child_visits[a]
                action = -1
                best = -np.inf
                for a in range(num_actions):
                    if legal[g, node, a]:
                        s = probs[a] - child_visits[a] / (1.0 + total)
                        if s > best:
                            best = s
                            action = a
            child = children[g, node, action]
            if child < 0:
                parent_out[g] = node
                action_out[g] = action
                break
            if terminal[g, child]:
                parent_out[g] = child
                action_out[g] = -1
                break
            node = child


@numba.njit(cache=True, nogil=True)
def _backup(parent, visits, value_sum, leaf, value, active):
    """Add ``value[g]`` (one return per seat) to every node from ``leaf[g]`` up to the root."""
    for g in range(leaf.shape[0]):
        if not active[g]:
            continue
        node = leaf[g]
        while node >= 0:
            visits[g, node] += 1
            for p in range(value.shape[1]):
                value_sum[g, node, p] += value[g, p]
            node = parent[g, node]


@numba.njit(cache=True, nogil=True)
def _root_decision(
    children, legal, logits, visits, value_sum, raw_value, seat, gumbel, c_visit, c_scale,
    probs, sigma, score, child_visits, policy_out,
):  # fmt: skip
    """At a root (node 0 of one game's tree): the action to play, the best-scoring among the
    most visited legal actions, and the improved policy into ``policy_out``; ``sigma`` keeps
    ``logits + sigma(completedQ)``, ``child_visits`` the root actions' visits."""
    _sigma_completed_q(
        children, legal, logits, visits, value_sum, raw_value, seat, 0, c_visit, c_scale, probs,
        sigma,
    )  # fmt: skip
    _child_visits(children, visits, child_visits)
    most = 0
    for a in range(logits.shape[0]):
        if legal[a]:
            most = max(most, child_visits[a])
    _root_score(logits, legal, gumbel, sigma, child_visits, most, score)
    action = np.argmax(score)
    for a in range(logits.shape[0]):
        sigma[a] += logits[a]
    _softmax_legal(sigma, legal, policy_out)
    return action


@numba.njit(cache=True, nogil=True)
def _final(
    children,
    legal,
    logits,
    visits,
    value_sum,
    raw_value,
    mover,
    gumbel,
    c_visit,
    c_scale,
    active,
    action_out,
    policy_out,
    q_out,
    visits_out,
):
    """The action to play (best-scoring among the most visited root actions), the improved
    policy, the root's completed Q values (for the mover) and visit counts."""
    num_games, _, num_actions = logits.shape
    probs = np.empty(num_actions)
    sigma = np.empty(num_actions)
    score = np.empty(num_actions)
    child_visits = np.empty(num_actions, dtype=np.int64)
    for g in range(num_games):
        action_out[g] = 0
        if not active[g]:
            continue
        seat = mover[g, 0]
        action_out[g] = _root_decision(
            children[g, 0], legal[g, 0], logits[g, 0], visits[g], value_sum[g], raw_value[g],
            seat, gumbel[g], c_visit, c_scale, probs, sigma, score, child_visits, policy_out[g],
        )  # fmt: skip
        for a in range(num_actions):
            visits_out[g, a] = child_visits[a]
            c = children[g, 0, a]
            q_out[g, a] = (
                value_sum[g, c, seat] / visits[g, c] if c >= 0 and visits[g, c] > 0 else np.nan
            )


@numba.njit(cache=True, nogil=True)
def _combined_final(
    logits, legal, child_visits, q_sum, network_value, gumbel, c_visit, c_scale, action_out,
    policy_out,
):  # fmt: skip
    """:func:`_root_decision` for root statistics summed over several searches of one position
    (``child_visits[g, a]`` visits, ``q_sum[g, a]`` the sum of their returns for the mover,
    ``network_value[g]`` the root's network value): each game's root is rebuilt as a one-level
    tree (child ``a`` is node ``a + 1``) and decided as a searched root is."""
    num_games, num_actions = logits.shape
    children = np.arange(1, num_actions + 1)
    visits = np.zeros(num_actions + 1, dtype=np.int64)
    value_sum = np.zeros((num_actions + 1, 1))
    raw_value = np.zeros((num_actions + 1, 1))
    probs = np.empty(num_actions)
    sigma = np.empty(num_actions)
    score = np.empty(num_actions)
    seen = np.empty(num_actions, dtype=np.int64)
    for g in range(num_games):
        visits[0] = 1
        raw_value[0, 0] = network_value[g]
        for a in range(num_actions):
            visits[a + 1] = child_visits[g, a]
            value_sum[a + 1, 0] = q_sum[g, a]
        action_out[g] = _root_decision(
            children, legal[g], logits[g], visits, value_sum, raw_value, 0, gumbel[g], c_visit,
            c_scale, probs, sigma, score, seen, policy_out[g],
        )  # fmt: skip


@dataclass
class SearchResult:
    """What one search gives for every game. Rows not searched (finished games) hold no result:
    zeros, except ``prior_logits``, which :class:`GumbelSearch` leaves at -1e9."""

    action: np.ndarray
    """``(B,)`` the action to play"""
    policy: np.ndarray
    """``(B, A)`` the improved policy ``softmax(logits + sigma(completedQ))`` (training target)"""
    root_value: np.ndarray
    """``(B, num_players)`` the root's mean backed-up return per seat (absolute seats)"""
    q: np.ndarray
    """``(B, A)`` the mean return of each root action for the player to move (NaN: not visited)"""
    visits: np.ndarray
    """``(B, A)`` the visit count of each root action"""
    prior_logits: np.ndarray
    """``(B, A)`` the network's logits at the root (a large negative number at illegal actions)"""
    network_value: np.ndarray
    """``(B, num_players)`` the network's value of the root per seat (absolute seats)"""


@dataclass(frozen=True)
class SearchConfig:
    """The search's parameters (the paper's names in brackets)."""

    num_simulations: int = 16
    """simulations per move (n); 0 plays the network's policy alone"""
    max_considered: int = 16
    """root actions Sequential Halving starts from (m)"""
    gumbel_scale: float = 1.0
    """scale of the root's Gumbel noise: 1 samples (self-play), 0 plays deterministically"""
    c_visit: float = 50.0
    """sigma's visit offset (c_visit)"""
    c_scale: float = 0.1
    """sigma's scale (c_scale)"""

    def __post_init__(self) -> None:
        if self.num_simulations < 0:
            raise ValueError(f"num_simulations must be at least 0, got {self.num_simulations}")
        if self.max_considered < 1:
            raise ValueError(f"max_considered must be at least 1, got {self.max_considered}")
        for name in ("gumbel_scale", "c_visit", "c_scale"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be at least 0, got {getattr(self, name)}")


#: the value of every finished game of a batch by seat, ``(B, num_players)`` (zeros elsewhere)
Outcome = Callable[[BatchedGame], np.ndarray]


def game_outcome(margin_weight: float = 0.0, margin_scale: float = 1.0) -> Outcome:
    """What a finished game is worth to each seat, in the search (exact leaf values) and as the
    trainer's value target: the protocol's ``returns()`` (+1 win, -1 loss, 0 draw), or with
    ``margin_weight`` w > 0 (games with a ``score_difference()``: Kalaha)
    ``(1 - w) * returns + w * clip(margin / margin_scale, -1, 1)``, the margin in stones from
    the seat's side: a net trained so prefers the bigger win, as the Kalah solver scores."""
    if not 0.0 <= margin_weight <= 1.0:
        raise ValueError(f"margin_weight must be between 0 and 1, got {margin_weight}")
    if not margin_scale > 0:
        raise ValueError(f"margin_scale must be above 0, got {margin_scale}")
    if margin_weight == 0.0:
        return lambda games: games.returns()

    def outcome(games: BatchedGame) -> np.ndarray:
        if not hasattr(games, "score_difference"):
            raise ValueError(
                f"margin_weight needs a game scored in stones (Kalaha), not {type(games).__name__}"
            )
        margin = np.clip(games.score_difference() / margin_scale, -1.0, 1.0)
        margin = np.where(games.terminal, margin, 0.0)
        blended = (1.0 - margin_weight) * games.returns()
        blended[:, 0] += margin_weight * margin
        blended[:, 1] -= margin_weight * margin
        return blended

    return outcome


def _to_absolute(values: np.ndarray, mover: np.ndarray) -> np.ndarray:
    """Values with seat 0 = the mover -> values by seat number."""
    players = values.shape[1]
    seats = (mover[:, None] + np.arange(players)[None, :]) % players
    out = np.empty_like(values)
    np.put_along_axis(out, seats, values, axis=1)
    return out


def searched_rows(roots: BatchedGame, rows: np.ndarray | None) -> np.ndarray:
    """``(B,)`` bool: the games a search works on, the unfinished ones, or with ``rows`` (game
    indices) only those of them (a trainer's or arena's games where another player moves, or a
    random opening move is played, need no search). A bad ``rows`` raises and searches nothing."""
    active = ~np.asarray(roots.terminal, dtype=np.bool_)
    if rows is None:
        return active
    rows = np.asarray(rows)
    if rows.ndim != 1 or (rows.size and not np.issubdtype(rows.dtype, np.integer)):
        raise ValueError(f"rows must be a 1-D array of game indices, got {rows!r}")
    if rows.size and (rows.min() < 0 or rows.max() >= roots.num_games):
        raise ValueError(f"rows must be game indices in [0, {roots.num_games}), got {rows!r}")
    wanted = np.zeros(roots.num_games, dtype=np.bool_)
    wanted[rows] = True
    return active & wanted


def tree_bytes(roots: BatchedGame, num_simulations: int, num_games: int | None = None) -> int:
    """Bytes of the trees :meth:`GumbelSearch.search` allocates for ``num_games`` games like
    those of ``roots`` (default: as many as it has) at ``num_simulations``: per node the edge
    tables (logits, legal flags, children), the node's statistics and a copy of its position
    (the batch's per-game arrays). Configs check it before a run allocates it."""
    saved = roots.save()
    n = roots.num_games
    position = sum(
        v.nbytes // n for v in saved.values() if isinstance(v, np.ndarray) and len(v) == n
    )
    edges = roots.num_actions * (8 + 1 + 8)  # logits, legal, children
    stats = 8 + 8 + 8 + 1 + 2 * 8 * roots.num_players  # parent, visits, mover, terminal, values
    return (
        (n if num_games is None else num_games) * (num_simulations + 1) * (edges + stats + position)
    )


class GumbelSearch:
    """Gumbel search for every game of a batch: ``search(roots, evaluate, rng)``."""

    def __init__(self, config: SearchConfig, outcome: Outcome | None = None) -> None:
        self.config = config
        self.table = considered_visits_table(config.max_considered, config.num_simulations)
        #: the exact value of a finished leaf (:func:`game_outcome`; default ``returns()``)
        self.outcome = game_outcome() if outcome is None else outcome

    def search(
        self,
        roots: BatchedGame,
        evaluate: Evaluator,
        rng: np.random.Generator,
        gumbel: np.ndarray | None = None,
        rows: np.ndarray | None = None,
    ) -> SearchResult:
        """Search from every unfinished game of ``roots`` (left unchanged), or only from those
        of ``rows`` (game indices), and return the actions, improved policies and root
        statistics (zeros in the rows not searched). ``gumbel`` ``(B, A)``: the root noise
        (already scaled) instead of ``gumbel_scale`` times fresh draws from ``rng``, which are
        drawn for every row whatever ``rows``, so a searched game's result does not depend on
        which others are searched."""
        cfg = self.config
        num_games, num_actions, players = roots.num_games, roots.num_actions, roots.num_players
        nodes = cfg.num_simulations + 1
        active = searched_rows(roots, rows)
        obs, mask = roots.observe()
        mover0 = roots.current_player.copy()
        logits = np.full((num_games, nodes, num_actions), _LOW_LOGIT)
        legal = np.zeros((num_games, nodes, num_actions), dtype=np.bool_)
        children = np.full((num_games, nodes, num_actions), -1, dtype=np.int64)
        parent = np.full((num_games, nodes), -1, dtype=np.int64)
        visits = np.zeros((num_games, nodes), dtype=np.int64)
        value_sum = np.zeros((num_games, nodes, players))
        raw_value = np.zeros((num_games, nodes, players))
        mover = np.zeros((num_games, nodes), dtype=np.int64)
        terminal = np.zeros((num_games, nodes), dtype=np.bool_)
        result = SearchResult(
            action=np.zeros(num_games, dtype=np.int64),
            policy=np.zeros((num_games, num_actions)),
            root_value=np.zeros((num_games, players)),
            q=np.full((num_games, num_actions), np.nan),
            visits=np.zeros((num_games, num_actions), dtype=np.int64),
            prior_logits=logits[:, 0].copy(),
            network_value=raw_value[:, 0].copy(),
        )
        if roots.terminal.all():
            return result
        if gumbel is None:
            gumbel = cfg.gumbel_scale * rng.gumbel(size=(num_games, num_actions))
        elif np.shape(gumbel) != (num_games, num_actions):
            raise ValueError(f"gumbel must have shape {(num_games, num_actions)}")
        if not active.any():
            return result
        idx = np.flatnonzero(active)
        root_logits, root_values = evaluate(obs[idx], mask[idx])
        legal[idx, 0] = mask[idx] != 0
        logits[idx, 0] = np.where(legal[idx, 0], root_logits, _LOW_LOGIT)
        raw_value[idx, 0] = _to_absolute(np.asarray(root_values, dtype=np.float64), mover0[idx])
        value_sum[idx, 0] = raw_value[idx, 0]
        visits[idx, 0] = 1
        mover[:, 0] = mover0

        # the positions of the tree: the protocol's per-game arrays, one row per (game, node)
        leaf = roots.clone()
        saved = leaf.save()
        per_game = [
            k for k, v in saved.items() if isinstance(v, np.ndarray) and len(v) == num_games
        ]
        shared = [k for k in saved if k not in per_game]
        store = {k: np.repeat(saved[k][:, None], nodes, axis=1) for k in per_game}
        all_games = np.arange(num_games)
        parent_of = np.empty(num_games, dtype=np.int64)
        action_of = np.empty(num_games, dtype=np.int64)
        # a game not searched stays at its root, where it steps any legal move (thrown away)
        idle_action = np.argmax(mask != 0, axis=1)
        for sim in range(cfg.num_simulations):
            _select(
                children,
                legal,
                logits,
                visits,
                value_sum,
                raw_value,
                mover,
                terminal,
                gumbel,
                self.table,
                cfg.max_considered,
                cfg.c_visit,
                cfg.c_scale,
                active,
                parent_of,
                action_of,
            )
            expand = active & (action_of >= 0)
            # a path that ended in a finished position starts from it (stepping changes nothing)
            for key in per_game:
                saved[key] = store[key][all_games, parent_of]
            leaf.load(saved)
            leaf.step(np.where(expand, action_of, idle_action))
            new = sim + 1
            stepped = leaf.save()
            for key in per_game:
                store[key][expand, new] = stepped[key][expand]
            for key in shared:  # the batch's generator goes on: chance is sampled anew
                saved[key] = stepped[key]
            obs, mask = leaf.observe()
            leaf_mover = leaf.current_player.copy()
            finished = leaf.terminal.copy()
            value = self.outcome(leaf).astype(np.float64)
            needs_net = np.flatnonzero(expand & ~finished)
            if needs_net.size:
                net_logits, net_values = evaluate(obs[needs_net], mask[needs_net])
                value[needs_net] = _to_absolute(
                    np.asarray(net_values, dtype=np.float64), leaf_mover[needs_net]
                )
                legal[needs_net, new] = mask[needs_net] != 0
                logits[needs_net, new] = np.where(legal[needs_net, new], net_logits, _LOW_LOGIT)
            grown = np.flatnonzero(expand)
            children[grown, parent_of[grown], action_of[grown]] = new
            parent[grown, new] = parent_of[grown]
            mover[grown, new] = leaf_mover[grown]
            terminal[grown, new] = finished[grown]
            raw_value[grown, new] = value[grown]
            leaf_node = np.where(expand, new, parent_of)
            revisit = active & ~expand  # a finished node again: its exact result
            value[revisit] = raw_value[revisit, parent_of[revisit]]
            _backup(parent, visits, value_sum, leaf_node, value, active)
        _final(
            children,
            legal,
            logits,
            visits,
            value_sum,
            raw_value,
            mover,
            gumbel,
            cfg.c_visit,
            cfg.c_scale,
            active,
            result.action,
            result.policy,
            result.q,
            result.visits,
        )
        result.root_value[idx] = value_sum[idx, 0] / visits[idx, 0][:, None]
        result.prior_logits = logits[:, 0].copy()
        result.network_value = raw_value[:, 0].copy()
        return result


def policy_evaluator(net: Any, num_players: int, device: str = "cpu") -> Evaluator:
    """An :data:`Evaluator` of a :class:`~spieltisch.agents.neural.policy.PolicyNet` (on
    ``device``): its logits, and its values from the mover on: a per-seat value head's own
    (``arch.value_outputs == num_players``), else the mover's value spread as a vector (two
    players: ``[v, -v]``; more players: the mover's value, the others sharing its negation)."""
    import torch
    from spieltisch.agents.neural.policy import ArrayPolicy, blas_threads

    outputs = net.arch.value_outputs
    if outputs not in (1, num_players):
        raise ValueError(
            f"the network has {outputs} value outputs; a {num_players}-player game needs 1 "
            f"(the mover's) or {num_players} (one per seat)"
        )

    if device == "cpu":  # the forward pass in numpy: faster at a search's batch sizes
        policy = ArrayPolicy([net])

        def forward(obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            with blas_threads(torch.get_num_threads()):  # as many threads as torch's
                return policy.forward_seats(obs, mask)

    else:

        def forward(obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            with torch.no_grad():
                logits, seats = net.forward_seats(
                    torch.as_tensor(obs, device=device), torch.as_tensor(mask, device=device)
                )
            return logits.cpu().numpy(), seats.cpu().numpy()

    def evaluate(obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        logits, seats = forward(obs, mask)
        logits, seats = logits.astype(np.float64), seats.astype(np.float64)
        if outputs == num_players:
            return logits, seats
        v = seats[:, 0]
        values = np.empty((len(v), num_players))
        values[:, 0] = v
        values[:, 1:] = -v[:, None] / (num_players - 1)
        return logits, values

    return evaluate


class GumbelSearchAgent(Agent):
    """A network with Gumbel search at play time (``checkpoint:PATH:sims=N``): each move searches
    ``sims`` simulations (no root noise: ``gumbel_scale=0``, so the move is deterministic given
    the agent's generator) and plays the search's choice; ``sims=0`` plays the network's most
    likely legal move. ``outcome``: the value of finished leaves, as the network was trained
    (:func:`game_outcome`; ``Checkpoint.value_margin``); ``settings``: the trained run's
    ``max_considered``, ``c_visit``, ``c_scale`` (``Checkpoint.search_settings``).
    Perfect-information games search the real position they are given; HiLo (hidden cards)
    searches ``dets`` determinizations drawn from the
    :class:`~spieltisch.agents.base.InformationSet` it is given (``:sims=N,dets=D``; see
    :mod:`spieltisch.agents.neural.determinized_search`)."""

    #: determinizations per HiLo decision unless ``dets`` says otherwise
    DEFAULT_DETERMINIZATIONS = 8

    def __init__(
        self,
        net: Any,
        game: str,
        game_options: dict[str, Any],
        sims: int,
        seed: int | None = None,
        dets: int | None = None,
        outcome: Outcome | None = None,
        settings: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(seed)
        if isinstance(sims, bool) or not isinstance(sims, int) or sims < 0:
            raise ValueError(f"sims must be a whole number >= 0, got {sims!r}")
        if sims > MAX_SIMULATIONS:
            raise ValueError(f"sims must be at most {MAX_SIMULATIONS:,} per move, got {sims!r}")
        self.hidden = not perfect_information(game)
        if dets is not None and not self.hidden:
            raise ValueError(f"dets=D is for HiLo (hidden cards), not for {game}")
        if dets is not None and (isinstance(dets, bool) or not isinstance(dets, int) or dets < 1):
            raise ValueError(f"dets must be a whole number >= 1, got {dets!r}")
        if self.hidden and sims * (self.DEFAULT_DETERMINIZATIONS if dets is None else dets) > (
            MAX_SIMULATIONS
        ):  # (each determinization is searched with sims simulations)
            raise ValueError(
                f"sims times dets (default {self.DEFAULT_DETERMINIZATIONS}) must be at most "
                f"{MAX_SIMULATIONS:,} per move, got sims={sims}, dets={dets}"
            )
        self.sims = sims
        self.net = net.eval()
        self.name = f"gumbel_search:sims={sims}"
        self.batch = make_batch(game, 1, **game_options)
        self.evaluate = policy_evaluator(self.net, self.batch.num_players)
        config = SearchConfig(num_simulations=sims, gumbel_scale=0.0, **(settings or {}))
        if self.hidden:
            from spieltisch.agents.neural.determinized_search import (
                information_set_agent_search,
            )

            self.dets = self.DEFAULT_DETERMINIZATIONS if dets is None else dets
            self.name += f",dets={self.dets}"
            self.search: Any = information_set_agent_search(game, game_options, config, self.dets)
        else:
            self.search = GumbelSearch(config, outcome)

    def act(self, observation: dict[str, np.ndarray], state: Any | None = None) -> int:
        legal = legal_actions_of(observation)
        if self.sims == 0 or len(legal) == 1:
            obs = np.asarray(observation["observation"], dtype=np.float32)[None]
            mask = np.asarray(observation["action_mask"])[None]
            logits, _ = self.evaluate(obs, mask)
            return int(np.argmax(np.where(mask[0] != 0, logits[0], -np.inf)))
        if state is None:
            what = "information set" if self.hidden else "game state"
            raise ValueError(f"a searching agent needs the {what}")
        action = int(self.run_search(state).action[0])
        if action not in legal:  # cannot happen: the search only expands legal moves
            raise RuntimeError(f"search chose illegal action {action}; legal: {legal.tolist()}")
        return action

    def run_search(
        self,
        state: Any,
        rng: np.random.Generator | None = None,
        batch: BatchedGame | None = None,
    ) -> SearchResult:
        """The search :meth:`act` runs from ``state`` (it plays ``result.action[0]``), with
        ``rng`` (default the agent's own generator) in ``batch`` (default the agent's own;
        pass ``self.batch.clone()`` and a copy of the generator to leave the agent as it was).
        HiLo: ``state`` is the seat's :class:`~spieltisch.agents.base.InformationSet` (a real
        state is refused: the search must not see hidden cards); ``batch`` is unused."""
        rng = self.rng if rng is None else rng
        if self.hidden:
            from spieltisch.agents.base import InformationSet

            if not isinstance(state, InformationSet):
                raise TypeError(
                    "a HiLo search agent searches from an InformationSet, got "
                    f"{type(state).__name__} (the real state would show hidden cards)"
                )
            return self.search.search_infosets([state], self.evaluate, rng)
        batch = self.batch if batch is None else batch
        batch.set_state(0, state)
        return self.search.search(batch, self.evaluate, rng)

"""Gumbel tree search for backgammon with whole plays as actions and the dice as explicit chance
nodes: the search of ``pretrained:backgammon:sims=N`` (and ``checkpoint:PATH:sims=N`` of a TD
run). The Gumbel parts (root noise, Sequential Halving, completed Q, sigma, the improved policy,
interior selection) are those of :mod:`spieltisch.agents.neural.gumbel_search` (Danihelka et al.,
ICLR 2022), whose compiled helpers this module calls; what is new is the tree.

**The tree.** One tree per game of a cubeless
:class:`~spieltisch.envs.backgammon.batch.BackgammonBatch`, all searched at once. Three kinds
of nodes:

* *decision* nodes: a position with the dice rolled and a seat to play them; one edge per
  distinct legal play (:meth:`~BackgammonBatch.legal_plays`: one empty play when the roll cannot
  be played; as many plays as the position has, no cap);
* *chance* nodes: the afterstate of a play, the opponent to roll; 21 edges, the distinct rolls
  :data:`ROLLS` with probabilities :data:`ROLL_PROBS` (1/36 a double, 2/36 the others);
* *finished* nodes: a play that bore off the last checker; valued by the batch's
  ``returns()`` (points with gammons and backgammons, or +-1 with ``reward="win"``).

A play and then a roll are stepped in one call of the engine,
``step_plays(play, rolls=ROLL_CODES[o])`` (the roll code ``r`` with ``r % 36 // 6 + 1, r % 6 + 1``
the dice of outcome ``o``, :func:`spieltisch.envs.backgammon.rules.dice_of`): no rule is
restated here. A path that takes a play never tried before goes straight on through the new
chance node to one outcome (the one the chance rule below picks first), so the network only
ever values decision nodes, and chance nodes are never leaves.

**Values are vectors**, one per seat, zero-sum (``[v, -v]`` from seat 0's view), as in
:mod:`~spieltisch.agents.neural.gumbel_search`: ``Q(c)[m] = value_sum[c, m] / visits[c]`` is
the value of child ``c`` for the mover ``m`` of its parent.

**Priors and leaf values from one value net.** The evaluator (:data:`AfterstateEvaluator`, e.g.
:func:`td_evaluator`) gives the mover's value ``u(b)`` of each afterstate ``b`` of a position's
plays (the TD net's cubeless equity ``2 y0 - 1 + y1 + y2 - y3 - y4``; ``2 y0 - 1`` with
``reward="win"``; exact where the play bears off the last checker). A new decision node gets

* the prior logits ``logit(a) = u(b_a) / T`` over its plays, ``T`` the *temperature*
  (:data:`DEFAULT_TEMPERATURE`, the ``temperature`` parameter);
* its own value ``v_hat = max_a u(b_a)`` for the mover: the net's 1-ply value of the position.

**Decision nodes** keep the mean of their visits: ``value_sum(d) = v_hat(d) + sum_a N(a) Q(a)``
over the children, ``visits(d) = 1 + sum_a N(a)`` (without chance nodes below, the usual mean
of the backed-up values). The **root** selects as gumbel_search does: Gumbel noise ``g(a)``
(times ``gumbel_scale``; 0 at play time, so the search is deterministic), Sequential Halving
over the ``min(max_considered, plays)`` plays with the largest ``g(a) + logit(a)``, ranked by
``g(a) + logit(a) + sigma(completedQ(a))`` (``considered_visits_table``, ``_root_score``); the
play made is the best-scoring among the most visited. **Interior decision nodes** take the play
maximising ``pi'(a) - N(a) / (1 + sum_b N(b))`` with ``pi' = softmax(logit + sigma(completedQ))``
(equation 14); completed Q and sigma are ``_sigma_completed_q``'s (equations 10 and 33,
``v_mix`` from ``v_hat``).

**Chance nodes** select the outcome maximising ``p(o) - N(o) / (1 + sum_o' N(o'))``: visits
follow the roll probabilities (deterministic; the first 21 visits of a chance node expand 21
different outcomes, since a visited roll scores at most ``2/36 - 1/(1 + N) < 1/36`` while
``N < 36``). Their value is the probability-weighted mean of their expanded outcomes, the rest of
the probability given to the node's own value ``u`` (the net's value of the afterstate, the
play's prior value; ``chance_value="completed"``, the default)::

    Q(c) = sum_{o expanded} p(o) Q(o) + (1 - sum_{o expanded} p(o)) u(c)

or renormalised over the expanded outcomes (``chance_value="renormalized"``)::

    Q(c) = sum_{o expanded} p(o) Q(o) / sum_{o expanded} p(o)

and ``value_sum(c) = visits(c) Q(c)``. Either way, once all 21 rolls are expanded ``Q(c)`` is
the exact expectation of its children's values (with exact children: the exact expectimax value
of the afterstate). The completed form is the default because a few expanded rolls then correct
the net's value by their probability instead of replacing it: with the renormalised form a play
seen through one roll is valued by that roll alone, and Sequential Halving (which rescales the Q
values to [0, 1] at the node) amplifies that noise. With a perfect evaluator on 154 small
bear-offs the completed form made an optimal play in all of them at 16 to 128 simulations, the
renormalised form missed one at 64 and 128 (``tests/test_backgammon_chance_search.py`` checks
both forms against exact expectimax).

**Backup.** After a leaf gets its value (``v_hat`` of a new decision node, or the exact result of
a finished node again), every node on the path up gets ``visits += 1`` and its ``value_sum``
updated by the rules above, computed incrementally: a decision node adds the change of its
child's ``value_sum``; a chance node recomputes ``Q(c)`` over its 21 outcomes and passes the
change of its own ``value_sum`` up. Without chance nodes this is the usual backup of means.

**Cost.** Each simulation steps one play and roll per game and generates the new position's
plays (the engine's kernels), and evaluates all of that position's afterstates (the prior): a
position has about 20 plays, a double often 100 or more; ``sims=32`` takes about 10 ms a move with
the shipped 80-unit net.

The cube stays out of the search: it searches checker plays, in the cubeless game (a state of a
cube game is searched as its cubeless copy, :func:`cubeless_state`, cube value 1); the agent's
cube decisions are those of :class:`~spieltisch.agents.backgammon.td_value.TDValueAgent`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
from spieltisch.agents.backgammon import td_value as tv
from spieltisch.agents.neural.gumbel_search import (
    MAX_SIMULATIONS,
    SearchConfig,
    _root_score,
    _sigma_completed_q,
    _softmax_legal,
    considered_visits_table,
)
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.batch import BackgammonBatch
from spieltisch.envs.backgammon.engine import BackgammonGame, BackgammonState

#: ``(boards (n, 52) int32, movers (n,) int64) -> (n,) float64``: the value of each afterstate
#: (a board right after ``movers[i]`` played, the opponent to roll) for its mover
AfterstateEvaluator = Callable[[np.ndarray, np.ndarray], np.ndarray]

#: the prior's temperature ``T`` (logits = values / T, values in points): a play 0.05 points
#: better has e times the prior weight
DEFAULT_TEMPERATURE = 0.05
#: the largest value a play can have (a backgammon), for :func:`check_temperature`
MAX_POINTS = 3.0

#: the 21 distinct rolls ``(high, low)``, the chance nodes' outcomes in this order
ROLLS = tuple((d1, d2) for d1 in range(1, 7) for d2 in range(1, d1 + 1))
NUM_OUTCOMES = len(ROLLS)
#: each roll's probability (1/36 for a double, 2/36 for the others)
ROLL_PROBS = np.array([(1.0 if d1 == d2 else 2.0) / 36.0 for d1, d2 in ROLLS])
#: a code ``r`` for ``step_plays(..., rolls=...)`` whose dice (``rules.dice_of``) are the roll
ROLL_CODES = np.array([(d1 - 1) * 6 + (d2 - 1) for d1, d2 in ROLLS], dtype=np.int64)

#: how a chance node values the rolls it has not expanded yet (module docstring)
CHANCE_VALUES = ("completed", "renormalized")
DEFAULT_CHANCE_VALUE = "completed"

DECISION, CHANCE, FINISHED = 0, 1, 2
# what a simulation's path ends in (selection's output)
_IDLE, _NEW_PLAY, _NEW_OUTCOME, _AT_FINISHED = 0, 1, 2, 3


# ----------------------------------------------------------------------------------------------
# Kernels
# ----------------------------------------------------------------------------------------------
@numba.njit(cache=True, nogil=True)
def _pick_outcome(edge_child, first, visits, probs):
    """The chance rule: the outcome maximising ``p(o) - N(o) / (1 + sum N)`` (first of ties)."""
    total = 0
    for o in range(probs.shape[0]):
        c = edge_child[first + o]
        if c >= 0:
            total += visits[c]
    best = -np.inf
    pick = 0
    for o in range(probs.shape[0]):
        c = edge_child[first + o]
        n = visits[c] if c >= 0 else 0
        s = probs[o] - n / (1.0 + total)
        if s > best:
            best = s
            pick = o
    return pick


@numba.njit(cache=True, nogil=True)
def _decision_stats(
    edge_child, edge_prior, first, count, visits, value_sum, raw, seat, node, c_visit, c_scale,
    legal, probs, sigma, child_visits,
):  # fmt: skip
    """sigma(completedQ) of the ``count`` plays of decision ``node`` into ``sigma[:count]``, the
    prior into ``probs[:count]``, the children's visits into ``child_visits[:count]``."""
    children = edge_child[first : first + count]
    _sigma_completed_q(
        children, legal[:count], edge_prior[first : first + count], visits, value_sum, raw,
        seat, node, c_visit, c_scale, probs[:count], sigma[:count],
    )  # fmt: skip
    for a in range(count):
        c = children[a]
        child_visits[a] = visits[c] if c >= 0 else 0


@numba.njit(cache=True, nogil=True)
def _select(
    kind, parent, via, visits, value_sum, raw, mover, first, count, edge_child, edge_prior,
    gumbel, outcome_probs, table, max_considered, c_visit, c_scale, active,
    case_out, decision_out, play_out, outcome_out, node_out,
):  # fmt: skip
    """One path per active game, from the root. ``case_out``: ``_NEW_PLAY`` (play ``play_out``
    of decision node ``decision_out`` has no child yet; the roll to follow is ``outcome_out``),
    ``_NEW_OUTCOME`` (outcome ``outcome_out`` of chance node ``node_out``, reached by play
    ``play_out`` of ``decision_out``, is not expanded) or ``_AT_FINISHED`` (finished node
    ``node_out``)."""
    num_games = kind.shape[0]
    legal = np.ones(k.MAX_PLAYS, dtype=np.bool_)
    probs = np.empty(k.MAX_PLAYS)
    sigma = np.empty(k.MAX_PLAYS)
    score = np.empty(k.MAX_PLAYS)
    child_visits = np.empty(k.MAX_PLAYS, dtype=np.int64)
    for g in range(num_games):
        case_out[g] = _IDLE
        if not active[g]:
            continue
        node = 0
        while True:
            if kind[g, node] == FINISHED:
                case_out[g] = _AT_FINISHED
                node_out[g] = node
                break
            f = first[g, node]
            if kind[g, node] == CHANCE:
                o = _pick_outcome(edge_child, f, visits[g], outcome_probs)
                c = edge_child[f + o]
                if c < 0:
                    case_out[g] = _NEW_OUTCOME
                    node_out[g] = node
                    decision_out[g] = parent[g, node]
                    play_out[g] = via[g, node]
                    outcome_out[g] = o
                    break
                node = c
                continue
            n = count[g, node]
            _decision_stats(
                edge_child, edge_prior, f, n, visits[g], value_sum[g], raw[g], mover[g, node],
                node, c_visit, c_scale, legal, probs, sigma, child_visits,
            )  # fmt: skip
            if node == 0:  # Sequential Halving over the considered plays
                done = 0
                for a in range(n):
                    done += child_visits[a]
                m = min(max_considered, n)
                considered = table[m, min(done, table.shape[1] - 1)]
                _root_score(
                    edge_prior[f : f + n], legal[:n], gumbel[f : f + n], sigma[:n],
                    child_visits[:n], considered, score[:n],
                )  # fmt: skip
                action = np.argmax(score[:n])
                if score[action] == -np.inf:  # past the schedule: the most visited candidates
                    _root_score(
                        edge_prior[f : f + n], legal[:n], gumbel[f : f + n], sigma[:n],
                        child_visits[:n], child_visits[:n].max(), score[:n],
                    )  # fmt: skip
                    action = np.argmax(score[:n])
            else:  # improved policy minus the visit share (equation 14)
                total = 0
                for a in range(n):
                    sigma[a] += edge_prior[f + a]
                    total += child_visits[a]
                _softmax_legal(sigma[:n], legal[:n], probs[:n])
                action = 0
                best = -np.inf
                for a in range(n):
                    s = probs[a] - child_visits[a] / (1.0 + total)
                    if s > best:
                        best = s
                        action = a
            c = edge_child[f + action]
            if c < 0:
                case_out[g] = _NEW_PLAY
                decision_out[g] = node
                play_out[g] = action
                outcome_out[g] = np.argmax(outcome_probs)  # the chance rule at N = 0
                break
            node = c


@numba.njit(cache=True, nogil=True)
def _grow(
    case, decision, play, outcome, node, finished, results, new_mover, play_offsets,
    play_values, temperature, outcome_probs, kind, parent, via, raw, mover, first, count,
    num_nodes, edge_child, edge_prior, edge_top, leaf_out, new_decision_out,
):  # fmt: skip
    """Add the nodes of every game's path end (see :func:`_select`): a finished node, or a chance
    node and its first outcome, or an outcome. New decision nodes take their plays' values
    ``play_values[play_offsets[g]:play_offsets[g + 1]]`` (for ``new_mover[g]``) as logits
    ``value / temperature`` and their best as ``v_hat``. Edges go from ``edge_top`` on; returns
    the new top. ``leaf_out[g]``: the node to back up from (-1: none)."""
    for g in range(case.shape[0]):
        leaf_out[g] = -1
        new_decision_out[g] = -1
        cs = case[g]
        if cs == _IDLE:
            continue
        if cs == _AT_FINISHED:
            leaf_out[g] = node[g]
            continue
        d = decision[g]
        if cs == _NEW_PLAY:
            t = num_nodes[g]
            num_nodes[g] += 1
            parent[g, t] = d
            via[g, t] = play[g]
            edge_child[first[g, d] + play[g]] = t
            if finished[g]:
                kind[g, t] = FINISHED
                raw[g, t, 0] = results[g, 0]
                raw[g, t, 1] = results[g, 1]
                leaf_out[g] = t
                continue
            kind[g, t] = CHANCE
            u = edge_prior[first[g, d] + play[g]] * temperature  # the net's value of the play
            raw[g, t, mover[g, d]] = u
            raw[g, t, 1 - mover[g, d]] = -u
            first[g, t] = edge_top
            count[g, t] = outcome_probs.shape[0]
            for o in range(outcome_probs.shape[0]):
                edge_child[edge_top + o] = -1
                edge_prior[edge_top + o] = outcome_probs[o]
            edge_top += outcome_probs.shape[0]
            chance = t
        else:
            chance = node[g]
        n_id = num_nodes[g]
        num_nodes[g] += 1
        kind[g, n_id] = DECISION
        parent[g, n_id] = chance
        via[g, n_id] = outcome[g]
        edge_child[first[g, chance] + outcome[g]] = n_id
        m = new_mover[g]
        mover[g, n_id] = m
        lo = play_offsets[g]
        n = play_offsets[g + 1] - lo
        first[g, n_id] = edge_top
        count[g, n_id] = n
        best = -np.inf
        for i in range(n):
            v = play_values[lo + i]
            edge_child[edge_top + i] = -1
            edge_prior[edge_top + i] = v / temperature
            best = max(best, v)
        edge_top += n
        raw[g, n_id, m] = best
        raw[g, n_id, 1 - m] = -best
        leaf_out[g] = n_id
        new_decision_out[g] = n_id
    return edge_top


@numba.njit(cache=True, nogil=True)
def _chance_value(edge_child, f, n, visits, value_sum, outcome_probs, own, seat, completed):
    """``Q(c)`` of a chance node for ``seat``: the probability-weighted sum of its expanded
    outcomes' values, completed by the node's own value ``own`` for the rest of the probability
    (``completed``) or renormalised over the expanded outcomes."""
    num = 0.0
    den = 0.0
    for o in range(n):
        c = edge_child[f + o]
        if c >= 0 and visits[c] > 0:
            num += outcome_probs[o] * value_sum[c, seat] / visits[c]
            den += outcome_probs[o]
    if completed:
        return num + max(0.0, 1.0 - den) * own
    return num / den


@numba.njit(cache=True, nogil=True)
def _backup(
    kind, parent, visits, value_sum, raw, first, count, edge_child, outcome_probs, completed, leaf
):  # fmt: skip
    """Back every game's new value up from ``leaf[g]`` (see the module docstring)."""
    delta = np.zeros(2)
    for g in range(leaf.shape[0]):
        node = leaf[g]
        if node < 0:
            continue
        for p in range(2):
            delta[p] = raw[g, node, p]
            value_sum[g, node, p] += delta[p]
        visits[g, node] += 1
        node = parent[g, node]
        while node >= 0:
            visits[g, node] += 1
            if kind[g, node] == DECISION:
                for p in range(2):
                    value_sum[g, node, p] += delta[p]
            else:
                f, n = first[g, node], count[g, node]
                for p in range(2):
                    new = visits[g, node] * _chance_value(
                        edge_child, f, n, visits[g], value_sum[g], outcome_probs,
                        raw[g, node, p], p, completed,
                    )  # fmt: skip
                    delta[p] = new - value_sum[g, node, p]
                    value_sum[g, node, p] = new
            node = parent[g, node]


@numba.njit(cache=True, nogil=True)
def _final(
    visits, value_sum, raw, mover, first, count, edge_child, edge_prior, gumbel, c_visit,
    c_scale, active, play_out, q_out, visits_out, policy_out, prior_out,
):  # fmt: skip
    """Per active game: the play to make (the best-scoring of the most visited root plays), and
    for each root play (rows ``first[g, 0]`` on) its Q for the mover, visits, improved policy
    and prior."""
    legal = np.ones(k.MAX_PLAYS, dtype=np.bool_)
    probs = np.empty(k.MAX_PLAYS)
    sigma = np.empty(k.MAX_PLAYS)
    score = np.empty(k.MAX_PLAYS)
    child_visits = np.empty(k.MAX_PLAYS, dtype=np.int64)
    for g in range(active.shape[0]):
        play_out[g] = -1
        if not active[g]:
            continue
        f, n, seat = first[g, 0], count[g, 0], mover[g, 0]
        _decision_stats(
            edge_child, edge_prior, f, n, visits[g], value_sum[g], raw[g], seat, 0, c_visit,
            c_scale, legal, probs, sigma, child_visits,
        )  # fmt: skip
        for a in range(n):
            prior_out[f + a] = probs[a]
        _root_score(
            edge_prior[f : f + n], legal[:n], gumbel[f : f + n], sigma[:n], child_visits[:n],
            child_visits[:n].max(), score[:n],
        )  # fmt: skip
        play_out[g] = np.argmax(score[:n])
        for a in range(n):
            c = edge_child[f + a]
            visits_out[f + a] = child_visits[a]
            q_out[f + a] = value_sum[g, c, seat] / visits[g, c] if child_visits[a] > 0 else np.nan
            sigma[a] += edge_prior[f + a]
        _softmax_legal(sigma[:n], legal[:n], probs[:n])
        for a in range(n):
            policy_out[f + a] = probs[a]


@numba.njit(cache=True, nogil=True)
def _td_values(W1, b1, W2, b2, rW1, rb1, rW2, rb2, boards, movers, win_only, out):
    """The TD net's value of each afterstate for its mover: equity, or ``2 y0 - 1``."""
    n_in = W1.shape[0]
    x = np.zeros(n_in)
    nz = np.zeros(n_in, dtype=np.int64)
    h = np.zeros(b1.shape[0])
    rh = np.zeros(rb1.shape[0])
    y = np.zeros(tv.NUM_OUTPUTS)
    for p in range(boards.shape[0]):
        tv.evaluate_afterstate(
            W1, b1, W2, b2, rW1, rb1, rW2, rb2, boards[p], movers[p], x, nz, h, rh, y
        )
        out[p] = 2.0 * y[0] - 1.0 if win_only else tv.equity(y)


# ----------------------------------------------------------------------------------------------
# The search
# ----------------------------------------------------------------------------------------------
def td_evaluator(params: dict[str, np.ndarray], reward: str = "points") -> AfterstateEvaluator:
    """An :data:`AfterstateEvaluator` of a TD value net (:mod:`.td_value`'s parameters): the
    mover's cubeless equity of each afterstate (``reward="points"``), or ``2 P(win) - 1``
    (``reward="win"``), as the batch's ``returns()`` score finished games."""
    if reward not in ("points", "win"):
        raise ValueError(f"reward must be 'points' or 'win', got {reward!r}")
    net = tv.net_arrays(params)
    win_only = reward == "win"

    def evaluate(boards: np.ndarray, movers: np.ndarray) -> np.ndarray:
        out = np.zeros(len(boards))
        _td_values(
            *net, np.ascontiguousarray(boards, dtype=np.int32),
            np.ascontiguousarray(movers, dtype=np.int64), win_only, out,
        )  # fmt: skip
        return out

    return evaluate


@dataclass
class ChanceTree:
    """One search's tree, game ``g``'s nodes at ``[g, 0 : num_nodes[g]]`` (node 0 the root).
    Node arrays: ``kind`` (:data:`DECISION`, :data:`CHANCE`, :data:`FINISHED`), ``parent``,
    ``via`` (the play index leading to a chance or finished node, the outcome index leading to
    a decision node), ``visits``, ``value_sum`` (per seat), ``raw`` (``v_hat`` per seat, or a
    finished game's result), ``mover`` (of a decision node), and its edges ``first``,
    ``count`` into ``edge_child`` (the child's node index, -1 when not expanded) and
    ``edge_prior`` (a play's logit, an outcome's probability)."""

    kind: np.ndarray
    parent: np.ndarray
    via: np.ndarray
    visits: np.ndarray
    value_sum: np.ndarray
    raw: np.ndarray
    mover: np.ndarray
    first: np.ndarray
    count: np.ndarray
    num_nodes: np.ndarray
    edge_child: np.ndarray
    edge_prior: np.ndarray

    def value(self, g: int, node: int) -> np.ndarray:
        """The node's value per seat, ``value_sum / visits``."""
        return self.value_sum[g, node] / self.visits[g, node]

    def children(self, g: int, node: int) -> np.ndarray:
        """The node's child per edge (-1: not expanded)."""
        f = self.first[g, node]
        return self.edge_child[f : f + self.count[g, node]]


@dataclass
class ChanceSearchResult:
    """What one search gives for every game. Game ``g``'s root plays (the order of the batch's
    ``legal_plays()``) are rows ``offsets[g] : offsets[g + 1]`` of ``q``, ``visits``,
    ``policy`` and ``prior``; games with no play to choose (finished, a cube decision) have
    none, and ``play`` -1."""

    play: np.ndarray
    """``(B,)`` the play to make: an index into the game's root plays"""
    offsets: np.ndarray
    """``(B + 1,)`` each game's first row of the per-play arrays"""
    q: np.ndarray
    """the mean value of each root play for the player to move (NaN: not visited)"""
    visits: np.ndarray
    """each root play's visit count"""
    policy: np.ndarray
    """the improved policy ``softmax(logit + sigma(completedQ))`` over each game's plays"""
    prior: np.ndarray
    """the prior ``softmax(logit)`` over each game's plays"""
    root_value: np.ndarray
    """``(B, 2)`` the root's mean backed-up value per seat"""
    tree: ChanceTree
    """the tree itself"""


def check_temperature(temperature: Any) -> float:
    if isinstance(temperature, bool) or not isinstance(temperature, int | float):
        raise ValueError(f"temperature must be a positive number, got {temperature!r}")
    if not 0.0 < temperature < float("inf"):
        raise ValueError(f"temperature must be a positive number, got {temperature!r}")
    if not np.isfinite(MAX_POINTS / temperature):  # the logits value / T overflowed: NaN priors
        raise ValueError(
            f"temperature {temperature!r} is too small: the logits (values up to {MAX_POINTS} "
            "points) / temperature overflow"
        )
    return float(temperature)


class ChanceSearch:
    """Gumbel search with chance nodes for every game of a cubeless
    :class:`~spieltisch.envs.backgammon.batch.BackgammonBatch`:
    ``search(roots, evaluate, rng)``. ``config``: gumbel_search's parameters (``gumbel_scale=0``
    for deterministic play); ``temperature``: the prior's (module docstring)."""

    def __init__(
        self,
        config: SearchConfig,
        temperature: float = DEFAULT_TEMPERATURE,
        chance_value: str = DEFAULT_CHANCE_VALUE,
    ) -> None:
        if chance_value not in CHANCE_VALUES:
            raise ValueError(f"chance_value must be one of {CHANCE_VALUES}, got {chance_value!r}")
        self.config = config
        self.temperature = check_temperature(temperature)
        self.chance_value = chance_value
        self.table = considered_visits_table(config.max_considered, config.num_simulations)

    def search(
        self,
        roots: BackgammonBatch,
        evaluate: AfterstateEvaluator,
        rng: np.random.Generator | None = None,
    ) -> ChanceSearchResult:
        """Search from every game of ``roots`` (left unchanged) that has a play to choose;
        ``rng`` draws the root's Gumbel noise (needed only with ``gumbel_scale > 0``)."""
        if roots.game.cube:
            raise ValueError(
                "the search plays the cubeless game: search a batch of cubeless_state()s"
            )
        cfg, temperature = self.config, self.temperature
        num_games, sims = roots.num_games, cfg.num_simulations
        cap = 1 + 2 * sims
        leaf = roots.clone()
        offsets, boards, _ = leaf.legal_plays()
        counts = np.diff(offsets)
        active = counts > 0
        root_mover = leaf.current_player.copy()
        values = evaluate(boards, np.repeat(root_mover, counts)) if len(boards) else np.zeros(0)
        values = np.asarray(values, dtype=np.float64)
        total = int(offsets[-1])

        kind = np.zeros((num_games, cap), dtype=np.int8)
        parent = np.full((num_games, cap), -1, dtype=np.int64)
        via = np.full((num_games, cap), -1, dtype=np.int64)
        visits = np.zeros((num_games, cap), dtype=np.int64)
        value_sum = np.zeros((num_games, cap, 2))
        raw = np.zeros((num_games, cap, 2))
        mover = np.zeros((num_games, cap), dtype=np.int64)
        first = np.zeros((num_games, cap), dtype=np.int64)
        count = np.zeros((num_games, cap), dtype=np.int64)
        num_nodes = np.zeros(num_games, dtype=np.int64)
        capacity = max(1024, 2 * total + num_games * sims * (NUM_OUTCOMES + 32))
        edge_child = np.full(capacity, -1, dtype=np.int64)
        edge_prior = np.zeros(capacity)
        edge_prior[:total] = values / temperature
        idx = np.flatnonzero(active)
        mover[:, 0] = root_mover
        first[:, 0] = offsets[:-1]
        count[:, 0] = counts
        if idx.size:
            best = np.maximum.reduceat(values, offsets[idx])
            raw[idx, 0, root_mover[idx]] = best
            raw[idx, 0, 1 - root_mover[idx]] = -best
        value_sum[:, 0] = raw[:, 0]
        visits[idx, 0] = 1
        num_nodes[idx] = 1
        if cfg.gumbel_scale > 0:
            if rng is None:
                raise ValueError("gumbel_scale > 0 needs a generator (rng)")
            gumbel = cfg.gumbel_scale * rng.gumbel(size=total)
        else:
            gumbel = np.zeros(total)
        tree = ChanceTree(
            kind, parent, via, visits, value_sum, raw, mover, first, count, num_nodes,
            edge_child, edge_prior,
        )  # fmt: skip

        if idx.size and sims > 0:
            self._simulate(leaf, evaluate, tree, gumbel, active, total)
        result = ChanceSearchResult(
            play=np.full(num_games, -1, dtype=np.int64),
            offsets=offsets,
            q=np.full(total, np.nan),
            visits=np.zeros(total, dtype=np.int64),
            policy=np.zeros(total),
            prior=np.zeros(total),
            root_value=np.zeros((num_games, 2)),
            tree=tree,
        )
        _final(
            tree.visits, tree.value_sum, tree.raw, tree.mover, tree.first, tree.count,
            tree.edge_child, tree.edge_prior, gumbel, cfg.c_visit, cfg.c_scale, active,
            result.play, result.q, result.visits, result.policy, result.prior,
        )  # fmt: skip
        result.root_value[idx] = value_sum[idx, 0] / visits[idx, 0][:, None]
        return result

    def _simulate(
        self,
        leaf: BackgammonBatch,
        evaluate: AfterstateEvaluator,
        tree: ChanceTree,
        gumbel: np.ndarray,
        active: np.ndarray,
        edge_top: int,
    ) -> None:
        """The simulations: grow ``tree`` (its edge arrays are replaced when they grow)."""
        cfg = self.config
        num_games = leaf.num_games
        rows = np.arange(num_games)
        store = np.repeat(leaf.states[:, None], len(tree.kind[0]), axis=1)  # decision states
        saved = leaf.save()
        case = np.zeros(num_games, dtype=np.int64)
        decision = np.zeros(num_games, dtype=np.int64)
        play = np.zeros(num_games, dtype=np.int64)
        outcome = np.zeros(num_games, dtype=np.int64)
        node = np.zeros(num_games, dtype=np.int64)
        leaf_node = np.zeros(num_games, dtype=np.int64)
        new_decision = np.zeros(num_games, dtype=np.int64)
        no_plays = np.zeros(num_games + 1, dtype=np.int64)
        for _ in range(cfg.num_simulations):
            _select(
                tree.kind, tree.parent, tree.via, tree.visits, tree.value_sum, tree.raw,
                tree.mover, tree.first, tree.count, tree.edge_child, tree.edge_prior, gumbel,
                ROLL_PROBS, self.table, cfg.max_considered, cfg.c_visit, cfg.c_scale, active,
                case, decision, play, outcome, node,
            )  # fmt: skip
            expand = (case == _NEW_PLAY) | (case == _NEW_OUTCOME)
            finished = np.zeros(num_games, dtype=np.bool_)
            results = np.zeros((num_games, 2))
            new_mover = np.zeros(num_games, dtype=np.int64)
            play_offsets, play_values = no_plays, np.zeros(0)
            if expand.any():
                # every expanding game steps its decision node's play and then the outcome's
                # roll; the others are marked finished, so the engine leaves them alone
                saved["states"] = store[rows, decision]
                saved["terminal"] = ~expand
                leaf.load(saved)
                leaf.step_plays(
                    np.where(expand, play, 0), rolls=np.where(expand, ROLL_CODES[outcome], 0)
                )
                finished = leaf.terminal & expand
                results = leaf.returns()
                new_mover = leaf.current_player.copy()
                play_offsets, boards, _ = leaf.legal_plays()
                n_plays = np.diff(play_offsets)
                if len(boards):
                    play_values = np.asarray(
                        evaluate(boards, np.repeat(new_mover, n_plays)), dtype=np.float64
                    )
                need = edge_top + int(play_offsets[-1]) + NUM_OUTCOMES * num_games
                if need > len(tree.edge_child):
                    grow = max(need, 2 * len(tree.edge_child)) - len(tree.edge_child)
                    tree.edge_child = np.concatenate(
                        [tree.edge_child, np.full(grow, -1, dtype=np.int64)]
                    )
                    tree.edge_prior = np.concatenate([tree.edge_prior, np.zeros(grow)])
            edge_top = _grow(
                case, decision, play, outcome, node, finished, results, new_mover, play_offsets,
                play_values, self.temperature, ROLL_PROBS, tree.kind, tree.parent, tree.via,
                tree.raw, tree.mover, tree.first, tree.count, tree.num_nodes, tree.edge_child,
                tree.edge_prior, edge_top, leaf_node, new_decision,
            )  # fmt: skip
            grown = np.flatnonzero(new_decision >= 0)
            store[grown, new_decision[grown]] = leaf.states[grown]
            _backup(
                tree.kind, tree.parent, tree.visits, tree.value_sum, tree.raw, tree.first,
                tree.count, tree.edge_child, ROLL_PROBS, self.chance_value == "completed",
                leaf_node,
            )  # fmt: skip


# ----------------------------------------------------------------------------------------------
# The agent
# ----------------------------------------------------------------------------------------------
CUBELESS = BackgammonGame()


def cubeless_state(state: BackgammonState) -> BackgammonState:
    """``state`` (of any game) as a state of the cubeless game: the same board, turn, phase and
    dice, the cube at 1 and out of play (so the turns it leads to roll at once)."""
    s = state.s.copy()
    s[k.M_FLAGS] &= ~k.FLAG_CUBE
    s[k.M_CUBE] = 1
    s[k.M_OWNER] = -1
    return BackgammonState(CUBELESS, s)


def check_sims(sims: Any) -> int:
    """``sims`` as a whole number of simulations >= 0, or a ValueError saying what is wrong."""
    if isinstance(sims, bool) or not isinstance(sims, int | np.integer) or sims < 0:
        raise ValueError(f"sims must be a whole number >= 0 (0: the plain 1-ply net), got {sims!r}")
    if sims > MAX_SIMULATIONS:  # (sims=10**12 asked numpy for 124 TiB)
        raise ValueError(f"sims must be at most {MAX_SIMULATIONS:,} per move, got {sims!r}")
    return int(sims)


class TDSearchAgent(tv.TDValueAgent):
    """A TD value net with :class:`ChanceSearch` at play time (``pretrained:backgammon:sims=N``):
    each checker play searches ``sims`` simulations from the real position (no root noise, so
    the play is deterministic) and makes the search's choice; a forced play is made without
    search. Cube decisions as :class:`~.td_value.TDValueAgent` (1-ply probabilities,
    Janowski). ``reward``: the env's option, what values mean (points or wins)."""

    name = "td_search"

    def __init__(
        self,
        params: dict[str, np.ndarray],
        seed: int | None = None,
        sims: int = 32,
        temperature: float = DEFAULT_TEMPERATURE,
        reward: str = "points",
        max_considered: int = 16,
        chance_value: str = DEFAULT_CHANCE_VALUE,
    ) -> None:
        super().__init__(params, seed)
        self.sims = check_sims(sims)
        if self.sims < 1:
            raise ValueError("TDSearchAgent searches: sims must be at least 1 (0: TDValueAgent)")
        config = SearchConfig(
            num_simulations=self.sims, max_considered=max_considered, gumbel_scale=0.0
        )
        self.search = ChanceSearch(config, temperature, chance_value)
        self.evaluate = td_evaluator(self.params, reward)
        self.batch = BackgammonBatch(CUBELESS, 1, seed=0, threads=1, reward=reward)

    def choose_play(self, state: Any) -> int:
        if state.num_plays() <= 1:
            return 0
        result = self.run_search(state)
        index = int(result.play[0])
        boards = state.play_boards()
        searched = result.tree.count[0, 0]
        if searched != len(boards) or not 0 <= index < len(boards):  # cannot happen
            raise RuntimeError(f"search chose play {index} of {searched}; legal: {len(boards)}")
        return index

    def run_search(self, state: Any) -> ChanceSearchResult:
        """The search :meth:`choose_play` runs from ``state`` (a position with dice to play)."""
        self.batch.set_state(0, cubeless_state(state))
        return self.search.search(self.batch, self.evaluate)

"""Gumbel search for a hidden-information game (HiLo): searched from the mover's information set,
never from the real state.

At each decision the search sees only an :class:`~spieltisch.agents.base.InformationSet` of the
player to move (what the arena hands agents). It draws ``D`` *determinizations* from it, full
states that agree with everything the player knows (``InformationSet.sample``: face-down cards,
the unknown draw pile and future chance redrawn), searches each of them with
:class:`~spieltisch.agents.neural.gumbel_search.GumbelSearch` (one batch of ``B * D`` roots) and
combines the root statistics:

* the root's network logits and value are the same in every determinization (the network sees
  the mover's observation, which holds only what the mover knows);
* the root Gumbel noise ``g(a)`` is drawn once per decision and shared by its determinizations,
  so Sequential Halving starts every one of them from the same candidates;
* visits are summed, ``N(a) = sum_d N_d(a)``, and the Q value of an action is the mean return
  over all its visits, ``q(a) = sum_d N_d(a) q_d(a) / N(a)``;
* from these the decision is made exactly as at a searched root (completed Q, ``sigma``): the
  action played is the best-scoring ``g(a) + logits(a) + sigma(q(a))`` among the most visited
  actions, and the policy target is ``pi' = softmax(logits + sigma(completedQ))``.

With ``D = 1`` this is the plain search of the one determinization. Inside a determinization
the other players' moves are searched with its cards in view (determinized search, "perfect
information Monte Carlo"); the decision itself depends only on the mover's information set and
the generator: changing any card the mover may not know changes nothing (tested).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from spieltisch.agents.base import InformationSet
from spieltisch.agents.neural.gumbel_search import (
    Evaluator,
    GumbelSearch,
    SearchConfig,
    SearchResult,
    _combined_final,
    searched_rows,
)
from spieltisch.envs._common.batch import BatchedGame


class InformationSetSearch:
    """Gumbel search over ``determinizations`` states drawn from each mover's information set.

    ``make_samples(n)`` builds a batch of ``n`` games of the game searched (its states are
    overwritten with the determinizations).
    """

    def __init__(
        self,
        config: SearchConfig,
        determinizations: int,
        make_samples: Callable[[int], BatchedGame],
    ) -> None:
        if isinstance(determinizations, bool) or not isinstance(determinizations, int):
            raise TypeError(f"determinizations must be an integer, got {determinizations!r}")
        if determinizations < 1:
            raise ValueError(f"determinizations must be at least 1, got {determinizations}")
        self.config = config
        self.determinizations = determinizations
        self.make_samples = make_samples
        self.gumbel_search = GumbelSearch(config)

    def search(
        self,
        roots: BatchedGame,
        evaluate: Evaluator,
        rng: np.random.Generator,
        rows: np.ndarray | None = None,
    ) -> SearchResult:
        """Search every unfinished game of ``roots`` (or those of ``rows``, game indices) from
        its mover's information set (the only thing read from a game: the
        :class:`InformationSet` built from it, as the arena builds one for an agent); rows of
        finished games and of games not searched are zeros, as in ``GumbelSearch.search``."""
        num_games, num_actions = roots.num_games, roots.num_actions
        rows = np.flatnonzero(searched_rows(roots, rows))
        mover = roots.current_player
        infosets = [InformationSet(roots.state(int(g)), int(mover[g]), rng) for g in rows]
        found = self.search_infosets(infosets, evaluate, rng) if infosets else None
        result = SearchResult(
            action=np.zeros(num_games, dtype=np.int64),
            policy=np.zeros((num_games, num_actions)),
            root_value=np.zeros((num_games, roots.num_players)),
            q=np.full((num_games, num_actions), np.nan),
            visits=np.zeros((num_games, num_actions), dtype=np.int64),
            prior_logits=np.zeros((num_games, num_actions)),
            network_value=np.zeros((num_games, roots.num_players)),
        )
        if found is not None:
            for name in vars(result):
                getattr(result, name)[rows] = getattr(found, name)
        return result

    def search_infosets(
        self,
        infosets: Sequence[InformationSet],
        evaluate: Evaluator,
        rng: np.random.Generator,
    ) -> SearchResult:
        """One combined search per information set (row ``i`` of the result is
        ``infosets[i]``'s decision; see the module docstring)."""
        count, dets = len(infosets), self.determinizations
        if count == 0:
            raise ValueError("infosets is empty: nothing to search")
        samples = self.make_samples(count * dets)
        for i, infoset in enumerate(infosets):
            for d in range(dets):
                samples.set_state(i * dets + d, infoset.sample(rng))
        first = np.arange(0, count * dets, dets)
        if samples.terminal[first].any():
            raise ValueError("an information set of a finished game cannot be searched")
        num_actions = samples.num_actions
        gumbel = self.config.gumbel_scale * rng.gumbel(size=(count, num_actions))
        each = self.gumbel_search.search(samples, evaluate, rng, np.repeat(gumbel, dets, axis=0))
        shape = (count, dets, num_actions)
        visits = each.visits.reshape(shape).sum(axis=1)
        q_sum = np.nan_to_num(each.q * each.visits).reshape(shape).sum(axis=1)
        logits = each.prior_logits[first]
        legal = samples.observe()[1][first] != 0
        mover = samples.current_player[first]
        network_value = each.network_value[first]
        action = np.zeros(count, dtype=np.int64)
        policy = np.zeros((count, num_actions))
        _combined_final(
            logits,
            legal,
            visits,
            q_sum,
            network_value[np.arange(count), mover],
            gumbel,
            self.config.c_visit,
            self.config.c_scale,
            action,
            policy,
        )
        with np.errstate(invalid="ignore", divide="ignore"):
            q = np.where(visits > 0, q_sum / visits, np.nan)
        return SearchResult(
            action=action,
            policy=policy,
            root_value=each.root_value.reshape(count, dets, -1).mean(axis=1),
            q=q,
            visits=visits,
            prior_logits=logits,
            network_value=network_value,
        )


def information_set_agent_search(
    game: str, game_options: dict[str, Any], config: SearchConfig, determinizations: int
) -> InformationSetSearch:
    """The play-time search of a ``sims=N,dets=D`` agent (``config``: its settings, no root
    noise, so deterministic given the agent's generator), determinizations in batches of the
    agent's game."""
    from spieltisch.envs import make_batch

    return InformationSetSearch(
        config,
        determinizations,
        lambda n: make_batch(game, n, **game_options),
    )

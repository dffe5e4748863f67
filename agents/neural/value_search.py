"""Search at play time over a trained network's value: ``pretrained:kalaha:search=4``.

A trained policy network also has a value head (the mover's expected final reward). For the
perfect-information, deterministic games (Kalaha, Hus) a few plies of minimax over that value
make a much stronger player than the raw policy, the way TD-Gammon and AlphaZero combine a
learned evaluation with search. ``search=N``: the ``N``-ply minimax value of every move, where

* finished games are scored exactly (the game's result; for a net trained on the stone margin,
  ``margin_weight`` > 0, the value it was trained to predict, ``game_outcome``), unfinished
  positions at the horizon with the value head (an extra turn in Kalaha is a ply like any other,
  unless ``search=8,extend=K``: then up to ``K`` extra turns along a line cost no ply, so a chain
  of them is not cut off by the horizon with the same player still to move; alpha-beta only);
* among moves with the same searched value, the policy head's preferred move is played.

Two implementations compute that value:

* :class:`ValueSearchAgent` without a leaf budget runs the compiled alpha-beta of the
  ``alphabeta`` baseline (:mod:`spieltisch.agents.mancala.alphabeta`: static move ordering, a
  transposition table), with the value head evaluated in numba at the horizon
  (:func:`~spieltisch.agents.mancala.alphabeta.net_leaf_evaluator`, values rounded to 1e-4).
  Alpha-beta visits a small fraction of the tree: Hus at depth 7 a few thousand positions a
  move where the full tree has about 650,000 leaves.
* :func:`searched_values` expands the *full* tree level by level on the batched engine and
  evaluates the leaves with torch in chunks; it is the reference the alpha-beta is tested
  against, and it serves the leaf budget (``search=6,leaves=N``): the tree keeps growing past
  ``depth`` plies while the next ply has at most ``N`` positions, so endgames and forced lines
  are searched deeper. Its cost grows with the branching factor to the power ``depth``: Hus has
  about 140,000 leaves at depth 6 (0.2 s a move) and 650,000 at depth 7 (1.5 s).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from spieltisch.agents.base import Agent, legal_actions_of
from spieltisch.agents.neural.gumbel_search import SearchResult, game_outcome, searched_rows
from spieltisch.agents.neural.policy import PolicyNet
from spieltisch.envs import make_batch
from spieltisch.envs._common.batch import BatchedGame

#: a hard cap on how far ``max_leaves`` may deepen past ``depth`` (forced lines can be long)
MAX_EXTRA_PLIES = 24

#: the most positions a ply of the full-width search (``leaves=N``) may hold: about 4 GB and
#: 40 s a Hus move at the most (``leaves=10**12`` grew plies until memory ran out)
MAX_LEAVES = 10**7

#: leaves evaluated per network call (bounds the memory of the hidden activations)
LEAF_CHUNK = 1 << 17

#: games whose batched engine holds a whole position in (board, mover, end flag) for search
SEARCHABLE_GAMES = ("kalaha", "hus")


def _positions(
    game: str,
    game_options: dict[str, Any],
    boards: np.ndarray,
    players: np.ndarray,
    terminal: np.ndarray,
) -> BatchedGame:
    """A mancala batch (Kalaha or Hus: board, mover and end flag are its whole state) holding
    the given positions."""
    games = make_batch(game, len(boards), **game_options)
    games.boards[:] = boards
    games.current_player[:] = players
    games.terminal[:] = terminal
    games.refresh_masks()
    return games


def searched_values(
    net: PolicyNet,
    game: str,
    game_options: dict[str, Any],
    board: np.ndarray,
    player: int,
    depth: int,
    max_leaves: int = 0,
    value_margin: tuple[float, float] = (0.0, 1.0),
) -> tuple[np.ndarray, np.ndarray]:
    """``(actions, values)``: every legal move of the position and its ``depth``-ply minimax
    value for ``player`` (the player to move), leaves scored by the network's value head and
    finished games by ``game_outcome(*value_margin)`` (what the value head was trained on).

    With ``max_leaves`` the tree keeps growing past ``depth`` plies while the next ply has at
    most that many positions (endgames, forced sequences), so the depth adapts to a budget."""
    outcome = game_outcome(*value_margin)
    if depth < 1:
        raise ValueError(f"search depth must be at least 1, got {depth}")
    boards = np.asarray(board)[None].copy()
    players = np.array([player], dtype=np.int64)
    terminal = np.array([False])
    levels: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    if max_leaves < 0:
        raise ValueError(f"max_leaves must be at least 0, got {max_leaves}")
    while True:
        games = _positions(game, game_options, boards, players, terminal)
        parent, action = np.nonzero(games.legal_mask)
        deep_enough = len(levels) >= depth
        if not deep_enough and parent.size > MAX_LEAVES:  # (search=1000,leaves=1: terabytes)
            raise ValueError(
                f"search={depth} with leaves: ply {len(levels) + 1} of the full-width search has "
                f"{parent.size:,} positions, more than {MAX_LEAVES:,}: search fewer plies"
            )
        if parent.size == 0 or (
            deep_enough and (parent.size > max_leaves or len(levels) >= depth + MAX_EXTRA_PLIES)
        ):
            break
        children = _positions(
            game, game_options, boards[parent], players[parent], np.zeros(parent.size, dtype=bool)
        )
        children.step(action)
        boards = children.boards.copy()
        players = children.current_player.copy()
        terminal = children.terminal.copy()
        exact = outcome(children)[:, player]
        levels.append((parent, action, players, terminal, exact))
        last_games = children
    # leaves of the deepest level: exact if finished, else the value head
    _, _, _, finished, exact = levels[-1]
    values = exact.astype(np.float64)
    open_ = np.flatnonzero(~finished)
    if open_.size:
        obs, _ = last_games.observe()
        mover = last_games.current_player
        sign = np.where(mover[open_] == player, 1.0, -1.0)
        with torch.no_grad():  # in chunks: a deep search can have millions of leaves
            for start in range(0, open_.size, LEAF_CHUNK):
                rows = open_[start : start + LEAF_CHUNK]
                v = net.value(torch.from_numpy(obs[rows])).numpy().astype(np.float64)
                values[rows] = sign[start : start + LEAF_CHUNK] * v
    # back up: a node's value is the max (root player to move) or min of its children
    for level in range(len(levels) - 1, 0, -1):
        parent = levels[level][0]
        _, _, node_movers, node_finished, node_exact = levels[level - 1]
        best = np.full(len(node_movers), -np.inf)
        worst = np.full(len(node_movers), np.inf)
        np.maximum.at(best, parent, values)
        np.minimum.at(worst, parent, values)
        backed = np.where(node_movers == player, best, worst)
        values = np.where(node_finished, node_exact, backed)
    return levels[0][1], values


def value_layers(net: PolicyNet) -> list[tuple[np.ndarray, np.ndarray]]:
    """``(weight, bias)`` of the trunk's linear layers and the value head, as numpy arrays
    (every one is followed by tanh in :meth:`PolicyNet.value`); an MLP (the compiled leaf
    evaluator reproduces its inputs, one-hot counts included, but not residual blocks)."""
    if net.arch.residual_blocks:
        raise ValueError(
            "search=N evaluates an MLP's value head in compiled code; this network has "
            "residual blocks: play it with sims=N (Gumbel search)"
        )
    linears = [m for m in net.trunk if isinstance(m, torch.nn.Linear)] + [net.value_head]
    layers = [(m.weight.detach().numpy(), m.bias.detach().numpy()) for m in linears]
    head_weight, head_bias = layers[-1]
    layers[-1] = (head_weight[:1], head_bias[:1])  # the mover's value (a per-seat head's first)
    return layers


def alphabeta_searcher(
    net: PolicyNet,
    game: str,
    game_options: dict[str, Any],
    depth: int,
    seed: int | None = None,
    tt_bits: int = 20,
    value_margin: tuple[float, float] = (0.0, 1.0),
    extend: int = 0,
) -> Any:
    """The ``alphabeta`` baseline's compiled search with ``net``'s value head at the horizon
    (``tt_bits=0``: no transposition table, so values are exactly the ``depth``-ply minimax);
    ``value_margin``: ``(margin_weight, margin_scale)`` of the value head's training target."""
    from spieltisch.agents.mancala.alphabeta import MancalaSearchAgent, search_kind

    kind, param = search_kind(game, game_options)
    searcher = MancalaSearchAgent(
        kind, param, seed, depth=depth, tt_bits=tt_bits, name=f"search{depth}", extend=extend
    )
    searcher.leaf_net = leaf_evaluator(net, game, game_options, value_margin)
    return searcher


def leaf_evaluator(
    net: PolicyNet,
    game: str,
    game_options: dict[str, Any],
    value_margin: tuple[float, float] = (0.0, 1.0),
) -> Any:
    """``net``'s value head as the compiled search reads it (a copy of its current weights:
    :func:`~spieltisch.agents.mancala.alphabeta.net_leaf_evaluator`)."""
    from spieltisch.agents.mancala.alphabeta import net_leaf_evaluator

    (observation_size,) = make_batch(game, 1, **game_options).observation_shape
    return net_leaf_evaluator(
        value_layers(net),
        observation_size,
        net.arch.observation_scale,
        net.arch.count_bins,
        *value_margin,
        features=net.arch.feature_width,
    )


class ValueSearchAgent(Agent):
    """Plays the move with the best ``depth``-ply minimax value over ``net``'s value head
    (alpha-beta; or the full tree, deeper while a ply has at most ``max_leaves`` positions);
    ties go to the move the policy head prefers. Needs the engine state. ``value_margin``:
    ``(margin_weight, margin_scale)`` of the value head's training target
    (``Checkpoint.value_margin``), how finished games in the tree are scored."""

    def __init__(
        self,
        net: PolicyNet,
        game: str,
        game_options: dict[str, Any],
        depth: int,
        seed: int | None = None,
        max_leaves: int = 0,
        value_margin: tuple[float, float] = (0.0, 1.0),
        extend: int = 0,
    ) -> None:
        super().__init__(seed)
        if game not in SEARCHABLE_GAMES:
            raise ValueError(f"search is available for {list(SEARCHABLE_GAMES)}, not {game!r}")
        from spieltisch.agents.mancala.alphabeta import MAX_DEPTH

        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
            raise ValueError(f"search depth must be a positive integer, got {depth!r}")
        if depth > MAX_DEPTH:  # (the alpha-beta's "depth must be between ..." named no 'search')
            raise ValueError(f"search depth must be at most {MAX_DEPTH}, got {depth!r}")
        if not isinstance(max_leaves, int) or isinstance(max_leaves, bool) or max_leaves < 0:
            raise ValueError(f"leaves must be a non-negative integer, got {max_leaves!r}")
        if max_leaves > MAX_LEAVES:
            raise ValueError(
                f"leaves must be at most {MAX_LEAVES:,} (positions a ply), got {max_leaves!r}"
            )
        if not isinstance(extend, int) or isinstance(extend, bool) or extend < 0:
            raise ValueError(f"extend must be a non-negative integer, got {extend!r}")
        if extend and max_leaves:
            raise ValueError("extend is an option of the alpha-beta search, not of leaves=N")
        self.net = net.eval()
        self.game = game
        self.game_options = dict(game_options)
        self.depth = depth
        self.max_leaves = max_leaves
        self.extend = extend
        self.value_margin = value_margin
        self.name = f"search{depth}"
        self.searcher = (
            None
            if max_leaves
            else alphabeta_searcher(
                self.net, game, game_options, depth, seed, value_margin=value_margin, extend=extend
            )
        )

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if self.searcher is not None:
            self.searcher.reset(seed)  # clears its transposition table

    def act(self, observation: dict[str, np.ndarray], state: Any | None = None) -> int:
        legal = legal_actions_of(observation)
        if legal.size == 1:
            return int(legal[0])
        if state is None:
            raise ValueError(f"{self.name} needs the game state (a perfect-information game)")
        return choose_searched_action(self.net, observation, lambda: self.move_values(state))

    def move_values(
        self, state: Any, tt: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """``(actions, values)``: the searched value of every legal move of ``state``, what
        :meth:`act` chooses by. Alpha-beta: values in its integer units (the value head times
        :data:`~spieltisch.agents.mancala.alphabeta.VALUE_SCALE`, finished games ``+-WIN`` plus
        the margin, or on the value head's scale for a margin-trained net; moves worse than the
        best are upper bounds), ``tt`` the transposition table
        to use (default the searcher's own); the full tree: the value head's units."""
        if self.searcher is not None:
            values = self.searcher.root_values(state, tt=tt)
            return np.array(list(values)), np.array(list(values.values()), dtype=np.float64)
        board, player = state.board, int(state.current_player)
        return searched_values(
            self.net, self.game, self.game_options, board, player, self.depth, self.max_leaves,
            self.value_margin,
        )  # fmt: skip


def choose_searched_action(
    net: PolicyNet,
    observation: dict[str, np.ndarray],
    search: Callable[[], tuple[np.ndarray, np.ndarray]],
) -> int:
    """The action with the best searched value, ties to the one the policy head prefers.

    ``search()`` returns ``(actions, values)``; it runs with torch on one thread (a search
    calls the network on small batches, where extra threads only cost synchronisation)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        actions, values = search()
        obs = torch.as_tensor(np.asarray(observation["observation"], dtype=np.float32))[None]
        mask = torch.as_tensor(np.asarray(observation["action_mask"]))[None]
        with torch.no_grad():
            logits, _ = net(obs, mask)
    finally:
        torch.set_num_threads(threads)
    prior = logits[0].numpy()[actions]
    top = np.flatnonzero(values >= values.max() - 1e-9)
    return int(actions[top[np.argmax(prior[top])]])


class AlphaBetaImprovement:
    """Expert iteration's policy improvement (Anthony, Tian and Barber, NeurIPS 2017) for
    Kalaha and Hus: every position is searched by the compiled alpha-beta, ``depth`` plies over
    the network's *current* value head (what ``search=N`` plays), and

    * the policy target is uniform over the moves of the best searched value (the expert's
      choice; ties are exact: alpha-beta's root window proves every equal move's value), or
      with ``q_scale`` s > 0 ``softmax(logits + s * q)`` over the legal moves, ``q`` every
      move's exact searched value (each move searched with the full window): the Gumbel
      paper's improvement by completed Q-values, with alpha-beta's values as Q,
    * the move played is the one of those the policy head prefers (as :class:`ValueSearchAgent`),
    * the root value is the best searched value for the mover (finished lines at +-1), its
      negation for the other seat.

    It answers ``search(games, evaluate, rng)`` like :class:`~spieltisch.agents.neural.
    gumbel_search.GumbelSearch`, so self-play is the same loop; ``evaluate`` (the network's
    evaluator) gives the prior that breaks ties. The network is read at each call, so a trainer
    updating it in place is searched with its newest weights; the transposition table is
    cleared at each call for the same reason. ``rng`` orders the moves the search tries."""

    def __init__(
        self,
        net: PolicyNet,
        game: str,
        game_options: dict[str, Any],
        depth: int,
        value_margin: tuple[float, float] = (0.0, 1.0),
        q_scale: float = 0.0,
        tt_bits: int = 16,
    ) -> None:
        if not q_scale >= 0:
            raise ValueError(f"q_scale must be at least 0, got {q_scale}")
        if game not in SEARCHABLE_GAMES:
            raise ValueError(f"alpha-beta improvement: {list(SEARCHABLE_GAMES)}, not {game!r}")
        if net.arch.value_outputs != 1:
            raise ValueError("alpha-beta improvement searches a net with one (the mover's) value")
        self.net = net
        self.game = game
        self.game_options = dict(game_options)
        self.value_margin = value_margin
        self.q_scale = q_scale
        self.searcher = alphabeta_searcher(
            net, game, game_options, depth, tt_bits=tt_bits, value_margin=value_margin
        )

    def search(
        self,
        games: BatchedGame,
        evaluate: Any,
        rng: np.random.Generator,
        rows: np.ndarray | None = None,
    ) -> SearchResult:
        """Search every unfinished game (or those of ``rows``, game indices; the others' rows
        are zeros). The move-order noise is drawn for every unfinished game whatever ``rows``,
        so a searched game's result does not depend on which others are searched."""
        from spieltisch.agents.mancala.alphabeta import VALUE_SCALE

        num_games, num_actions = games.legal_mask.shape
        result = SearchResult(
            action=np.zeros(num_games, dtype=np.int64),
            policy=np.zeros((num_games, num_actions)),
            root_value=np.zeros((num_games, 2)),
            q=np.full((num_games, num_actions), np.nan),
            visits=np.zeros((num_games, num_actions), dtype=np.int64),
            prior_logits=np.zeros((num_games, num_actions)),
            network_value=np.zeros((num_games, 2)),
        )
        unfinished = ~games.terminal
        wanted = searched_rows(games, rows)
        if not unfinished.any():
            return result
        order_noise = rng.random((int(unfinished.sum()), num_actions))[wanted[unfinished]]
        idx = np.flatnonzero(wanted)
        if idx.size == 0:
            return result
        obs, mask = games.observe()
        mask, mover = mask[idx], games.current_player[idx]
        logits, values = evaluate(obs[idx], mask)
        self.searcher.leaf_net = leaf_evaluator(
            self.net, self.game, self.game_options, self.value_margin
        )
        self.searcher.tt[:] = 0
        exact_all = self.q_scale > 0
        searched = self.searcher.move_values_boards(
            games.boards[idx], mover, mask, order_noise, exact_all=exact_all
        )
        best = searched.max(axis=1)
        top = searched == best[:, None]
        legal = mask > 0
        q = np.clip(searched / VALUE_SCALE, -1.0, 1.0)
        if exact_all:
            improved = np.where(legal, logits + self.q_scale * q, -np.inf)
            improved = np.exp(improved - improved.max(axis=1, keepdims=True))
            result.policy[idx] = improved / improved.sum(axis=1, keepdims=True)
        else:
            result.policy[idx] = top / top.sum(axis=1, keepdims=True)
        result.action[idx] = np.argmax(np.where(top, logits, -np.inf), axis=1)
        value = np.clip(best / VALUE_SCALE, -1.0, 1.0)
        rows = np.arange(idx.size)
        result.root_value[idx, mover] = value
        result.root_value[idx, 1 - mover] = -value
        result.q[idx] = np.where(top | (legal & exact_all), q, np.nan)
        result.prior_logits[idx] = logits
        mover_value = np.asarray(values, dtype=np.float64)[rows, 0]
        result.network_value[idx, mover] = mover_value
        result.network_value[idx, 1 - mover] = -mover_value
        return result

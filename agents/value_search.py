"""Search at play time over a trained network's value: ``pretrained:kalaha:search=4``.

A trained policy network also has a value head (the mover's expected final reward). For the
perfect-information, deterministic games (Kalaha, Hus) a few plies of full-width minimax over
that value make a much stronger player than the raw policy, the way TD-Gammon and AlphaZero
combine a learned evaluation with search. This module does exactly that, and nothing else:

* the tree is expanded level by level on the batched engine (one engine call per ply for all
  positions of that ply; an extra turn in Kalaha is a ply like any other);
* finished games are scored exactly (+1 / 0 / -1 from the game's result), unfinished leaves
  with the value head;
* values are backed up as minimax from the root player's side (max where the root player
  moves, min where the opponent does);
* among moves with the same searched value, the policy head's preferred move is played;
* with a leaf budget (``search=6,leaves=N``) the tree keeps growing past ``depth`` plies while
  the next ply has at most ``N`` positions, so endgames and forced lines are searched deeper.

The cost grows with the branching factor to the power ``depth``, almost all of it in the value
head at the leaves (evaluated in chunks): Kalaha 6 pits, depth 6, is some ten thousand leaves
(a few tens of milliseconds); Hus (up to 16 moves) has about 140,000 leaves at depth 6 (0.2 s
a move) and 650,000 at depth 7 (1.5 s), medians over positions of random games.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from spieltisch.agents.base import Agent, legal_actions_of
from spieltisch.agents.policy import PolicyNet

#: a hard cap on how far ``max_leaves`` may deepen past ``depth`` (forced lines can be long)
MAX_EXTRA_PLIES = 24

#: leaves evaluated per network call (bounds the memory of the hidden activations)
LEAF_CHUNK = 1 << 17

#: games whose training adapter can load arbitrary positions (``load``) for search
SEARCHABLE_GAMES = ("kalaha", "hus")


def searched_values(
    net: PolicyNet,
    game: str,
    game_options: dict[str, Any],
    board: np.ndarray,
    player: int,
    depth: int,
    max_leaves: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """``(actions, values)``: every legal move of the position and its ``depth``-ply minimax
    value for ``player`` (the player to move), leaves scored by the network's value head.

    With ``max_leaves`` the tree keeps growing past ``depth`` plies while the next ply has at
    most that many positions (endgames, forced sequences), so the depth adapts to a budget."""
    from spieltisch.train.selfplay_games import make_batched_game

    if depth < 1:
        raise ValueError(f"search depth must be at least 1, got {depth}")
    boards = np.asarray(board)[None].copy()
    players = np.array([player], dtype=np.int64)
    terminal = np.array([False])
    levels: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    if max_leaves < 0:
        raise ValueError(f"max_leaves must be at least 0, got {max_leaves}")
    while True:
        games = make_batched_game(game, game_options, len(boards))
        games.load(boards, players, terminal)
        parent, action = np.nonzero(games.batch.legal_mask)
        deep_enough = len(levels) >= depth
        if parent.size == 0 or (
            deep_enough and (parent.size > max_leaves or len(levels) >= depth + MAX_EXTRA_PLIES)
        ):
            break
        children = make_batched_game(game, game_options, parent.size)
        children.load(boards[parent], players[parent], np.zeros(parent.size, dtype=bool))
        children.step(action)
        boards = children.batch.boards.copy()
        players = children.batch.current_player.copy()
        terminal = children.batch.terminal.copy()
        exact = children.returns()[:, player]
        levels.append((parent, action, players, terminal, exact))
        last_games = children
    # leaves of the deepest level: exact if finished, else the value head
    _, _, _, finished, exact = levels[-1]
    values = exact.astype(np.float64)
    open_ = np.flatnonzero(~finished)
    if open_.size:
        obs, _, mover = last_games.observe()
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


class ValueSearchAgent(Agent):
    """Plays the move with the best ``depth``-ply minimax value over ``net``'s value head
    (deeper while a ply has at most ``max_leaves`` positions); ties go to the move the policy
    head prefers. Needs the engine state."""

    def __init__(
        self,
        net: PolicyNet,
        game: str,
        game_options: dict[str, Any],
        depth: int,
        seed: int | None = None,
        max_leaves: int = 0,
    ) -> None:
        super().__init__(seed)
        if game not in SEARCHABLE_GAMES:
            raise ValueError(f"search is available for {list(SEARCHABLE_GAMES)}, not {game!r}")
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
            raise ValueError(f"search depth must be a positive integer, got {depth!r}")
        if not isinstance(max_leaves, int) or isinstance(max_leaves, bool) or max_leaves < 0:
            raise ValueError(f"leaves must be a non-negative integer, got {max_leaves!r}")
        self.net = net.eval()
        self.game = game
        self.game_options = dict(game_options)
        self.depth = depth
        self.max_leaves = max_leaves
        self.name = f"search{depth}"

    def act(self, observation: dict[str, np.ndarray], state: Any | None = None) -> int:
        legal = legal_actions_of(observation)
        if legal.size == 1:
            return int(legal[0])
        if state is None:
            raise ValueError(f"{self.name} needs the game state (a perfect-information game)")
        board, player = state.board, int(state.current_player)
        game, options, depth, leaves = self.game, self.game_options, self.depth, self.max_leaves
        return choose_searched_action(
            self.net,
            observation,
            lambda: searched_values(self.net, game, options, board, player, depth, leaves),
        )


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

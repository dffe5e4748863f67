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
* among moves with the same searched value, the policy head's preferred move is played.

The cost grows with the branching factor to the power ``depth``: Kalaha 6 pits, depth 4, is a
few thousand leaves (milliseconds); Hus (up to 16 moves) is practical up to depth 3.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from spieltisch.agents.base import Agent, legal_actions_of
from spieltisch.agents.policy import PolicyNet

#: games whose training adapter can load arbitrary positions (``load``) for search
SEARCHABLE_GAMES = ("kalaha", "hus")


def searched_values(
    net: PolicyNet,
    game: str,
    game_options: dict[str, Any],
    board: np.ndarray,
    player: int,
    depth: int,
) -> tuple[np.ndarray, np.ndarray]:
    """``(actions, values)``: every legal move of the position and its ``depth``-ply minimax
    value for ``player`` (the player to move), leaves scored by the network's value head."""
    from spieltisch.train.selfplay_games import make_batched_game

    if depth < 1:
        raise ValueError(f"search depth must be at least 1, got {depth}")
    boards = np.asarray(board)[None].copy()
    players = np.array([player], dtype=np.int64)
    terminal = np.array([False])
    levels: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    for _ in range(depth):
        games = make_batched_game(game, game_options, len(boards))
        games.load(boards, players, terminal)
        parent, action = np.nonzero(games.batch.legal_mask)
        if parent.size == 0:
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
        obs, mask, mover = last_games.observe()
        with torch.no_grad():
            _, v = net(torch.from_numpy(obs[open_]), torch.from_numpy(mask[open_]))
        sign = np.where(mover[open_] == player, 1.0, -1.0)
        values[open_] = sign * v.numpy().astype(np.float64)
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
    """Plays the move with the best ``depth``-ply minimax value over ``net``'s value head;
    ties go to the move the policy head prefers. Needs the engine state."""

    def __init__(
        self,
        net: PolicyNet,
        game: str,
        game_options: dict[str, Any],
        depth: int,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed)
        if game not in SEARCHABLE_GAMES:
            raise ValueError(f"search is available for {list(SEARCHABLE_GAMES)}, not {game!r}")
        if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
            raise ValueError(f"search depth must be a positive integer, got {depth!r}")
        self.net = net.eval()
        self.game = game
        self.game_options = dict(game_options)
        self.depth = depth
        self.name = f"search{depth}"

    def act(self, observation: dict[str, np.ndarray], state: Any | None = None) -> int:
        legal = legal_actions_of(observation)
        if legal.size == 1:
            return int(legal[0])
        if state is None:
            raise ValueError(f"{self.name} needs the game state (a perfect-information game)")
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # small batches: extra threads only cost synchronisation
        try:
            actions, values = searched_values(
                self.net, self.game, self.game_options, state.board, int(state.current_player),
                self.depth,
            )  # fmt: skip
            obs = torch.as_tensor(np.asarray(observation["observation"], dtype=np.float32))[None]
            mask = torch.as_tensor(np.asarray(observation["action_mask"]))[None]
            with torch.no_grad():
                logits, _ = self.net(obs, mask)
        finally:
            torch.set_num_threads(threads)
        prior = logits[0].numpy()[actions]
        top = np.flatnonzero(values >= values.max() - 1e-9)
        return int(actions[top[np.argmax(prior[top])]])

"""Fit pubeval's cubeless probabilities to the results of its own self-play games.

    python release/fit_pubeval_cube.py [--games 10000] [--seed 0] [--bins 40] [--out FILE]

pubeval gives one score per position, not probabilities, so by itself it cannot make the cube
decisions the other agents make from theirs (``agents/backgammon/cube.py``). This script plays
pubeval against itself (cubeless money games on the single-game engine, seeds ``[seed, game]``),
keeps every position a player chose (its ``pubeval.cube_feature``, the class of the position
before the move, and the mover's final result: a single game, gammon or backgammon, won or
lost), and counts per class (race, contact) and per quantile bin of the feature the frequency of
each result: the model of :func:`spieltisch.agents.backgammon.pubeval.result_probabilities`.
The last fifth of the games is held out: the file records their log-loss and a calibration
table (predicted against observed wins and gammons by decile of the prediction); the counts
use only the other four fifths. Won positions (score ``WON``) are exact and left out. Writes
``agents/data/pubeval_cube.json`` by default.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from spieltisch.agents.backgammon import pubeval
from spieltisch.agents.backgammon.baselines import PubevalAgent, board_sides
from spieltisch.envs.backgammon import rules as k
from spieltisch.envs.backgammon.engine import BackgammonGame
from tqdm import tqdm

OUT = Path(__file__).resolve().parent.parent / "agents" / "data" / "pubeval_cube.json"
#: result class 0..5 (:data:`pubeval.RESULTS`) of the winner's win type 1..3, for the winner
_WIN_CLASS = {k.RESULT_SINGLE: 3, k.RESULT_GAMMON: 4, k.RESULT_BACKGAMMON: 5}


def self_play(games: int, seed: int, progress: bool = True) -> dict[str, np.ndarray]:
    """Every chosen position of ``games`` pubeval self-play games: ``feature``
    (:func:`pubeval.cube_feature`), ``race`` (class of the position before the move), ``result``
    (the mover's class 0..5) and ``game`` (index)."""
    engine = BackgammonGame()
    player = PubevalAgent()
    features: list[float] = []
    races: list[bool] = []
    results: list[int] = []
    game_of: list[int] = []
    for g in tqdm(range(games), desc="pubeval self-play", unit="game", disable=not progress):
        rng = np.random.default_rng([seed, g])
        state = engine.new_initial_state()
        movers = []
        while not state.is_terminal():
            if state.is_chance_node():
                state.roll_dice(rng)
                continue
            mover, after = state.turn, state.play_boards()
            play = player.play_scores(state, after)
            i = int(np.argmax(play))
            if play[i] < pubeval.WON:
                race = bool(pubeval.is_race(*board_sides(state.board, mover)))
                features.append(float(pubeval.cube_feature(*board_sides(after[i], mover), race)))
                races.append(race)
                movers.append(mover)
            state.apply_play(i)
        win_class = _WIN_CLASS[int(state.s[k.M_RESULT])]
        winner = state.winner()
        results.extend(win_class if m == winner else 5 - win_class for m in movers)
        game_of.extend([g] * len(movers))
    return {
        "feature": np.array(features),
        "race": np.array(races, dtype=bool),
        "result": np.array(results, dtype=np.int64),
        "game": np.array(game_of, dtype=np.int64),
    }


def count_bins(
    features: np.ndarray, results: np.ndarray, bins: int, prior: float = 6.0
) -> tuple[np.ndarray, np.ndarray]:
    """``(edges, frequencies)``: ``bins`` quantile bins of ``features`` (fewer where values
    repeat) and the frequency of each result 0..5 in each bin, smoothed towards the frequencies
    of all positions by ``prior`` pseudo-positions (so no result has probability 0)."""
    if features.size < bins:
        raise ValueError(f"{features.size} positions cannot fill {bins} bins")
    edges = np.unique(np.quantile(features, np.arange(1, bins) / bins))
    which = np.searchsorted(edges, features, side="right")
    counts = np.zeros((edges.size + 1, len(pubeval.RESULTS)))
    np.add.at(counts, (which, results), 1.0)
    overall = (counts.sum(axis=0) + 1.0) / (counts.sum() + len(pubeval.RESULTS))
    frequencies = (counts + prior * overall) / (counts.sum(axis=1, keepdims=True) + prior)
    return edges, frequencies


def calibration_table(
    model: pubeval.Model, x: np.ndarray, race: np.ndarray, y: np.ndarray
) -> list[dict[str, float]]:
    """Predicted against observed wins, gammons won and gammons lost by decile of the predicted
    win probability (held-out positions)."""
    probs = pubeval.cubeless_of_results(pubeval.result_probabilities(x, race, model))[:, [0, 1, 3]]
    order = np.argsort(probs[:, 0], kind="stable")
    rows = []
    for part in np.array_split(order, 10):
        rows.append(
            {
                "positions": int(part.size),
                "predicted_win": round(float(probs[part, 0].mean()), 4),
                "observed_win": round(float((y[part] >= 3).mean()), 4),
                "predicted_win_gammon": round(float(probs[part, 1].mean()), 4),
                "observed_win_gammon": round(float((y[part] >= 4).mean()), 4),
                "predicted_lose_gammon": round(float(probs[part, 2].mean()), 4),
                "observed_lose_gammon": round(float((y[part] <= 1).mean()), 4),
            }
        )
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--games", type=int, default=10_000, help="self-play games (default 10,000)"
    )
    parser.add_argument("--seed", type=int, default=0, help="games use seeds [seed, game]")
    parser.add_argument("--out", type=Path, default=OUT, help=f"the data file (default {OUT.name})")
    parser.add_argument("--bins", type=int, default=40, help="quantile bins per class (default 40)")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)
    if args.games < 5:
        parser.error(f"--games must be at least 5 (a fifth is held out), got {args.games}")
    if args.bins < 1:
        parser.error(f"--bins must be at least 1, got {args.bins}")
    from spieltisch.agents.files import check_output_path, write_text_atomic

    try:  # before the games, not after them
        check_output_path(args.out)
    except ValueError as err:
        parser.error(str(err))
    start, cpu = time.time(), time.process_time()
    data = self_play(args.games, args.seed, progress=not args.no_progress)
    held_out = data["game"] >= args.games - args.games // 5
    out: dict = {
        "model": "frequencies of the mover's results ("
        + ", ".join(pubeval.RESULTS)
        + ") per quantile bin of the feature: pubeval's contact score in contact, "
        + "pip lead / sqrt(pip total) in races (the class of the position before the move)",
        "command": "python release/"
        + Path(__file__).name
        + " "
        + " ".join(sys.argv[1:] if argv is None else argv),
        "games": args.games,
        "seed": args.seed,
    }
    fitted: pubeval.Model = {}
    for kind, is_race in (("race", True), ("contact", False)):
        train = (data["race"] == is_race) & ~held_out
        try:
            edges, frequencies = count_bins(
                data["feature"][train], data["result"][train], args.bins
            )
        except ValueError as err:
            parser.error(f"{kind}: {err} (more --games or fewer --bins)")
        fitted[kind] = (edges, frequencies)
        out[kind] = {
            "edges": edges.tolist(),
            "results": frequencies.tolist(),
            "positions": int(train.sum()),
            "result_counts": np.bincount(data["result"][train], minlength=6).tolist(),
        }
    x, race, y = data["feature"][held_out], data["race"][held_out], data["result"][held_out]
    picked = pubeval.result_probabilities(x, race, fitted)[np.arange(y.size), y]
    out["held_out"] = {
        "positions": int(y.size),
        "log_loss": round(float(-np.mean(np.log(np.maximum(picked, 1e-300)))), 4),
        "calibration": calibration_table(fitted, x, race, y),
    }
    out["wall_s"] = round(time.time() - start, 1)
    out["cpu_s"] = round(time.process_time() - cpu, 1)
    write_text_atomic(args.out, json.dumps(out, indent=2) + "\n")
    for kind in ("race", "contact"):
        print(f"{kind}: {out[kind]['positions']} positions, {len(out[kind]['edges']) + 1} bins")
    held = out["held_out"]
    print(f"held-out log-loss {held['log_loss']} over {held['positions']} positions")
    print("predicted / observed wins by decile:")
    for row in out["held_out"]["calibration"]:
        print(f"  {row['predicted_win']:.3f} / {row['observed_win']:.3f}")
    print(f"wrote {args.out} ({out['wall_s']} s)")


if __name__ == "__main__":
    main()

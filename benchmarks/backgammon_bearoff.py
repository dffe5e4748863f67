"""How far a TD value net's bear-off play is from the bear-off database's.

    python benchmarks/backgammon_bearoff.py [--agent pretrained:backgammon:algo=td_long]
        [--games 300] [--seed 5] [--quick]

Plays ``--games`` self-play games of the agent (1-ply, its own dice) and, at every decision in
a bear-off (both sides all home, :func:`spieltisch.agents.backgammon.bearoff.is_bearoff`) with
more than one play, compares the agent's play with the best play by the database's exact
equity (:func:`~spieltisch.agents.backgammon.bearoff.afterstate_outputs`). Prints and records
the share of games that reach a bear-off, the decisions where the two differ, and the equity
the agent's plays lose by the database (per decision and per game, both sides together): what
``bearoff=true`` can gain at most, by its own measure.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import add_run_options, command_line, result_path, shrink_if_quick, write_json
from spieltisch.agents.arena.provenance import machine_info
from spieltisch.agents.backgammon import bearoff
from spieltisch.agents.backgammon.td_value import equity
from spieltisch.agents.registry import check_agent_name, make_agent
from spieltisch.envs.backgammon import BackgammonGame


def measure(agent_name: str, games: int, seed: int) -> dict:
    game = BackgammonGame()
    agent = make_agent(agent_name, "backgammon", seed=seed)
    rng = np.random.default_rng(seed)
    decisions = differ = games_reaching = 0
    loss = 0.0
    for _ in range(games):
        state = game.new_initial_state()
        reached = False
        while not state.is_terminal():
            if state.is_chance_node():
                state.roll_dice(rng)
                continue
            choice = agent.choose_play(state)
            if state.num_plays() > 1 and bearoff.is_bearoff(np.asarray(state.board, np.int32)):
                reached = True
                outputs, _ = bearoff.afterstate_outputs(state.play_boards(), state.turn)
                exact = np.array([equity(y) for y in outputs])
                decisions += 1
                if exact[choice] < exact.max() - 1e-12:
                    differ += 1
                    loss += float(exact.max() - exact[choice])
            state.apply_play(choice)
        games_reaching += reached
    return {
        "agent": agent_name,
        "games": games,
        "games_reaching_a_bearoff": games_reaching,
        "bearoff_decisions": decisions,
        "decisions_differing": differ,
        "equity_lost_per_decision": loss / max(decisions, 1),
        "equity_lost_per_game_both_sides": loss / max(games, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="pretrained:backgammon:algo=td_long")
    parser.add_argument("--games", type=int, default=300)
    parser.add_argument("--seed", type=int, default=5)
    add_run_options(parser)
    args = parser.parse_args(argv)
    try:  # an unknown agent is a usage error, not a traceback (prefixed names load later)
        check_agent_name(args.agent, "backgammon", human=False)
    except ValueError as err:
        parser.error(str(err))
    shrink_if_quick(args, games=3)
    start = time.perf_counter()
    result = measure(args.agent, args.games, args.seed)
    result["seconds"] = time.perf_counter() - start
    print(
        f"{args.agent}: {result['games_reaching_a_bearoff']} of {args.games} games reach a "
        f"bear-off; it plays differently from the database in {result['decisions_differing']} "
        f"of {result['bearoff_decisions']} decisions, losing "
        f"{result['equity_lost_per_decision']:.4f} points a decision, "
        f"{result['equity_lost_per_game_both_sides']:.4f} a game (both sides)"
    )
    result["command"] = command_line(__file__, argv)
    result["machine"] = machine_info()
    write_json(result_path(args, "backgammon_bearoff.json"), result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

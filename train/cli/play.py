"""``spieltisch play``: watch agents play a game, rendered as text."""

from __future__ import annotations

import argparse
import secrets
import sys

from spieltisch.agents.arena.match import MoveTimer, play_game
from spieltisch.agents.human import HumanQuit, move_label
from spieltisch.agents.registry import human_view_options, make_agent
from spieltisch.envs import GAMES, make
from spieltisch.envs._common.options import add_option_argument, parse_options
from spieltisch.train.cli.eval import (
    add_first_move_time_limit_argument,
    non_negative_int,
    positive_int,
    time_limit_argument,
)

# The default move time limit of `spieltisch play` (seconds): generous, since a person watches;
# it is there so that a hung agent cannot freeze the terminal (docs/arena.md, "Time limits").
DEFAULT_PLAY_TIME_LIMIT = 300.0


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "play",
        help="play a game between agents and show it",
        description=(
            "Play a game between agents and print the board after every move. "
            "Example: spieltisch play kalaha --agents random random; play yourself with "
            "'human': spieltisch play kalaha --agents human alphabeta:depth=6 (type a move's "
            "label, what the board calls it: the pit number in Kalaha, row and column in Hus, "
            "the points in backgammon, the slot in HiLo; docs/arena.md)"
        ),
    )
    p.add_argument("game", choices=sorted(GAMES), help="the game")
    p.add_argument(
        "--agents",
        nargs="+",
        default=["random", "random"],
        metavar="AGENT",
        help="one agent name per seat, in seat order (default: random random): NAME or "
        "NAME:KEY=VALUE,... (alphabeta:depth=6), human, pretrained:GAME[:algo=ALGO] (a shipped "
        "agent; algo= one shipped beside the default), checkpoint:PATH; an unknown name lists "
        "the game's agents",
    )
    p.add_argument(
        "--seed",
        type=non_negative_int,
        default=None,
        help="seed of the game and the agents (default 0; with a person at the table: a random "
        "one per game, printed after it, since the seed gives away the deal, the dice to come "
        "and the agents' random choices)",
    )
    p.add_argument("--games", type=positive_int, default=1, help="number of games (default 1)")
    p.add_argument(
        "--move-time-limit",
        type=time_limit_argument,
        default=DEFAULT_PLAY_TIME_LIMIT,
        metavar="SECONDS",
        help="seconds an agent may take for one move (default "
        f"{DEFAULT_PLAY_TIME_LIMIT:g}; 0: no limit; a person, 'human', has none); an agent over "
        "it, or one that raises or plays an illegal action, loses the game by forfeit",
    )
    add_first_move_time_limit_argument(p)
    add_option_argument(p)
    p.add_argument(
        "--quiet",
        action="store_true",
        help="print only the results, not the boards (not with a person, who needs them)",
    )
    return p


def run(args: argparse.Namespace) -> int:
    try:
        options = parse_options(args.option)
        if "render_mode" in options:  # (make() got it twice: a TypeError naming make)
            raise ValueError("-o render_mode: play draws the boards itself (--quiet: none)")
        humans = [i for i, a in enumerate(args.agents) if a == "human"]
        if humans and args.quiet:
            raise ValueError("--quiet prints no boards, and a person ('human') needs them")
        # one person at the table sees what their seat knows (hidden information), unless the
        # options say otherwise
        view = human_view_options(args.game, humans[0]) if len(humans) == 1 else {}
        env_options = {**view, **options}
        env = make(args.game, render_mode=None if args.quiet else "ansi", **env_options)
        # a person must not know the seed while playing: it gives HiLo's deal, backgammon's
        # dice to come and the agents' random choices (the web server hides it too)
        secret_seed = args.seed is None and bool(humans)
        base_seed = secrets.randbelow(2**62) if secret_seed else args.seed or 0
    except (ValueError, TypeError) as err:
        print(f"spieltisch play: {err}", file=sys.stderr)
        return 2
    if len(args.agents) != len(env.possible_agents):
        print(
            f"spieltisch play: {args.game} needs {len(env.possible_agents)} agents "
            f"(--agents), got {len(args.agents)}",
            file=sys.stderr,
        )
        return 2
    try:
        agents = {
            name: make_agent(agent, args.game, seed=base_seed + i, game_options=options)
            for i, (name, agent) in enumerate(zip(env.possible_agents, args.agents, strict=True))
        }
    except ValueError as err:
        print(f"spieltisch play: {err}", file=sys.stderr)
        return 2

    people = [env.possible_agents[i] for i in humans]  # no time limit for a person
    timer = MoveTimer(args.move_time_limit, args.first_move_time_limit, exempt=people)

    def show(agent_name: str, action: int) -> None:
        seat = env.unwrapped.seat_of(agent_name)  # (with random_start not the agent's index)
        move = move_label(args.game, action, seat, env_options)
        print(f"\n{agent_name} ({agents[agent_name].name}) plays {move} (a{action})")
        print(env.render())

    for game_index in range(args.games):
        # a secret seed is drawn for every game: the seed printed after a game must not give
        # away the next game's deal (as base_seed + game_index would)
        seed = secrets.randbelow(2**62) if secret_seed else base_seed + game_index
        if not args.quiet:
            env.reset(seed=seed)
            shown = "" if secret_seed else f", seed {seed}"
            print(f"=== game {game_index + 1}{shown}\n{env.render()}")
        try:
            record = play_game(
                env, agents, seed=seed, on_move=None if args.quiet else show, timer=timer,
                forfeit=True,
            )  # fmt: skip
        except HumanQuit:
            print("game abandoned" + (f" (seed {seed})" if secret_seed else ""))
            return 0
        result = ", ".join(
            f"{a} ({agents[a].name}): {r:+g}" for a, r in sorted(record.rewards.items())
        )
        end = "truncated" if record.truncated else "over"
        if record.forfeit is not None:
            end = f"lost by forfeit ({record.forfeit.message})"
            if record.forfeit.reason == "time_limit":  # its move goes on in an abandoned
                name = record.forfeit.agent  # thread: the next game gets a fresh agent
                i = env.possible_agents.index(name)
                agents[name] = make_agent(args.agents[i], args.game, base_seed + i, options)
        seed_note = f" (seed {seed})" if secret_seed else ""
        print(f"game {game_index + 1} {end} after {record.num_moves} moves: {result}{seed_note}")
    return 0

"""The ``spieltisch`` command line.

Each subcommand lives in its own module with two functions, ``add_parser(subparsers)`` and
``run(args) -> int``; :data:`COMMAND_MODULES` lists them in the order ``--help`` shows them.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from importlib.metadata import PackageNotFoundError, version

COMMAND_MODULES = (
    "spieltisch.train.cli.play",
    "spieltisch.train.cli.solve",
    "spieltisch.train.cli.train",
    "spieltisch.train.cli.eval",
    "spieltisch.train.cli.export",
    "spieltisch.train.cli.rollout",
    "spieltisch.train.cli.serve",
)


def _version() -> str:
    try:
        return version("spieltisch")
    except PackageNotFoundError:  # running from a source tree without installing
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="spieltisch",
        description=(
            "Reinforcement learning on real table games (Kalaha, Hus, Backgammon, HiLo): "
            "PettingZoo environments, self-play training, evaluation."
        ),
        epilog=(
            "Run 'spieltisch COMMAND --help' for the options of a command. Documentation: the "
            "README and docs/api.md (command line, agents, checkpoints) in the repository."
        ),
    )
    parser.add_argument("--version", action="version", version=f"spieltisch {_version()}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        module = importlib.import_module(name)
        sub = module.add_parser(subparsers)
        sub.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return int(args._run(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130

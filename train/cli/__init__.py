"""The ``spieltisch`` command line.

Each subcommand lives in its own module with two functions, ``add_parser(subparsers)`` and
``run(args) -> int``; :data:`COMMAND_MODULES` lists them in the order ``--help`` shows them.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from importlib.metadata import PackageNotFoundError, version

from spieltisch.envs._common import numba_cache
from spieltisch.envs._common.options import closest_name

COMMAND_MODULES = (
    "spieltisch.train.cli.play",
    "spieltisch.train.cli.solve",
    "spieltisch.train.cli.train",
    "spieltisch.train.cli.curves",
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
        sub.set_defaults(_run=module.run, _parser=sub)
    return parser


#: options of some commands that another command spells otherwise (play/eval ``-o KEY=VALUE``
#: is train's ``--set KEY=VALUE``)
OTHER_COMMANDS_SPELLING = {"-o": "--set", "--option": "--set"}


def _refuse_unknown(parser: argparse.ArgumentParser, unknown: list[str]) -> None:
    """Exit with the command's own usage (not the top level's) naming the arguments it does
    not take, and the option meant where one is close (``--time-limit``: ``--move-time-limit``)."""
    options = [o for action in parser._actions for o in action.option_strings]
    hints = []
    for arg in unknown:
        name = arg.split("=", 1)[0]
        if name.startswith("-"):
            # the other commands' spelling of this command's option (train's -o is --set; a
            # substring match offered --overwrite, which deletes a run), else a close spelling,
            # else a long option that contains a long name (--time-limit: --move-time-limit)
            close = OTHER_COMMANDS_SPELLING.get(name)
            close = close if close in options else closest_name(name, options)
            close = close or next((o for o in options if name.startswith("--") and name in o), None)
            hints += [f"{name}: did you mean {close}?"] if close else []
    parser.error(
        f"unrecognized arguments: {' '.join(unknown)}"
        + (f" ({'; '.join(hints)})" if hints else "")
        + f"; see '{parser.prog} --help'"
    )


def _say_compiling(line: str) -> None:
    from tqdm import tqdm

    tqdm.write(f"spieltisch: {line}", file=sys.stderr)  # (above a progress bar, if one runs)


def main(argv: list[str] | None = None) -> int:
    try:  # (Ctrl-C while the commands' modules load gave a traceback)
        if sys.stderr.isatty():  # (a person waiting; logs and pipes need no notice)
            numba_cache.announce_compiling(_say_compiling)
        parser = build_parser()
        args, unknown = parser.parse_known_args(argv)
        if unknown:
            _refuse_unknown(getattr(args, "_parser", parser), unknown)
        if args.command is None:
            parser.print_help()
            return 2
        return int(args._run(args) or 0)
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)  # (off a progress bar's line)
        return 130
    except BrokenPipeError:  # the reader left (`spieltisch play ... | head`): no traceback
        # and no second error when Python flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # (as a shell reports a command ended by SIGPIPE)

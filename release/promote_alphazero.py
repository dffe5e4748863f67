"""Promote the AlphaZero agent shipped beside the default (``pretrained:<game>:algo=alphazero``)
to ``pretrained:<game>`` once it beats the default head to head.

    python release/promote_alphazero.py hilo --arena A.json [--arena B.json ...] \\
        [--search-value-weight 2] [--option num_players=2]

The shipped default of another algorithm moves to ``<name>_<algo>`` (reachable as
``pretrained:<game>:algo=<algo>``, its rows relabelled; :func:`ship_alphazero.move_aside`) and
``<name>_alphazero`` becomes ``<name>`` with its weights unchanged. Its evaluation rows, and the
pairs of the arena reports (``spieltisch eval ... --json FILE``) in which it played as
``pretrained:<game>:algo=alphazero[,PARAMS]``, are renamed to what reaches the same agents after
the move: ``pretrained:<game>[:PARAMS]`` for it, ``pretrained:<game>:algo=<algo>[,PARAMS]`` for
the agent moved aside. ``--search-value-weight W`` records the HiLo sampler search's leaf
weight chosen for this network (``search_value_weight``; ``agents/hilo/search.py``), so that
``pretrained:hilo:search=N`` uses it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from record_eval import REPORT_KEYS, read_json
from ship_alphazero import (
    ROOT,
    arena_rows,
    move_aside,
    own_meta,
    rename_row,
    renamer,
    shipped_algorithm,
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("game")
    parser.add_argument("--arena", type=Path, action="append", default=[])
    parser.add_argument("--search-value-weight", type=float, default=None)
    parser.add_argument("--option", action="append", default=[], help="KEY=VALUE game option")
    parser.add_argument("--pretrained-dir", type=Path, default=ROOT / "agents" / "pretrained")
    args = parser.parse_args(argv)

    from spieltisch.agents.neural.agents import pretrained_name
    from spieltisch.agents.neural.checkpoint import (
        CheckpointError,
        load_checkpoint,
        save_checkpoint,
    )
    from spieltisch.envs import check_options
    from spieltisch.envs._common.options import parse_options

    try:
        options = parse_options(args.option)
        check_options(args.game, options)  # (an unknown game too)
    except ValueError as err:
        parser.error(str(err))
    name = pretrained_name(args.game, options)
    beside = args.pretrained_dir / f"{name}_alphazero"
    if not beside.with_suffix(".safetensors").exists():
        parser.error(f"no AlphaZero agent shipped beside {name}: {beside}.safetensors")
    old_algo = shipped_algorithm(args.pretrained_dir, name)
    if old_algo == "alphazero":
        parser.error(f"{name} is an AlphaZero agent already")
    rename = renamer(args.game, old_algo)
    try:
        ckpt = load_checkpoint(beside, args.game, root=args.pretrained_dir)
    except CheckpointError as err:
        parser.error(str(err))
    meta = own_meta(ckpt.meta)
    evaluation = {key: rename_row(row, rename) for key, row in meta["evaluation"].items()}
    label = f"pretrained:{args.game}"

    def promoted_params(agent: str) -> str | None:
        """The parameters of the promoted agent as named after the move, None for others."""
        if "algo=alphazero" not in agent:
            return None
        return rename(agent).removeprefix(label).removeprefix(":")

    for path in args.arena:
        report = read_json(path, "a report of spieltisch eval --json", REPORT_KEYS)
        evaluation.update(arena_rows(report, label, rename, params_of=promoted_params))
    meta["evaluation"] = evaluation
    reproduce = dict(meta.get("reproduce") or {})
    # rows of a strength benchmark have no command of their own: its command stays, renamed
    commands = [row.get("command") for row in evaluation.values()]
    if None in commands and reproduce.get("evaluate"):
        commands.insert(0, rename(reproduce["evaluate"]))
    reproduce["evaluate"] = "; ".join(dict.fromkeys(c for c in commands if c))
    weight = args.search_value_weight
    reproduce["promote"] = "python release/promote_alphazero.py " + " ".join(
        [args.game, *(f"--arena {p}" for p in args.arena)]
        + ([f"--search-value-weight {weight:g}"] if weight is not None else [])
    )
    meta["reproduce"] = reproduce
    if args.search_value_weight is not None:
        meta["search_value_weight"] = args.search_value_weight
    move_aside(args.pretrained_dir, name, args.game)
    save_checkpoint(args.pretrained_dir / name, meta, ckpt.tensors)
    for suffix in (".json", ".safetensors"):
        beside.with_suffix(suffix).unlink()
    print(f"promoted {beside.name} to {name} (the {old_algo} agent: {name}_{old_algo})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

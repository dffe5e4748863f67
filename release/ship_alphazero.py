"""Record (and optionally ship) a Gumbel AlphaZero run's policy with its measured strength.

    python release/ship_alphazero.py RUN_DIR \\
        --strength benchmarks/results/alphazero_strength_kalaha_6x4.json \\
        --command "spieltisch train configs/kalaha_6x4_alphazero.yaml" \\
        [--train-seconds-wall W --train-seconds-cpu C] [--policy best] [--ship]

Reads the run's ``best`` (or ``final``) policy and the results of
``benchmarks/alphazero_strength.py`` for it (``--strength``; or, for any game, arena reports of
``spieltisch eval ... --json FILE`` in which the policy is
``checkpoint:<run>/<policy>[:PARAMS]``, ``--arena FILE`` repeatable), and writes
``benchmarks/results/<name>_<ALGO>_train.json`` (``--results-dir``; ALGO: ``--algo``, default
``alphazero``): the reproducing command,
training wall and CPU seconds (from the run's ledger ``RUN_DIR/resources.json``, recorded whole,
unless ``--train-seconds-*`` are given, e.g. for a run that predates it), the machine, the arena
rows (raw network and with search) and the solver accuracy. ``--ship`` makes the policy
``pretrained:<game>`` in ``agents/pretrained/``: a shipped agent of another algorithm under that
name moves to ``<name>_<algo>`` (reachable as ``pretrained:<game>:algo=<algo>``, its recorded
rows relabelled so), and the AlphaZero policy takes the name with its evaluation and reproducing
commands in the metadata. ``--ship --beside`` leaves the shipped agent as it is and ships the
policy as ``<name>_<ALGO>`` instead (``pretrained:<game>:algo=<ALGO>``, ``--algo``, default
``alphazero``): for a policy that does not beat the shipped one, or a variant (``--algo
alphazero_moves``) beside an AlphaZero default whose recorded rows keep their meaning.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from record_eval import REPORT_KEYS, agent_params, read_json  # a script beside this one

ROOT = Path(__file__).resolve().parents[1]


def pretrained_params(name: str, game: str) -> list[str] | None:
    """The parameters of a ``pretrained:<game>[:PARAMS]`` agent name (``[]``: none; split at
    commas or colons as the agents' parser does); None for any other name
    (``pretrained:hilo_4p``, a template ``pretrained:hilo[:...]``)."""
    prefix = f"pretrained:{game}"
    tail = name[len(prefix) :]
    if not name.startswith(prefix) or (tail and not tail.startswith(":")):
        return None
    return agent_params(name)


def names_shipped_default(agent: str, game: str) -> bool:
    """Whether ``agent`` is the shipped default ``pretrained:<game>`` (any parameters but
    ``algo=``)."""
    params = pretrained_params(agent, game)
    return params is not None and not any(p.startswith("algo=") for p in params)


def without_the_replaced_agent(
    rows: dict[str, dict[str, Any]], game: str
) -> dict[str, dict[str, Any]]:
    """``rows`` (opponents named as after shipping) without those against the shipped default
    ``pretrained:<game>``: once the policy takes that name they would read as the new agent
    against itself (they stay in the strength file or arena report)."""
    kept = {}
    for key, row in rows.items():
        if names_shipped_default(row["opponent"], game):
            print(f"left out: {key} (against the agent replaced)")
        else:
            kept[key] = row
    return kept


def with_params(label: str, params: str) -> str:
    """``label`` with the agent parameters ``params`` appended (after a comma when ``label``
    already has one, ``pretrained:hus:algo=x,sims=32``; else after a colon); ``""``: none."""
    if not params:
        return label
    return label + ("," if ":" in label.removeprefix("pretrained:") else ":") + params


def evaluation_rows(
    strength: dict[str, Any],
    game: str,
    rename_opponent: Callable[[str], str] = str,
    label: str | None = None,
) -> dict[str, dict[str, Any]]:
    """The strength benchmark's matches as shipped evaluation rows (``vs_<opponent>`` for the
    raw network, ``sims<N>_vs_<opponent>`` with search), in the arena's field names, the agent
    named ``label`` (default ``pretrained:<game>``), opponents named by ``rename_opponent``
    (the names after the shipped agent they name is moved aside)."""
    from spieltisch.agents.arena.stats import wilson

    label = label or f"pretrained:{game}"
    rows = {}
    for match in strength["matches"]:
        sims, games = match["sims"], match["games"]
        opponent = rename_opponent(match["opponent"])
        win_low, win_high = wilson(match["wins"], games)
        agent = with_params(label, f"sims={sims}" if sims else "")
        key = (f"sims{sims}_" if sims else "") + f"vs_{opponent}"
        rows[key] = {
            "agent": agent,
            "opponent": opponent,
            "games": games,
            "wins": match["wins"],
            "draws": match["draws"],
            "losses": match["losses"],
            "win_rate": match["wins"] / games,
            "win_low": win_low,
            "win_high": win_high,
            "score": match["score"],
            "score_low": match["score_low"],
            "score_high": match["score_high"],
            # +1 / 0 / -1 per game: 2 score - 1, its interval likewise
            "mean_reward": 2 * match["score"] - 1,
            "reward_low": 2 * match["score_low"] - 1,
            "reward_high": 2 * match["score_high"] - 1,
            "seconds": round(match["seconds"], 1),
        }
    return rows


def checkpoint_params(agent: str) -> str | None:
    """The parameters of a ``checkpoint:PATH[:PARAMS]`` agent (``""``: none); None for any
    other agent."""
    if not agent.startswith("checkpoint:"):
        return None
    _, colon, tail = agent.removeprefix("checkpoint:").rpartition(":")
    return tail if colon and "=" in tail else ""


def arena_rows(
    report: dict[str, Any],
    label: str,
    rename_opponent: Callable[[str], str] = str,
    params_of: Callable[[str], str | None] = checkpoint_params,
) -> dict[str, dict[str, Any]]:
    """The pairs of an arena report (``spieltisch eval --json``) of the policy shipped, as
    shipped evaluation rows: the pairs whose agent ``params_of`` gives parameters for (by
    default a ``checkpoint:`` policy), the agent relabelled ``label`` (e.g.
    ``pretrained:hilo:algo=alphazero``) with those parameters, keyed
    ``[<params>_]vs_<opponent>`` (``sims16_dets8_vs_heuristic``), with the reproducing command
    and the machine. Opponents are named by ``rename_opponent`` (the names after the shipped
    agent they name is moved aside)."""
    rows = {}
    for pair in report["pairs"] or table_pairs(report):
        params = params_of(pair["agent"])
        if params is None:
            continue
        agent = with_params(label, params)
        key = (params.replace("=", "").replace(",", "_") + "_" if params else "") + "vs_"
        pair = {**pair, "opponent": rename_opponent(pair["opponent"])}
        if pair.get("opponents"):
            pair["opponents"] = [rename_opponent(o) for o in pair["opponents"]]
        options = " ".join(f"-o {k}={v}" for k, v in (report.get("options") or {}).items())
        others = " ".join(pair.get("opponents") or [pair["opponent"]])
        mode = " --mode table" if pair.get("opponents") else ""
        command = (
            f"spieltisch eval {report['game']} {options}{mode} --agents {agent} {others} "
            f"--seeds {report['seeds']} --seed {report['seed']}"
        ).replace("  ", " ")
        opponent_key = pair["opponent"].replace(":", "_").replace(",", "_").replace("=", "")
        rows[key + opponent_key] = {
            **{k: v for k, v in pair.items() if k != "extra"},
            "agent": agent,
            "command": command,
            "machine": {k: report["machine"].get(k) for k in ("cpu_count", "load_average")},
        }
    return rows


def own_meta(meta: dict[str, Any]) -> dict[str, Any]:
    """A checkpoint's metadata without what saving it writes anew (format, weights hash)."""
    written = ("format", "format_version", "weights_sha256")
    return {k: v for k, v in meta.items() if k not in written}


def table_pairs(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of a table report (``--mode table``: HiLo with 3-4 players) as pairs: each agent
    with the others at its table as ``opponents`` (``opponent``: the first of them)."""
    pairs = []
    for row in report.get("table") or []:
        others = list(report["agents"])
        others.remove(row["agent"])
        pairs.append({**row, "opponent": others[0], "opponents": others})
    return pairs


def shipped_algorithm(pretrained: Path, name: str) -> str | None:
    """The training algorithm of the shipped ``name`` (None if there is none)."""
    sidecar = pretrained / f"{name}.json"
    return json.loads(sidecar.read_text()).get("algorithm") if sidecar.exists() else None


def renamer(game: str, old_algo: str | None) -> Callable[[str], str]:
    """A function renaming agent names (and commands naming them) to the names after the move."""
    prefix = f"pretrained:{game}"

    def one(name: str) -> str:
        params = pretrained_params(name, game)
        if params is None:
            return name
        if "algo=alphazero" in params:
            rest = [p for p in params if p != "algo=alphazero"]
            return prefix + (":" + ",".join(rest) if rest else "")
        if any(p.startswith("algo=") for p in params) or old_algo is None:
            return name
        return f"{prefix}:" + ",".join([f"algo={old_algo}", *params])

    def rename(text: str) -> str:
        return " ".join(one(word) for word in text.split(" "))

    return rename


def rename_row(row: dict[str, Any], rename: Callable[[str], str]) -> dict[str, Any]:
    """An evaluation row with its agent, opponent(s) and command renamed by ``rename``."""
    out = dict(row)
    for key in ("agent", "opponent", "command"):
        if isinstance(out.get(key), str):
            out[key] = rename(out[key])
    if isinstance(out.get("opponents"), list):
        out["opponents"] = [rename(o) for o in out["opponents"]]
    return out


def move_aside(pretrained: Path, name: str, game: str) -> None:
    """Rename the shipped ``name`` of another algorithm to ``name_<algo>``, relabelling its
    rows (agents, opponents and commands) ``pretrained:<game>`` ->
    ``pretrained:<game>:algo=<algo>``."""
    from spieltisch.agents.neural.checkpoint import load_checkpoint, save_checkpoint

    algo = shipped_algorithm(pretrained, name)
    if algo in (None, "alphazero"):
        return
    old = load_checkpoint(pretrained / name, game, root=pretrained)
    meta = own_meta(old.meta)
    rename = renamer(game, algo)
    evaluation = meta.get("evaluation") or {}
    meta["evaluation"] = {
        key: rename_row(row, rename) if isinstance(row, dict) else row
        for key, row in evaluation.items()
    }
    save_checkpoint(pretrained / f"{name}_{algo}", meta, old.tensors)
    for suffix in (".json", ".safetensors"):
        (pretrained / f"{name}{suffix}").unlink()
    print(f"moved {name} ({algo}) to {name}_{algo}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", type=Path)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--strength", type=Path, help="alphazero_strength JSON")
    source.add_argument("--arena", type=Path, action="append", help="spieltisch eval --json")
    parser.add_argument("--command", required=True, help="the command that trained the run")
    parser.add_argument("--train-seconds-wall", type=float, help="default: the run's ledger")
    parser.add_argument("--train-seconds-cpu", type=float, help="default: the run's ledger")
    parser.add_argument("--load-note", default="", help="the machine's load while training")
    parser.add_argument("--policy", choices=("best", "final"), default="best")
    parser.add_argument("--ship", action="store_true")
    parser.add_argument(
        "--beside", action="store_true", help="ship as <name>_<ALGO>, keep the shipped one"
    )
    parser.add_argument(
        "--algo", default="alphazero",
        help="with --beside: ship as <name>_<ALGO>, reached as pretrained:<game>:algo=<ALGO> "
        "(default alphazero; e.g. alphazero_moves for a variant beside an AlphaZero default)",
    )  # fmt: skip
    parser.add_argument(
        "--search-value-weight", type=float, default=None,
        help="HiLo: the sampler search's leaf weight chosen for this network (metadata)",
    )  # fmt: skip
    parser.add_argument("--results-dir", type=Path, default=ROOT / "benchmarks" / "results")
    parser.add_argument("--pretrained-dir", type=Path, default=ROOT / "agents" / "pretrained")
    args = parser.parse_args(argv)
    if not args.algo.replace("_", "").isalnum() or args.algo != args.algo.lower():
        parser.error(f"--algo takes lower-case letters, digits and _, got {args.algo!r}")
    if args.algo != "alphazero" and not args.beside:
        parser.error("--algo names the agent shipped --beside the default")

    from spieltisch.agents.arena import machine_info
    from spieltisch.agents.files import write_text_atomic
    from spieltisch.agents.neural.agents import pretrained_name
    from spieltisch.agents.neural.checkpoint import (
        CheckpointError,
        load_checkpoint,
        save_checkpoint,
    )
    from spieltisch.train.run_files import run_resources

    try:
        ckpt = load_checkpoint(args.run_dir / args.policy)
    except CheckpointError as err:
        parser.error(str(err))
    resources = run_resources(args.run_dir)
    for key in ("wall", "cpu"):
        if getattr(args, f"train_seconds_{key}") is None:
            if resources is None:
                parser.error(f"{args.run_dir} has no resources.json: give --train-seconds-{key}")
            setattr(args, f"train_seconds_{key}", resources["total"][f"{key}_seconds"])
    game, options = ckpt.meta["game"], ckpt.meta["game_options"]
    if ckpt.meta.get("algorithm") != "alphazero":
        parser.error(f"{args.run_dir / args.policy} was not trained by algorithm alphazero")
    name = pretrained_name(game, options)
    label = f"pretrained:{game}" + (f":algo={args.algo}" if args.beside else "")
    old_algo = shipped_algorithm(args.pretrained_dir, name)
    moved = not args.beside and args.ship and old_algo not in (None, "alphazero")
    rename = renamer(game, old_algo) if moved else str  # opponents named as after the move
    if args.strength is not None:
        strength = read_json(
            args.strength, "a result of alphazero_strength", ("matches", "command")
        )
        evaluation = evaluation_rows(strength, game, rename, label)
    else:
        reports = [
            read_json(p, "a report of spieltisch eval --json", REPORT_KEYS) for p in args.arena
        ]
        evaluation = {k: v for r in reports for k, v in arena_rows(r, label, rename).items()}
        strength = {
            "command": "; ".join(row["command"] for row in evaluation.values()),
            "accuracy": [],
        }
    if args.ship and not args.beside:
        evaluation = without_the_replaced_agent(evaluation, game)
    result = {
        "run_dir": str(args.run_dir),
        "policy": args.policy,
        "command": args.command,
        "train_seconds_wall": args.train_seconds_wall,
        "train_seconds_cpu": args.train_seconds_cpu,
        "load_note": args.load_note,
        "resources": resources,
        "cpu_count": os.cpu_count(),
        "global_step": ckpt.meta["global_step"],
        "training_metrics": ckpt.meta["metrics"],
        "evaluation": evaluation,
        "accuracy": strength.get("accuracy", []),
        "strength_command": strength["command"],
        "machine": machine_info(),
    }
    out = args.results_dir / f"{name}_{args.algo}_train.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out, json.dumps(result, indent=2, default=str) + "\n")
    print(f"wrote {out}")
    if args.ship:
        if args.beside:
            name = f"{name}_{args.algo}"
        else:
            move_aside(args.pretrained_dir, name, game)
        meta = own_meta(ckpt.meta)
        meta["evaluation"] = evaluation
        meta["accuracy"] = result["accuracy"]
        if args.search_value_weight is not None:
            meta["search_value_weight"] = args.search_value_weight
        meta["reproduce"] = {
            "train": args.command,
            "policy": args.policy,
            "train_seconds_wall": args.train_seconds_wall,
            "train_seconds_cpu": args.train_seconds_cpu,
            "evaluate": strength["command"],
            "benchmark": "python release/ship_alphazero.py RUN_DIR "
            + (f"--strength {args.strength}" if args.strength else "--arena ..."),
        }
        save_checkpoint(args.pretrained_dir / name, meta, ckpt.tensors)
        print(f"shipped {args.pretrained_dir / name}.safetensors")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

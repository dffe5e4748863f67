"""Do the agent's cube decisions agree with GNU Backgammon's under the same formula?

Usage::

    python benchmarks/backgammon_cube_agreement.py [--agent pretrained:backgammon]
        [--positions 1000] [--pool 40000] [--seed 0]

Positions: afterstates of self-play games of ``pretrained:backgammon`` (1-ply, both seats; every
afterstate kept with probability 0.1), each the position of the other seat about to roll, where
it may double. In each, both players' cubeless probabilities of the player on roll before its
roll (the agent's :meth:`position_probabilities`, gnubg's 0-ply evaluation) go through the same
Janowski formulas (``agents/backgammon/cube.py``, cube life 0.68, cube centred): would the player
on roll double, would its opponent take? Two sets of ``--positions`` positions are judged:

* **all**: drawn at random from the pool (most are far from any cube decision);
* **window**: only positions where gnubg gives the player on roll 60-90% to win (where doubles
  are offered and take/drop is close), drawn from a pool of ``--pool`` afterstates.

Writes ``benchmarks/results/backgammon_cube_agreement.json`` and ``.md``: the share of
positions where the two decide alike (double / no double, take / drop), with 95% Wilson
intervals, and the mean absolute difference of the two win probabilities.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from _common import add_run_options, result_path, shrink_if_quick, write_json, write_text
from spieltisch.agents.arena import machine_info
from spieltisch.agents.arena.stats import wilson
from spieltisch.agents.backgammon import cube as cb
from spieltisch.agents.backgammon.rollout import self_play_afterstates
from spieltisch.agents.registry import make_agent

WINDOW = (0.60, 0.90)


def decisions(probs: np.ndarray) -> tuple[bool, bool]:
    """(the player on roll doubles from the centre, its opponent takes) by Janowski."""
    return cb.should_double(probs, cb.CENTRED), cb.should_take(cb.flip(probs))


def judge(states: list, agent, gnubg) -> dict:
    rows = []
    for state in states:
        ours = np.asarray(agent.position_probabilities(state), dtype=float)
        theirs = np.asarray(gnubg.position_probabilities(state), dtype=float)
        rows.append((*decisions(ours), *decisions(theirs), ours[0], theirs[0]))
    a = np.array(rows, dtype=float)
    n = len(a)
    out = {"positions": n}
    for name, i in (("double", 0), ("take", 1)):
        same = int((a[:, i] == a[:, i + 2]).sum())
        low, high = wilson(same, n)
        out[f"{name}_agreement"] = same / n
        out[f"{name}_low"], out[f"{name}_high"] = low, high
        out[f"{name}_rate_agent"] = float(a[:, i].mean())
        out[f"{name}_rate_gnubg"] = float(a[:, i + 2].mean())
    out["mean_abs_win_difference"] = float(np.abs(a[:, 4] - a[:, 5]).mean())
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--agent", default="pretrained:backgammon")
    ap.add_argument("--positions", type=int, default=1000)
    ap.add_argument("--pool", type=int, default=40_000)
    ap.add_argument("--seed", type=int, default=0)
    add_run_options(ap)
    args = ap.parse_args()
    shrink_if_quick(args, positions=20, pool=400)
    started = time.perf_counter()
    agent = make_agent(args.agent, "backgammon", seed=0)
    gnubg = make_agent("gnubg", "backgammon", seed=0)
    net = make_agent("pretrained:backgammon", "backgammon", seed=0)
    pool = self_play_afterstates(net.params, args.pool, 0.1, np.random.default_rng(args.seed))
    rng = np.random.default_rng(args.seed + 1)
    first = [pool[i] for i in sorted(rng.choice(len(pool), args.positions, replace=False))]
    window = []
    for state in pool:
        if len(window) == args.positions:
            break
        win = gnubg.position_probabilities(state)[0]
        if WINDOW[0] <= win <= WINDOW[1]:
            window.append(state)
    results = {"all": judge(first, agent, gnubg), "window": judge(window, agent, gnubg)}
    seconds = time.perf_counter() - started
    cmd = (
        f"python benchmarks/backgammon_cube_agreement.py --agent {args.agent} --positions "
        f"{args.positions} --pool {args.pool} --seed {args.seed}"
    )
    lines = [
        "# Cube decisions: the agent against GNU Backgammon through the same formula\n",
        f"Command: `{cmd}` ({seconds:.0f} s). Both sides' cubeless probabilities of the player on "
        "roll (the agent's; gnubg 0-ply) through Janowski's formulas, cube life 0.68, cube "
        f"centred. *window*: positions where gnubg gives the player on roll "
        f"{WINDOW[0]:.0%}-{WINDOW[1]:.0%} to win (from a pool of {len(pool):,}).\n",
        "| positions | count | double / no double agree [95%] | take / drop agree [95%] | "
        "doubles (agent / gnubg) | takes (agent / gnubg) | mean abs. win difference |",
        "|---|---:|---|---|---|---|---:|",
    ]
    for name, r in results.items():
        lines.append(
            f"| {name} | {r['positions']:,} | {r['double_agreement']:.1%} "
            f"[{r['double_low']:.1%}, {r['double_high']:.1%}] | {r['take_agreement']:.1%} "
            f"[{r['take_low']:.1%}, {r['take_high']:.1%}] | {r['double_rate_agent']:.1%} / "
            f"{r['double_rate_gnubg']:.1%} | {r['take_rate_agent']:.1%} / "
            f"{r['take_rate_gnubg']:.1%} | {r['mean_abs_win_difference']:.3f} |"
        )
    print("\n".join(lines))
    write_text(result_path(args, "backgammon_cube_agreement.md"), "\n".join(lines) + "\n")
    write_json(
        result_path(args, "backgammon_cube_agreement.json"),
        {"command": cmd, "agent": args.agent, "window": WINDOW, "pool": len(pool),
         "seconds": seconds, "machine": machine_info(), "results": results},
    )  # fmt: skip


if __name__ == "__main__":
    main()

"""Derive pubeval's weights from GNU Backgammon's implementation, as data for the package.

    python release/derive_pubeval_weights.py [--out FILE]   # default agents/data/pubeval.json

pubeval is linear in its 122 inputs (``spieltisch.agents.backgammon.pubeval.inputs``), so its
two weight vectors follow exactly from ``gnubg_nn.pub_eval_score`` on enough random positions by
least squares (race and contact positions separately); the fit must reproduce every score to float32
precision, or the script fails. Inputs that never occur in a class of positions cannot matter
there and get weight 0 (the minimum-norm solution).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import gnubg_nn
import numpy as np
from spieltisch.agents.backgammon import pubeval
from spieltisch.agents.files import write_text_atomic
from spieltisch.envs.backgammon import gnubg_adapter as ga

OUT = Path(__file__).resolve().parent.parent / "agents" / "data" / "pubeval.json"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.out.is_dir():  # checked before the fit
        parser.error(f"{args.out} is a directory; give the path of the file to write")
    boards, _ = ga.random_positions(20_000, 2024)
    movers, opponents, scores = [], [], []
    for board in boards:
        for seat in (0, 1):
            g = ga.board_to_gnubg(board, 1 - seat)  # seat has just moved: it is not on roll
            movers.append(g[0])
            opponents.append(g[1])
            scores.append(gnubg_nn.pub_eval_score(g))
    movers, opponents, scores = np.array(movers), np.array(opponents), np.array(scores)
    race = pubeval.is_race(movers, opponents)
    x = pubeval.inputs(movers, opponents)
    result = {
        "source": "Tesauro's pubeval (1993), weights fitted exactly to GNU Backgammon's "
        "gnubg_nn.pub_eval_score by release/derive_pubeval_weights.py",
        "inputs": "see spieltisch.agents.backgammon.pubeval",
    }
    for kind, rows in (("race", race), ("contact", ~race)):
        w, *_ = np.linalg.lstsq(x[rows], scores[rows], rcond=None)
        error = float(np.abs(x[rows] @ w - scores[rows]).max())
        print(f"{kind}: {int(rows.sum())} positions, max error {error:.2e}")
        if error > 1e-4:
            raise SystemExit(f"{kind}: the linear fit does not reproduce GNU Backgammon's scores")
        result[kind] = [round(float(v), 5) for v in w]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(args.out, json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

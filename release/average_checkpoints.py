"""Average the weights of several checkpoints of one run into a new checkpoint.

    python release/average_checkpoints.py OUT CHECKPOINT [CHECKPOINT ...]

e.g. the last stretch of a TD(lambda) run (stochastic weight averaging: each checkpoint is an
SGD iterate that wanders around the minimum by the step size; their mean lies nearer to it)::

    python release/average_checkpoints.py runs/backgammon_td/average_1000000_1500000 \\
        runs/backgammon_td/checkpoints/games_00{10,11,12,13,14,15}00000

The checkpoints must share game, rules options and architecture (see
:func:`spieltisch.agents.neural.checkpoint.average_checkpoints`); ``OUT`` gets the mean of
their ``model.`` tensors and the last one's metadata with ``averaged_from`` (each source's path,
games and SHA-256). It plays as ``checkpoint:OUT`` and can be evaluated and shipped like any
checkpoint (``release/train_td.py OUT ...``; written inside the run's folder, it keeps the
run's resource ledger). It does not resume training (no optimizer state).
"""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the averaged checkpoint's path (without suffix)")
    parser.add_argument("checkpoints", nargs="+", help="the checkpoints to average")
    args = parser.parse_args(argv)

    from spieltisch.agents.neural.checkpoint import (
        CheckpointError,
        average_checkpoints,
        paths_of,
        save_checkpoint,
    )

    try:
        weights, meta_path = paths_of(args.out)
    except CheckpointError as err:
        print(f"cannot write {args.out}: {err}", file=sys.stderr)
        return 2
    if weights.exists() or meta_path.exists():
        print(f"{args.out}: a checkpoint exists there already; not overwritten", file=sys.stderr)
        return 2
    try:
        meta, tensors = average_checkpoints(args.checkpoints)
    except CheckpointError as err:
        print(f"cannot average: {err}", file=sys.stderr)
        return 2
    try:
        weights = save_checkpoint(args.out, meta, tensors)
    except OSError as err:  # a parent that is a file, no permission, a full disk
        print(f"cannot write {args.out}: {err}", file=sys.stderr)
        return 2
    print(f"wrote {weights} (the mean of {len(args.checkpoints)} checkpoints)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

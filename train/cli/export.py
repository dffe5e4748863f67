"""``spieltisch export``: a trained network as an ONNX model
(:mod:`spieltisch.agents.neural.onnx_export`).

Examples::

    spieltisch export pretrained:kalaha --onnx kalaha.onnx
    spieltisch export pretrained:kalaha -o seeds=4 --onnx kalaha_6x4.onnx
    spieltisch export checkpoint:runs/kalaha_ppo/best --onnx best.onnx
"""

from __future__ import annotations

import argparse
import json
import sys

from spieltisch.envs._common.options import add_option_argument, parse_options


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "export",
        help="export a trained network (policy-value or backgammon TD) as an ONNX model",
        description=(
            "Write the network of a shipped agent or a checkpoint as an ONNX model with a "
            "dynamic batch dimension, for onnxruntime or any other ONNX runtime. The model's "
            "metadata_props say what it is: the game, env version and rules options, every "
            "input and output, what each observation entry and action means, and the "
            "checkpoint's provenance. Needs the onnx extra: pip install -e '.[onnx]'."
        ),
        epilog=(
            "Policy-value networks (PPO and AlphaZero, every game): inputs observation float32 "
            "[N, obs] (the env's observation as is) and action_mask int8 [N, actions]; outputs "
            "logits [N, actions] (illegal actions -1e9) and value [N]; a network with input "
            "features (pretrained:hus:algo=alphazero_moves) takes them as a third input, "
            "features [N, width]. The backgammon TD network "
            "(pretrained:backgammon): input board float32 [N, 52] (an afterstate from the "
            "mover's view); outputs probabilities [N, 5] and equity [N]. Examples: "
            "'spieltisch export pretrained:kalaha --onnx kalaha.onnx'; 'spieltisch export "
            "pretrained:kalaha -o seeds=4 --onnx kalaha_6x4.onnx' (the Kalah(6,4) agent); "
            "'spieltisch export pretrained:hilo -o num_players=4 --onnx hilo_4p.onnx'; "
            "'spieltisch export checkpoint:runs/kalaha_ppo/best --onnx best.onnx'. Details: "
            "docs/api.md#onnx-export."
        ),
    )
    p.add_argument(
        "network",
        metavar="NETWORK",
        help="pretrained:GAME (the shipped network; -o picks the variant, e.g. -o seeds=4 for "
        "Kalah(6,4), -o num_players=4 for 4-player HiLo), pretrained:GAME:algo=ALGO (the one "
        "shipped for another algorithm, e.g. pretrained:hus:algo=ppo) or checkpoint:PATH (a "
        "trained checkpoint, with or without suffix)",
    )
    p.add_argument(
        "--onnx",
        required=True,
        metavar="OUT",
        help="the ONNX file to write (its directory must exist; an existing file is replaced)",
    )
    add_option_argument(p)
    p.add_argument("--json", action="store_true", help="print the model's metadata as JSON")
    return p


def run(args: argparse.Namespace) -> int:
    from spieltisch.agents.neural.onnx_export import OnnxExportError, export_onnx  # (torch)

    try:
        options = parse_options(args.option)
        meta = export_onnx(args.network, args.onnx, options or None)  # none: as trained
    except (OnnxExportError, ValueError) as err:
        print(f"spieltisch export: {err}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(meta, indent=2))
        return 0
    print(
        f"wrote {args.onnx}: the {meta['network']} network of {meta['source']} "
        f"({meta['game']}, {meta['env_version']}, options {meta['game_options']}); the batch "
        "dimension N is dynamic"
    )
    for kind in ("input", "output"):
        for name in json.loads(meta[f"{kind}s"]):
            print(f"  {kind} {name}: {meta[f'{kind}.{name}']}")
    print(
        "metadata_props also hold what each observation entry and action means (or the board "
        "encoding) and the checkpoint's provenance; see docs/api.md#onnx-export"
    )
    return 0

"""ONNX export of the trained networks, for use outside spieltisch (``spieltisch export``).

Two kinds of network, each one ONNX graph with a dynamic batch dimension ``N``:

* a PPO policy-value network (:class:`~spieltisch.agents.neural.policy.PolicyNet`, every game):
  inputs ``observation`` float32 ``[N, observation_size]`` (the env's observation as it is; the
  graph divides by ``observation_scale`` itself) and ``action_mask`` int8 ``[N, num_actions]``
  (the env's ``action_mask``: 1 legal, 0 illegal); outputs ``logits`` float32 ``[N,
  num_actions]`` (illegal actions set to -1e9, so a softmax gives them probability 0; the
  argmax is the move of the greedy ``pretrained:``/``checkpoint:`` agent) and ``value`` float32
  ``[N]`` (the mover's expected final reward, in [-1, 1]). A network that reads input features
  (``PolicyArch.features``, e.g. Hus's ``hus_moves``: what each move captures, computed by the
  rules' kernels) takes them as a third input ``features`` float32 ``[N, width]``.
* the backgammon TD(lambda) value network (:mod:`spieltisch.agents.backgammon.td_value`): input
  ``board`` float32 ``[N, 52]``, an afterstate from the mover's view (:data:`TD_BOARD`; build it
  with :func:`td_board_input`); the graph computes the 198 inputs of the network
  (:func:`~spieltisch.agents.backgammon.td_value.encode`) and returns ``probabilities``
  float32 ``[N, 5]`` and ``equity`` float32 ``[N]``.

Everything a user needs to feed the model is in its ``metadata_props`` (:func:`read_metadata`):
the game, env version and rules options, what each observation entry and action means (from the
env's own documentation), the inputs and outputs, and the checkpoint's provenance (its whole
metadata under ``checkpoint_metadata``).

The graph is traced from the network code itself by PyTorch's TorchScript exporter
(``torch.onnx.export(..., dynamo=False)``; the newer exporter needs ``onnxscript``), so the
exported network cannot drift from the one the agents play. Needs the ``onnx`` extra
(``pip install -e ".[onnx]"``: onnx, onnxruntime).
"""

from __future__ import annotations

import io
import json
import os
import re
import warnings
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

import numpy as np
import torch
from spieltisch.agents.backgammon import td_value
from spieltisch.agents.files import check_output_path, write_atomic
from spieltisch.agents.neural import agents as agents_module
from spieltisch.agents.neural import features as features_module
from spieltisch.agents.neural.agents import NetworkNameError
from spieltisch.agents.neural.checkpoint import Checkpoint, CheckpointError
from spieltisch.agents.neural.policy import MASKED_LOGIT, PolicyNet
from spieltisch.envs import GAMES, env_module
from spieltisch.envs.backgammon import rules as bg
from torch import nn

FORMAT = "spieltisch-onnx"
FORMAT_VERSION = 1
#: the ONNX operator set of exported models (onnxruntime 1.14 and later run it)
OPSET = 17
#: the name of the dynamic batch dimension
BATCH = "N"

#: the ``board`` input of an exported TD value network
TD_BOARD = (
    "float32 [N, 52]: an afterstate (the board right after the mover's whole play, the "
    "opponent to roll) seen by the mover, checker counts as whole numbers: cells 0..25 the "
    "mover's side (0..23 its points 1..24, counted from its home board, 24 its bar, 25 its "
    "borne-off checkers), cells 26..51 the opponent's side in the same layout from the "
    "opponent's own view (its point i + 1 is the mover's point 24 - i). In spieltisch: "
    "td_board_input(state.play_boards(), state.turn)."
)


class OnnxExportError(ValueError):
    """An agent or checkpoint cannot be exported (named what is wrong), the output cannot be
    written, or a file read back is not an ONNX model."""


def _onnx() -> Any:
    try:
        import onnx
    except ImportError as err:  # an optional extra
        raise OnnxExportError(
            'ONNX export needs the onnx package: pip install -e ".[onnx]" (or pip install onnx)'
        ) from err
    return onnx


# ----------------------------------------------------------------------------------------------
# What the models mean, from the envs' own documentation
# ----------------------------------------------------------------------------------------------
def _doc_section(doc: str, heading: str) -> str:
    """The Markdown section of ``doc`` whose ``## `` heading starts with ``heading``, its
    heading included ("" if none)."""
    match = re.search(rf"^## ({re.escape(heading)}.*?)(?=^## |\Z)", doc, re.M | re.S)
    return match.group(1).strip() if match else ""


def _doc_row(doc: str, name: str) -> str:
    """The text of the table row ``| name | text |`` of ``doc``."""
    match = re.search(rf"^\| {re.escape(name)} \| (.*) \|$", doc, re.M)
    return match.group(1).strip() if match else ""


def observation_description(game: str) -> str:
    """What each entry of ``game``'s observation means (the env's documentation)."""
    doc = env_module(game).__doc__ or ""
    return _doc_section(doc, "Observation")


def action_description(game: str) -> str:
    """What each action of ``game`` means (the env's documentation)."""
    doc = env_module(game).__doc__ or ""
    parts = (_doc_row(doc, "Actions"), _doc_section(doc, "Actions"))  # HiLo has a section
    return "\n\n".join(part for part in parts if part)


def features_description() -> str:
    """What the input feature sets are (the features module's documentation)."""
    return (features_module.__doc__ or "").strip()


def td_encoding_description() -> str:
    """The 198 network inputs and the 5 outputs of the TD value network (its module's
    documentation)."""
    doc = td_value.__doc__ or ""
    start, end = doc.find("Inputs ("), doc.find("Parameters:")
    return doc[start:end].strip() if start >= 0 and end > start else ""


# ----------------------------------------------------------------------------------------------
# The graphs
# ----------------------------------------------------------------------------------------------
class TDBoardNet(nn.Module):
    """The TD value network over a mover's-view board (:data:`TD_BOARD`), float32: the input
    encoding of :func:`~spieltisch.agents.backgammon.td_value.encode` as tensor operations
    (exact for whole checker counts), then the network."""

    def __init__(self, params: dict[str, np.ndarray]) -> None:
        super().__init__()
        hidden = params["b1"].shape[0]
        self.hidden = nn.Linear(td_value.NUM_INPUTS, hidden)
        self.out = nn.Linear(hidden, td_value.NUM_OUTPUTS)
        with torch.no_grad():
            self.hidden.weight.copy_(torch.from_numpy(np.asarray(params["W1"]).T.copy()))
            self.hidden.bias.copy_(torch.from_numpy(np.asarray(params["b1"])))
            self.out.weight.copy_(torch.from_numpy(np.asarray(params["W2"])))
            self.out.bias.copy_(torch.from_numpy(np.asarray(params["b2"])))
        # point i + 1 is i + 1 pips from home; the bar 25
        self.register_buffer("pip_weights", torch.arange(1.0, 25.0))
        self.register_buffer("equity_weights", torch.tensor([2.0, 1.0, 1.0, -1.0, -1.0]))

    def features(self, board: torch.Tensor) -> torch.Tensor:
        """The 198 inputs of ``board`` [N, 52]."""
        sides = board.reshape(-1, 2, bg.SIDE)
        points = sides[:, :, :24]
        bar, off = sides[:, :, bg.BAR : bg.BAR + 1], sides[:, :, bg.OFF : bg.OFF + 1]
        units = torch.stack(
            (
                points.clamp(0.0, 1.0),  # n >= 1
                (points - 1.0).clamp(0.0, 1.0),  # n >= 2
                (points - 2.0).clamp(0.0, 1.0),  # n >= 3
                (points - 3.0).clamp(min=0.0) / 2.0,
            ),
            dim=-1,
        ).reshape(-1, 2, 96)
        pips = (points * self.pip_weights).sum(-1) + 25.0 * bar[:, :, 0]
        per_side = torch.cat((units, bar / 2.0, off / 15.0), dim=-1).reshape(-1, 196)
        return torch.cat((per_side, pips / 100.0), dim=-1)

    def forward(self, board: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(probabilities [N, 5], equity [N])`` of afterstates ``board`` [N, 52], with the
        outputs the position rules out 0 (:func:`~spieltisch.agents.backgammon.td_value.
        rule_out_results`: no gammon for a side once the other has borne off a checker)."""
        h = torch.sigmoid(self.hidden(self.features(board)))
        off = board.reshape(-1, 2, bg.SIDE)[:, :, bg.OFF]  # [N, 2]: the mover's, the opponent's
        none_off = (off == 0).to(board.dtype)
        possible = torch.stack(
            (torch.ones_like(none_off[:, 0]), none_off[:, 1], none_off[:, 1],
             none_off[:, 0], none_off[:, 0]), dim=-1,
        )  # fmt: skip
        y = torch.sigmoid(self.out(h)) * possible
        return y, (y * self.equity_weights).sum(-1) - 1.0


def td_board_input(boards: np.ndarray, mover: int) -> np.ndarray:
    """The ``board`` input (:data:`TD_BOARD`) of afterstates ``boards`` (rows of the engine's
    52 board cells, by seat, e.g. ``state.play_boards()``) whose mover is seat ``mover``."""
    rows = np.asarray(boards)[:, : bg.BOARD_SIZE].reshape(-1, 2, bg.SIDE)
    if mover not in (0, 1):
        raise ValueError(f"mover must be seat 0 or 1, got {mover!r}")
    return rows[:, [mover, 1 - mover]].reshape(-1, bg.BOARD_SIZE).astype(np.float32)


def _export_graph(
    module: nn.Module, example: tuple[torch.Tensor, ...], inputs: list[str], outputs: list[str]
) -> bytes:
    buffer = io.BytesIO()
    dynamic = {name: {0: BATCH} for name in inputs + outputs}
    with warnings.catch_warnings():
        # The TorchScript exporter is deprecated in favour of one that needs onnxscript.
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        torch.onnx.export(
            module.eval(),
            example,
            buffer,
            input_names=inputs,
            output_names=outputs,
            dynamic_axes=dynamic,
            opset_version=OPSET,
            dynamo=False,
        )
    return buffer.getvalue()


class _WithSeatValues(nn.Module):
    """A network with one value per seat (``value_outputs`` > 1, HiLo with 3 or 4 players):
    the mover's value and every seat's, from the mover on (the search reads them all)."""

    def __init__(self, net: PolicyNet) -> None:
        super().__init__()
        self.net = net

    def forward(
        self, obs: torch.Tensor, mask: torch.Tensor, features: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        logits, values = self.net.forward_seats(obs, mask, features)
        return logits, values[:, 0], values


def _policy_graph(net: PolicyNet) -> tuple[bytes, dict[str, str]]:
    arch = net.arch
    example = (
        torch.zeros(2, arch.observation_size),
        torch.ones(2, arch.num_actions, dtype=torch.int8),
    )
    inputs = ["observation", "action_mask"]
    if arch.features:  # computed by the game's kernels, so an input of the graph
        example += (torch.zeros(2, arch.feature_width),)
        inputs.append("features")
    seats = arch.value_outputs
    outputs = ["logits", "value"] + (["seat_values"] if seats > 1 else [])
    graph = _export_graph(net if seats == 1 else _WithSeatValues(net), example, inputs, outputs)
    n, a = arch.observation_size, arch.num_actions
    meta = {
        "network": "policy_value",
        "inputs": json.dumps(inputs),
        "outputs": json.dumps(outputs),
        "observation_size": str(n),
        "observation_scale": repr(arch.observation_scale),
        "num_actions": str(a),
        "hidden": json.dumps(list(arch.hidden)),
        "input.observation": (
            f"float32 [N, {n}]: the env's observation of the player to move, as the env gives "
            f"it (the graph divides it by observation_scale = {arch.observation_scale:g})"
        ),
        "input.action_mask": (
            f"int8 [N, {a}]: the env's action_mask, 1 for a legal action, 0 for an illegal one"
        ),
        **(
            {
                "features": arch.features,
                "input.features": (
                    f"float32 [N, {arch.feature_width}]: the input features {arch.features!r} "
                    "of the observation (computed by the game's rules, see features_description); "
                    f"in spieltisch: spieltisch.agents.neural.features.{arch.features}(observation)"
                ),
                "features_description": features_description(),
            }
            if arch.features
            else {}
        ),
        "output.logits": (
            f"float32 [N, {a}]: the policy's logits, illegal actions set to {MASKED_LOGIT:g} "
            "(softmax gives them probability 0); argmax is the move the greedy "
            "pretrained:/checkpoint: agent plays"
        ),
        "output.value": (
            "float32 [N]: the value head, the expected final reward of the player to move, "
            "in [-1, 1] (tanh)"
        ),
        **(
            {
                "output.seat_values": (
                    f"float32 [N, {seats}]: the expected final reward of every seat, in "
                    "[-1, 1] (tanh), from the player to move on in turn order (column 0 is "
                    "value)"
                )
            }
            if seats > 1
            else {}
        ),
    }
    return graph, meta


def _td_graph(params: dict[str, np.ndarray]) -> tuple[bytes, dict[str, str]]:
    module = TDBoardNet(params)
    graph = _export_graph(
        module, (torch.zeros(2, bg.BOARD_SIZE),), ["board"], ["probabilities", "equity"]
    )
    meta = {
        "network": "td_value",
        "inputs": json.dumps(["board"]),
        "outputs": json.dumps(["probabilities", "equity"]),
        "hidden": str(params["b1"].shape[0]),
        "input.board": TD_BOARD,
        "output.probabilities": (
            "float32 [N, 5]: the mover's probabilities of 0 winning, 1 winning a gammon or "
            "backgammon, 2 winning a backgammon, 3 losing a gammon or backgammon, 4 losing a "
            "backgammon; 1 and 2 are 0 once the opponent has borne off a checker, 3 and 4 once "
            "the mover has"
        ),
        "output.equity": (
            "float32 [N]: the mover's expected points (no cube), 2 p0 - 1 + p1 + p2 - p3 - p4; "
            "the agent plays the legal play whose afterstate has the highest equity, valuing a "
            "play that bears off the mover's last checker by its exact result instead"
        ),
        "encoding": td_value.ENCODING,
        "encoding_description": td_encoding_description(),
    }
    return graph, meta


# ----------------------------------------------------------------------------------------------
# Export
# ----------------------------------------------------------------------------------------------
def _version(package: str) -> str:
    try:
        return importlib_metadata.version(package)
    except importlib_metadata.PackageNotFoundError:
        return "unknown"


def export_checkpoint(ckpt: Checkpoint, out: str | os.PathLike, source: str = "") -> dict[str, str]:
    """Write the network of ``ckpt`` to ``out`` as an ONNX model; returns its metadata.

    ``source`` names where the network came from (``pretrained:kalaha``) for the metadata. The
    file is written atomically (an existing one is replaced); nothing is written on an error.
    """
    onnx = _onnx()
    out = _check_out(Path(out))
    game = ckpt.meta.get("game")
    if game not in GAMES:
        raise OnnxExportError(f"{ckpt._where()}: unknown game {game!r}")
    if not isinstance(ckpt.meta.get("arch"), dict):
        raise OnnxExportError(f"{ckpt._where()} records no network architecture: not a network")
    if td_value.is_td_checkpoint(ckpt.meta):
        try:
            arch = td_value.TDArch.from_json(ckpt.meta["arch"])
            params = td_value.params_from_tensors(arch, ckpt.tensors, ckpt._where())
        except (KeyError, TypeError, ValueError) as err:
            raise OnnxExportError(f"{ckpt._where()}: bad TD value net: {err}") from err
        if arch.encoding != td_value.ENCODING or arch.race_hidden:
            raise OnnxExportError(
                f"{ckpt._where()}: the TD evaluator with features / a race network "
                f"({arch.encoding}, race_hidden {arch.race_hidden}) has no ONNX export yet"
            )
        graph, meta = _td_graph(params)
        about = "backgammon TD(lambda) value network"
    else:
        try:
            net = ckpt.policy()
        except CheckpointError as err:
            raise OnnxExportError(f"not a network: {err}") from err
        graph, meta = _policy_graph(net)
        about = f"{game} policy-value network"
        meta["observation_description"] = observation_description(game)
        meta["action_description"] = action_description(game)
    options = ckpt.game_options
    full = {
        "format": FORMAT,
        "format_version": str(FORMAT_VERSION),
        "game": game,
        "env_version": str(ckpt.meta.get("env_version", GAMES[game])),
        "game_options": json.dumps(options, sort_keys=True),
        **meta,
        "source": source or str(ckpt.path),
        "checkpoint_weights_sha256": str(ckpt.meta.get("weights_sha256", "")),
        "checkpoint_metadata": json.dumps(ckpt.meta, sort_keys=True, default=str),
        "exported_by": f"spieltisch {_version('spieltisch')}, torch {torch.__version__}",
    }
    model = onnx.load_model_from_string(graph)
    model.producer_name = "spieltisch"
    model.producer_version = _version("spieltisch")
    model.doc_string = (
        f"{about} from {full['source']} ({game}, {full['env_version']}, options "
        f"{full['game_options']}); inputs {meta['inputs']}, outputs {meta['outputs']}; "
        "metadata_props describe them"
    )
    onnx.helper.set_model_props(model, full)
    onnx.checker.check_model(model)
    _write(out, model.SerializeToString())
    return full


def _check_out(out: Path) -> Path:
    """``out`` if a file can be written there (checked before any work)."""
    try:
        return check_output_path(out)
    except ValueError as err:
        raise OnnxExportError(str(err)) from None


def _write(out: Path, data: bytes) -> None:
    try:
        write_atomic(out, lambda tmp: tmp.write_bytes(data))
    except OSError as err:
        raise OnnxExportError(f"cannot write {out}: {err.strerror or err}") from err


def load_network(name: str, game_options: dict[str, Any] | None = None) -> Checkpoint:
    """:func:`spieltisch.agents.neural.agents.load_network`, its errors as
    :class:`OnnxExportError` (a name that is not a network's: ``cannot export NAME: ...``)."""
    try:
        return agents_module.load_network(name, game_options)
    except NetworkNameError as err:
        raise OnnxExportError(f"cannot export {err}") from err
    except (ValueError, TypeError) as err:  # CheckpointError is a ValueError
        raise OnnxExportError(str(err)) from err


def export_onnx(
    name: str, out: str | os.PathLike, game_options: dict[str, Any] | None = None
) -> dict[str, str]:
    """Export the network named ``name`` (``pretrained:<game>`` or ``checkpoint:<path>``, see
    :func:`load_network`) to the ONNX file ``out``; returns the model's metadata. Raises
    :class:`OnnxExportError` naming the problem."""
    _onnx()  # before any work: is the extra installed, can the file be written?
    _check_out(Path(out))
    return export_checkpoint(load_network(name, game_options), out, source=name)


def read_metadata(path: str | os.PathLike) -> dict[str, str]:
    """The ``metadata_props`` of an ONNX model file, as a dict. Raises OnnxExportError naming
    a file that is missing or not an ONNX model (protobuf's DecodeError said neither)."""
    onnx = _onnx()
    try:
        model = onnx.load(str(path), load_external_data=False)
    except OSError as err:
        raise OnnxExportError(f"cannot read {path}: {err.strerror or err}") from None
    except Exception as err:  # protobuf's DecodeError and the like: not a model
        raise OnnxExportError(f"{path} is not an ONNX model ({type(err).__name__})") from None
    return {prop.key: prop.value for prop in model.metadata_props}

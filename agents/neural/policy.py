"""Neural policies (PyTorch): an actor-critic network over a game's observation, and an agent.

The network sees the env's observation vector (divided by ``observation_scale``; with
``count_bins``, each entry one-hot as well) and returns
action logits and a value (the expected final reward of the player to move). Illegal actions
are removed with :func:`masked_logits` *before* any distribution is formed: their logits become
a large negative finite number, so softmax gives them probability exactly 0 and nothing is NaN,
also when only one action is legal.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch
from spieltisch.agents.base import Agent, legal_actions_of
from spieltisch.agents.neural.features import feature_set
from torch import nn

#: the logit of an illegal action: finite (no inf - inf = NaN), yet exp() of it is exactly 0
MASKED_LOGIT = -1.0e9


@dataclass(frozen=True)
class PolicyArch:
    """The architecture of a :class:`PolicyNet`, recorded in every checkpoint."""

    observation_size: int
    num_actions: int
    hidden: tuple[int, ...] = (128, 128)
    observation_scale: float = 1.0
    #: residual blocks after the trunk (x -> tanh(x + W2 tanh(W1 x)), width hidden[-1]); 0: none
    residual_blocks: int = 0
    #: C > 0: each observation entry (a count of stones) also enters one-hot over 0..C-1 (C-1:
    #: that many or more), beside its scaled value; 0: the scaled values alone
    count_bins: int = 0
    #: 1: the value head predicts the mover's reward; n > 1 (a game's number of players): one
    #: reward per seat, from the mover on in turn order (output 0 is the mover's, so every
    #: reader of the mover's value alone reads output 0)
    value_outputs: int = 1
    #: a feature set of :mod:`.features` the trunk reads after the scaled observation (e.g.
    #: ``hus_moves``: what each action would capture); "": none
    features: str = ""

    @property
    def feature_width(self) -> int:
        return feature_set(self.features).width if self.features else 0

    @property
    def input_size(self) -> int:
        """Width of the trunk's first layer: the scaled observation, the features, the one-hot
        counts."""
        return self.observation_size * (1 + self.count_bins) + self.feature_width

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["hidden"] = list(self.hidden)
        if not self.features:
            del d["features"]  # the records of networks without features stay as they were
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> PolicyArch:
        """The record of :meth:`to_json`; raises ValueError naming a missing, unknown or bad
        field (sizes must be positive integers, the scale a positive finite number)."""
        known = {"observation_size", "num_actions", "hidden", "observation_scale"}
        # absent in older ones
        optional = {"residual_blocks", "count_bins", "value_outputs", "features"}
        unknown = set(d) - known - optional
        if unknown:
            raise ValueError(f"unknown architecture fields {sorted(unknown)}")
        missing = known - set(d)
        if missing:
            raise ValueError(f"missing architecture fields {sorted(missing)}")
        hidden = d["hidden"]
        sizes = [
            d["observation_size"],
            d["num_actions"],
            *(hidden if isinstance(hidden, list) else [None]),
        ]
        if any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in sizes):
            raise ValueError(
                "observation_size, num_actions and hidden (a list) must be positive integers, "
                f"got {d['observation_size']!r}, {d['num_actions']!r}, {hidden!r}"
            )
        scale = d["observation_scale"]
        if isinstance(scale, bool) or not isinstance(scale, int | float) or not 0 < scale < np.inf:
            raise ValueError(f"observation_scale must be a positive finite number, got {scale!r}")
        blocks, bins = d.get("residual_blocks", 0), d.get("count_bins", 0)
        outputs = d.get("value_outputs", 1)
        for name, n in (("residual_blocks", blocks), ("count_bins", bins)):
            if isinstance(n, bool) or not isinstance(n, int) or n < 0:
                raise ValueError(f"{name} must be a whole number >= 0, got {n!r}")
        if isinstance(outputs, bool) or not isinstance(outputs, int) or not 1 <= outputs <= 4:
            raise ValueError(f"value_outputs must be an integer from 1 to 4, got {outputs!r}")
        if bins > 1000:
            raise ValueError(f"count_bins must be at most 1000, got {bins}")
        features = d.get("features", "")
        if features:
            feature_set(features)  # raises, naming the known ones
        return cls(
            d["observation_size"],
            d["num_actions"],
            tuple(hidden),
            float(scale),
            blocks,
            bins,
            outputs,
            features,
        )


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``logits`` with every action where ``mask`` is 0 set to :data:`MASKED_LOGIT`."""
    return torch.where(mask.bool(), logits, torch.full_like(logits, MASKED_LOGIT))


def _tanh_by_sigmoid(x: torch.Tensor) -> torch.Tensor:
    """``tanh(x) = 2 sigmoid(2x) - 1`` (no autograd of its own)."""
    return torch.sigmoid(x * 2).mul_(2).sub_(1)


class _SigmoidTanh(torch.autograd.Function):
    """:func:`_tanh_by_sigmoid` with tanh's own backward, ``grad * (1 - y^2)``."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        y = _tanh_by_sigmoid(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        (y,) = ctx.saved_tensors
        return torch.ops.aten.tanh_backward(grad, y)


#: below this many elements torch's tanh is the faster one (one kernel call against three)
SIGMOID_TANH_MIN_SIZE = 4096


def tanh(x: torch.Tensor) -> torch.Tensor:
    """``torch.tanh(x)`` to within 2e-7, faster on the CPU: there ``2 sigmoid(2x) - 1`` costs a
    quarter of torch's tanh kernel on large batches (whose cost equalled the matrix products of
    a 128-wide layer, in the PPO update and in every move's forward pass). Small tensors (the
    few rows of an opponent's move), the GPU and ONNX export use ``torch.tanh`` itself."""
    if (  # (the export first: a traced size check would be a constant in the graph)
        torch.onnx.is_in_onnx_export()
        or x.device.type != "cpu"
        or x.numel() < SIGMOID_TANH_MIN_SIZE
    ):
        return torch.tanh(x)
    if x.requires_grad and torch.is_grad_enabled():
        return _SigmoidTanh.apply(x)
    return _tanh_by_sigmoid(x)


class Tanh(nn.Module):
    """:func:`tanh` as a layer (in place of ``nn.Tanh``; no parameters, so checkpoints are the
    same)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return tanh(x)


class ResidualBlock(nn.Module):
    """``x + W2 tanh(W1 x)``: depth without the vanishing signal of a deep plain MLP."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.inner = nn.Sequential(nn.Linear(width, width), Tanh(), nn.Linear(width, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return tanh(x + self.inner(x))


class PolicyNet(nn.Module):
    """An MLP trunk (optionally followed by residual blocks) with a policy head (logits) and a
    value head (tanh, rewards are in [-1, 1]; ``arch.value_outputs`` of them, the mover's
    first)."""

    def __init__(self, arch: PolicyArch) -> None:
        super().__init__()
        self.arch = arch
        layers: list[nn.Module] = []
        width = arch.input_size
        # the count values the one-hot inputs compare with (not saved: the arch determines them)
        self.register_buffer(
            "count_values", torch.arange(arch.count_bins, dtype=torch.float32), persistent=False
        )
        for h in arch.hidden:
            layers += [nn.Linear(width, h), Tanh()]
            width = h
        layers += [ResidualBlock(width) for _ in range(arch.residual_blocks)]
        self.trunk = nn.Sequential(*layers)
        self.policy_head = nn.Linear(width, arch.num_actions)
        self.value_head = nn.Linear(width, arch.value_outputs)
        # Small initial policy weights: a near-uniform start (as in CleanRL's PPO).
        nn.init.orthogonal_(self.policy_head.weight, gain=0.01)
        nn.init.zeros_(self.policy_head.bias)

    def inputs(self, obs: torch.Tensor, features: torch.Tensor | None = None) -> torch.Tensor:
        """What the trunk sees: ``obs / observation_scale``, then the ``features`` (computed
        from the observation outside the graph, constants to autograd, unless given: the ONNX
        graph takes them as an input), and with ``count_bins`` C each entry one-hot over
        0..C-1 (a comparison, so it exports to ONNX as it is)."""
        parts = [obs / self.arch.observation_scale]
        if self.arch.features:
            if features is None:
                extra = feature_set(self.arch.features).compute(obs.detach().cpu().numpy())
                features = torch.from_numpy(extra).to(device=obs.device, dtype=obs.dtype)
            parts.append(features)
        if self.arch.count_bins:
            capped = obs.clamp(0, self.arch.count_bins - 1)
            parts.append((capped.unsqueeze(-1) == self.count_values).to(obs.dtype).flatten(-2))
        return parts[0] if len(parts) == 1 else torch.cat(parts, dim=-1)

    def forward(
        self, obs: torch.Tensor, mask: torch.Tensor, features: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(masked logits, value)`` for a batch of observations and action masks: the
        mover's value, ``[N]`` (:meth:`forward_seats` gives every seat's). ``features``: the
        ``arch.features`` of ``obs`` if already computed (see :meth:`inputs`)."""
        logits, values = self.forward_seats(obs, mask, features)
        return logits, values[:, 0]

    def forward_seats(
        self, obs: torch.Tensor, mask: torch.Tensor, features: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``(masked logits, values)``, values ``[N, value_outputs]`` from the mover on."""
        x = self.trunk(self.inputs(obs, features))
        logits = masked_logits(self.policy_head(x), mask)
        return logits, tanh(self.value_head(x))

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """The mover's value alone (what a search needs at its leaves; skips the policy head)."""
        return self.seat_values(obs)[:, 0]

    def seat_values(self, obs: torch.Tensor) -> torch.Tensor:
        """The value head alone, ``[N, value_outputs]`` from the mover on."""
        return tanh(self.value_head(self.trunk(self.inputs(obs))))


_blas_controller: Any = None


@contextmanager
def blas_threads(count: int = 1) -> Iterator[None]:
    """numpy's BLAS on at most ``count`` threads inside (threadpoolctl), for
    :class:`ArrayPolicy`'s products: on small ones threads cost more than they save, and those
    of numpy's OpenBLAS keep spinning after each call, taking the cores from torch's threads
    in the update that follows (PPO on Kalaha 6x6: 35-39k against 49-50k steps/s end to end
    with one thread while acting)."""
    global _blas_controller
    if _blas_controller is None:
        from threadpoolctl import ThreadpoolController

        _blas_controller = ThreadpoolController()
    with _blas_controller.limit(limits=count, user_api="blas"):
        yield


class ArrayPolicy:
    """:class:`PolicyNet`'s forward pass in numpy, for acting: the layers of the given nets,
    read from their modules, run without torch's cost per operation, which dominates the small
    batches of self-play (a 5-row forward of a 128x128 net: 15 against 70 us; 120 rows: 90
    against 235 us, measured on one core).

    One net: its weights are views of the parameters, so later in-place updates (optimizer
    steps, ``load_state_dict``) show. Several nets of one architecture: their weights copied and
    stacked, to run side by side -- :meth:`forward_seats` then takes ``[K, R, ...]``, net k's
    rows in slice k (one batched product per layer instead of K small ones).
    """

    def __init__(self, nets: list[PolicyNet]) -> None:
        if not nets or any(net.arch != nets[0].arch for net in nets):
            raise ValueError("ArrayPolicy needs at least one network, all of one architecture")
        self.arch = nets[0].arch

        def weights(name: str) -> tuple[np.ndarray, np.ndarray]:
            layers = [net.get_submodule(name) for net in nets]
            if len(layers) == 1:  # x @ W.T + b, on views of the live parameters
                return layers[0].weight.detach().numpy().T, layers[0].bias.detach().numpy()
            return (
                np.stack([layer.weight.detach().numpy().T for layer in layers]),
                np.stack([layer.bias.detach().numpy()[None] for layer in layers]),
            )

        #: the trunk as steps: ("linear", W, b), ("tanh",), ("residual", W1, b1, W2, b2)
        self.trunk: list[tuple] = []
        for name, module in nets[0].trunk.named_children():
            if isinstance(module, nn.Linear):
                self.trunk.append(("linear", *weights(f"trunk.{name}")))
            elif isinstance(module, Tanh):
                self.trunk.append(("tanh",))
            elif isinstance(module, ResidualBlock):
                inner = (weights(f"trunk.{name}.inner.0"), weights(f"trunk.{name}.inner.2"))
                self.trunk.append(("residual", *inner[0], *inner[1]))
            else:  # pragma: no cover - PolicyNet builds only these
                raise TypeError(f"ArrayPolicy cannot run a {type(module).__name__} layer")
        self.policy_head = weights("policy_head")
        self.value_head = weights("value_head")

    def inputs(self, obs: np.ndarray) -> np.ndarray:
        """:meth:`PolicyNet.inputs` (scaled, the features, one-hot counts with ``count_bins``)."""
        parts = [obs / np.float32(self.arch.observation_scale)]
        if self.arch.features:
            extra = feature_set(self.arch.features).compute(obs.reshape(-1, obs.shape[-1]))
            parts.append(extra.reshape(*obs.shape[:-1], -1))
        if self.arch.count_bins:
            capped = np.clip(obs, 0, self.arch.count_bins - 1)
            onehot = capped[..., None] == np.arange(self.arch.count_bins, dtype=obs.dtype)
            parts.append(onehot.reshape(*obs.shape[:-1], -1).astype(obs.dtype))
        return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=-1)

    def forward_seats(self, obs: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`PolicyNet.forward_seats`: ``(masked logits, values)`` as float32 arrays."""
        x = self.inputs(np.asarray(obs, dtype=np.float32))
        for step in self.trunk:
            if step[0] == "linear":
                x = x @ step[1] + step[2]
            elif step[0] == "tanh":
                x = np.tanh(x)
            else:
                _, w1, b1, w2, b2 = step
                x = np.tanh(x + (np.tanh(x @ w1 + b1) @ w2 + b2))
        logits = x @ self.policy_head[0] + self.policy_head[1]
        logits = np.where(mask != 0, logits, np.float32(MASKED_LOGIT))
        return logits, np.tanh(x @ self.value_head[0] + self.value_head[1])


def sample_masked(logits: np.ndarray, rng: np.random.Generator, greedy: bool = False) -> np.ndarray:
    """One action per row from masked logits (Gumbel-max with ``rng``; argmax if ``greedy``)."""
    if greedy:
        return logits.argmax(axis=1)
    gumbel = -np.log(-np.log(rng.random(logits.shape) * (1 - 1e-12) + 1e-12))
    return (logits + gumbel).argmax(axis=1)


class NeuralAgent(Agent):
    """A :class:`PolicyNet` as an :class:`~spieltisch.agents.base.Agent`.

    ``greedy=True`` plays the most likely legal action, otherwise it samples from the policy
    with the agent's own seeded generator. The chosen action is always legal.
    """

    name = "neural"

    def __init__(self, net: PolicyNet, seed: int | None = None, greedy: bool = True) -> None:
        super().__init__(seed)
        self.net = net.eval()
        self.greedy = greedy
        self._forward = ArrayPolicy([self.net])  # one row per move: numpy, not torch's ops

    def act(self, observation: dict[str, np.ndarray], state: Any | None = None) -> int:
        legal = legal_actions_of(observation)
        obs = np.asarray(observation["observation"], dtype=np.float32)[None]
        logits, _ = self._forward.forward_seats(obs, np.asarray(observation["action_mask"])[None])
        action = int(sample_masked(logits.astype(np.float64), self.rng, self.greedy)[0])
        if action not in legal:  # cannot happen with a mask; a guard against shape mix-ups
            raise RuntimeError(f"policy chose illegal action {action}; legal: {legal.tolist()}")
        return action

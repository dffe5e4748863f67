"""Training configuration: one typed dataclass per algorithm, read from YAML, overridable with
``--set``.

:class:`RunConfig` declares the keys every trainer has (the game, the seed, and how the run is
managed by :mod:`spieltisch.train.run_loop`); :class:`PPOConfig` and :class:`TDConfig` add their
algorithm's keys and set their own defaults of the shared ones. Every field is documented where it
is declared. Unknown keys and values of the wrong type are rejected with an error that names the
key. ``spieltisch train configs/kalaha_ppo.yaml --set lr=1e-3 --set game_options.pits=4``
overrides single values (YAML syntax for the value).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import json
import math
import os
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from spieltisch.envs._common.options import closest_name, load_yaml, parse_key_value


class ConfigError(ValueError):
    """A config file or override is invalid; the message names the key."""


@dataclass
class RunConfig:
    """The keys every training run has: what is trained, the seed, and how the run is managed
    (:mod:`spieltisch.train.run_loop` reads these). The loop counts the trainer's *rounds*
    (PPO: iterations, TD: games) for checkpoint_interval and eval_interval. The defaults are
    PPO's; a trainer's config redeclares the shared keys whose defaults differ."""

    # --- what is trained ---
    game: str = "kalaha"
    """game name (kalaha, hus, hilo, backgammon)"""
    game_options: dict[str, Any] = field(default_factory=dict)
    """rules options as for the env, e.g. {pits: 6, seeds: 6, rules: goki}"""
    algorithm: str = "ppo"
    """training algorithm (ppo, td, alphazero): picks the config class and the trainer"""
    seed: int = 0
    """seeds every random choice of the run: the initial weights (torch for PPO), the games
    and the sampling (one numpy generator)"""

    # --- run management ---
    run_dir: str = "runs/kalaha_ppo"
    """where checkpoints, resolved config, TensorBoard logs and the final evaluation go
    (default: runs/<game>_<algorithm>)"""
    checkpoint_interval: int = 20
    """rounds between checkpoints (a resumed run loses at most this many)"""
    keep_checkpoints: int = 3
    """training checkpoints kept in run_dir/checkpoints (older ones are deleted)"""
    eval_interval: int = 20
    """rounds between evaluations (0: never, except the final one)"""
    eval_games: int = 200
    """games per evaluation (PPO: per opponent, the same number in each seat)"""
    final_eval_games: int = 1000
    """games (per opponent) of the final evaluation, written to run_dir/final_eval.json"""
    tensorboard: bool = True
    """write TensorBoard logs to run_dir/tb (needs the tensorboard package)"""
    progress: bool = True
    """show a tqdm progress bar"""


#: keys of :class:`RunConfig` that may differ between a run and its resumption (they do not change
#: learning); each trainer adds its own
RESUMABLE_RUN_KEYS = frozenset(
    {
        "run_dir",  # (a run folder moved or copied, or named another way, resumes)
        "progress",
        "tensorboard",
        "eval_interval",
        "eval_games",
        "final_eval_games",
        "checkpoint_interval",
        "keep_checkpoints",
    }
)


@dataclass
class PPOConfig(RunConfig):
    """Self-play PPO (``algorithm: ppo``); a round is one iteration."""

    # --- rollouts ---
    total_steps: int = 2_000_000
    """stop after this many learner decisions (environment steps taken by the learner)"""
    num_games: int = 256
    """games played in parallel; one iteration plays each of them to the end once"""
    max_turns: int = 1000
    """a game still running after this many moves ends as a draw (reward 0), as in the env"""

    # --- network ---
    hidden: list[int] = field(default_factory=lambda: [128, 128])
    """hidden layer widths of the MLP trunk"""

    # --- PPO ---
    lr: float = 3e-4
    """Adam learning rate"""
    anneal_lr: bool = True
    """decay the learning rate linearly to 0 over total_steps"""
    gamma: float = 1.0
    """discount per own decision (the games are episodic; 1 = undiscounted)"""
    gae_lambda: float = 0.95
    """GAE lambda over each player's own decisions"""
    update_epochs: int = 4
    """passes over each iteration's data"""
    num_minibatches: int = 4
    """minibatches per pass"""
    clip_coef: float = 0.2
    """PPO ratio clip"""
    clip_vloss: bool = True
    """clip the value loss as in PPO2"""
    ent_coef: float = 0.01
    """entropy bonus weight"""
    vf_coef: float = 0.5
    """value loss weight"""
    max_grad_norm: float = 0.5
    """global gradient norm clip"""
    norm_adv: bool = True
    """normalise advantages per minibatch"""
    target_kl: float | None = None
    """stop an iteration's epochs early when the approximate KL exceeds this (None: never)"""

    # --- opponents ---
    pool_prob: float = 0.5
    """share of games where the learner plays one random seat against a pool opponent (the
    other games are pure self-play: the learner plays every seat)"""
    pool_size: int = 8
    """past policies kept in the pool (the oldest is dropped)"""
    pool_interval: int = 10
    """iterations between adding the current policy to the pool"""
    pool_random: bool = True
    """the uniformly random policy is a pool member too"""
    pool_baselines: list[str] = field(default_factory=list)
    """scripted agents (arena names, e.g. [greedy, "alphabeta:depth=2"]) that are permanent pool
    members; the opponent of a pool game is drawn uniformly from all members"""

    # --- run management (see RunConfig for the shared keys) ---
    eval_opponents: list[str] = field(default_factory=lambda: ["random"])
    """the game's scripted agents (arena names, not pretrained: or checkpoint:) the greedy
    policy is evaluated against (each seat in turn); at least one"""
    keep_best: bool = True
    """keep the policy with the best mean evaluation score as run_dir/best (it is evaluated
    next to the final one at the end)"""
    torch_threads: int = 1
    """torch.set_num_threads; 1 keeps runs reproducible and leaves cores to the engines"""
    device: str = "cpu"
    """torch device of the learner: cpu, cuda (refused when the config is read if torch finds
    none) or auto. The games are played on the CPU by a copy of the network refreshed after
    every update"""
    update_threads: int | None = None
    """torch threads for the PPO update alone (None: torch_threads). The games wait while the
    network learns, so on a 2-core machine 2 here uses the second core (1.26x the steps per
    second end to end at load average 1.8, benchmarks/results/ppo_throughput.md); with another
    job busy on the other core it can be slower than 1. Runs with the same value reproduce and
    resume exactly; another value changes the rounding"""
    stop_after_iterations: int | None = None
    """stop after this many iterations in this process, with a checkpoint (continue with
    --resume): a long run spread over sessions"""


@dataclass
class TDConfig(RunConfig):
    """TD(lambda) self-play over afterstates, backgammon only (``algorithm: td``; see
    :mod:`spieltisch.train.td`); a round is one game."""

    # --- shared keys with TD's defaults ---
    game: str = "backgammon"
    """must be backgammon (TD afterstate learning needs whole plays of a dice game); the cube
    (game_options.cube) must stay off"""
    algorithm: str = "td"
    """training algorithm: 'td' here"""
    run_dir: str = "runs/backgammon_td"
    """where checkpoints, resolved config, TensorBoard logs and the final evaluation go"""
    checkpoint_interval: int = 5000
    """games between checkpoints (a resumed run loses at most this many)"""
    eval_interval: int = 20_000
    """games between arena evaluations against eval_opponent (0: never, except the final one)"""
    eval_games: int = 400
    """arena games per evaluation (half the seeds each way round, seats swapped)"""
    final_eval_games: int = 5000
    """arena games of the final evaluation (0: none)"""

    # --- what is trained ---
    total_games: int = 200_000
    """stop after this many self-play training games"""

    # --- network (agents/backgammon/td_value.py: 198 inputs, sigmoid hidden, 5 sigmoid outputs) ---
    hidden: int = 80
    """hidden sigmoid units (of the contact network when race_hidden > 0)"""
    features: bool = False
    """add the 17 hand-designed input features of agents/backgammon/td_features.py (blots and
    shots, primes, home and anchor points, checkers back, escapes, pip difference) to the 198
    raw inputs: 215 inputs, encoding 'tesauro198+features-v1'"""
    race_hidden: int = 0
    """hidden units of a separate network for race positions (no more contact possible), each
    afterstate valued by the network of its class, both trained in the same TD run (0: one
    network for every position, as the original TD-Gammon net)"""
    init_scale: float = 0.1
    """initial weights uniform in [-init_scale, init_scale] (biases 0)"""
    init_from: str | None = None
    """start from the weights of this TD net instead of random ones: a checkpoint's path (e.g.
    a finished run's final) or a shipped net (``pretrained:backgammon``,
    ``pretrained:backgammon:algo=td_features``); a second stage with other settings, e.g. a
    smaller step size"""

    # --- TD(lambda) ---
    lr: float = 0.1
    """step size alpha at the start (per output, plain SGD on the TD error, as Tesauro)"""
    lr_final: float = 0.1
    """step size after lr_decay_games games (linear in between)"""
    lr_decay_games: int = 1
    """games over which the step size goes from lr to lr_final"""
    lam: float = 0.7
    """trace decay lambda (per move, the perspective switching every move)"""

    # --- run management (see RunConfig for the shared keys) ---
    chunk_games: int = 200
    """games per call of the compiled trainer (logging granularity; does not change results)"""
    eval_opponent: str = "pubeval"
    """arena agent the evaluations play against"""
    eval_workers: int = 1
    """arena worker processes for evaluations"""
    stop_after_games: int | None = None
    """stop (as if killed) after this many games in this process; for tests"""


@dataclass
class AlphaZeroConfig(RunConfig):
    """Gumbel AlphaZero self-play (``algorithm: alphazero``; see :mod:`spieltisch.train.alphazero`):
    every move of every self-play game is searched; a round is one iteration (play ``num_games``
    games to the end, then learn from the replay buffer)."""

    # --- shared keys with AlphaZero's defaults ---
    algorithm: str = "alphazero"
    """training algorithm: 'alphazero' here"""
    run_dir: str = "runs/alphazero"
    """where checkpoints, resolved config, TensorBoard logs and the final evaluation go"""
    checkpoint_interval: int = 5
    """iterations between checkpoints (a resumed run loses at most this many)"""
    eval_interval: int = 5
    """iterations between evaluations (0: never, except the final one)"""

    # --- self-play ---
    total_positions: int = 1_000_000
    """stop after this many searched self-play positions (moves of all games)"""
    num_games: int = 128
    """self-play games in parallel (one search batch); an iteration plays each to the end"""
    max_turns: int = 1000
    """a game still running after this many moves ends as a draw (value target 0)"""
    opening_plies: int = 0
    """each self-play game opens with k uniformly random moves, k drawn for each game from
    0..opening_plies; they are played, not learnt from. Without them the games of a
    deterministic game (Kalaha, Hus) soon follow the few lines a sharp policy plays (Kalah(6,4),
    256 games: 994 distinct positions of 8,864), and the network meets little else"""

    # --- the search (agents/neural/gumbel_search.py; the paper's names in brackets) ---
    num_simulations: int = 16
    """simulations per move in self-play (n); at most 100,000, and the config is refused when
    the search trees of num_games games (HiLo: times determinizations) would not fit in the
    machine's memory (as for eval_simulations and the evaluations' games)"""
    max_considered: int = 16
    """root actions Sequential Halving starts from (m)"""
    gumbel_scale: float = 1.0
    """scale of the root's Gumbel noise in self-play (exploration; 0: none)"""
    c_visit: float = 50.0
    """sigma's visit offset (c_visit)"""
    c_scale: float = 0.1
    """sigma's scale (c_scale)"""
    policy_improvement: str = "gumbel"
    """the search of self-play, which makes the policy targets: 'gumbel' (Gumbel AlphaZero,
    the keys above); 'alphabeta' (Kalaha and Hus; expert iteration): the compiled alpha-beta,
    alphabeta_depth plies over the network's current value head, targets uniform over its best
    moves (agents/neural/value_search.py AlphaBetaImprovement); the Gumbel keys then serve only
    evaluations with eval_simulations"""
    alphabeta_depth: int = 3
    """policy_improvement alphabeta: plies searched from each self-play position"""
    alphabeta_q_scale: float = 0.0
    """policy_improvement alphabeta: 0, the policy target is uniform over the best searched
    moves; s > 0, softmax(logits + s * q) over the legal moves with q each move's exact
    searched value (every move searched with the full window, slower): a correction of the
    network's own policy, as Gumbel's completed-Q target is"""
    pool_prob: float = 0.0
    """share of self-play games where the learner plays one random seat against a scripted
    baseline from pool_baselines (drawn uniformly); the baseline's moves are played, not learnt
    from, and the learner's positions take the result against it as their value target; 0:
    pure self-play (the learner, searching, plays every seat). Not for backgammon"""
    pool_baselines: list[str] = field(default_factory=list)
    """scripted agents (arena names, e.g. ["alphabeta:depth=3"]) that play the pool games of
    pool_prob; the mancala searches answer all their games in one compiled call"""
    determinizations: int = 4
    """HiLo (hidden cards): states drawn from the mover's information set at each decision,
    each searched, their root statistics combined (agents/neural/determinized_search.py); the
    perfect-information games search the real position and ignore it"""

    # --- network ---
    hidden: list[int] = field(default_factory=lambda: [128, 128])
    """hidden layer widths of the MLP trunk (policy head and tanh value head on top); backgammon:
    one width, the sigmoid units of the TD value net (agents/backgammon/td_value.py), e.g. [80]"""
    residual_blocks: int = 0
    """residual blocks after the trunk, each x -> tanh(x + W2 tanh(W1 x)) at width hidden[-1]
    (0: a plain MLP)"""
    count_bins: int = 0
    """Kalaha and Hus: C > 0 feeds each observed count of stones to the network one-hot over
    0..C-1 (C-1: that many or more) beside its scaled value, so where a pit's stones land is
    a lookup for the first layer; 0: the scaled counts alone"""
    features: str = ""
    """input features the network reads beside the observation, computed by the game's kernels
    (agents/neural/features.py): "hus_moves" (Hus) gives, for each of the 16 actions, whether it
    is legal, the stones it captures, whether it wins at once and the opponent's replies after
    it; "hus_moves_threats" adds the same for the opponent as if it moved now; "": none"""

    value_per_seat: bool = False
    """False: the value head predicts the mover's result and the search gives every other seat
    the negation of it shared out (two players: exactly the other's value); True: one value
    output per seat (from the mover on), each learnt from that seat's own result, which the
    search reads as it is (HiLo with 3 or 4 players, where one seat's loss is not shared
    evenly by the others)"""

    # --- learning ---
    lr: float = 1e-3
    """Adam learning rate (at the start, when lr_final is set)"""
    lr_final: float | None = None
    """None: lr throughout; else the rate falls from lr to lr_final along a half cosine over
    total_positions (computed from the positions played, so a resumed run follows it exactly)"""
    weight_decay: float = 1e-4
    """L2 penalty on the weights (Adam's weight_decay)"""
    batch_size: int = 256
    """positions per gradient step, drawn uniformly from the replay buffer"""
    sample_reuse: float = 4.0
    """gradient steps per iteration: sample_reuse * new positions / batch_size (rounded up):
    how often a position is learnt from on average while it is new"""
    replay_size: int = 100_000
    """positions kept in the replay buffer (the oldest are replaced)"""
    value_weight: float = 1.0
    """weight of the value loss (mean squared error) next to the policy loss (cross-entropy
    with the search's improved policy)"""
    td_steps: int = 0
    """value target of a position: 0, the game's final result z for its mover; n > 0, the
    search's root value (for that mover) of the position n moves later in the same game, or z
    when the game ends within n moves (n-step bootstrapping: less variance, some bias)"""
    margin_weight: float = 0.0
    """Kalaha only: share w of the final stone margin in what a finished game is worth (value
    target and the search's exact leaves): (1 - w) * result + w * clip(margin / margin_scale,
    -1, 1); 0: the result alone (+1/-1/0)"""
    margin_scale: float = 8.0
    """Kalaha: the margin in stones that counts fully (see margin_weight)"""
    device: str = "cpu"
    """torch device of the network: cpu, cuda (refused when the config is read if torch finds
    none) or auto"""

    # --- the starting weights ---
    init_checkpoint: str | None = None
    """start from these weights instead of random ones (fine-tuning); not read on --resume.
    Backgammon: a TD value net, pretrained:backgammon[:algo=ALGO] (a shipped net) or the path
    of a TD checkpoint (a TD run's final, or this trainer's); its hidden units must be the
    config's hidden (one width, e.g. [80]). Other games: a policy-value network,
    pretrained:GAME[:algo=ALGO] or checkpoint:PATH (a run's final, best or checkpoint), of the
    same game and rules options, whose architecture is the config's (hidden, residual_blocks,
    count_bins, features, value_per_seat); the optimizer, replay buffer and counters start
    afresh"""

    # --- backgammon only (train/alphazero_backgammon.py; refused for the other games) ---
    temperature: float = 0.05
    """backgammon: the prior's temperature T, logits = afterstate equity / T, in the search and
    in the policy loss softmax(u(b) / T) (agents/backgammon/chance_search.py)"""
    policy_weight: float = 1.0
    """backgammon: weight of the policy loss (cross-entropy of the search's improved policy with
    softmax(u(b) / T) over the plays); the other games weigh it 1"""

    # --- run management (see RunConfig for the shared keys) ---
    eval_opponents: list[str] = field(default_factory=lambda: ["random"])
    """arena agents the network is evaluated against (each seat in turn; backgammon: seats
    swapped with paired dice, scored in points per game, pretrained: and checkpoint: names
    allowed; the other games: their scripted agents); at least one"""
    eval_simulations: int = 0
    """simulations of the evaluated player (0: the raw network, its most likely move)"""
    keep_best: bool = True
    """keep the network with the best mean evaluation score as run_dir/best"""
    torch_threads: int = 1
    """torch.set_num_threads; 1 keeps runs reproducible and leaves cores to the engines"""
    stop_after_iterations: int | None = None
    """stop after this many iterations in this process, with a checkpoint (continue with
    --resume): a long run spread over sessions"""


@dataclass
class RolloutConfig(RunConfig):
    """Backgammon: a TD value net improved by supervised learning on rollout targets
    (``algorithm: rollout``; see :mod:`spieltisch.train.rollout_targets`). A round is one
    iteration: sample afterstates from self-play of the current net, roll each out with the
    current net, fit the net to the rollouts' probabilities."""

    # --- shared keys with this trainer's defaults ---
    game: str = "backgammon"
    """must be backgammon (cubeless; game_options must stay empty)"""
    algorithm: str = "rollout"
    """training algorithm: 'rollout' here"""
    run_dir: str = "runs/backgammon_rollout"
    """where checkpoints, resolved config, TensorBoard logs and the final evaluation go"""
    checkpoint_interval: int = 1
    """iterations between checkpoints (a resumed run loses at most this many)"""
    eval_interval: int = 5
    """iterations between arena evaluations against eval_opponent (0: never, except the final
    one)"""
    eval_games: int = 1000
    """arena games per evaluation (half the seeds each way round, seats swapped)"""
    final_eval_games: int = 5000
    """arena games of the final evaluation (0: none)"""

    # --- the net ---
    init_from: str = "pretrained:backgammon"
    """the TD value net to improve (pretrained:backgammon or the path of a TD checkpoint, e.g. a
    TD run's final); its architecture is kept; not read on --resume"""

    # --- rollout targets ---
    total_positions: int = 100_000
    """stop after this many afterstates have been rolled out and learnt from"""
    positions_per_iteration: int = 2_000
    """afterstates sampled, rolled out and added to the data per iteration"""
    sample_prob: float = 0.1
    """each afterstate of the self-play games (the current net, greedy at 1 ply) is taken with
    this probability, so the positions spread over whole games"""
    target: str = "rollout"
    """what each afterstate is fit to: 'rollout' (rollout_games games with the net, truncate);
    'ply2' (no sampling: over the opponent's 21 rolls, the net's outputs of its 1-ply best
    reply, the value a 2-ply search gives the afterstate; rollout_games and truncate unused)"""
    teacher: str | None = None
    """with target 'ply2': a fixed TD value net (as init_from) whose 2-ply values are the
    targets instead of the trained net's own, e.g. pretrained:backgammon:algo=td_long into a
    larger net (distillation of its lookahead); None: the trained net itself"""
    rollout_games: int = 72
    """games per rolled-out position (a multiple of 72: 36 stratified first rolls x duplicate
    dice pairs, agents/backgammon/rollout.py)"""
    truncate: int | None = 7
    """plies after which a rollout game stops and is scored by the net's probabilities (None:
    play every game to the end)"""
    rollout_threads: int = 1
    """threads of the batched engine and the net in the self-play and the rollouts (results do
    not depend on it)"""

    # --- learning (plain SGD on the squared error of the five sigmoid outputs, as TD) ---
    lr: float = 0.01
    """step size at the start"""
    lr_final: float = 0.002
    """step size at total_positions (linear in between)"""
    fit_passes: float = 4.0
    """samples learnt from per iteration: fit_passes x positions_per_iteration, drawn uniformly
    from the data (each new position is seen about this often while it is new)"""
    replay_size: int = 200_000
    """rolled-out positions kept as data (the oldest are replaced)"""

    # --- run management (see RunConfig for the shared keys) ---
    eval_opponent: str = "pubeval"
    """arena agent the evaluations play against"""
    eval_workers: int = 1
    """arena worker processes for evaluations"""
    keep_best: bool = True
    """keep the net with the best evaluation (points per game) as run_dir/best"""
    stop_after_iterations: int | None = None
    """stop after this many iterations in this process, with a checkpoint (continue with
    --resume): a long run spread over sessions"""


CONFIG_CLASSES: dict[str, type[RunConfig]] = {
    "ppo": PPOConfig,
    "td": TDConfig,
    "alphazero": AlphaZeroConfig,
    "rollout": RolloutConfig,
}


def _type_ok(value: Any, hint: Any) -> bool:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_type_ok(value, h) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is Any:
        return True
    if origin is list:
        (inner,) = typing.get_args(hint)
        return isinstance(value, list) and all(_type_ok(v, inner) for v in value)
    if origin is dict:
        return isinstance(value, dict)
    if hint is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def _coerce(cls: type, data: dict[str, Any], source: str) -> Any:
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    for key in data:
        if key not in hints:
            close = closest_name(key, names)
            meant = f" (did you mean {close!r}?)" if close else ""
            raise ConfigError(f"{source}: unknown key {key!r}{meant}; keys are {sorted(names)}")
    for key, value in list(data.items()):
        if isinstance(value, str) and _accepts_float(hints[key]):
            # a string "1e-3" (quoted in YAML, or from Python): a float field takes a number
            with contextlib.suppress(ValueError):
                value = data[key] = float(value)
        if _accepts_list(hints[key]) and isinstance(value, list) and _list_of_int(hints[key]):
            value = data[key] = [_whole_number(v) for v in value]  # hidden: [128.0]
        elif _accepts_int(hints[key]):
            # counts written 1e6 or 1.0e6 (floats; "1e6", a string): whole numbers
            value = data[key] = _whole_number(value)
        if not _type_ok(value, hints[key]):
            hint = ""
            if _accepts_list(hints[key]) and not isinstance(value, list | dict):
                hint = f" (a list in YAML's brackets: [{value}])"
            raise ConfigError(
                f"{source}: key {key!r} must be {_hint_name(hints[key])}, got {value!r}{hint}"
            )
        if hints[key] is float and isinstance(value, int):
            data[key] = float(value)
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{source}: key {key!r} must be a finite number, got {value!r}")
        try:  # the run directory records the config as JSON (a YAML date or alias loop is not)
            json.dumps(value)
        except (TypeError, ValueError, RecursionError) as err:
            raise ConfigError(f"{source}: key {key!r} cannot be recorded as JSON: {err}") from None
    obj = cls(**data)
    _check_ranges(obj, source)
    return obj


def _accepts_float(hint: Any) -> bool:
    return hint is float or float in typing.get_args(hint)


def _accepts_int(hint: Any) -> bool:
    return hint is int or (int in typing.get_args(hint) and not _accepts_float(hint))


def _accepts_list(hint: Any) -> bool:
    return list in (typing.get_origin(hint), *map(typing.get_origin, typing.get_args(hint)))


def _list_of_int(hint: Any) -> bool:
    return any(typing.get_args(arg) == (int,) for arg in (hint, *typing.get_args(hint)))


def _whole_number(value: Any) -> Any:
    """``value`` as an int when it is a whole number written as a float (``1.0e6``, ``1e6``, or
    the string ``"1e6"``); otherwise unchanged (and refused by its type)."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _hint_name(hint: Any) -> str:
    if typing.get_args(hint):  # list[int], not list
        return str(hint).replace("typing.", "")
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")


def _check_ranges(cfg: RunConfig, source: str) -> None:
    _check_run_ranges(cfg, source)
    if isinstance(cfg, TDConfig):
        _check_td_ranges(cfg, source)
    elif isinstance(cfg, RolloutConfig):
        _check_rollout_ranges(cfg, source)
    elif isinstance(cfg, AlphaZeroConfig):
        _check_alphazero_ranges(cfg, source)
    else:
        _check_ppo_ranges(cfg, source)


def _check_at_least_one(cfg: RunConfig, keys: tuple[str, ...], source: str) -> None:
    for key in keys:
        if getattr(cfg, key) < 1:
            raise ConfigError(f"{source}: key {key!r} must be at least 1, got {getattr(cfg, key)}")


#: the largest seed a config takes (seeds derived from it, e.g. the final evaluation's
#: ``seed * 1000 + 11``, stay well inside int64)
MAX_SEED = 2**32 - 1


def _check_run_ranges(cfg: RunConfig, source: str) -> None:
    """The shared keys of :class:`RunConfig`."""
    _check_at_least_one(cfg, ("checkpoint_interval", "keep_checkpoints", "eval_games"), source)
    if not 0 <= cfg.seed <= MAX_SEED:  # numpy refused a negative one mid-start, torch a big one
        raise ConfigError(f"{source}: key 'seed' must be in [0, {MAX_SEED}], got {cfg.seed}")
    stop = getattr(cfg, "stop_after_iterations", None)  # (the configs with iterations)
    if stop is not None and stop < 1:  # 0 ran one iteration
        raise ConfigError(f"{source}: key 'stop_after_iterations' must be at least 1, got {stop}")
    for key in ("eval_interval", "final_eval_games"):
        if getattr(cfg, key) < 0:
            raise ConfigError(f"{source}: key {key!r} must not be negative")


def _check_td_ranges(cfg: TDConfig, source: str) -> None:
    _check_at_least_one(
        cfg, ("total_games", "hidden", "lr_decay_games", "chunk_games", "eval_workers"), source
    )
    if not 0.0 <= cfg.lam <= 1.0:
        raise ConfigError(f"{source}: key 'lam' must be in [0, 1], got {cfg.lam}")
    for key in ("lr", "lr_final", "init_scale"):
        if getattr(cfg, key) <= 0:
            raise ConfigError(f"{source}: key {key!r} must be positive, got {getattr(cfg, key)}")
    if cfg.game != "backgammon":
        raise ConfigError(f"{source}: key 'game' must be 'backgammon' for algorithm td")
    if cfg.game_options.get("cube", False):
        raise ConfigError(f"{source}: TD training needs game_options.cube off")
    if cfg.stop_after_games is not None and cfg.stop_after_games < 1:
        raise ConfigError(f"{source}: key 'stop_after_games' must be at least 1")
    if cfg.race_hidden < 0:
        raise ConfigError(
            f"{source}: key 'race_hidden' must be 0 or positive, got {cfg.race_hidden}"
        )
    if cfg.init_from is not None:
        _check_td_net_name("init_from", cfg.init_from, source)
    _check_agent(cfg, "eval_opponent", cfg.eval_opponent, source, prefixed=True)


def _check_rollout_ranges(cfg: RolloutConfig, source: str) -> None:
    _check_at_least_one(
        cfg,
        ("total_positions", "positions_per_iteration", "rollout_threads", "replay_size",
         "eval_workers"),
        source,
    )  # fmt: skip
    if cfg.game != "backgammon":
        raise ConfigError(f"{source}: key 'game' must be 'backgammon' for algorithm rollout")
    if cfg.game_options:
        raise ConfigError(
            f"{source}: key 'game_options' must be empty for algorithm rollout (cubeless money "
            f"games), got {cfg.game_options}"
        )
    if not 0.0 < cfg.sample_prob <= 1.0:
        raise ConfigError(f"{source}: key 'sample_prob' must be in (0, 1], got {cfg.sample_prob}")
    if cfg.target not in ("rollout", "ply2"):
        raise ConfigError(f"{source}: key 'target' must be rollout or ply2, got {cfg.target!r}")
    if cfg.rollout_games < 72 or cfg.rollout_games % 72:
        raise ConfigError(
            f"{source}: key 'rollout_games' must be a positive multiple of 72 (36 first rolls x "
            f"duplicate dice), got {cfg.rollout_games}"
        )
    if cfg.truncate is not None and cfg.truncate < 1:
        raise ConfigError(
            f"{source}: key 'truncate' must be at least 1 (or null), got {cfg.truncate}"
        )
    for key in ("lr", "lr_final", "fit_passes"):
        if getattr(cfg, key) <= 0:
            raise ConfigError(f"{source}: key {key!r} must be positive, got {getattr(cfg, key)}")
    _check_td_net_name("init_from", cfg.init_from, source)
    if cfg.teacher is not None:
        if cfg.target != "ply2":
            raise ConfigError(
                f"{source}: key 'teacher' needs target: ply2 (its 2-ply values are the targets), "
                f"got target {cfg.target!r}"
            )
        _check_td_net_name("teacher", cfg.teacher, source)
    _check_agent(cfg, "eval_opponent", cfg.eval_opponent, source, prefixed=True)


def _check_win_reward(cfg: RunConfig, source: str) -> None:
    """Self-play scores Kalaha and Hus games by who won (their batched engines' results), so a
    ``reward`` option of their envs ('score', 'points') would be ignored: refused instead."""
    reward = cfg.game_options.get("reward", "win")
    if cfg.game in ("kalaha", "hus") and reward != "win":
        raise ConfigError(
            f"{source}: key 'game_options.reward': self-play training scores {cfg.game} games "
            f"by who won, so it takes 'win' only, got {reward!r} (the env's other rewards are "
            "for evaluations and loops of your own)"
        )


def _check_pool_baselines_play(cfg: PPOConfig | AlphaZeroConfig, source: str, share: str) -> None:
    """Baselines listed with ``pool_prob`` 0 would never play: refused (``share``: what
    ``pool_prob`` is in this trainer)."""
    if cfg.pool_baselines and cfg.pool_prob == 0:
        raise ConfigError(
            f"{source}: key 'pool_baselines' would never play with pool_prob 0: set pool_prob "
            f"({share}, e.g. 0.5)"
        )


def _check_eval_opponents(cfg: PPOConfig | AlphaZeroConfig, source: str) -> None:
    if not cfg.eval_opponents:  # (an empty list crashed the run's end summary)
        raise ConfigError(
            f"{source}: key 'eval_opponents' must name at least one agent (e.g. [random]); "
            "eval_interval: 0 and final_eval_games: 0 turn the evaluations off"
        )


def _check_device(cfg: PPOConfig | AlphaZeroConfig, source: str) -> None:
    """'device' is cpu, cuda or auto, and cuda only where torch finds a CUDA device (the
    trainers refused it only once they started, after the set-up work)."""
    if cfg.device not in ("cpu", "cuda", "auto"):
        raise ConfigError(f"{source}: key 'device' must be cpu, cuda or auto, got {cfg.device!r}")
    if cfg.device == "cuda":
        try:
            import torch
        except ImportError:  # the trainers say torch is missing
            return
        if not torch.cuda.is_available():
            raise ConfigError(
                f"{source}: key 'device': cuda was asked for, but torch finds no CUDA device "
                "(use cpu, or auto: CUDA where there is one)"
            )


def _check_ppo_ranges(cfg: PPOConfig, source: str) -> None:
    positive = ("total_steps", "num_games", "max_turns", "update_epochs", "num_minibatches")
    _check_at_least_one(cfg, (*positive, "pool_interval", "pool_size", "torch_threads"), source)
    if cfg.update_threads is not None and cfg.update_threads < 1:
        raise ConfigError(f"{source}: key 'update_threads' must be at least 1 (or null)")
    _check_device(cfg, source)
    for key in ("pool_prob", "gamma", "gae_lambda"):
        if not 0.0 <= getattr(cfg, key) <= 1.0:
            raise ConfigError(f"{source}: key {key!r} must be in [0, 1], got {getattr(cfg, key)}")
    if cfg.lr <= 0:
        raise ConfigError(f"{source}: key 'lr' must be positive, got {cfg.lr}")
    # (max_grad_norm 0 clipped every gradient to nothing: a run that never learnt)
    for key in ("clip_coef", "max_grad_norm"):
        if not getattr(cfg, key) > 0:
            raise ConfigError(f"{source}: key {key!r} must be positive, got {getattr(cfg, key)}")
    for key in ("ent_coef", "vf_coef"):
        if not getattr(cfg, key) >= 0:
            raise ConfigError(f"{source}: key {key!r} must be at least 0, got {getattr(cfg, key)}")
    if cfg.target_kl is not None and not cfg.target_kl > 0:
        raise ConfigError(
            f"{source}: key 'target_kl' must be positive (or null), got {cfg.target_kl}"
        )
    if cfg.num_games < cfg.num_minibatches:
        raise ConfigError(f"{source}: key 'num_minibatches' must not exceed num_games")
    if not cfg.hidden or any(h < 1 for h in cfg.hidden):
        raise ConfigError(f"{source}: key 'hidden' must list positive widths, got {cfg.hidden}")
    from spieltisch.envs import BATCHES

    if cfg.game not in BATCHES:
        raise ConfigError(
            f"{source}: key 'game' must be one of {sorted(BATCHES)}, got {cfg.game!r}"
        )
    _check_win_reward(cfg, source)
    if cfg.game == "backgammon" and cfg.game_options.get("reward", "win") != "win":
        raise ConfigError(  # (make_games plays for 'win': 'points' was silently replaced)
            f"{source}: key 'game_options.reward': PPO plays backgammon for 'win' only (the "
            f"value head predicts the chance to win), got {cfg.game_options['reward']!r}; "
            "algorithms td and alphazero learn gammons"
        )
    _check_pool_baselines_play(cfg, source, "the share of games against the pool")
    _check_eval_opponents(cfg, source)
    for key in ("pool_baselines", "eval_opponents"):
        for name in getattr(cfg, key):
            _check_agent(cfg, key, name, source)


def _check_alphazero_pool(cfg: AlphaZeroConfig, source: str) -> None:
    """Baseline games in self-play: a share in [0, 1] and baselines to play them, both or
    neither (either alone would be silently ignored); not in backgammon's own trainer."""
    if not 0.0 <= cfg.pool_prob <= 1.0:
        raise ConfigError(f"{source}: key 'pool_prob' must be in [0, 1], got {cfg.pool_prob}")
    if cfg.pool_prob > 0 and not cfg.pool_baselines:
        raise ConfigError(
            f"{source}: key 'pool_prob' {cfg.pool_prob} needs agents to play those games: "
            'set pool_baselines (e.g. ["alphabeta:depth=3"])'
        )
    _check_pool_baselines_play(cfg, source, "the share of self-play games against them")
    if cfg.pool_baselines and cfg.game == "backgammon":
        raise ConfigError(
            f"{source}: key 'pool_baselines': backgammon's AlphaZero plays self-play only"
        )
    for name in cfg.pool_baselines:
        _check_agent(cfg, "pool_baselines", name, source)


def _check_alphazero_search_size(cfg: AlphaZeroConfig, source: str) -> None:
    """Simulations within the playing agents' bound, and search trees that fit in this
    machine's memory: self-play's (``num_games`` games, HiLo times its determinizations) and
    the evaluations' (every game of an evaluation searched at once). A run that cannot hold
    them was killed by the system minutes in, after its set-up."""
    from spieltisch.agents.neural.gumbel_search import MAX_SIMULATIONS, tree_bytes
    from spieltisch.envs import perfect_information
    from spieltisch.train.ppo import make_games

    for key in ("num_simulations", "eval_simulations"):
        if getattr(cfg, key) > MAX_SIMULATIONS:
            raise ConfigError(
                f"{source}: key {key!r} must be at most {MAX_SIMULATIONS:,} (simulations per "
                f"move), got {getattr(cfg, key):,}"
            )
    if cfg.game == "backgammon":
        return  # (its own chance search: train/alphazero_backgammon.py)
    rows = 1 if perfect_information(cfg.game) else cfg.determinizations
    evaluated = max(("eval_games", "final_eval_games"), key=lambda k: getattr(cfg, k))
    searches = [("eval_simulations", "evaluation", evaluated)]  # (simulations, what, games)
    if cfg.policy_improvement == "gumbel":
        searches.insert(0, ("num_simulations", "self-play", "num_games"))
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not on this system: nothing to compare
        return
    try:
        one = make_games(cfg.game, cfg.game_options, 1)
    except (TypeError, ValueError):  # bad options: the game-options check, after the ranges,
        return  # names them (checking them here as well did that work twice)
    for key, what, games_key in searches:
        sims, games = getattr(cfg, key), getattr(cfg, games_key)
        need = tree_bytes(one, sims, games * rows) if sims else 0
        if need > memory:
            times = f" times {rows} determinizations" if rows > 1 else ""
            raise ConfigError(
                f"{source}: key {key!r}: the search trees of {games:,} {what} games{times} at "
                f"{sims:,} simulations need about {need / 2**30:,.1f} GiB, more than this "
                f"machine's {memory / 2**30:,.1f} GiB of memory (lower {key} or {games_key})"
            )


def _check_alphazero_ranges(cfg: AlphaZeroConfig, source: str) -> None:
    positive = (
        *("total_positions", "num_games", "max_turns", "num_simulations", "max_considered"),
        "determinizations",
    )
    _check_at_least_one(cfg, (*positive, "batch_size", "replay_size", "torch_threads"), source)
    for key in ("lr", "sample_reuse"):
        if getattr(cfg, key) <= 0:
            raise ConfigError(f"{source}: key {key!r} must be positive, got {getattr(cfg, key)}")
    for key in ("weight_decay", "gumbel_scale", "c_visit", "c_scale", "value_weight"):
        if getattr(cfg, key) < 0:
            raise ConfigError(f"{source}: key {key!r} must be at least 0, got {getattr(cfg, key)}")
    if cfg.eval_simulations < 0:
        raise ConfigError(f"{source}: key 'eval_simulations' must be at least 0")
    if cfg.residual_blocks < 0:
        raise ConfigError(f"{source}: key 'residual_blocks' must be at least 0")
    if not 0 <= cfg.count_bins <= 1000:
        raise ConfigError(f"{source}: key 'count_bins' must be in [0, 1000], got {cfg.count_bins}")
    if cfg.count_bins and cfg.game not in ("kalaha", "hus"):
        raise ConfigError(f"{source}: key 'count_bins' is for the stone counts of kalaha and hus")
    if cfg.features:
        from spieltisch.agents.neural.features import FEATURE_SETS

        known = FEATURE_SETS.get(cfg.features)
        if known is None or known.game != cfg.game:
            names = [name for name, f in FEATURE_SETS.items() if f.game == cfg.game]
            raise ConfigError(
                f"{source}: key 'features' {cfg.features!r} is not a feature set of "
                f"{cfg.game} (its feature sets: {names}, or '' for none)"
            )
    if cfg.lr_final is not None and not 0 < cfg.lr_final <= cfg.lr:
        raise ConfigError(f"{source}: key 'lr_final' must be in (0, lr], got {cfg.lr_final}")
    if not cfg.hidden or any(h < 1 for h in cfg.hidden):
        raise ConfigError(f"{source}: key 'hidden' must list positive widths, got {cfg.hidden}")
    if cfg.game not in ("kalaha", "hus", "hilo", "backgammon"):
        raise ConfigError(
            f"{source}: key 'game': algorithm alphazero supports kalaha, hus, hilo and "
            f"backgammon, got {cfg.game!r}"
        )
    _check_device(cfg, source)
    if cfg.temperature <= 0:
        raise ConfigError(f"{source}: key 'temperature' must be positive, got {cfg.temperature}")
    if cfg.policy_weight < 0:
        raise ConfigError(f"{source}: key 'policy_weight' must be at least 0")
    if cfg.td_steps < 0:
        raise ConfigError(f"{source}: key 'td_steps' must be at least 0, got {cfg.td_steps}")
    _check_alphazero_pool(cfg, source)
    _check_alphazero_search_size(cfg, source)
    if cfg.opening_plies < 0:
        raise ConfigError(
            f"{source}: key 'opening_plies' must be at least 0, got {cfg.opening_plies}"
        )
    if not 0.0 <= cfg.margin_weight <= 1.0:
        raise ConfigError(
            f"{source}: key 'margin_weight' must be in [0, 1], got {cfg.margin_weight}"
        )
    if not cfg.margin_scale > 0:
        raise ConfigError(f"{source}: key 'margin_scale' must be positive, got {cfg.margin_scale}")
    if cfg.margin_weight and cfg.game != "kalaha":
        raise ConfigError(
            f"{source}: key 'margin_weight' needs a game scored in stones (kalaha), not {cfg.game}"
        )
    _check_policy_improvement(cfg, source)
    _check_win_reward(cfg, source)
    _check_eval_opponents(cfg, source)
    if cfg.game == "backgammon":
        _check_backgammon_alphazero(cfg, source)
    else:
        defaults = AlphaZeroConfig()
        for key in ("temperature", "policy_weight"):
            if getattr(cfg, key) != getattr(defaults, key):
                raise ConfigError(f"{source}: key {key!r} is for game backgammon only")
        if cfg.init_checkpoint is not None:
            prefix, _, rest = cfg.init_checkpoint.partition(":")
            if prefix not in ("pretrained", "checkpoint"):
                raise ConfigError(
                    f"{source}: key 'init_checkpoint' must be pretrained:GAME[:algo=ALGO] or "
                    f"checkpoint:PATH, got {cfg.init_checkpoint!r}"
                )
            if prefix == "pretrained" and rest.partition(":")[0] != cfg.game:
                raise ConfigError(
                    f"{source}: key 'init_checkpoint' {cfg.init_checkpoint} is not a {cfg.game} "
                    f"network (pretrained:{cfg.game}[:algo=ALGO])"
                )
    for name in cfg.eval_opponents:
        _check_agent(cfg, "eval_opponents", name, source, prefixed=cfg.game == "backgammon")


def _check_policy_improvement(cfg: AlphaZeroConfig, source: str) -> None:
    """policy_improvement and alphabeta_depth: the alpha-beta searches the compiled value head
    of an MLP over a Kalaha or Hus board, the mover's value alone."""
    if cfg.policy_improvement not in ("gumbel", "alphabeta"):
        raise ConfigError(
            f"{source}: key 'policy_improvement' must be gumbel or alphabeta, got "
            f"{cfg.policy_improvement!r}"
        )
    if cfg.alphabeta_depth < 1:
        raise ConfigError(
            f"{source}: key 'alphabeta_depth' must be at least 1, got {cfg.alphabeta_depth}"
        )
    if not cfg.alphabeta_q_scale >= 0:
        raise ConfigError(
            f"{source}: key 'alphabeta_q_scale' must be at least 0, got {cfg.alphabeta_q_scale}"
        )
    if cfg.policy_improvement != "alphabeta":
        return
    if cfg.game not in ("kalaha", "hus"):
        raise ConfigError(
            f"{source}: policy_improvement alphabeta searches kalaha and hus boards, not {cfg.game}"
        )
    if cfg.residual_blocks or cfg.value_per_seat:
        raise ConfigError(
            f"{source}: policy_improvement alphabeta evaluates an MLP's single value head in "
            "compiled code: residual_blocks must be 0 and value_per_seat false"
        )


def _check_backgammon_alphazero(cfg: AlphaZeroConfig, source: str) -> None:
    """Backgammon's AlphaZero trains the TD value net in cubeless games."""
    if len(cfg.hidden) != 1:
        raise ConfigError(
            f"{source}: key 'hidden': backgammon's AlphaZero trains the TD value net, one "
            f"hidden layer: give one width (e.g. [80]), got {cfg.hidden}"
        )
    if cfg.residual_blocks:
        raise ConfigError(f"{source}: key 'residual_blocks' must be 0 for backgammon")
    if cfg.td_steps:
        raise ConfigError(
            f"{source}: key 'td_steps' must be 0 for backgammon (its value net learns from the "
            "outcome)"
        )
    if cfg.value_per_seat:
        raise ConfigError(
            f"{source}: key 'value_per_seat' is for the policy-value network; backgammon's "
            "TD value net has its own five outputs"
        )
    if cfg.opening_plies:
        raise ConfigError(
            f"{source}: key 'opening_plies' must be 0 for backgammon (the dice vary its games)"
        )
    options = cfg.game_options
    unknown = sorted(map(str, set(options) - {"cube", "reward"}))
    if unknown:
        raise ConfigError(
            f"{source}: key 'game_options': backgammon's AlphaZero takes reward (points or win) "
            f"and cube (off), got {unknown}"
        )
    if options.get("cube", False):
        raise ConfigError(f"{source}: backgammon's AlphaZero plays cubeless: game_options.cube off")
    if options.get("reward", "points") not in ("points", "win"):
        raise ConfigError(
            f"{source}: key 'game_options.reward' must be points or win, got {options['reward']!r}"
        )
    if cfg.init_checkpoint is not None:
        _check_td_net_name("init_checkpoint", cfg.init_checkpoint, source)


def _check_td_net_name(key: str, name: str, source: str) -> None:
    """A key naming a TD value net to start from: a shipped one or a checkpoint's path, bare
    or as ``checkpoint:PATH`` (the file itself is read, and checked, when the run starts)."""
    shipped = name == "pretrained:backgammon" or name.startswith("pretrained:backgammon:")
    if not name or (name.startswith("pretrained:") and not shipped):
        raise ConfigError(
            f"{source}: key {key!r} must be pretrained:backgammon[:algo=ALGORITHM] or the "
            f"path of a TD checkpoint, got {name!r}"
        )


def _check_agent(cfg: RunConfig, key: str, name: str, source: str, prefixed: bool = False) -> None:
    """An agent the config names for unattended play: no ``human``; ``prefixed`` allows
    ``pretrained:``/``checkpoint:`` names, loaded here once (a bad parameter or path found
    only at the final evaluation would end a finished run, whose config may not change)."""
    from spieltisch.agents.registry import PREFIX_AGENT_MODULES, check_agent_name, make_agent

    try:
        check_agent_name(name, cfg.game, human=False, prefixed=prefixed)
        if prefixed and name.partition(":")[0] in PREFIX_AGENT_MODULES:
            make_agent(name, cfg.game, 0, cfg.game_options)
    except ValueError as err:
        raise ConfigError(f"{source}: key {key!r}: {err}") from err


def parse_override(text: str) -> tuple[list[str], Any]:
    """``"lr=1e-3"`` -> ``(["lr"], 0.001)``; dotted keys reach into dicts (game_options.pits)."""
    try:
        key, value = parse_key_value(text, "--set overrides")
    except ValueError as err:
        raise ConfigError(str(err)) from None
    return key.split("."), value


def build_config(
    data: dict[str, Any], overrides: list[str] = (), source: str = "config"
) -> RunConfig:
    """A validated config from a dict (as read from YAML) and ``--set`` overrides."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a config must be a mapping of keys to values")
    data = copy.deepcopy(data)  # overrides reach into nested dicts: leave the caller's alone
    for text in overrides:
        path, value = parse_override(text)
        target = data
        for part in path[:-1]:
            target = target.setdefault(part, {})
            if not isinstance(target, dict):
                raise ConfigError(f"--set {text}: {part!r} is not a mapping")
        target[path[-1]] = value
    algorithm = data.get("algorithm", "ppo")
    if not isinstance(algorithm, str) or algorithm not in CONFIG_CLASSES:
        raise ConfigError(
            f"{source}: key 'algorithm' must be one of {sorted(CONFIG_CLASSES)}, got {algorithm!r}"
        )
    cls = CONFIG_CLASSES[algorithm]
    if "run_dir" not in data:  # runs/<game>_<algorithm> (a Hus config ran in runs/kalaha_ppo)
        game = data.get("game", cls.game)
        data["run_dir"] = f"runs/{game}_{algorithm}" if isinstance(game, str) else cls.run_dir
    cfg = _coerce(cls, data, source)
    _check_game_options(cfg, source)
    return cfg


def _check_game_options(cfg: RunConfig, source: str) -> None:
    """The game's own checks of ``game_options``, at config time (a wrongly typed value,
    ``pits: abc``, raised TypeError from inside the trainer, a traceback); the trainers check
    what their algorithm allows."""
    from spieltisch.envs import GAMES, check_options

    if cfg.game in GAMES:
        try:
            check_options(cfg.game, cfg.game_options)
        except ValueError as err:
            raise ConfigError(f"{source}: key 'game_options': {err}") from err
    # the trainers play on the batched engines, which ignore the env's own options: refused
    # (game_options.max_turns: 3 trained on games of up to the config's max_turns moves)
    for name, instead in _ENV_ONLY_OPTIONS.items():
        if name in cfg.game_options:
            if name == "max_turns" and not hasattr(cfg, "max_turns"):
                instead = f"algorithm {cfg.algorithm} has no limit of its own to set"
            raise ConfigError(
                f"{source}: key 'game_options.{name}' is an option of the env, which training "
                f"does not play (its batched engine ignores it): {instead}"
            )


#: env options the training games ignore, and what to do instead
_ENV_ONLY_OPTIONS = {
    "max_turns": "set the config's own key max_turns",
    "random_start": "the trainers seat the players themselves (alphazero: see opening_plies)",
    "render_mode": "training draws no boards; watch a result with spieltisch play",
    "render_view": "training draws no boards; watch a result with spieltisch play",
    "illegal_action": "the trainers mask illegal moves",
}


def load_config(path: str | os.PathLike, overrides: list[str] = ()) -> RunConfig:
    """Read a YAML config file and apply ``--set`` overrides."""
    p = Path(path)
    try:
        data = load_yaml(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"cannot read config {p}: {err}") from err
    except (yaml.YAMLError, RecursionError) as err:  # RecursionError: nested too deep
        raise ConfigError(f"config {p} is not valid YAML: {err}") from err
    if data is None:  # (it started a 2M-step run of the defaults)
        raise ConfigError(f"config {p} is empty; start from one in configs/ (e.g. kalaha_ppo.yaml)")
    return build_config(data, overrides, source=str(p))


def config_to_dict(cfg: RunConfig) -> dict[str, Any]:
    """The config as a plain dict (what the run directory and checkpoints record)."""
    return dataclasses.asdict(cfg)

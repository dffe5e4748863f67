"""Distributed self-play on Ray: rollout workers as Ray actors, the learner in the driver.

``spieltisch train CONFIG --ray`` (a local Ray instance) or ``--ray HOST:6379`` (a running
cluster, see ``docs/scaling.md``), for ``algorithm: ppo`` and ``algorithm: alphazero``. The
training loop is the trainer's own (:func:`spieltisch.train.ppo.train`,
:func:`spieltisch.train.alphazero.train`); only where an iteration's games are played changes,
through the trainer's ``collect`` hook:

1. **Broadcast.** The learner puts the current weights into Ray's object store once per
   iteration (PPO: and the opponent pool whenever it changed); every worker reads the same
   object.
2. **Rollouts.** The iteration's ``num_games`` games are split over the ``W`` workers (shares
   differ by at most one game). Worker ``i`` plays its share to the end on the batched engine,
   exactly as the single-machine trainer does (the same function: PPO's
   :func:`~spieltisch.train.ppo.play_iteration`, AlphaZero's
   :func:`~spieltisch.train.alphazero.self_play` with the search), with a generator seeded by
   a number the learner drew from the run's generator, and returns its experience.
3. **Learning.** The learner concatenates the W parts and runs the unchanged update,
   evaluation and checkpoint code; checkpoints have the single-machine format and metadata,
   and ``--resume`` works the same (also from a single-machine run and back).

**Worker failure.** A worker task that fails because its actor died (process killed, node
lost) is resubmitted to a fresh actor with the *same* seed, weights and pool, so it returns
exactly the rollout the dead worker would have: the learner never sees partial or duplicated
games, and the run continues with results identical to a run without the failure. After
``max_worker_failures`` replacements the run stops with an error.

Reproducibility: a seed and a worker count fix the run; a different worker count splits the
games differently and so gives a different (equally valid) run.
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
import torch
from spieltisch.agents.neural.gumbel_search import policy_evaluator
from spieltisch.agents.neural.policy import PolicyArch, PolicyNet
from spieltisch.train.alphazero import merge_self_play, self_play, self_play_search
from spieltisch.train.config import AlphaZeroConfig, PPOConfig, RunConfig
from spieltisch.train.opponents import scripted_opponents
from spieltisch.train.ppo import Rollout, TrainerState, make_games, play_iteration, pool_opponents


class RolloutWorker:
    """Plays a share of a PPO iteration's games (a Ray actor; also usable in-process)."""

    def __init__(self, cfg: PPOConfig, arch: dict[str, Any], num_games: int) -> None:
        torch.set_num_threads(cfg.torch_threads)
        self.cfg = cfg
        self.arch = PolicyArch.from_json(arch)
        self.games = make_games(cfg.game, cfg.game_options, num_games)
        self.net = PolicyNet(self.arch)
        self.pool_version = -1
        self.opponents: list[Any] = []
        self.baselines = scripted_opponents(cfg)

    def pid(self) -> int:
        return os.getpid()

    def play(
        self,
        weights: dict[str, torch.Tensor],
        seed: int,
        pool_version: int,
        pool: list[dict[str, torch.Tensor] | None],
    ) -> tuple[Rollout, float]:
        """The rollout of this worker's games; (rollout, seconds spent playing)."""
        t0 = time.perf_counter()
        self.net.load_state_dict(weights)
        if pool_version != self.pool_version:
            self.opponents = pool_opponents(self.arch, pool, self.baselines)
            self.pool_version = pool_version
        rng = np.random.default_rng(seed)
        for baseline in self.baselines:
            baseline.reseed(rng)
        rollout = play_iteration(self.cfg, self.games, self.net, self.opponents, rng)
        return rollout, time.perf_counter() - t0


class SelfPlayWorker:
    """Plays a share of a Gumbel AlphaZero iteration's games with the search (a Ray actor; also
    usable in-process)."""

    def __init__(self, cfg: AlphaZeroConfig, arch: dict[str, Any], num_games: int) -> None:
        torch.set_num_threads(cfg.torch_threads)
        self.cfg = cfg
        self.games = make_games(cfg.game, cfg.game_options, num_games)
        self.net = PolicyNet(PolicyArch.from_json(arch))
        self.net.eval()
        self.search = self_play_search(cfg, self.net)
        self.evaluate = policy_evaluator(self.net, self.games.num_players, "cpu")
        self.baselines = scripted_opponents(cfg)

    def pid(self) -> int:
        return os.getpid()

    def play(
        self, weights: dict[str, torch.Tensor], seed: int
    ) -> tuple[tuple[dict[str, np.ndarray], dict[str, float]], float]:
        """(the positions with their targets and the statistics, seconds spent playing)"""
        t0 = time.perf_counter()
        self.net.load_state_dict(weights)
        rng = np.random.default_rng(seed)
        part = self_play(self.cfg, self.games, self.search, self.evaluate, rng, self.baselines)
        return part, time.perf_counter() - t0


def split_games(num_games: int, workers: int) -> list[int]:
    """``num_games`` in ``workers`` shares differing by at most one (earlier shares larger)."""
    if workers < 1:
        raise ValueError(f"need at least one rollout worker, got {workers}")
    if num_games < workers:
        raise ValueError(f"num_games={num_games} cannot be split over {workers} workers")
    base, extra = divmod(num_games, workers)
    return [base + (i < extra) for i in range(workers)]


def merge_rollouts(parts: list[Rollout]) -> Rollout:
    """The rollouts of all workers as one (in worker order)."""
    cat = {
        name: np.concatenate([getattr(p, name) for p in parts])
        for name in (
            "obs",
            "mask",
            "actions",
            "logp",
            "values",
            "advantages",
            "returns",
            "learner_results",
        )
    }
    return Rollout(
        **cat,
        games_played=sum(p.games_played for p in parts),
        moves_played=sum(p.moves_played for p in parts),
    )


class RayCollector:
    """Plays each iteration's games on Ray actors: the ``collect(net, state)`` hook of the PPO
    and AlphaZero trainers (which part is which: :meth:`shared_args` and :meth:`merge`).

    ``on_submit(iteration, collector)`` is called once the tasks of an iteration are in flight
    (tests use it to kill a worker process, ``collector.pids[i]``, mid-run).
    """

    def __init__(
        self,
        cfg: RunConfig,
        num_workers: int,
        cpus_per_worker: float = 1.0,
        max_worker_failures: int = 20,
        on_submit: Any = None,
        log: Any = print,
    ) -> None:
        import ray

        self.ray = ray
        self.cfg = cfg
        self.shares = split_games(cfg.num_games, num_workers)
        worker_cls = SelfPlayWorker if cfg.algorithm == "alphazero" else RolloutWorker
        self.actor_cls = ray.remote(num_cpus=cpus_per_worker, max_restarts=0)(worker_cls)
        self.workers: list[Any] = []
        #: process id of each worker (tests kill them)
        self.pids: list[int] = []
        self.max_worker_failures = max_worker_failures
        self.failures = 0
        self.on_submit = on_submit
        self.log = log
        self._pool_obj: Any = None
        self._pool_ref: Any = None
        self._pool_version = 0
        self.play_seconds: list[float] = []

    def shared_args(self, state: Any) -> tuple[Any, ...]:
        """What every worker gets besides the weights and its seed: PPO's opponent pool (put
        into the object store only when ``ppo.train`` replaced the list); nothing for
        AlphaZero, whose self-play games are all searched by the current network."""
        if self.cfg.algorithm == "alphazero":
            return ()
        if state.pool is not self._pool_obj:
            self._pool_obj = state.pool
            self._pool_ref = self.ray.put(list(state.pool))
            self._pool_version += 1
        return (self._pool_version, self._pool_ref)

    def merge(self, parts: list[Any]) -> Any:
        """The workers' parts as the trainer's local play would have returned them."""
        if self.cfg.algorithm == "alphazero":
            return merge_self_play(parts)
        return merge_rollouts(parts)

    def _new_worker(self, i: int, arch: dict[str, Any]) -> Any:
        worker = self.actor_cls.remote(self.cfg, arch, self.shares[i])
        if i < len(self.workers):
            self.workers[i] = worker
        else:
            self.workers.append(worker)
        return worker

    def __call__(self, net: PolicyNet, state: TrainerState | Any) -> Any:
        ray = self.ray
        arch = net.arch.to_json()
        if not self.workers:
            for i in range(len(self.shares)):
                self._new_worker(i, arch)
            self.pids = [0] * len(self.workers)
            for i in range(len(self.workers)):
                self._started(i, arch)
        shared = self.shared_args(state)
        weights = ray.put({k: v.detach().cpu().clone() for k, v in net.state_dict().items()})
        seeds = [int(s) for s in state.rng.integers(0, 2**63, size=len(self.workers))]

        def submit(i: int) -> Any:
            return self.workers[i].play.remote(weights, seeds[i], *shared)

        pending = {submit(i): i for i in range(len(self.workers))}
        if self.on_submit is not None:
            self.on_submit(state.iteration, self)
        results: dict[int, tuple[Any, float]] = {}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            i = pending.pop(done[0])
            try:
                results[i] = ray.get(done[0])
            except ray.exceptions.RayActorError as err:
                self._failed(i, err)
                self._new_worker(i, arch)
                self._started(i, arch)
                pending[submit(i)] = i  # same seed, weights and pool: the same games
        self.play_seconds = [results[i][1] for i in range(len(self.workers))]
        return self.merge([results[i][0] for i in range(len(self.workers))])

    def _failed(self, i: int, err: Exception) -> None:
        self.failures += 1
        if self.failures > self.max_worker_failures:
            raise RuntimeError(f"{self.failures} rollout worker failures; giving up") from err
        self.log(f"rollout worker {i} died ({type(err).__name__}); replacing it")

    def _started(self, i: int, arch: dict[str, Any]) -> None:
        """Wait until worker ``i`` runs (record its pid); a worker that dies while starting is
        replaced too."""
        while True:
            try:
                self.pids[i] = self.ray.get(self.workers[i].pid.remote())
                return
            except self.ray.exceptions.RayActorError as err:
                self._failed(i, err)
                self._new_worker(i, arch)

    def shutdown(self) -> None:
        for w in self.workers:
            self.ray.kill(w)
        self.workers = []


def init_ray(address: str | None, num_cpus: int | None = None) -> bool:
    """Connect to the Ray cluster at ``address`` or start a local instance (``None`` or
    ``"local"``); returns whether this call started Ray (and so should shut it down)."""
    import ray

    if ray.is_initialized():
        return False
    if address not in (None, "", "local", "auto"):
        check_reachable(address)
    if address in (None, "", "local"):
        # "local": a new instance even if `ray start` left a cluster running on this machine
        ray.init(address="local", num_cpus=num_cpus, include_dashboard=False)
    else:
        ray.init(address=address)
    return True


def check_reachable(address: str, timeout: float = 5.0) -> None:
    """Raise ValueError unless ``HOST:PORT`` accepts a TCP connection: ``ray.init`` retries an
    unreachable address for minutes, printing only Ray's own warnings. Other forms (``ray://``
    client addresses) are left to Ray."""
    import socket

    host, sep, port = address.rpartition(":")
    if "://" in address or not sep or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as err:
        raise ValueError(
            f"no Ray cluster at {address} ({err.strerror or err}); start one with "
            "'ray start --head --port=6379' or drop the address for a local instance"
        ) from None


def default_workers() -> int:
    """One rollout worker per CPU of the cluster, less one for the learner (at least one)."""
    import ray

    return max(1, int(ray.cluster_resources().get("CPU", 1)) - 1)


def train_on_ray(
    cfg: PPOConfig | AlphaZeroConfig,
    resume: bool = False,
    address: str | None = None,
    num_workers: int | None = None,
    cpus_per_worker: float = 1.0,
    num_cpus: int | None = None,
    on_submit: Any = None,
    log: Any = print,
    overwrite: bool = False,
) -> dict[str, Any]:
    """The config's trainer (PPO or Gumbel AlphaZero) with the games played by Ray rollout
    workers."""
    if cfg.algorithm == "alphazero" and cfg.game == "backgammon":
        raise ValueError("--ray is not supported for backgammon's AlphaZero (drop --ray)")
    try:
        import ray
    except ImportError:  # the CLI reports a ValueError as a usage error, without a traceback
        raise ValueError("--ray needs Ray: pip install -e '.[ray]'") from None

    if cfg.algorithm == "alphazero":
        from spieltisch.train.alphazero import train
    elif cfg.algorithm == "ppo":
        from spieltisch.train.ppo import train
    else:
        raise ValueError(f"--ray supports algorithms ppo and alphazero, not {cfg.algorithm!r}")

    started = init_ray(address, num_cpus)
    try:
        workers = num_workers or default_workers()
        cpus = ray.cluster_resources().get("CPU", 0)
        if workers * cpus_per_worker > cpus:
            log(
                f"warning: {workers} workers x {cpus_per_worker} CPU exceed the cluster's "
                f"{cpus:.0f} CPUs; the run waits until Ray can place them"
            )
        collector = RayCollector(cfg, workers, cpus_per_worker, on_submit=on_submit, log=log)
        log(
            f"Ray: {workers} rollout workers on {ray.cluster_resources().get('CPU', 0):.0f} "
            f"CPUs in {len(ray.nodes())} node(s)"
        )
        try:
            result = train(cfg, resume=resume, log=log, collect=collector, overwrite=overwrite)
        finally:
            collector.shutdown()
        result["ray"] = {"workers": workers, "worker_failures": collector.failures}
        return result
    finally:
        if started:
            ray.shutdown()

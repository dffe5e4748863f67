"""The files of a run directory, in one place for all trainers (the run loop,
:mod:`spieltisch.train.run_loop`, writes them).

``run_dir/config.resolved.json`` (the config as run), ``run_dir/checkpoints/`` (training
checkpoints, each its metadata ``<name>.json`` written last, and ``latest.txt``: the name of the
newest one, written after the checkpoint itself), ``run_dir/tb/`` (TensorBoard),
``run_dir/best.*``, ``run_dir/final.*``, ``run_dir/final_eval.json`` and
``run_dir/resources.json`` (what the run cost, session by session: :class:`ResourceLedger`).

One directory holds one run: :func:`check_run_dir` refuses to start a run in a directory that
holds another (``--resume`` continues it, ``--overwrite`` removes its files first, see
:func:`remove_run_files`). A run killed at any moment leaves a complete checkpoint to resume
from: every file is written atomically (:mod:`spieltisch.agents.files`), and
:func:`latest_checkpoint` falls back to the newest complete checkpoint if ``latest.txt`` names an
incomplete one or is missing.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from spieltisch.agents.arena.provenance import (
    cpu_seconds,
    git_revision,
    load_average,
    peak_rss_gib,
)
from spieltisch.agents.files import write_text_atomic
from spieltisch.agents.neural.checkpoint import Checkpoint, CheckpointError, load_checkpoint
from spieltisch.train.config import config_to_dict

RESOURCES = "resources.json"
#: files of a run directory the run loop writes, besides checkpoints/ and tb/
RUN_FILES = (
    "config.resolved.json",
    "best.json",
    "best.safetensors",
    "final.json",
    "final.safetensors",
    "final_eval.json",
    RESOURCES,
    "curves.png",  # (train/curves.py)
)
#: the directories of a run: training checkpoints and TensorBoard logs
RUN_DIRS = ("checkpoints", "tb")
POINTER = "latest.txt"


class RunDirError(CheckpointError):
    """A run directory holds another run, or its run does not fit the config it is resumed
    with; the message names the directory and what to do."""


def checkpoint_dir(run_dir: Path) -> Path:
    """Where the training checkpoints of ``run_dir`` go."""
    return run_dir / "checkpoints"


def checkpoint_complete(path: Path) -> bool:
    """Whether the training checkpoint ``path`` (without suffix) was written completely: its
    metadata (written last) reads as JSON and the weights it names, if any, exist. Damage
    inside the weights is found when the checkpoint is loaded."""
    try:
        meta = json.loads(path.with_suffix(".json").read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return False
    if isinstance(meta, dict) and "weights_sha256" in meta:
        return path.with_suffix(".safetensors").exists()
    return isinstance(meta, dict)


def latest_checkpoint(run_dir: Path, warn: Callable[[str], Any] | None = None) -> Path | None:
    """The newest training checkpoint of ``run_dir`` (without suffix), or None if there is no
    complete one: the one ``latest.txt`` names, or, if that is missing or incomplete (a run
    killed while writing), the newest complete one in the directory (``warn`` says so)."""
    ckpt_dir = checkpoint_dir(run_dir)
    pointer = ckpt_dir / POINTER
    named = None
    if pointer.exists():
        named = ckpt_dir / pointer.read_text().strip()
        if checkpoint_complete(named):
            return named
    complete = complete_checkpoints(run_dir)
    if not complete:
        return None
    if warn is not None:
        what = f"{pointer} names {named.name}, which is incomplete" if named else f"no {pointer}"
        warn(f"warning: {what}; using the newest complete checkpoint, {complete[0].name}")
    return complete[0]


def record_checkpoint(ckpt_dir: Path, name: str, keep: int) -> None:
    """Point ``latest.txt`` at the just-saved checkpoint ``name`` and delete all but the newest
    ``keep`` checkpoints with the same prefix (``step_``, ``games_``), never ``name`` itself."""
    write_text_atomic(ckpt_dir / POINTER, name + "\n")
    prefix = name.rsplit("_", 1)[0]
    older = [p for p in sorted(ckpt_dir.glob(f"{prefix}_*.json")) if p.stem != name]
    for old in older[: max(0, len(older) - (keep - 1))]:
        old.unlink()  # the JSON first: a pair without it is never loaded
        old.with_suffix(".safetensors").unlink(missing_ok=True)


def run_files(run_dir: Path) -> list[Path]:
    """The files of a run in ``run_dir`` (see the module docstring), leftover temporary files of
    its atomic writes included; empty if it holds none."""
    found = [run_dir / name for name in RUN_FILES if (run_dir / name).exists()]
    found += sorted(run_dir.glob(".*.tmp"))  # a write killed before its rename
    ckpt_dir, tb_dir = checkpoint_dir(run_dir), run_dir / "tb"
    for pattern in (POINTER, "*.json", "*.safetensors", ".*.tmp"):
        found += sorted(ckpt_dir.glob(pattern))
    found += sorted(tb_dir.glob("events.out.tfevents.*"))
    return found


def _describe(run_dir: Path, files: list[Path]) -> str:
    """``config.resolved.json, checkpoints/, tb/, ...``: the top-level names of ``files``."""
    names: list[str] = []
    for f in files:
        top = f.relative_to(run_dir).parts[0]
        name = f"{top}/" if top in RUN_DIRS else top
        if name not in names:
            names.append(name)
    return ", ".join(names)


def complete_checkpoints(run_dir: Path) -> list[Path]:
    """The complete training checkpoints of ``run_dir`` (without suffix), newest first (names
    are zero-padded counters, step_0000012800: the newest sorts last)."""
    names = sorted(checkpoint_dir(run_dir).glob("*.json"), reverse=True)
    return [p.with_suffix("") for p in names if checkpoint_complete(p.with_suffix(""))]


def remove_leftover_temporaries(run_dir: Path) -> list[Path]:
    """Delete the temporary files that writes killed before their rename left in ``run_dir``
    (``.*.tmp``; only while no other process writes there); returns them."""
    leftovers = sorted(run_dir.glob(".*.tmp")) + sorted(checkpoint_dir(run_dir).glob(".*.tmp"))
    for path in leftovers:
        path.unlink(missing_ok=True)
    return leftovers


class RunDirBusy(RunDirError):
    """Another process is training in the run directory."""


@contextlib.contextmanager
def run_dir_lock(run_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``run_dir`` (the directory itself: no file is added) while a
    run writes there; :class:`RunDirBusy` if another process holds it (two processes in one
    run directory delete each other's checkpoints). Released when the process ends, however."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        yield
        return
    fd = os.open(run_dir, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunDirBusy(
                f"another process is training in {run_dir}; wait for it to end (or stop it) "
                "before --resume or --overwrite there"
            ) from None
        yield
    finally:
        os.close(fd)


def check_run_dir(run_dir: Path, resume: bool, overwrite: bool, log: Callable[[str], Any]) -> None:
    """Make sure a run started in ``run_dir`` mixes with no other run: without ``resume`` a
    directory holding a run's files is an error (:class:`RunDirError` naming the choices), unless
    ``overwrite``, which removes those files first."""
    if resume and overwrite:
        raise ValueError(
            "--resume continues the run in run_dir, --overwrite starts it over: not both"
        )
    if resume:
        return
    files = run_files(run_dir)
    if not files:
        return
    if overwrite:
        remove_run_files(run_dir)
        log(f"--overwrite: removed the earlier run in {run_dir} ({_describe(run_dir, files)})")
        return
    latest = latest_checkpoint(run_dir)
    resume_choice = (
        f"--resume to continue it (from checkpoints/{latest.name})"
        if latest is not None
        else "--resume is not possible (it has no complete checkpoint)"
    )
    raise RunDirError(
        f"run_dir {run_dir} already holds a run ({_describe(run_dir, files)}); a new run there "
        f"would mix with it. Choose: {resume_choice}; --overwrite to start over (removes that "
        "run's files first); or another directory (--set run_dir=DIR)"
    )


def remove_run_files(run_dir: Path) -> None:
    """Remove the files of the run in ``run_dir`` (:func:`run_files`; nothing else), and its
    ``checkpoints/`` and ``tb/`` directories if that leaves them empty."""
    for path in run_files(run_dir):
        path.unlink(missing_ok=True)
    for name in RUN_DIRS:
        directory = run_dir / name
        if directory.is_dir() and not any(directory.iterdir()):
            directory.rmdir()


def config_changes(saved: dict[str, Any], cfg: Any, resumable: set[str] | frozenset[str]) -> str:
    """The keys (outside ``resumable``) whose values in ``saved`` (a config as recorded) differ
    from ``cfg``'s, as ``config keys ['lr'] differ (lr=0.001 in the run, 0.5 now)``; empty if
    none (a key ``saved`` lacks, recorded by an older version, is taken as unchanged)."""
    now = config_to_dict(cfg)
    changed = sorted(k for k in now if k not in resumable and saved.get(k, now[k]) != now[k])
    if not changed:
        return ""
    values = ", ".join(f"{k}={saved.get(k)!r} in the run, {now[k]!r} now" for k in changed)
    return f"config keys {changed} differ from the run's ({values})"


def recorded_config(run_dir: Path) -> dict[str, Any] | None:
    """The config the run in ``run_dir`` ran with (``config.resolved.json``; None if there is
    none); :class:`RunDirError` if it is damaged."""
    recorded = run_dir / "config.resolved.json"
    if not recorded.exists():
        return None
    try:
        saved = json.loads(recorded.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise RunDirError(
            f"cannot resume the run in {run_dir}: {recorded} is damaged: {err}"
        ) from err
    return saved if isinstance(saved, dict) else {}


def check_resumed_config(
    run_dir: Path, cfg: Any, resumable: set[str] | frozenset[str]
) -> dict[str, Any] | None:
    """Refuse to resume the run in ``run_dir`` with a config that differs from the one it ran
    with (``config.resolved.json``) in keys outside ``resumable``: :class:`RunDirError` naming
    them. Returns that config (None if there is none)."""
    saved = recorded_config(run_dir)
    if saved is None:
        return None  # the checkpoint's own config is checked when it is restored
    changes = config_changes(saved, cfg, resumable)
    if changes:
        raise RunDirError(
            f"cannot resume the run in {run_dir}: {changes}; only {sorted(resumable)} may change "
            "on --resume (start a new run with another run_dir, or --overwrite this one)"
        )
    return saved


def load_training_checkpoint(path: Path, cfg: Any, resumable: set[str]) -> Checkpoint:
    """The training checkpoint at ``path`` for resuming a run of ``cfg``; raises
    :class:`CheckpointError` if it holds no trainer state or was written with config values
    that change learning (keys outside ``resumable``)."""
    ckpt = load_checkpoint(path, cfg.game)
    meta = ckpt.meta
    if meta.get("kind") != "training" or "trainer" not in meta:
        raise CheckpointError(f"{path} is not a training checkpoint (no trainer state)")
    changes = config_changes(meta["config"], cfg, resumable)
    if changes:
        raise CheckpointError(f"cannot resume {path}: {changes}")
    return ckpt


def write_resolved_config(run_dir: Path, cfg: Any) -> None:
    write_text_atomic(
        run_dir / "config.resolved.json", json.dumps(config_to_dict(cfg), indent=2) + "\n"
    )


def optimizer_tensors(optimizer: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A torch optimizer's state as checkpoint tensors ``optim.<param>.<name>`` (on the CPU)
    and its parameter groups (JSON); :func:`restore_optimizer` reads both back."""
    import torch

    opt = optimizer.state_dict()
    tensors = {
        f"optim.{idx}.{name}": (v if torch.is_tensor(v) else torch.tensor(v)).cpu()
        for idx, state in opt["state"].items()
        for name, v in state.items()
    }
    return tensors, opt["param_groups"]


def restore_optimizer(
    optimizer: Any, tensors: dict[str, Any], param_groups: list[dict[str, Any]]
) -> None:
    """Load what :func:`optimizer_tensors` gave (torch moves the state to the parameters'
    device)."""
    state: dict[str, Any] = {"state": {}, "param_groups": param_groups}
    for key, value in tensors.items():
        if key.startswith("optim."):
            _, idx, name = key.split(".", 2)
            state["state"].setdefault(int(idx), {})[name] = value
    optimizer.load_state_dict(state)


def _load_average() -> list[float] | None:
    """:func:`load_average`, rounded for the ledger."""
    loads = load_average()
    return None if loads is None else [round(x, 2) for x in loads]


def session_clock() -> tuple[float, float]:
    """``(time.perf_counter(), cpu_seconds())`` now: where a :class:`ResourceLedger` session
    starts counting."""
    return time.perf_counter(), cpu_seconds()


class ResourceLedger:
    """What a run cost, one entry per session (a start or a ``--resume``), in
    ``run_dir/resources.json``: the command, the git revision, the machine's cores and load
    average, and the session's wall and CPU seconds (this process, its threads and the worker
    processes it waited for; not Ray's workers), peak resident memory and the progress units it
    covered (``unit``, ``units_start``, ``units_end``); ``total`` sums the sessions (the peak
    is their maximum). A session counts from ``started`` (:func:`session_clock` when the
    trainer was built) if given.

    :meth:`record` rewrites the file (atomically) as each checkpoint is written and at the
    end, so a killed session counts at least up to its last checkpoint, the point its run
    resumes from (up to the one it was writing if killed while writing it). A resumed
    run keeps the sessions before it (``warn`` says so when its ledger is missing or unreadable,
    and the count starts with this session); a new one starts an empty ledger.
    """

    def __init__(
        self,
        run_dir: Path,
        resume: bool,
        units: int,
        unit: str,
        warn: Callable[[str], Any] | None = None,
        started: tuple[float, float] | None = None,
    ) -> None:
        self.path = run_dir / RESOURCES
        self.sessions: list[dict[str, Any]] = []
        if resume:
            try:
                self.sessions = list(json.loads(self.path.read_text())["sessions"])
            except (OSError, ValueError, KeyError, TypeError) as err:
                # a run from before the ledger, or a damaged file: count from this session on
                if warn is not None:
                    why = "missing" if isinstance(err, FileNotFoundError) else "unreadable"
                    warn(
                        f"warning: {self.path} is {why}; the run's cost is counted from this "
                        "session on"
                    )
        # started: (perf_counter, cpu_seconds) when the session began (the trainer's build:
        # compiling kernels, loading nets), else now
        self._wall0, self._cpu0 = started or session_clock()
        self.current: dict[str, Any] = {
            "command": shlex.join(sys.argv),
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
            "git_revision": git_revision(short=True),
            "cpu_count": os.cpu_count(),
            "load_average_start": _load_average(),
            "unit": unit,  # what the progress bar counts: step, pos, game, ...
            "units_start": units,
        }

    def record(self, units: int) -> dict[str, Any]:
        """Bring this session's entry up to date (``units``: the run's progress now), write the
        file and return its contents."""
        self.current.update(
            {
                "units_end": units,
                "wall_seconds": round(time.perf_counter() - self._wall0, 1),
                "cpu_seconds": round(cpu_seconds() - self._cpu0, 1),
                "peak_rss_gib": peak_rss_gib(),
                "load_average_end": _load_average(),
            }
        )
        sessions = [*self.sessions, self.current]
        ledger = {
            "sessions": sessions,
            "total": {
                "sessions": len(sessions),
                "wall_seconds": round(sum(s["wall_seconds"] for s in sessions), 1),
                "cpu_seconds": round(sum(s["cpu_seconds"] for s in sessions), 1),
                "peak_rss_gib": max(s["peak_rss_gib"] for s in sessions),
            },
        }
        write_text_atomic(self.path, json.dumps(ledger, indent=2) + "\n")
        return ledger


def run_resources(path: Path | str) -> dict[str, Any] | None:
    """The :class:`ResourceLedger` of the run that ``path`` belongs to (its run directory, or a
    policy or checkpoint in it, e.g. ``run_dir/final`` or ``run_dir/checkpoints/step_...``);
    None if that run has no ledger (e.g. it predates it)."""
    path = Path(path)
    for run_dir in (path, path.parent, path.parent.parent):
        ledger = run_dir / RESOURCES
        if ledger.is_file():
            return json.loads(ledger.read_text())
    return None

"""Arena games in worker processes, watched: a move past its time limit gets its worker killed.

Each worker plays one game after another and marks every agent move on a
:class:`SharedMoveClock` (the seat to move, when the move started, its limit, the moves played).
The parent process (:func:`run_watched`) collects the results and reads the clocks between
them; a move past its limit (plus :data:`KILL_MARGIN`) gets its worker killed (``SIGKILL``:
nothing an agent does, a numba loop or a blocking call, can hold it up), the game is scored as
lost by that agent, and a new worker, forked from the parent again, plays on. A worker that dies
during a move (a crash in native code, ``os._exit``) loses the game for the agent that was
moving the same way.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import time
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, NamedTuple

# Workers are forked where the platform can: they inherit the parent's compiled numba code and
# its agents, already warmed up by the first game (see evaluation.play_table).
CAN_FORK = "fork" in multiprocessing.get_all_start_methods()
# How long past its limit a move may run before its worker is killed, and how often the clocks
# are read (seconds).
KILL_MARGIN = 0.05
POLL = 0.02
# Tasks handed to a worker ahead, so that it never waits for the next one.
AHEAD = 2


class MoveInProgress(NamedTuple):
    """What a clock says about the move being made: the seat to move, when the move started
    (``time.monotonic()``), its limit in seconds (0: none), the moves played before it and what
    losing the game by forfeit costs (backgammon's cube)."""

    seat: int
    started: float
    limit: float
    moves: int
    stake: float = 1.0

    def over(self, now: float) -> bool:
        return self.limit > 0 and now - self.started > self.limit + KILL_MARGIN


class SharedMoveClock:
    """A move clock in shared memory: written by one worker, read by the parent.

    Lock-free (a killed worker must not leave a lock held): ``start`` writes the start time
    last and ``stop`` clears it first; a reader that sees the same start time before and after
    reading the other fields has read one move's values (start times never repeat).
    """

    def __init__(self, context: Any) -> None:
        self._values = context.RawArray("d", 5)  # started, seat, limit, moves, stake

    def start(self, seat: int, limit: float, moves: int, stake: float = 1.0) -> None:
        v = self._values
        v[1], v[2], v[3], v[4] = seat, limit, moves, stake
        v[0] = time.monotonic()

    def stop(self) -> None:
        self._values[0] = 0.0

    def read(self) -> MoveInProgress | None:
        """The move in progress, or None between moves."""
        v = self._values
        for _ in range(100):
            started = v[0]
            if started == 0.0:
                return None
            seat, limit, moves, stake = v[1], v[2], v[3], v[4]
            if v[0] == started:
                return MoveInProgress(int(seat), started, limit, int(moves), stake)
        return None


def worker_init() -> None:
    """Runs first in every worker. A torch thread pool inherited through fork is unusable (the
    first parallel op would wait forever): the worker keeps torch on its own thread, which is
    also right when every core runs a worker."""
    import sys

    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(1)


def _worker_main(
    conn: Connection,
    clock: SharedMoveClock,
    make_player: Callable[[SharedMoveClock], Callable[[Any], Any]],
    parent_ends: Sequence[Connection] = (),
) -> None:
    """A worker: builds its player, then plays the tasks it receives until it receives None,
    or until the parent is gone (its end of the pipe closed: EOF). ``parent_ends``: the
    parent's ends of the workers' pipes, which a forked worker holds copies of; they are closed
    first, or the worker's own copy would keep its pipe open after the parent is killed, and it
    would wait for a task forever."""
    for end in parent_ends:
        end.close()
    worker_init()
    try:
        player = make_player(clock)
        while (task := conn.recv()) is not None:
            conn.send(("result", player(task)))
    except (EOFError, BrokenPipeError):  # the parent is gone
        return
    except BaseException:
        with contextlib.suppress(OSError):  # (the parent may be gone too)
            conn.send(("error", traceback.format_exc()))


@dataclass
class _Worker:
    process: Any
    conn: Connection
    clock: SharedMoveClock
    tasks: deque = field(default_factory=deque)  # handed out, results not yet back

    def stop(self, kill: bool) -> None:
        if kill:
            self.process.kill()
        else:
            with contextlib.suppress(OSError):  # a worker that is gone needs no message
                self.conn.send(None)
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()
        self.conn.close()


def run_watched(
    tasks: Sequence[Any],
    make_player: Callable[[SharedMoveClock], Callable[[Any], Any]],
    workers: int,
    lost_move: Callable[[Any, MoveInProgress, str], Any],
    on_result: Callable[[Any], bool],
) -> list[Any]:
    """Play ``tasks`` in ``workers`` watched processes; returns the results (in the order they
    came).

    ``make_player(clock)`` runs in each worker and returns the function that plays one task
    there, marking its agents' moves on ``clock``. ``lost_move(task, move, why)`` builds the
    result of a task whose worker was killed past a move's limit (``why`` = ``"time_limit"``)
    or died during a move (``why`` = ``"died (exit code N)"``). ``on_result(result)`` sees every
    result as it comes; returning True stops early (the workers are killed). A worker that fails
    or dies outside an agent's move raises RuntimeError.
    """
    context = multiprocessing.get_context("fork" if CAN_FORK else None)
    pending = deque(tasks)
    results: list[Any] = []
    pool: list[_Worker] = []

    def start() -> None:
        parent, child = context.Pipe()
        clock = SharedMoveClock(context)
        inherited = [parent, *(w.conn for w in pool)] if CAN_FORK else []
        process = context.Process(
            target=_worker_main, args=(child, clock, make_player, inherited), daemon=True,
            name="spieltisch-arena-worker",
        )  # fmt: skip
        process.start()
        child.close()
        pool.append(_Worker(process, parent, clock))

    def hand_out(worker: _Worker) -> None:
        while pending and len(worker.tasks) < AHEAD:
            task = pending.popleft()
            worker.conn.send(task)
            worker.tasks.append(task)

    def replace(worker: _Worker) -> None:
        """``worker`` was killed or died: its other tasks go back, a new worker takes over."""
        pool.remove(worker)
        pending.extendleft(reversed(worker.tasks))
        worker.tasks.clear()
        worker.stop(kill=True)
        if pending:
            start()
            hand_out(pool[-1])

    try:
        for _ in range(min(max(1, workers), len(pending))):
            start()
        for worker in pool:
            hand_out(worker)
        while any(w.tasks for w in pool):
            busy = [w for w in pool if w.tasks]
            ready = set(wait([w.conn for w in busy], timeout=POLL))
            now = time.monotonic()
            for worker in busy:
                if worker.conn in ready:
                    try:
                        kind, payload = worker.conn.recv()
                    except (EOFError, OSError):
                        worker.process.join(5)
                        move = worker.clock.read()
                        if move is None:
                            raise RuntimeError(
                                f"an arena worker process died (exit code "
                                f"{worker.process.exitcode}) outside an agent's move"
                            ) from None
                        result = lost_move(
                            worker.tasks.popleft(), move,
                            f"died (exit code {worker.process.exitcode})",
                        )  # fmt: skip
                        replace(worker)
                    else:
                        if kind == "error":
                            raise RuntimeError(f"an arena worker process failed:\n{payload}")
                        worker.tasks.popleft()
                        result = payload
                        hand_out(worker)
                elif (
                    (move := worker.clock.read()) is not None
                    and move.over(now)
                    and not worker.conn.poll()  # a result that came in meanwhile goes first
                ):
                    result = lost_move(worker.tasks.popleft(), move, "time_limit")
                    replace(worker)
                else:
                    continue
                results.append(result)
                if on_result(result):
                    return results
        return results
    finally:
        for worker in pool:
            worker.stop(kill=bool(worker.tasks))

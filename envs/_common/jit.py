"""Calling numba kernels from Python with as little overhead as possible."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

import numba

T = TypeVar("T")


def direct_entry(kernel: numba.core.registry.CPUDispatcher, *example_args: object) -> Callable:
    """The compiled entry point of ``kernel`` for the argument types of ``example_args``.

    A numba dispatcher resolves the argument types on every call (about 0.4 microseconds, which
    is most of the cost of one Kalaha move). The entry point of one compiled signature skips that
    step, so callers must pass exactly those types (our engines keep their boards in one dtype).
    The example call must be harmless (pass throwaway arrays). Falls back to the dispatcher
    itself if numba's internals ever change.
    """
    kernel(*example_args)  # compiles, or loads the compiled code from numba's on-disk cache
    signature = tuple(numba.typeof(a) for a in example_args)
    try:
        return kernel.overloads[signature].entry_point
    except (AttributeError, KeyError):
        return kernel


def wait_for(done: threading.Event) -> None:
    """Wait for a worker that was told to stop (a kernel that looks at its stop flag returns
    soon); further Ctrl-Cs do not leave it running unobserved. (Not ``Thread.join``: in Python
    3.11 a join interrupted by Ctrl-C marks the thread as finished although it still runs.)"""
    while True:
        try:
            while not done.wait(0.5):
                pass
            return
        except KeyboardInterrupt:
            continue


def call_interruptibly(call: Callable[[], T], stop: Callable[[], None]) -> T:
    """``call()``, a compiled kernel that releases the GIL (``nogil=True``), run in a worker
    thread while this one waits: a kernel called directly holds the calling thread until it
    returns, so Ctrl-C did nothing during a long search. On Ctrl-C, ``stop()`` tells the kernel
    to return early (e.g. sets its node budget to nothing), and once it has, KeyboardInterrupt
    is raised; what the kernel raises is raised here. Compile the kernel before (a compile in
    the worker could not be interrupted)."""
    box: list = []
    done = threading.Event()

    def work() -> None:
        try:
            box.append(call())
        except BaseException as err:  # handed to the calling thread
            box.append(err)
        finally:
            done.set()

    worker = threading.Thread(target=work, name="kernel", daemon=True)
    try:
        worker.start()
        while not done.wait(0.5):
            pass
    except BaseException:  # Ctrl-C (or anything else): stop the kernel, and see it stopped
        stop()
        if worker.ident is not None:  # (it started; a Ctrl-C inside start() may precede that)
            wait_for(done)
        raise
    if isinstance(box[0], BaseException):
        raise box[0]
    return box[0]

"""Calling numba kernels from Python with as little overhead as possible."""

from __future__ import annotations

from collections.abc import Callable

import numba


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

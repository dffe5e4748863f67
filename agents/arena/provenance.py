"""What a measurement ran on, recorded next to every benchmark and arena result."""

from __future__ import annotations

import os
import platform
import resource
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

PACKAGES = ("spieltisch", "numpy", "numba", "pettingzoo", "open-spiel", "gnubg-nn", "torch")


def git_revision(short: bool = False) -> str | None:
    """The git revision of the spieltisch source tree (abbreviated if ``short``), with
    ``-dirty`` when tracked files have uncommitted changes; None outside a git checkout."""
    here = Path(__file__).resolve().parent  # the source tree, whatever the working directory
    try:
        rev = subprocess.run(
            ["git", "rev-parse", *(["--short"] if short else []), "HEAD"],
            cwd=here, capture_output=True, text=True, timeout=5,
        )  # fmt: skip
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=here, capture_output=True, text=True, timeout=5,
        )  # fmt: skip
        return rev.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, or None where the platform has none."""
    return list(os.getloadavg()) if hasattr(os, "getloadavg") else None


def load_average_text(loads: list[float] | None = None) -> str:
    """``loads`` (default: :func:`load_average` now) as the results' pages write it,
    ``"0.7, 0.9, 1.2"`` (1, 5 and 15 minutes), or ``"unknown"``."""
    loads = load_average() if loads is None else loads
    return "unknown" if loads is None else ", ".join(f"{x:.1f}" for x in loads)


def machine_info() -> dict[str, Any]:
    """Date, platform, processor, cores, load average, package versions and git revision
    (:func:`git_revision`, abbreviated)."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            names = [ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")]
        cpu = names[0] if names else cpu
    except OSError:
        pass
    versions = {}
    for package in PACKAGES:
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpu": cpu,
        "cpu_count": os.cpu_count(),
        "load_average": load_average(),
        "versions": versions,
        "git_revision": git_revision(short=True),
    }


def peak_rss_gib() -> float:
    """The most resident memory this process (and any child it waited for) has held, in GiB to
    three decimals, as every record stores it (Linux reports ``ru_maxrss`` in KiB)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, children) / 2**20, 3)


def resident_bytes() -> int | None:
    """The resident memory this process holds now, in bytes (Linux's ``/proc/self/statm``;
    None where that cannot be read)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


def cpu_seconds() -> float:
    """CPU time (user and system) of this process, all its threads, and the children it waited
    for (e.g. arena worker processes), in seconds."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system

"""numba's cache follows the kernels' sources (:mod:`spieltisch.envs._common.numba_cache`).

Numba compiles a cached kernel again when its own file changes, not when a kernel it calls from
another file does: after an update of ``td_value.py`` the chance search, whose file had not
changed, ran the old evaluator from its cache (found by a test that compared it with a fresh
2-ply value: off by 2.4e-5)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from spieltisch.envs._common import numba_cache


def _package(root: Path, callee_returns: int) -> None:
    """A package root with a kernel in ``envs/callee.py`` and one calling it in
    ``envs/caller.py`` (only the callee's file changes between runs)."""
    (root / "envs").mkdir(parents=True, exist_ok=True)
    (root / "envs" / "callee.py").write_text(
        f"import numba\n\n@numba.njit(cache=True)\ndef value():\n    return {callee_returns}\n"
    )
    caller = root / "envs" / "caller.py"
    if not caller.exists():  # written once: its stamp stays what numba recorded
        caller.write_text(
            "import numba\nfrom callee import value\n\n"
            "@numba.njit(cache=True)\ndef twice():\n    return 2 * value()\n"
        )


def _run(root: Path, env: dict[str, str], configure: bool) -> int:
    """``twice()`` in a fresh process, with the package's cache set up or numba's own."""
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from spieltisch.envs._common import numba_cache
        if {configure}:
            numba_cache.configure(Path({str(root)!r}))
        sys.path.insert(0, {str(root / "envs")!r})
        from caller import twice
        print(twice())
    """)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


@pytest.mark.parametrize("configure", [False, True])
def test_a_changed_callee_is_compiled_again_in_its_callers(configure, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["SPIELTISCH_NUMBA_CACHE"] = str(tmp_path / "cache")
    root = tmp_path / "pkg"
    _package(root, 1)
    assert _run(root, env, configure) == 2
    _package(root, 5)
    if configure:
        assert _run(root, env, configure) == 10
    else:  # numba's own cache beside the sources: the caller keeps the old callee
        assert _run(root, env, configure) == 2


def test_the_digest_follows_kernel_sources_only(tmp_path):
    for name in ("envs/a.py", "agents/b.py", "train/kernels.py", "train/cli.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("import numba\n" if "kernels" in name else "x = 1\n")
    first = numba_cache.source_digest(tmp_path)
    assert len(first) == 16
    (tmp_path / "train/cli.py").write_text("x = 2\n")  # a trainer without kernels
    assert numba_cache.source_digest(tmp_path) == first
    for name, text in (("envs/a.py", "x = 2\n"), ("agents/b.py", "y = 1\n"),
                       ("train/kernels.py", "import numba  # changed\n")):  # fmt: skip
        (tmp_path / name).write_text(text)
        changed = numba_cache.source_digest(tmp_path)
        assert changed != first, name
        first = changed


def test_configure_keeps_a_users_folder_and_removes_old_ones(tmp_path, monkeypatch):
    import numba

    monkeypatch.setattr(numba.config, "CACHE_DIR", numba.config.CACHE_DIR)  # (restored after)
    monkeypatch.setenv("SPIELTISCH_NUMBA_CACHE_SET", "")  # (restored after)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    assert numba_cache.configure(tmp_path) is None  # the user chose: kept as it is
    assert os.environ["NUMBA_CACHE_DIR"] == str(tmp_path / "mine")
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    base = tmp_path / "cache"
    monkeypatch.setenv("SPIELTISCH_NUMBA_CACHE", str(base))
    for i in range(numba_cache.KEEP_OTHERS + 2):  # folders of older sources
        (base / f"old{i}").mkdir(parents=True)
        os.utime(base / f"old{i}", (1000 + i, 1000 + i))
    folder = numba_cache.configure(tmp_path)
    assert folder == base / numba_cache.source_digest(tmp_path) and folder.is_dir()
    assert os.environ["NUMBA_CACHE_DIR"] == str(folder)
    assert str(folder) == numba.config.CACHE_DIR
    kept = sorted(p.name for p in base.iterdir() if p != folder)
    assert kept == [f"old{i}" for i in range(2, numba_cache.KEEP_OTHERS + 2)]  # the newest


def _mkl_setting(env: dict[str, str]) -> str:
    code = "import spieltisch.envs, torch, os; print(os.environ.get('MKL_DISABLE_FAST_MM'))"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_mkl_fast_memory_is_off_before_torch_loads_unless_the_user_chose():
    """MKL's allocator deadlocked in arena workers forked from a parent whose threads had used
    it (a network agent's move hung to its time limit: a forfeit that workers=1 did not have)."""
    env = {k: v for k, v in os.environ.items() if k != "MKL_DISABLE_FAST_MM"}
    assert _mkl_setting(env) == "1"
    assert _mkl_setting({**env, "MKL_DISABLE_FAST_MM": "0"}) == "0"


def test_a_compile_is_announced_once_and_a_cached_kernel_not_at_all(tmp_path):
    """The command line says once that it compiles (the first run after an install sat 10-30 s
    in silence); a run that loads every kernel from the cache says nothing."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["SPIELTISCH_NUMBA_CACHE"] = str(tmp_path / "cache")
    root = tmp_path / "pkg"
    _package(root, 1)
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from spieltisch.envs._common import numba_cache
        numba_cache.configure(Path({str(root)!r}))
        said = []
        numba_cache.announce_compiling(said.append)
        numba_cache.announce_compiling(said.append)  # (a second call adds no listener)
        sys.path.insert(0, {str(root / "envs")!r})
        from caller import twice
        twice()
        print(len(said), said[0] if said else "")
    """)
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
        )
        for _ in range(2)
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr + runs[1].stderr
    first, second = (r.stdout.strip() for r in runs)
    assert first.startswith("1 compiling the game kernels") and str(tmp_path / "cache") in first
    assert second == "0"  # (two kernels, caller and callee, were compiled: one line)

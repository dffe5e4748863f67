"""Write the number tables of the README and docs from what was measured.

Every table in the documentation that holds a measured number lives between two markers::

    <!-- table:NAME -->
    ...generated, do not edit by hand...
    <!-- /table:NAME -->

and is produced here from the recorded results (``benchmarks/results/*.json``, the shipped
agents' evaluations in ``agents/pretrained/*.json``) or, for the env table, from the envs
themselves. A result that has not been recorded yet is left out (the table says so) rather than
filled in. ``tests/test_docs.py`` fails when a region differs from what this script writes, so
the documentation cannot drift from the measurements.

    python docs/make_tables.py           # rewrite the regions in place
    python docs/make_tables.py --check   # exit 1 and name the stale regions
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PRETRAINED = ROOT / "agents" / "pretrained"
#: files whose marked regions this script owns
DOC_FILES = (
    "README.md",
    "docs/training.md",
    "docs/arena.md",
    "docs/scaling.md",
    "docs/solver.md",
    "docs/api.md",
)

MARKER = re.compile(r"<!-- table:([\w-]+) -->\n(.*?)<!-- /table:\1 -->", re.S)


# --- helpers ---------------------------------------------------------------------------------
def _load(path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    with path.open() as f:
        return json.load(f)


def _result(name: str) -> dict[str, Any] | None:
    return _load(RESULTS / name)


def _int(x: float) -> str:
    return f"{round(x):,}"


def _ratio(x: float) -> str:
    return f"{x:.2f}x"


def _signed(x: float, digits: int = 0) -> str:
    return f"{x:+.{digits}f}".replace("-", "−")


def _interval(lo: float, hi: float, digits: int = 3, signed: bool = False) -> str:
    if signed and lo == hi:  # every seed gave the same mean: [+1.000, +1.000] read as certainty
        return "(no spread over the seeds)"
    if signed:
        return f"[{_signed(lo, digits)}, {_signed(hi, digits)}]"
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _machine(m: dict[str, Any] | None) -> str:
    """One line naming where and when a result was measured (only what was recorded)."""
    if not m:
        return "machine not recorded"
    parts = []
    cpu = m.get("cpu")
    count = m.get("cpu_count", m.get("cpus"))
    if cpu and count:
        parts.append(f"{cpu}, {count} cores")
    elif cpu or count:
        parts.append(str(cpu) if cpu else f"{count} cores")
    if m.get("date"):
        parts.append(str(m["date"])[:10])
    if m.get("git_revision"):
        parts.append(f"git {str(m['git_revision'])[:7]}")
    return ", ".join(parts) or "machine not recorded"


def _link(name: str, prefix: str) -> str:
    return f"[{name}]({prefix}benchmarks/results/{name})"


# --- tables ----------------------------------------------------------------------------------
ENV_NOTES = {
    "kalaha": (
        "the pit to empty",
        "stones: own pits, own store, opponent's pits, opponent's store",
    ),
    "hus": ("pit to empty: outer row 0..7, inner row 8..15", "stones of both players' 4 x 8 pits"),
    "backgammon": (
        "one checker move (point x die) or pass; with `cube=True` `Discrete(155)`: "
        "also roll, double, take, drop",
        "board, bar, borne off, dice to play (with `cube=True` `Box(63,)`: the cube too)",
    ),
    "hilo": ("one flat space, masked by phase", "only what the player may know"),
}


def table_envs(prefix: str) -> str:
    """Spaces read from the envs themselves (default options; HiLo with 2 and 4 players)."""
    from spieltisch.envs import GAMES, make

    rows = [
        "| game | env | players | action space | observation | rules |",
        "|---|---|---|---|---|---|",
    ]
    order = ("kalaha", "hus", "backgammon", "hilo")
    for game in sorted(GAMES, key=lambda g: order.index(g) if g in order else len(order)):
        variants = [{"num_players": 2}, {"num_players": 4}] if game == "hilo" else [{}]
        act_notes, obs_notes = ENV_NOTES.get(game, ("", ""))
        spaces = []
        for options in variants:
            env = make(game, **options)
            agent = env.possible_agents[0]
            act = env.action_space(agent)
            obs = env.observation_space(agent)["observation"]
            spaces.append((len(env.possible_agents), act.n, obs.shape, str(obs.dtype)))
            env.close()
        players = "–".join(str(s[0]) for s in spaces)
        acts = " / ".join(f"`Discrete({s[1]})`" for s in spaces)
        obs_txt = " / ".join(f"`Box{s[2]}` {s[3]}" for s in spaces)
        if len(spaces) > 1:
            acts += " (2 / 4 players)"
            obs_txt += " (2 / 4 players)"
        rows.append(
            f"| {game.capitalize() if game != 'hilo' else 'HiLo'} | `{GAMES[game]}` | {players} "
            f"| {acts}: {act_notes} | {obs_txt}: {obs_notes} "
            f"| [rules]({prefix}docs/rules/{game}.md) |"
        )
    return "\n".join(rows) + "\n"


def table_baselines(prefix: str) -> str:
    data = _result("arena_baselines.json")
    if data is None:
        return "(no baseline arena results recorded yet: `python benchmarks/arena_baselines.py`)\n"
    rows = ["| game | agents, strongest first: Elo [95% bootstrap interval] | games per pairing |"]
    rows.append("|---|---|---:|")
    for game, rep in data["games"].items():
        ratings = rep.get("ratings") or {}
        ranked = sorted(ratings.items(), key=lambda kv: -kv[1]["elo"])
        cells = ", ".join(
            f"`{a}` {_signed(r['elo'])} {_interval(r['low'], r['high'], 0, True)}"
            for a, r in ranked
        )
        per_pair = 2 * int(rep["seeds"])
        rows.append(f"| {game} | {cells} | {per_pair} |")
    note = (
        f"\nMeasured by `{data.get('command', 'benchmarks/arena_baselines.py')}` "
        f"({_machine(data.get('machine'))}); every pairing and score: "
        f"{_link('arena_baselines.md', prefix)}.\n"
    )
    return "\n".join(rows) + "\n" + note


def table_reference(prefix: str) -> str:
    data = _result("arena_gnubg_pubeval.json")
    if data is None or not data.get("pairs"):
        return "(the GNU Backgammon against pubeval reference run is not recorded yet)\n"
    p = data["pairs"][0]
    ex = p.get("extra", {})
    rows = [
        "| agent | opponent | games | points per game [95% CI] | wins | gammons won / lost |",
        "|---|---|---:|---|---:|---|",
        f"| `{p['agent']}` | `{p['opponent']}` | {_int(p['games'])} "
        f"| **{_signed(p['mean_reward'], 3)}** {_interval(p['reward_low'], p['reward_high'], 3, True)} "
        f"| {_pct(p['win_rate'])} "
        f"| {_pct(ex['gammon_won_rate']) if 'gammon_won_rate' in ex else '—'} / "
        f"{_pct(ex['gammon_lost_rate']) if 'gammon_lost_rate' in ex else '—'} |",
    ]
    return (
        "\n".join(rows)
        + f"\n\nPublished: about +0.63 points per game. {_int(data['seeds'])} seeds, each played in both "
        f"seat orders with the same dice ({_machine(data.get('machine'))}; "
        f"{_link('arena_gnubg_pubeval.md', prefix)}).\n"
    )


def table_backgammon_lookahead(prefix: str) -> str:
    data = _result("backgammon_lookahead.json")
    if data is None or not data.get("rows"):
        return "(no lookahead results recorded yet: `python benchmarks/backgammon_lookahead.py`)\n"
    rows = [
        "| agent | opponent | games | points per game [95% CI] | wins [95% CI] |",
        "|---|---|---:|---|---|",
    ]
    runs = data.get("runs") or [{"command": data["command"], "machine": data.get("machine")}]
    # each run on its own machine line: the rows were measured in several runs and places
    commands = "; ".join(f"`{run['command']}` ({_machine(run.get('machine'))})" for run in runs)
    for r in data["rows"]:
        rows.append(
            f"| `{r['agent']}` | `{r['opponent']}` | {_int(r['games'])} | "
            f"{_signed(r['ppg'], 3)} {_interval(r['ppg_low'], r['ppg_high'], 3, True)} | "
            f"{_pct(r['win_rate'])} [{_pct(r['win_low'])}, {_pct(r['win_high'])}] |"
        )
    return (
        "\n".join(rows) + f"\n\nMeasured by {commands}; GNU Backgammon "
        f"at equal lookahead: its N-1 ply against our `ply=N`; "
        f"{_link('backgammon_lookahead.md', prefix)}.\n"
    )


def _pretrained_files() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted(PRETRAINED.glob("*.json")):
        meta = _load(path)
        if meta is not None:
            out.append((path.stem, meta))
    return out


def _natural(text: str) -> list[Any]:
    """Sort key with numbers compared as numbers (``search10`` after ``search6``)."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", text)]


def table_pretrained(prefix: str) -> str:
    """The shipped agents' recorded evaluations (written when they were shipped)."""
    files = _pretrained_files()
    if not files:
        return "(no pretrained agents shipped yet)\n"
    rows = [
        "| agent | training | opponent | games | W / D / L | win rate [95% CI] "
        "| mean reward [95% CI] | gammons won / lost |",
        "|---|---|---|---:|---|---|---|---|",
    ]
    missing = []
    for name, meta in files:
        evaluation = meta.get("evaluation")
        if not isinstance(evaluation, dict) or not evaluation:
            missing.append(name)
            continue
        algo = str(meta.get("algorithm", "?")).upper()
        steps = meta.get("global_step")
        games = meta.get("games")
        if meta.get("algorithm") == "td" and isinstance(games, int | float):
            training = f"{algo}, {_int(games)} self-play games"  # TD learns per game
        elif meta.get("algorithm") == "alphazero" and isinstance(steps, int | float):
            training = f"Gumbel AlphaZero, {steps / 1e6:.1f}M searched positions"
        elif isinstance(steps, int | float):
            training = f"{algo}, {steps / 1e6:.1f}M steps"
        else:
            training = algo
        label = f"pretrained:{meta.get('game', name)}"
        players = (meta.get("game_options") or {}).get("num_players")
        seeds = (meta.get("game_options") or {}).get("seeds")
        if players and players != 2:
            label += f"` ({players} players, `-o num_players={players}`)"
        elif name.startswith("kalaha_") and seeds and seeds != 6:  # kalaha_6x4: Kalah(6,4)
            label += f"` (Kalah(6,{seeds}), `-o seeds={seeds}`)"
        else:
            label += "`"
        if isinstance(meta.get("reproduce"), dict) and meta["reproduce"].get("note"):
            training += " (see the note below)"
        for key, ev in sorted(evaluation.items(), key=lambda kv: _natural(kv[0])):
            if not isinstance(ev, dict) or "games" not in ev:
                continue
            opponent = ev.get("opponents") or ev.get("opponent") or key.removeprefix("vs_")
            if not isinstance(opponent, list):
                opponent = [opponent]
            cell = ", ".join(  # ["heuristic"] * 3 (a 4-player HiLo table): `heuristic` x 3
                f"`{o}`" + (f" x {opponent.count(o)}" if opponent.count(o) > 1 else "")
                for o in dict.fromkeys(str(o) for o in opponent)
            )
            # In a table of 3-4 with the coins reward, a positive reward is not a win.
            coins_table = len(opponent) > 1 and ev.get("reward") == "coins"
            wdl = (
                f"{_int(ev['wins'])} / {_int(ev.get('draws', 0))} / {_int(ev['losses'])}"
                if "wins" in ev and "losses" in ev and not coins_table
                else "—"
            )
            win = "—"
            if "win_rate" in ev and not coins_table:
                win = _pct(ev["win_rate"])
                if "win_low" in ev and "win_high" in ev:
                    win += f" [{_pct(ev['win_low'])}, {_pct(ev['win_high'])}]"
            reward = "—"
            key = "mean_reward" if "mean_reward" in ev else "ppg"  # backgammon: points per game
            low, high = (
                ("reward_low", "reward_high") if key == "mean_reward" else ("ppg_low", "ppg_high")
            )
            if key in ev:
                reward = _signed(ev[key], 3)
                if low in ev and high in ev:
                    reward += " " + _interval(ev[low], ev[high], 3, True)
                if ev.get("reward") == "coins":  # HiLo's coins reward, not +1 / 0 / -1
                    reward += " coins"
            gammons = "—"
            if "gammon_won_rate" in ev and "gammon_lost_rate" in ev:
                gammons = f"{_pct(ev['gammon_won_rate'])} / {_pct(ev['gammon_lost_rate'])}"
            row_label = label
            if isinstance(ev.get("agent"), str) and ev["agent"] != label.split("`")[0]:
                row_label = ev["agent"] + "`" + label.split("`", 1)[1]  # e.g. with :search=4
            rows.append(
                f"| `{row_label} | {training} | {cell} "
                f"| {_int(ev['games'])} | {wdl} | {win} | {reward} | {gammons} |"
            )
    text = "\n".join(rows) + "\n"
    notes = [
        f"`{name}`: {meta['reproduce']['note']}"
        for name, meta in files
        if isinstance(meta.get("reproduce"), dict) and meta["reproduce"].get("note")
    ]
    if notes:
        text += "\nNotes recorded with them: " + "; ".join(notes) + ".\n"
    if missing:
        text += f"\nShipped without a recorded evaluation: {', '.join(missing)}.\n"
    text += (
        "\nRecorded in `agents/pretrained/<game>.json` (`evaluation`; the command that reproduces "
        "it is under `reproduce`). Backgammon's mean reward is points per game; rows marked coins: "
        "own coins minus the mean of the others' per game; HiLo with 4 players (one agent against "
        "three copies of the opponent, every seat): +1 for a win, -1/3 for a loss (zero-sum; "
        "positive means better than the opponents); all others +1 / 0 / -1 per game.\n"
    )
    return text


def table_speed(prefix: str) -> str:
    """Speed against OpenSpiel, GNU Backgammon and PettingZoo's connect_four_v3."""
    parts = []
    m = _result("mancala.json")
    if m is not None:
        k = m["kalaha_games_per_second"]
        rows = [
            "| Kalaha standard 6x4, random games | games/s | vs OpenSpiel |",
            "|---|---:|---:|",
        ]
        labels = {
            "spieltisch_single": "spieltisch, one game (Python API)",
            "spieltisch_batched_4096": "spieltisch, batched (4096 games), stepped from Python",
            "spieltisch_rollouts_1_thread": "spieltisch, compiled rollouts (`play_random`), 1 thread",
            "spieltisch_rollouts_2_threads": "spieltisch, compiled rollouts, 2 threads",
            "openspiel": "OpenSpiel `mancala` (pyspiel)",
        }
        for key, label in labels.items():
            if key in k:
                rows.append(
                    f"| {label} | {_int(k[key]['per_second'])} "
                    f"| {_ratio(k[key]['ratio_to_openspiel'])} |"
                )
        parts.append("\n".join(rows) + f"\n\n({_machine(m.get('machine'))}; "
                     f"{_link('mancala.md', prefix)})")  # fmt: skip
    b = _result("backgammon.json")
    if b is not None:
        g = b["games"]
        os_rate = g.get("openspiel_pyspiel", {}).get("games_per_s_median")
        gnu_rate = g.get("gnubg_moves_loop", {}).get("games_per_s_median")
        rows = [
            "| Backgammon, random games | games/s (median of rounds) | vs OpenSpiel | vs GNU Backgammon |",
            "|---|---:|---:|---:|",
        ]
        labels = {
            "ours_python_api_plays": "spieltisch, one game, whole plays (Python API)",
            "ours_python_api_checker_moves": "spieltisch, one game, one checker move per step",
            "batch_1_thread_plays": "spieltisch, batched, stepped from Python, 1 thread",
            "batch_2_threads_plays": "spieltisch, batched, stepped from Python, 2 threads",
            "batch_1_thread_play_random": "spieltisch, compiled rollouts (`play_random`), 1 thread",
            "batch_2_threads_play_random": "spieltisch, compiled rollouts, 2 threads",
            "gnubg_moves_loop": "GNU Backgammon move generator (gnubg-nn)",
            "openspiel_pyspiel": "OpenSpiel `backgammon` (pyspiel)",
        }
        for key, label in labels.items():
            if key not in g:
                continue
            x = g[key]["games_per_s_median"]
            rows.append(
                f"| {label} | {_int(x)} | {_ratio(x / os_rate) if os_rate else '—'} "
                f"| {_ratio(x / gnu_rate) if gnu_rate else '—'} |"
            )
        parts.append("\n".join(rows) + f"\n\n({_machine(b.get('machine'))}; "
                     f"{_link('backgammon.json', prefix)})")  # fmt: skip
    aec_rows = []  # (env, steps/s, connect_four_v3 steps/s in the same run, machine)
    if m is not None:
        aec = m.get("aec_steps_per_second", {})
        c4 = aec.get("connect_four_v3", {}).get("per_second")
        for key, x in aec.items():
            if key != "connect_four_v3" and c4:
                aec_rows.append((f"`{key}`", x["per_second"], c4, m.get("machine")))
    h = _result("hilo.json")
    if h is not None and "aec" in h:
        a = h["aec"]
        c4 = a.get("connect_four_v3", {}).get("per_second")  # median of interleaved rounds
        for key, label in (
            ("hilo_v0_2p", "`hilo_v0`, 2 players"),
            ("hilo_v0_4p", "`hilo_v0`, 4 players"),
        ):
            if key in a and c4:
                aec_rows.append((label, a[key]["per_second"], c4, h.get("machine")))
    if aec_rows:
        rows = [
            "| AEC env, random legal actions | steps/s | `connect_four_v3` in the same run | ratio | measured |",
            "|---|---:|---:|---:|---|",
        ]
        rows += [
            f"| {label} | {_int(v)} | {_int(c4)} | {_ratio(v / c4)} | {_machine(mach)} |"
            for label, v, c4, mach in aec_rows
        ]
        note = (
            "(the AEC peer is PettingZoo's classic `connect_four_v3`, with an action mask too, "
            "measured in the same run as each env)"
        )
        parts.append("\n".join(rows) + "\n\n" + note)
    if h is not None:
        rows = ["| HiLo, random games | games/s |", "|---|---:|"]
        for key, label in (
            ("single_2p", "one game, 2 players"),
            ("batched_2p", "batched (4096), 2 players"),
            ("single_4p", "one game, 4 players"),
            ("batched_4p", "batched (4096), 4 players"),
        ):
            if key in h:
                rows.append(f"| {label} | {_int(h[key]['games_per_s'])} |")
        parts.append("\n".join(rows) + f"\n\n({_machine(h.get('machine'))}; "
                     f"{_link('hilo.json', prefix)}; OpenSpiel has no HiLo)")  # fmt: skip
    if not parts:
        return "(no speed benchmarks recorded yet)\n"
    return "\n\n".join(parts) + "\n"


def table_solver(prefix: str) -> str:
    s = _result("kalaha_solver.json")
    if s is None or not s.get("solve"):
        return "(no solver results recorded yet: `python benchmarks/bench_kalaha_solver.py`)\n"
    rows = [
        "| board | rules | value (first player) | published | optimal first moves "
        "| endgame database | nodes | seconds (CPU seconds) |",
        "|---|---|---:|---:|---|---|---:|---:|",
    ]
    solved = sorted(
        s["solve"], key=lambda r: (_natural(r["board"]), r["rules"], r.get("db_stones", 0))
    )
    for r in solved:
        pub = r.get("published_value")
        cpu = f" ({r['cpu_seconds']:.1f})" if "cpu_seconds" in r else ""
        db = f"{r['db_stones']} stones" if "db_stones" in r else "—"
        rows.append(
            f"| {r['board']} | {r['rules']} | {_signed(r['value'])} "
            f"| {_signed(pub) if pub is not None else '—'} "
            f"| {', '.join(str(a) for a in r.get('optimal_first_moves', []))} "
            f"| {db} | {_int(r['nodes'])} | {r['seconds']:.1f}{cpu} |"
        )
    name = "kalaha_solver.md" if (RESULTS / "kalaha_solver.md").exists() else "kalaha_solver.json"
    return "\n".join(rows) + f"\n\n({_machine(s.get('machine'))}; {_link(name, prefix)})\n"


def table_solver_accuracy(prefix: str) -> str:
    """Agents' moves judged by the solver (``accuracy_*`` entries of kalaha_solver.json)."""
    s = _result("kalaha_solver.json")
    entries: list[dict[str, Any]] = []
    for key, value in (s or {}).items():
        if key.startswith("accuracy_") and key != "accuracy_run":
            entries += value if isinstance(value, list) else [value]
    entries = [e for e in entries if isinstance(e, dict) and "total" in e and "agent" in e]
    if not entries:
        return "(no move accuracy recorded yet: `python benchmarks/bench_kalaha_solver.py`)\n"
    rows = [
        "| agent | board | positions judged | moves | optimal | mean loss per move |",
        "|---|---|---|---:|---:|---:|",
    ]
    for e in entries:
        g, t = e.get("game", {}), e["total"]
        board = f"Kalah({g.get('pits', '?')},{g.get('seeds', '?')}) {g.get('rules', '')}".strip()
        judged = "all" if e.get("max_stones") is None else f"at most {e['max_stones']} stones left"
        rows.append(
            f"| `{e['agent']}` | {board} | {judged} | {t['moves']} | {_pct(t['optimal_share'])} "
            f"| {t['mean_loss']:.2f} |"
        )
    return "\n".join(rows) + "\n"


def _ray_files() -> list[Path]:
    """Ray benchmark results, in the games' usual order."""
    order = ["kalaha", "hus", "backgammon", "hilo"]

    def key(path: Path) -> tuple[int, str]:
        game = path.stem.removeprefix("ray_")
        return (order.index(game) if game in order else len(order), path.name)

    return sorted(RESULTS.glob("ray*.json"), key=key)


def table_ray(prefix: str) -> str:
    """Ray rollout workers against single-process playing (``benchmarks/bench_ray.py``)."""
    parts = []
    for path in _ray_files():
        data = _load(path)
        rollout = (data or {}).get("rollout")
        if not isinstance(rollout, dict) or "single" not in rollout:
            continue
        rows = [
            "| rollouts played by | games/s | learner decisions/s | s/iteration | vs one process |",
            "|---|---:|---:|---:|---:|",
        ]
        for key, r in rollout.items():
            label = (
                "one process"
                if key == "single"
                else f"Ray, {key.removeprefix('ray_')} worker{'' if key == 'ray_1' else 's'}"
            )
            speed = r.get("speedup_vs_single", 1.0 if key == "single" else None)
            rows.append(
                f"| {label} | {r['games_per_s']:.1f} | {_int(r['decisions_per_s'])} "
                f"| {r['seconds_per_iteration']:.2f} | {_ratio(speed) if speed is not None else '—'} |"
            )
        what = (
            f"{data.get('game', '?')}, {data.get('games_per_iteration', '?')} games per iteration"
        )
        note = f" {data['note']}" if data.get("note") else ""
        md = path.with_suffix(".md")
        link = _link(md.name, prefix) if md.exists() else _link(path.name, prefix)
        parts.append(
            f"{what}:\n\n"
            + "\n".join(rows)
            + f"\n\n({_machine(data.get('machine'))};{note} {link})"
        )
    if not parts:
        return "(no Ray benchmark recorded yet: `python benchmarks/bench_ray.py`)\n"
    return "\n\n".join(parts) + "\n"


def table_ray_parts(prefix: str) -> str:
    """Where a Ray PPO iteration's time goes, one column per measured game."""
    cols = []
    for path in _ray_files():
        d = _load(path) or {}
        single = (d.get("rollout") or {}).get("single")
        learner = d.get("learner")
        if not single or not learner or "ray_overhead_seconds_per_iteration" not in d:
            continue
        cols.append(
            (
                f"{d.get('game', path.stem)}, {d.get('games_per_iteration', '?')} games",
                single,
                learner,
                d,
            )
        )
    if not cols:
        return "(no Ray benchmark recorded yet: `python benchmarks/bench_ray.py`)\n"
    rows = [
        "| per iteration | " + " | ".join(c[0] for c in cols) + " |",
        "|---|" + "---|" * len(cols),
        "| playing in one process | "
        + " | ".join(
            f"{s['seconds_per_iteration']:.2f} s ({_int(s['games_per_s'])} games/s, "
            f"{_int(s['decisions_per_s'])} decisions/s)"
            for _, s, _, _ in cols
        )
        + " |",
        "| Ray overhead (weight broadcast, experience transfer, scheduling) | "
        + " | ".join(f"{d['ray_overhead_seconds_per_iteration']:.2f} s" for *_, d in cols)
        + " |",
        f"| PPO update in the learner (1 thread, hidden layers {cols[0][3].get('hidden', '?')}) | "
        + " | ".join(
            f"{le['update_seconds_per_iteration']:.2f} s ({_int(le['decisions_per_iteration'])} decisions)"
            for _, _, le, _ in cols
        )
        + " |",
    ]
    return "\n".join(rows) + "\n"


TABLES: dict[str, Callable[[str], str]] = {
    "envs": table_envs,
    "baselines": table_baselines,
    "reference": table_reference,
    "pretrained": table_pretrained,
    "backgammon-lookahead": table_backgammon_lookahead,
    "speed": table_speed,
    "solver": table_solver,
    "solver-accuracy": table_solver_accuracy,
    "ray": table_ray,
    "ray-parts": table_ray_parts,
}


# --- regions ---------------------------------------------------------------------------------
def render(path: Path, text: str) -> str:
    """``text`` (the file at ``path``) with every marked region regenerated."""
    prefix = "../" * (len(path.relative_to(ROOT).parts) - 1)
    cache: dict[str, str] = {}

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in TABLES:
            raise KeyError(f"{path}: unknown table {name!r}; tables are {sorted(TABLES)}")
        if name not in cache:
            cache[name] = TABLES[name](prefix)
        return f"<!-- table:{name} -->\n{cache[name]}<!-- /table:{name} -->"

    return MARKER.sub(replace, text)


def stale_regions() -> list[str]:
    """``FILE: table NAME`` for every region that differs from what :func:`render` writes."""
    stale = []
    for rel in DOC_FILES:
        path = ROOT / rel
        if not path.exists():
            continue
        text = path.read_text()
        new = render(path, text)
        old_regions = dict(MARKER.findall(text))
        new_regions = dict(MARKER.findall(new))
        stale += [f"{rel}: table {n}" for n in new_regions if new_regions[n] != old_regions.get(n)]
    return stale


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report stale regions")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_regions()
        for s in stale:
            print(f"stale: {s} (run python docs/make_tables.py)")
        return 1 if stale else 0
    for rel in DOC_FILES:
        path = ROOT / rel
        if path.exists():
            text = path.read_text()
            new = render(path, text)
            if new != text:
                path.write_text(new)
                print(f"updated {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

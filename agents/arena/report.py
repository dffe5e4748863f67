"""Arena reports as people read them: a Markdown table and a plot of each pair's score."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from spieltisch.agents.arena.evaluation import ArenaReport


def plural(count: int, word: str) -> str:
    """``"1 seed"``, ``"2 seeds"``."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def interval_text(low: float, high: float, seeds: int, label: str = " ") -> str:
    """A mean reward's interval as text after the number: ``label`` and ``[low, high]``; one
    seed is one paired observation, which gives no interval (its bounds are then the mean
    itself), and the text says so. Seeds that all gave the same mean (every game won) have no
    spread either: a zero-width ``[+1.000, +1.000]`` would read as certainty, so that is said."""
    if seeds < 2:
        return " (no interval from 1 seed)"
    if low == high:
        return f" (no interval: all {seeds} seeds gave the same result)"
    return f"{label}[{low:+.3f}, {high:+.3f}]"


def _reward(mean: float, low: float, high: float, seeds: int) -> str:
    """A mean reward with its interval (:func:`interval_text`)."""
    return f"{mean:+.3f}{interval_text(low, high, seeds)}"


def _cube_counts(extra: dict, side: str) -> str:
    """``"doubles / takes / drops"`` of one side of a pair (cube games)."""
    c = extra.get(f"{side}_cube", {})
    return f"{c.get('doubles', 0)} / {c.get('takes', 0)} / {c.get('drops', 0)}"


def _time_limit(report: ArenaReport) -> str:
    limit = report.move_time_limit
    return "no move time limit" if limit is None else f"move time limit {limit:g} s"


def to_markdown(report: ArenaReport) -> str:
    """The report as Markdown tables (and the games agents lost by forfeit, if any)."""
    lines = [
        f"### {report.game}: {report.mode}, {plural(report.seeds, 'seed')} (seed {report.seed}), "
        f"opening plies {report.opening_plies}, options {report.options or '{}'}, "
        f"{_time_limit(report)}",
        "",
    ]
    if report.pairs:
        bg = report.game == "backgammon"
        head = "| agent | opponent | games | W / D / L | score [95% CI] | mean reward [95% CI] |"
        cube = bg and any("agent_cube" in p.extra for p in report.pairs)
        if bg:
            head += " gammons won / lost |"
        if cube:
            head += " doubles / takes / drops (agent; opponent) |"
        lines += [head, "|" + "---|" * (head.count("|") - 1)]
        for p in report.pairs:
            row = (
                f"| {p.agent} | {p.opponent} | {p.games} | {p.wins} / {p.draws} / {p.losses} | "
                f"{p.score:.3f} [{p.score_low:.3f}, {p.score_high:.3f}] | "
                f"{_reward(p.mean_reward, p.reward_low, p.reward_high, report.seeds)} |"
            )
            if bg:
                row += (
                    f" {p.extra.get('gammon_won_rate', 0):.3f} / "
                    f"{p.extra.get('gammon_lost_rate', 0):.3f} |"
                )
            if cube:
                row += f" {_cube_counts(p.extra, 'agent')}; {_cube_counts(p.extra, 'opponent')} |"
            lines.append(row)
    if report.ratings:
        lines += ["", "| agent | Elo (Bradley-Terry) [95% bootstrap CI] |", "|---|---|"]
        for name, r in sorted(report.ratings.items(), key=lambda kv: -kv[1]["elo"]):
            lines.append(f"| {name} | {r['elo']:+.0f} [{r['low']:+.0f}, {r['high']:+.0f}] |")
    if report.table:
        lines += [
            "| agent | seats | games | W / D / L | win rate [95% CI] | mean reward [95% CI] |",
            "|---|---|---|---|---|---|",
        ]
        for t in report.table:
            lines.append(
                f"| {t['agent']} | {t.get('seats', 1)} | {t['games']} | "
                f"{t.get('wins', '?')} / {t.get('draws', '?')} / {t.get('losses', '?')} | "
                f"{t['win_rate']:.3f} [{t['win_low']:.3f}, {t['win_high']:.3f}] | "
                f"{_reward(t['mean_reward'], t['reward_low'], t['reward_high'], report.seeds)} |"
            )
    if report.forfeits:
        lines += [
            "",
            "Games lost by forfeit (the agent raised, played an illegal action or ran over the "
            "time limit; each is scored as a lost game):",
            "",
            "| agent | games forfeited | over the time limit | raised | illegal action | first |",
            "|---|---|---|---|---|---|",
        ]
        for f in report.forfeits:
            first = str(f["first"]).replace("|", "\\|")
            lines.append(
                f"| {f['agent']} | {f['games']} | {f['time_limit']} | {f['raised']} | "
                f"{f['illegal_action']} | {first} |"
            )
    return "\n".join(lines) + "\n"


def forfeit_summary(report: ArenaReport) -> str | None:
    """One line naming each agent that forfeited games and how many (None if none did)."""
    if not report.forfeits:
        return None
    parts = [f"{f['agent']} {plural(f['games'], 'game')}" for f in report.forfeits]
    return "games lost by forfeit: " + ", ".join(parts) + " (see the report's forfeit table)"


def plot(report: ArenaReport, path: str) -> None:
    """A matplotlib figure: score of each pair (or rating) with its interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 0.5 + 0.45 * max(1, len(report.pairs) or 3)))
    if report.ratings:
        names = list(report.ratings)
        v = np.array([report.ratings[k]["elo"] for k in names])
        err = np.array(
            [[v[i] - report.ratings[k]["low"], report.ratings[k]["high"] - v[i]]
             for i, k in enumerate(names)]
        ).T  # fmt: skip
        ax.errorbar(v, range(len(names)), xerr=np.maximum(err, 0), fmt="o")
        ax.set_yticks(range(len(names)), names)
        ax.set_xlabel("Elo (Bradley-Terry), 95% bootstrap CI")
    elif report.pairs:
        labels = [f"{p.agent} vs {p.opponent}" for p in report.pairs]
        v = np.array([p.score for p in report.pairs])
        err = np.array([[p.score - p.score_low, p.score_high - p.score] for p in report.pairs]).T
        ax.errorbar(v, range(len(labels)), xerr=np.maximum(err, 0), fmt="o")
        ax.axvline(0.5, color="grey", lw=0.5)
        ax.set_yticks(range(len(labels)), labels)
        ax.set_xlim(0, 1)
        ax.set_xlabel("score (win + draw/2), 95% Wilson CI")
    else:
        labels = [t["agent"] for t in report.table or []]
        v = np.array([t["win_rate"] for t in report.table or []])
        ax.barh(range(len(labels)), v)
        ax.set_yticks(range(len(labels)), labels)
        ax.set_xlabel("win rate")
    ax.set_title(f"{report.game}: {plural(report.seeds, 'seed')} x seat orders")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)

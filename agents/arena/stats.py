"""Statistics of the arena: Wilson intervals, mean intervals, Bradley-Terry / Elo ratings.

All intervals are 95% by default (``z = 1.96``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Z95 = 1.959963984540054


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a rate ``successes / n`` (``(0, 1)`` when ``n == 0``).

    ``successes`` may be fractional (a draw counted as half a win).
    """
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_interval(
    values: Sequence[float], z: float = Z95, bounds: tuple[float, float] | None = None
) -> tuple[float, float, float]:
    """``(mean, low, high)``: the normal-approximation interval of the mean (sample standard
    deviation, ``n - 1``); a zero-width interval for fewer than 2 values. ``bounds``: the
    least and greatest value possible; the interval is clipped to them (near a bound the normal
    approximation reaches past it, e.g. +0.98 [+0.94, +1.02] for a reward of at most +1)."""
    x = np.asarray(values, dtype=np.float64)
    if x.size == 0:
        return (0.0, 0.0, 0.0)
    m = float(x.mean())
    if x.size < 2:
        return (m, m, m)
    half = z * float(x.std(ddof=1)) / math.sqrt(x.size)
    low, high = m - half, m + half
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return (m, low, high)


def paired_mean_interval(
    pair_values: Sequence[float], z: float = Z95, bounds: tuple[float, float] | None = None
) -> tuple[float, float, float]:
    """Interval of the mean per game from per-*pair* means (the two games of a seed with the
    seats swapped are one observation: their chance events are shared, so they are not
    independent; averaging them first is what makes paired evaluation cut the variance)."""
    return mean_interval(pair_values, z, bounds)


def bradley_terry(
    wins: np.ndarray, iterations: int = 10_000, tol: float = 1e-10, prior: float = 0.5
) -> np.ndarray:
    """Maximum-likelihood Bradley-Terry strengths from ``wins[i, j]`` = games ``i`` won against
    ``j`` (draws counted as half a win for each side). Returns Elo-scaled ratings
    (``400 log10`` of the strengths), centred on mean 0.

    ``prior``: pseudo-games (half won each way) added between every pair that met, so that an
    agent that won or lost everything gets a finite rating (Zermelo's MM algorithm otherwise
    diverges).
    """
    w = np.asarray(wins, dtype=np.float64).copy()
    m = w.shape[0]
    games = w + w.T
    met = games > 0
    w = w + prior * met
    games = w + w.T
    p = np.ones(m)
    total_wins = w.sum(axis=1)
    for _ in range(iterations):
        denom = (games / (p[:, None] + p[None, :])).sum(axis=1)
        new = np.where(denom > 0, total_wins / np.where(denom > 0, denom, 1), p)
        new = new / np.exp(np.mean(np.log(np.maximum(new, 1e-300))))
        if np.max(np.abs(np.log(np.maximum(new, 1e-300)) - np.log(p))) < tol:
            p = new
            break
        p = new
    ratings = 400 * np.log10(np.maximum(p, 1e-300))
    return ratings - ratings.mean()


def bootstrap_ratings(
    outcomes: Sequence[tuple[int, int, float]],
    num_agents: int,
    rng: np.random.Generator,
    samples: int = 200,
    z: float = Z95,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Bradley-Terry ratings with bootstrap intervals.

    ``outcomes``: one ``(i, j, score_of_i)`` per game (``score`` 1 win, 0.5 draw, 0 loss).
    Returns ``(ratings, low, high)``: the fit on all games, and the 2.5% / 97.5% percentiles of
    fits on games resampled with replacement.
    """
    data = np.asarray(outcomes, dtype=np.float64).reshape(-1, 3)

    def fit(rows: np.ndarray) -> np.ndarray:
        wins = np.zeros((num_agents, num_agents))
        i = rows[:, 0].astype(int)
        j = rows[:, 1].astype(int)
        np.add.at(wins, (i, j), rows[:, 2])
        np.add.at(wins, (j, i), 1 - rows[:, 2])
        return bradley_terry(wins)

    ratings = fit(data)
    if data.shape[0] == 0:
        return ratings, ratings.copy(), ratings.copy()
    boots = np.array(
        [fit(data[rng.integers(0, data.shape[0], data.shape[0])]) for _ in range(samples)]
    )
    alpha = (1 - math.erf(z / math.sqrt(2))) / 2
    low = np.quantile(boots, alpha, axis=0)
    high = np.quantile(boots, 1 - alpha, axis=0)
    return ratings, low, high

"""The naive shares: the judge's rate on the pool, the humans' rate on the labelled set.

Both are binomial proportions with a Wilson score interval (Wilson 1927):

    centre = (x + z²/2) / (n + z²),  half = z·sqrt(x(n−x)/n + z²/4) / (n + z²).

``judge_only`` is what a team reports without correction: its interval is honest about
the pool's sampling noise and blind to the judge's bias, so it covers the human rate
only when the judge is unbiased for that bin. ``labels_only`` ignores the pool.
"""

from __future__ import annotations

import numpy as np


def z_value(level: float) -> float:
    """The two-sided normal quantile of a confidence ``level`` in (0, 1)."""
    from scipy.stats import norm  # slow to import: only when used

    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level}")
    return float(norm.ppf(0.5 + level / 2))


def wilson_interval(
    x: np.ndarray, n: np.ndarray, z: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Share ``x/n`` and its Wilson interval, elementwise; NaN where ``n`` is 0."""
    x = np.asarray(x, dtype=float)
    n = np.asarray(n, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = x / n
        denom = n + z**2
        centre = (x + z**2 / 2) / denom
        half = z * np.sqrt(np.maximum(x * (n - x) / n, 0.0) + z**2 / 4) / denom
    low = np.where(n > 0, np.maximum(centre - half, 0.0), np.nan)
    high = np.where(n > 0, np.minimum(centre + half, 1.0), np.nan)
    return np.where(n > 0, share, np.nan), low, high


def judge_only(pool_counts: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The judge's share of each bin on the pool (last axis: bins), Wilson interval."""
    n = pool_counts.sum(axis=-1, keepdims=True)
    return wilson_interval(pool_counts, np.broadcast_to(n, pool_counts.shape), z)


def labels_only(confusion: np.ndarray, z: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The humans' share of each bin on the labelled set (``confusion[..., j, h]``)."""
    human = confusion.sum(axis=-2)
    n = human.sum(axis=-1, keepdims=True)
    return wilson_interval(human, np.broadcast_to(n, human.shape), z)


def effective_wilson(
    estimate: np.ndarray, se: np.ndarray, z: float, n: np.ndarray | float
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson interval of an estimated share at its effective sample size.

    For an estimator that is not a plain proportion (PPI++, the weighted difference),
    ``n_eff = θ̃(1 − θ̃)/se²`` is the size of a simple random sample with the same
    variance (Kish's effective sample size), and the Wilson interval of ``θ̃`` at
    ``n_eff`` replaces the Wald interval ``θ̂ ± z·se`` (Korn & Graubard 1998; Dean &
    Pagano 2015). Its width is nearly the Wald width, but it leans away from 0 and 1 as
    a rare share needs: at 5% with 200 labels the Wald interval of PPI++ covers about
    0.91, this one 0.95 (``benchmarks/bench_prevalence_coverage.py``). ``θ̃`` is ``θ̂``
    clipped to ``[0.5/n, 1 − 0.5/n]`` (``n`` the labelled size) so that ``n_eff`` stays
    finite; ``se = 0`` gives the point ``θ̃``.
    """
    n = np.asarray(n, dtype=float)
    theta = np.clip(np.asarray(estimate, dtype=float), 0.5 / n, 1 - 0.5 / n)
    se = np.asarray(se, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        n_eff = theta * (1 - theta) / se**2
        denom = n_eff + z**2
        centre = (theta * n_eff + z**2 / 2) / denom
        half = z * np.sqrt(theta * (1 - theta) * n_eff + z**2 / 4) / denom
    point = ~(se > 0)
    low = np.where(point, theta, np.clip(centre - half, 0.0, 1.0))
    high = np.where(point, theta, np.clip(centre + half, 0.0, 1.0))
    return low, high

"""Known joint distributions of (judge bin, human bin) and vectorised draws from them.

Shared by ``tests/prevalence/test_coverage.py`` and ``benchmarks/bench_prevalence_coverage.py``.
A scenario is the human share of each bin ``p[h]`` and the judge's confusion
``M[j, h] = P(judge = j | human = h)``; the joint is ``M * p``. Draws are count arrays
(the estimators read counts only), so thousands of draws cost one numpy call each.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from evalkit.prevalence import invert_confusion, ppi_bins, weighted_difference
from evalkit.prevalence._naive import effective_wilson, judge_only, labels_only, z_value
from evalkit.prevalence._plan import human_given_judge, inclusion_probabilities

BINS = ("low", "partial", "high")


@dataclass(frozen=True)
class Scenario:
    name: str
    p: tuple[float, float, float]
    m: tuple[tuple[float, float, float], ...]  # rows: judge bin; columns: human bin

    @property
    def joint(self) -> np.ndarray:
        return np.asarray(self.m) * np.asarray(self.p)[None, :]

    @property
    def judge_share(self) -> np.ndarray:
        return self.joint.sum(axis=1)


#: A good judge: right 85-90% of the time, errors to the neighbouring bin.
GOOD = Scenario(
    "good judge",
    (0.60, 0.25, 0.15),
    ((0.90, 0.08, 0.02), (0.08, 0.85, 0.10), (0.02, 0.07, 0.88)),
)
#: A poor judge that over-scores: right about half the time, pushing replies up.
POOR = Scenario(
    "poor judge",
    (0.60, 0.25, 0.15),
    ((0.55, 0.20, 0.10), (0.30, 0.50, 0.25), (0.15, 0.30, 0.65)),
)
#: A skewed bin: 5% high, and the judge misses most of it (the issue's failure).
SKEWED = Scenario(
    "skewed high (5%)",
    (0.80, 0.15, 0.05),
    ((0.92, 0.25, 0.30), (0.06, 0.65, 0.25), (0.02, 0.10, 0.45)),
)
SCENARIOS = (GOOD, POOR, SKEWED)


def draw_counts(
    scenario: Scenario, n: int, n_pool: int, draws: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Labelled confusions ``[draws, K, K]`` and pool judge counts ``[draws, K]``."""
    k = len(scenario.p)
    confusion = rng.multinomial(n, scenario.joint.ravel(), size=draws).reshape(draws, k, k)
    pool = rng.multinomial(n_pool, scenario.judge_share, size=draws)
    return confusion, pool


def intervals(
    confusion: np.ndarray, pool: np.ndarray, level: float = 0.95
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Lower and upper bounds ``[draws, K]`` of each estimator; NaN where not usable
    (a singular confusion, a human bin with no labelled case)."""
    z = z_value(level)
    est, se = ppi_bins(confusion, pool)
    empty = (confusion.sum(axis=-2) == 0).any(axis=-1)[:, None]
    n = confusion.sum(axis=(-2, -1))[:, None]
    low, high = effective_wilson(est, se, z, n)
    out = {"ppi++": (np.where(empty, np.nan, low), np.where(empty, np.nan, high))}
    p, cov, _ = invert_confusion(confusion, pool)
    se_inv = np.sqrt(np.maximum(np.diagonal(cov, axis1=-2, axis2=-1), 0.0))
    out["inversion"] = (p - z * se_inv, p + z * se_inv)
    _, low, high = judge_only(pool, z)
    out["judge_only"] = (low, high)
    _, low, high = labels_only(confusion, z)
    out["labels_only"] = (np.where(empty, np.nan, low), np.where(empty, np.nan, high))
    return out


def coverage(
    scenario: Scenario, *, n: int = 200, n_pool: int = 2000, draws: int = 1000, seed: int = 0
) -> dict[str, tuple[float, float]]:
    """Per estimator: the lowest per-bin coverage of the true human share (an unusable
    draw counts as a miss) and the mean width over bins and usable draws."""
    rng = np.random.default_rng(seed)
    confusion, pool = draw_counts(scenario, n, n_pool, draws, rng)
    truth = np.asarray(scenario.p)[None, :]
    out = {}
    for name, (low, high) in intervals(confusion, pool).items():
        covered = (low <= truth) & (truth <= high)
        out[name] = (float(covered.mean(axis=0).min()), float(np.nanmean(high - low)))
    return out


def plan_versus_random(
    scenario: Scenario,
    *,
    budget: int = 100,
    n_pool: int = 2000,
    n_calibration: int = 200,
    draws: int = 1000,
    seed: int = 0,
) -> dict[str, tuple[float, float]]:
    """Planned (Neyman, from a calibration sample) against random Poisson labelling of the
    same expected size, on one finite pool: per design, the lowest per-bin coverage of
    the pool's true human share and the mean interval width over bins and draws."""
    rng = np.random.default_rng(seed)
    k = len(scenario.p)
    cells = rng.choice(k * k, size=n_pool, p=scenario.joint.ravel())
    judge, human = np.divmod(cells, k)
    eye = np.eye(k)
    f, y = eye[judge], eye[human]
    truth = y.mean(axis=0)
    calibration = rng.multinomial(n_calibration, scenario.joint.ravel()).reshape(k, k)
    error = 1 - np.diagonal(human_given_judge(calibration))
    designs = {
        "planned": inclusion_probabilities(np.sqrt(error)[judge], budget),
        "random": np.full(n_pool, budget / n_pool),
    }
    z = z_value(0.95)
    out = {}
    for name, pi in designs.items():
        selected = rng.random((draws, n_pool)) < pi
        est, se = weighted_difference(f.mean(axis=0), y - f, pi, selected, n_pool)
        low, high = effective_wilson(est, se, z, selected.sum(axis=1, keepdims=True))
        covered = (low <= truth) & (truth <= high)
        out[name] = (float(covered.mean(axis=0).min()), float((high - low).mean()))
    return out

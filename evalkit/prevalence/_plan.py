"""Which pool cases to label next: more where the judge is less reliable, with known odds.

The calibration set says, for each judge bin ``j``, how often a human puts a reply the
judge rated ``j`` in each bin: ``P(h | j)``, smoothed by adding :data:`SMOOTHING` to every
cell so that a bin the calibration never contradicted still counts as fallible. The
planned estimator (:mod:`._weighted`) has design variance ``Σ_i (1 − π_i)/π_i · d_i²/N²``
per bin; summed over bins, ``E[Σ_b d_ib² | j] = 2·(1 − P(h = j | j))``. Minimising it
for an expected sample size ``budget`` (Neyman allocation) gives

    π_i ∝ sqrt(1 − P(h = j_i | j_i)),

floored at ``floor · budget/N`` (every case keeps a known, positive chance: the weights
stay bounded and the estimate unbiased even where the calibration was wrong) and capped
at 1. Cases are drawn by Poisson sampling: each independently with probability ``π_i``,
so the realised size varies around ``budget`` (standard deviation about
``sqrt(Σ π_i(1 − π_i))``) and the variance estimator is exact.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from evalkit.prevalence._frames import (
    PrevalenceInputError,
    check_bins,
    check_frame,
    confusion_counts,
)
from evalkit.prevalence._naive import z_value
from evalkit.prevalence._weighted import INCLUSION

#: Pseudo-count added to every cell of the calibration confusion.
SMOOTHING = 0.5
#: Default floor of every inclusion probability, as a share of the uniform rate budget/N.
FLOOR = 0.2
#: Column of :func:`plan_labels` that marks the chosen cases.
SELECTED = "selected"


def calibration_confusion(calibration: pd.DataFrame, bins: Sequence[str]) -> np.ndarray:
    """Counts ``C[j, h]`` from a labelled frame (``judge``, ``human``) or from a confusion
    frame already counted (index: judge bins, columns: human bins; absent bins are 0)."""
    if {"judge", "human"} <= set(calibration.columns):
        check_frame(calibration, "calibration", ["judge", "human"], bins)
        return confusion_counts(calibration, bins)
    unknown = (set(map(str, calibration.index)) | set(map(str, calibration.columns))) - set(bins)
    if unknown:
        raise PrevalenceInputError(
            f"calibration: confusion names bin(s) {sorted(unknown)} not in {list(bins)}; "
            "give a labelled frame (judge, human) or counts indexed by judge bin"
        )
    table = calibration.reindex(index=list(bins), columns=list(bins), fill_value=0)
    counts = table.to_numpy(dtype=float)
    if (counts < 0).any() or not np.isfinite(counts).all():
        raise PrevalenceInputError("calibration: counts must be finite and non-negative")
    return counts


def human_given_judge(counts: np.ndarray) -> np.ndarray:
    """Smoothed ``P(h | j)`` (rows: judge bin), each row summing to 1."""
    smoothed = np.asarray(counts, dtype=float) + SMOOTHING
    return smoothed / smoothed.sum(axis=1, keepdims=True)


def inclusion_probabilities(scores: np.ndarray, budget: float, floor: float = FLOOR) -> np.ndarray:
    """``π_i = clip(c·score_i, floor·budget/N, 1)`` with ``c`` such that ``Σπ = budget``.

    ``scores`` are non-negative (any scale). A ``budget`` of N or more gives every π = 1.
    """
    scores = np.asarray(scores, dtype=float)
    n = len(scores)
    if n == 0:
        return scores
    if budget >= n:
        return np.ones(n)
    low = min(max(floor, 0.0) * budget / n, 1.0)
    if scores.max() <= 0:
        return np.full(n, budget / n)
    lo, hi = 0.0, 1.0
    while np.clip(hi * scores, low, 1.0).sum() < budget:
        hi *= 2
    for _ in range(200):  # bisection; Σ clip(c·s) is continuous and monotone in c
        mid = (lo + hi) / 2
        if np.clip(mid * scores, low, 1.0).sum() < budget:
            lo = mid
        else:
            hi = mid
    return np.clip(hi * scores, low, 1.0)


def _judge_index(pool: pd.DataFrame, bins: Sequence[str]) -> np.ndarray:
    check_frame(pool, "pool", ["judge"], bins)
    return pool["judge"].map({b: i for i, b in enumerate(bins)}).to_numpy(dtype=int)


def _bins_of(calibration: pd.DataFrame, bins: Sequence[str] | None) -> list[str]:
    if bins is not None:
        return check_bins(bins)
    if {"judge", "human"} <= set(calibration.columns):
        seen = set(calibration["judge"].dropna()) | set(calibration["human"].dropna())
    else:
        seen = set(map(str, calibration.index)) | set(map(str, calibration.columns))
    return check_bins(sorted(map(str, seen)))


def planned_probabilities(
    pool: pd.DataFrame,
    calibration: pd.DataFrame,
    budget: float,
    *,
    bins: Sequence[str] | None = None,
    floor: float = FLOOR,
) -> np.ndarray:
    """The inclusion probability of every pool case (Neyman allocation, see module)."""
    bins = _bins_of(calibration, bins)
    if budget <= 0:
        raise PrevalenceInputError(f"budget: must be positive, got {budget}")
    error = 1 - np.diagonal(human_given_judge(calibration_confusion(calibration, bins)))
    return inclusion_probabilities(np.sqrt(error)[_judge_index(pool, bins)], budget, floor)


def plan_labels(
    pool: pd.DataFrame,
    calibration: pd.DataFrame,
    budget: int,
    *,
    bins: Sequence[str] | None = None,
    seed: int = 0,
    floor: float = FLOOR,
) -> pd.DataFrame:
    """The pool with each case's ``inclusion_probability`` and whether it is ``selected``.

    ``pool`` has a ``judge`` column; ``calibration`` is a labelled frame (``judge``,
    ``human``) or a confusion count frame (see :func:`calibration_confusion`); ``bins``
    defaults to the bins seen in ``calibration`` (give them: unseen bins are missed).
    The selection is Poisson sampling with ``numpy.random.default_rng(seed)``: the same
    seed gives the same cases. Label the selected cases and pass them, with their
    ``inclusion_probability``, to :func:`evalkit.prevalence.planned_prevalence`.
    """
    pi = planned_probabilities(pool, calibration, budget, bins=bins, floor=floor)
    rng = np.random.default_rng(seed)
    chosen = rng.random(len(pi)) < pi
    return pool.assign(**{INCLUSION: pi, SELECTED: chosen})


def expected_widths(
    pool: pd.DataFrame,
    calibration: pd.DataFrame,
    bins: Sequence[str],
    budgets: Sequence[int] = (50, 100, 200),
    *,
    level: float = 0.95,
    floor: float = FLOOR,
) -> pd.DataFrame:
    """Expected interval width of each bin's planned estimate, per budget and design.

    Columns ``budget``, ``design`` (``planned``: :func:`plan_labels`'s probabilities;
    ``random``: every case at ``budget/N``, the same estimator), ``bin``,
    ``expected_width`` = ``2·z·sqrt(Σ_i (1 − π_i)/π_i · E[d_ib² | j_i]) / N``, with
    ``E[d_ib² | j]`` from the smoothed calibration ``P(h | j)``: ``1 − P(h = b | j)`` when
    ``j = b``, else ``P(h = b | j)``. An expectation from the calibration, not a promise.
    """
    bins = check_bins(bins)
    z = z_value(level)
    cond = human_given_judge(calibration_confusion(calibration, bins))
    k = len(bins)
    sq = np.where(np.eye(k, dtype=bool), 1 - cond, cond)  # sq[j, b] = E[d_b² | judge j]
    j = _judge_index(pool, bins)
    n_pool = len(j)
    rows = []
    for budget in budgets:
        designs = {
            "planned": planned_probabilities(pool, calibration, budget, bins=bins, floor=floor),
            "random": np.full(n_pool, min(budget / max(n_pool, 1), 1.0)),
        }
        for design, pi in designs.items():
            var = ((1 - pi) / pi) @ sq[j] / max(n_pool, 1) ** 2
            for b, v in zip(bins, var, strict=True):
                rows.append((int(budget), design, b, float(2 * z * np.sqrt(v))))
    return pd.DataFrame(rows, columns=["budget", "design", "bin", "expected_width"])

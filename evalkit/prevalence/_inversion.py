"""Confusion-matrix inversion: the multiclass Rogan–Gladen estimator, delta-method interval.

With ``M[j, h] = P(judge = j | human = h)`` estimated from the labelled set (each column
``h`` from the ``n_h`` labelled cases whose human bin is ``h``) and ``q[j]`` the judge's
share of bin ``j`` on the pool, the human shares ``p`` solve ``q = M p``:

    p̂ = M̂⁻¹ q̂        (Rogan & Gladen 1978, for K bins; Buonaccorsi 2010, ch. 3).

The interval is the delta method over both samples, which are independent: the pool's
``q̂`` is multinomial, ``Cov(q̂) = (diag q − q qᵀ)/N``, and each column ``m_h`` of ``M̂``
is multinomial given ``n_h``, ``Cov(m_h) = (diag m_h − m_h m_hᵀ)/n_h``. From
``dp = M⁻¹(dq − dM·p)``,

    Cov(p̂) = M⁻¹ [Cov(q̂) + Σ_h p_h² Cov(m_h)] M⁻ᵀ.

The estimate is unclipped here (a small labelled set can put a share below 0);
:func:`evalkit.prevalence.corrected_prevalence` clips estimate and bounds to [0, 1],
which never moves the true share out of the interval. A matrix whose 2-norm condition
number exceeds :data:`MAX_CONDITION` (or that is singular) is refused: inverting it
multiplies the sampling noise of ``q̂`` by about that factor, and the linearisation the
interval rests on no longer holds.
"""

from __future__ import annotations

import numpy as np

#: Largest condition number of ``M̂`` that is inverted. A judge at chance has ∞; a judge
#: right half the time on three bins, errors spread evenly, has 4; the shipped baseline
#: judge on self-harm, which cannot tell ``low`` from ``partial`` replies, has about 24.
#: At 20, the simulated poor and skewed judges (200 labels) are refused in about 3% of
#: draws and the intervals of the rest cover at 0.97 or more.
MAX_CONDITION = 20.0


def confusion_given_human(confusion: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``M̂[..., j, h] = C[j, h] / n_h`` and ``n_h``; a column with ``n_h = 0`` is zero."""
    n_h = confusion.sum(axis=-2)
    with np.errstate(divide="ignore", invalid="ignore"):
        m = np.where(n_h[..., None, :] > 0, confusion / n_h[..., None, :], 0.0)
    return m, n_h


def invert_confusion(
    confusion: np.ndarray, pool_counts: np.ndarray, *, max_condition: float = MAX_CONDITION
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rogan–Gladen estimate, delta-method covariance and a usable mask.

    ``confusion[..., j, h]`` and ``pool_counts[..., j]`` as in :mod:`evalkit.prevalence`.
    Returns ``p̂[..., h]``, ``Cov(p̂)[..., h, h']`` and ``ok[...]``, False where a human bin
    has no labelled case or ``M̂`` is singular or has condition number above
    ``max_condition``; where not ok the estimate and covariance are NaN.
    """
    m, n_h = confusion_given_human(np.asarray(confusion, dtype=float))
    pool = np.asarray(pool_counts, dtype=float)
    n_pool = pool.sum(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = pool / n_pool
    k = m.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        cond = np.linalg.cond(m)
    ok = (n_h > 0).all(axis=-1) & np.isfinite(cond) & (cond <= max_condition)
    ok &= n_pool[..., 0] > 0
    safe = np.where(ok[..., None, None], m, np.eye(k))
    inv = np.linalg.inv(safe)
    q_safe = np.where(ok[..., None], q, 1.0 / k)
    p = np.einsum("...hj,...j->...h", inv, q_safe)
    eye = np.eye(k)
    with np.errstate(divide="ignore", invalid="ignore"):
        cov_q = (q_safe[..., :, None] * eye - q_safe[..., :, None] * q_safe[..., None, :]) / (
            np.where(ok, n_pool[..., 0], 1.0)[..., None, None]
        )
        # Cov(m_h) per column h: (diag m_h − m_h m_hᵀ) / n_h, weighted by p_h².
        cols = np.moveaxis(safe, -1, -2)  # [..., h, j]
        cov_cols = cols[..., :, :, None] * eye - cols[..., :, :, None] * cols[..., :, None, :]
        n_safe = np.where(n_h > 0, n_h, 1.0)
        weight = p**2 / n_safe  # [..., h]
        cov_m = np.einsum("...h,...hjk->...jk", weight, cov_cols)
    inner = cov_q + cov_m
    cov = inv @ inner @ np.swapaxes(inv, -1, -2)
    p = np.where(ok[..., None], p, np.nan)
    cov = np.where(ok[..., None, None], cov, np.nan)
    return p, cov, ok

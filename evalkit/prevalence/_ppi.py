"""PPI++ for the share of one bin: the judge on the pool, rectified by the labelled set.

For bin ``b`` let ``Y = 1[human == b]`` and ``f = 1[judge == b]``, with ``n`` labelled
cases (both known) and ``N`` pool cases (``f`` only). Following Angelopoulos, Duchi &
Zrnic (2023), "PPI++: Efficient Prediction-Powered Inference" (arXiv:2311.01453), the
power-tuned estimate is

    θ̂(λ) = λ·mean_pool(f) + mean_lab(Y − λ·f),

    λ̂ = Cov_lab(Y, f) / ((1 + n/N) · Var_lab∪pool(f)),   clipped to [0, 1],

and the interval is the Wald (CLT) interval θ̂ ± z·se with

    se² = λ̂²·Var_pool(f)/N + Var_lab(Y − λ̂·f)/n.

Variances are as ``ppi_py`` 0.2.3 computes them (``ppi_mean_ci`` with ``lam=None``):
``Cov_lab`` and both ``se`` terms divide by the sample size (ddof 0), ``Var_lab∪pool``
is the sample variance (ddof 1) of ``f`` over both sets stacked. λ̂ = 1 is plain PPI,
λ̂ = 0 the labels-only mean. Where ``f`` is constant over both sets ``ppi_py`` divides
by zero; here λ̂ = 0 (the judge carries no information about the bin).

Every quantity is a function of counts (indicators square to themselves), so the
functions below take counts and work elementwise on arrays of any shape: the
simulation tests run thousands of draws in one call.
"""

from __future__ import annotations

import numpy as np


def ppi_lambda(
    s_y: np.ndarray,
    s_f: np.ndarray,
    s_yf: np.ndarray,
    n: np.ndarray,
    s_pool: np.ndarray,
    n_pool: np.ndarray,
) -> np.ndarray:
    """Power-tuning λ̂ from counts: ``s_y = ΣY``, ``s_f = Σf``, ``s_yf = ΣYf`` on the
    labelled set of size ``n``; ``s_pool = Σf`` on the pool of size ``n_pool``."""
    s_y, s_f, s_yf, n, s_pool, n_pool = (
        np.asarray(a, dtype=float) for a in (s_y, s_f, s_yf, n, s_pool, n_pool)
    )
    with np.errstate(divide="ignore", invalid="ignore"):
        cov = s_yf / n - (s_y / n) * (s_f / n)
        total = n + n_pool
        s_all = s_f + s_pool
        var_all = (s_all - s_all**2 / total) / (total - 1)
        lam = cov / ((1 + n / n_pool) * var_all)
    lam = np.where(var_all > 0, lam, 0.0)
    return np.clip(np.nan_to_num(lam, nan=0.0), 0.0, 1.0)


def ppi_mean(
    s_y: np.ndarray,
    s_f: np.ndarray,
    s_yf: np.ndarray,
    n: np.ndarray,
    s_pool: np.ndarray,
    n_pool: np.ndarray,
    *,
    lam: np.ndarray | float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """PPI++ estimate, its standard error and the λ used (λ̂ when ``lam`` is None).

    Unclipped: the estimate may fall outside [0, 1] when the labelled set is small;
    :func:`evalkit.prevalence.corrected_prevalence` clips what it reports.
    """
    s_y, s_f, s_yf, n, s_pool, n_pool = (
        np.asarray(a, dtype=float) for a in (s_y, s_f, s_yf, n, s_pool, n_pool)
    )
    used = ppi_lambda(s_y, s_f, s_yf, n, s_pool, n_pool) if lam is None else np.asarray(lam)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_pool = s_pool / n_pool
        rect = (s_y - used * s_f) / n
        estimate = used * mean_pool + rect
        var_pool = mean_pool * (1 - mean_pool)
        second = (s_y - 2 * used * s_yf + used**2 * s_f) / n
        var_rect = np.maximum(second - rect**2, 0.0)
        se = np.sqrt(used**2 * var_pool / n_pool + var_rect / n)
    return estimate, se, np.broadcast_to(used, np.shape(estimate)).astype(float)


def ppi_bins(confusion: np.ndarray, pool_counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """PPI++ estimate and standard error of every bin at once.

    ``confusion[..., j, h]`` counts labelled cases (judge ``j``, human ``h``) and
    ``pool_counts[..., j]`` the pool's judge bins; the result has the shape of
    ``pool_counts``, one λ̂ per bin (each bin is its own mean, tuned on its own).
    """
    s_y = confusion.sum(axis=-2)
    s_f = confusion.sum(axis=-1)
    s_yf = np.diagonal(confusion, axis1=-2, axis2=-1)
    n = confusion.sum(axis=(-2, -1))[..., None]
    n_pool = pool_counts.sum(axis=-1, keepdims=True)
    estimate, se, _ = ppi_mean(s_y, s_f, s_yf, n, pool_counts, n_pool)
    return estimate, se

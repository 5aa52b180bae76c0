"""The reference distributions and small tests the gate reads, from ``scipy.special``.

``import scipy.stats`` (and statsmodels, which imports it) costs several times what the
whole gate computes, while the gate needs five numbers from it (issue 29). Each function
here is the scipy.stats (or statsmodels) computation it replaces, done with the same
``scipy.special`` function and the same floating-point operations in the same order, so
the value is the same to the last bit (``tests/agreement/test_agreement_distributions.py``
checks each against the library it replaces). ``scipy.special`` itself is imported on
first use, so that importing evalkit's statistics stays cheap. Exception:
:func:`fisher_exact_greater` sums the hypergeometric tail in exact integer arithmetic
and rounds once, where scipy calls Boost: the two agree to about 1e-15 relative.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np


def _special() -> Any:
    from scipy import special  # imported on first use (a few hundred ms)

    return special


def normal_quantile(p: float) -> float:
    """The standard normal quantile, ``scipy.stats.norm.ppf(p)`` (``ndtri``)."""
    return float(_special().ndtri(p))


def normal_sf(x: float) -> float:
    """The standard normal upper tail, ``scipy.stats.norm.sf(x)`` (``ndtr(-x)``; 0 at
    infinity, 1 at minus infinity, NaN for NaN)."""
    if math.isnan(x):
        return math.nan
    if math.isinf(x):
        return 0.0 if x > 0 else 1.0
    return float(_special().ndtr(-x))


def t_quantile(q: float, df: float) -> float:
    """The quantile ``q`` of Student's t on ``df`` degrees of freedom,
    ``scipy.stats.t.ppf(q, df)`` (``stdtrit``), for ``0 < q < 1`` and ``df > 0``; NaN
    otherwise."""
    if not (0.0 < q < 1.0 and df > 0):
        return math.nan
    return float(_special().stdtrit(df, q))


def beta_quantile(q: float, a: float, b: float) -> float:
    """The quantile ``q`` of Beta(``a``, ``b``), ``scipy.stats.beta.ppf(q, a, b)``."""
    return float(_special().betaincinv(a, b, q))


def chi2_sf(x: float, df: float) -> float:
    """``scipy.stats.chi2.sf(x, df)``: 1 for ``x <= 0``, 0 at infinity, NaN for NaN."""
    if math.isnan(x):
        return math.nan
    if x <= 0:
        return 1.0
    return 0.0 if math.isinf(x) else float(_special().chdtrc(df, x))


def chi2_cdf(x: float, df: float) -> float:
    """``scipy.stats.chi2.cdf(x, df)``: 0 for ``x <= 0``, 1 at infinity, NaN for NaN."""
    if math.isnan(x):
        return math.nan
    if x <= 0:
        return 0.0
    return 1.0 if math.isinf(x) else float(_special().chdtr(df, x))


def t_test_less(values: Sequence[float] | np.ndarray, popmean: float) -> float:
    """p-value of the one-sample t-test that the mean of ``values`` is below ``popmean``:
    ``scipy.stats.ttest_1samp(values, popmean, alternative="less").pvalue``.

    ``t = (mean - popmean) / sqrt(var / n)`` with the ``ddof=1`` variance, and
    ``p = P(T_{n-1} <= t)``. NaN with fewer than 2 values, or when the values are constant
    and equal to ``popmean`` (0/0); a constant column elsewhere gives t = ±inf, p 0 or 1.
    """
    a = np.asarray(values, dtype=np.float64)
    n = a.size
    if n < 2:
        return math.nan
    mean = np.mean(a, keepdims=True)
    var = np.mean((a - mean) ** 2) * (np.float64(n) / np.float64(n - 1))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.divide(np.mean(a) - np.float64(popmean), np.sqrt(var / n))
    return float(_special().stdtr(np.float64(n - 1), t))


def fisher_exact_greater(a: int, b: int, c: int, d: int) -> float:
    """One-sided Fisher exact test of ``[[a, b], [c, d]]`` (odds ratio above 1):
    ``scipy.stats.fisher_exact(table, alternative="greater").pvalue``.

    ``P(X <= b)`` for X hypergeometric (population ``a+b+c+d``, ``a+b`` marked,
    ``b+d`` drawn), summed exactly; 1.0 when a row or a column is empty.
    """
    if min(a, b, c, d) < 0:
        raise ValueError(f"counts must be non-negative, got {[[a, b], [c, d]]}")
    if 0 in (a + b, c + d, a + c, b + d):
        return 1.0
    total, marked, drawn = a + b + c + d, a + b, b + d
    low = max(0, drawn - (total - marked))
    tail = sum(
        math.comb(marked, x) * math.comb(total - marked, drawn - x) for x in range(low, b + 1)
    )
    return min(float(Fraction(tail, math.comb(total, drawn))), 1.0)


def stuart_maxwell_test(table: np.ndarray) -> tuple[float, int, float]:
    """Stuart–Maxwell marginal homogeneity of a square ``table``: ``(statistic, df,
    p)``, statsmodels' ``SquareTable(table, shift_zeros=False).homogeneity()``.

    With ``pr`` the table as proportions, ``d`` the column minus the row margins and
    ``V`` their covariance (last category dropped): ``statistic = n · dᵀ V⁻¹ d`` on
    ``k - 1`` degrees of freedom. A singular ``V`` gives NaN statistic and p.
    """
    t = np.asarray(table, dtype=np.float64)
    n_obs = t.sum()
    pr = t / n_obs
    row = pr.sum(1)[0:-1]
    col = pr.sum(0)[0:-1]
    pr = pr[0:-1, 0:-1]
    d = col - row
    df = pr.shape[0]
    vmat = -(pr + pr.T)
    np.fill_diagonal(vmat, row + col - 2 * np.diag(pr))
    try:
        statistic = float(n_obs * np.dot(d, np.linalg.solve(vmat, d)))
    except np.linalg.LinAlgError:
        return math.nan, df, math.nan
    return statistic, df, 1 - chi2_cdf(statistic, df)


def bowker_test(table: np.ndarray) -> tuple[float, int, float]:
    """Bowker's symmetry test of a square ``table``: ``(statistic, df, p)``, statsmodels'
    ``SquareTable(table, shift_zeros=False).symmetry()``.

    ``statistic = Σ_{i<j} (n_ji - n_ij)² / (n_ij + n_ji)`` (1e-20 added to each
    denominator, so an empty pair adds 0) on ``k(k-1)/2`` degrees of freedom.
    """
    t = np.asarray(table, dtype=np.float64)
    k = t.shape[0]
    upp_idx = np.triu_indices(k, 1)
    tril = t.T[upp_idx]
    triu = t[upp_idx]
    statistic = float(((tril - triu) ** 2 / (tril + triu + 1e-20)).sum())
    df = k * (k - 1) / 2.0
    return statistic, int(df), chi2_sf(statistic, df)

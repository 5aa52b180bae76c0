"""Multi-rater agreement coefficients and their variances, exactly as irrCAC computes them.

Notation (Gwet 2014, Handbook of Inter-Rater Reliability, 4th ed., ch. 5): ``n`` units that
received at least one rating, ``r_ik`` raters putting unit i in category k, ``r_i = Σ_k r_ik``,
``w_kl`` the q × q agreement weights, ``r*_ik = Σ_l w_kl r_il``, ``T_w = Σ_kl w_kl``, and
``n₂`` the units with ``r_i ≥ 2``::

    p_a|i = Σ_k r_ik (r*_ik - 1) / (r_i (r_i - 1))    (0 when r_i < 2)
    p_a   = mean of p_a|i over the n₂ units with r_i ≥ 2
    π_k   = mean_i r_ik / r_i  over all n units (units rated once included)

    percent agreement  p_e = 0
    Fleiss             p_e = Σ_kl w_kl π_k π_l
    Gwet AC1/AC2       p_e = T_w / (q (q - 1)) · Σ_k π_k (1 - π_k)
    Brennan–Prediger   p_e = T_w / q^2
    coefficient        κ = (p_a - p_e) / (1 - p_e)

Variance (linearisation; the finite-population factor f = n/N is 0, irrCAC's ``N = Inf``)::

    κ_i   = (n / n₂) (p_a|i - p_e [r_i ≥ 2]) / (1 - p_e)
    κ*_i  = κ_i - 2 (1 - κ) (p_e|i - p_e) / (1 - p_e)
    v(κ)  = Σ_i (κ*_i - κ)^2 / (n (n - 1))

with ``p_e|i = Σ_k r_ik π̄w_k / r_i``, ``π̄w = (W π + Wᵀ π) / 2`` (Fleiss),
``p_e|i = T_w / (q (q - 1)) · Σ_k r_ik (1 - π_k) / r_i`` (AC1/AC2) and ``p_e|i = p_e``
(Brennan–Prediger, percent agreement: ``κ*_i = κ_i``).

Conger's kappa uses the raters' own classification probabilities ``p_gk`` (over the ``n_g``
units rater g rated), ``p̄_k = mean_g p_gk``, ``s²_kl = (Σ_g p_gk p_gl - r p̄_k p̄_l) / (r - 1)``
and ``p_e = Σ_kl w_kl (p̄_k p̄_l - s²_kl / r)``; its ``p_e|i`` is irrCAC's λ term (see
:func:`conger`).

Krippendorff's alpha (irrCAC's formulation, Gwet 2014 ch. 5) keeps the n' units with
``r_i ≥ 2``, ``r̄`` their mean, ``ε = 1 / Σ_i r_i``::

    p'_a = mean_i Σ_k r_ik (r*_ik - 1) / (r̄ (r_i - 1))     p_a = (1 - ε) p'_a + ε
    π_k  = mean_i r_ik / r̄                                 p_e = Σ_kl w_kl π_k π_l
    α = (p_a - p_e) / (1 - p_e)                            α' = (p'_a - p_e) / (1 - p_e)

and its variance is the one of irrCAC's ``krippen.alpha.raw`` (raw ratings) or
``krippen.alpha.dist`` (a count table); the two differ, see :func:`krippendorff_raw` and
:func:`krippendorff_dist`.  Every function returns ``(value, se, p_a, p_e, n)`` with ``n``
the units of the variance (the interval uses ``n - 1`` degrees of freedom), or None parts
where a number does not exist; the caller sets the status.

References: Gwet, K. L. (2014). Handbook of Inter-Rater Reliability, 4th ed., Advanced
Analytics (ch. 5, "Agreement among three or more raters", and ch. 3 for the weights);
Gwet (2008), Br J Math Stat Psychol 61:29–48; the irrCAC R package (K. Gwet), functions
``pa.coeff.raw``, ``fleiss.kappa.raw``, ``conger.kappa.raw``, ``gwet.ac1.raw``,
``bp.coeff.raw``, ``krippen.alpha.raw`` and their ``*.dist`` versions.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from evalkit.agreement._distributions import t_quantile
from evalkit.agreement._inputs import FloatArray, IntArray

_EPS = 1e-12


class Estimate(NamedTuple):
    """One coefficient: value, standard error, p_a, p_e and the n of its variance."""

    value: float | None
    se: float | None
    pa: float | None
    pe: float | None
    n: int


def counts_from_codes(codes: IntArray, q: int) -> FloatArray:
    """The n × q matrix ``r_ik`` from an n × r matrix of category codes (-1 missing)."""
    n = codes.shape[0]
    rated = codes >= 0
    rows = np.broadcast_to(np.arange(n)[:, None], codes.shape)[rated]
    flat = np.bincount(rows * q + codes[rated], minlength=n * q)
    return flat.reshape(n, q).astype(np.float64)


def t_interval(
    value: float | None, se: float | None, n: int, level: float
) -> tuple[float | None, float | None]:
    """irrCAC's interval ``value ± t_{1-(1-level)/2, n-1} · se``, clipped to [-1, 1]."""
    if value is None or se is None or n < 2:
        return None, None
    t = t_quantile(1.0 - (1.0 - level) / 2.0, n - 1)
    return max(-1.0, value - t * se), min(1.0, value + t * se)


def _se(dev: FloatArray, n: int) -> float | None:
    if n < 2:
        return None
    var = float((dev**2).sum()) / (n * (n - 1.0))
    return math.sqrt(max(var, 0.0))


class Parts(NamedTuple):
    """Quantities shared by the coefficients, from the n × q count matrix."""

    counts: FloatArray  # r_ik, units with r_i >= 1 only
    w: FloatArray
    r: FloatArray  # r_i
    two: np.ndarray  # r_i >= 2
    sum_q: FloatArray  # Σ_k r_ik (r*_ik - 1)
    pa_i: FloatArray  # p_a|i, 0 when r_i < 2
    pa: float
    n: int
    n2: int


def parts(counts: FloatArray, w: FloatArray) -> Parts:
    """``Parts`` for an n × q matrix of counts in which every row sums to at least 1."""
    c = np.asarray(counts, dtype=np.float64)
    r = c.sum(axis=1)
    two = r >= 2
    sum_q = (c * (c @ w.T - 1.0)).sum(axis=1)
    den = np.where(two, r * (r - 1.0), 1.0)
    pa_i = np.where(two, sum_q / den, 0.0)
    n2 = int(two.sum())
    pa = float(pa_i[two].mean()) if n2 else math.nan
    return Parts(c, w, r, two, sum_q, pa_i, pa, int(c.shape[0]), n2)


def _chance_corrected(p: Parts, pe: float, pe_i: FloatArray | None) -> Estimate:
    if 1.0 - pe <= _EPS:
        return Estimate(None, None, p.pa, pe, p.n)
    kappa = (p.pa - pe) / (1.0 - pe)
    k_i = (p.n / p.n2) * (p.pa_i - pe * p.two) / (1.0 - pe)
    if pe_i is not None:
        k_i = k_i - 2.0 * (1.0 - kappa) * (pe_i - pe) / (1.0 - pe)
    return Estimate(kappa, _se(k_i - kappa, p.n), p.pa, pe, p.n)


def classification_probabilities(p: Parts) -> FloatArray:
    """``π_k = mean_i r_ik / r_i`` over every unit with at least one rating."""
    return np.asarray((p.counts / p.r[:, None]).mean(axis=0))


def percent_agreement(p: Parts) -> Estimate:
    """Percent agreement (``pa.coeff.raw``): ``v = Σ_i ((n/n₂) p_a|i - p_a)^2 / (n (n - 1))``."""
    dev = (p.n / p.n2) * p.pa_i - p.pa
    return Estimate(p.pa, _se(dev, p.n), p.pa, 0.0, p.n)


def fleiss(p: Parts) -> Estimate:
    """Fleiss' generalised (weighted) kappa (``fleiss.kappa.raw``)."""
    pi = classification_probabilities(p)
    pe = float(pi @ p.w @ pi)
    pi_w = (p.w @ pi + p.w.T @ pi) / 2.0
    pe_i = (p.counts @ pi_w) / p.r
    return _chance_corrected(p, pe, pe_i)


def gwet(p: Parts) -> Estimate:
    """Gwet's AC1 (identity weights) or AC2 (``gwet.ac1.raw``)."""
    q = p.w.shape[0]
    pi = classification_probabilities(p)
    scale = float(p.w.sum()) / (q * (q - 1.0))
    pe = scale * float((pi * (1.0 - pi)).sum())
    pe_i = scale * (p.counts @ (1.0 - pi)) / p.r
    return _chance_corrected(p, pe, pe_i)


def brennan_prediger(p: Parts) -> Estimate:
    """Brennan–Prediger (``bp.coeff.raw``): ``p_e = T_w / q^2``, no chance-term variance."""
    q = p.w.shape[0]
    return _chance_corrected(p, float(p.w.sum()) / (q * q), None)


def conger(codes: IntArray, p: Parts) -> Estimate:
    """Conger's (weighted) kappa (``conger.kappa.raw``) from the n × r code matrix.

    ``codes[i, g]`` is rater g's category for unit i (-1 when missing); every rater must
    have rated at least one unit and every unit must hold one rating.  With
    ``ε_ig = [rater g rated unit i]``, ``δ_igl = [rater g put unit i in l]``::

        λ_ig = (n / n_g) Σ_k (r p̄_k - p_gk) Σ_l w_kl (δ_igl - (ε_ig - n_g / n) p_gl)
        p_e|i = Σ_g λ_ig / (r (r - 1))

    and the variance as in the module docstring with this ``p_e|i``.
    """
    n, r = codes.shape
    q = p.w.shape[0]
    w = p.w
    rated = codes >= 0
    safe = np.where(rated, codes, 0)
    raters = np.broadcast_to(np.arange(r), codes.shape)[rated]
    classif = np.bincount(raters * q + codes[rated], minlength=r * q).reshape(r, q) * 1.0
    n_g = classif.sum(axis=1)
    p_gk = classif / n_g[:, None]
    p_mean = p_gk.mean(axis=0)
    s2 = (p_gk.T @ p_gk - r * np.outer(p_mean, p_mean)) / (r - 1.0)
    pe = float((w * (np.outer(p_mean, p_mean) - s2 / r)).sum())
    # λ_ig without the n × r × q array: with a_gk = r p̄_k - p_gk,
    # Σ_k a_gk Σ_l w_kl δ_igl = (a W)[g, c_ig] and Σ_k a_gk Σ_l w_kl p_gl = Σ_k a_gk (P Wᵀ)_gk
    a = r * p_mean[None, :] - p_gk
    rated_term = np.where(rated, (a @ w)[np.arange(r)[None, :], safe], 0.0)
    marginal_term = ((p_gk @ w.T) * a).sum(axis=1)
    lam = (n / n_g)[None, :] * (rated_term - (rated - n_g / n) * marginal_term[None, :])
    pe_i = lam.sum(axis=1) / (r * (r - 1.0))
    return _chance_corrected(p, pe, pe_i)


class AlphaParts(NamedTuple):
    counts: FloatArray
    r: FloatArray
    r_mean: float
    eps: float
    pa_i: FloatArray  # Σ_k r_ik (r*_ik - 1) / (r̄ (r_i - 1))
    pa_prime: float
    pa: float
    pi: FloatArray
    pe: float
    n: int


def _alpha_parts(p: Parts) -> AlphaParts | None:
    c = p.counts[p.two]
    n = int(c.shape[0])
    if n == 0:
        return None
    r = p.r[p.two]
    r_mean = float(r.mean())
    eps = 1.0 / float(r.sum())
    pa_i = p.sum_q[p.two] / (r_mean * (r - 1.0))
    pa_prime = float(pa_i.sum()) / n
    pa = (1.0 - eps) * pa_prime + eps
    pi = c.sum(axis=0) / (n * r_mean)
    pe = float(pi @ p.w @ pi)
    return AlphaParts(c, r, r_mean, eps, pa_i, pa_prime, pa, pi, pe, n)


def krippendorff_raw(p: Parts) -> Estimate:
    """Krippendorff's alpha as irrCAC's ``krippen.alpha.raw`` (module docstring), with::

        p_a|i = Σ_k r_ik (r*_ik - 1) / (r̄ (r_i - 1)) - p_a (r_i - r̄) / r̄
        α_i   = (p_a|i - p_e) / (1 - p_e)
        p_e|i = Σ_k r_ik π̄w_k / r̄ - p_e (r_i - r̄) / r̄
        α*_i  = α_i - 2 (1 - α') (p_e|i - p_e) / (1 - p_e)
        v(α)  = Σ_i (α*_i - α')^2 / (n' (n' - 1))

    over the n' units with ``r_i ≥ 2`` (the interval then has ``n' - 1`` degrees of freedom).
    This is the variance of the irrCAC release that printed the package's published
    examples (its README: α = 0.74342, se 0.14557 on ``cac.raw4raters``).
    """
    a = _alpha_parts(p)
    if a is None:
        return Estimate(None, None, None, None, 0)
    if 1.0 - a.pe <= _EPS:
        return Estimate(None, None, a.pa, a.pe, a.n)
    alpha = (a.pa - a.pe) / (1.0 - a.pe)
    alpha_prime = (a.pa_prime - a.pe) / (1.0 - a.pe)
    spread = (a.r - a.r_mean) / a.r_mean
    a_i = (a.pa_i - a.pa * spread - a.pe) / (1.0 - a.pe)
    pi_w = (p.w @ a.pi + p.w.T @ a.pi) / 2.0
    pe_i = (a.counts @ pi_w) / a.r_mean - a.pe * spread
    x = a_i - 2.0 * (1.0 - alpha_prime) * (pe_i - a.pe) / (1.0 - a.pe)
    return Estimate(alpha, _se(x - alpha_prime, a.n), a.pa, a.pe, a.n)


def krippendorff_dist(p: Parts) -> Estimate:
    """Krippendorff's alpha as irrCAC's ``krippen.alpha.dist`` (from a count table), with::

        p_a|i = (1 - ε) (p'_a|i - mean(p'_a|i) (r_i - r̄) / r̄) + ε
        α_i   = (p_a|i - p_e) / (1 - p_e)
        p_e|i = Σ_k r_ik π̄w_k / r̄ - Σ_k π_k (r_i - r̄) / r̄
        α*_i  = α_i - (1 - α) (p_e|i - p_e) / (1 - p_e)
        v(α)  = Σ_i (α*_i - α)^2 / (n' (n' - 1))

    (``p'_a|i = Σ_k r_ik (r*_ik - 1) / (r̄ (r_i - 1))``); the value is the same as
    :func:`krippendorff_raw`'s, the standard error is not.
    """
    a = _alpha_parts(p)
    if a is None:
        return Estimate(None, None, None, None, 0)
    if 1.0 - a.pe <= _EPS:
        return Estimate(None, None, a.pa, a.pe, a.n)
    alpha = (a.pa - a.pe) / (1.0 - a.pe)
    spread = (a.r - a.r_mean) / a.r_mean
    pa_i = (1.0 - a.eps) * (a.pa_i - float(a.pa_i.mean()) * spread) + a.eps
    a_i = (pa_i - a.pe) / (1.0 - a.pe)
    pi_w = (p.w @ a.pi + p.w.T @ a.pi) / 2.0
    pe_i = (a.counts @ pi_w) / a.r_mean - float(a.pi.sum()) * spread
    x = a_i - (1.0 - alpha) * (pe_i - a.pe) / (1.0 - a.pe)
    return Estimate(alpha, _se(x - alpha, a.n), a.pa, a.pe, a.n)
